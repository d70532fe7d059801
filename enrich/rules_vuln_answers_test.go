package enrich

import (
	"strings"
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_VulnAnswers checks 76-vuln-answers.yaml's classes (docs/rules.md,
// "Answers through the appliances' vulnerabilities"): the content names the
// product whatever path returned it, and look-alikes (a generic Linux
// passwd, another product's file, another IdP's discovery document, the
// same path answered by something else) name nothing.
func TestRules_VulnAnswers(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	web := func(method, path string, status int, body string, headers ...string) *ingest.Service {
		return tcpService(443, httpProbe(method, path, status, body, headers...))
	}
	genericPasswd := "root:x:0:0:root:/root:/bin/bash\nbin:x:1:1:bin:/bin:/sbin/nologin\ndaemon:x:2:2:daemon:/sbin:/sbin/nologin\n" +
		"nobody:x:99:99:Nobody:/:/sbin/nologin\ntomcat:x:91:91:Apache Tomcat:/usr/share/tomcat:/sbin/nologin\nsshd:x:74:74:Privilege-separated SSH:/var/empty/sshd:/sbin/nologin\n"
	tool := func(product, info string) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{By: "test", Product: product, Info: info}}
	}
	tmuiJSON := func(s string) string { return `{"output":"` + strings.ReplaceAll(s, "\n", `\n`) + `"}` }
	const ctxsDiscovery = `{"issuer": "https://gw.example.org", "authorization_endpoint": "https://gw.example.org/oauth/idp/login", "token_endpoint": "https://gw.example.org/oauth/idp/token", "jwks_uri":  "https://gw.example.org/oauth/idp/certs", "response_types_supported": ["code", "token", "id_token"], "scopes_supported": ["openid", "ctxs_cc"]}`
	const keycloakDiscovery = `{"issuer":"https://192.0.2.9","authorization_endpoint":"https://192.0.2.9/oauth/auth","token_endpoint":"https://192.0.2.9/oauth/token","jwks_uri":"https://192.0.2.9/oauth/certs","scopes_supported":["openid","profile","email"]}`
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		// BIG-IP's own accounts, in TMUI's JSON, as lines, in a tool's output
		{"big-ip passwd in tmui json", web("GET", "/tmui/login.jsp/..;/tmui/locallb/workspace/fileRead.jsp?fileName=/etc/passwd", 200,
			tmuiJSON(genericPasswd+"tmshnobody:x:32765:32765:tmshnobody:/:/sbin/nologin\nadmin:x:0:500:Admin User:/home/admin:/sbin/nologin\n")),
			wantMatch{Vendor: "F5", Rule: "f5-bigip-system-accounts"}},
		{"big-ip passwd through another path", web("POST", "/mgmt/tm/util/bash", 200,
			`{"kind":"x","commandResult":"f5_remoteuser:x:499:499:f5 remote user account:/home/f5_remoteuser:/sbin/nologin\n"}`),
			wantMatch{Vendor: "F5"}},
		{"big-ip passwd pasted", bannerService(22, "tcp", genericPasswd+"f5_remoteuser:x:499:499:f5 remote user account:/home/f5_remoteuser:/sbin/nologin\n"),
			wantMatch{Vendor: "F5"}},
		{"generic passwd at tmui's path", web("GET", "/tmui/login.jsp/..;/tmui/locallb/workspace/fileRead.jsp?fileName=/etc/passwd", 200, tmuiJSON(genericPasswd)), wantMatch{}},
		{"generic passwd anywhere", web("GET", "/download?file=../../../../etc/passwd", 200, genericPasswd), wantMatch{}},
		{"a doc naming the account", web("GET", "/kb/accounts", 200, "<p>The tmshnobody account is used by tmsh.</p>"), wantMatch{}},
		// the release file
		{"f5-release through a read", web("GET", "/tmui/login.jsp/..;/tmui/locallb/workspace/fileRead.jsp?fileName=/etc/f5-release", 200, tmuiJSON("BIG-IP release 15.1.0.4 (Final)\n")),
			wantMatch{Vendor: "F5", Rule: "f5-bigip-release-file", Version: "15.1.0.4", StrictVersion: true}},
		{"f5-release pasted", bannerService(22, "tcp", "BIG-IP release 13.0.0 (Final)\n"), wantMatch{Vendor: "F5", Version: "13.0.0", StrictVersion: true}},
		{"big-iq release", bannerService(22, "tcp", "BIG-IQ release 8.3.0 (Final)\n"), wantMatch{}},
		{"a page requiring a release", web("GET", "/readme", 200, "This setup requires BIG-IP release 16.x and the latest AS3 RPM package."), wantMatch{}},
		// tmsh's user listing
		{"tmsh list auth user", web("GET", "/tmui/login.jsp/..;/tmui/locallb/workspace/tmshCmd.jsp?command=list+auth+user", 200,
			`{"error":"","output":"auth user admin {\n    description \"Admin User\"\n    partition Common\n    partition-access {\n        all-partitions {\n            role admin\n        }\n    }\n    shell bash\n}\n"}`),
			wantMatch{Vendor: "F5", Rule: "f5-bigip-tmsh-auth-user"}},
		{"another product's auth block", bannerService(22, "tcp", "auth user admin {\n  password secret\n}\n"), wantMatch{}},
		// the ASA's portal_inc.lua
		{"asa portal_inc.lua", web("GET", "/+CSCOT+/translation-table?type=mst&textdomain=/%2bCSCOE%2b/portal_inc.lua&default-language&lang=../", 200,
			"local INTERNAL_PASSWORD_ENABLED = false\nlocal CONF_VIRTUAL_KEYBOARD = false\n"),
			wantMatch{Vendor: "Cisco", Rule: "cisco-asa-portal-inc-lua"}},
		{"asa portal_inc.lua pasted", bannerService(443, "tcp", "if INTERNAL_PASSWORD_ENABLED then ... CONF_VIRTUAL_KEYBOARD ..."), wantMatch{Vendor: "Cisco"}},
		{"a backup tool's keyboard setting", web("GET", "/setup.php", 200, `virtual_keyboard_css($config["conf_VIRTUAL_KEYBOARD_ENABLED"]); $INTERNAL_PASSWORD_ENABLED_x = 1;`), wantMatch{}},
		{"a default page at the traversal path", web("GET", "/+CSCOT+/translation-table?type=mst&textdomain=/%2bCSCOE%2b/portal_inc.lua&lang=../", 200, "<html><body>It works!</body></html>"), wantMatch{}},
		// NetScaler's IdP discovery document
		{"netscaler idp discovery", web("GET", "/oauth/idp/.well-known/openid-configuration", 200, ctxsDiscovery), wantMatch{Vendor: "Citrix", Rule: "citrix-netscaler-oauth-idp-discovery"}},
		{"netscaler idp discovery, endpoints only", web("GET", "/x", 200, strings.Replace(ctxsDiscovery, `"ctxs_cc"`, `"email"`, 1)), wantMatch{Vendor: "Citrix"}},
		{"keycloak-shaped document at the citrix path", web("GET", "/oauth/idp/.well-known/openid-configuration", 200, keycloakDiscovery), wantMatch{}},
		{"one /oauth/idp/ endpoint only", web("GET", "/.well-known/openid-configuration", 200, `{"authorization_endpoint":"https://idp.example.org/oauth/idp/login","jwks_uri":"https://idp.example.org/keys"}`), wantMatch{}},
		// GlobalProtect's gpsvc log
		{"gpsvc traversal line", bannerService(443, "tcp", `{"level":"error","task":"9-22","time":"2024-04-21T22:20:27.58-07:00","message":"failed to unmarshal session(/../../../../opt/panlogs/tmp/device_telemetry/minute/aaa`+"`echo${IFS}x|base64${IFS}-d|bash`"+`) map , EOF"}`),
			wantMatch{Vendor: "Palo Alto Networks", Rule: "paloalto-globalprotect-gpsvc-log"}},
		{"gpsvc guid line", bannerService(443, "tcp", `{"level":"error","task":"1-22","time":"2024-04-11T10:00:00.00-07:00","message":"failed to unmarshal session(01234567-89ab-cdef-0123-456789abcdef) map , EOF"}`),
			wantMatch{Vendor: "Palo Alto Networks"}},
		{"a go service's unmarshal error", bannerService(443, "tcp", `level=error msg="failed to unmarshal session: unexpected EOF"`), wantMatch{}},
		// the SMA 100's files
		{"sma passwd", web("GET", "/cgi-bin/jarrewrite.sh", 200, "root:x:0:0:root:/root:/usr/sbin/cli\nbin:x:1:1:bin:/bin:/bin/false\nsnort:x:100:101:ftp:/var/log/snort:/bin/false\nlogwatch:x:102:102::/var/log/logwatch:/bin/false\nadmin::105:105::/:/usr/sbin/cli\n"),
			wantMatch{Vendor: "SonicWall", Rule: "sonicwall-sma-system-files"}},
		{"sma jarrewrite.sh source", web("GET", "/x", 200, "MANIFEST_DIGEST_FILE=${META_INF_DIR}/SWALL_SIGNATURE.SF\nSIGNATURE_FILE=${META_INF_DIR}/SWALL_SIGNATURE.DSA\n"), wantMatch{Vendor: "SonicWall"}},
		{"another device's cli shell", web("GET", "/x", 200, "root:x:0:0:root:/root:/usr/sbin/cli\nnobody:x:99:99:nobody:/:/bin/false\n"), wantMatch{}},
		{"a snort box's passwd", web("GET", "/x", 200, genericPasswd+"snort:x:100:101:snort:/var/log/snort:/sbin/nologin\n"), wantMatch{}},
		// BIG-IP's shells
		{"big-ip bash prompt", bannerService(22, "tcp", "[root@bigip01:Active:Standalone] config # tmsh list net vlan\n"), wantMatch{Vendor: "F5", Rule: "f5-bigip-shell-prompt"}},
		{"big-ip unlicensed prompt in a page", web("GET", "/notes", 200, "<pre>[root@localhost:NO LICENSE:Standalone] config # </pre>"), wantMatch{Vendor: "F5"}},
		{"big-ip tmsh prompt", bannerService(22, "tcp", "root@(bigip16-1)(cfg-sync Standalone)(Active)(/Common)(tmos)# "), wantMatch{Vendor: "F5"}},
		{"big-iq prompt", bannerService(22, "tcp", "[root@bigiq:Active:Standalone] config # chmod +x /tmp/x.sh\n"), wantMatch{}},
		{"a linux root prompt", bannerService(22, "tcp", "[root@web01 ~]# uname -a\nLinux web01 4.18.0 #1 SMP x86_64 GNU/Linux\n"), wantMatch{}},
		// RouterOS's root shell
		{"routeros root shell", bannerService(23000, "tcp", "\n\nMikroTik v6.38.4 (stable)\n/ #"), wantMatch{Vendor: "MikroTik", Rule: "mikrotik-routeros-root-shell", Version: "6.38.4", StrictVersion: true}},
		{"a page naming the release", web("GET", "/changelog", 200, "MikroTik v6.38.4 (stable) fixes the www crash"), wantMatch{}},
		// Junos's kernel ident
		{"junos php_uname through j-web", web("POST", "/?PHPRC=/dev/fd/0", 200, "FreeBSD srx-fw JNPR-11.0-20200922.4042921_buil FreeBSD JNPR-11.0-20200922.4042921_builder_stable_11 amd64"), wantMatch{Vendor: "Juniper Networks", Rule: "juniper-junos-kernel-ident"}},
		{"a plain freebsd uname", web("POST", "/?PHPRC=/dev/fd/0", 200, "FreeBSD host 13.2-RELEASE FreeBSD 13.2-RELEASE releng/13.2-n254617-525ecfdad597 GENERIC amd64"), wantMatch{}},
		{"junos package brackets without the ident", bannerService(22, "tcp", "JUNOS OS libs [20190517.f0321c3_builder_stable_11]"), wantMatch{}},
		// Citrix Bleed's leaked memory, printed alone
		{"citrix bleed dump", bannerService(443, "tcp", "--- Dumped Memory ---\naaaaaaaa\x00d98cd79972b2637450836d4009793b100c3a01f2245525d5f4f58455e445a4a42HTTP/1.1 200 OK\r\nSet-Cookie: NSC_AAAC=@@@@@@@@@@@@@@@@@@@@@@@@;Secure;HttpOnly;Path=/\r\n"),
			wantMatch{Vendor: "Citrix", Rule: "citrix-netscaler-bleed-leak"}},
		{"random hex", web("GET", "/x", 200, "d98cd79972b2637450836d4009793b100c3a01f2245525d5f4f58455e445a4a4"), wantMatch{}},
		{"a real nsc_aaac cookie", web("GET", "/x", 200, "Set-Cookie: NSC_AAAC=xyz123abc; Path=/"), wantMatch{}},
		// version scanners' verdicts
		{"panos-scanner exact match", tool("panos-scanner.py", `{"date": "2018-05-04", "versions": ["8.0.10"], "precision": "exact", "resource": "global-protect/portal/images/favicon.ico"}`),
			wantMatch{Vendor: "Palo Alto Networks", Rule: "paloalto-panos-scanner-verdict", Version: "8.0.10", StrictVersion: true}},
		{"panos-scanner approximate match", tool("panos-scanner.py", `{"date": "2019-08-21", "versions": ["8.1.10", "9.0.4"], "precision": "approximate", "resource": "js/Pan.js"}`),
			wantMatch{Vendor: "Palo Alto Networks", Rule: "paloalto-panos-scanner-verdict"}},
		{"another tool's versions at another path", tool("x.py", `{"versions": ["2.4.1"], "precision": "exact", "resource": "static/favicon.ico"}`), wantMatch{}},
		{"bigip-scanner exact", tool("bigip-scanner.py", `[{"version": "16.1.2-0.0.18", "precision": "exact", "image_name": "BIGIP-16.1.2-0.0.18", "resource": "/tmui/tmui/login/images/logo_f5.png"}]`),
			wantMatch{Vendor: "F5", Version: "16.1.2", StrictVersion: true}},
		// the Firepower kernel
		{"sfr module uname", bannerService(443, "tcp", "Linux firepower 3.10.107sf.cisco-1 #1 SMP PREEMPT Thu Mar 8 18:29:04 UTC 2018 x86_64 GNU/Linux"), wantMatch{Vendor: "Cisco", Rule: "cisco-firepower-kernel"}},
		{"another vendor's suffixed kernel", bannerService(22, "tcp", "Linux host 3.10.107-sf.vendor-1 #1 SMP x86_64 GNU/Linux"), wantMatch{}},
		// scanners' confirmation content
		{"pan-os php start-end", web("GET", "/esp/cms_changeDeviceContext.esp?device=x", 200, "@start@Success@end@"), wantMatch{Vendor: "Palo Alto Networks", Rule: "paloalto-panos-php-start-end"}},
		{"pan-os session answer", web("POST", "/php/utils/createRemoteAppwebSession.php/x.js.map", 200, "@start@PHPSESSID=0123456789abcdef@end@"), wantMatch{Vendor: "Palo Alto Networks"}},
		{"an email-like at sign", web("GET", "/x", 200, "contact @start@example.org or @end@example.org"), wantMatch{}},
		{"j-web do_upload", web("POST", "/webauth_operation.php", 200, `{"original_fileName": "abc.php", "converted_fileName": "0d5b7bdb2b5f3a1e0c1d1c3b5a6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f80.php"}`), wantMatch{Vendor: "Juniper Networks", Rule: "juniper-jweb-do-upload-answer"}},
		{"another uploader's json", web("POST", "/upload", 200, `{"original_fileName": "a.png", "converted_fileName": "a.webp"}`), wantMatch{}},
		{"sonicos nelaunch", web("GET", "/cgi-bin/sslvpnclient?launchplatform=", 200, `<object id="NELaunchX1" classid="clsid:x"></object>`), wantMatch{Vendor: "SonicWall", Rule: "sonicwall-sonicos-nelaunch"}},
		{"sonicos redirect page", web("GET", "/", 200, `<html><body>Please be patient as you are being re-directed to <a href="https://fw.example.org/auth.html">https://fw.example.org/auth.html</a></body></html>`), wantMatch{Vendor: "SonicWall", Rule: "sonicwall-sonicos-auth-redirect-page"}},
		{"a generic patience page", web("GET", "/", 200, "Please be patient as you are being re-directed to /login"), wantMatch{}},
		{"fortios service worker", web("GET", "/service-worker.js?local_access_token=x", 200, `self.addEventListener('fetch', e => { if (e.request.url.includes('/api/v2/static/')) {} });`, "Content-Type", "application/javascript"), wantMatch{Vendor: "Fortinet", Rule: "fortinet-fortios-gui-service-worker"}},
		{"another app's service worker", web("GET", "/service-worker.js", 200, `self.addEventListener('install', e => caches.open('v1'));`), wantMatch{}},
		{"netscaler web view", web("GET", "/nf/auth/startwebview.do", 200, `<AuthenticationRequirements xmlns="http://citrix.com/authentication/response/1"><PostBack>/nf/auth/doWebview.do</PostBack><Requirements><Requirement><Input><WebView><Url>/nf/auth/webview/done</Url></WebView></Input></Requirement></Requirements></AuthenticationRequirements>`), wantMatch{Vendor: "Citrix"}},
		{"a doc naming the endpoint", web("GET", "/blog", 200, "The check requests /nf/auth/startwebview.do."), wantMatch{}},
		// pages about the products quoting their answers
		{"a kb page quoting big-ip's passwd", web("GET", "/kb/article", 200, "<!DOCTYPE html><html><body><pre>tmshnobody:x:32765:32765:tmshnobody:/:/sbin/nologin</pre></body></html>"), wantMatch{}},
		{"a blog quoting a big-ip prompt", web("GET", "/post", 200, "<html><body><pre>[root@bigip1:Active:Standalone] config # tmsh list</pre></body></html>"), wantMatch{}},
		{"uname prepended to a j-web page", web("GET", "/?PHPRC=/dev/fd/0", 200, "FreeBSD srx JNPR-12.1-20220817.43c4e23_buil FreeBSD JNPR-12.1-20220817.43c4e23_builder_stable_12-204 amd64\n<!DOCTYPE html><html><head><title>Log In - Juniper Web Device Manager</title></head></html>"), wantMatch{Vendor: "Juniper Networks"}},
		// honeypot tells guard the content rules too
		{"placeholder cert beside big-ip accounts", tcpService(443, httpProbe("GET", "/x", 200, "tmshnobody:x:32765:32765:tmshnobody:/:/sbin/nologin\n"),
			ingest.Probe{Name: "tls", TLS: &ingest.TLS{Subject: &ingest.DN{O: []string{"Internet Widgits Pty Ltd"}}, Issuer: &ingest.DN{O: []string{"Internet Widgits Pty Ltd"}}}}), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, tt.want)
		})
	}
}
