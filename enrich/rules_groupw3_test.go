package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupW3GatewayXML checks the group W3 tells (web views re-mined
// from sources already cited): the GlobalProtect gateway's getconfig.esp
// tunnel configuration and its hipreportcheck answer named by their XML
// alone, as a client log prints them without the request line
// (rules/10-paloalto.yaml). Their look-alikes name nothing: another tunnel
// URL, a bare <need-tunnel>, a <hip-report-needed> outside PAN-OS's
// <response status="success"> envelope. Batch 2: what-vpn's own
// identification (rules/70-detected.yaml): its shared
// "AnyConnect/OpenConnect" name names Cisco or ocserv only by the details
// that tell them apart, with the ASA's release; alone it names nothing.
func TestRules_GroupW3GatewayXML(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	web := func(p ingest.Probe) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{p}}
	}
	whatvpn := func(product, info string) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{By: "what-vpn", Product: product, Info: info}}
	}
	const getconfig = "\n\t<response status=\"success\">\n\t\t<need-tunnel>yes</need-tunnel>\n" +
		"\t\t<ssl-tunnel-url>/ssl-tunnel-connect.sslvpn</ssl-tunnel-url>\n\t\t<portal>GP_Gateway-N</portal>\n"
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"gateway getconfig body without a path", web(httpProbe("", "", 200, getconfig)),
			wantMatch{Vendor: "Palo Alto Networks", Rule: "paloalto-globalprotect"}},
		{"gateway getconfig body on its path", web(httpProbe("POST", "/ssl-vpn/getconfig.esp", 200, getconfig)),
			wantMatch{Vendor: "Palo Alto Networks"}},
		{"hipreportcheck answer without a path", web(httpProbe("", "", 200, "<response status=\"success\">\n\t\t<hip-report-needed>no</hip-report-needed>\n\t</response>")),
			wantMatch{Vendor: "Palo Alto Networks"}},
		{"another product's tunnel url", web(httpProbe("GET", "/", 200, "<response status=\"success\"><ssl-tunnel-url>/tunnel</ssl-tunnel-url></response>")),
			wantMatch{}},
		{"a bare need-tunnel element", web(httpProbe("GET", "/", 200, "<need-tunnel>yes</need-tunnel>")), wantMatch{}},
		{"hip-report-needed outside the envelope", web(httpProbe("GET", "/", 200, "<config><hip-report-needed>no</hip-report-needed></config>")),
			wantMatch{}},
		{"what-vpn asa with release", whatvpn("AnyConnect/OpenConnect", "Cisco, ASA (9.1(6)6)"),
			wantMatch{Vendor: "Cisco", Rule: "detected-whatvpn-cisco-anyconnect", Version: "9.1(6)6", StrictVersion: true}},
		{"what-vpn cisco without release", whatvpn("AnyConnect/OpenConnect", "Cisco"), wantMatch{Vendor: "Cisco"}},
		{"what-vpn ocserv", whatvpn("AnyConnect/OpenConnect", "ocserv, 0.8.0-0.11.6"),
			wantMatch{Vendor: "OpenConnect", Rule: "detected-whatvpn-ocserv"}},
		{"what-vpn shared name alone", whatvpn("AnyConnect/OpenConnect", ""), wantMatch{}},
		{"what-vpn globalprotect", whatvpn("PAN GlobalProtect", "portal+gateway"), wantMatch{Vendor: "Palo Alto Networks"}},
		{"what-vpn pulse secure", whatvpn("Pulse Secure", ""), wantMatch{Vendor: "Ivanti"}},
		{"what-vpn sonicwall netextender", whatvpn("SonixWall NX", ""), wantMatch{Vendor: "SonicWall"}},
		{"what-vpn juniper nc left to evidence", whatvpn("Juniper NC", ""), wantMatch{}},
		{"what-vpn no match", whatvpn("no match", ""), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, tt.want)
		})
	}
}
