package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_ManagementAPITells checks the group M round's management and API
// tells (rules/15-citrix.yaml, 30-f5.yaml, 45-forcepoint.yaml, 15-ivanti.yaml,
// 10-cisco.yaml and the log rule of 25-openvpn.yaml): each answer shape by
// class, its version where the answer carries one, that a management API is
// named without the VPN class, and the look-alikes that must name nothing,
// among them a server answering the same paths with another product's body.
func TestRules_ManagementAPITells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	type hdr = ingest.Header
	probe := func(method, path string, status int, reason, body string, headers ...hdr) ingest.Probe {
		p := ingest.Probe{Request: &ingest.Request{Method: method, Path: path}, Response: &ingest.Response{Status: status, Reason: reason, Headers: headers}}
		if body != "" {
			p.Response.Body = ingest.TextBody(body)
		}
		return p
	}
	web := func(p ingest.Probe) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{p}}
	}
	banner := func(text string) *ingest.Service {
		return bannerService(943, "tcp", text)
	}
	ssh := func(text string) *ingest.Service {
		return bannerService(22, "tcp", text)
	}
	nitro404 := []hdr{
		{Name: "Date", Value: "Thu, 17 Nov 2022 11:58:46 GMT"},
		{Name: "Server", Value: "Apache"},
		{Name: "X-Frame-Options", Value: "SAMEORIGIN"},
		{Name: "Expires", Value: "Thu, 19 Nov 1981 08:52:00 GMT"},
		{Name: "Cache-Control", Value: "no-store, no-cache, must-revalidate, post-check=0, pre-check=0"},
		{Name: "Pragma", Value: "no-cache"},
		{Name: "Vary", Value: "Accept-Encoding"},
		{Name: "Feature-Policy", Value: "camera 'none'; microphone 'none'; geolocation 'none'"},
		{Name: "Referrer-Policy", Value: "no-referrer"},
	}
	tests := []struct {
		name          string
		svc           *ingest.Service
		vendor        string
		version, band string
		noClass       bool // a management API: no VPN class
	}{
		// --- NetScaler NITRO ---
		{"nitro error on any path", web(probe("GET", "//nitro/v1/config/nshardware", 0, "", `{ "errorcode": 10005, "message": "Invalid Resource", "severity": "ERROR" }`)), "Citrix", "", "", true},
		{"nitro v2 refusal", web(probe("POST", "/nitro/v2/config/login", 0, "", `{"errorcode":-1,"message":"Version not supported","severity":"ERROR"}`)), "Citrix", "", "", true},
		{"nitro 599 reason alone", web(probe("POST", "/nitro/v1/config/login", 599, "Netscaler specific error", "")), "Citrix", "", "", true},
		{"nitro nsversion", web(probe("GET", "/nitro/v1/config/nsversion", 200, "OK", `{ "errorcode": 0, "message": "Done", "severity": "NONE", "nsversion": { "installedversion": false, "version": "NetScaler NS13.0: Build 71.44.nc, Date: Dec 26 2020, 11:31:14   (64-bit)", "mode": "1" } }`)), "Citrix", "13.0-71.44", "", true},
		{"nitro 404 header block", web(probe("GET", "/nitro/v1/config/nsip?args=ipaddress:198.51.100.31", 404, "Not Found", "", nitro404...)), "Citrix", "", "", true},
		{"nitro session cookie", web(probe("POST", "/nitro/v1/config/login", 201, "Created", "", hdr{Name: "Set-Cookie", Value: "NITRO_AUTH_TOKEN=REDACTED; path=/nitro/v1"})), "Citrix", "", "", true},
		{"gateway smb.conf through /vpn/../", web(probe("GET", "/vpn/../vpns/cfg/smb.conf", 200, "OK", "[global]\r\n\tencrypt passwords = yes\r\n\tname resolve order = lmhosts wins host bcast\r\n")), "Citrix", "", "", false},
		// --- BIG-IP iControl REST ---
		{"icontrol item links carry the release", web(probe("GET", "/mgmt/tm/sys", 200, "OK", `[{"reference": {"link": "https://localhost/mgmt/tm/sys/application?ver=13.1.0.3"}}]`)), "F5", "13.1.0.3", "", true},
		{"icontrol sys version entries", web(probe("GET", "/mgmt/tm/sys/version", 200, "OK", `{"kind":"tm:sys:version:versionstats","entries":{"https://localhost/mgmt/tm/sys/version/0":{"nestedStats":{"entries":{"Build":{"description":"0.0.6"},"Version":{"description":"13.1.0.4"}}}}}}`)), "F5", "13.1.0.4", "", true},
		{"icontrol token login", web(probe("POST", "/mgmt/shared/authn/login", 200, "OK", `{"username":"admin","loginProviderName":"tmos","token":{"token":"REDACTED","userName":"admin","user":{"link":"https://localhost/mgmt/shared/authz/users/admin"},"kind":"shared:authz:tokens:authtokenitemstate","selfLink":"https://localhost/mgmt/shared/authz/tokens/REDACTED"}}`)), "F5", "", "", true},
		{"icontrol tm kind alone", web(probe("GET", "/mgmt/tm/ltm/pool/members/stats", 200, "OK", `{"kind":"tm:ltm:pool:poolstats","generation":0}`)), "F5", "", "", true},
		{"tmos error with apiError", web(probe("GET", "/mgmt/tm/ltm/pool/~Common~web", 404, "Not Found", `{"code":404,"message":"01020036:3: The requested Pool (/Common/web) was not found.","errorStack":[],"apiError":3}`)), "F5", "", "", true},
		{"restjavad java stack", web(probe("POST", "/mgmt/shared/authn/login", 404, "Not Found", `{"code":404,"message":"http://localhost:8100/mgmt/shared/authn/login","errorStack":["com.f5.rest.common.RestWorkerUriNotFoundException: http://localhost:8100/mgmt/shared/authn/login"`)), "F5", "", "", true},
		{"icontrol 401 reason", web(probe("GET", "/mgmt/tm/sys/", 401, "F5 Authorization Required", "")), "F5", "", "", true},
		{"management httpd 401 page", web(probe("GET", "/mgmt/tm/sys", 401, "Unauthorized", `<title>Authentication required!</title>`+"\n"+`<link rev="made" href="mailto:support@f5.com" />`)), "F5", "", "", true},
		// --- Forcepoint SMC API ---
		{"smc element href", web(probe("GET", "/6.7/elements/ip_list?filter=x", 200, "OK", `{"result":[{"href":"http://198.51.100.73:8082/6.7/elements/ip_list/23139","name":"x","type":"ip_list"}]}`)), "Forcepoint", "", "", true},
		{"smc printed dict", web(probe("GET", "/6.10/elements/single_fw/1/firewall_node/2", 200, "OK", `{'href': 'http://198.51.100.53:8082/6.10/elements/single_fw/1/firewall_node/2/reboot', 'rel': 'reboot'}`)), "Forcepoint", "", "", true},
		// --- Ivanti Connect Secure REST API ---
		{"ics active users", web(probe("GET", "/api/v1/system/active-users", 200, "OK", `{"active-users": {"active-user-records": {"active-user-record": []}}}`)), "Ivanti", "", "", false},
		{"ics system information release", web(probe("GET", "/api/v1/system/system-information", 200, "OK", `{"software-version": "9.1R11.4 (build 12345)"}`)), "Ivanti", "9.1R11.4", "", false},
		{"ics system information through the cve-2023-46805 path", web(probe("GET", "/api/v1/totp/user-backup-code/../../system/system-information", 200, "OK", `{"os-version": "22.3R1"}`)), "Ivanti", "22.3R1", "", false},
		// --- Cisco management APIs ---
		{"asa rest api collection", web(probe("GET", "/api/objects/networkobjects", 200, "OK", `{"kind":"collection#NetworkObj","selfLink":"https://198.51.100.9/api/objects/networkobjects/","rangeInfo":{"offset":0,"limit":1,"total":1}}`)), "Cisco", "", "", true},
		{"fmc server version", web(probe("GET", "/api/fmc_platform/v1/info/serverversion", 200, "OK", `{"items":[{"serverVersion":"6.6.0 (build 90)","type":"ServerVersion"}]}`)), "Cisco", "6.6.0", "", true},
		{"fdm object links", web(probe("POST", "/api/fdm/v2/object/networks", 200, "OK", `{"links": {"self": "https://localhost/api/fdm/v2/object/networks/a016b91b"}, "type": "networkobject"}`)), "Cisco", "", "", true},
		// --- CLI answers (show version) and iControl SOAP ---
		{"asa show version", ssh("Cisco Adaptive Security Appliance Software Version 9.16(4)19 \nDevice Manager Version 7.18(1)152\n"), "Cisco", "9.16(4)19", "", true},
		{"ftd show version", ssh("Model                     : Cisco Firepower 4110 Threat Defense (76) Version 6.6.0.1 (Build 7)\n"), "Cisco", "6.6.0.1", "", true},
		{"tmsh show sys version", ssh("  Product  BIG-IP\n  Version  11.5.3\n  Build    2.10.196\n"), "F5", "11.5.3", "", true},
		{"tmsh output in a bash commandResult", web(probe("POST", "/mgmt/tm/util/bash", 200, "OK", `{"kind":"tm:util:bash:runstate","command":"run","commandResult":"\nSys::Version\nMain Package\n  Product     BIG-IP\n  Version     13.1.1\n"}`)), "F5", "13.1.1", "", true},
		{"icontrol soap fault", web(probe("POST", "/iControl/iControlPortal.cgi", 500, "Internal Server Error", "Exception caught in LocalLB::urn:iControl:LocalLB/NodeAddressV2::create()\nCommon::InvalidArgument\n")), "F5", "", "", true},
		{"icontrol soap get_version", web(probe("POST", "/iControl/iControlPortal.cgi", 200, "OK", `<E:Envelope><E:Body><m:get_versionResponse xmlns:m="urn:iControl:System/SystemInfo"><return s:type="y:string">BIG-IP_v11.4.1</return></m:get_versionResponse></E:Body></E:Envelope>`)), "F5", "11.4.1", "", true},
		// --- OpenVPN Access Server log ---
		{"access server start-up line", banner("2025-11-23T18:12:32+0000 [stdout#info] ACCESS SERVER starting, version=3.0.1, build=84b60e70\n"), "OpenVPN Inc.", "3.0.1", "", false},
		{"access server web child", banner("2024-10-10T11:24:08+0200 [stdout#info] [WEB] OUT: 'WSERV admin+client+xmlrpc 0.0.0.0 943'\n"), "OpenVPN Inc.", "", "", false},
		// --- look-alikes: name nothing ---
		{"a scanner's nitro path on another server", web(probe("GET", "/nitro/v1/config/nsversion", 404, "Not Found", "<h1>Not Found</h1><p>The requested URL was not found on this server.</p>", hdr{Name: "Server", Value: "Apache"})), "", "", "", false},
		{"a php 404 on /nitro/ without the block", web(probe("GET", "/nitro/v1/config/login", 404, "Not Found", "", hdr{Name: "Server", Value: "Apache"}, hdr{Name: "Expires", Value: "Thu, 19 Nov 1981 08:52:00 GMT"})), "", "", "", false},
		{"the nitro header block on another path", web(probe("GET", "/index.php", 404, "Not Found", "", nitro404...)), "", "", "", false},
		{"wechat errcode", web(probe("POST", "/wxa/getwxacodeunlimit", 200, "OK", `{"errcode": 40001, "errmsg": "invalid credential"}`)), "", "", "", false},
		{"error_code json", web(probe("POST", "/users", 400, "Bad Request", `{"error_code": 8008, "success": 1, "message": "User already banned.", "data": null}`)), "", "", "", false},
		{"errorcode json without severity", web(probe("GET", "/api", 200, "OK", `{"errorcode": 0, "message": "Done"}`)), "", "", "", false},
		{"generic code and message", web(probe("GET", "/mgmt/tm/sys", 401, "Unauthorized", `{"code":401,"message":"Authentication failed."}`)), "", "", "", false},
		{"a localhost selflink of another api", web(probe("GET", "/api/items", 200, "OK", `{"kind":"ItemList","selfLink":"https://localhost/api/items/1"}`)), "", "", "", false},
		{"kubernetes selflink", web(probe("GET", "/api/v1/namespaces", 200, "OK", `{"kind":"NamespaceList","apiVersion":"v1","metadata":{"selfLink":"/api/v1/namespaces","resourceVersion":"1"}}`)), "", "", "", false},
		{"another api's elements href", web(probe("GET", "/v1/elements", 200, "OK", `{"href":"https://api.example.com/1.0/elements/widget/12","rel":"self"}`)), "", "", "", false},
		{"another api's version field", web(probe("GET", "/api/v1/system/info", 200, "OK", `{"software-version": "2.4.5"}`)), "", "", "", false},
		{"a kind with a hash elsewhere", web(probe("GET", "/api/v1/acl", 200, "OK", `{"kind":"object#acl","rules":[]}`)), "", "", "", false},
		{"restlet status json", web(probe("POST", "/api/fdm/v2/fdm/token", 404, "Not Found", `{"code": 404, "description": "The server has not found anything matching the request URI", "homeRef": "/", "reasonPhrase": "Not Found"}`)), "", "", "", false},
		{"plain twisted access log", banner(`2016-04-05 23:20:58+0900 [-] "127.0.0.1" - - [05/Apr/2016:14:20:57 +0000] "GET / HTTP/1.1" 200 1326 "-" "curl/7.48.0"` + "\n"), "", "", "", false},
		{"ios xr show version", ssh("Cisco IOS XR Software, Version 7.11.21\nCopyright (c) 2013-2024 by Cisco Systems, Inc.\n"), "", "", "", false},
		{"the asa cli line over udp names nothing", bannerService(161, "udp", "Cisco Adaptive Security Appliance Software Version 9.8(4)20"), "", "", "", false},
		{"bind version.bind none", bannerService(53, "udp", "version.bind none"), "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor, Version: tt.version, Band: tt.band, StrictVersion: true})
			if tt.noClass && fp.Class != "" {
				t.Errorf("rule %s names the address class %q; a management API has none", fp.RuleID, fp.Class)
			}
		})
	}
}
