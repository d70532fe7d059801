package enrich

import (
	"fmt"
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_Names checks rules/88-names.yaml: a page titled with a product
// line's own name, or an HTTP realm naming it, names the vendor when no
// other rule knows the answer; a title about the product (an IT page, a
// vendor's site, an article), the vendor's other products and the
// imitations the vendor's other rules refuse name nothing.
func TestRules_Names(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	page := func(title string) string {
		return fmt.Sprintf("<html><head><title>%s</title></head><body></body></html>", title)
	}
	tests := []struct {
		name  string
		title string
		hdrs  []string
		want  wantMatch
	}{
		{"fortigate model", "FortiGate-100F", nil, wantMatch{Vendor: "Fortinet", Rule: "names-fortinet-fortigate"}},
		{"fortiproxy", "FortiProxy", nil, wantMatch{Vendor: "Fortinet"}},
		{"fortios with its release", "FortiOS v7.2.5", nil, wantMatch{Vendor: "Fortinet", Version: "7.2.5"}},
		{"globalprotect login", "GlobalProtect Login", nil, wantMatch{Vendor: "Palo Alto Networks", Rule: "names-paloalto-panos"}},
		{"firepower device manager", "Firepower Device Manager", nil, wantMatch{Vendor: "Cisco", Rule: "names-cisco-asa"}},
		{"pulse secure", "Pulse Secure", nil, wantMatch{Vendor: "Ivanti"}},
		{"citrix adc", "Citrix ADC", nil, wantMatch{Vendor: "Citrix"}},
		{"sonicwall virtual office", "SonicWall - Virtual Office", nil, wantMatch{Vendor: "SonicWall", Rule: "names-sonicwall-sma"}},
		{"sonicos with its release", "SonicOS 7.0.1-5050", nil, wantMatch{Vendor: "SonicWall", Rule: "names-sonicwall-sonicos", Version: "7.0.1-5050"}},
		{"check point mobile access", "Check Point Mobile Access", nil, wantMatch{Vendor: "Check Point"}},
		{"gaia portal", "Gaia Portal", nil, wantMatch{Vendor: "Check Point"}},
		{"j-web", "J-Web", nil, wantMatch{Vendor: "Juniper Networks"}},
		{"access server", "OpenVPN Access Server", nil, wantMatch{Vendor: "OpenVPN Inc."}},
		{"big-ip with its release", "BIG-IP 16.1.3", nil, wantMatch{Vendor: "F5", Version: "16.1.3"}},
		{"sophos console", "Sophos", nil, wantMatch{Vendor: "Sophos", Rule: "names-sophos"}},
		{"cyberoam", "Cyberoam SSL VPN Portal", nil, wantMatch{Vendor: "Sophos"}},
		{"firebox", "WatchGuard Firebox", nil, wantMatch{Vendor: "WatchGuard"}},
		{"zyxel atp", "Zyxel ATP200", nil, wantMatch{Vendor: "Zyxel"}},
		{"barracuda cloudgen", "Barracuda NextGen Firewall", nil, wantMatch{Vendor: "Barracuda"}},
		{"arrayos", "ArrayOS", nil, wantMatch{Vendor: "Array Networks"}},
		{"rd gateway", "Remote Desktop Gateway", nil, wantMatch{Vendor: "Microsoft"}},
		{"softether", "SoftEther VPN", nil, wantMatch{Vendor: "SoftEther"}},
		{"stonesoft", "Stonesoft", nil, wantMatch{Vendor: "Forcepoint"}},
		{"routeros", "RouterOS router configuration page", nil, wantMatch{Vendor: "MikroTik"}},
		{"a realm naming the product", "", []string{"WWW-Authenticate", `Basic realm="FortiGate"`}, wantMatch{Vendor: "Fortinet"}},
		{"an unquoted realm", "", []string{"WWW-Authenticate", `Basic realm=BIG-IP`}, wantMatch{Vendor: "F5"}},
		{"netscaler's configuration gui", "Citrix ADC - Configuration", nil, wantMatch{Vendor: "Citrix"}},
		{"check point mobile go", "Check Point Mobile GO", nil, wantMatch{Vendor: "Check Point"}},
		// pages about a product, the vendors' sites and other products
		{"an IT department's download page", "Download GlobalProtect", nil, wantMatch{}},
		{"a university's VPN page", "GlobalProtect VPN | IT Services", nil, wantMatch{}},
		{"a setup guide", "How to set up FortiClient with a FortiGate", nil, wantMatch{}},
		{"a vendor's product page", "FortiGate Next-Generation Firewall (NGFW)", nil, wantMatch{}},
		{"a vulnerability write-up", "CVE-2023-27997 in FortiOS SSL-VPN", nil, wantMatch{}},
		{"a vendor's site", "Sophos export compliance check", nil, wantMatch{}},
		{"another sophos product's page", "Sophos Web Appliance: Authentication Required", nil, wantMatch{}},
		{"the vendor's name alone", "Juniper Networks - Support", nil, wantMatch{}},
		{"a citrix hypervisor", "Welcome to Citrix XenServer 7.2.0", nil, wantMatch{}},
		{"a cisco phone", "Cisco IP Phone", nil, wantMatch{}},
		{"a checkpoint that is not the company", "Identity checkpoint", nil, wantMatch{}},
		{"barracudadrive", "BarracudaDrive", nil, wantMatch{}},
		// group X6: titles with words of their own are pages about the product
		{"an IT page titled for the vpn", "GlobalProtect VPN", nil, wantMatch{}},
		{"a departmental vpn page", "Pulse Secure Departmental VPN", nil, wantMatch{}},
		{"a blog article", "FortiGate SSL VPN configuration", nil, wantMatch{}},
		{"a device title with a host name and a model", "fw01.example.com - FortiGate-60F", nil, wantMatch{Vendor: "Fortinet"}},
		{"a device title with an entity", "BIG-IP&reg;- Redirect", nil, wantMatch{Vendor: "F5"}},
		{"a zyxel home router", "ZyXEL VMG1312-B10D", nil, wantMatch{}},
		// imitations the vendor's other rules refuse: FortiOS sends no Apache
		{"a fortigate title served by apache", "FortiGate", []string{"Server", "Apache/2.4.41 (Ubuntu)"}, wantMatch{}},
		{"a globalprotect title behind werkzeug", "GlobalProtect Login", []string{"Server", "Werkzeug/2.0.1 Python/3.9.7"}, wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := 200, page(tt.title)
			if tt.title == "" {
				status, body = 401, ""
			}
			checkMatch(t, rules, tcpService(443, httpProbe("GET", "/", status, body, tt.hdrs...)), tt.want)
		})
	}
}

