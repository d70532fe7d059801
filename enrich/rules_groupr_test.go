package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupRTells checks the group R tells of the Cisco, ocserv, Ivanti
// and SonicWall rules (rules/05-ocserv.yaml, 10-cisco.yaml, 15-ivanti.yaml,
// 20-sonicwall.yaml): scanners' views (nmap script output, service
// signatures), the FMC's web login, other protocols, and the AnyConnect
// look-alikes that must name neither Cisco nor ocserv.
func TestRules_GroupRTells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	type hdr = ingest.Header
	probe := headerProbe
	svc := tcpService
	banner := func(name string, b *ingest.Body) ingest.Probe {
		return ingest.Probe{Name: name, Banner: &ingest.Banner{Received: b}}
	}
	tests := []struct {
		name          string
		svc           *ingest.Service
		vendor        string
		version, band string
	}{
		{"nmap http-cisco-anyconnect output", svc(443, banner("nmap:http-cisco-anyconnect", ingest.TextBody("\n  version: 9.8(4)20\n  tunnel-group: VPN\n"))), "Cisco", "9.8(4)20", ""},
		{"nmap http-cisco-anyconnect output of ocserv", svc(443, banner("nmap:http-cisco-anyconnect", ingest.TextBody("\n  version: 0.1(1)\n  tunnel-group: \n"))), "OpenConnect", "", ""},
		{"asa telnet greeting", svc(23, banner("nmap:NULL", ingest.BytesBody([]byte("\xff\xfb\x03\xff\xfb\x01\xff\xfb\x03\xff\xfb\x01\r\n\r\nUser Access Verification\r\n\r\nUsername: ")))), "Cisco", "", ""},
		{"asa 401 of its management server", svc(443, probe("GET", "/", 401, "<HEAD><TITLE>Authorization Required</TITLE></HEAD><BODY><H1>Authorization Required</H1>Browser not authentication-capable or authentication failed.</BODY>", hdr{Name: "WWW-Authenticate", Value: `Basic realm="Authentication"`})), "Cisco", "", ""},
		{"asa webvpn session cookie", svc(443, probe("POST", "/", 200, "", hdr{Name: "Set-Cookie", Value: "webvpn=835278264@921600@1221512527@0000000000000000000000000000000000000000;PATH=/"})), "Cisco", "", ""},
		{"fmc login.cgi with versioned assets", svc(443, probe("GET", "/login.cgi", 200, `<html><head><title>Login</title><script src="/js/sfmodal.js?v=6.6.0-90"></script></head><body>Cisco Systems SF.Modal</body></html>`)), "Cisco", "6.6.0", ""},
		{"fmc ui login 7.x", svc(443, probe("GET", "/ui/login", 200, `window.sfConfig = {'version': '7.2.5', 'build': '208', 'model': 'Secure Firewall Management Center for VMware'};`)), "Cisco", "7.2.5", ""},
		{"ivanti 400 page with the encoded title", svc(443, probe("GET", "/", 400, "<meta name=robots content=\"none\">\n<title>Secure&#32;Access&#32;SSL&#32;VPN</title>\n")), "Juniper Networks", "", ""},
		{"ivanti 101 to an if-t/tls upgrade", svc(443, ingest.Probe{Request: &ingest.Request{Method: "GET", Path: "/", Headers: []hdr{{Name: "Upgrade", Value: "IF-T/TLS 1.0"}}}, Response: &ingest.Response{Status: 101}}), "Ivanti", "", ""},
		{"sma 1000 workplace redirect", svc(443, probe("GET", "/", 302, "", hdr{Name: "Server", Value: "unknown"}, hdr{Name: "Location", Value: "https://vpn.example.com/workplace/access/home"})), "SonicWall", "", ""},
		{"netextender header", svc(443, probe("GET", "/cgi-bin/userLogin", 200, "", hdr{Name: "X-NE-message", Value: "Please fill in all fields"})), "SonicWall", "", ""},
		{"sonicos login page release band", svc(443, probe("GET", "/auth.html", 200, `<link href="swl_login-6.5.4-123456789(eng).css" rel="stylesheet">`)), "SonicWall", "", "6.5.4.x"},
		// look-alikes: name nothing
		{"anylink config-auth answer", svc(443, probe("POST", "/", 200, `<config-auth client="vpn" type="auth-request" aggregate-auth-version="2"><opaque is-for="sg"><aggauth-handle>168179266</aggauth-handle><config-hash>1595829378234</config-hash></opaque></config-auth>`, hdr{Name: "Server", Value: "AnyLinkOpenSource"}, hdr{Name: "X-Aggregate-Auth", Value: "1"})), "", "", ""},
		{"anylink config-auth body alone", svc(443, probe("POST", "/", 200, `<config-auth client="vpn" type="auth-request" aggregate-auth-version="2"><opaque is-for="sg"><aggauth-handle>168179266</aggauth-handle><config-hash>1595829378234</config-hash></opaque></config-auth>`)), "", "", ""},
		{"camouflage naming the asa in server", svc(8443, probe("GET", "/", 200, `<html><script>document.location.replace("/+CSCOE+/logon.html");</script></html>`, hdr{Name: "Server", Value: "Cisco ASA SSL VPN"})), "", "", ""},
		{"client-side config-auth type echoed", svc(8080, probe("POST", "/", 200, `<config-auth client="vpn" type="init" aggregate-auth-version="2"><version who="vpn">3.1.05160</version></config-auth>`)), "", "", ""},
		{"ocserv look-alike naming itself in the tunnel", svc(443,
			probe("POST", "/", 200, "<config-auth client=\"vpn\" type=\"auth-request\">\n<version who=\"sg\">0.1(1)</version>\n</config-auth>", hdr{Name: "Content-Type", Value: "text/xml"}),
			probe("CONNECT", "/CSCOSSLC/tunnel", 200, "", hdr{Name: "X-CSTP-Server-Name", Value: "anyconnect-server-go 1.0.1"})), "", "", ""},
		{"ivanti page served under a server naming it", svc(443, probe("GET", "/dana-na/auth/url_default/welcome.cgi", 200, "<title>Ivanti Connect Secure</title>", hdr{Name: "Server", Value: "Pulse Secure"})), "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor, Version: tt.version, Band: tt.band, StrictVersion: true})
		})
	}
}
