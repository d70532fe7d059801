package enrich

import "testing"

// TestRules_AT7Endpoints checks group AT7's layer (99-at7-endpoints.yaml): a
// gateway's vendor-only endpoint named in a request and answered, as a quoted
// exchange (openconnect -v, curl -v, urllib3's debug line, a browser
// console's line); and what it must not name: a path alone, a 404, an answer
// without a Date header, a request line as a string literal, a mock, a
// scanner's dump, a sweep of two families' endpoints, a text kept on 22.
func TestRules_AT7Endpoints(t *testing.T) {
	var cases caseList
	const date = "Date: Tue, 12 Jan 2021 01:45:26 GMT\n"
	cases.add("openconnect -v against a pulse gateway", bannerCase(443, "tcp",
		"GET https://vpn.example.com/dana-na/auth/url_6/welcome.cgi\nConnected to HTTPS on vpn.example.com\nGot HTTP response: HTTP/1.1 200 OK\nContent-Type: text/html; charset=utf-8\n"+date),
		wantMatch{Vendor: "Ivanti", Rule: "at7-endpoint-answered-ivanti"})
	cases.add("curl -v against an f5 logon", bannerCase(443, "tcp",
		"> POST /my.policy HTTP/1.1\n> Host: vpn.example.com\n>\n< HTTP/1.1 302 Found\n< "+date),
		wantMatch{Vendor: "F5", Rule: "at7-endpoint-answered-f5"})
	cases.add("urllib3's debug line", bannerCase(443, "tcp",
		"DEBUG:urllib3.connectionpool:https://vpn.example.com:443 \"POST /remote/logincheck HTTP/1.1\" 200 None\n"),
		wantMatch{Vendor: "Fortinet", Rule: "at7-endpoint-answered-fortinet"})
	cases.add("a browser console's line", bannerCase(443, "tcp",
		"POST https://vpn.example.com/ssl-vpn/login.esp 401 (Unauthorized)\n"),
		wantMatch{Vendor: "Palo Alto Networks", Rule: "at7-endpoint-answered-globalprotect"})
	// look-alikes
	cases.add("a path alone", bannerCase(443, "tcp", "GET /dana-na/auth/url_default/welcome.cgi\n"+date), wantMatch{})
	cases.add("a 404 answer", bannerCase(443, "tcp",
		"GET https://www.example.com/dana-na/auth/url_6/welcome.cgi\nGot HTTP response: HTTP/1.1 404 Not Found\n"+date), wantMatch{})
	cases.add("an example exchange without a date", bannerCase(443, "tcp",
		"POST /dana-na/auth/url_default/login.cgi HTTP/1.1\nHost: vpn.example.com\n\nHTTP/1.1 302 Found\nLocation: /dana/home/index.cgi\n"), wantMatch{})
	cases.add("a request line as a string literal", bannerCase(443, "tcp",
		"req = \"GET /dana-na/auth/url_6/welcome.cgi HTTP/1.1\";\nHTTP/1.1 200 OK\n"+date), wantMatch{})
	cases.add("a mock server's test", bannerCase(443, "tcp",
		"def test_login(requests_mock):\n    GET https://vpn.example.com/dana-na/auth/url_6/welcome.cgi\nHTTP/1.1 200 OK\n"+date), wantMatch{})
	cases.add("a scanner's debug dump", bannerCase(443, "tcp",
		"[DBG] Dumped HTTP request for https://vpn.example.com/dana-na/auth/url_6/welcome.cgi\nGET /dana-na/auth/url_6/welcome.cgi HTTP/1.1\nHTTP/1.1 200 OK\n"+date), wantMatch{})
	cases.add("a sweep of two families' endpoints", bannerCase(443, "tcp",
		"GET https://vpn.example.com/remote/login\nGET https://vpn.example.com/dana-na/auth/url_6/welcome.cgi\nGot HTTP response: HTTP/1.1 200 OK\n"+date), wantMatch{})
	cases.add("kept on 22", bannerCase(22, "tcp",
		"GET https://vpn.example.com/dana-na/auth/url_6/welcome.cgi\nGot HTTP response: HTTP/1.1 200 OK\n"+date), wantMatch{})
	checkMatches(t, cases)
}
