package enrich

import "testing"

// TestRules_AJ3Defaults checks the tells of 87-aj3-defaults.yaml (group
// AJ3: the vendors' default texts), each in the form the unit serves it,
// and the look-alikes that must name nothing: the same sentences written
// by other applications (a stub's "Access to this site has been blocked
// by the network administrator.", a web app's "Invalid username or
// password. Please re-enter your user information."), the ids or texts
// without the rest of the product's answer, and a copy on a generic
// Python server.
func TestRules_AJ3Defaults(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	page := func(path, body string, headers ...string) wantPage {
		return wantPage{path: path, body: body, headers: headers}
	}
	tests := []struct {
		name string
		page wantPage
		want wantMatch
	}{
		{"sonicos cfs block page", page("/", "<div id=\"alert_text\">\n    This site has been blocked by the network administrator.\n</div>\n<p>Block reason: <b>Adult/Mature Content</b></p>"), wantMatch{Vendor: "SonicWall"}},
		{"sonicos geo-ip block page", page("/", "<title>Geo-IP Filter Alert</title><div>This site has been blocked by the network administrator.</div>"), wantMatch{Vendor: "SonicWall", Rule: "aj3-sonicwall-block-page-sentence"}},
		{"sonicwall default cfs message", page("/", "Web Site blocked by SonicWALL Filter"), wantMatch{Vendor: "SonicWall", Rule: "aj3-sonicwall-block-page-sentence"}},
		{"ive sign-in form ids", page("/dana-na/auth/url_default/welcome.cgi", `<form id="frmLogin_4" name="frmLogin" action="login.cgi"><input id="btnSubmit_6" type="submit" name="btnSubmit"></form>`), wantMatch{Vendor: "Ivanti"}},
		{"ive secondary auth error", page("/", "Invalid secondary username or password. Please re-enter your user information"), wantMatch{Vendor: "Ivanti", Rule: "aj3-ivanti-signin-page-ids"}},
		{"ive sign-in error on its path", page("/dana-na/auth/url_3/login.cgi", "<td>Invalid username or password. Please re-enter your user information.</td>"), wantMatch{Vendor: "Ivanti", Rule: "aj3-ivanti-signin-page-ids"}},
		{"apm deny text", page("/", "Access was denied by the access policy. This may be due to a failure to meet access policy requirements."), wantMatch{Vendor: "F5", Rule: "aj3-f5-apm-deny-text"}},
		{"apm deny text on my.policy", page("/my.policy", "<td>Access was denied by the access policy.</td>"), wantMatch{Vendor: "F5", Rule: "aj3-f5-apm-deny-text"}},
		{"asa clientless portal", page("/+CSCOE+/portal.html", `<input id="unicorn_form_url" type="text"><span id="browse_text">Browse</span>`), wantMatch{Vendor: "Cisco", Rule: "aj3-cisco-asa-clientless-portal-ids"}},
		{"firebox deny message as text", page("/", "Response denied by WatchGuard HTTP Proxy"), wantMatch{Vendor: "WatchGuard", Rule: "aj3-watchguard-deny-message-text"}},
		{"pan-os av block page", page("/", "<html><head><title>Virus/Spyware Download Blocked</title></head></html>"), wantMatch{Vendor: "Palo Alto Networks", Rule: "aj3-paloalto-panos-av-block-page-title"}},
		{"fortigate av replacement message", page("/eicar.com.txt", "<h1>High Security Alert</h1>\n    <p>You are not permitted to download the file \"eicar.com.txt\" because it is infected with the virus \"EICAR_TEST_FILE\".</p>"), wantMatch{Vendor: "Fortinet"}},
		{"fortigate file block message", page("/get/1826586", "High security alert!!!\nYou are not permitted to download the file \"Let it Bleed.torrent\"."), wantMatch{Vendor: "Fortinet", Rule: "aj3-fortigate-av-replacement-message"}},
		{"barracuda web filter block text", page("/", "<p>The link you are accessing has been blocked by the Barracuda Web Filter</p>"), wantMatch{Vendor: "Barracuda", Rule: "aj3-barracuda-web-filter-block-text"}},

		{"stub block sentence", page("/", "<h1>This site is blocked!</h1><p>Access to this site has been blocked by the network administrator.</p>"), wantMatch{}},
		{"sonicwall sentence alone", page("/", "<p>This site has been blocked by the network administrator.</p>"), wantMatch{}},
		{"web app login error", page("/users/login", "<p class=\"error\">Invalid username or password. Please re-enter your user information.</p>"), wantMatch{}},
		{"ive form id alone", page("/", `<form id="frmLogin_4">`), wantMatch{}},
		{"apm first sentence elsewhere", page("/notes", "<li>Access was denied by the access policy.</li>"), wantMatch{}},
		{"asa address box id alone", page("/", `<input id="unicorn_form_url">`), wantMatch{}},
		{"firebox message quoted in prose", page("/waf", "<p>WatchGuard answers: Request denied by WatchGuard HTTP Proxy</p>"), wantMatch{}},
		{"download refusal of another site", page("/files", "<p>You are not permitted to download the file \"report.pdf\". Please sign in.</p>"), wantMatch{}},
		{"av title in an article", page("/blog", "<p>The title reads Virus/Spyware Download Blocked.</p>"), wantMatch{}},
		{"ive error page on a python server", page("/dana-na/auth/url_default/login.cgi", "Invalid secondary username or password. Please re-enter your user information", "Server", "SimpleHTTP/0.6 Python/3.11.4"), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := tcpService(443, httpProbe("GET", tt.page.path, 200, tt.page.body, tt.page.headers...))
			checkMatch(t, rules, svc, tt.want)
		})
	}
}

// wantPage is one answer of a table test: the path asked and the page and
// headers answered.
type wantPage struct {
	path, body string
	headers    []string
}