// TestRules_Redirects checks rules/86-redirects.yaml: a root's redirect to
// a product's own login path names the product; generic paths, an SP's
// redirect to its IdP and a framework's redirect name nothing.
func TestRules_Redirects(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		status   int
		location string
		hdrs     []string
		want     wantMatch
	}{
		{"fortios ssl-vpn login", 302, "/remote/login?lang=en", nil, wantMatch{Vendor: "Fortinet", Rule: "redirect-fortinet-sslvpn"}},
		{"fortios ssl-vpn login on its port", 301, "https://vpn.example.com:10443/remote/login", nil, wantMatch{Vendor: "Fortinet"}},
		{"globalprotect portal page", 302, "/global-protect/portal/portal.esp", nil, wantMatch{Vendor: "Palo Alto Networks"}},
		{"sma 100 sign-in", 302, "https://vpn.example.com/cgi-bin/welcome", nil, wantMatch{Vendor: "SonicWall", Rule: "redirect-sonicwall-sma"}},
		{"sonicos virtual office", 302, "/sslvpnLogin.html", nil, wantMatch{Vendor: "SonicWall"}},
		{"firepass logon", 302, "/my.logon.php3?check=1", nil, wantMatch{Vendor: "F5"}},
		{"rd web access", 302, "/RDWeb/Pages/en-US/login.aspx", nil, wantMatch{Vendor: "Microsoft"}},
		{"rd web access root", 301, "https://rds.example.com/RDWeb/", nil, wantMatch{Vendor: "Microsoft"}},
		{"barracuda web interface", 302, "/cgi-mod/index.cgi", nil, wantMatch{Vendor: "Barracuda"}},
		{"a generic login path", 302, "/login", nil, wantMatch{}},
		{"a php application's login", 302, "/php/login.php", nil, wantMatch{}},
		{"an asp.net application's login", 302, "/Login/Login", nil, wantMatch{}},
		{"another path under /remote/", 302, "/remote/desktop/", nil, wantMatch{}},
		{"a page that is not a redirect", 200, "/remote/login", nil, wantMatch{}},
		{"an sp sending the browser to its idp", 302, "https://idp.example.com/remote/login?SAMLRequest=fVJNT8MwDL0j8R%2BqTdwmbSRB", nil, wantMatch{}},
		{"express's redirect", 302, "/remote/login", []string{"Content-Type", "text/plain; charset=utf-8"}, wantMatch{}},
		{"fortios redirect under apache", 302, "/remote/login", []string{"Server", "Apache"}, wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdrs := append([]string{"Location", tt.location}, tt.hdrs...)
			checkMatch(t, rules, tcpService(443, httpProbe("GET", "/", tt.status, "", hdrs...)), tt.want)
		})
	}
}

