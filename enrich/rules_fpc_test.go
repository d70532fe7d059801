package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_FortinetPaloAltoCisco checks the group L tells of the
// FortiGate, GlobalProtect/PAN-OS and ASA/FTD rules (rules/10-*.yaml,
// rules/59-snmp.yaml) on responses shaped as their sources print them, and
// the look-alikes each tell must not name: a catch-all server answering a
// portal path with its index page, another product's JSON API envelope, a
// Java Web Start file, an identity provider's page naming the portal's
// SAML path, a SAML redirect without FortiOS's relay state.
func TestRules_FortinetPaloAltoCisco(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	probe := httpProbe
	banner := func(text string) ingest.Probe {
		return ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody(text)}}
	}
	tests := []struct {
		name, vendor, exact, band string
		probes                    []ingest.Probe
	}{
		// FortiOS
		{"fortios rest envelope", "Fortinet", "7.2.5", "7.2.x", []ingest.Probe{probe("GET", "/api/v2/monitor/system/status", 200,
			`{"http_method":"GET","results":{"model_name":"FortiGate"},"vdom":"root","path":"system","name":"status","status":"success","serial":"FGT60FTK2109ABCD","version":"v7.2.5","build":1517}`)}},
		{"fortios saml start redirect", "Fortinet", "", "", []ingest.Probe{probe("GET", "/remote/saml/start", 302, "",
			"Location", "https://idp.example.com/saml2?SAMLRequest=abc&RelayState=magic%3Dcd7e5d07eb24521e&SigAlg=x")}},
		{"fortios replacement message 500", "Fortinet", "", "", []ingest.Probe{probe("GET", "/", 500,
			`<html><head><style type="text/css">       html, body { margin: 0; padding: 0; font-family: Verdana, Arial, sans-serif; font-size: 10pt; background-color: #ffffff;}       h1, h2 { height: 82px; text-indent: -999em; margin: 0; padding: 0; margin: 0; }       div { margin: 0; padding: 0; }       div.header { background: url(data:image/png;base64,iVBORw0KGgo`)}},
		{"fortigate sysdescr with firmware", "Fortinet", "6.4.5", "6.4.x", []ingest.Probe{banner("FortiGate-60E v6.4.5,build1828,210217 (GA)")}},
		// GlobalProtect / PAN-OS
		{"pan-os nginx etag of the portal stylesheet", "Palo Alto Networks", "10.1.11", "10.1.x", []ingest.Probe{probe("GET", "/global-protect/portal/css/login.css", 200, "body{}",
			"Content-Type", "text/css", "ETag", `"6511f62d-1a2b"`)}},
		{"pan-os release after the scanners' tables", "Palo Alto Networks", "", "11.1.2-h4", []ingest.Probe{
			probe("GET", "/global-protect/login.esp", 200, "<title>GlobalProtect Portal</title>"),
			probe("GET", "/global-protect/portal/images/bg.png", 200, "", "Content-Type", "image/png", "Last-Modified", "Wed, 08 May 2024 10:00:00 GMT")}},
		{"pan-os day of several branches", "Palo Alto Networks", "", "10.2.8-h4,11.1.3", []ingest.Probe{probe("GET", "/global-protect/portal/images/bg.png", 200, "",
			"Content-Type", "image/png", "ETag", `"66425680-871bb"`)}},
		{"pan-os xml api system info", "Palo Alto Networks", "10.2.10-h9", "10.2.x", []ingest.Probe{probe("GET", "/api/?type=op&cmd=<show><system><info></info></system></show>", 200,
			`<response status="success"><result><system><hostname>fw1</hostname><model>PA-VM</model><serial>007954000000000</serial><sw-version>10.2.10-h9</sw-version></system></result></response>`)}},
		{"pan-os web interface login page", "Palo Alto Networks", "", "", []ingest.Probe{probe("GET", "/php/login.php", 200,
			`<script type="text/javascript">Pan.base.cookie.set("x","y");</script><!-- BEGIN PAN_FORM_CONTENT --><form></form>`)}},
		{"globalprotect saml acs answer", "Palo Alto Networks", "", "", []ingest.Probe{probe("POST", "/SAML20/SP/ACS", 200, "<html><body>Login Successful!</body></html>",
			"saml-username", "robin", "prelogin-cookie", "REDACTED", "saml-slo", "no", "saml-auth-status", "1")}},
		{"globalprotect jnlp login answer", "Palo Alto Networks", "", "", []ingest.Probe{probe("POST", "/ssl-vpn/login.esp", 200,
			"<?xml version=\"1.0\" encoding=\"utf-8\"?><jnlp><application-desc><argument>(null)</argument><argument>fbe029b085a605cb75c8c8b6ad27eab1</argument></application-desc></jnlp>")}},
		{"globalprotect prelogin on another path", "Palo Alto Networks", "", "", []ingest.Probe{probe("GET", "/", 200,
			"<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n<prelogin-response>\n<status>Success</status>\n<ccusername></ccusername>")}},
		// ASA / FTD
		{"asa win.js", "Cisco", "", "", []ingest.Probe{probe("GET", "/+CSCOE+/win.js", 200, "var CSCO_WebVPN = new Object();")}},
		{"asa bare sysdescr", "Cisco", "", "", []ingest.Probe{banner("Cisco Adaptive Security Appliance")}},
		{"ftd sysdescr", "Cisco", "6.2.0.4", "6.2.x", []ingest.Probe{banner("Cisco FirePOWER Threat Defense, Version 6.2.0.4 (Build 85), ASA Version 9.7(1)19")}},
		// look-alikes: nothing named
		{"catch-all server at a portal path", "", "", "", []ingest.Probe{probe("GET", "/global-protect/portal/images/bg.png", 200, "<!doctype html><div id=app></div>",
			"Content-Type", "text/html", "ETag", `"657ccc1c-2f1"`)}},
		{"another product's json envelope", "", "", "", []ingest.Probe{probe("GET", "/api/v2/status", 200,
			`{"status":"success","serial":"ABC1234567890","version":"v1.2.3","build":5}`)}},
		{"java web start file", "", "", "", []ingest.Probe{probe("GET", "/app.jnlp", 200,
			`<jnlp spec="1.0+" codebase="https://example.com/"><application-desc main-class="Main"><argument>(null)</argument><argument>0123456789abcdef0123456789abcdef</argument></application-desc></jnlp>`)}},
		{"idp page naming the acs path", "", "", "", []ingest.Probe{probe("POST", "/auth/realms/x/login-actions/authenticate", 200,
			`<FORM METHOD="POST" ACTION="https://vpn.example.com:443/SAML20/SP/ACS"><INPUT TYPE="HIDDEN" NAME="SAMLResponse" VALUE="PHN"></FORM>`)}},
		{"saml redirect without fortios relay state", "", "", "", []ingest.Probe{probe("GET", "/sso/start", 302, "",
			"Location", "https://idp.example.com/saml2?SAMLRequest=abc&RelayState=cd7e5d07eb24521e")}},
		{"ios sysdescr mentioning nothing of the asa", "", "", "", []ingest.Probe{banner("Cisco Adaptive Security Appliance Manager for IOS")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := ingest.Service{Port: 443, Transport: "tcp", Probes: tt.probes}
			checkMatch(t, rules, &svc, wantMatch{Vendor: tt.vendor, Version: tt.exact, Band: tt.band, StrictVersion: true, StrictBand: true})
		})
	}
}
