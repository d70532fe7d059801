package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupAG4Tells checks the group AG4 tells (rules/83-ag4-scanners.yaml):
// Metasploit records of UniFi's, the Firebox's and FortiOS's SSH backdoor
// modules, the NetScaler and PAN-OS kernels a session prints, the BIG-IP
// release and the ZLD build date a check prints, ike-scan's Check Point 9101
// notify, nmap's ubiquiti-discovery of a UniFi console; and the near misses
// that must name nothing (a module's negative line, an EdgeRouter, another
// notify type).
func TestRules_GroupAG4Tells(t *testing.T) {
	msf := func(port int, module, info string) *ingest.Service {
		s := tcpService(port)
		s.Detected = &ingest.Detected{By: "metasploit", Product: module, Info: info}
		return s
	}
	nmapSV := func(port int, product, info string, ps ...ingest.Probe) *ingest.Service {
		s := &ingest.Service{Port: port, Transport: "udp", Probes: ps}
		s.Detected = &ingest.Detected{By: "nmap", Service: "ubiquiti-discovery", Product: product, Info: info}
		return s
	}
	ike := func(s string) *ingest.Service {
		return &ingest.Service{Port: 500, Transport: "udp", Probes: []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.TextBody(s)}}}}
	}
	checkMatches(t, []matchCase{
		{"unifi log4shell verdict", msf(8443, "exploit/multi/http/ubiquiti_unifi_log4shell", "[*] Running automatic check\n[+] The target is vulnerable."),
			wantMatch{Vendor: "Ubiquiti", Rule: "ag4-metasploit-module-unifi"}},
		{"unifi module without a positive line", msf(8443, "exploit/multi/http/ubiquiti_unifi_log4shell", "[-] Exploit aborted due to failure: not-vulnerable"),
			wantMatch{}},
		{"firebox wgagent verdict", msf(8080, "exploit/linux/http/watchguard_firebox_unauth_rce_cve_2022_26318", "[*] Checking if 192.0.2.1:8080 can be exploited.\n[+] The target appears to be vulnerable."),
			// (group AG2's rule for the same module's success line sorts first and names it too)
			wantMatch{Vendor: "WatchGuard"}},
		{"fortios ssh backdoor login", msf(22, "auxiliary/scanner/ssh/fortinet_backdoor", "[+] 192.0.2.1:22 - Logged in as Fortimanager_Access"),
			wantMatch{Vendor: "Fortinet", Rule: "ag4-metasploit-fortios-ssh-backdoor"}},
		{"the backdoor scanner's failed login", msf(22, "auxiliary/scanner/ssh/fortinet_backdoor", "[-] 192.0.2.1:22 - Login as Fortimanager_Access failed"),
			wantMatch{}},
		{"netscaler kernel in sysinfo", msf(443, "exploit/freebsd/http/some_module", "Computer     : adc\nOS           : FreeBSD 11.4-NETSCALER-13.1 FreeBSD 11.4-NETSCALER-13.1 #0 2596b10c4(rs_131_48_41_RTM)"),
			wantMatch{Vendor: "Citrix", Rule: "ag4-session-kernel-netscaler", Band: "13.1.x"}},
		{"a plain freebsd kernel", msf(443, "exploit/freebsd/http/some_module", "OS : FreeBSD 11.4-RELEASE-p9 FreeBSD 11.4-RELEASE-p9 #0"),
			wantMatch{}},
		{"pan-os kernel in sysinfo", msf(443, "exploit/linux/http/other", "OS           : Red Hat  (Linux 3.10.0-957.21.3.10.pan.x86_64)"),
			wantMatch{Vendor: "Palo Alto Networks", Rule: "ag4-session-kernel-panos"}},
		{"bigip release in a check", msf(443, "exploit/linux/http/some_check", "[+] The target is vulnerable. Target is running BIG-IP 14.1.2."),
			wantMatch{Vendor: "F5", Version: "14.1.2"}},
		{"zyxel model and build date", msf(443, "exploit/linux/http/other_check", "[+] The target appears to be vulnerable. This was determined by the model and build date: USG FLEX 100, 220315042158"),
			wantMatch{Vendor: "Zyxel"}},
		{"check point 9101 notify", ike("192.0.2.1\t(0.0.0.0) Notify message 9101 (Firewall-1) Message=\"User testing unknown.\\000\"\n\tHDR=(CKY-R=0000000000000000)\n"),
			wantMatch{Vendor: "Check Point", Rule: "ike-scan-checkpoint-notify"}},
		{"another notify type", ike("192.0.2.1\t(0.0.0.0) Notify message 14 (NO-PROPOSAL-CHOSEN)\n\tHDR=(CKY-R=0000000000000000, msgid=41a8534e)\n"),
			wantMatch{}},
		{"cloud key discovery", nmapSV(10001, "Ubiquiti Discovery Service", "Ubiquiti Discovery Service (v2 protocol, UCK-v2 software ver. 5.9.29); v2 protocol, UCK-v2 software ver. 5.9.29"),
			wantMatch{Vendor: "Ubiquiti", Rule: "ag4-nmap-ubiquiti-discovery-unifi-console", Version: "5.9.29"}},
		{"dream machine discovery script block", nmapSV(10001, "", "",
			ingest.Probe{Name: "nmap:ubiquiti-discovery", Banner: &ingest.Banner{Received: ingest.TextBody("protocol: v2\n  firmware: UDM.al324.v1.12.22\n  model: UDM-Pro\n")}}),
			wantMatch{Vendor: "Ubiquiti", Rule: "ag4-nmap-ubiquiti-discovery-unifi-console"}},
		{"edgerouter discovery", nmapSV(10001, "Ubiquiti Discovery Service", "Ubiquiti Discovery Service (v1 protocol, ER-X software ver. v1.10.7); v1 protocol, ER-X software ver. v1.10.7",
			ingest.Probe{Name: "nmap:ubiquiti-discovery", Banner: &ingest.Banner{Received: ingest.TextBody("protocol: v1\n  product: ER-X\n  firmware: EdgeRouter.ER-e50.v1.10.7.5127989.181001.1227\n")}}),
			wantMatch{}},
		{"routeros ssh_login proof", msf(22, "auxiliary/scanner/ssh/ssh_login", "[+] 192.0.2.1:22 - Success: 'admin:REDACTED' 'MikroTik CHR 6.45.9 (long-term)'"),
			wantMatch{Vendor: "MikroTik", Rule: "ag4-metasploit-routeros-records", Version: "6.45.9"}},
		{"another device's ssh_login proof", msf(22, "auxiliary/scanner/ssh/ssh_login", "[+] 192.0.2.1:22 - Success: 'admin:REDACTED' 'Linux gw 5.10.0 x86_64'"),
			wantMatch{}},
		{"enum_mikrotik os line", msf(22, "post/networking/gather/enum_mikrotik", "[*] Gathering info from /export verbose\n[+] 192.0.2.1:22 OS: RouterOS 6.45.9"),
			wantMatch{Vendor: "MikroTik", Rule: "ag4-metasploit-routeros-records", Version: "6.45.9"}},
		{"package print on a console", tcpService(22, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("Flags: X - disabled\n #   NAME                    VERSION\n 0   routeros-arm            6.48.6\n 1   system                  6.48.6\n")}}),
			wantMatch{Vendor: "MikroTik", Version: "6.48.6"}},
		{"a chr export without a software id", tcpService(22, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("# jul/18/2020 16:07:05 by RouterOS 6.45.9\n# software id =\n#\n/interface bridge\nadd name=bridge_local\n")}}),
			wantMatch{Vendor: "MikroTik", Version: "6.45.9"}},
		{"a note quoting the export line alone", tcpService(22, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("the header reads # jul/18/2020 16:07:05 by RouterOS 6.45.9 in the file\n")}}),
			wantMatch{}},
		{"enum_f5 version lines", msf(22, "post/networking/gather/enum_f5", "[*] Moving to TMOS prompt\n[+] Version: BIG-IP 15.1.0.2 0.0.9\n[+] 192.0.2.1:22 Product BIG-IP\n[+] 192.0.2.1:22 OS Version: 15.1.0.2"),
			wantMatch{Vendor: "F5", Rule: "ag4-metasploit-enum-f5-bigip", Version: "15.1.0.2"}},
		{"bigip ve kernel in a login proof", msf(22, "auxiliary/scanner/ssh/ssh_login", "[+] 192.0.2.1:22 - Success: 'root:REDACTED' 'uid=0(root) gid=0(root) Linux f5bigip 3.10.0-862.14.4.el7.ve.x86_64 #1 SMP Fri Mar 20 17:06:49 PDT 2020 x86_64 GNU/Linux '"),
			wantMatch{Vendor: "F5", Rule: "ag4-session-kernel-bigip-ve"}},
		{"a centos kernel in a login proof", msf(22, "auxiliary/scanner/ssh/ssh_login", "[+] 192.0.2.1:22 - Success: 'root:REDACTED' 'Linux web1 3.10.0-1160.el7.x86_64 #1 SMP Mon Oct 19 16:18:59 UTC 2020 x86_64 GNU/Linux '"),
			wantMatch{}},
		{"sophos utm webadmin verdict", msf(4444, "exploit/linux/http/sophos_utm_webadmin_sid_cmd_injection", "[*] Injecting command: sleep 5\n[+] The target appears to be vulnerable. Successfully tested command injection."),
			wantMatch{Vendor: "Sophos", Rule: "ag4-metasploit-module-sophos-utm"}},
		{"unifi backup post module", msf(22, "post/multi/gather/ubiquiti_unifi_backup", "[+] Read UniFi Controller file /var/lib/unifi/system.properties\n[+] Found backup folder: /var/lib/unifi/backup"),
			wantMatch{Vendor: "Ubiquiti", Rule: "ag4-metasploit-module-unifi"}},
		{"enum_cisco on ios", msf(22, "post/networking/gather/enum_cisco", "[*] The device OS is IOS\n[+] Obtained higher privilege level."),
			wantMatch{}},
	})
}
