package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupV3SearchEngineLabels checks the group V3 tells
// (rules/70-detected.yaml, labels-*): the product labels FOFA writes in
// its records (VENDOR-PRODUCT joined by a hyphen or underscore, any case),
// and ZoomEye's, Hunter's and Shodan's labels the earlier rules read. The
// vendors' other products' labels (a home router, a NAS, Array's other
// line names aside) and a nuclei CVE result without evidence name nothing.
// The os a scanner names (Shodan's os, nmap's ostype: FortiOS, PAN-OS,
// JUNOS, ArrayOS) names the vendor's appliance line, and a nuclei result of
// a panel template that carries the product's CPE names it by its id alone.
func TestRules_GroupV3SearchEngineLabels(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	label := func(by, product string) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{By: by, Service: "https", Product: product}}
	}
	osInfo := func(by, info string) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{By: by, Service: "https", Info: info}}
	}
	tests := []struct {
		name   string
		svc    *ingest.Service
		vendor string
	}{
		{"fofa fortinet sslvpn", label("fofa", "FORTINET-SSLVPN"), "Fortinet"},
		{"fofa fortinet firewall in chinese", label("fofa", "FORTINET-防火墙"), "Fortinet"},
		{"fofa fortinet fortigate", label("fofa", "Fortinet-FortiGate"), "Fortinet"},
		{"fofa globalprotect", label("fofa", "paloalto-GlobalProtect"), "Palo Alto Networks"},
		{"zoomeye pan-os", label("zoomeye", "Palo Alto Networks firewall httpd"), "Palo Alto Networks"},
		{"hunter globalprotect", label("hunter", "GlobalProtect Portal"), "Palo Alto Networks"},
		{"fofa asa model", label("fofa", "CISCO-ASA-5520"), "Cisco"},
		{"fofa asa", label("fofa", "CISCO-ASA"), "Cisco"},
		{"fofa pulse", label("fofa", "PULSE-SECURE-VPN"), "Ivanti"},
		{"fofa netscaler gateway", label("fofa", "Citrix-NetScaler-Gateway"), "Citrix"},
		{"fofa citrix adc", label("fofa", "Citrix-ADC"), "Citrix"},
		{"fofa citrix gateway", label("fofa", "Citrix-Gateway"), "Citrix"},
		{"fofa sonicwall ssl-vpn", label("fofa", "SONICWALL-SSL-VPN"), "SonicWall"},
		{"zoomeye sma1000", label("zoomeye", "SonicWall SMA1000"), "SonicWall"},
		{"fofa check point", label("fofa", "Check_Point"), "Check Point"},
		{"fofa big-ip", label("fofa", "f5-BIGIP"), "F5"},
		{"hunter big-ip", label("hunter", "F5 BIG-IP"), "F5"},
		{"fofa usg flex", label("fofa", "ZyXEL-USG-FLEX"), "Zyxel"},
		{"fofa array vpn", label("fofa", "Array-VPN"), "Array Networks"},
		{"fofa j-web", label("fofa", "JUNIPer-Web-Device-Manager"), "Juniper Networks"},
		{"fofa ivanti", label("fofa", "Ivanti-Connect-Secure"), "Ivanti"},
		// other products' labels and a bare CVE result: nothing
		{"fofa zyxel home router", label("fofa", "ZyXEL-NBG2105"), ""},
		{"fofa zyxel nas", label("fofa", "ZYXEL-NAS326"), ""},
		{"fofa fortimail", label("fofa", "FORTINET-FortiMail"), ""},
		{"fofa cisco ios", label("fofa", "Cisco-IOS-XE"), ""},
		{"fofa citrix workspace", label("fofa", "Citrix-Workspace"), ""},
		{"nuclei cve result without evidence", label("nuclei", "nuclei:CVE-2020-2034"), ""},
		// the os a scanner names beside the service
		{"shodan os fortios", osInfo("shodan", "os: FortiOS"), "Fortinet"},
		{"shodan os pan-os", osInfo("shodan", "os: PAN-OS"), "Palo Alto Networks"},
		{"nmap ostype junos after extra info", osInfo("nmap", "(Juniper router); ostype: JUNOS"), "Juniper Networks"},
		{"nmap ostype arrayos", osInfo("nmap", "ostype: ArrayOS"), "Array Networks"},
		{"shodan os linux", osInfo("shodan", "os: Linux 3.x"), ""},
		{"an os named in prose", osInfo("shodan", "title mentions FortiOS upgrades"), ""},
		// nuclei results as printed: the template id without its CPE
		{"nuclei globalprotect panel", label("nuclei", "nuclei:globalprotect-panel"), "Palo Alto Networks"},
		{"nuclei fortios panel", label("nuclei", "nuclei:fortios-panel"), "Fortinet"},
		{"nuclei asa panel", label("nuclei", "nuclei:cisco-asa-panel-detect"), "Cisco"},
		{"nuclei citrix vpn", label("nuclei", "nuclei:citrix-vpn-detect"), "Citrix"},
		{"nuclei netscaler aaa", label("nuclei", "nuclei:netscaler-aaa-login"), "Citrix"},
		{"nuclei sonicos 7 login", label("nuclei", "nuclei:sonicwall-security-login"), "SonicWall"},
		{"nuclei big-ip rest", label("nuclei", "nuclei:bigip-icontrol-rest"), "F5"},
		{"nuclei check point mobile", label("nuclei", "nuclei:checkpoint-mobile-detect"), "Check Point"},
		{"nuclei zyxel firewall", label("nuclei", "nuclei:zyxel-firewall-panel"), "Zyxel"},
		{"nuclei sophos firewall", label("nuclei", "nuclei:sophos-fw-version-detect"), "Sophos"},
		{"nuclei softether", label("nuclei", "nuclei:softether-vpn-panel"), "SoftEther"},
		{"nuclei watchguard's bare title template", label("nuclei", "nuclei:fireware-xtm-user-authentication"), ""},
		{"nuclei f5 next central manager", label("nuclei", "nuclei:f5-next-central-manager"), ""},
		{"nuclei sonicwall analyzer", label("nuclei", "nuclei:sonicwall-analyzer-login"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor})
		})
	}
}
