package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_Answers checks 75-answers.yaml's classes beyond the captures
// that found them (docs/rules.md, "Answers read through the appliance"),
// and the look-alikes they must not name.
func TestRules_Answers(t *testing.T) {
	web := func(method, path string, status int, body string, headers ...string) *ingest.Service {
		return tcpService(443, httpProbe(method, path, status, body, headers...))
	}
	checkMatches(t, []matchCase{
		{"gaia passwd through any read", web("GET", "/download?file=../../etc/passwd", 200, "root:x:0:0:root:/root:/bin/bash\ncp_postgres:x:102:104::/home/cp_postgres:/sbin/nologin\ncpep_user:x:103:100::/home/cpep_user:/bin/false\n"), wantMatch{Vendor: "Check Point"}},
		{"a linux shadow", web("POST", "/clients/MyCRL", 200, "root:*:19872:0:99999:7:::\nsshd:*:19872:0:99999:7:::\n"), wantMatch{}},
		{"pan-os kernel", bannerService(22, "tcp", "Linux PA-3220 4.18.0-240.1.1.20.pan.x86_64 #1 SMP x86_64 GNU/Linux"), wantMatch{Vendor: "Palo Alto Networks"}},
		{"another vendor's kernel", bannerService(22, "tcp", "Linux host 4.18.0-240.1.1.el8.x86_64 #1 SMP x86_64 GNU/Linux"), wantMatch{}},
		{"ztp page", web("GET", "/php/ztp_gate.php", 200, "<html><head><title>Zero Touch Provisioning</title></head></html>"), wantMatch{Vendor: "Palo Alto Networks"}},
		{"ztp title elsewhere, no pendo", web("GET", "/", 200, "<html><head><title>Zero Touch Provisioning</title></head></html>"), wantMatch{}},
		{"php login redirect", web("GET", "/php/index.php", 302, "", "Location", "/php/login.php?", "Cache-Control", "no-cache; no-store"), wantMatch{Vendor: "Palo Alto Networks"}},
		{"another php app's redirect", web("GET", "/", 302, "", "Location", "/php/login.php?", "Cache-Control", "no-cache"), wantMatch{}},
		{"ics license json", web("GET", "/api/v1/license/keys-status", 200, `{"ive-licCount":0,"ive-maxccu":2}`), wantMatch{Vendor: "Ivanti"}},
		{"poll interval outside the api", web("GET", "/options", 200, `{"poll_interval": 30, "block_message": ""}`), wantMatch{}},
		{"fortigate fabric status", web("GET", "/api/fabric/device/status", 200, `{"serial":"FGT60F0000000000","device_type":"fortigate","model":"FortiGate-60F","version":{"major":7,"minor":4,"patch":3},"build":{"number":2573}}`), wantMatch{Vendor: "Fortinet", Rule: "fortinet-fabric-device-status-fortios", Version: "7.4.3"}},
		{"fortimail fabric status", web("GET", "/api/fabric/device/status", 200, `{"serial":"FEVM0000","device_type":"fortimail","model":"FortiMail-VM","version":{"major":7,"minor":2,"patch":5}}`), wantMatch{Vendor: "Fortinet", Rule: "fortinet-fabric-device-status", Version: "7.2.5"}},
		{"netscaler error text", web("GET", "/", 0, "Http/1.1 Service Unavailable 2"), wantMatch{Vendor: "Citrix"}},
		{"an apache 500 text", web("GET", "/", 500, "HTTP/1.1 500 Internal Server Error"), wantMatch{}},
		{"gp getconfig error", web("POST", "/ssl-vpn/getconfig.esp", 200, "errors getting SSL/VPN config"), wantMatch{Vendor: "Palo Alto Networks"}},
		{"fortigate walk by number", bannerService(161, "udp", ".1.3.6.1.4.1.12356.101.4.1.3.0 = Gauge32: 4\n"), wantMatch{Vendor: "Fortinet", Rule: "fortinet-fortigate-mib-walk"}},
		{"fortigate walk by name", bannerService(161, "udp", "FORTINET-FORTIGATE-MIB::fgSysCpuUsage.0 = Gauge32: 4\n"), wantMatch{Vendor: "Fortinet"}},
		{"check_fortigate device line", bannerService(161, "udp", "Device: FG100FTK* (7.4.3,build2573,240201)\n"), wantMatch{Vendor: "Fortinet", Version: "7.4.3"}},
		{"fortinet core mib only (any Fortinet product)", bannerService(161, "udp", ".1.3.6.1.4.1.12356.100.1.1.1.0 = STRING: \"FAZ-VM\"\n"), wantMatch{}},
		{"netscaler walk snmpsim", bannerService(161, "udp", "1.3.6.1.4.1.5951.4.1.1.41.1.0|65|12\n"), wantMatch{Vendor: "Citrix"}},
		{"pan walk", bannerService(161, "udp", "SNMPv2-SMI::enterprises.25461.2.1.2.1.1.0 = STRING: \"10.2.4\"\n"), wantMatch{Vendor: "Palo Alto Networks"}},
		{"big-ip walk", bannerService(161, "udp", "F5-BIGIP-SYSTEM-MIB::sysGlobalStatMemoryUsed.0 = Counter64: 1\n"), wantMatch{Vendor: "F5"}},
		{"big-iq walk", bannerService(161, "udp", "F5-BIGIP-SYSTEM-MIB::sysProductName.0 = STRING: BIG-IQ\n"), wantMatch{}},
		{"check point walk", bannerService(161, "udp", "CHECKPOINT-MIB::svnVersion.0 = STRING: R81.20\n"), wantMatch{Vendor: "Check Point"}},
		{"another enterprise", bannerService(161, "udp", ".1.3.6.1.4.1.2011.5.25.31.1.1.1.1.5 = INTEGER: 4\n"), wantMatch{}},
		{"routeros ftp syst", bannerService(21, "tcp", "215 UNIX MikroTik 6.49.7\r\n"), wantMatch{Vendor: "MikroTik", Version: "6.49.7"}},
		{"nmap ftp-syst", tcpService(21, ingest.Probe{Name: "nmap:ftp-syst", Banner: &ingest.Banner{Received: ingest.TextBody("\n  SYST: UNIX MikroTik 6.39.2")}}), wantMatch{Vendor: "MikroTik", Version: "6.39.2"}},
		{"another ftp's syst", bannerService(21, "tcp", "215 UNIX Type: L8\r\n"), wantMatch{}},
		{"netscaler version string as a client prints it", bannerService(443, "tcp", "{'version': 'NetScaler NS14.1: Build 29.72.nc, Date: Aug 1 2024', 'mode': '1'}"), wantMatch{Vendor: "Citrix", Version: "14.1-29.72"}},
		{"routeros description", bannerService(161, "udp", "MikroTik RB4011iGS+ RouterOS 7.12.1"), wantMatch{Vendor: "MikroTik", Version: "7.12.1"}},
		{"zld description", bannerService(161, "udp", "ATP200 V5.38(ABFW.1) | 2024-01-11 10:00:00"), wantMatch{Vendor: "Zyxel", Version: "5.38"}},
		{"huawei usg is not zyxel", bannerService(161, "udp", "USG6350 V500R005C20SPC300"), wantMatch{}},
		{"f5 model over snmp", bannerService(161, "udp", "BIG-IP i5800"), wantMatch{Vendor: "F5"}},
		{"f5 model off snmp", bannerService(22, "tcp", "F5 BIG-IP 8400"), wantMatch{}},
	})
}

