package enrich

import (
	"strings"
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_EdgeVendorTells checks the group L tells of Check Point,
// SonicWall, Sophos, WatchGuard and Zyxel (management interfaces, block and
// API answers, other protocols' greetings) and that their look-alikes name
// nothing: pages that only link to or document an appliance, other vendors'
// USG firewalls.
func TestRules_EdgeVendorTells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	http := func(port int, path string, headers []ingest.Header, body string) *ingest.Service {
		resp := &ingest.Response{Status: 200, Headers: headers}
		// a redirect's Location comes with a 3xx: a 200 carrying one is how a
		// honeypot's clone of a redirect answers (location-on-success, group AF1)
		for _, h := range headers {
			if strings.EqualFold(h.Name, "Location") {
				resp.Status = 302
			}
		}
		if body != "" {
			resp.Body = ingest.TextBody(body)
		}
		return &ingest.Service{Port: port, Transport: "tcp", Probes: []ingest.Probe{{Request: &ingest.Request{Method: "GET", Path: path}, Response: resp}}}
	}
	banner := bannerService
	tests := []struct {
		name            string
		svc             *ingest.Service
		vendor, product string
		version         string
	}{
		{"gaia portal with version", http(443, "/", nil, `<TITLE>Gaia</TITLE><script>var version='R81.20';var formAction="/cgi-bin/home.tcl";</script>`), "Check Point", "Gaia", "R81.20"},
		{"gaia webui marker", http(443, "/", nil, `<meta name="others" content="WEBUI LOGIN PAGE"  /><TITLE>GAiA</TITLE>`), "Check Point", "Gaia", ""},
		{"fw-1 topology echo", &ingest.Service{Port: 264, Transport: "tcp", Probes: []ingest.Probe{{Banner: &ingest.Banner{Sent: ingest.BytesBody([]byte("A\x00\x00\x00\x02Y\x05!")), Received: ingest.BytesBody([]byte("A\x00\x00\x00"))}}}}, "Check Point", "FireWall-1", ""},
		{"fw-1 topology echo on another port", &ingest.Service{Port: 265, Transport: "tcp", Probes: []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.BytesBody([]byte("A\x00\x00\x00"))}}}}, "", "", ""},
		{"fw-1 topology securemote names", &ingest.Service{Port: 264, Transport: "tcp", Probes: []ingest.Probe{{Banner: &ingest.Banner{Sent: ingest.BytesBody([]byte("Q\x00\x00\x00\x00\x00\x00!\x00\x00\x00\x0bsecuremote\x00")), Received: ingest.BytesBody([]byte("Y\x00\x00\x00\x00\x00\x00\x2fCN=gw01,O=mgmt01.example.com.abcd12\x00"))}}}}, "Check Point", "FireWall-1", ""},
		{"fw-1 secure smtp", banner(25, "tcp", "220 CheckPoint FireWall-1 secure ESMTP server\r\n"), "Check Point", "FireWall-1", ""},
		{"fw-1 http security server 401", &ingest.Service{Port: 80, Transport: "tcp", Probes: []ingest.Probe{{Request: &ingest.Request{Method: "GET", Path: "/"}, Response: &ingest.Response{Status: 401, Body: ingest.TextBody("FW-1 at gw01: Unauthorized to access the document.")}}}}, "Check Point", "FireWall-1", ""},
		{"fw-1 client auth redirect", http(80, "/", []ingest.Header{{Name: "Location", Value: "http://192.0.2.1:900/fwauthredirect192.0.2.10id1234"}}, ""), "Check Point", "FireWall-1", ""},
		{"smb gateway webui with version", http(443, "/", nil, "<form autocomplete=\"off\" method=\"post\" action=\"/platform.cgi?\" target=\"_top\">\n<input type=\"hidden\" name=\"thispage\" value=\"index.htm\">\n<div class=\"version_div\">R77.20.87</div>"), "Check Point", "Security Gateway (Embedded Gaia)", "R77.20.87"},
		{"snx start page", http(443, "/", nil, "<script src=\"cookies.js\"></script>\n<script>document.write(conn_html)</script>\n<HEAD>"), "Check Point", "Mobile Access", ""},
		{"cyberoam console noscript", http(443, "/corporate/webpages/login.jsp", nil, "<noscript><font class=\"arial12whitebold\">JavaScript must be enabled in order for you to use cyberoam admin console.</font></noscript>"), "Sophos", "Sophos Firewall", ""},
		{"sonicos 7 login", http(443, "/sonicui/7/login/", nil, "<title>SonicWall - Login</title>"), "SonicWall", "SonicOS SSL-VPN", ""},
		{"sonicos 7 redirect", http(80, "/", []ingest.Header{{Name: "Location", Value: "https://192.0.2.1/sonicui/7/login/"}}, ""), "SonicWall", "SonicOS SSL-VPN", ""},
		{"intranet link to a sonicwall", http(443, "/", nil, `<div class="card" data-name="SonicWall"><a href="https://fw.example.com:10443/sonicui/7/login/#/">Firewall</a></div>`), "", "", ""},
		{"sma snmp", banner(161, "udp", "SonicWall SMA 500v for ESXi (10.2.1.3-27sv)"), "SonicWall", "SMA", "10.2.1.3-27sv"},
		{"sra snmp sonicos ssl-vpn", banner(161, "udp", "SonicWALL SSL-VPN 2000 (SonicOS SSL-VPN 4.0.0.0-16sv)"), "SonicWall", "SMA", "4.0.0.0-16sv"},
		{"sma 1000 extraweb cookie", http(443, "/", []ingest.Header{{Name: "Set-Cookie", Value: "EXTRAWEB_STATE=x; path=/"}}, ""), "SonicWall", "SMA", ""},
		{"sonicwall email security smtp", banner(25, "tcp", "220 mx.example.com ESMTP SonicWall (10.0.4.2749)\r\n"), "SonicWall", "Email Security", "10.0.4.2749"},
		{"sophos utm webadmin on 4444", http(4444, "/", nil, "<title>WebAdmin</title> Sophos UTM ... Please login to WebAdmin"), "Sophos", "Sophos UTM", ""},
		{"sophos docs mentioning webadmin", http(443, "/nsg/sophos-utm/help", nil, "How to login to WebAdmin on your Sophos UTM"), "", "", ""},
		{"sophos utm help version", http(4444, "/help/en_US/Content/master/Welcome_Ohelp.htm", nil, `<span class="sophosversionL">9.712</span>`), "Sophos", "Sophos UTM", "9.712"},
		{"sfos controller session expired", http(443, "/userportal/Controller?mode=8700", nil, `{"status":"Session Expired"}`), "Sophos", "Sophos Firewall", ""},
		{"session expired elsewhere", http(443, "/api/Controller", nil, `{"status":"Session Expired"}`), "", "", ""},
		{"watchguard logon redirect script", http(443, "/", nil, `<script>var newloc = "/wgcgi.cgi?action=sslvpn_web_logon&fw_logon_type=status";</script>`), "WatchGuard", "Firebox", ""},
		{"page linking to a firebox logon", http(443, "/", nil, `VPN: <a href="https://vpn.example.com/wgcgi.cgi?action=sslvpn_web_logon">connect</a>`), "", "", ""},
		{"watchguard copyright off the portal", http(443, "/", nil, `<div>Copyright © 2024 WatchGuard Technologies, Inc. All rights reserved.</div>`), "", "", ""},
		{"watchguard hotspot redirect", http(80, "/", []ingest.Header{{Name: "Location", Value: "http://guest.example.com/auth.html?xtm=http://192.0.2.1:4106/wgcgi.cgi&action=hotspot_auth&ts=1344238620&sn=70AB02716F745&mac=9C:4E:36:30:2D:26&redirect=http://www.example.com/"}}, ""), "WatchGuard", "Firebox", ""},
		{"watchguard proxy deny", http(80, "/", nil, `<p class="red">Request denied by WatchGuard HTTP Proxy.</p>`), "WatchGuard", "Firebox", ""},
		{"zyxel product file", http(443, "/ext-js/app/common/zld_product_spec.js", nil, "ZLDSYSPARM_PRODUCT_NAME1=\"USG FLEX 200\";\nZLDCONFIG_CLOUD_HELP_VERSION=5.36.2;"), "Zyxel", "ZyWALL/USG", "5.36.2"},
		{"zyxel ztp handler", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{Request: &ingest.Request{Method: "POST", Path: "/ztp/cgi-bin/handler"}, Response: &ingest.Response{Status: 200, Body: ingest.TextBody(`{"result": "ok", "message": ""}`)}}}}, "Zyxel", "ZyWALL/USG", ""},
		{"zyxel atp sysdescr", banner(161, "udp", "ATP500"), "Zyxel", "ZyWALL/USG", ""},
		{"huawei usg sysdescr", banner(161, "udp", "Huawei Versatile Routing Platform\r\nSoftware Version: VRP (R) software, Version 5.30 USG6350 V100R001C20SPC700"), "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor, Product: tt.product, Version: tt.version, StrictVersion: true})
		})
	}
}
