package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// The scanner's own identification names the remote-access product lines
// (70-detected.yaml) in the forms nmap, Shodan and Censys write them, only
// those lines, and never before a rule that reads the evidence itself.
func TestRules_Detected(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	svc := func(d ingest.Detected, probes ...ingest.Probe) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Detected: &d, Probes: probes}
	}
	tests := []struct {
		name    string
		svc     *ingest.Service
		vendor  string // "" names nothing
		rule    string
		version string
	}{
		{"shodan product", svc(ingest.Detected{By: "shodan", Product: "Fortinet FortiGate SSL VPN"}), "Fortinet", "detected-fortinet-fortigate", ""},
		{"nmap product and version", svc(ingest.Detected{By: "nmap", Product: "Fortinet FortiGate firewall http proxy admin", Version: "v6.4.9"}), "Fortinet", "detected-fortinet-fortigate", "6.4.9"},
		{"nmap cpe", svc(ingest.Detected{By: "nmap", CPE: []string{"cpe:/o:fortinet:fortios:6.0"}}), "Fortinet", "detected-fortinet-fortigate", ""},
		{"censys cpe23", svc(ingest.Detected{By: "censys", CPE: []string{"cpe:2.3:a:paloaltonetworks:globalprotect:*:*:*:*:*:*:*:*"}}), "Palo Alto Networks", "detected-paloalto-panos", ""},
		{"nmap asa", svc(ingest.Detected{By: "nmap", Product: "Cisco ASA firewall http config"}), "Cisco", "detected-cisco-asa", ""},
		{"nmap netscaler", svc(ingest.Detected{By: "nmap", Product: "Citrix NetScaler httpd"}), "Citrix", "detected-citrix-netscaler", ""},
		{"nmap juniper sa", svc(ingest.Detected{By: "nmap", Product: "Juniper Networks Secure Access SSL VPN http config"}), "Juniper Networks", "juniper-secure-access", ""},
		{"nmap zywall", svc(ingest.Detected{By: "nmap", Product: "ZyXEL ZyWALL USG 200 firewall http config"}), "Zyxel", "detected-zyxel-firewall", ""},
		{"nmap access server", svc(ingest.Detected{By: "nmap", Product: "OpenVPN Access Server", Version: "2.11.3"}), "OpenVPN Inc.", "detected-openvpn-access-server", "2.11.3"},
		// nmap's other names for the same product lines (nmap-service-probes' p/.../)
		{"nmap fortios ssl vpn", svc(ingest.Detected{By: "nmap", Product: "Fortinet SSL VPN"}), "Fortinet", "detected-fortinet-fortigate", ""},
		{"nmap fortios masked server", svc(ingest.Detected{By: "nmap", Product: "Fortinet security device httpd"}), "Fortinet", "detected-fortinet-fortigate", ""},
		{"nmap fortiguard override", svc(ingest.Detected{By: "nmap", Product: "FortiGuard Web Filtering"}), "Fortinet", "detected-fortinet-fortigate", ""},
		{"nmap panos admin", svc(ingest.Detected{By: "nmap", Product: "Palo Alto firewall http admin"}), "Palo Alto Networks", "detected-paloalto-panos", ""},
		{"nmap gaia portal", svc(ingest.Detected{By: "nmap", Product: "Check Point firewall SmartPortal", Version: "R81.10"}), "Check Point", "detected-checkpoint", "R81.10"},
		{"nmap connectra", svc(ingest.Detected{By: "nmap", Product: "Connectra Check Point Web Security httpd"}), "Check Point", "detected-checkpoint", ""},
		{"nmap check point cpe", svc(ingest.Detected{By: "nmap", CPE: []string{"cpe:/a:checkpoint:firewall"}}), "Check Point", "detected-checkpoint", ""},
		{"nmap ive", svc(ingest.Detected{By: "nmap", Product: "Juniper SA2000 or SA4000 VPN gateway http config"}), "Juniper Networks", "juniper-secure-access", ""},
		{"nmap j-web", svc(ingest.Detected{By: "nmap", Product: "Mbedthis-Appweb", Info: "Juniper router http config; PHP 5.2; name srx"}), "Juniper Networks", "detected-juniper-srx", ""},
		{"nmap screenos cpe", svc(ingest.Detected{By: "nmap", CPE: []string{"cpe:/o:juniper:netscreen_screenos"}}), "Juniper Networks", "detected-juniper-srx", ""},
		{"nmap cyberoam", svc(ingest.Detected{By: "nmap", Product: "Cyberoam SSL VPN"}), "Sophos", "detected-sophos-firewall", ""},
		{"nmap astaro", svc(ingest.Detected{By: "nmap", Product: "Astaro firewall http proxy"}), "Sophos", "detected-sophos-firewall", ""},
		{"nmap cloudgen", svc(ingest.Detected{By: "nmap", Product: "Barracuda NextGen Firewall SSL VPN"}), "Barracuda", "detected-barracuda", ""},
		{"nmap softether cpe", svc(ingest.Detected{By: "nmap", CPE: []string{"cpe:/a:university_of_tsukuba:softether_vpn"}}), "SoftEther", "detected-softether", ""},
		{"nmap openvpn management", svc(ingest.Detected{By: "nmap", Service: "openvpn-management", Product: "OpenVPN Management Interface", Version: "5"}), "OpenVPN", "detected-openvpn-protocol", ""},
		// the product names people and records use
		{"shodan secure firewall asa", svc(ingest.Detected{By: "shodan", Product: "Cisco Secure Firewall ASA"}), "Cisco", "detected-cisco-asa", ""},
		{"shodan sonicos", svc(ingest.Detected{By: "shodan", Product: "SonicOS"}), "SonicWall", "detected-sonicwall", ""},
		{"junos os", svc(ingest.Detected{By: "shodan", Product: "Junos OS"}), "Juniper Networks", "detected-juniper-srx", ""},
		{"zyxel usg flex", svc(ingest.Detected{By: "shodan", Product: "Zyxel USG FLEX"}), "Zyxel", "detected-zyxel-firewall", ""},
		{"rd gateway", svc(ingest.Detected{By: "shodan", Product: "Microsoft Remote Desktop Gateway"}), "Microsoft", "detected-microsoft-rd", ""},
		{"rd web access", svc(ingest.Detected{By: "censys", Product: "RD Web Access"}), "Microsoft", "detected-microsoft-rd", ""},
		{"wireguard", svc(ingest.Detected{By: "shodan", Product: "WireGuard"}), "WireGuard", "detected-wireguard", ""},
		{"openvpn by shodan", &ingest.Service{Port: 1194, Transport: "udp", Detected: &ingest.Detected{By: "shodan", Product: "OpenVPN"}}, "OpenVPN", "detected-openvpn-protocol", ""},
		{"openvpn by shodan on 443", svc(ingest.Detected{By: "shodan", Product: "OpenVPN"}), "", "", ""},
		{"fortiproxy", svc(ingest.Detected{By: "shodan", Product: "FortiProxy"}), "Fortinet", "detected-fortinet-fortigate", ""},
		// other product lines of the same vendors, and look-alikes, name nothing
		{"huawei usg", svc(ingest.Detected{By: "shodan", Product: "USG6000E"}), "", "", ""},
		{"remote desktop protocol", svc(ingest.Detected{By: "nmap", Product: "Microsoft Terminal Services"}), "", "", ""},
		{"openvpn service name alone", svc(ingest.Detected{By: "nmap", Service: "openvpn"}), "", "", ""},
		{"real time logic", svc(ingest.Detected{By: "nmap", Product: "Barracuda Embedded Web Server", CPE: []string{"cpe:/a:real_time_logic:barracuda_embedded_web_server"}}), "", "", ""},
		{"checkpoint police system", svc(ingest.Detected{By: "nmap", Product: "Checkpoint document verification"}), "", "", ""},
		{"zyxel modem", svc(ingest.Detected{By: "nmap", Product: "ZyXEL Prestige 660HW ADSL router"}), "", "", ""},
		{"fortimail", svc(ingest.Detected{By: "shodan", Product: "FortiMail"}), "", "", ""},
		{"cisco ios", svc(ingest.Detected{By: "nmap", Product: "Cisco IOS http config", CPE: []string{"cpe:/o:cisco:ios:15.2"}}), "", "", ""},
		{"barracuda web server", svc(ingest.Detected{By: "nmap", Product: "BarracudaServer.com WebServer"}), "", "", ""},
		{"apache", svc(ingest.Detected{By: "nmap", Product: "Apache httpd", Version: "2.4.41"}), "", "", ""},
		// the evidence's own rule comes first
		{"evidence wins", svc(ingest.Detected{By: "nmap", Product: "Citrix NetScaler httpd"},
			ingest.Probe{Request: &ingest.Request{Method: "GET", Path: "/remote/login"}, Response: &ingest.Response{Status: 200, Headers: ingest.Headers{{Name: "Server", Value: "xxxxxxxx-xxxxx"}},
				Body: &ingest.Body{Data: "<html><title>SSL VPN</title><script>var fgt_lang = 1;</script>"}}}), "Fortinet", "fortinet-fortigate-sslvpn", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor, Rule: tt.rule, Version: tt.version, StrictVersion: true})
		})
	}
}
