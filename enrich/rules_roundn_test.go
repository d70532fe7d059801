package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// Tells added after group N: GlobalProtect's own 512/513 statuses, PAN-OS's
// URL Filtering block page, FortiOS's sorted REST envelope cut short; and
// the look-alikes they must not name.
func TestRules_RoundN(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	resp := func(path string, status int, reason string, headers ingest.Headers, body string) *ingest.Service {
		r := &ingest.Response{Status: status, Reason: reason, Headers: headers}
		if body != "" {
			r.Body = &ingest.Body{Data: body}
		}
		return &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{Request: &ingest.Request{Method: "POST", Path: path}, Response: r}}}
	}
	tests := []struct {
		name, vendor, rule string
		svc                *ingest.Service
	}{
		{"gp 513", "Palo Alto Networks", "paloalto-globalprotect", resp("/ssl-vpn/login.esp", 513, "Custom error", nil, "Invalid client certificate.")},
		{"gp 512", "Palo Alto Networks", "paloalto-globalprotect", resp("/global-protect/getconfig.esp", 512, "Custom error", nil, "")},
		{"512 other reason", "", "", resp("/", 512, "Whatever", nil, "")},
		{"block page", "Palo Alto Networks", "paloalto-panos-block-page", resp("/", 503, "", ingest.Headers{{Name: "P3P", Value: `CP="CAO PSA OUR"`}},
			"<html><head><title>Web Page Blocked</title></head><body><h1>Web Page Blocked</h1><p>Access to the web page you were trying to visit has been blocked in accordance with company policy. Please contact your system administrator if you believe this is in error.</p>")},
		{"other block page", "", "", resp("/", 403, "", nil, "<html><head><title>Web Page Blocked</title></head><body>This site is blocked by your administrator.</body></html>")},
		{"fortios sorted envelope", "Fortinet", "fortinet-fortios-api", resp("/api/v2/monitor/system/available-certificates", 200, "", nil,
			"{\n    \"action\": \"\",\n    \"build\": 1577,\n    \"http_method\": \"GET\",\n    \"name\": \"available-certificates\",\n    \"path\": \"system\",\n    \"results\": [")},
		{"other sorted json", "", "", resp("/api", 200, "", nil, "{\n  \"action\": \"list\",\n  \"build\": \"abc\",\n  \"http_method\": \"GET\"}")},
	}
	topo := &ingest.Service{Port: 264, Transport: "tcp", Probes: []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.BytesBody(
		[]byte("\x00\x00\x00$CN=examplegw00000001,O=MGNT..oo2u8w\x00\x00\x00\x00\x0c\x00\x00\x00\x05none\x00\x00\x00\x00\x06sslca\x00"))}}}}
	tests = append(tests, struct {
		name, vendor, rule string
		svc                *ingest.Service
	}{"fw1 topology", "Check Point", "checkpoint-firewall-1", topo})
	other := *topo
	other.Port = 8264
	tests = append(tests, struct {
		name, vendor, rule string
		svc                *ingest.Service
	}{"topology form on another port", "", "", &other})
	snmp := func(text string) *ingest.Service {
		return bannerService(161, "udp", text)
	}
	pan102 := &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{httpProbe("GET", "/php/login.php", 200,
		"<TITLE>Login</TITLE>\nwindow.Pan = window.Pan || {};\n<script src='js/lib/panos-panos-runtime.js?__version=1702717248'></script>\n<img src=\"/login/images/panw_new_logo_302_53.png\">")}}
	for _, c := range []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"pan-os 10.2 login page, dated by its scripts", pan102, wantMatch{Vendor: "Palo Alto Networks", Rule: "paloalto-globalprotect", Version: "10.2.7-h3"}},
		{"junos kernel line without a comma", snmp("Juniper Networks, Inc. srx3600 internet router, kernel JUNOS 12.1X46-D35.1 #0: 2015-05-14 23:47:27 UTC"), wantMatch{Vendor: "Juniper Networks", Version: "12.1X46-D35.1"}},
		{"citrix sd-wan", snmp("Citrix Virtual WAN Appliance"), wantMatch{Vendor: "Citrix", Rule: "citrix-sdwan-snmp"}},
		{"another wan appliance", snmp("Riverbed Virtual WAN Appliance"), wantMatch{}},
		// group P: honeypots' imitations under a web server's name the products never send, and two tells
		{"anyconnect imitation under apache", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{httpProbe("POST", "/", 200,
			`<?xml version="1.0" encoding="UTF-8"?><config-auth client="vpn" type="auth-request"><opaque>VPN</opaque></config-auth>`, "Server", "Apache")}}, wantMatch{}},
		{"anyconnect answer without a server header", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{httpProbe("POST", "/", 200,
			`<?xml version="1.0" encoding="UTF-8"?><config-auth client="vpn" type="auth-request"><opaque>VPN</opaque></config-auth>`, "X-Transcend-Version", "1")}}, wantMatch{Vendor: "Cisco"}},
		{"globalprotect imitation naming itself", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{httpProbe("POST", "/global-protect/login.esp", 200,
			`<html><head><title>GlobalProtect Portal</title></head></html>`, "Server", "PanOS/10.1.0")}}, wantMatch{}},
		{"globalprotect portal", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{httpProbe("GET", "/global-protect/login.esp", 200,
			`<html><head><title>GlobalProtect Portal</title></head></html>`)}}, wantMatch{Vendor: "Palo Alto Networks"}},
		{"tmui csp", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{httpProbe("GET", "/tmui/login.jsp", 200, "",
			"Content-Security-Policy", "default-src 'self'  'unsafe-inline' 'unsafe-eval' data: blob:; img-src 'self' data:  http://127.4.1.1 http://127.4.2.1")}}, wantMatch{Vendor: "F5"}},
		{"netscaler passwd", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{httpProbe("GET", "/vpn/../vpns/portal/x.xml", 200,
			"root:*:0:0:Charlie &:/root:/usr/bin/bash\nnsroot:*:0:0:Netscaler Root:/root:/netscaler/nssh\n", "Server", "Apache")}}, wantMatch{Vendor: "Citrix"}},
		{"fortigate login imitation under nginx", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{httpProbe("GET", "/remote/login", 200,
			"<html><title>SSL VPN</title><script>var fgt_lang = 1;</script>", "Server", "nginx/1.18.0", "Set-Cookie", "SVPNCOOKIE=; path=/")}}, wantMatch{}},
		{"fortigate login", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{httpProbe("GET", "/remote/login", 200,
			"<html><title>SSL VPN</title><script>var fgt_lang = 1;</script>", "Server", "xxxxxxxx-xxxxx", "Set-Cookie", "SVPNCOOKIE=; path=/")}}, wantMatch{Vendor: "Fortinet"}},
		{"other passwd", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{httpProbe("GET", "/etc/passwd", 200,
			"root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")}}, wantMatch{}},
	} {
		t.Run(c.name, func(t *testing.T) { checkMatch(t, rules, c.svc, c.want) })
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor, Rule: tt.rule})
		})
	}
}