// TestRules_CheckPointICA checks the certificates Check Point's Internal
// CA issues (rules/20-checkpoint.yaml, checkpoint-ica-certificate).
func TestRules_CheckPointICA(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	cert := func(subjectCN, subjectO, issuerO string) *ingest.Service {
		return tcpService(443, ingest.Probe{TLS: &ingest.TLS{Subject: &ingest.DN{CN: subjectCN, O: []string{subjectO}}, Issuer: &ingest.DN{O: []string{issuerO}}}})
	}
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"a gateway's vpn certificate", cert("cluster1 VPN Certificate", "MGMT_server.checkpoint.com.ynrf8r", "MGMT_server.checkpoint.com.ynrf8r"), wantMatch{Vendor: "Check Point", Rule: "checkpoint-ica-certificate"}},
		{"an ica with an empty domain", cert("val01 VPN Certificate", "gefwm01..gnnxpz", "gefwm01..gnnxpz"), wantMatch{Vendor: "Check Point"}},
		{"only the issuer", cert("vpn.example.com", "Example Corp", "gefwm01..gnnxpz"), wantMatch{Vendor: "Check Point"}},
		{"another vpn's certificate", cert("Corp VPN Certificate", "Corp VPN", "Corp VPN"), wantMatch{}},
		{"a company whose name is a domain", cert("www.example.agency", "example.agency", "DigiCert Inc"), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkMatch(t, rules, tt.svc, tt.want) })
	}
}

// TestRules_GreetingsWithoutCode checks that a protocol greeting names its
// product whether the record keeps the reply code and line end or not:
// Recog's examples and people quoting a banner drop the "220 ", some
// scanners drop the CRLF.
func TestRules_GreetingsWithoutCode(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		port   int
		banner string
		vendor string
	}{
		{21, "220 Check Point FireWall-1 Secure FTP server running on host", "Check Point"},
		{21, "Check Point FireWall-1 Secure FTP server running on host", "Check Point"},
		{25, "220 CheckPoint FireWall-1 secure ESMTP server", "Check Point"},
		{25, "CheckPoint FireWall-1 secure SMTP server\r\n", "Check Point"},
		{21, "FTP Server (ZyWALL USG 20) [10.0.0.2]", "Zyxel"},
		{21, "example.com FTP server (MikroTik 6.18) ready", "MikroTik"},
		{25, "barracuda.example.com ESMTP (0a8d40ef45300cc1bd0f16ced5c9e6f1)", "Barracuda"},
		{161, "Juniper SRX", "Juniper Networks"},
		{161, "SNMPv2-MIB::sysDescr.0 = STRING: Juniper SRX240 Cluster", "Juniper Networks"},
		// other servers' greetings
		{21, "220 ProFTPD Server (Debian) [::ffff:192.0.2.1]", ""},
		{25, "220 mail.example.com ESMTP Postfix (Debian/GNU)", ""},
		{161, "Juniper Networks EX2500 10GbE Switch, SW Version 3.1R1.0", ""},
	}
	for _, tt := range tests {
		t.Run(tt.banner, func(t *testing.T) {
			svc := rawAnswer(t, tt.port, tt.banner)
			if tt.port == 161 {
				svc.Transport = "udp"
			}
			checkMatch(t, rules, svc, wantMatch{Vendor: tt.vendor})
		})
	}
}

