package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupU1Tells checks the group U1 tells and guards of the
// Fortinet, Palo Alto, Check Point and Juniper rules (rules/10-fortinet.yaml,
// 10-paloalto.yaml, 20-checkpoint.yaml, 25-juniper.yaml, 59-snmp.yaml): the
// CCC answer in any rendering, Junos's NETCONF hello and hrSWInstalledName,
// and the honeypot imitations that must name nothing (a Server header naming
// Fortinet, GlobalProtect XML answers with only a framework's headers, a
// Gaia version header).
func TestRules_GroupU1Tells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	type hdr = ingest.Header
	probe := headerProbe
	svc := tcpService
	udp := func(port int, ps ...ingest.Probe) *ingest.Service {
		return &ingest.Service{Port: port, Transport: "udp", Probes: ps}
	}
	banner := func(text string) ingest.Probe {
		return ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody(text)}}
	}
	const gpPrelogin = `<?xml version="1.0" encoding="UTF-8" ?><prelogin-response><status>Success</status><authentication-message>Enter login credentials</authentication-message><panos-version>1</panos-version><region>DE</region></prelogin-response>`
	tests := []struct {
		name          string
		svc           *ingest.Service
		vendor        string
		version, band string
	}{
		// Check Point: the CCC answer as clients print it
		{"ccc answer as json", svc(443, probe("POST", "/clients/", 200, `{"ResponseData": {"connectivity_info": {"cookie_name": "CPCVPN_SESSION_ID", "tcpt_port": 443}}}`)), "Check Point", "", ""},
		{"ccc answer as s-expression fields without the header", svc(443, probe("POST", "/clients/", 200, "\t\t\t:cookie_name (CPCVPN_SESSION_ID)\n\t\t\t:ics_base_url (\"/clients/ICS/components\")\n")), "Check Point", "", ""},
		{"ccc ics urls as json", svc(443, probe("POST", "/clients/", 200, `"ics_upgrade_url": "\"/clients/ICS/components/icsweb.cab\""`)), "Check Point", "", ""},
		// Juniper: NETCONF hello, hrSWInstalledName, a bare SRX sysDescr
		{"junos netconf hello", svc(830, banner(`<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities><capability>urn:ietf:params:netconf:base:1.0</capability><capability>http://xml.juniper.net/netconf/junos/1.0</capability></capabilities><session-id>1234</session-id></hello>`)), "Juniper Networks", "", ""},
		{"junos netconf hello dmi capability", svc(22, banner("<nc:hello>\n <nc:capabilities>\n  <nc:capability>http://xml.juniper.net/dmi/system/1.0</nc:capability>\n")), "Juniper Networks", "", ""},
		{"junos hrSWInstalledName", udp(161, banner(`HOST-RESOURCES-MIB::hrSWInstalledName.2 = STRING: "JUNOS Software Release [18.4R3-S3]"`)), "Juniper Networks", "18.4R3-S3", ""},
		{"junos hrSWInstalledName by oid", udp(161, banner(`.1.3.6.1.2.1.25.6.3.1.2.2 = STRING: "JUNOS Base OS boot [21.4R3.15]"`)), "Juniper Networks", "21.4R3.15", ""},
		{"srx sysDescr without a release", udp(161, banner("SNMPv2-MIB::sysDescr.0 = STRING: Juniper Networks, Inc. srx345 internet router")), "Juniper Networks", "", ""},
		// Check Point's HTTP security server and GlobalProtect's reason header (third batch)
		{"fw-1 access denied page", svc(80, probe("GET", "/x", 200, "<TITLE>Error</TITLE>\n<BODY>\n<H1>Error</H1>\nFW-1 at gw-edge01: Access denied.</BODY>")), "Check Point", "", ""},
		{"fw-1 proxy authentication 407", svc(80, probe("GET", "/", 407, "FW-1 at fw01.example.com: Unauthorized to access the document.\n<LI>Authorization is needed for FW-1.")), "Check Point", "", ""},
		{"globalprotect reason header alone", svc(443, probe("POST", "/", 512, "", hdr{Name: "x-private-pan-globalprotect", Value: "auth-failed-invalid-user-input"})), "Palo Alto Networks", "", ""},
		{"globalprotect gateway reason header", svc(443, probe("POST", "/", 200, "", hdr{Name: "X-Private-Pan-Sslvpn", Value: "auth-failed"})), "Palo Alto Networks", "", ""},
		// fourth batch: FortiOS's second IKE vendor ID, GlobalProtect's 2026 CSP
		{"fortigate v5 vid in a strongswan log", udp(500, banner("received unknown vendor ID: 82:99:03:17:57:a3:60:82:c6:a6:21:de:00:00:00:00")), "Fortinet", "", ""},
		{"fortigate v5 vid as ike-scan prints it", udp(500, banner("VID=8299031757a36082c6a621de000502d7")), "Fortinet", "", ""},
		{"globalprotect hip check with frame-ancestors", svc(443, probe("POST", "/ssl-vpn/hipreportcheck.esp", 200, "", hdr{Name: "Cache-Control", Value: "no-store, no-cache, must-revalidate, post-check=0, pre-check=0"}, hdr{Name: "X-Frame-Options", Value: "DENY"}, hdr{Name: "Content-Security-Policy", Value: "default-src 'self'; script-src 'self' 'unsafe-inline'; img-src * data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none';"})), "Palo Alto Networks", "", ""},
		// look-alikes: name nothing
		{"vid sharing only the first bytes", udp(500, banner("VID=8299031757a36082c6a6")), "", "", ""},
		{"prose about a firewall named fw-1", svc(80, probe("GET", "/", 200, "<p>The FW-1 at the edge denies access to guests.</p>")), "", "", ""},
		{"netconf hello of another vendor", svc(830, banner(`<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities><capability>urn:ietf:params:netconf:base:1.1</capability><capability>http://cisco.com/ns/yang/Cisco-IOS-XR-ifmgr-cfg?module=Cisco-IOS-XR-ifmgr-cfg</capability></capabilities></hello>`)), "", "", ""},
		{"hrSWInstalledName of another package", udp(161, banner(`HOST-RESOURCES-MIB::hrSWInstalledName.1 = STRING: "openssl-3.0.13-1 [x86_64]"`)), "", "", ""},
		{"fortigate logincheck under a server naming it", svc(443, probe("POST", "/remote/logincheck", 302, "", hdr{Name: "Server", Value: "FortiGate"}, hdr{Name: "Location", Value: "/remote/login?error=1"}, hdr{Name: "Set-Cookie", Value: "SVPNCOOKIE=; path=/; Secure; HttpOnly"})), "", "", ""},
		{"fortigate page under a server naming fortinet", svc(443, probe("GET", "/remote/login", 200, `<script>top.location="/remote/login";</script>`, hdr{Name: "Server", Value: "Fortinet SSL VPN"})), "", "", ""},
		{"globalprotect prelogin with only a framework's headers", svc(443, probe("POST", "/global-protect/prelogin.esp", 200, gpPrelogin, hdr{Name: "Content-Type", Value: "application/xml; charset=UTF-8"}, hdr{Name: "Date", Value: "Fri, 27 Nov 2026 00:00:00 GMT"}, hdr{Name: "Content-Length", Value: "212"})), "", "", ""},
		{"check point answer with a gaia version header", svc(443, probe("POST", "/clients/MyCRL", 200, "", hdr{Name: "Server", Value: "Check Point SVN foundation"}, hdr{Name: "X-Gaia-Version", Value: "R81.20"})), "", "", ""},
		// the guards leave the products' own answers named
		{"globalprotect prelogin with php's headers", svc(443, probe("POST", "/global-protect/prelogin.esp", 200, gpPrelogin, hdr{Name: "Date", Value: "Fri, 27 Nov 2026 00:00:00 GMT"}, hdr{Name: "Content-Type", Value: "application/xml; charset=UTF-8"}, hdr{Name: "Cache-Control", Value: "no-store, no-cache, must-revalidate, post-check=0, pre-check=0"}, hdr{Name: "Expires", Value: "Thu, 19 Nov 1981 08:52:00 GMT"})), "Palo Alto Networks", "", ""},
		{"globalprotect prelogin body alone", svc(443, probe("POST", "/global-protect/prelogin.esp", 200, gpPrelogin)), "Palo Alto Networks", "", ""},
		{"fortigate logincheck with the masked server", svc(443, probe("POST", "/remote/logincheck", 200, "", hdr{Name: "Server", Value: "xxxxxxxx-xxxxx"}, hdr{Name: "Set-Cookie", Value: "SVPNCOOKIE=abc; path=/; secure; httponly"})), "Fortinet", "", ""},
		{"check point svn foundation alone", svc(443, probe("GET", "/", 404, "", hdr{Name: "Server", Value: "Check Point SVN foundation"})), "Check Point", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor, Version: tt.version, Band: tt.band, StrictVersion: true})
		})
	}
}
