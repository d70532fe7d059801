package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_FrameworkImitationGuards checks the group AF1 classes of
// honeypot-tells (enrich/rules/01-conditions.yaml; docs/rules.md,
// "Imitations"): an appliance's answer names its vendor, and the same
// answer carrying one tell of a development server or a honeypot's clone
// names nothing. Each tell is tested alone, as it would show behind a
// proxy that drops the others: Werkzeug's Server header, its capitalised
// reason phrase, its redirect and error pages, Express's 404, Flask's
// signed session cookie, a recorded 200 with a Location header (medusa's
// Shodan clones), OpenSSL's test CA and NachoVPN's, and the default 404
// pages of Go, Python's http.server, aiohttp and Starlette on another probe
// of the service, and medusa's own framing of a cloned page. A record that gave no status keeps naming the vendor
// from a Location alone.
func TestRules_FrameworkImitationGuards(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	const bigipPage = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n    <title>BIG-IP&reg;&nbsp;- Redirect</title>\n</head>\n<body>\n<script>window.location=\"/tmui/login.jsp\";</script>\n</body>\n</html>"
	bigip := func(status int, reason, body string, headers ...string) *ingest.Service {
		h := append([]string{"Server", "BigIP", "Location", "/tmui/login.jsp"}, headers...)
		p := httpProbe("GET", "/", status, body, h...)
		p.Response.Reason = reason
		return tcpService(443, p)
	}
	const werkzeugRedirect = "<!doctype html>\n<html lang=en>\n<title>Redirecting...</title>\n<h1>Redirecting...</h1>\n<p>You should be redirected automatically to the target URL: <a href=\"/tmui/login.jsp\">/tmui/login.jsp</a>. If not, click the link.\n"
	const werkzeug403 = "<!doctype html>\n<html lang=en>\n<title>403 Forbidden</title>\n<h1>Forbidden</h1>\n<p>You don&#39;t have the permission to access the requested resource. It is either read-protected or not readable by the server.</p>\n"
	const expressCannotGet = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot GET /tmui/login.jsp</pre>\n</body>\n</html>\n"
	const flaskCookie = "session=eyJzdGVwIjoiaW5pdGlhbC1HRVQifQ.awnD9w.WRgjaWCiuLfUOWAUI1gMIEowBWQ; HttpOnly; Path=/"
	const jwtCookie = "token=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c; Path=/"
	gpPrelogin := func(headers ...string) *ingest.Service {
		h := append([]string{"Content-Type", "application/xml; charset=UTF-8", "Cache-Control", "no-store, no-cache, must-revalidate, post-check=0, pre-check=0", "Pragma", "no-cache"}, headers...)
		return tcpService(443, httpProbe("POST", "/global-protect/prelogin.esp", 200,
			"<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n<prelogin-response>\n<status>Success</status>\n<ccusername/>\n<autosubmit>false</autosubmit>\n<msg/>\n<newmsg/>\n<authentication-message>Enter login credentials</authentication-message>\n<username-label>Username</username-label>\n<password-label>Password</password-label>\n<panos-version>1</panos-version>\n<region>US</region>\n</prelogin-response>\n", h...))
	}
	withProbe := func(svc *ingest.Service, p ingest.Probe) *ingest.Service {
		svc.Probes = append(svc.Probes, p)
		return svc
	}
	const pythonError = "<!DOCTYPE HTML>\n<html lang=\"en\">\n    <head>\n        <meta charset=\"utf-8\">\n        <title>Error response</title>\n    </head>\n    <body>\n        <h1>Error response</h1>\n        <p>Error code: 404</p>\n        <p>Message: File not found.</p>\n        <p>Error code explanation: 404 - Nothing matches the given URI.</p>\n    </body>\n</html>\n"
	const fortiRoot = "<html><head><script language=\"JavaScript\">top.location=\"/remote/login\";\n</script></head><body></body></html>"
	withIssuer := func(svc *ingest.Service, issuer string) *ingest.Service {
		svc.Probes[0].TLS = &ingest.TLS{Subject: &ingest.DN{CN: "localhost"}, Issuer: &ingest.DN{CN: issuer}}
		return svc
	}
	cases := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"big-ip's redirect", bigip(302, "Found", bigipPage), wantMatch{Vendor: "F5"}},
		{"the same with Werkzeug's capitalised reason", bigip(302, "FOUND", bigipPage), wantMatch{}},
		{"the same with Werkzeug's redirect page", bigip(302, "Found", werkzeugRedirect), wantMatch{}},
		{"the same with Werkzeug's error page", bigip(302, "Found", werkzeug403), wantMatch{}},
		{"the same with Express's 404 page", bigip(302, "Found", expressCannotGet), wantMatch{}},
		{"the same with Flask's session cookie", bigip(302, "Found", bigipPage, "Set-Cookie", flaskCookie), wantMatch{}},
		{"a JWT cookie is not Flask's", bigip(302, "Found", bigipPage, "Set-Cookie", jwtCookie), wantMatch{Vendor: "F5"}},
		{"medusa's clone: the redirect served as a 200", bigip(200, "OK", bigipPage), wantMatch{}},
		{"a record without a status keeps its Location", bigip(0, "", bigipPage), wantMatch{Vendor: "F5"}},
		{"big-ip's redirect beside Go's 404 on another path", withProbe(bigip(302, "Found", bigipPage), httpProbe("GET", "/nope", 404, "404 page not found\n", "Content-Type", "text/plain; charset=utf-8")), wantMatch{}},
		{"beside http.server's error page", withProbe(bigip(302, "Found", bigipPage), httpProbe("GET", "/nope", 404, pythonError, "Content-Type", "text/html;charset=utf-8")), wantMatch{}},
		{"beside aiohttp's 404", withProbe(bigip(302, "Found", bigipPage), httpProbe("GET", "/nope", 404, "404: Not Found", "Content-Type", "text/plain; charset=utf-8")), wantMatch{}},
		{"beside starlette's 404", withProbe(bigip(302, "Found", bigipPage), httpProbe("GET", "/nope", 404, `{"detail":"Not Found"}`, "Content-Type", "application/json")), wantMatch{}},
		{"beside an appliance's own 404", withProbe(bigip(302, "Found", bigipPage), httpProbe("GET", "/nope", 404, "<html><body>Not Found</body></html>", "Content-Type", "text/html")), wantMatch{Vendor: "F5"}},
		{"a fortigate's root page", rawAnswer(t, 10443, "HTTP/1.1 200 OK\r\nDate: Tue, 03 Mar 2026 10:00:00 GMT\r\nServer: xxxxxxxx-xxxxx\r\nEtag: \"83-67a94180\"\r\nContent-Type: text/html\r\nContent-Length: 112\r\n\r\n"+fortiRoot), wantMatch{Vendor: "Fortinet"}},
		{"the same in medusa's framing", rawAnswer(t, 10443, "HTTP/1.0 200 OK\r\nConnection: close\r\nServer: xxxxxxxx-xxxxx\r\nEtag: \"83-67a94180\"\r\nContent-Type: text/html\r\nContent-length: 112\r\n\r\n"+fortiRoot), wantMatch{}},
		{"globalprotect prelogin", gpPrelogin(), wantMatch{Vendor: "Palo Alto Networks"}},
		{"the same from Werkzeug", gpPrelogin("Server", "Werkzeug/3.1.8 Python/3.11.7"), wantMatch{}},
		{"the same from aiohttp", gpPrelogin("Server", "Python/3.11 aiohttp/3.9.5"), wantMatch{}},
		{"the same over OpenSSL's test CA", withIssuer(gpPrelogin(), "OpenSSL Test CA"), wantMatch{}},
		{"the same over another CA", withIssuer(gpPrelogin(), "Example Corp Issuing CA"), wantMatch{Vendor: "Palo Alto Networks"}},
		{"the same over NachoVPN's CA", withIssuer(gpPrelogin(), "VPN Root CA"), wantMatch{}},
		{"an organisation's CA of that name", func() *ingest.Service {
			svc := withIssuer(gpPrelogin(), "VPN Root CA")
			svc.Probes[0].TLS.Issuer.O = []string{"Example Corp"}
			return svc
		}(), wantMatch{Vendor: "Palo Alto Networks"}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) { checkMatch(t, rules, tt.svc, tt.want) })
	}
}