// TestRules_RedirectsInThePage checks the same redirects written into a
// page (a meta refresh, a script's location) and that a form or asset on a
// product's path, which imitations copy with the page, names nothing.
func TestRules_RedirectsInThePage(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, body string
		want       wantMatch
	}{
		{"fortios meta refresh", `<meta http-equiv="refresh" content="0;URL=/remote/login">`, wantMatch{Vendor: "Fortinet", Rule: "redirect-fortinet-sslvpn"}},
		{"globalprotect script redirect", `<script>window.location="/global-protect/login.esp";</script>`, wantMatch{Vendor: "Palo Alto Networks"}},
		{"asa location.replace", `<script>document.location.replace("/+CSCOE+/logon.html")</script>`, wantMatch{Vendor: "Cisco"}},
		{"connect secure meta refresh", `<META HTTP-EQUIV="Refresh" CONTENT="0; URL=/dana-na/auth/url_default/welcome.cgi">`, wantMatch{Vendor: "Ivanti"}},
		{"netscaler logon point", `<script>window.location="/logon/LogonPoint/index.html"</script>`, wantMatch{Vendor: "Citrix"}},
		{"sma meta refresh", `<meta http-equiv="refresh" content="0; URL='/cgi-bin/welcome'">`, wantMatch{Vendor: "SonicWall"}},
		{"apm script redirect", `<script>top.location.href = "/my.policy";</script>`, wantMatch{Vendor: "F5"}},
		{"rd web meta refresh", `<meta http-equiv="refresh" content="0;URL=/RDWeb/Pages/">`, wantMatch{Vendor: "Microsoft"}},
		{"mobile access meta refresh", `<meta http-equiv="refresh" content="0;URL=/sslvpn/Login/Login">`, wantMatch{Vendor: "Check Point"}},
		{"sfos user portal", `<meta http-equiv="refresh" content="0;URL=/userportal/webpages/myaccount/login.jsp">`, wantMatch{Vendor: "Sophos"}},
		// another host's VPN, a link, a copied form or asset
		{"an IT page sending users to the VPN host", `<meta http-equiv="refresh" content="0;URL=https://vpn.example.edu/remote/login">`, wantMatch{}},
		{"a link to the login page", `<a href="/remote/login?lang=en">VPN</a>`, wantMatch{}},
		{"a copied login form", `<form action="/remote/logincheck" method="post">`, wantMatch{}},
		{"a copied stylesheet", `<link rel="stylesheet" href="/+CSCOU+/portal.css">`, wantMatch{}},
		{"a portal's logout redirect", `<script>window.location="/global-protect/logout.esp?code=6";</script>`, wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tcpService(443, httpProbe("GET", "/", 200, "<html><head>"+tt.body+"</head></html>")), tt.want)
		})
	}
}

// TestRules_ScannerVerdicts checks that a scanner's vulnerability verdict
// naming the product names its vendor (rules/88-names.yaml; group Y2:
// nmap's http-pulse_ssl_vpn result) and that a verdict about another
// product names nothing.
func TestRules_ScannerVerdicts(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		info string
		want wantMatch
	}{
		{"http-pulse_ssl_vpn: VULNERABLE: Pulse Secure SSL VPN file disclosure via specially crafted HTTP resource requests State: VULNERABLE", wantMatch{Vendor: "Ivanti"}},
		{"http-vuln-cve2019-19781: VULNERABLE: Citrix ADC Path Traversal State: VULNERABLE", wantMatch{Vendor: "Citrix"}},
		{"http-vuln-cve2014-2128: VULNERABLE: Cisco ASA SSL VPN Authentication Bypass Vulnerability", wantMatch{Vendor: "Cisco"}},
		{"http-vuln-cve2017-5638: VULNERABLE: Apache Struts Remote Code Execution Vulnerability", wantMatch{}},
		{"http-title: Pulse Secure documentation", wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.info, func(t *testing.T) {
			svc := &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{By: "nmap", Service: "https", Info: tt.info}}
			checkMatch(t, rules, svc, tt.want)
		})
	}
}

