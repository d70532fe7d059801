package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_ServiceProbeAnswers checks 56-service-probes.yaml: answers that
// nmap's service probes record for the families' products are named when a
// capture holds the answer itself, and the generic answers beside them are
// not.
func TestRules_ServiceProbeAnswers(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	svc := func(ps ...ingest.Probe) *ingest.Service { return tcpService(443, ps...) }
	raw := func(text string) *ingest.Service { return rawAnswer(t, 443, text) }
	const date = "Date: Tue, 03 Mar 2026 10:00:00 GMT\r\n"
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"fortios ssl-vpn method error", svc(httpProbe("PROPFIND", "/", 501,
			"<HTML>\n<HEAD>\n<META http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\">\n</HEAD><BODY>HTTP_NOT_IMPLEMENTED<br></BODY></HTML>")),
			wantMatch{Vendor: "Fortinet", Rule: "probes-fortinet-fortigate"}},
		{"forticlient download portal", svc(httpProbe("GET", "/", 200, "<html><head><title><FortiClient Download Portal</title></head></html>")),
			wantMatch{Vendor: "Fortinet", Rule: "probes-fortinet-fortigate"}},
		{"check point smb appliance login", svc(httpProbe("GET", "/", 200, "<html><head><title>Check Point 1550 Appliance - Login</title></head></html>")),
			wantMatch{Vendor: "Check Point"}},
		{"svn foundation answering a non-http probe", raw("UNKNOWN 400 Bad Request\r\nServer: Check Point SVN foundation\r\n\r\n"),
			wantMatch{Vendor: "Check Point"}},
		{"netscaler error page", raw("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 66\r\nConnection: close\r\nCache-Control: no-cache,no-store\r\nPragma: no-cache\r\n\r\n<html><body><b>Http/1.1 Service Unavailable</b></body> </html>"),
			wantMatch{Vendor: "Citrix", Rule: "probes-citrix-netscaler"}},
		{"netscaler redirect", raw("HTTP/1.1 302 Object Moved\r\nLocation: https://gw.example.org/\r\nContent-Type: text/html\r\nCache-Control: private\r\nConnection: close\r\n\r\n<head><body> This object may be found <a HREF=\"https://gw.example.org/\">here</a> </body>"),
			wantMatch{Vendor: "Citrix", Rule: "probes-citrix-netscaler"}},
		{"instant virtual extranet", svc(httpProbe("GET", "/", 200, "<html><head><title>Instant Virtual Extranet</title></head></html>", "Content-Type", "text/html; charset=utf-8")),
			wantMatch{Vendor: "Juniper Networks", Rule: "juniper-secure-access"}},
		{"j-web httpd error", raw("HTTP/1.0 501 Not Implemented\r\nServer: HTTPD/1.0\r\n\r\n<html><a href=\"/\">Return to Web Management</a><hr><A HREF=\"http://www.juniper.net/support/\">HTTPD release 12.1X46-D10.2 built by builder</A></html>"),
			wantMatch{Vendor: "Juniper Networks"}},
		{"screenos admin realm", raw("HTTP/1.1 401 Unauthorized\r\n" + date + "Server: Virata-EmWeb/R6_0_1\r\nWWW-Authenticate: Basic realm=\"Administration Tools\"\r\n\r\n401 Unauthorized\r\n"),
			wantMatch{Vendor: "Juniper Networks"}},
		{"utm proxy block page", svc(httpProbe("GET", "/", 403, "<html><head><link href=\"http://passthrough.fw-notify.net/static/default.css\" rel=\"stylesheet\"></head></html>")),
			wantMatch{Vendor: "Sophos"}},
		{"fireware server header", raw("HTTP/1.1 200 OK\r\n" + date + "Server: WatchGuard\r\n\r\n"), wantMatch{Vendor: "WatchGuard"}},
		{"zld web configurator", raw("HTTP/1.1 200 OK\r\n" + date + "Server:  \r\nCache-Control: no-cache, private\r\nPragma: no-cache\r\nExpires: Mon, 16 Apr 1973 13:10:00 GMT\r\nContent-Type: text/html\r\n\r\n<title>USG40</title>"),
			wantMatch{Vendor: "Zyxel"}},
		{"barracuda waf 404", raw("HTTP/1.1 404 Not Found\r\nConnection: Close\r\nContent-Type: text/html\r\n\r\nThe specified URL cannot be found<!--01234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789-->\r\n"),
			wantMatch{Vendor: "Barracuda"}},
		{"cloudgen ssl vpn redirect", raw("HTTP/1.0 302 Moved Temporarily\r\nContent-Length: 22\r\nConnection: close\r\nLocation: /portal/index.html\r\nContent-Type: text/plain\r\nX-Frame-Options: SAMEORIGIN\r\n\r\n302 Moved Temporarily\n"),
			wantMatch{Vendor: "Barracuda"}},
		// generic answers beside them
		{"an iis object moved page", raw("HTTP/1.1 302 Object moved\r\nLocation: /x\r\nServer: Microsoft-IIS/10.0\r\n\r\n<head><title>Object moved</title></head><body><h1>Object Moved</h1>This object may be found <a HREF=\"/x\">here</a>.</body>"),
			wantMatch{}},
		{"a plain 503", raw("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/html\r\n\r\n<html><body><h1>503 Service Unavailable</h1></body></html>"), wantMatch{}},
		{"a portal redirect elsewhere", raw("HTTP/1.1 302 Found\r\nLocation: /portal/index.html\r\nServer: nginx\r\n\r\n"), wantMatch{}},
		{"a zld look-alike without the expiry", raw("HTTP/1.1 200 OK\r\n" + date + "Cache-Control: no-cache, private\r\nExpires: 0\r\n\r\n"), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, tt.want)
		})
	}
}

