package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_VersionFormsY3 checks, per family, the forms in which scanners
// and people record the version of Citrix NetScaler, Ivanti Connect Secure,
// Cisco ASA/FTD, SonicWall, F5 BIG-IP, Sophos, Check Point and Zyxel
// (group Y3, docs/rules-sources.md "Group Y3: versions"): asset query
// strings, date and hash tables, version endpoints and API answers, SNMP
// sysDescr, CLI output and the scanner's own version fields and CPEs. Each
// case is built from the public example the section cites; the look-alike
// cases must not yield a version or a vendor.
func TestRules_VersionFormsY3(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	web := func(ps ...ingest.Probe) *ingest.Service { return tcpService(443, ps...) }
	text := bannerService
	det := func(product, version string, cpe ...string) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{By: "censys", Service: "https", Product: product, Version: version, CPE: cpe}}
	}
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		// Cisco ASA / FTD
		{"asa config-auth version", web(httpProbe("POST", "/", 200, `<?xml version="1.0" encoding="UTF-8"?><config-auth client="vpn" type="auth-request" aggregate-auth-version="2"><version who="sg">9.12(4)37</version></config-auth>`)), wantMatch{Vendor: "Cisco", Version: "9.12(4)37"}},
		{"asa snmp sysDescr", text(161, "udp", "Cisco Adaptive Security Appliance Version 9.8(4)32"), wantMatch{Vendor: "Cisco", Version: "9.8(4)32"}},
		{"asa show version", text(22, "tcp", "Cisco Adaptive Security Appliance Software Version 9.16(3)19\r\nSSP Operating System Version 2.10(1.162)\r\nDevice Manager Version 7.16(1)150\r\n"), wantMatch{Vendor: "Cisco", Version: "9.16(3)19"}},
		{"asa scanner version in parentheses", det("Cisco ASA", "9.8(2)"), wantMatch{Vendor: "Cisco", Version: "9.8(2)"}},
		{"asa scanner version dotted", det("Cisco Adaptive Security Appliance", "9.16.3.19"), wantMatch{Vendor: "Cisco", Version: "9.16(3)19"}},
		{"asa nvd cpe dotted", det("", "", "cpe:2.3:o:cisco:adaptive_security_appliance_software:9.16.3.19:*:*:*:*:*:*:*"), wantMatch{Vendor: "Cisco", Version: "9.16(3)19"}},
		{"ftd snmp sysDescr", text(161, "udp", "Cisco Firepower Threat Defense, Version 7.0.1 (Build 84), ASA Version 9.16(2)"), wantMatch{Vendor: "Cisco", Version: "7.0.1"}},
		{"ftd show version", text(22, "tcp", "-------------------[ ftd1 ]--------------------\r\nModel                     : Cisco Firepower Threat Defense for VMware (75) Version 6.6.0 (Build 90)\r\n"), wantMatch{Vendor: "Cisco", Version: "6.6.0"}},
		{"ftd nvd cpe", det("", "", "cpe:2.3:a:cisco:firepower_threat_defense:7.2.5:*:*:*:*:*:*:*"), wantMatch{Vendor: "Cisco", Version: "7.2.5"}},
		{"fdm systeminfo softwareVersion", web(httpProbe("GET", "/api/fdm/v6/operational/systeminfo/default", 200, `{"applianceUuid": "12345678-1234-1234-1234-123456789abc", "databaseInfo": {"buildVersion": "6.6.1", "softwareVersion": "6.6.1-91", "type": "databaseinfo"}, "softwareVersion": "6.6.1-91", "type": "SystemInformation", "links": {"self": "https://192.0.2.1/api/fdm/v6/operational/systeminfo/default"}}`)), wantMatch{Vendor: "Cisco", Version: "6.6.1"}},
		// Citrix NetScaler
		{"netscaler ?v= hash", web(httpProbe("GET", "/vpn/index.html", 200, `<html><head><title>NetScaler Gateway</title><link rel="stylesheet" href="/vpn/js/rdx/core/css/rdx.css?v=86b4b2567b05dff896aae46d6e0765bc" type="text/css"></head><body><div id="logonbelt-topshadow"></div></body></html>`, "Set-Cookie", "NSC_TEMP=xyz;Path=/;expires=Wednesday, 09-Nov-1999 23:12:40 GMT")), wantMatch{Vendor: "Citrix", Version: "13.0-36.27"}},
		{"netscaler last-modified", web(httpProbe("GET", "/vpn/index.html", 200, `<title>Citrix Gateway</title><link href="/vpn/js/rdx/core/css/rdx.css">`, "Last-Modified", "Mon, 10 Jul 2023 17:41:17 GMT")), wantMatch{Vendor: "Citrix", Version: "13.1-49.13"}},
		{"netscaler nitro nsversion", web(httpProbe("GET", "/nitro/v1/config/nsversion", 200, `{ "errorcode": 0, "message": "Done", "severity": "NONE", "nsversion": { "installedversion": false, "version": "NetScaler NS13.1: Build 49.13.nc, Date: Jul 10 2023, 10:00:59   (64-bit)", "mode": "1" } }`)), wantMatch{Vendor: "Citrix", Version: "13.1-49.13"}},
		{"netscaler snmp sysDescr", text(161, "udp", "NetScaler NS13.0: Build 85.15.nc, Date: Apr 14 2022, 07:51:06   (64-bit)"), wantMatch{Vendor: "Citrix", Version: "13.0-85.15"}},
		{"netscaler scanner version", det("Citrix NetScaler", "13.1-49.13"), wantMatch{Vendor: "Citrix", Version: "13.1-49.13"}},
		{"netscaler scanner version dotted", det("Citrix NetScaler Gateway", "13.1.49.13"), wantMatch{Vendor: "Citrix", Version: "13.1-49.13"}},
		{"netscaler show version", text(22, "tcp", "> show version\r\n\tNetScaler NS14.1: Build 12.35.nc, Date: Nov 21 2023, 07:18:40   (64-bit)\r\n Done\r\n"), wantMatch{Vendor: "Citrix", Version: "14.1-12.35"}},
		// Ivanti Connect Secure
		{"ics welcome productversion", web(httpProbe("GET", "/dana-na/auth/url_default/welcome.cgi", 200, `<input type="hidden" name="productversion" value="22.7.2.3191">`)), wantMatch{Vendor: "Ivanti", Version: "22.7R2.1"}},
		{"ics nc_gina_ver", web(httpProbe("GET", "/dana-na/nc/nc_gina_ver.txt", 200, `<PARAM NAME="ProductName" VALUE="NetworkConnect"><PARAM NAME="ProductVersion" VALUE="9.1.18.25581">`)), wantMatch{Vendor: "Ivanti", Version: "9.1R18.7"}},
		{"ics snmp sysDescr", text(161, "udp", "Ivanti Connect Secure,ISA6000,22.7R2.3 (build 3431)"), wantMatch{Vendor: "Ivanti", Version: "22.7R2.3"}},
		{"ics scanner release", det("Ivanti Connect Secure", "22.7R2.3"), wantMatch{Vendor: "Ivanti", Version: "22.7R2.3"}},
		{"ics scanner release with build", det("Ivanti Connect Secure", "22.7R2.3 (build 3431)"), wantMatch{Vendor: "Ivanti", Version: "22.7R2.3"}},
		{"ics nvd cpe", det("", "", "cpe:2.3:a:ivanti:connect_secure:22.7:r2.3:*:*:*:*:*:*"), wantMatch{Vendor: "Ivanti", Version: "22.7R2.3"}},
		// SonicWall
		{"sma100 login css", web(httpProbe("GET", "/cgi-bin/welcome", 200, `<link href="/themes/swl_login.10.2.1.1-19sv.css" rel="stylesheet">`)), wantMatch{Vendor: "SonicWall", Version: "10.2.1.1-19sv"}},
		{"sma1000 server header", web(httpProbe("GET", "/", 302, "", "Server", "SMA/12.4", "Location", "/workplace/access/home")), wantMatch{Vendor: "SonicWall", Band: "12.4.x"}},
		{"sonicos api version", web(httpProbe("GET", "/api/sonicos/version", 200, `{"model": "TZ 370", "firmware_version": "SonicOS 7.0.1-5035", "rom_version": "SonicROM 7.0.0.8"}`)), wantMatch{Vendor: "SonicWall", Version: "7.0.1-5035"}},
		{"sonicos snmp sysDescr", text(161, "udp", "SonicWALL NSA 2600 (SonicOS Enhanced 6.5.4.4-44n)"), wantMatch{Vendor: "SonicWall", Version: "6.5.4.4-44n"}},
		{"sonicos scanner version", det("SonicWall SonicOS", "6.5.4.4-44n"), wantMatch{Vendor: "SonicWall", Version: "6.5.4.4-44n"}},
		{"sonicos scanner version with R build", det("SonicWall SonicOS", "SonicOS 7.0.1-5035-R2917"), wantMatch{Vendor: "SonicWall", Version: "7.0.1-5035-R2917"}},
		{"sonicos nvd cpe", det("", "", "cpe:2.3:o:sonicwall:sonicos:7.0.1-5035:*:*:*:*:*:*:*"), wantMatch{Vendor: "SonicWall", Version: "7.0.1-5035"}},
		// F5 BIG-IP
		{"bigip icontrol selfLink", web(httpProbe("GET", "/mgmt/tm/sys", 200, `{"kind":"tm:sys:syscollectionstate","selfLink":"https://localhost/mgmt/tm/sys?ver=15.1.2.1"}`)), wantMatch{Vendor: "F5", Version: "15.1.2.1"}},
		{"bigip device-info", web(httpProbe("GET", "/mgmt/shared/identified-devices/config/device-info", 200, `{"baseMac":"00:0c:29:aa:bb:cc","hostname":"bigip1.example.com","machineId":"b7a0c3d2","address":"192.0.2.10","build":"0.0.3","product":"BIG-IP","platformMarketingName":"BIG-IP Virtual Edition","version":"13.1.0.2","edition":"Hotfix HF2","kind":"shared:resolver:device-groups:deviceinfostate","selfLink":"https://localhost/mgmt/shared/resolver/device-groups/dg/devices/b7a0c3d2"}`)), wantMatch{Vendor: "F5", Version: "13.1.0.2"}},
		{"bigip logo last-modified", web(httpProbe("GET", "/tmui/login.jsp", 200, `<title>BIG-IP&reg;- bigip1.example.com (192.0.2.10)</title><link rel="stylesheet" href="/tmui/tmui/login/login.css">`, "Server", "Apache"), httpProbe("GET", "/tmui/tmui/login/images/logo_f5.png", 200, "", "Server", "Apache", "Last-Modified", "Wed, 13 Apr 2022 07:45:50 GMT")), wantMatch{Vendor: "F5", Version: "17.0.0"}},
		{"bigip snmp sysDescr", text(161, "udp", "BIG-IP Virtual Edition : Linux 3.10.0-862.14.4.el7.ve.x86_64 : BIG-IP software release 15.1.2.1, build 0.0.10"), wantMatch{Vendor: "F5", Version: "15.1.2.1"}},
		{"bigip nvd cpe", det("", "", "cpe:2.3:a:f5:big-ip_access_policy_manager:16.1.3:*:*:*:*:*:*:*"), wantMatch{Vendor: "F5", Version: "16.1.3"}},
		// Sophos
		{"sfos ?ver=", web(httpProbe("GET", "/webconsole/webpages/login.jsp", 200, `<script>var uiLangToHTMLLangAttributeValueMapping = {};</script><script src="/javascript/validation/login.js?ver=18.5.3.408"></script>`)), wantMatch{Vendor: "Sophos", Version: "18.5.3.408"}},
		{"sfos asset hash", web(httpProbe("GET", "/webconsole/webpages/login.jsp", 200, `<script>var uiLangToHTMLLangAttributeValueMapping = {};</script><script src="/javascript/lib/jquery.js?version=077b68eec97ffaa545be811dc65cee99"></script><title>Sophos</title>`)), wantMatch{Vendor: "Sophos", Version: "20.0.0.222"}},
		{"sfos xml api APIVersion", web(httpProbe("GET", "/webconsole/APIController", 200, `<?xml version="1.0" encoding="UTF-8"?><Response APIVersion="1905.1" IPS_CAT_VER="1"><Login><status>Authentication Successful</status></Login></Response>`)), wantMatch{Vendor: "Sophos", Band: "19.5.x"}},
		{"sfos xml api APIVersion 20", web(httpProbe("GET", "/webconsole/APIController", 200, `<Response APIVersion="2000.1" IPS_CAT_VER="1"><Login><status>Authentication Failure</status></Login></Response>`)), wantMatch{Vendor: "Sophos", Band: "20.0.x"}},
		{"sfos snmp firmware", text(161, "udp", "SFOS-FIREWALL-MIB::sfosDeviceFWVersion.0 = STRING: SFOS 19.5.3 MR-3-Build652"), wantMatch{Vendor: "Sophos", Version: "19.5.3"}},
		{"utm webadmin version", web(httpProbe("GET", "/help/en_US/Content/master/index.htm", 200, `<title>WebAdmin</title><span class="sophosversionL">9.711</span>`)), wantMatch{Vendor: "Sophos", Version: "9.711"}},
		// Check Point
		{"gaia portal version", web(httpProbe("GET", "/cgi-bin/home.tcl", 200, `<meta name="others" content="WEBUI LOGIN PAGE" /><title>Gaia</title><script>var version='R81.10';var formAction="/cgi-bin/home.tcl";</script>`)), wantMatch{Vendor: "Check Point", Version: "R81.10"}},
		{"gaia clish show version", text(22, "tcp", "Product version Check Point Gaia R81.20\r\nOS build 631\r\nOS kernel version 3.10.0-957.21.3cpx86_64\r\nOS edition 64-bit\r\n"), wantMatch{Vendor: "Check Point", Version: "R81.20"}},
		{"checkpoint scanner version", det("Check Point Gaia", "R80.40"), wantMatch{Vendor: "Check Point", Version: "R80.40"}},
		{"checkpoint nvd cpe", det("", "", "cpe:2.3:o:checkpoint:gaia:r81.10:*:*:*:*:*:*:*"), wantMatch{Vendor: "Check Point", Version: "R81.10"}},
		// Zyxel
		{"zld firmware in page", web(httpProbe("GET", "/", 200, `<title>USG FLEX 100</title><div>Firmware Version: V5.30(ABUI.0)</div>`)), wantMatch{Vendor: "Zyxel", Version: "5.30"}},
		{"zld snmp sysSwVersionString", text(161, "udp", "SNMPv2-MIB::sysDescr.0 = STRING: USG60W\nZYXEL-ES-COMMON::sysSwVersionString.0 = STRING: \"V4.60(ABAW.0)\""), wantMatch{Vendor: "Zyxel", Version: "4.60"}},
		{"zld scanner version", det("Zyxel USG FLEX 100", "5.30"), wantMatch{Vendor: "Zyxel", Version: "5.30"}},
		{"zld nvd cpe", det("", "", "cpe:2.3:o:zyxel:usg_flex_100_firmware:5.30:*:*:*:*:*:*:*"), wantMatch{Vendor: "Zyxel", Version: "5.30"}},
		{"zld nvd cpe with patch", det("", "", `cpe:2.3:o:zyxel:zld_firmware:4.60\(abaw.0\):*:*:*:*:*:*:*`), wantMatch{Vendor: "Zyxel", Version: "4.60"}},
		{"bigip device-info kind first", web(httpProbe("GET", "/mgmt/shared/identified-devices/config/device-info", 200, `{"kind":"shared:resolver:device-groups:deviceinfostate","selfLink":"https://localhost/mgmt/shared/identified-devices/config/device-info","hostname":"test.local","version":"14.1.2","build":"0.0.5"}`)), wantMatch{Vendor: "F5", Version: "14.1.2"}},
		{"asa nmap http-cisco-anyconnect", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{Name: "nmap:http-cisco-anyconnect", Banner: &ingest.Banner{Received: ingest.TextBody("\n  version: 9.1(5)\n  tunnel-group: VPN\n  group-alias: vpn\n  config-hash: 7328433471719\n  host: vpn.example.com")}}}}, wantMatch{Vendor: "Cisco", Version: "9.1(5)"}},
		{"checkpoint svnVersion snmprec", text(161, "udp", "1.3.6.1.2.1.1.1.0|4|Linux hostname 3.10.0-957.21.3cpx86_64 #1 SMP Thu Jan 13 17:48:54 IST 2022 x86_64\n1.3.6.1.2.1.1.2.0|6|1.3.6.1.4.1.2620.1.6.123.1.70\n1.3.6.1.4.1.2620.1.6.4.1.0|4|R80.40"), wantMatch{Vendor: "Check Point", Version: "R80.40"}},
		{"checkpoint svnVersion net-snmp", text(161, "udp", "SNMPv2-SMI::enterprises.2620.1.6.123.1.49\nCHECKPOINT-MIB::svnVersion.0 = STRING: \"R80.10\""), wantMatch{Vendor: "Check Point", Version: "R80.10"}},
		{"bigip sysProductVersion snmprec", text(161, "udp", "1.3.6.1.2.1.1.1.0|4|Linux bigip1.lab 2.6.32-279.19.1.el6.f5.x86_64 #1 SMP Wed Mar 12 15:01:03 PDT 2014 x86_64\n1.3.6.1.2.1.1.2.0|6|1.3.6.1.4.1.3375.2.1.3.4.43\n1.3.6.1.4.1.3375.2.1.4.2.0|4|11.5.1"), wantMatch{Vendor: "F5", Version: "11.5.1"}},
		{"sfos sfosDeviceFWVersion snmprec", text(161, "udp", "1.3.6.1.2.1.1.1.0|4|Linux localhost 4.14.38 #2 SMP Fri Jun 5 23:03:53 UTC 2020 x86_64\n1.3.6.1.2.1.1.2.0|6|1.3.6.1.4.1.2604.5\n1.3.6.1.4.1.2604.5.1.1.3.0|4|18.0.1 MR-1-Build396"), wantMatch{Vendor: "Sophos", Version: "18.0.1"}},
		{"checkpoint kernel without svnVersion", text(161, "udp", "Linux hostname 2.6.18-92cpx86_64 #1 SMP Tue Sep 20 14:57:58 IDT 2016 x86_64"), wantMatch{Vendor: "Check Point", StrictVersion: true, StrictBand: true}},
		{"nuclei pulse-secure-version result", &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{By: "nuclei", Service: "http", Product: "nuclei:pulse-secure-version", Version: "9.1.18.25581", Info: "[pulse-secure-version] [http] [info] [9.1.18.25581]"}}, wantMatch{Vendor: "Ivanti", Version: "9.1R18.7"}},
		{"nuclei sophos-fw-version-detect result", &ingest.Service{Port: 4444, Transport: "tcp", Detected: &ingest.Detected{By: "nuclei", Service: "http", Product: "nuclei:sophos-fw-version-detect", Version: "18.5.3.408", Info: "[sophos-fw-version-detect] [http] [info] [18.5.3.408]"}}, wantMatch{Vendor: "Sophos", Version: "18.5.3.408"}},
		{"nuclei sophos-fw-version-detect hash result", &ingest.Service{Port: 4444, Transport: "tcp", Detected: &ingest.Detected{By: "nuclei", Service: "http", Product: "nuclei:sophos-fw-version-detect", Version: "077b68eec97ffaa545be811dc65cee99", Info: "[sophos-fw-version-detect] [http] [info] [077b68eec97ffaa545be811dc65cee99]"}}, wantMatch{Vendor: "Sophos", Version: "20.0.0.222"}},
		{"ics snmp productVersion", text(161, "udp", "SNMPv2-MIB::sysDescr.0 = STRING: Pulse Connect Secure\nPULSESECURE-PSG-MIB::productName.0 = STRING: \"Pulse Connect Secure,VA-SPE\"\nPULSESECURE-PSG-MIB::productVersion.0 = STRING: \"9.1R8\""), wantMatch{Vendor: "Ivanti", Version: "9.1R8"}},
		{"netscaler scanner version with Build", det("Citrix NetScaler", "13.1 Build 49.13"), wantMatch{Vendor: "Citrix", Version: "13.1-49.13"}},
		{"netscaler scanner version as nsversion prints it", det("Citrix ADC", "NetScaler NS13.0: Build 85.15.nc"), wantMatch{Vendor: "Citrix", Version: "13.0-85.15"}},
		// look-alikes: no version from another train or another key
		{"ftd release not read as asa", det("Cisco Firepower Threat Defense", "7.0.1"), wantMatch{Vendor: "Cisco", Version: "7.0.1"}},
		{"sfos 16.05 APIVersion gives no band", web(httpProbe("GET", "/webconsole/APIController", 200, `<Response APIVersion="1605.1"><Login><status>Authentication Successful</status></Login></Response>`)), wantMatch{Vendor: "Sophos", StrictVersion: true, StrictBand: true}},
		{"device-info restFrameworkVersion is not the version", web(httpProbe("GET", "/mgmt/shared/identified-devices/config/device-info", 200, `{"kind":"shared:resolver:device-groups:deviceinfostate","restFrameworkVersion":"13.1.0-0.0.4","selfLink":"https://localhost/mgmt/shared/identified-devices/config/device-info"}`)), wantMatch{Vendor: "F5", StrictVersion: true, StrictBand: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, tt.want)
		})
	}
}