// TestRules_ASMSupportIDPage checks BIG-IP ASM's blocking page written in
// another language (group Y2): the support ID with the blocking response's
// headers names F5; the same sentence under a web server's headers does not.
func TestRules_ASMSupportIDPage(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	page := "<html><head><title>Permintaan Ditolak</title></head><body><h3>Berikut ini merupakan support ID anda: 18299292576537701275</h3></body></html>"
	asm := []string{"Cache-Control", "no-cache", "Connection", "close", "Content-Type", "text/html; charset=utf-8", "Pragma", "no-cache"}
	checkMatch(t, rules, tcpService(80, httpProbe("GET", "/", 200, page, asm...)), wantMatch{Vendor: "F5"})
	checkMatch(t, rules, tcpService(80, httpProbe("GET", "/", 200, page, append(asm, "Server", "nginx")...)), wantMatch{})
	checkMatch(t, rules, tcpService(80, httpProbe("GET", "/", 200, "<p>Your ticket number: 18299292576537701275</p>", asm...)), wantMatch{})
}

// TestRules_DetectedMikroTik checks RouterOS's services as nmap names
// them (group Y5), with the release, and that MikroTik's switch OS names
// nothing.
func TestRules_DetectedMikroTik(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		d    ingest.Detected
		want wantMatch
	}{
		{ingest.Detected{By: "nmap", Service: "ftp", Product: "MikroTik router ftpd", Version: "6.49.17"}, wantMatch{Vendor: "MikroTik", Version: "6.49.17"}},
		{ingest.Detected{By: "nmap", Service: "ftp", Info: "ftp-syst:\n  SYST: UNIX MikroTik 6.43.16"}, wantMatch{Vendor: "MikroTik", Version: "6.43.16"}},
		{ingest.Detected{By: "nmap", Service: "bandwidth-test", Product: "MikroTik bandwidth-test server"}, wantMatch{Vendor: "MikroTik"}},
		{ingest.Detected{By: "shodan", Product: "MikroTik RouterOS", Version: "7.15.3"}, wantMatch{Vendor: "MikroTik", Version: "7.15.3"}},
		{ingest.Detected{By: "shodan", Product: "Juniper Junos OS", Version: "21.4R3-S5"}, wantMatch{Vendor: "Juniper Networks"}},
		{ingest.Detected{By: "nmap", Service: "http", Product: "MikroTik RouterBoard 250GS httpd"}, wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.d.Product+tt.d.Info, func(t *testing.T) {
			d := tt.d
			checkMatch(t, rules, &ingest.Service{Port: 21, Transport: "tcp", Detected: &d}, tt.want)
		})
	}
}

// TestRules_VersionFromAnotherRule: a product named by its own tells with
// no version takes the version a later rule of the same vendor finds on
// the same evidence (the scanner's own identification), never another
// vendor's.
func TestRules_VersionFromAnotherRule(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	login := httpProbe("GET", "/remote/login", 200, "<html></html>", "Set-Cookie", "SVPNCOOKIE=; path=/")
	svc := tcpService(443, login)
	svc.Detected = &ingest.Detected{By: "shodan", Product: "FortiOS", Version: "7.2.5"}
	checkMatch(t, rules, svc, wantMatch{Vendor: "Fortinet", Rule: "fortinet-fortigate-sslvpn", Version: "7.2.5"})

	svc = tcpService(443, login)
	svc.Detected = &ingest.Detected{By: "nmap", Product: "Cisco ASA", Version: "9.8(2)"}
	checkMatch(t, rules, svc, wantMatch{Vendor: "Fortinet", StrictVersion: true})

	svc = tcpService(443, httpProbe("GET", "/global-protect/login.esp", 200, "<title>GlobalProtect Portal</title>"))
	svc.Detected = &ingest.Detected{By: "nmap", CPE: []string{"cpe:/o:paloaltonetworks:pan-os:10.2.4"}}
	checkMatch(t, rules, svc, wantMatch{Vendor: "Palo Alto Networks", Version: "10.2.4"})
}

