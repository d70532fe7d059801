package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_FingerprintDBs checks the tells of 77-fingerprint-dbs.yaml (round
// AC3: the web-fingerprint databases kscan, dismap, TideFinger, ARL, fscan,
// Glass, chainreactors' fingers and Goby's rules, FingerprintHub v4), each
// in the form the appliance answers with, and the look-alikes that must
// name nothing: the same words outside the product's markup, the
// databases' loose keywords (a bare vendor word, a model number, a generic
// proxy header), another product's page with a like-named class, and
// honeypot habits the vendors' guards know.
func TestRules_FingerprintDBs(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	page := func(path, body string, headers ...string) *ingest.Service {
		return tcpService(443, httpProbe("GET", path, 200, body, headers...))
	}
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		// Cisco ASA
		{"asa http server name", tcpService(443, httpProbe("GET", "/", 401, "", "Server", "Adaptive Security Appliance HTTP/1.1")), wantMatch{Vendor: "Cisco", Rule: "fpdb-cisco-asa-http"}},
		{"asa network access form", page("/netaccess/loginuser.html", "<html><head><title>Cisco Systems, Inc. Network Access</title></head><body><FORM ACTION=\"/netaccess/redirect.html\">\n<INPUT type=hidden name=sid VALUE=\"1234\"></FORM></body></html>"), wantMatch{Vendor: "Cisco", Rule: "fpdb-cisco-asa-http"}},
		{"asa 5500-x meta", page("/", `<html><head><meta name="description" content="ASA&nbsp;5500-X"></head></html>`), wantMatch{Vendor: "Cisco", Rule: "fpdb-cisco-asa-http"}},
		// Citrix NetScaler
		{"netscaler appfw block page", page("/cgi-bin/x", "<html><head><title>Application Firewall Block Page</title></head><body><h1>Your request has been blocked by a security policy</h1></body></html>"), wantMatch{Vendor: "Citrix", Rule: "fpdb-citrix-netscaler-appfw"}},
		{"netscaler ns_af cookie", page("/", "<html></html>", "Set-Cookie", "ns_af=xRdRRzW2xtRBb4qYxh9c2+aqT58A000; path=/"), wantMatch{Vendor: "Citrix", Rule: "fpdb-citrix-netscaler-appfw"}},
		// F5
		{"bigip x-wa-info", page("/", "<html></html>", "X-WA-Info", "[S10101.C10821.A8424.RA0.G0.U80926520].[OT/html.OG/pages]"), wantMatch{Vendor: "F5", Rule: "fpdb-f5-bigip-webaccelerator"}},
		{"bigip x-pvinfo", page("/", "<html></html>", "X-PvInfo", "[S10201.C10821.A8424.RA0.G0.U80926520].[OT/html.OG/pages]"), wantMatch{Vendor: "F5", Rule: "fpdb-f5-bigip-webaccelerator"}},
		{"firepass uroam cookie", page("/", "<html></html>", "Set-Cookie", "uRoamTestCookie=TEST; path=/"), wantMatch{Vendor: "F5", Rule: "fpdb-f5-firepass-cookie"}},
		// Forcepoint
		{"ngfw user authentication form", page("/", `<form method="post"><div class="ngfwFormField"><input name="username"></div></form>`), wantMatch{Vendor: "Forcepoint", Rule: "fpdb-forcepoint-ngfw-auth"}},
		{"smc web start page", page("/", `<span id="software_name">NGFW Security Management Center</span>`), wantMatch{Vendor: "Forcepoint", Rule: "fpdb-forcepoint-smc-web"}},
		// Palo Alto
		{"globalprotect portal heading", page("/global-protect/login.esp", `<div id="heading">GlobalProtect Portal</div>`), wantMatch{Vendor: "Palo Alto Networks", Rule: "fpdb-paloalto-globalprotect-heading"}},
		// SonicWall
		{"sonicos login frameset", page("/auth.html", `<frameset><frame src="emptyView4.html" name="authTgtFrm" id="authTgtFrm" scrolling="no"></frameset>`), wantMatch{Vendor: "SonicWall", Rule: "fpdb-sonicwall-sonicos"}},
		{"sonicos gateway av block page", page("/", "<p>This request is blocked by the SonicWALL Gateway Anti-Virus Service.</p>"), wantMatch{Vendor: "SonicWall", Rule: "fpdb-sonicwall-sonicos"}},
		{"sma1000 aventail script", page("/__extraweb__login", `<script src="/__extraweb__/javascript/aventail.js"></script>`), wantMatch{Vendor: "SonicWall", Rule: "fpdb-sonicwall-sma1000-aventail"}},
		// Sophos
		{"utm webadmin script", page("/", `<script src="/wfe/asg/js/app.js?t=1234"></script>`), wantMatch{Vendor: "Sophos", Rule: "fpdb-sophos-utm"}},
		{"utm web protection block page", page("/", "<title>Blocked site</title><span class='logoSophosFooterFont'>Protected by</span>"), wantMatch{Vendor: "Sophos", Rule: "fpdb-sophos-utm"}},
		{"cyberoam footer", page("/corporate/webpages/login.jsp", `<a href="http://www.cyberoam.com" target="_blank">www.cyberoam.com</a>`), wantMatch{Vendor: "Sophos", Rule: "fpdb-sophos-cyberoam-footer"}},
		{"cyberoam ssl vpn portal form", page("/", `<form name="sslvpnuserportalloginform" method="post" action="/login.jsp">`), wantMatch{Vendor: "Sophos", Rule: "fpdb-sophos-cyberoam-footer"}},
		// WatchGuard
		{"firebox auth portal logo", tcpService(4100, httpProbe("GET", "/", 200, `<img src="./auth_portal/Default/logo.gif">`)), wantMatch{Vendor: "WatchGuard", Rule: "fpdb-watchguard-firebox"}},
		{"fireware xtm flash ui", page("/", `<embed src="WWUI.swf"><!-- Fireware XTM -->`), wantMatch{Vendor: "WatchGuard", Rule: "fpdb-watchguard-firebox"}},
		// Zyxel
		{"zld login model box", page("/", `<div class="model" id="model" name="model">USG60</div>`), wantMatch{Vendor: "Zyxel", Rule: "fpdb-zyxel-usg-model"}},
		{"zld login model box zywall", page("/", `<div class="model" id="model" name="model">ZyWALL USG 50</div>`), wantMatch{Vendor: "Zyxel", Rule: "fpdb-zyxel-usg-model"}},
		// Array AG
		{"array ag proxied link", page("/prx/000/http/intranet/", `<a href="/prx/000/http/intranet.example/home">Home</a>`), wantMatch{Vendor: "Array Networks", Rule: "fpdb-array-ag-proxy-links"}},
		// Juniper
		{"jweb srx heading", page("/", `<span class="jweb-title uppercase"> - srx650</span>`), wantMatch{Vendor: "Juniper Networks", Rule: "fpdb-juniper-jweb-srx"}},
		// Ivanti / Pulse
		{"ivanti last auth server script", page("/dana-na/auth/url_default/welcome.cgi", `<script src="/dana-na/auth/lastauthserverused.js"></script>`), wantMatch{Vendor: "Ivanti", Rule: "fpdb-ivanti-dana-assets"}},
		{"ivanti spacer image", page("/", `<img src="/dana-na/imgs/space.gif" width="1">`), wantMatch{Vendor: "Ivanti", Rule: "fpdb-ivanti-dana-assets"}},
		{"ivanti sign-in form action", page("/", `<form name="frmLogin" action="/dana-na/auth/url_default/login.cgi" method="POST">`), wantMatch{Vendor: "Ivanti", Rule: "fpdb-ivanti-dana-assets"}},
		{"ivanti ds.js", page("/dana-na/css/ds.js", "function GDocumentOnKeyDown(evt) {\n}"), wantMatch{Vendor: "Ivanti", Rule: "fpdb-ivanti-dana-assets"}},
		// Check Point
		{"connectra sign-in script", page("/sslvpn/Login/Login", `<script>if (document.loginForm.LaunchSWS.checked) { launch(); }</script>`), wantMatch{Vendor: "Check Point", Rule: "fpdb-checkpoint-mobile-access"}},
		{"ssl vpn portal logo", page("/sslvpn/Login/Login", `<img src="/sslvpn/login/images/companylogo.png"> &copy; Check Point Software Technologies Ltd.`), wantMatch{Vendor: "Check Point", Rule: "fpdb-checkpoint-mobile-access"}},
		// Barracuda
		{"load balancer cookie", page("/", "<html></html>", "Set-Cookie", "BARRACUDA_LB_COOKIE=10.0.0.1_80; path=/"), wantMatch{Vendor: "Barracuda", Rule: "fpdb-barracuda-lb-cookie"}},

		// look-alikes and loose keywords: nothing
		{"appfw words in an article", page("/blog/waf", "<title>Citrix WAF notes</title><p>the page titled Application Firewall Block Page</p>"), wantMatch{}},
		{"other cookie ending ns_af", page("/", "<html></html>", "Set-Cookie", "guns_af=1; path=/"), wantMatch{}},
		{"generic proxy via header", page("/", "<html></html>", "Via", "HTTP/1.1 forward.http.proxy:3128"), wantMatch{}},
		{"ivanti path named in prose", page("/kb/ivanti", "<p>Requests to /dana-na/auth/url_default/welcome.cgi were logged.</p>"), wantMatch{}},
		{"array path in prose", page("/kb/array", "<p>the AG rewrites links to /prx/000/http/host/ paths</p>"), wantMatch{}},
		{"jweb on an ex switch", page("/", `<span class="jweb-title uppercase"> - ex4200-48t</span>`), wantMatch{}},
		{"huawei usg model box", page("/", `<div class="model" id="model" name="model">USG6330</div>`), wantMatch{}},
		{"ostec firebox page", page("/", `<style>body { background-image: url('/icones/fundo_firebox.png'); }</style><!-- http://colorzilla.com/ -->`), wantMatch{}},
		{"vmware certificate in palo alto", tcpService(443, ingest.Probe{TLS: &ingest.TLS{Subject: &ingest.DN{CN: "VMware", O: []string{"VMware, Inc."}, OU: []string{"VMware"}, L: "Palo Alto", C: "US", DN: "C=US, L=Palo Alto, O=VMware, Inc., OU=VMware, CN=VMware"}}}), wantMatch{}},
		{"bare vendor word", page("/", "<p>We replaced our Fortinet and SonicWall boxes.</p>"), wantMatch{}},
		{"bare model number", page("/", "<p>USG60 and PA-500 price list</p>"), wantMatch{}},
		{"lb cookie of another name", page("/", "<html></html>", "Set-Cookie", "MY_BARRACUDA_LB_COOKIE_TEST=1; path=/"), wantMatch{}},
		{"wwui without fireware", page("/", `<embed src="WWUI.swf">`), wantMatch{}},
		{"checkpoint logo without the vendor", page("/", `<img src="/sslvpn/login/images/companylogo.png">`), wantMatch{}},
		{"squirrelmail login form", page("/src/login.php", `<INPUT TYPE=HIDDEN NAME="js_autodetect_results" VALUE="SMPREF_JS_OFF"><td align="right" class="arial12whitebold">Log on to:&nbsp; </td>`), wantMatch{}},
		{"ivanti copy on a python server", tcpService(443, httpProbe("GET", "/", 200, `<script src="/dana-na/auth/lastauthserverused.js"></script>`, "Server", "SimpleHTTP/0.6 Python/3.11.4")), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, tt.want)
		})
	}
}
