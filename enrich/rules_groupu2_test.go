package enrich

import (
	"fmt"
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupU2Tells checks the tells the group U2 round added for
// Cisco, ocserv, Ivanti and SonicWall (docs/accuracy.md): Metasploit's
// printed results, nmap's script output (vulnerability scripts, http-enum,
// the SonicWall discovery broadcast, the Ivanti version script), nuclei
// result ids, and the appliances' own files in a file-read answer; and
// what must not be read as them (a module's name alone, a generic passwd,
// the same tells from behind a generic web server, ocserv's fixed version).
func TestRules_GroupU2Tells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	detected := func(port int, by, product, info string) *ingest.Service {
		return &ingest.Service{Port: port, Transport: "tcp", Detected: &ingest.Detected{By: by, Product: product, Info: info}}
	}
	script := func(port int, name, out string) *ingest.Service {
		return &ingest.Service{Port: port, Transport: "tcp", Probes: []ingest.Probe{{Name: name, Banner: &ingest.Banner{Received: ingest.TextBody(out)}}}}
	}
	svc := tcpService
	favicon := func(h int32) ingest.Probe {
		return ingest.Probe{Request: &ingest.Request{Method: "GET", Path: "/favicon.ico"}, Response: &ingest.Response{Status: 200, Body: &ingest.Body{MMH3: &h}}}
	}
	const pulsePasswd = "root:x:0:0:root:/:/bin/bash\nnfast:x:0:0:nfast:/:/bin/bash\nbin:x:1:1:bin:/:\nnobody:x:99:99:Nobody:/:\ndns:x:98:98:DNS:/:\nterm:x:97:97:Telnet/SSH:/:\nweb80:x:96:96:Port 80 web:/:\n"
	const trav = "/dana-na/../dana/html5acc/guacamole/../../../../../../../etc/passwd?/dana/html5acc/guacamole/"
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		// Metasploit
		{"ics module check naming IVE-OS", detected(443, "metasploit", "exploit/linux/http/ivanti_connect_secure_rce_cve_2023_46805",
			"[+] 192.0.2.1:443 - The target is vulnerable. IVE-OS 22.3R1 (1647)"), wantMatch{Vendor: "Ivanti", Version: "22.3R1"}},
		{"pulse module version line", detected(443, "metasploit", "exploit/linux/http/pulse_secure_gzip_rce",
			"[*] 192.0.2.1 - Finding Version\n[*] 192.0.2.1 - Version 9.1, revision 8, build 7453 found"), wantMatch{Vendor: "Ivanti", Band: "9.1R8.x"}},
		{"the same line from another module", detected(443, "metasploit", "exploit/linux/http/some_other_rce",
			"[*] 192.0.2.1 - Version 9.1, revision 8, build 7453 found"), wantMatch{}},
		{"an ivanti module that found nothing", detected(443, "metasploit", "exploit/linux/http/ivanti_connect_secure_rce_cve_2023_46805",
			"[-] 192.0.2.1:443 - The target is not exploitable."), wantMatch{}},
		{"sma module firmware", detected(443, "metasploit", "exploit/linux/http/sonicwall_cve_2021_20039",
			"[*] Version found: 10.2.1.1-19sv\n[*] 192.0.2.1:443 - The target appears to be vulnerable."), wantMatch{Vendor: "SonicWall", Version: "10.2.1.1-19sv"}},
		{"a firmware without the sma suffix", detected(443, "metasploit", "exploit/linux/http/x",
			"[*] Version found: 7.0.1-5035"), wantMatch{}},
		{"extrabacon's snmp check", &ingest.Service{Port: 161, Transport: "udp", Detected: &ingest.Detected{By: "metasploit", Product: "auxiliary/admin/cisco/cisco_asa_extrabacon",
			Info: "[+] Payload for Cisco ASA version 8.2(1) available!\n[*] 192.0.2.1:161 The target appears to be vulnerable."}}, wantMatch{Vendor: "Cisco", Version: "8.2(1)"}},
		// nmap
		{"nmap asa vulnerability script", script(443, "nmap:http-vuln-cve2014-2128",
			"\n  VULNERABLE:\n  Cisco ASA SSL VPN Authentication Bypass Vulnerability\n    State: VULNERABLE\n"), wantMatch{Vendor: "Cisco"}},
		{"another product's vulnerability script", script(443, "nmap:http-vuln-cve2017-1001000",
			"\n  VULNERABLE:\n  Content Injection in Wordpress REST API\n"), wantMatch{}},
		{"nmap http-enum asa firmware", script(443, "nmap:http-enum", "\n  /CSCOSSLC/config-auth: Cisco ASA, firmware 9.1(5)\n"), wantMatch{Vendor: "Cisco", Version: "9.1(5)"}},
		{"nmap http-enum of ocserv", script(443, "nmap:http-enum", "\n  /CSCOSSLC/config-auth: Cisco ASA, firmware 0.1(1)\n"), wantMatch{Vendor: "OpenConnect", Rule: "ocserv"}},
		{"sonicwall discovery broadcast", &ingest.Service{Port: 26214, Transport: "udp", Probes: []ingest.Probe{{Name: "nmap:broadcast-sonicwall-discover",
			Banner: &ingest.Banner{Received: ingest.TextBody("\n  192.0.2.1\n    MAC/Serial: 0006B1001122\n    Subnetmask: 255.255.255.0\n    Firmware: 3.9.1.2\n    ROM: 14.0.1.1")}}}}, wantMatch{Vendor: "SonicWall", Version: "3.9.1.2"}},
		{"ivanti version script", script(443, "nmap:http-vuln-ivanti-ics-ips",
			"\n  VULNERABLE:\n  Numerous Ivanti Connect Secure and Ivanti Policy Secure Vulnerabilities\n    State: LIKELY VULNERABLE\n    Check results:\n      8.3.7.65025\n"), wantMatch{Vendor: "Ivanti", Band: "8.3R7.x"}},
		// nuclei
		{"nuclei pulse-secure-version", detected(443, "nuclei", "nuclei:pulse-secure-version", "[pulse-secure-version] [http] [info] [9.1.14.18105]"), wantMatch{Vendor: "Ivanti", Band: "9.1R14.x"}},
		{"nuclei sonicwall-sslvpn-panel", detected(443, "nuclei", "nuclei:sonicwall-sslvpn-panel", "[sonicwall-sslvpn-panel] [http] [info]"), wantMatch{Vendor: "SonicWall"}},
		{"nuclei sonicwall-management-panel", detected(443, "nuclei", "nuclei:sonicwall-management-panel", "[sonicwall-management-panel] [http] [info]"), wantMatch{Vendor: "SonicWall"}},
		{"nuclei cisco-anyconnect-vpn", detected(443, "nuclei", "nuclei:cisco-anyconnect-vpn", "[cisco-anyconnect-vpn] [http] [info]"), wantMatch{Vendor: "Cisco"}},
		{"nuclei sonicwall email security", detected(443, "nuclei", "nuclei:sonicwall-email-security-detect", "[sonicwall-email-security-detect] [http] [info]"), wantMatch{}},
		// the appliances' own files
		{"the ive's passwd through the traversal", svc(443, httpProbe("GET", trav, 200, pulsePasswd)), wantMatch{Vendor: "Ivanti"}},
		{"the ive's hosts file", svc(443, httpProbe("GET", "/etc/hosts", 200, "## File generated by DSNet::Hosts::update at Wed Jul 24 11:10:52 2019\n\n127.0.0.1 localhost\n")), wantMatch{Vendor: "Ivanti"}},
		{"a module printing the ive's passwd", detected(443, "metasploit", "auxiliary/gather/pulse_secure_file_disclosure", "[*] Dumping /etc/passwd\n"+pulsePasswd), wantMatch{Vendor: "Ivanti"}},
		{"a generic linux passwd through the traversal", svc(443, httpProbe("GET", trav, 200, "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nwww-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\n")), wantMatch{}},
		{"the ive's passwd served by apache", svc(443, httpProbe("GET", trav, 200, pulsePasswd, "Server", "Apache/2.4.41 (Ubuntu)")), wantMatch{}},
		{"the sma's easyaccess tree under shellshock", svc(443, httpProbe("GET", "/cgi-bin/jarrewrite.sh", 200,
			"root:x:0:0:root:/root:/usr/sbin/cli\nUsage: /usr/src/EasyAccess/www/cgi-bin/jarrewrite.sh <jar/class file> <path-to-working directory>\n", "Content-Type", "application/x-sh")), wantMatch{Vendor: "SonicWall", Rule: "sonicwall-sma"}},
		// second batch: module successes, the asa's file_list listing
		{"pulse module success", detected(443, "metasploit", "exploit/linux/http/pulse_secure_cmd_exec",
			"[+] Setting session cookie: DSID=REDACTED\n[*] Obtaining CSRF token\n[+] Payload execution successful"), wantMatch{Vendor: "Ivanti"}},
		{"pulse module failure", detected(443, "metasploit", "exploit/linux/http/pulse_secure_cmd_exec",
			"[-] Exploit aborted due to failure: unexpected-reply: Could not obtain CSRF token"), wantMatch{}},
		{"cisco ios module success", detected(23, "metasploit", "auxiliary/scanner/telnet/cisco_ios_telnet_login",
			"[+] 192.0.2.1:23 - Login Successful: cisco:cisco"), wantMatch{}},
		{"sonicwall gms module success", detected(443, "metasploit", "exploit/multi/http/sonicwall_gms_upload",
			"[+] Successfully uploaded"), wantMatch{}},
		{"the asa's file_list through the traversal", svc(443, httpProbe("GET", "/+CSCOU+/../+CSCOE+/files/file_list.json?path=/", 200,
			"[\n{'name':'customization','size':0,'type':'1','mdate':1532972199}\n,{'name':'+CSCOE+','size':0,'type':'1','mdate':1532971871}\n")), wantMatch{Vendor: "Cisco"}},
		// third batch: tools' positive verdicts, favicons
		{"a checker's verdict naming sonicos", detected(443, "poc", "poc.py", "[*] Checking https://192.0.2.1:443\n[+] Confirmed target is running SonicOS"), wantMatch{Vendor: "SonicWall"}},
		{"a checker's negative verdict", detected(443, "poc", "poc.py", "[-] Target is not running SonicOS"), wantMatch{}},
		{"a verdict naming only a cve", detected(443, "poc", "poc.py", "[+] Target looks vulnerable to CVE-2023-46805"), wantMatch{}},
		{"the sma favicon", svc(443, favicon(-1153950306)), wantMatch{Vendor: "SonicWall"}},
		{"another favicon", svc(443, favicon(12345)), wantMatch{}},
		{"nuclei favicon-detect sonicwall", detected(443, "nuclei", "nuclei:favicon-detect", "name: favicon-detection; matcher: sonicwall; tags: tech,favicon"), wantMatch{Vendor: "SonicWall"}},
		{"nuclei favicon-detect other", detected(443, "nuclei", "nuclei:favicon-detect", "name: favicon-detection; matcher: cisco-meraki; tags: tech,favicon"), wantMatch{}},
		{"the easyaccess tree served by nginx", svc(443, httpProbe("GET", "/cgi-bin/jarrewrite.sh", 200,
			"Usage: /usr/src/EasyAccess/www/cgi-bin/jarrewrite.sh\n", "Server", "nginx")), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkMatch(t, rules, tt.svc, tt.want) })
	}
}

