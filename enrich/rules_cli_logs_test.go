package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_CLILogs checks 74-cli-logs.yaml's forms beyond the captures
// that found them (docs/rules.md, "CLI answers in other forms, servers'
// own logs"), and what they must not name.
func TestRules_CLILogs(t *testing.T) {
	ssh := func(text string) *ingest.Service { return bannerService(22, "tcp", text) }
	checkMatches(t, []matchCase{
		{"asa masked release", ssh("ciscoasa# show version\n\nCisco Adaptive Security Appliance Software Version 9.18.x\n"), wantMatch{Vendor: "Cisco", Band: "9.18.x", StrictVersion: true}},
		{"cisco ssh 2.0", ssh("SSH-2.0-Cisco-1.25\r\n"), wantMatch{Vendor: "Cisco", Rule: "cisco-ssh", StrictVersion: true, StrictBand: true}},
		{"cisco ssh 1.99", ssh("SSH-1.99-Cisco-1.25\r\n"), wantMatch{Vendor: "Cisco", Rule: "cisco-ssh"}},
		{"cisco ssh, random protocol (tarpit)", ssh("SSH-48213-Cisco-1.25\r\n"), wantMatch{}},
		{"not cisco's sshd", ssh("SSH-2.0-OpenSSH_8.0 Cisco-1.25\r\n"), wantMatch{}},
		{"fortios 4 two-part release", ssh("Version: FortiGate-100D v4.0,build0702,140205 (MR3 Patch 17)\n"), wantMatch{Vendor: "Fortinet", Band: "4.0.x", StrictVersion: true}},
		{"fortimanager is not a fortigate", ssh("Version: FortiManager-VM64 v5.6.3-build1557 180306 (GA)\n"), wantMatch{}},
		{"tmsh show sys version", ssh("Sys::Version\nMain Package\n  Product     BIG-IP\n  Version     15.1.0.4\n  Build       0.0.6\n"), wantMatch{Vendor: "F5", Version: "15.1.0.4"}},
		{"bigpipe b version", ssh("Package:\nBIG-IP Version 10.2.4 655.0 Final Edition\n"), wantMatch{Vendor: "F5", Version: "10.2.4"}},
		{"sonicos 7 show status", ssh("Firmware Version: SonicOS 7.0.1-5035\n"), wantMatch{Vendor: "SonicWall", Version: "7.0.1-5035"}},
		{"ocserv journal", ssh("ocserv[812]: main[vpn]:10.0.0.5:51522 user logged in\nocserv[810]: main: initialized ocserv 1.1.6\n"), wantMatch{Vendor: "OpenConnect", Version: "1.1.6"}},
		{"openvpn server unit", ssh("Feb 02 10:00:01 vpn openvpn-server[511]: OpenVPN 2.5.5 x86_64-pc-linux-gnu [SSL (OpenSSL)] [LZO] built on Mar 22 2022\n"), wantMatch{Vendor: "OpenVPN", Version: "2.5.5"}},
		{"openvpn client's start line elsewhere", ssh("Feb 02 10:00:01 laptop openvpn[511]: OpenVPN 2.5.5 x86_64-pc-linux-gnu [SSL (OpenSSL)] [LZO] built on Mar 22 2022\n"), wantMatch{}},
		{"softether json-rpc", tcpService(443, httpProbe("POST", "/api/", 200, `{"result":{"ServerProductName_str":"SoftEther VPN Server (64 bit)","ServerVersionString_str":"Version 4.38 Build 9760   (English)"}}`)), wantMatch{Vendor: "SoftEther", Version: "4.38.9760"}},
		{"rd web form", tcpService(443, httpProbe("GET", "/RDWeb/Pages/en-US/login.aspx", 200, `<input type="hidden" name="WorkSpaceID" value="rds.example.com"/><input type="hidden" name="RDPCertificates" value="AB12"/>`)), wantMatch{Vendor: "Microsoft"}},
		{"a form with one of the fields", tcpService(443, httpProbe("GET", "/login", 200, `<input type="hidden" name="WorkSpaceID" value="x"/>`)), wantMatch{}},
	})
}
