package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupAG2Tells checks the group AG2 tells (rules/83-ag2-writeups.yaml):
// the NetScaler and Junos kernels as uname and meterpreter print them, Junos's
// passwd read through J-Web, NetScaler's ns.log text leaked without its prefix
// and the nFactor InitialValue, SonicOS and FortiOS releases as bare SNMP
// values, SonicOS's NetExtender page on 4433 and the AG portal's Rel_AG_
// asset versions, with the look-alikes and near misses that must name nothing.
func TestRules_GroupAG2Tells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	page := func(port int, method, path, text string) *ingest.Service {
		return tcpService(port, httpProbe(method, path, 200, text))
	}
	tests := []struct {
		name, rule            string
		svc                   *ingest.Service
		vendor, version, band string
	}{
		{"netscaler sysinfo", "ag2-citrix-netscaler-kernel-uname",
			bannerService(443, "tcp", "Computer     : ns\nOS           : FreeBSD 11.4-NETSCALER-13.1 FreeBSD 11.4-NETSCALER-13.1 #0 43f2b6a56590(HEAD): Wed Aug 20 17:21:20 EEST 2025     root@h:/usr/obj/usr/home/build/adc/usr.src/sys/NS64\n"), "Citrix", "", "13.1.x"},
		{"netscaler uname -prsm", "ag2-citrix-netscaler-kernel-uname",
			bannerService(22, "tcp", "FreeBSD 11.4-NETSCALER-14.1 amd64 amd64\n"), "Citrix", "", "14.1.x"},
		{"plain freebsd uname", "",
			bannerService(22, "tcp", "FreeBSD fw1 11.4-RELEASE FreeBSD 11.4-RELEASE #0: Fri Jun 12 00:00:00 UTC 2020 root@amd64-builder:/usr/obj/usr/src/sys/GENERIC amd64"), "", "", ""},
		{"junos sysinfo", "ag2-juniper-junos-kernel-uname",
			bannerService(80, "tcp", "Computer     : ex1\nOS           : JUNOS ex1 12.3R7.7 JUNOS 12.3R7.7 #0: 2014-06-12 14:14:29 UTC     builder@tiabeth.juniper.net:/volume/build/junos/12.3/release/12.3R7.7/obj-arm/junos/bsd/kernels/JUNIPER-EX-2200/kernel arm\n"), "Juniper Networks", "12.3R7.7", ""},
		{"junos passwd read", "ag2-juniper-junos-passwd-file-read",
			page(8080, "POST", "/", "root:*:0:0:Charlie &:/root:/bin/csh\nnobody:*:65534:65534:Unprivileged user:/nonexistent:/sbin/nologin\njforce:*:2000:20::/var/home/jforce:/usr/sbin/cli\n"), "Juniper Networks", "", ""},
		{"stock freebsd passwd", "",
			page(80, "GET", "/", "root:*:0:0:Charlie &:/root:/bin/csh\ntoor:*:0:0:Bourne-again Superuser:/root:\nnobody:*:65534:65534:Unprivileged user:/nonexistent:/usr/sbin/nologin\n"), "", "", ""},
		{"citrixbleed 2 leaked log text", "ag2-citrix-netscaler-nslog-text-and-nfactor-initialvalue",
			page(443, "POST", "/p/u/doAuthentication.do", "<InitialValue>default SSLLOG SSL_HANDSHAKE_SUCCESS 9400562 0 : SPCBId 1 - ClientIP 10.0.0.1</InitialValue>"), "Citrix", "", ""},
		{"an initialvalue elsewhere", "",
			page(443, "POST", "/login", "<InitialValue>abc</InitialValue>"), "", "", ""},
		{"sonicos bare sysdescr", "ag2-sonicwall-sonicos-snmp-bare-release",
			bannerService(161, "udp", "SonicOS Enhanced 6.5.4.14-109n"), "SonicWall", "6.5.4.14-109n", ""},
		{"sonicos firmware object in a walk", "sonicwall-sonicos-mib-version",
			bannerService(161, "udp", "SNMPv2-SMI::enterprises.8741.2.1.1.3.0 = STRING: \"SonicOS Enhanced 5.8.1.7-4o\""), "SonicWall", "5.8.1.7-4o", ""},
		{"a page naming a sonicos release", "",
			page(443, "GET", "/kb", "SonicOS Enhanced 6.5.4.14-109n"), "", "", ""},
		{"fortios bare sysdescr", "ag2-fortinet-fortios-snmp-bare-release",
			bannerService(161, "udp", "FortiOS v7.0.5"), "Fortinet", "7.0.5", ""},
		{"fortios release inside a sentence", "",
			bannerService(161, "udp", "upgrade to FortiOS v7.0.5 planned"), "", "", ""},
		{"netextender page on 4433", "ag2-sonicwall-sslvpn-4433-netextender-page",
			page(4433, "GET", "/", "SonicWALL NetExtender SSL-VPN"), "SonicWall", "", ""},
		{"netextender download page on 443", "",
			page(443, "GET", "/", "Download SonicWall NetExtender for Windows"), "", "", ""},
		{"generic vpn on 4433", "",
			page(4433, "GET", "/", "Generic VPN Service"), "", "", ""},
		{"array ag rel asset (named by the portal rule, the release lent)", "fpdb-array-ag-proxy-links",
			page(443, "GET", "/prx/000/http/localhost/login", `<link rel="stylesheet" type="text/css" href="/prx/000/http/localh/portal.css?v=Rel_AG_9_4_0_233">`), "Array Networks", "9.4.0.233", ""},
		{"rel_ag outside the proxy path", "",
			page(443, "GET", "/", `<script src="/static/app.js?v=Rel_AG_9_4_0_233"></script>`), "", "", ""},
		{"pan-os disk-space answer", "ag2-paloalto-panos-partitions",
			page(443, "GET", "/api/", "<response status=\"success\"><result><![CDATA[ Filesystem Size Used Avail Use% Mounted on\n/dev/md5 100M 0 100M 12% /opt/pancfg\n/dev/md6 23G 2.2G 20G 11% /opt/panrepo\n]]></result></response>"), "Palo Alto Networks", "", ""},
		{"a df with one pan-like mount", "",
			page(443, "GET", "/", "Filesystem Size Used Avail Use% Mounted on\n/dev/sda1 20G 5G 15G 25% /opt/pancfg\n"), "", "", ""},
		{"fortios logincheck redirect field", "ag2-fortinet-sslvpn-logincheck-redir-field",
			page(10443, "POST", "/remote/login?lang=en", "redir=/remote/hostcheck_install"), "Fortinet", "", ""},
		{"the same text outside /remote/", "",
			page(443, "POST", "/login", "redir=/remote/hostcheck_install"), "", "", ""},
		{"asa logon hidden state", "ag2-cisco-asa-cscoe-logon-hidden-state",
			page(443, "GET", "/+CSCOE+/logon.html?reason=2&a0=63&auth_handle=x", `<input type="hidden" name="auth_handle" value="x">`), "Cisco", "", ""},
		{"hidden auth_handle elsewhere", "",
			page(443, "GET", "/logon.html", `<input type="hidden" name="auth_handle" value="x">`), "", "", ""},
		{"gaia shell with the suite path", "",
			bannerService(18190, "tcp", "uname -a\nLinux gw 5.14.0-427.13.1cpx86_64 #1 SMP x86_64 GNU/Linux\npwd\n/opt/CPsuite-R82.10/fw1/cpm-server\n"), "Check Point", "R82.10", ""},
		{"the suite path alone", "ag2-checkpoint-install-path-release",
			bannerService(22, "tcp", "FWDIR=/opt/CPsuite-R81.20/fw1\n"), "Check Point", "R81.20", ""},
		{"a cp-prefixed path of another product", "",
			bannerService(22, "tcp", "/opt/CPanel-R82.10/bin\n"), "", "", ""},
		{"sic dn in a tool's verdict", "ag2-checkpoint-sic-dn-cp-mgmt",
			bannerService(18190, "tcp", "Forged application bind accepted for SIC DN cn=cp_mgmt,o=gw-5622ce..zhyfvd"), "Check Point", "", ""},
		{"fireware passwd", "ag2-watchguard-fireware-system-files",
			bannerService(8080, "tcp", "system:x:2:96:WG System daemons:/:\nagent:x:93:96:WG Agent:/:\nadmin:x:109:109:Admin Cli Access:/etc/wg/admin-home:/usr/bin/cli\n"), "WatchGuard", "", ""},
		{"fireboxv uname", "ag2-watchguard-fireware-system-files",
			bannerService(8080, "tcp", "('Linux', 'FireboxV', '4.14.83', '#1 SMP Mon Sep 27 17:48:07 PDT 2021', 'x86_64')"), "WatchGuard", "", ""},
		{"fireware runtime files", "ag2-watchguard-fireware-system-files",
			bannerService(8080, "tcp", "['wgapi', 'wgmsg', 'wgif_eth0.cfg', 'iked.pid']"), "WatchGuard", "", ""},
		{"a generic passwd with an agent account", "",
			bannerService(22, "tcp", "agent:x:93:96:Monitoring Agent:/:\nadmin:x:1000:1000:Admin:/home/admin:/bin/bash\n"), "", "", ""},
		{"winbox file-read record", "ag2-metasploit-mikrotik-routeros",
			&ingest.Service{Port: 8291, Transport: "tcp", Detected: &ingest.Detected{By: "metasploit", Product: "auxiliary/gather/mikrotik_winbox_fileread", Info: "[*] 192.0.2.1 - Session ID: 54\n[*] 192.0.2.1 - Exploit successful, attempting to extract usernames & passwords"}}, "MikroTik", "", ""},
		{"winbox module that failed", "",
			&ingest.Service{Port: 8291, Transport: "tcp", Detected: &ingest.Detected{By: "metasploit", Product: "auxiliary/gather/mikrotik_winbox_fileread", Info: "[-] 192.0.2.1 - Exploit failed"}}, "", "", ""},
		{"firebox module verdict", "ag2-metasploit-watchguard-firebox",
			&ingest.Service{Port: 8080, Transport: "tcp", Detected: &ingest.Detected{By: "metasploit", Product: "exploit/linux/http/watchguard_firebox_unauth_rce_cve_2022_26318", Info: "[+] The target appears to be vulnerable."}}, "WatchGuard", "", ""},
		{"xcs module verdict", "",
			&ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{By: "metasploit", Product: "exploit/freebsd/http/watchguard_xcs_exec", Info: "[+] The target appears to be vulnerable."}}, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor, Rule: tt.rule, Version: tt.version, Band: tt.band, StrictVersion: true})
		})
	}
}