// TestRules_GroupU2NmapXML reads nmap's own XML through the nmap-xml adapter,
// as a scan file carries it: an ASA vulnerability script's finding (kept as
// a probe the rules read) and http-favicon's SonicWall (kept in
// detected.info) name their vendors; a favicon nmap names otherwise does not.
func TestRules_GroupU2NmapXML(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	host := func(addr, script, output string) string {
		return fmt.Sprintf(`<host><status state="up"/><address addr="%s" addrtype="ipv4"/><ports>
<port protocol="tcp" portid="443"><state state="open"/><service name="https" tunnel="ssl"/>
<script id="%s" output="%s"/></port></ports></host>`, addr, script, output)
	}
	xml := `<?xml version="1.0"?><nmaprun scanner="nmap" start="1700000000">` +
		host("192.0.2.10", "http-vuln-cve2014-2128", "&#xa;  VULNERABLE:&#xa;  Cisco ASA SSL VPN Authentication Bypass Vulnerability&#xa;    State: VULNERABLE&#xa;") +
		host("192.0.2.11", "http-favicon", "SonicWall") +
		host("192.0.2.12", "http-favicon", "Apache on Mac OS X") + `</nmaprun>`
	got, named := matchNmapXML(t, rules, xml)
	if len(got) != 3 {
		t.Fatalf("got %d observations, want 3", len(got))
	}
	for i, want := range []string{"Cisco", "SonicWall", ""} {
		if named[i] != (want != "") || got[i].Vendor != want {
			t.Errorf("host %d: got %q (named %v), want %q", i, got[i].Vendor, named[i], want)
		}
	}
}
