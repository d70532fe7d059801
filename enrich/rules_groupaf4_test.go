package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupAF4Tells checks the group AF4 tells (rules/81-af4-families.yaml):
// the client profiles OpenVPN Access Server and the Firebox generate, SoftEther's
// vpncmd greeting and connection lines with the build, the CloudGen Firewall's
// REST box info, Sophos Central's firewall record and Sophos UTM's restd version
// answer, and the look-alikes and near misses that must name nothing.
func TestRules_GroupAF4Tells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	body := func(port int, path, text string) *ingest.Service {
		return tcpService(port, httpProbe("GET", path, 200, text))
	}
	text := func(port int, s string) *ingest.Service {
		return tcpService(port, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody(s)}})
	}
	tests := []struct {
		name, rule      string
		svc             *ingest.Service
		vendor, version string
	}{
		{"access server profile directives", "af4-openvpn-as-client-profile",
			body(943, "/rest/GetUserlogin", "client\n# OVPN_ACCESS_SERVER_USERNAME=alice\n# OVPN_ACCESS_SERVER_PROFILE=alice@vpn.example\n"), "OpenVPN Inc.", ""},
		{"access server profile header quoted as text", "af4-openvpn-as-client-profile",
			text(443, "# Automatically generated OpenVPN client config file\n# Generated on Thu Dec 12 16:51:01 2024 by as1\n"), "OpenVPN Inc.", ""},
		{"a community profile without the directives", "",
			body(443, "/", "client\ndev tun\nproto udp\nremote vpn.example 1194\n# OVPN_ACCESS_SERVER is mentioned, no directive\n"), "", ""},
		{"vpncmd greeting with its build", "af4-softether-vpncmd",
			text(5555, "SoftEther VPN Command Line Management Utility (vpncmd command)\nVersion 4.27 Build 9667   (English)\nCompiled 2018/05/26 09:09:16 by yagi at pc33\n"), "SoftEther", "4.27.9667"},
		{"vpncmd 5.x developer edition greeting", "af4-softether-vpncmd",
			text(5555, "SoftEther VPN Command Line Management Utility (vpncmd command)\nDeveloper Edition\nVersion 5.02 Build 5180   (English)\n"), "SoftEther", "5.02.5180"},
		{"vpncmd connected to a server", "af4-softether-vpncmd",
			text(443, "Connection has been established with VPN Server \"vpn\" (port 443).\n\nYou have administrator privileges for the entire VPN Server.\n\nVPN Server>"), "SoftEther", ""},
		{"vpncmd inside a virtual hub", "af4-softether-vpncmd",
			text(5555, "VPN Server/DEFAULT>UserCreate\nUserCreate command - Create User\nUser Name: steve\n"), "SoftEther", ""},
		{"another cli's prompt", "",
			text(22, "VPN Server>show users\nno such command\n"), "", ""},
		{"cloudgen rest box info", "af4-barracuda-cloudgen-rest-api",
			body(8443, "/rest/control/v1/box/info", `{"appliance": "VM", "model": "vf1000", "release": "GWAY-8.3.1-0086"}`), "Barracuda", "8.3.1"},
		{"a guide naming a firmware image", "",
			body(443, "/doc", "Download https://d.barracuda.com/ngfirewall/8.1.0/GWAY-8.1.0-0440-HyperV-VTxxx.vhd and import it."), "", ""},
		{"sophos central firewall record", "af4-sophos-firewall-central-record",
			body(443, "/firewall/v1/firewalls", `{"firmwareVersion": "XGS116_XN01_19.5.3.652", "model": "XGS116_XN01_SFOS 19.5.3 MR-3-Build652"}`), "Sophos", "19.5.3"},
		{"a honeypot's bare sfos status line", "",
			text(22, "Sophos Firewall OS (SFOS) Version 20.0.1 MR-1-Build342\nFirmware Active: SFOS 20.0.1 MR-1 (Backup: SFOS 19.5.3 MR-3)\n"), "", ""},
		{"sophos utm restd version", "af4-sophos-utm-restd-version",
			body(4444, "/api/status/version", `{"restd": "1.3.0", "utm": "9.716"}`), "Sophos", "9.716"},
		{"firebox client.ovpn pin", "af4-watchguard-sslvpn-profile",
			body(443, "/", "client\ntls-remote \"/O=WatchGuard_Technologies/OU=Fireware/CN=Fireware_SSLVPN_Server\"\nremote 198.51.100.1 443\n"), "WatchGuard", ""},
		{"firebox profile in networkmanager's form", "af4-watchguard-sslvpn-profile",
			text(443, `vpn.data: remote = vpn.example:443, verify-x509-name = subject:O=WatchGuard_Technologies\, OU=Fireware\, CN=Fireware SSLVPN Server`), "WatchGuard", ""},
		{"sfos site-to-site client configuration", "af4-sophos-firewall-appliance-certificate",
			body(443, "/", `{"protocol": "tcp", "server_dn": "C=NA, ST=NA, L=NA, O=NA, OU=NA, CN=Appliance_Certificate_LABWJ30kV5ihdMM, emailAddress=na@example.com", "username": "SRV_E297F42126B2DD3F1105FBD0A0754C89"}`), "Sophos", ""},
		{"sfos default certificate", "af4-sophos-firewall-appliance-certificate",
			tcpService(443, ingest.Probe{TLS: &ingest.TLS{Subject: &ingest.DN{CN: "Appliance_Certificate_LABWJ30kV5ihdMM", O: []string{"NA"}}}}), "Sophos", ""},
		{"a certificate named appliance by someone else", "",
			tcpService(443, ingest.Probe{TLS: &ingest.TLS{Subject: &ingest.DN{CN: "Appliance_Certificate_LABWJ30kV5ihdMM", O: []string{"Example Corp"}}}}), "", ""},
		{"avd gateway arm answer", "af4-microsoft-avd-arm-gateway",
			tcpService(443, httpProbe("POST", "/api/arm/v2/connections", 200, `{"udpPort": 3390, "redirectedServerName": "host1", "redirectedServerCert": "AAAA"}`)), "Microsoft", ""},
		{"freerdp's log of the arm answer", "af4-microsoft-avd-arm-gateway",
			text(443, `[arm_handle_request_ok]: Got HTTP Response data: {  "udpPort": 3390,  "redirectedServerName": "XXXXXX"`), "Microsoft", ""},
		{"another api naming a server", "",
			body(443, "/api/v1/servers", `{"serverName": "host1", "redirected": false}`), "", ""},
		{"an openvpn client log verifying a firebox", "",
			text(514, "VERIFY OK: depth=0, O=WatchGuard_Technologies, OU=Fireware, CN=Fireware SSLVPN Server"), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor, Rule: tt.rule, Version: tt.version, StrictVersion: true})
		})
	}
}
