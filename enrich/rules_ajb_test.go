package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_ArrayBarracudaJuniperTells checks the Array AG, Barracuda and
// Juniper SRX tells of group L (rules/40-array.yaml, 45-barracuda.yaml,
// 25-juniper.yaml, 59-snmp.yaml) and their look-alike guards.
func TestRules_ArrayBarracudaJuniperTells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	type hdr = ingest.Header
	http := func(method, path string, status int, headers []hdr, body string) *ingest.Service {
		resp := &ingest.Response{Status: status, Headers: headers}
		if body != "" {
			resp.Body = ingest.TextBody(body)
		}
		return &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{
			Request: &ingest.Request{Method: method, Path: path}, Response: resp}}}
	}
	snmp := func(text string) *ingest.Service {
		return bannerService(161, "udp", text)
	}
	ssh := func(text string) *ingest.Service {
		return bannerService(22, "tcp", text)
	}
	cert := func(dn string) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{TLS: &ingest.TLS{Subject: &ingest.DN{DN: dn}}}}}
	}
	tests := []struct {
		name   string
		svc    *ingest.Service
		vendor string
	}{
		{"array vpntunnel cookietest redirect", http("GET", "/vpntunnel", 302,
			[]hdr{{Name: "Location", Value: "/prx/000/http/localhost/cookietest"}}, ""), "Array Networks"},
		{"array proxy url of another host", http("GET", "/", 302,
			[]hdr{{Name: "Location", Value: "https://vpn.example.edu/prx/001/http/intranet.example.edu/index.html"}}, ""), "Array Networks"},
		{"array login redirect to welcome", http("POST", "/prx/000/http/localhost/login", 302,
			[]hdr{{Name: "Location", Value: "https://vpn.example.edu/prx/000/http/localhost/welcome"}}, ""), "Array Networks"},
		{"array portal globals", http("GET", "/", 200, nil, "<script>_AN_global_var_init();</script>"), "Array Networks"},
		{"bare /prx/ path names nothing", http("GET", "/", 302,
			[]hdr{{Name: "Location", Value: "/prx/123/"}}, ""), ""},
		{"vpntunnel redirect without the proxy path names nothing", http("GET", "/vpntunnel", 302,
			[]hdr{{Name: "Location", Value: "/login/cookietest"}}, ""), ""},
		{"barracuda ssl vpn cookie", http("GET", "/", 200,
			[]hdr{{Name: "Set-Cookie", Value: "SSLX_SSESHID=abc; path=/"}}, "<html></html>"), "Barracuda"},
		{"adito with the same cookie", http("GET", "/showLogon.do", 200,
			[]hdr{{Name: "Set-Cookie", Value: "SSLX_SSESHID=abc; path=/"}}, "<title>Adito</title> OpenVPN ALS"), ""},
		{"barracudahttp", http("GET", "/", 200, []hdr{{Name: "Server", Value: "BarracudaHTTP 4.0"}}, ""), "Barracuda"},
		{"real time logic barracudaserver", http("GET", "/", 200,
			[]hdr{{Name: "Server", Value: "BarracudaServer.com (Windows)"}}, "<p>BarracudaServer.com (Windows)</p>"), ""},
		{"secure connect json", http("POST", "/remoteaccess/login", 200, nil,
			`{"authenticated":"no","error":"Login data parsing failure"}`), "Juniper Networks"},
		{"authenticated json elsewhere", http("POST", "/api/login", 200, nil, `{"authenticated":"no"}`), ""},
		{"j-web model variable", http("GET", "/", 200, nil, `<script>var modelphpStr = "srx300";</script>`), "Juniper Networks"},
		{"barracuda firewall sysdescr", snmp("Barracuda Firewall"), "Barracuda"},
		{"barracuda ng firewall sysdescr", snmp("Barracuda NG Firewall"), "Barracuda"},
		{"barracuda waf sysdescr", snmp("Barracuda Web Application Firewall"), "Barracuda"},
		{"sysdescr that mentions barracuda", snmp("Linux fw Barracuda Firewall lab 5.10"), ""},
		{"snmpwalk esg sysdescr", snmp(".1.3.6.1.2.1.1.1.0 = STRING: Barracuda Email Security Gateway\n.1.3.6.1.2.1.1.2.0 = OID: .1.3.6.1.4.1.8072.3.2.10"), "Barracuda"},
		{"cloudgen sysobjectid", snmp("SysOID: .1.3.6.1.4.1.10704.1.10"), "Barracuda"},
		{"another enterprise's 10704.10", snmp(".1.3.6.1.4.1.10704.10.1"), ""},
		{"srx340 sysobjectid", snmp("SysOID: .1.3.6.1.4.1.2636.1.1.1.2.135"), "Juniper Networks"},
		{"ex4300 sysobjectid names nothing", snmp("SysOID: .1.3.6.1.4.1.2636.1.1.1.4.63.9"), ""},
		{"srx oid inside a longer component", snmp("1.3.6.1.4.1.2636.1.1.1.2.1350"), ""},
		{"junos system cert, rfc 4514 order", cert("CN=CV3225AX0113, CN=system generated, CN=self-signed"), "Juniper Networks"},
		{"system cert, asn.1 order", cert("CN=self-signed, CN=system generated, CN=0162052010001097"), "Juniper Networks"},
		{"a self-signed cert alone", cert("CN=self-signed, O=Example"), ""},
		{"barracuda ssl vpn default cert", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{TLS: &ingest.TLS{
			Subject: &ingest.DN{CN: "sslvpn.barracuda.com", O: []string{"Untrusted Certificate"}}}}}}, "Barracuda"},
		{"a host under barracuda.com", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{TLS: &ingest.TLS{
			Subject: &ingest.DN{CN: "login.sslvpn.barracuda.com.example.net"}}}}}, ""},
		{"netscreen ssh", ssh("SSH-2.0-NetScreen\r\n"), "Juniper Networks"},
		{"screenos scs ssh", ssh("SSH-1.5-SSH Protocol Compatible Server SCS 2.0\r\n"), "Juniper Networks"},
		{"bare ssh compatible server names nothing", ssh("SSH-2.0-SSH Compatible Server\r\n"), ""},
		{"netscreen with a version", ssh("SSH-2.0-NetScreen-5.0\r\n"), "Juniper Networks"},
		{"netscreen-like suffix names nothing", ssh("SSH-2.0-NetScreenX\r\n"), ""},
		{"arrayos ssh", ssh("SSH-2.0-ArrayOS\r\n"), "Array Networks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor})
		})
	}
}
