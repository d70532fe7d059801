package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupQTells checks the tells the group Q round added and the
// imitations it guards against (docs/accuracy.md, group Q): ocserv's
// accepted tunnel, PAN-OS's signed error page, FortiOS's GUI certificate
// and nmap's FortiSSH, Connect Secure's Host Checker cookie; an SP's SAML
// redirect to a Connect Secure and a Server header naming NetScaler name
// nothing.
func TestRules_GroupQTells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	svc := func(port int, ps ...ingest.Probe) *ingest.Service {
		return &ingest.Service{Port: port, Transport: "tcp", Probes: ps}
	}
	connect := func(reason string, headers ...string) ingest.Probe {
		p := httpProbe("CONNECT", "/CSCOSSLC/tunnel", 200, "", headers...)
		p.Response.Body = nil
		p.Response.Reason = reason
		return p
	}
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"ocserv's accepted tunnel", svc(443, connect("CONNECTED", "X-CSTP-DPD", "90", "X-CSTP-Keepalive", "32400")), wantMatch{Vendor: "OpenConnect", Rule: "ocserv"}},
		{"a tunnel accepted with 200 OK", svc(443, connect("OK", "X-CSTP-DPD", "30")), wantMatch{}},
		{"ocserv's reason from a look-alike naming itself", svc(443, connect("CONNECTED", "X-CSTP-Server-Name", "anyconnect-server-go 1.0.1")), wantMatch{}},
		{"panweb signing its redirect page", svc(80, httpProbe("GET", "/php/utils/debug.php", 302,
			"<html><body><h1>Moved Temporarily</h1>\n<address>PanWeb Server/ -  at 127.0.0.1:28250 Port 80</address></body></html>")), wantMatch{Vendor: "Palo Alto Networks"}},
		{"apache signing the same page", svc(80, httpProbe("GET", "/", 302, "<address>Apache/2.4.57 (Debian) Server at 127.0.0.1 Port 80</address>")), wantMatch{}},
		{"fortios gui certificate", svc(443, ingest.Probe{TLS: &ingest.TLS{
			Subject: &ingest.DN{CN: "FortiGate", O: []string{"Fortinet Ltd."}, ST: "California", C: "US"},
			Issuer:  &ingest.DN{CN: "FGVMEVMBF57GNJF3", O: []string{"Fortinet"}, ST: "California", C: "US"}}}), wantMatch{Vendor: "Fortinet"}},
		{"a certificate only named FortiGate", svc(443, ingest.Probe{TLS: &ingest.TLS{
			Subject: &ingest.DN{CN: "FortiGate"}, Issuer: &ingest.DN{CN: "R11", O: []string{"Let's Encrypt"}}}}), wantMatch{}},
		{"nmap's FortiSSH", &ingest.Service{Port: 22, Transport: "tcp", Detected: &ingest.Detected{By: "nmap", Service: "ssh", Product: "FortiSSH", Info: "protocol 2.0"}}, wantMatch{Vendor: "Fortinet"}},
		{"host checker cookie", svc(443, httpProbe("GET", "/", 200, "<title>Remote access</title>", "Set-Cookie", "HC_HMAC_VERSION_COOKIE=1")), wantMatch{Vendor: "Ivanti"}},
		{"the product's own redirect into its sign-in pages", svc(443, httpProbe("GET", "/", 302, "", "Location", "https://vpn.example.org/dana-na/auth/url_default/welcome.cgi")), wantMatch{Vendor: "Ivanti"}},
		{"sign-in page headers under /dana-na/", svc(443, httpProbe("GET", "/dana-na/auth/url_6/welcome.cgi", 200, "", "Expires", "-1", "Cache-Control", "no-store", "Pragma", "no-cache")), wantMatch{Vendor: "Ivanti"}},
		{"the same headers elsewhere", svc(443, httpProbe("GET", "/account/login", 200, "", "Expires", "-1", "Cache-Control", "no-store", "Pragma", "no-cache")), wantMatch{}},
		{"an SP's SAML redirect to a Connect Secure IdP", svc(443, httpProbe("GET", "/", 302, "", "Location", "https://extranet.example.org/dana-na/auth/saml-sso.cgi?SAMLRequest=fZJN&SigAlg=x")), wantMatch{}},
		{"netscaler gateway login redirect", svc(443, httpProbe("POST", "/cgi/login", 302, "", "Location", "/vpn/index.html", "Set-Cookie", "NSC_TASS=ffffffff; Path=/; Secure; HttpOnly")), wantMatch{Vendor: "Citrix"}},
		{"the same under a Server header naming NetScaler", svc(443, httpProbe("POST", "/cgi/login", 302, "", "Server", "NetScaler Gateway", "Location", "/vpn/index.html", "Set-Cookie", "NSC_TASS=ffffffff; Path=/; Secure; HttpOnly")), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkMatch(t, rules, tt.svc, tt.want) })
	}
}
