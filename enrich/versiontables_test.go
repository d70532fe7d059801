package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// The built-in version tells and tables over responses shaped as their
// sources print them: the BIG-IP login logo's ETag in both of Apache's
// forms and its Last-Modified (Bishop Fox bigip-scanner's examples, all
// 2022-03-28T06:04:20Z = 15.1.5.1), Ivanti's productversion field, the
// RouterOS page nuclei's extractor reads, and IIS's Server header.
func TestRules_VersionTables(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	probe := func(path string, status int, body string, headers ...string) ingest.Probe {
		p := ingest.Probe{Request: &ingest.Request{Method: "GET", Path: path}, Response: &ingest.Response{Status: status, Body: ingest.TextBody(body)}}
		for i := 0; i+1 < len(headers); i += 2 {
			p.Response.Headers = append(p.Response.Headers, ingest.Header{Name: headers[i], Value: headers[i+1]})
		}
		return p
	}
	tmui := probe("/tmui/login.jsp", 200, "<html><head><title>BIG-IP&reg;- Configuration Utility</title></head></html>")
	const logo = "/tmui/tmui/login/images/logo_f5.png"
	tests := []struct {
		name, vendor, exact, band string
		probes                    []ingest.Probe
	}{
		{"bigip etag in microseconds", "F5", "15.1.5.1", "15.1.x", []ingest.Probe{tmui, probe(logo, 200, "", "ETag", `"1fe7-5db411548c100"`)}},
		{"bigip etag in seconds", "F5", "15.1.5.1", "15.1.x", []ingest.Probe{tmui, probe(logo, 200, "", "ETag", `"6e1862414fe4"`)}},
		{"bigip last-modified", "F5", "15.1.5.1", "15.1.x", []ingest.Probe{tmui, probe(logo, 200, "", "Last-Modified", "Mon, 28 Mar 2022 06:04:20 GMT")}},
		{"bigip new logo", "F5", "16.1.2.2", "16.1.x", []ingest.Probe{tmui, probe("/tmui/tmui/login/images/logo_f5_new.png", 200, "", "Last-Modified", "Thu, 07 Apr 2022 20:27:36 GMT")}},
		{"bigip time in no row", "F5", "", "", []ingest.Probe{tmui, probe(logo, 200, "", "Last-Modified", "Mon, 28 Mar 2022 06:04:21 GMT")}},
		{"bigip etag of another file", "F5", "", "", []ingest.Probe{tmui, probe("/tmui/other.png", 200, "", "ETag", `"6e1862414fe4"`)}},
		{"ivanti productversion of a build in the table", "Ivanti", "22.7R2.1", "22.7.x", []ingest.Probe{probe("/dana-na/auth/url_admin/welcome.cgi?type=inter", 200,
			`<img src="welcome.cgi?p=logo"><input type="hidden" name="productversion" value="22.7.2.3191">`)}},
		{"ivanti productversion of a build in no row", "Ivanti", "", "22.7R2.x", []ingest.Probe{probe("/dana-na/auth/url_admin/welcome.cgi?type=inter", 200,
			`<img src="welcome.cgi?p=logo"><input type="hidden" name="productversion" value="22.7.2.3300">`)}},
		{"routeros webfig", "MikroTik", "6.49.7", "6.49.x", []ingest.Probe{probe("/", 200, "<title>RouterOS router configuration page</title><h1>RouterOS v6.49.7</h1>")}},
		{"routeros old page, leading v dropped", "MikroTik", "5.26", "5.26.x", []ingest.Probe{probe("/", 200,
			`<title>mikrotik routeros > administration</title><div class="top">mikrotik routeros v5.26 configuration page</div>`)}},
		{"globalprotect 10.1 from duckfez's rows", "Palo Alto Networks", "10.1.11", "10.1.x", []ingest.Probe{
			probe("/global-protect/login.esp", 200, `<link rel="stylesheet" href="/global-protect/portal/css/login.css">`),
			probe("/global-protect/portal/css/login.css", 200, "", "Last-Modified", "Mon, 25 Sep 2023 21:10:05 GMT")}},
		{"globalprotect day of several releases", "Palo Alto Networks", "", "10.2.x", []ingest.Probe{
			probe("/global-protect/login.esp", 200, `<link rel="stylesheet" href="/global-protect/portal/css/login.css">`),
			probe("/global-protect/portal/css/login.css", 200, "", "Last-Modified", "Fri, 19 Dec 2023 02:00:00 GMT")}},
		{"fortios login page hash", "Fortinet", "7.2.3", "7.2.x", []ingest.Probe{probe("/remote/login?lang=en", 200,
			`<html><head><script src="/97a9a8eadad35e7c450cd9aae0848ee7/js/legacy_theme_setup.js"></script></head><body>FortiToken clock drift detected</body></html>`)}},
		{"fortios unknown hash", "Fortinet", "", "", []ingest.Probe{probe("/remote/login?lang=en", 200,
			`<html><head><script src="/00a9a8eadad35e7c450cd9aae0848ee7/js/x.js"></script></head><body>FortiToken clock drift detected</body></html>`)}},
		{"rd gateway on iis 10", "Microsoft", "", "Windows Server 2016 or later", []ingest.Probe{{
			Request:  &ingest.Request{Method: "RDG_OUT_DATA", Path: "/remoteDesktopGateway/"},
			Response: &ingest.Response{Status: 401, Headers: []ingest.Header{{Name: "Server", Value: "Microsoft-IIS/10.0"}, {Name: "WWW-Authenticate", Value: "Negotiate"}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := ingest.Service{Port: 443, Transport: "tcp", Probes: tt.probes}
			fp, ok := rules.Match(&svc, nil)
			if !ok || fp.Vendor != tt.vendor {
				t.Fatalf("vendor %q (%v, rule %s), want %q", fp.Vendor, ok, fp.RuleID, tt.vendor)
			}
			if fp.ExactVersion != tt.exact || fp.VersionBand != tt.band {
				t.Errorf("rule %s: version %q band %q, want %q %q", fp.RuleID, fp.ExactVersion, fp.VersionBand, tt.exact, tt.band)
			}
		})
	}
}
