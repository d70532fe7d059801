package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupU5Versions checks the group U5 version tells
// (rules/72-cli.yaml and the SFOS asset hash of rules/35-sophos.yaml): the
// appliances' own CLI answers naming their release, in a CLI session's
// text or in a body, and SFOS's displayVersion and ?version= hash on any
// of its pages. Look-alike text (a switch's show version, a Linux host, an
// unknown hash, a PAN-OS line without the PA- model) names nothing or no
// version.
func TestRules_GroupU5Versions(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	probe := headerProbe
	svc := tcpService
	cli := func(text string) *ingest.Service {
		return svc(22, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody(text)}})
	}
	tests := []struct {
		name          string
		svc           *ingest.Service
		vendor        string
		version, band string
	}{
		{"fortios get system status", cli("Version: FortiGate-600E v6.2.6,build1175,201110 (GA)\nFirmware Signature: certified\nVirus-DB: 83.00146(2021-01-08 11:20)\nSerial-Number: FG6H0Exxxxxxxxx\n"), "Fortinet", "6.2.6", ""},
		{"fortios get system status vm in a write-up body", svc(443, probe("GET", "/blog/upgrade", 200, "FGT1 # get system status\nVersion: FortiGate-VM64-KVM v7.0.3,build0237,211207 (GA)\nHostname: fortigate01\n")), "Fortinet", "7.0.3", ""},
		{"fortiwifi get system status", cli("Version: FortiWiFi-60E v6.4.9,build1966,220316 (GA)\n"), "Fortinet", "6.4.9", ""},
		{"panos show system info", cli("hostname: pa1\nfamily: vm\nmodel: PA-VM\nserial: unknown\nsw-version: 7.0.1\nglobal-protect-client-package-version: 0.0.0\n"), "Palo Alto Networks", "7.0.1", ""},
		{"panos show system info hotfix", cli("model: PA-3220\nserial: 012345678901\nsw-version: 10.2.4-h2\napp-version: 8730-8055\n"), "Palo Alto Networks", "10.2.4-h2", ""},
		{"gaia show version all", cli("Product version Check Point Gaia R77.30\nOS build 204\nOS kernel version 2.6.18-92cp\nOS edition 32-bit\n"), "Check Point", "R77.30", ""},
		{"srx show version", cli("node0:\n------\nHostname: lab\nModel: srx1500\nJunos: 19.4R3-S1.3\nJUNOS OS Kernel 64-bit  [20201028.e1cef1d_builder_stable_11]\n"), "Juniper Networks", "19.4R3-S1.3", ""},
		{"srx show version, older release line", cli("Hostname: srx\nModel: firefly-perimeter\nJUNOS Software Release [12.1X47-D20.7]\n"), "Juniper Networks", "12.1X47-D20.7", ""},
		{"sfos web console displayVersion", svc(4444, probe("GET", "/webconsole/webpages/index.jsp", 200, `<script>Cyberoam.setContextPath("/webconsole");Cyberoam.displayVersion = 'SFOS 20.0.0 GA-Build222';</script><link href="/css/a.css?version=ffffffffffffffffffffffffffffffff">`)), "Sophos", "20.0.0.222", ""},
		{"sfos web console firmware version", svc(4444, probe("GET", "/webconsole/webpages/index.jsp", 200, `<script>Cyberoam.setContextPath("/webconsole");Cyberoam.firmwareVersionOrgFormat = '19.5.3.652'\nCyberoam.version = "19.5.3.652";</script>`)), "Sophos", "19.5.3.652", ""},
		{"sfos asset hash of a known build", svc(4444, probe("GET", "/webconsole/webpages/login.jsp", 200, `<title>Sophos</title><script>var uiLangToHTMLLangAttributeValueMapping = {};</script><link href="/themes/lite1/css/typography.css?version=077b68eec97ffaa545be811dc65cee99" rel="stylesheet">`)), "Sophos", "20.0.0.222", ""},
		{"sfos asset hash unknown", svc(4444, probe("GET", "/webconsole/webpages/login.jsp", 200, `<title>Sophos</title><script>var uiLangToHTMLLangAttributeValueMapping = {};</script><link href="/themes/lite1/css/typography.css?version=876208fddb2e3243e7b1efa961987a22" rel="stylesheet">`)), "Sophos", "", ""},
		{"sfos login page hash alone, read by nuclei's extractor", svc(443, probe("GET", "/webconsole/webpages/login.jsp", 200, `<title>Sophos</title><link href="/themes/lite1/css/typography.css?version=876208fddb2e3243e7b1efa961987a22" rel="stylesheet">`)), "Sophos", "", ""},
		{"srx netconf get-software-information", svc(830, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("<rpc-reply><software-information><host-name>lsys500</host-name><product-model>srx3600</product-model><package-information><name>junos</name><comment>JUNOS Software Release [12.3X48-D40.5]</comment></package-information></software-information></rpc-reply>")}}), "Juniper Networks", "12.3X48-D40.5", ""},
		{"srx netconf junos-version", svc(830, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("<software-information><product-model>srx345</product-model><junos-version>21.4R3-S5.4</junos-version></software-information>")}}), "Juniper Networks", "21.4R3-S5.4", ""},
		{"srx netconf daily build", svc(830, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("<software-information><product-model>srx5800</product-model><junos-version>17.3-2017-07-02.0_RELEASE_173_THROTTLE</junos-version></software-information>")}}), "Juniper Networks", "", ""},
		{"openvpn as ovpn-init closing message", cli("During normal operation, OpenVPN AS can be accessed via these URLs:\nAdmin  UI: https://198.51.100.24:943/admin\nClient UI: https://198.51.100.24:943/\n\nSee the Release Notes for this release at:\n   http://www.openvpn.net/access-server/rn/openvpn_as_2_0_24.html\n"), "OpenVPN Inc.", "2.0.24", ""},
		{"sonicos login scripts without a language tag", svc(443, probe("GET", "/auth.html", 200, `<script src="auth-5.0.0-2655861013(eng).js"></script><script src="md5-5.0.0-4190932482.js"></script>`)), "SonicWall", "", "5.0.0.x"},
		{"sonicos 5 two-part release", svc(443, probe("GET", "/auth.html", 200, `<frame src="loginStatusTop(eng).html"><link href="swl_login-5.0o-586369509(eng).css" rel="stylesheet">`)), "SonicWall", "", "5.0.x"},
		{"big-ip cat /VERSION", cli("Product: BIG-IP\nVersion: 15.1.2.1\nBuild: 0.0.10\nSequence: 15.1.2.1-0.0.10.0\nBaseBuild: 0.0.10\nEdition: Final\n"), "F5", "15.1.2.1", ""},
		{"netscaler show ns version", cli("> show ns version\n\tNetScaler NS13.1: Build 49.13.nc, Date: Jul 10 2023, 12:00:59   (64-bit)\n Done\n"), "Citrix", "13.1-49.13", ""},
		// a Junos router: Juniper Networks, its release (not an SRX: no SRX product or class)
		{"junos router show version", cli("Hostname: lab\nModel: mx240\nJunos: 13.3R1.4\nJUNOS Base OS boot [13.3R1.4]\n"), "Juniper Networks", "13.3R1.4", ""},
		// the same router's answer as XML over NETCONF
		{"mx netconf software information", svc(830, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("<software-information><product-model>mx240</product-model><junos-version>21.4R3-S5.4</junos-version></software-information>")}}), "Juniper Networks", "21.4R3-S5.4", ""},
		// Junos element names without a release name nothing
		{"product-model without a release", svc(830, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("<software-information><product-model>mx240</product-model></software-information>")}}), "", "", ""},
		// look-alikes: name nothing

		{"sw-version without a PA model", cli("hostname: box\nmodel: X-1000\nsw-version: 10.1.0\n"), "", "", ""},
		{"a fortigate named in prose", cli("Our FortiGate-60F runs v7.2.5 since last week\n"), "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor, Version: tt.version, Band: tt.band, StrictVersion: true})
		})
	}
}

