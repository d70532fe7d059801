package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_NetScalerBigIPIvantiTells checks the group L tells of the NetScaler,
// BIG-IP and Ivanti rules (rules/15-citrix.yaml, 15-ivanti.yaml, 30-f5.yaml and
// their sysDescr rules in 59-snmp.yaml): version pages and APIs, error answers,
// SNMP, and the look-alikes that must name nothing.
func TestRules_NetScalerBigIPIvantiTells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	type hdr = ingest.Header
	probe := headerProbe
	web := func(p ingest.Probe) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{p}}
	}
	snmp := func(text string) *ingest.Service {
		return bannerService(161, "udp", text)
	}
	tests := []struct {
		name          string
		svc           *ingest.Service
		vendor        string
		version, band string
	}{
		{"netscaler epa nsversion", web(probe("GET", "/epa/epa.html", 200, `var nsversion="13,0,58,32";`)), "Citrix", "13.0-58.32", ""},
		{"netscaler plugin list before 13.0-71", web(probe("GET", "/vpn/pluginlist.xml", 200, `<plugin name="Netscaler Gateway EPA plug-in for Windows (32 bit)" version="13.0.64.35" path="/epa/scripts/win/nsepa_setup.exe"/>`)), "Citrix", "13.0-64.35", ""},
		// from 13.0-71.40 the EPA plug-in has its own version: Citrix, no version
		{"netscaler plugin list after the split", web(probe("GET", "/vpn/pluginlist.xml", 200, `<plugin name="Netscaler Gateway EPA plug-in for Windows (32 bit)" version="23.5.1.3" path="/epa/scripts/win/nsepa_setup.exe"/>`)), "Citrix", "", ""},
		{"netscaler 13.0 plug-in of build 79 gives no version", web(probe("GET", "/vpn/pluginlist.xml", 200, `version="13.0.79.64" path="/epa/scripts/win/nsepa_setup.exe"`)), "Citrix", "", ""},
		{"netscaler soap wsdl", web(probe("GET", "/api/NSConfig.wsdl", 200, "<!--  #NS9.3 Build 58.5  -->")), "Citrix", "9.3-58.5", ""},
		{"nitro nsversion", web(probe("GET", "/nitro/v1/config/nsversion", 200, `{ "errorcode": 0, "message": "Done", "severity": "NONE", "nsversion": { "version": "NetScaler NS13.1: Build 37.38.nc, Date: Nov 23 2022, 04:42:36   (64-bit)", "mode": "1" } }`)), "Citrix", "13.1-37.38", ""},
		{"saml login error", web(probe("POST", "/saml/login", 200, "<p>SAML Assertion verification failed; Please contact your administrator</p>")), "Citrix", "", ""},
		{"logon page last-modified of 13.1-49.13", web(probe("GET", "/logon/LogonPoint/tmindex.html", 200, `<title class="_ctxstxt_NetscalerGateway">NetScaler Gateway</title>`, hdr{Name: "Last-Modified", Value: "Mon, 10 Jul 2023 18:36:14 GMT"})), "Citrix", "13.1-49.13", ""},
		// the cache's number is not the firmware (it froze at 10.0, group Y2, and 14.1 documentation still
		// shows 9.3, group ZZ1): no band from it (TestRules_GroupZZ1 checks the band strictly)
		{"ns-cache via", web(probe("GET", "/", 200, "", hdr{Name: "Via", Value: "NS-CACHE-10.0:  4"})), "Citrix", "", ""},
		{"ns-cache via of 9.3", web(probe("GET", "/", 200, "", hdr{Name: "Via", Value: "NS-CACHE-9.3"})), "Citrix", "", ""},
		{"mitigated vpns 403", web(probe("GET", "/vpn/../vpns/", 403, "<p>You don't have permission to access /vpns/\non this server.</p>")), "Citrix", "", ""},
		{"nfactor authentication answer", web(probe("POST", "/nf/auth/getAuthenticationRequirements.do", 200, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><AuthenticateResponse xmlns="http://citrix.com/authentication/response/1"><Status>success</Status><Result>more-info</Result>`)), "Citrix", "", ""},
		{"vpn error cookie", web(probe("POST", "/cgi/login", 302, "", hdr{Name: "Set-Cookie", Value: "NSC_VPNERR=4001;Path=/;Secure"})), "Citrix", "", ""},
		{"receiver for web header", web(probe("GET", "/Citrix/StoreWeb/", 200, "", hdr{Name: "X-Citrix-Application", Value: "Receiver for Web"})), "Citrix", "", ""},
		{"netscaler snmp", snmp("NetScaler NS12.0: Build 53.22.nc, Date: Dec 10 2017, 04:46:16"), "Citrix", "12.0-53.22", ""},
		{"icontrol rest 401", web(probe("GET", "/mgmt/tm/sys/version", 401, `{"code":401,"message":"Authorization failed: no user authentication header or token detected. Uri:http://localhost:8100/mgmt/tm/sys/version Referrer:192.0.2.1 Sender:192.0.2.1","referer":"192.0.2.1","restOperationId":1,"kind":":resterrorresponse"}`)), "F5", "", ""},
		{"icontrol rest realm", web(probe("GET", "/mgmt/tm/ltm", 401, "", hdr{Name: "WWW-Authenticate", Value: `Basic realm="Enterprise Manager"`})), "F5", "", ""},
		{"icontrol selflink version", web(probe("GET", "/mgmt/tm/ltm", 200, `{"kind":"tm:ltm:ltmcollectionstate","selfLink":"https://localhost/mgmt/tm/ltm?ver=13.0.0","items":[]}`)), "F5", "13.0.0", ""},
		{"apm webtop redirect", web(probe("GET", "/", 302, "", hdr{Name: "Location", Value: "/vdesk/webtop.eui?webtop=/Common/wt&webtop_type=webtop_full"})), "F5", "", ""},
		{"bigip snmp", snmp("BIG-IP Virtual Edition : Linux 3.10.0-862.14.4.el7.ve.x86_64 : BIG-IP software release 15.1.5.1, build 0.0.14"), "F5", "15.1.5.1", ""},
		{"ivanti snmp", snmp("Pulse Secure, LLC,Ivanti Connect Secure,ISA-V,22.3R1 (build 1647)"), "Ivanti", "22.3R1", ""},
		{"ivanti productversion in the build table", web(probe("GET", "/dana-na/auth/url_admin/welcome.cgi?type=inter", 200, `<input type="hidden" name="productversion" value="22.7.2.3981">`)), "Ivanti", "22.7R2.6", ""},
		{"ivanti productversion of an unknown build", web(probe("GET", "/dana-na/auth/url_admin/welcome.cgi?type=inter", 200, `<input type="hidden" name="productversion" value="22.7.2.3601">`)), "Ivanti", "", "22.7R2.x"},
		{"ivanti productversion of a known build", web(probe("GET", "/dana-na/auth/url_admin/welcome.cgi?type=inter", 200, `<input type="hidden" name="productversion" value="22.7.2.3597">`)), "Ivanti", "22.7R2.4", ""},
		{"ivanti host checker launcher", web(probe("GET", "/dana-cached/hc/hc_launcher.22.7.2.3431.jar", 200, "PK\x03\x04\x14\x00")), "Ivanti", "22.7R2.3", ""},
		{"ivanti host checker installer", web(probe("GET", "/dana-cached/hc/HostCheckerInstaller.osx", 200, "<key>version</key>\n<string>9.1.18.24467</string>")), "Ivanti", "9.1R18.2", ""},
		// look-alikes: name nothing
		{"stormshield sysdescr", snmp("NS-BSD SN160W<redacted> arm"), "", "", ""},
		{"linux sysdescr", snmp("Linux SOA1000 2.6.26.8 #62 SMP Mon Sep 21 18:13:37 CST 2009 i686 unknown"), "", "", ""},
		{"saved copy of the gateway page", web(probe("GET", "/", 200, `<title>NetScaler Gateway</title><script type="text/javascript" src="./index_files/gateway_login_view.js.download"></script>`)), "", "", ""},
		{"a 401 json of another api", web(probe("GET", "/mgmt/api", 401, `{"code":401,"message":"Authorization failed."}`)), "", "", ""},
		{"vpns 403 elsewhere", web(probe("GET", "/vpns/", 404, "<p>The requested URL /vpns/ was not found on this server.</p>")), "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// an exact version also carries its band; a band is checked when one is expected
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor, Version: tt.version, Band: tt.band, StrictVersion: true})
		})
	}
}