// TestRules_FaviconMD5: a favicon known only by the MD5 a scanner
// published (Censys, nmap) reaches Recog's favicon database, and
// `body.md5` reads the published hash or the whole body's.
func TestRules_FaviconMD5(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	fav := func(md5 string) *ingest.Service {
		return tcpService(443, ingest.Probe{Name: "favicon", Request: &ingest.Request{Method: "GET", Path: "/favicon.ico"},
			Response: &ingest.Response{Body: &ingest.Body{MD5: md5}}})
	}
	// Recog favicons.xml: "Citrix NetScaler Gateway", "Cisco ASA (and other appliances)"
	checkMatch(t, rules, fav("4eaaa139063e6706d1b5d0eee833d47b"), wantMatch{Vendor: "Citrix"})
	checkMatch(t, rules, fav("0d835213afc36cc098b080784bc223a0"), wantMatch{Vendor: "Cisco"})
	checkMatch(t, rules, fav("00000000000000000000000000000000"), wantMatch{})

	doc := `version: 2
rules:
  - {id: m, vendor: Acme, product: Box, protocol_family: https, match: {body.md5: '^5d41402abc4b2a76b9719d911017c592$'}}
`
	rs, err := ParseRules([]byte(doc), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	checkMatch(t, rs, tcpService(80, httpProbe("GET", "/", 200, "hello")), wantMatch{Vendor: "Acme"})
	checkMatch(t, rs, fav("5d41402abc4b2a76b9719d911017c592"), wantMatch{Vendor: "Acme"})
	checkMatch(t, rs, tcpService(80, httpProbe("GET", "/", 200, "hello!")), wantMatch{})
}

// TestRules_StubPageNotACutExcerpt: honeypot-tells' stub-page (a login
// form of a few hundred bytes that loads nothing) does not refuse a page
// the record cut, as a write-up quoting the product's login form is.
func TestRules_StubPageNotACutExcerpt(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	form := `<html><body><f-icon class="ftnt-fortinet-grid icon-xl"></f-icon><form action="/logincheck" method="post"><input type="password" name="secretkey"></form></body></html>`
	cut := httpProbe("GET", "/login", 200, form)
	cut.Response.Body.Truncated = true
	checkMatch(t, rules, tcpService(443, cut), wantMatch{Vendor: "Fortinet"})
	checkMatch(t, rules, tcpService(443, httpProbe("GET", "/login", 200, form)), wantMatch{})
}

// TestRules_JunosDevices: Junos on Juniper's routers and switches names
// Juniper Networks with the release, after the SRX rules; another
// vendor's sysDescr that mentions Juniper names nothing.
func TestRules_JunosDevices(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	snmp := func(s string) *ingest.Service {
		return &ingest.Service{Port: 161, Transport: "udp", Probes: []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.TextBody(s)}}}}
	}
	checkMatch(t, rules, snmp("Juniper Networks, Inc. ex3400-48t Ethernet Switch, kernel JUNOS 15.1X53-D59.4, Build date: 2018-09-14 21:00:55 UTC"),
		wantMatch{Vendor: "Juniper Networks", Rule: "juniper-junos-device-snmp", Version: "15.1X53-D59.4"})
	checkMatch(t, rules, snmp("Juniper Networks, Inc. ex4200-24t internet router, kernel JUNOS 10.4R6.5 "), wantMatch{Vendor: "Juniper Networks", Version: "10.4R6.5"})
	checkMatch(t, rules, snmp("Juniper Networks, Inc. srx240h internet router, kernel JUNOS 12.1X44-D40.2"), wantMatch{Vendor: "Juniper Networks"})
	checkMatch(t, rules, snmp("Linux gw 5.10 #1 SMP (a Juniper Networks lab box)"), wantMatch{})
	cli := rawAnswer(t, 22, "Hostname: lab\r\nModel: mx240\r\nJUNOS Base OS boot [13.3R1.4]\r\n")
	checkMatch(t, rules, cli, wantMatch{Vendor: "Juniper Networks", Rule: "juniper-junos-device-cli", Version: "13.3R1.4"})
}