// TestRules_SearchQueryTells checks tells taken from the search queries in
// nuclei templates' metadata (the favicon and titles Shodan is asked for).
func TestRules_SearchQueryTells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	mmh3 := int32(873381299)
	tests := []struct {
		name string
		p    ingest.Probe
		want wantMatch
	}{
		{"pan-os management favicon", ingest.Probe{Request: &ingest.Request{Method: "GET", Path: "/favicon.ico"},
			Response: &ingest.Response{Status: 200, Body: &ingest.Body{MMH3: &mmh3}}}, wantMatch{Vendor: "Palo Alto Networks"}},
		{"snx start page", httpProbe("GET", "/", 200, "<html><head><title>Check Point SSL Network Extender</title></head></html>"), wantMatch{Vendor: "Check Point"}},
		{"softether admin title", httpProbe("GET", "/", 200, "<html><head><title>SoftEther VPN Server - Web Admin</title></head></html>"), wantMatch{Vendor: "SoftEther"}},
		{"sonicos 7 login title", httpProbe("GET", "/", 200, "<html><head><title>SonicWall Network Security Login</title></head></html>"), wantMatch{Vendor: "SonicWall"}},
		{"utm webadmin scripts", httpProbe("GET", "/", 200, `<html><head><script src="wfe/asg/js/app_selector.js?t=1700000000" type="text/javascript"></script></head></html>`), wantMatch{Vendor: "Sophos"}},
		{"another extender", httpProbe("GET", "/", 200, "<html><head><title>SSL Network Extender for Linux - install guide</title></head></html>", "Server", "nginx"), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tcpService(443, tt.p), tt.want)
		})
	}
}

// TestRules_RecogSysDescrForms checks the sysDescr forms Recog's
// snmp_sysdescr.xml examples show that the rules had not read: IPSO's
// model-first BUILD form, the SRX's bare model, SonicOSX and the old
// SonicWALL firmware's CPU-and-model form.
func TestRules_RecogSysDescrForms(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sysDescr string
		want     wantMatch
	}{
		{"IP300 rev A02, IPSO b7dc-cimip350-02 3.7.1-BUILD004 releng 1227 11.06.2003-010000 i386", wantMatch{Vendor: "Check Point"}},
		{"IPSO hostname 4.1-BUILD022 releng 1515  11.15.2006-180244 i386", wantMatch{Vendor: "Check Point"}},
		{"Juniper SRX240 Cluster", wantMatch{Vendor: "Juniper Networks"}},
		{"Juniper SRX 210H", wantMatch{Vendor: "Juniper Networks"}},
		// the IVE line under Juniper's name is Juniper's; under Pulse's, Ivanti's
		{"Juniper Networks,Inc,SA-2500,7.1R2 (build 18193)", wantMatch{Vendor: "Juniper Networks", Version: "7.1R2"}},
		{"Juniper Networks,Inc,MAG-4610,7.3R1:B2 (build 21317)", wantMatch{Vendor: "Juniper Networks"}},
		{"Pulse Secure, LLC,MAG-2600,8.0R14 (build 41869)", wantMatch{Vendor: "Ivanti", Version: "8.0R14"}},
		{"SonicWALL NSv 270 (SonicOSX 7.1.3-7015-R6965)", wantMatch{Vendor: "SonicWall", Version: "7.1.3-7015-R6965"}},
		{"SonicWALL StrongARM / 233 Mhz (PRO 200)", wantMatch{Vendor: "SonicWall"}},
		{"SonicWALL Toshiba / 133 Mhz (SOHO3)", wantMatch{Vendor: "SonicWall"}},
		// the same vendors' switches and routers name nothing
		{"Juniper EX4200-48PX Ethernet Switch", wantMatch{}},
		{"Juniper SRX-like lab box running Linux 5.10", wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.sysDescr, func(t *testing.T) {
			svc := &ingest.Service{Port: 161, Transport: "udp", Probes: []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.TextBody(tt.sysDescr)}}}}
			checkMatch(t, rules, svc, tt.want)
		})
	}
}

// TestRules_HuaweiUSGIsNotZyxel: Huawei's firewalls are named USG too
// (USG6000E, USG6530E); only Zyxel's model numbers name Zyxel.
func TestRules_HuaweiUSGIsNotZyxel(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"zyxel usg60 title", tcpService(443, httpProbe("GET", "/", 200, "<html><head><title>USG60</title></head></html>")), wantMatch{Vendor: "Zyxel"}},
		{"huawei usg6530e title", tcpService(443, httpProbe("GET", "/", 200, "<html><head><title>USG6530E</title></head></html>")), wantMatch{}},
		{"huawei usg by shodan", &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{By: "shodan", Product: "USG6000E"}}, wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkMatch(t, rules, tt.svc, tt.want) })
	}
}