// TestRules_GroupU5DetectedVersions checks the releases read from a
// scanner's own identification (rules/70-detected.yaml): its version field
// in each product line's wording, and the version in its CPE as NVD writes
// it (ASA dotted, Ivanti and Junos split into version and update, Check
// Point lower-case).
func TestRules_GroupU5DetectedVersions(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	svc := func(d ingest.Detected) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Detected: &d}
	}
	cpe := func(by string, c ...string) *ingest.Service { return svc(ingest.Detected{By: by, CPE: c}) }
	tests := []struct {
		name          string
		svc           *ingest.Service
		vendor        string
		version, band string
	}{
		{"fortios cpe23", cpe("censys", "cpe:2.3:o:fortinet:fortios:7.2.5:*:*:*:*:*:*:*"), "Fortinet", "7.2.5", ""},
		{"fortios nmap cpe, two parts", cpe("nmap", "cpe:/o:fortinet:fortios:6.0"), "Fortinet", "", "6.0.x"},
		{"pan-os cpe with hotfix", cpe("censys", "cpe:2.3:o:paloaltonetworks:pan-os:10.2.4-h2:*:*:*:*:*:*:*"), "Palo Alto Networks", "10.2.4-h2", ""},
		{"asa cpe dotted four", cpe("censys", "cpe:2.3:o:cisco:adaptive_security_appliance_software:9.12.2.4:*:*:*:*:*:*:*"), "Cisco", "9.12(2)4", ""},
		{"asa cpe dotted three", cpe("nmap", "cpe:/o:cisco:adaptive_security_appliance_software:9.8.4"), "Cisco", "9.8(4)", ""},
		{"netscaler version as the appliance words it", svc(ingest.Detected{By: "shodan", Product: "Citrix NetScaler", Version: "NS13.1: Build 49.13"}), "Citrix", "13.1-49.13", ""},
		{"netscaler cpe", cpe("censys", "cpe:2.3:a:citrix:netscaler_gateway:13.1-49.13:*:*:*:*:*:*:*"), "Citrix", "13.1-49.13", ""},
		{"ivanti cpe update", cpe("censys", "cpe:2.3:a:ivanti:connect_secure:22.4:r2.1:*:*:*:*:*:*"), "Ivanti", "22.4R2.1", ""},
		{"pulse cpe update r1.0", cpe("censys", "cpe:2.3:a:pulsesecure:pulse_connect_secure:8.2:r1.0:*:*:*:*:*:*"), "Ivanti", "8.2R1", ""},
		{"ivanti build via the table", svc(ingest.Detected{By: "shodan", Product: "Ivanti Connect Secure", Version: "22.7.2.3431"}), "Ivanti", "22.7R2.3", ""},
		{"ivanti unknown build band", svc(ingest.Detected{By: "shodan", Product: "Ivanti Connect Secure", Version: "22.7.2.9999"}), "Ivanti", "", "22.7R2.x"},
		{"sonicos enhanced", svc(ingest.Detected{By: "shodan", Product: "SonicWALL firewall http config", Version: "SonicOS Enhanced 6.5.4.4-44n"}), "SonicWall", "6.5.4.4-44n", ""},
		{"sma cpe", cpe("censys", "cpe:2.3:o:sonicwall:sma_100_firmware:10.2.1.9-57sv:*:*:*:*:*:*:*"), "SonicWall", "10.2.1.9-57sv", ""},
		{"gaia cpe lower-case", cpe("censys", "cpe:2.3:o:checkpoint:gaia_os:r81.10:*:*:*:*:*:*:*"), "Check Point", "R81.10", ""},
		{"junos cpe update with service release", cpe("censys", "cpe:2.3:o:juniper:junos:21.4:r3-s5:*:*:*:*:*:*"), "Juniper Networks", "21.4R3-S5", ""},
		{"junos version", svc(ingest.Detected{By: "nmap", Product: "Juniper SRX firewall", Version: "12.1X46-D40.2"}), "Juniper Networks", "12.1X46-D40.2", ""},
		{"big-ip cpe", cpe("censys", "cpe:2.3:a:f5:big-ip_access_policy_manager:15.1.5.1:*:*:*:*:*:*:*"), "F5", "15.1.5.1", ""},
		{"sfos version wording", svc(ingest.Detected{By: "shodan", Product: "Sophos XG Firewall", Version: "SFOS 19.5.3 MR-3-Build652"}), "Sophos", "19.5.3.652", ""},
		{"fireware version", svc(ingest.Detected{By: "shodan", Product: "WatchGuard Firebox", Version: "12.5.9.U4"}), "WatchGuard", "12.5.9", ""},
		{"zld version", svc(ingest.Detected{By: "shodan", Product: "ZyXEL USG FLEX 100", Version: "V5.37(ABPS.0)"}), "Zyxel", "5.37", ""},
		{"softether build", svc(ingest.Detected{By: "shodan", Product: "SoftEther VPN Server", Version: "4.38 Build 9760"}), "SoftEther", "4.38.9760", ""},
		{"access server cpe", cpe("censys", "cpe:2.3:a:openvpn:openvpn_access_server:2.11.3:*:*:*:*:*:*:*"), "OpenVPN Inc.", "2.11.3", ""},
		// nothing read from what is not a release
		{"fortios cpe wildcard", cpe("censys", "cpe:2.3:o:fortinet:fortios:*:*:*:*:*:*:*:*"), "Fortinet", "", ""},
		{"ivanti cpe without update", cpe("censys", "cpe:2.3:a:ivanti:connect_secure:22.2:-:*:*:*:*:*:*"), "Ivanti", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor, Version: tt.version, Band: tt.band, StrictVersion: true})
		})
	}
}

// TestIsBuildHash checks which extracted values are taken for build hashes
// rather than releases.
func TestIsBuildHash(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"077b68eec97ffaa545be811dc65cee99", true},
		{"876208FDDB2E3243E7B1EFA961987A22", true},
		{"19.5.3.652", false},
		{"1234567890123456", false},
		{"deadbeef", false},
		{"9.16(4)48", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isBuildHash(tt.in); got != tt.want {
			t.Errorf("isBuildHash(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
