package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_ManagementAPIs checks the Group M round's management and API
// answer tells of Fortinet, Palo Alto Networks, Check Point, SonicWall,
// Sophos and Zyxel (rules/10-fortinet.yaml, 10-paloalto.yaml,
// 20-checkpoint.yaml, 20-sonicwall.yaml, 35-sophos.yaml, 40-zyxel.yaml) on
// answers shaped as API clients print them (JSON, or the Python rendering
// of it with single quotes), and the look-alikes that must name nothing:
// FortiManager's JSON-RPC, other products' JSON and XML APIs sharing field
// names, and a vendor's API path answered by another server.
func TestRules_ManagementAPIs(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	probe := func(method, path string, status int, reason, body string, headers ...string) ingest.Probe {
		p := ingest.Probe{Request: &ingest.Request{Method: method, Path: path}, Response: &ingest.Response{Status: status, Reason: reason, Body: ingest.TextBody(body)}}
		for i := 0; i+1 < len(headers); i += 2 {
			p.Response.Headers = append(p.Response.Headers, ingest.Header{Name: headers[i], Value: headers[i+1]})
		}
		return p
	}
	tests := []struct {
		name, vendor, rule, exact string
		probes                    []ingest.Probe
	}{
		// FortiOS REST API and admin login
		{"fortios error envelope first key", "Fortinet", "fortinet-fortios-api", "7.4.9", []ingest.Probe{probe("GET", "/api/v2/monitor/router/bgp/neighbors", 500, "",
			`{"http_method":"GET","status":"error","http_status":500,"vdom":"root","path":"router","name":"bgp","action":"neighbors","serial":"FGT50GXXXXXXX","version":"v7.4.9","build":2829}`)}},
		{"fortios envelope in a json list", "Fortinet", "fortinet-fortios-api", "", []ingest.Probe{probe("GET", "/api/v2/monitor/license/status", 200, "",
			`[ { "http_method":"GET", "results":{ "fortiguard":{ "connected":true } } } ]`)}},
		{"fortios envelope tail without its head", "Fortinet", "fortinet-fortios-api", "5.6.8", []ingest.Probe{probe("GET", "/", 200, "",
			`"vdom":"myvdom", "path":"system", "name":"resource", "action":"usage", "status":"success", "serial":"myserial", "version":"v5.6.8", "build":1672`)}},
		{"fortios envelope printed as python", "Fortinet", "fortinet-fortios-api", "7.2.5", []ingest.Probe{probe("GET", "/", 200, "",
			`{'http_method': 'GET', 'results': [], 'vdom': 'root', 'serial': 'FGVM02TM22000001', 'version': 'v7.2.5', 'build': 1517}`)}},
		{"fortios firmware monitor current image", "Fortinet", "fortinet-fortios-api", "6.0.0", []ingest.Probe{probe("GET", "/x", 200, "",
			`"current":{ "name":"FortiOS", "id":"current", "version":"v6.0.0", "major":6, "minor":0 }`)}},
		{"fortios envelope with sorted keys", "Fortinet", "fortinet-fortios-api", "7.2.5", []ingest.Probe{probe("GET", "/", 200, "",
			`{"build": 1517, "http_method": "GET", "http_status": 200, "name": "address", "path": "firewall", "serial": "FGT60FTK2109ABCD", "status": "success", "vdom": "root", "version": "v7.2.5"}`)}},
		{"fortios firmware image as powershell prints it", "Fortinet", "fortinet-fortios-api", "6.4.1", []ingest.Probe{probe("GET", "/", 200, "",
			"name         : FortiOS\nid           : current\nversion      : v6.4.1\nmajor        : 6\n")}},
		{"fortios logincheck answer", "Fortinet", "fortinet-fortios-api", "", []ingest.Probe{probe("POST", "/logincheck", 200, "",
			"1document.location=\"/logindisclaimer?viewOnly&redir=%2Fng%2F\";\n")}},
		{"fortios csrf cookie with port and hash", "Fortinet", "fortinet-fortios-api", "", []ingest.Probe{probe("POST", "/logincheck", 200, "", "",
			"Set-Cookie", "ccsrftoken_443_3334d10=\"ABC\"; path=/; secure")}},
		// PAN-OS XML and REST APIs
		{"panos spaced refusal", "Palo Alto Networks", "paloalto-panos-api", "", []ingest.Probe{probe("GET", "/api/", 403, "",
			`<response status = 'error' code = '403'><result><msg>Invalid Credential</msg></result></response>`)}},
		{"panos refusal reason phrase", "Palo Alto Networks", "paloalto-panos-api", "", []ingest.Probe{probe("GET", "/api/", 403, "Invalid Credential", "",
			"Content-Type", "application/xml; charset=UTF-8")}},
		{"panos show system info", "Palo Alto Networks", "paloalto-panos-api", "10.2.4", []ingest.Probe{probe("GET", "/api/", 200, "",
			`<response status="success"><result><system><hostname>fw1</hostname><model>PA-440</model><sw-version>10.2.4</sw-version><app-version>8614-7547</app-version></system></result></response>`)}},
		{"panos show system info as sorted json", "Palo Alto Networks", "paloalto-panos-api", "10.1.6", []ingest.Probe{probe("GET", "/", 200, "",
			`{"app-version": "8600-7300", "model": "PA-3020", "sw-version": "10.1.6", "threat-version": "8600-7300"}`)}},
		{"panos op error msg line", "Palo Alto Networks", "paloalto-panos-api", "", []ingest.Probe{probe("GET", "/api/", 200, "",
			`<response status="error" code="17"><msg><line><![CDATA[ show -> x is unexpected]]></line></msg></response>`)}},
		{"panos rest envelope", "Palo Alto Networks", "paloalto-panos-api", "", []ingest.Probe{probe("GET", "/restapi/v10.1/Objects/Addresses", 200, "",
			`{"@status": "success", "@code": "19", "result": {"@total-count": "1", "@count": "1", "entry": []}}`)}},
		{"panos rest error details", "Palo Alto Networks", "paloalto-panos-api", "", []ingest.Probe{probe("POST", "/restapi/v10.1/Policies/SecurityRules", 400, "",
			`{"code": 3, "message": "Invalid Object", "details": [{"@type": "CauseInfo", "causes": [{"code": 12, "module": "panui_mgmt"}]}]}`)}},
		// Check Point Management and Gaia APIs
		{"check point login refusal", "Check Point", "checkpoint-management-api", "", []ingest.Probe{probe("POST", "/web_api/login", 400, "",
			`{ "code" : "err_login_failed", "message" : "Authentication to server failed." }`)}},
		{"check point generic_err", "Check Point", "checkpoint-management-api", "", []ingest.Probe{probe("POST", "/web_api/show-host", 404, "",
			`{"code":"generic_err_object_not_found","message":"Requested object [x] not found"}`)}},
		{"gaia api error printed as python", "Check Point", "checkpoint-management-api", "", []ingest.Probe{probe("POST", "/gaia_api/show-users", 500, "",
			`{'code': 'generic_error', 'errors': '1', 'msg': 'General Exception'}`)}},
		{"gaia api show-version", "Check Point", "checkpoint-management-api", "R81.10", []ingest.Probe{probe("POST", "/gaia_api/show-version", 200, "",
			`{"os-build": "123", "os-edition": "64-bit", "product-version": "Check Point Gaia R81.10"}`)}},
		{"mobile access portal not supported", "Check Point", "checkpoint-mobile-access", "", []ingest.Probe{probe("GET", "/Login/Login", 200, "",
			`This Portal is not supported on this server. Please contact your administrator for more information (14).`)}},
		// SonicOS API
		{"sonicos api refusal", "SonicWall", "sonicwall-sonicos-api", "", []ingest.Probe{probe("GET", "/api/sonicos/interfaces/ipv4", 401, "",
			`{ "status": { "success": false, "info": [ { "level": "error", "code": "E_UNAUTHORIZED", "message": "Unauthorized." } ] } }`)}},
		{"sonicos api sorted keys", "SonicWall", "sonicwall-sonicos-api", "", []ingest.Probe{probe("POST", "/api/sonicos/address-groups/ipv4", 200, "",
			`{'status': {'cli': {'depth': 1}, 'info': [{'code': 'E_OK', 'level': 'info', 'message': 'Success.'}], 'success': True}}`)}},
		{"sonicos api version", "SonicWall", "sonicwall-sonicos-api", "7.0.1-5035", []ingest.Probe{probe("GET", "/api/sonicos/version", 200, "",
			`{"model": "TZ 370", "firmware_version": "SonicOS 7.0.1-5035", "rom_version": "SonicROM 7.0.0.0-17"}`)}},
		// SFOS XML API
		{"sfos api response", "Sophos", "sophos-firewall-api", "", []ingest.Probe{probe("POST", "/webconsole/APIController", 200, "",
			`<?xml version="1.0" encoding="UTF-8"?><Response APIVersion="1905.1" IPS_CAT_VER="1"><Login><status>Authentication Successful</status></Login></Response>`)}},
		// Zyxel ZLD login page without its head
		{"zld login script", "Zyxel", "zyxel-usg", "", []ingest.Probe{probe("GET", "/", 200, "",
			`function setData(isSSL){ document.login.password.value = document.login.pwd.value + document.login.pwd_r.value; }`)}},
		{"zld configuration export type", "Zyxel", "zyxel-usg", "", []ingest.Probe{probe("GET", "/cgi-bin/export-cgi", 200, "", "interface-name ge1",
			"Content-Type", "text/zyxel", "Content-Disposition", "attachment; filename=startup-config.conf")}},
		{"zld login page 2fa script and style", "Zyxel", "zyxel-usg", "", []ingest.Probe{probe("GET", "/", 200, "",
			`<link href="/2FA-access.cgi"><body class="zyxel zyxel_style1">`)}},
		{"zysh-cgi answer", "Zyxel", "zyxel-device", "", []ingest.Probe{probe("POST", "/cgi-bin/zysh-cgi", 200, "",
			"var zyshdata0=[{'_boot_status':'Running'}];\nvar errno0=0;\nvar errmsg0='OK';\n")}},
		// look-alikes: nothing named
		{"zyxel name in another type", "", "", "", []ingest.Probe{probe("GET", "/", 200, "", "x", "Content-Type", "text/html; name=zyxel")}},
		{"fortimanager json-rpc", "", "", "", []ingest.Probe{probe("POST", "/jsonrpc", 200, "",
			`{"id": 2, "result": [{"status": {"code": -11, "message": "No permission for the resource"}, "url": "sys/status"}], "session": 29259}`)}},
		{"fortimanager proxy carrying a fortigate answer", "", "", "", []ingest.Probe{probe("POST", "/jsonrpc", 200, "",
			`{"id":1,"result":[{"data":[{"response":{"http_method":"GET","results":[],"vdom":"root","path":"system","name":"status","status":"success","serial":"FGT60FTK2109ABCD","version":"v7.2.5","build":1517},"status":{"code":0,"message":"OK"},"target":"fgt"}],"status":{"code":0,"message":"OK"},"url":"/sys/proxy/json"}]}`)}},
		{"other product listing its name and version", "", "", "", []ingest.Probe{probe("GET", "/", 200, "",
			"name    : FortiClient\nid      : 12\nversion : v7.0.1\n")}},
		{"other api with method and version keys", "", "", "", []ingest.Probe{probe("GET", "/", 200, "",
			`{"http_method":"GET","version":"v2.1.0","build":3,"region":"eu"}`)}},
		{"other device with a sw-version key", "", "", "", []ingest.Probe{probe("GET", "/", 200, "",
			`{"hw-manufacturer": "SharkRF", "hw-model": "openSPOT", "sw-version": "0054"}`)}},
		{"generic status error json", "", "", "", []ingest.Probe{probe("GET", "/api/v2/cmdb/system/status", 404, "",
			`{"status":"error","message":"not found","version":"v1.2.3","build":7}`)}},
		{"other product with success false and info", "", "", "", []ingest.Probe{probe("GET", "/api/sonicos/auth", 200, "",
			`{"error":{"code":103},"success":false,"info":[{"level":"error","message":"x"}]}`)}},
		{"other xml api response", "", "", "", []ingest.Probe{probe("GET", "/api/", 200, "",
			`<?xml version="1.0"?><response status="error" code="401" ms="3"><message>bad key</message></response>`)}},
		{"other api with err code and message", "", "", "", []ingest.Probe{probe("POST", "/web_api/login", 401, "",
			`{"code":"err_login_failed","message":"Invalid username or password"}`)}},
		{"unrelated 403 reason phrase", "", "", "", []ingest.Probe{probe("GET", "/api/", 403, "Invalid Credentials", `{"error":"Invalid Credentials"}`)}},
		{"catch-all page at the apicontroller path", "", "", "", []ingest.Probe{probe("POST", "/webconsole/APIController", 200, "",
			`<!doctype html><html><head><title>Welcome</title></head><body>It works</body></html>`, "Content-Type", "text/html")}},
		{"response element in another product's xml", "", "", "", []ingest.Probe{probe("GET", "/", 200, "",
			`<Response><Status>OK</Status><Login>none</Login></Response>`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := ingest.Service{Port: 443, Transport: "tcp", Probes: tt.probes}
			checkMatch(t, rules, &svc, wantMatch{Vendor: tt.vendor, Rule: tt.rule, Version: tt.exact, StrictVersion: true})
		})
	}
}
