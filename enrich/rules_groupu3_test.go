package enrich

import (
	"strings"
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupU3Tells checks the group U3 tells (rules/15-citrix.yaml,
// 30-f5.yaml, 45-barracuda.yaml, 45-microsoft.yaml, 70-detected.yaml): the
// Barracuda NextGen (CloudGen) Firewall's block pages and SSL VPN redirect, the
// Web Filter's proxy token and redirect page, the WAF's padded 404, nmap's
// other Barracuda names, NetScaler's packet-engine error page and its kernel
// string in ntpd's system variable (with the release band), BIG-IP's blocking page with its f5 cookie,
// RD Web's page prologue, and look-alikes that must name no vendor.
func TestRules_GroupU3Tells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	type hdr = ingest.Header
	probe := headerProbe
	svc := tcpService
	tests := []struct {
		name   string
		svc    *ingest.Service
		vendor string
		band   string
	}{
		{"ngfirewall server header", svc(80, probe("GET", "/", 403, "", hdr{Name: "Server", Value: "Barracuda/NGFirewall"})), "Barracuda", ""},
		{"nextgen firewall block page", svc(80, probe("GET", "/", 200, "<table><tr><th>Barracuda NextGen Firewall:</th><td>blocked</td></tr></table>")), "Barracuda", ""},
		{"cloudgen firewall block page", svc(80, probe("GET", "/", 200, "<table><tr><th>Barracuda CloudGen Firewall:</th><td>blocked</td></tr></table>")), "Barracuda", ""},
		{"web filter via token", svc(80, probe("GET", "/", 200, "", hdr{Name: "Via", Value: "1.1 filter.example.org (http_scan_byf/3.5.16)"})), "Barracuda", ""},
		{"web filter redirect page", svc(80, probe("GET", "/", 200, "<html><body><p>Redirecting you to Barracuda Web Filter.</p></body></html>")), "Barracuda", ""},
		{"nextgen ssl vpn redirect", svc(443, probe("GET", "/", 302, "302 Moved Temporarily\n", hdr{Name: "Location", Value: "/portal/index.html"}, hdr{Name: "Content-Type", Value: "text/plain"})), "Barracuda", ""},
		{"waf 404 padding comment", svc(80, probe("GET", "/", 404, "The specified URL cannot be found<!--"+strings.Repeat("0123456789", 50)+"01234-->\r\n")), "Barracuda", ""},
		{"nmap nextgen firewall", &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{Product: "Barracuda NextGen Firewall SSL VPN"}}, "Barracuda", ""},
		{"netscaler error page with its number", svc(80, probe("GET", "/", 500, "<html><body><b>Http/1.1 Internal Server Error 43549</b></body> </html>")), "Citrix", ""},
		{"netscaler error page cut after the reason", svc(80, probe("GET", "/", 503, "<html><body><b>Http/1.1 Service Unavailable", hdr{Name: "Cache-Control", Value: "no-cache,no-store"})), "Citrix", ""},
		{"asm rejected page with its f5 cookie", svc(443, probe("OPTIONS", "/", 200, "<html><head><title>Request Rejected</title></head><body>Blocked.</body></html>", hdr{Name: "Set-Cookie", Value: "f5avraaaaaaaaaaaaaaaa=ABCDEF; HttpOnly; secure"})), "F5", ""},
		{"netscaler ntpd system variable", svc(123, ingest.Probe{Name: "nmap:ntp-info", Banner: &ingest.Banner{Received: ingest.TextBody("\n  version: ntpd 4.2.6p3-a (1)\n  processor: amd64\n  system: FreeBSD/8.4-NETSCALER-10.5\n")}}), "Citrix", "10.5.x"},
		{"ssl vpn totp page title", svc(443, probe("GET", "/", 200, "<html><head><title>/portal/totp.html</title></head></html>")), "Barracuda", ""},
		{"access gateway cyms server", svc(443, probe("GET", "/", 400, "", hdr{Name: "Server", Value: "Cyms-SecS v4.5"})), "Citrix", ""},
		{"tmui login page header", svc(443, probe("GET", "/tmui/login.jsp", 200, "<html></html>", hdr{Name: "F5-Login-Page", Value: "true"})), "F5", ""},
		{"icontrol realm", svc(443, probe("GET", "/iControl/iControlPortal.cgi", 401, "", hdr{Name: "WWW-Authenticate", Value: `Basic realm="iControl"`})), "F5", ""},
		{"rd web page prologue on another path", svc(443, probe("GET", "/remote/Pages/en-US/login.aspx", 200, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<?xml-stylesheet type=\"text/xsl\" href=\"../Site.xsl\"?>\n<?xml-stylesheet type=\"text/css\" href=\"../RenderFail.css\"?>\n")), "Microsoft", ""},
		{"gateway nsc_tmac cookie", svc(443, probe("GET", "/vpn/index.html", 200, "", hdr{Name: "Set-Cookie", Value: "NSC_TMAC=xyz;Path=/;Secure"})), "Citrix", ""},
		{"nuclei rdweb panel result", &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{Product: "nuclei:rdweb-panel"}}, "Microsoft", ""},
		{"nuclei f5 admin interface result", &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{Product: "nuclei:f5-admin-interface"}}, "F5", ""},
		{"nuclei barracuda panel result", &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{Product: "nuclei:barracuda-panel"}}, "Barracuda", ""},
		{"rd gateway cpe", &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{CPE: []string{"cpe:2.3:a:microsoft:remote_desktop_gateway:-:*:*:*:*:*:*:*"}}}, "Microsoft", ""},
		// look-alikes: name nothing
		{"the android remote desktop client's cpe", &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{CPE: []string{"cpe:2.3:a:microsoft:remote_desktop:*:*:*:*:android:*:*:*"}}}, "", ""},
		{"nuclei netscaler console (another product)", &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{Product: "nuclei:netscaler-console-panel"}}, "", ""},
		{"another xsl-styled page", svc(443, probe("GET", "/feed.xml", 200, "<?xml version=\"1.0\"?>\n<?xml-stylesheet type=\"text/xsl\" href=\"../Site.xsl\"?>\n<rss/>")), "", ""},
		{"a freebsd ntpd", svc(123, ingest.Probe{Name: "nmap:ntp-info", Banner: &ingest.Banner{Received: ingest.TextBody("\n  version: ntpd 4.2.8p15\n  system: FreeBSD/12.2-RELEASE-p4\n")}}), "", ""},
		{"a generic server's error page in upper case", svc(80, probe("GET", "/", 500, "<html><body><b>HTTP/1.1 Internal Server Error 500</b></body> </html>")), "", ""},
		{"another app's redirect to a portal", svc(80, probe("GET", "/", 302, "<a href=\"/portal/index.html\">moved</a>", hdr{Name: "Location", Value: "/portal/index.html"}, hdr{Name: "Content-Type", Value: "text/html"})), "", ""},
		{"a rejected page without the f5 cookie", svc(443, probe("GET", "/", 200, "<html><head><title>Request Rejected</title></head><body>No.</body></html>")), "", ""},
		{"nmap's barracuda embedded web server", &ingest.Service{Port: 80, Transport: "tcp", Detected: &ingest.Detected{Product: "Barracuda Embedded Web Server"}}, "", ""},
		{"a page that mentions the firewall in prose", svc(80, probe("GET", "/", 200, "<p>We deployed a Barracuda NextGen Firewall last year.</p>")), "", ""},
		{"a via naming another proxy", svc(80, probe("GET", "/", 200, "", hdr{Name: "Via", Value: "1.1 squid-barracuda.example.org (squid/4.13)"})), "", ""},
		{"real time logic's server", svc(80, probe("GET", "/", 200, "", hdr{Name: "Server", Value: "BarracudaServer.com (Posix)"})), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor, Band: tt.band})
		})
	}
}