// TestRules_ImitationsAE checks the guards round AE's measurement led to
// (docs/rules.md, "Imitations"): imitations that copy a product's tells
// with a detail the product never writes, beside the product's own answer.
func TestRules_ImitationsAE(t *testing.T) {
	web := func(body string, headers ...string) *ingest.Service {
		return tcpService(443, httpProbe("GET", "/", 200, body, headers...))
	}
	checkMatches(t, []matchCase{
		{"fortios clearing cookie", web(`<html><script>top.location="/remote/login";</script></html>`, "Set-Cookie", "SVPNCOOKIE=; path=/; expires=Sun, 11 Mar 1984 12:00:00 GMT; secure; httponly;"), wantMatch{Vendor: "Fortinet"}},
		{"clearing cookie without its expiry", web(`<html><script>document.location="/remote/login?lang=en";</script></html>`, "Set-Cookie", "SVPNCOOKIE=; path=/; secure; httponly;"), wantMatch{}},
		{"panweb with its dash", web(`<html><head><title>GlobalProtect Portal</title></head></html>`, "Server", "PanWeb Server/ -"), wantMatch{Vendor: "Palo Alto Networks"}},
		{"panweb without it", web(`<html><head><title>GlobalProtect Portal</title></head></html>`, "Server", "PanWeb Server/"), wantMatch{}},
		{"webfig login by form", tcpService(80, httpProbe("GET", "/", 200, `<h1>RouterOS v6.48</h1><p>You have connected to a router. Administrative access only.</p><form action="/webfig" method="POST">`)), wantMatch{}},
		{"ocserv's cookies with its header", tcpService(443, httpProbe("POST", "/", 200, `<config-auth client="vpn" type="complete"><version who="sg">0.1(1)</version><auth id="success"></auth></config-auth>`, "X-Transcend-Version", "1", "Set-Cookie", "webvpncontext=abc; Secure; HttpOnly")), wantMatch{Vendor: "OpenConnect"}},
		{"the cookies without it", tcpService(443, httpProbe("POST", "/", 200, `<config-auth client="vpn" type="complete"><version who="sg">0.1(1)</version><auth id="success"></auth></config-auth>`, "Set-Cookie", "webvpncontext=abc; Secure", "Set-Cookie", "webvpn=abc; Secure")), wantMatch{}},
	})
}
