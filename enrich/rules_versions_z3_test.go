package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_VersionFormsZ3 checks, per family, the forms in which scanners
// and people record the version of OpenVPN Access Server, MikroTik RouterOS,
// WatchGuard Fireware, Barracuda CloudGen, Array AG, Forcepoint NGFW,
// SoftEther, ocserv, Juniper (Junos, ScreenOS) and Microsoft RD Web / RD
// Gateway (group Z3, docs/rules-sources.md "Group Z3: versions"): page and
// asset stamps, headers, banners, SNMP sysDescr and version objects (as
// net-snmp prints them and as snmpsim recordings keep them), API answers,
// CLI output and the scanner's own version fields and CPEs. Each case is
// built from the public example the section cites; the look-alike cases
// must not yield a version from another field.
func TestRules_VersionFormsZ3(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	web := func(ps ...ingest.Probe) *ingest.Service { return tcpService(443, ps...) }
	text := bannerService
	named := func(port int, name, s string) *ingest.Service {
		return &ingest.Service{Port: port, Transport: "tcp", Probes: []ingest.Probe{{Name: name, Banner: &ingest.Banner{Received: ingest.TextBody(s)}}}}
	}
	det := func(product, version string, cpe ...string) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{By: "censys", Service: "https", Product: product, Version: version, CPE: cpe}}
	}
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		// MikroTik RouterOS
		{"routeros webfig h1", tcpService(80, httpProbe("GET", "/", 200, `<html><head><title>RouterOS router configuration page</title></head><body><h1>RouterOS v6.49.7</h1></body></html>`)), wantMatch{Vendor: "MikroTik", Version: "6.49.7"}},
		{"routeros ftp banner", text(21, "tcp", "220 MikroTik FTP server (MikroTik 6.42.7) ready\r\n"), wantMatch{Vendor: "MikroTik", Version: "6.42.7"}},
		{"routeros telnet banner", text(23, "tcp", "\r\n\r\nMikroTik v6.49.7 (long-term)\r\nLogin: "), wantMatch{Vendor: "MikroTik", Version: "6.49.7"}},
		{"routeros snmp mtxrLicVersion", text(161, "udp", "SNMPv2-MIB::sysDescr.0 = STRING: RouterOS CCR1009-7G-1C-1S+\nMIKROTIK-MIB::mtxrLicVersion.0 = STRING: 6.49.7"), wantMatch{Vendor: "MikroTik", Version: "6.49.7"}},
		{"routeros snmprec mtxrLicVersion", text(161, "udp", "1.3.6.1.2.1.1.1.0|4|RouterOS CRS317-1G-16S+\n1.3.6.1.2.1.1.2.0|6|1.3.6.1.4.1.14988.1\n1.3.6.1.4.1.14988.1.1.4.4.0|4|6.44.2"), wantMatch{Vendor: "MikroTik", Version: "6.44.2"}},
		{"routeros system resource print", text(22, "tcp", "                   uptime: 6w5d11h55m45s\r\n                  version: 6.48.6 (long-term)\r\n               build-time: Dec/03/2021 12:15:05\r\n              free-memory: 40.2MiB\r\n        architecture-name: mipsbe\r\n               board-name: hEX PoE lite\r\n                 platform: MikroTik\r\n"), wantMatch{Vendor: "MikroTik", Version: "6.48.6"}},
		{"routeros rest system resource", web(httpProbe("GET", "/rest/system/resource", 200, `{"architecture-name":"tile","board-name":"CCR1016-12S-1S+","build-time":"Dec/04/2020 14:19:51","cpu":"tilegx","cpu-count":"16","cpu-frequency":"1200","cpu-load":"0","factory-software":"6.44.6","free-hdd-space":"83439616","free-memory":"1503133696","platform":"MikroTik","total-hdd-space":"134217728","total-memory":"2046820352","uptime":"2d20h12m20s","version":"7.1beta4 (development)","write-sect-since-reboot":"1346","write-sect-total":"1346"}`)), wantMatch{Vendor: "MikroTik", Version: "7.1beta4"}},
		{"routeros nmap winbox version script", named(8291, "nmap:mikrotik-routeros-version", "\n  index:\nadvtool.dll  6.49.7\nsecure.dll   6.49.7\nroteros.dll  6.49.7\nsystem.dll   6.49.7\n"), wantMatch{Vendor: "MikroTik", Version: "6.49.7"}},
		{"routeros snmprec beta release", text(161, "udp", "1.3.6.1.2.1.1.1.0|4|RouterOS RB750Gr3\n1.3.6.1.2.1.1.2.0|6|1.3.6.1.4.1.14988.1\n1.3.6.1.4.1.14988.1.1.4.4.0|4|7.20beta2"), wantMatch{Vendor: "MikroTik", Version: "7.20beta2"}},
		{"routeros scanner beta version", det("MikroTik RouterOS sshd", "7.20beta2"), wantMatch{Vendor: "MikroTik", Version: "7.20beta2"}},
		{"routeros routerboard firmware is not the release", text(161, "udp", "1.3.6.1.2.1.1.1.0|4|RouterOS RB750Gr3\n1.3.6.1.2.1.1.2.0|6|1.3.6.1.4.1.14988.1\n1.3.6.1.4.1.14988.1.1.7.4.0|4|6.49"), wantMatch{Vendor: "MikroTik", StrictVersion: true, StrictBand: true}},
		{"routeros scanner version with channel", det("MikroTik RouterOS sshd", "6.49.7 (long-term)"), wantMatch{Vendor: "MikroTik", Version: "6.49.7"}},
		{"routeros nvd cpe", det("", "", "cpe:2.3:o:mikrotik:routeros:6.49.7:*:*:*:*:*:*:*"), wantMatch{Vendor: "MikroTik", Version: "6.49.7"}},
		// WatchGuard Fireware
		{"fireware page comment", web(httpProbe("GET", "/auth/login", 200, `<!DOCTYPE html><html><!-- Fireware v12.5.9 --><head><title>Fireware XTM User Authentication</title></head></html>`)), wantMatch{Vendor: "WatchGuard", Version: "12.5.9"}},
		{"fireware cli greeting", text(4118, "tcp", "--\r\n-- WatchGuard Technologies, Inc.\r\n-- WatchGuard Fireware OS Version 12.5.9.B660788\r\n--\r\n"), wantMatch{Vendor: "WatchGuard", Version: "12.5.9"}},
		{"fireware snmprec wgSoftwareVersion", text(161, "udp", "1.3.6.1.2.1.1.1.0|4|M400\n1.3.6.1.2.1.1.2.0|6|1.3.6.1.4.1.3097.1.5.49\n1.3.6.1.4.1.3097.6.3.1.0|4|12.5.9"), wantMatch{Vendor: "WatchGuard", Version: "12.5.9"}},
		{"fireware scanner version with build", det("WatchGuard Fireware", "12.5.9.B660788"), wantMatch{Vendor: "WatchGuard", Version: "12.5.9"}},
		{"fireware scanner version with update", det("WatchGuard Firebox", "12.5.9 Update 2"), wantMatch{Vendor: "WatchGuard", Version: "12.5.9"}},
		{"fireware nvd cpe", det("", "", "cpe:2.3:o:watchguard:fireware:12.5.9:update1:*:*:*:*:*:*"), wantMatch{Vendor: "WatchGuard", Version: "12.5.9"}},
		// Barracuda
		{"barracuda css stamp", web(httpProbe("GET", "/cgi-mod/index.cgi", 200, `<title>Barracuda Email Security Gateway</title><link rel="stylesheet" href="/barracuda.css?v=8.1.0.003">`)), wantMatch{Vendor: "Barracuda", Version: "8.1.0.003"}},
		{"cloudgen scanner version", det("Barracuda CloudGen Firewall", "8.3.1"), wantMatch{Vendor: "Barracuda", Version: "8.3.1"}},
		{"cloudgen nvd cpe", det("", "", "cpe:2.3:o:barracuda:cloudgen_firewall_firmware:8.0.1:*:*:*:*:*:*:*"), wantMatch{Vendor: "Barracuda", Version: "8.0.1"}},
		// Array AG
		{"array snmp sysDescr", text(161, "udp", "Hardware: Array AG1000 Intel(R) Xeon(R) CPU - Software: ArrayOS Rel.AG.9.4.0.481 build on Tue Jun 28 16:20:47 2016"), wantMatch{Vendor: "Array Networks", Version: "9.4.0.481"}},
		{"array show version", text(22, "tcp", "AN(config)#show version\r\nSystem CPU: Intel(R) Xeon(R) CPU\r\nSystem RAM: 8192 MB\r\nModel: Array AG1000\r\nSoftware: ArrayOS Rel.AG.9.4.0.481 build on Tue Jun 28 16:20:47 2016\r\n"), wantMatch{Vendor: "Array Networks", Version: "9.4.0.481"}},
		{"array scanner version", det("Array Networks AG", "Rel.AG.9.4.0.481"), wantMatch{Vendor: "Array Networks", Version: "9.4.0.481"}},
		{"array nvd cpe", det("", "", "cpe:2.3:o:arraynetworks:arrayos_ag:9.4.0.481:*:*:*:*:*:*:*"), wantMatch{Vendor: "Array Networks", Version: "9.4.0.481"}},
		// Forcepoint NGFW
		{"ngfw client auth banner", text(2543, "tcp", "StoneGate firewall (6.10.10.26506)\r\nUsername: "), wantMatch{Vendor: "Forcepoint", Version: "6.10.10.26506"}},
		{"ngfw snmprec fwSoftwareVersion", text(161, "udp", "1.3.6.1.2.1.1.1.0|4|Forcepoint NGFW Firewall/VPN\n1.3.6.1.2.1.1.2.0|6|1.3.6.1.4.1.1369.5.2\n1.3.6.1.4.1.1369.5.2.1.1.0|4|Forcepoint NGFW version 6.10.10.26506"), wantMatch{Vendor: "Forcepoint", Version: "6.10.10"}},
		{"flexedge snmprec version", text(161, "udp", "1.3.6.1.2.1.1.1.0|4|Forcepoint FlexEdge Secure SD-WAN Engine\n1.3.6.1.2.1.1.2.0|6|1.3.6.1.4.1.47565.1.1\n1.3.6.1.4.1.47565.1.1.1.1.0|4|7.1.1.29059"), wantMatch{Vendor: "Forcepoint", Version: "7.1.1"}},
		{"ngfw scanner version", det("Forcepoint NGFW", "6.10.10"), wantMatch{Vendor: "Forcepoint", Version: "6.10.10"}},
		{"ngfw nvd cpe", det("", "", "cpe:2.3:o:forcepoint:next_generation_firewall:6.8.0:*:*:*:*:*:*:*"), wantMatch{Vendor: "Forcepoint", Version: "6.8.0"}},
		// SoftEther
		{"softether vpncmd ServerInfoGet", text(5555, "tcp", "Item                |Value\r\n--------------------+--------------------------------\r\nProduct Name        |SoftEther VPN Server (64 bit)\r\nVersion             |Version 4.38 Build 9760   (English)\r\n"), wantMatch{Vendor: "SoftEther", Version: "4.38.9760"}},
		{"softether server log", text(5555, "tcp", "2023-05-01 10:00:00.000 Server product name: \"SoftEther VPN Server (64 bit)\", Server version: 438, Server build number: 9760"), wantMatch{Vendor: "SoftEther", Version: "4.38.9760"}},
		{"softether scanner version build", det("SoftEther VPN", "4.38 Build 9760"), wantMatch{Vendor: "SoftEther", Version: "4.38.9760"}},
		{"softether scanner version release tag", det("SoftEther VPN Server", "v4.38-9760-rtm"), wantMatch{Vendor: "SoftEther", Version: "4.38.9760"}},
		{"softether nvd cpe with build", det("", "", "cpe:2.3:a:softether:vpn:4.41-9782:*:*:*:*:*:*:*"), wantMatch{Vendor: "SoftEther", Version: "4.41.9782"}},
		{"softether nvd cpe", det("", "", "cpe:2.3:a:softether:vpn:4.38:*:*:*:*:*:*:*"), wantMatch{Vendor: "SoftEther", Band: "4.38.x"}},
		// ocserv
		{"ocserv x-cstp-server-name", web(httpProbe("GET", "/", 200, "", "X-CSTP-Server-Name", "ocserv 1.1.6")), wantMatch{Vendor: "OpenConnect", Version: "1.1.6"}},
		{"ocserv scanner version", det("ocserv", "1.1.6"), wantMatch{Vendor: "OpenConnect", Version: "1.1.6"}},
		// occtl's status names ocserv (group AQ9, 95-aq9-thin.yaml: "Sec-mod" is ocserv's own
		// process) but carries no release: the gap Z3 recorded stays asserted (no version, no band).
		{"ocserv occtl show status", text(22, "tcp", "Status: online\r\nServer PID: 1234\r\nSec-mod PID: 1235\r\nUp since: 2023-05-01 10:00 (  1d 2h)\r\nActive sessions: 3\r\n"), wantMatch{Vendor: "OpenConnect", StrictVersion: true, StrictBand: true}},
		// Juniper
		{"junos ntp system", text(123, "udp", `version="ntpd 4.2.0-a Thu Sep 29 05:52:15  2016 (1)", processor="i386", system="JUNOS15.1X49-D70.3", leap=0`), wantMatch{Vendor: "Juniper Networks", Version: "15.1X49-D70.3"}},
		{"junos snmp sysDescr", text(161, "udp", "Juniper Networks, Inc. srx340 internet router, kernel JUNOS 15.1X49-D120.3, Build date: 2017-11-04 21:55:34 UTC Copyright (c) 1996-2017 Juniper Networks, Inc."), wantMatch{Vendor: "Juniper Networks", Version: "15.1X49-D120.3"}},
		{"junos show version", text(22, "tcp", "node0:\r\n--------------------------------------------------------------------------\r\nHostname: lab\r\nModel: srx1500\r\nJunos: 19.4R3-S1.3\r\nJUNOS OS Kernel 64-bit  [20201028.e1cef1d_builder_stable_11]\r\n"), wantMatch{Vendor: "Juniper Networks", Version: "19.4R3-S1.3"}},
		{"junos junoscript greeting", named(3221, "junoscript", `<?xml version="1.0" encoding="us-ascii"?>`+"\n"+`<junoscript xmlns="http://xml.juniper.net/xnm/1.1/xnm" xmlns:junos="http://xml.juniper.net/junos/12.1X46/junos" schemaLocation="http://xml.juniper.net/junos/12.1X46/junos junos/12.1X46/junos.xsd" os="JUNOS" release="12.1X46-D40.2" hostname="srx1" version="1.0">`), wantMatch{Vendor: "Juniper Networks", Version: "12.1X46-D40.2"}},
		{"junos scanner version", det("Junos OS", "20.4R3-S1"), wantMatch{Vendor: "Juniper Networks", Version: "20.4R3-S1"}},
		{"junos nvd cpe", det("", "", "cpe:2.3:o:juniper:junos:20.4:r3-s1:*:*:*:*:*:*"), wantMatch{Vendor: "Juniper Networks", Version: "20.4R3-S1"}},
		{"junos nvd cpe X train", det("", "", "cpe:2.3:o:juniper:junos:15.1x49:d120:*:*:*:*:*:*"), wantMatch{Vendor: "Juniper Networks", Version: "15.1X49-D120"}},
		{"screenos snmp sysDescr", text(161, "udp", "SSG5-Serial version 6.3.0r24.0 (SN: 0000000000000000, Firewall+VPN)"), wantMatch{Vendor: "Juniper Networks", Version: "6.3.0r24.0"}},
		{"screenos get system", text(22, "tcp", "Product Name: SSG5-Serial\r\nSerial Number: 0000000000000000, Control Number: 00000000\r\nHardware Version: 0710(0)-(00), FPGA checksum: 00000000, VLAN1 IP (0.0.0.0)\r\nFlash Type: Samsung\r\nSoftware Version: 6.3.0r12.0, Type: Firewall+VPN\r\nFeature: AV-K\r\nCompiled by build_master at: Mon Jul 16 10:00:00 PDT 2012\r\nFile Name: ssg5ssg20.6.3.0r12.0, Checksum: 00000000\r\n"), wantMatch{Vendor: "Juniper Networks", Version: "6.3.0r12.0"}},
		{"screenos cpe whole release", det("", "", "cpe:2.3:o:juniper:screenos:6.3.0r12:*:*:*:*:*:*:*"), wantMatch{Vendor: "Juniper Networks", Version: "6.3.0r12"}},
		{"screenos greenbone cpe", det("", "", "cpe:/o:juniper:screenos:6.2.0r18.0"), wantMatch{Vendor: "Juniper Networks", Version: "6.2.0r18.0"}},
		{"screenos scanner version", det("NetScreen ScreenOS", "6.3.0r19.0"), wantMatch{Vendor: "Juniper Networks", Version: "6.3.0r19.0"}},
		{"screenos nvd cpe", det("", "", "cpe:2.3:o:juniper:screenos:6.3.0:r19:*:*:*:*:*:*"), wantMatch{Vendor: "Juniper Networks", Version: "6.3.0r19"}},
		// OpenVPN Access Server
		{"openvpn as log", text(943, "tcp", "2023-05-01T10:00:00+0000 [stdout#info] ACCESS SERVER starting, version=2.11.3"), wantMatch{Vendor: "OpenVPN Inc.", Version: "2.11.3"}},
		{"openvpn as scanner version", det("OpenVPN Access Server", "2.11.3"), wantMatch{Vendor: "OpenVPN Inc.", Version: "2.11.3"}},
		{"openvpn as nvd cpe", det("", "", "cpe:2.3:a:openvpn:openvpn_access_server:2.11.3:*:*:*:*:*:*:*"), wantMatch{Vendor: "OpenVPN Inc.", Version: "2.11.3"}},
		// Microsoft RD Web / RD Gateway
		{"rdweb ntlm product version", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{httpProbe("GET", "/RDWeb/Pages/en-US/login.aspx", 200, `<?xml version="1.0" encoding="UTF-8"?>\n<?xml-stylesheet type="text/xsl" href="../Site.xsl"?>\n<?xml-stylesheet type="text/css" href="../RenderFail.css"?>\n<RDWAPage helpurl="http://go.microsoft.com/fwlink/?LinkId=141038" domainuser="" workspacename="RD Web Access" baseurl="https://rds01.corp.example.com/RDWeb/">`, "Server", "Microsoft-IIS/10.0"), {Name: "nmap:http-ntlm-info", Banner: &ingest.Banner{Received: ingest.TextBody("\n  Target_Name: CORP\n  NetBIOS_Domain_Name: CORP\n  NetBIOS_Computer_Name: RDS01\n  DNS_Domain_Name: corp.example.com\n  DNS_Computer_Name: rds01.corp.example.com\n  Product_Version: 10.0.17763\n")}}}}, wantMatch{Vendor: "Microsoft", Band: "Windows Server 2019"}},
		{"rdweb shodan ntlm os build", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{httpProbe("GET", "/RDWeb/Pages/en-US/login.aspx", 200, `<?xml version="1.0" encoding="UTF-8"?>\n<?xml-stylesheet type="text/xsl" href="../Site.xsl"?>\n<?xml-stylesheet type="text/css" href="../RenderFail.css"?>\n<RDWAPage helpurl="http://go.microsoft.com/fwlink/?LinkId=141038" domainuser="" workspacename="RD Web Access" baseurl="https://rds01.corp.example.com/RDWeb/">`, "Server", "Microsoft-IIS/10.0"), {Banner: &ingest.Banner{Received: ingest.TextBody("NTLM Info:\n  OS: Windows 10 (version 1809)/Windows Server 2019 (version 1809)\n  OS Build: 10.0.20348\n  Target Name: CORP\n")}}}}, wantMatch{Vendor: "Microsoft", Band: "Windows Server 2022"}},
		{"rdweb iis 10 only", web(httpProbe("GET", "/RDWeb/Pages/en-US/login.aspx", 200, `<?xml version="1.0" encoding="UTF-8"?>\n<?xml-stylesheet type="text/xsl" href="../Site.xsl"?>\n<?xml-stylesheet type="text/css" href="../RenderFail.css"?>\n<RDWAPage helpurl="http://go.microsoft.com/fwlink/?LinkId=141038" domainuser="" workspacename="RD Web Access" baseurl="https://rds01.corp.example.com/RDWeb/">`, "Server", "Microsoft-IIS/10.0")), wantMatch{Vendor: "Microsoft", Band: "Windows Server 2016 or later"}},
		{"rd scanner with windows server cpe", det("Microsoft Remote Desktop Gateway", "", "cpe:2.3:o:microsoft:windows_server_2012:r2:*:*:*:*:*:*:*"), wantMatch{Vendor: "Microsoft", Band: "Windows Server 2012 R2"}},
		{"rd scanner with windows server 2019 cpe", det("Microsoft Remote Desktop Web Access", "", "cpe:2.3:o:microsoft:windows_server_2019:-:*:*:*:*:*:*:*"), wantMatch{Vendor: "Microsoft", Band: "Windows Server 2019"}},
		{"rdgateway iis 8.5", web(httpProbe("RPC_IN_DATA", "/rpc/rpcproxy.dll", 401, "", "Server", "Microsoft-IIS/8.5", "WWW-Authenticate", "Negotiate")), wantMatch{Vendor: "Microsoft"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, tt.want)
		})
	}
}
