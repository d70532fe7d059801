package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_IKEAndSNMP checks the IKE vendor-ID, SNMP sysDescr and SSH rules
// (rules/58-ike.yaml, rules/59-snmp.yaml, rules/57-ssh.yaml) on the text scanners record:
// ike-scan's lines, nmap's script output, Shodan's isakmp banner.
func TestRules_IKEAndSNMP(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	svc := func(port int, text string) *ingest.Service {
		return bannerService(port, "udp", text)
	}
	tests := []struct {
		name         string
		port         int
		banner       string
		vendor, band string
		version      string
	}{
		{"ike-scan check point NGX", 500, "Main Mode Handshake returned HDR=(CKY-R=d3d5531f7a714d60) VID=f4ed19e0c114eb516faaac0ee37daf2807b4381f000000010000138d5ba4ce9a0000000018380000 (Firewall-1 NGX)", "Check Point", "", ""},
		{"check point NG FP3 version word", 500, "VID=f4ed19e0c114eb516faaac0ee37daf2807b4381f000000010000138b0000000000000000abcd0000 (Firewall-1 NG FP3)", "Check Point", "NG FP3", ""},
		{"nmap check point", 500, "vendor_id: Checkpoint VPN-1 / Firewall-1\n  version: NGX", "Check Point", "", ""},
		{"ike-scan cisco aggressive", 500, "Aggressive Mode Handshake returned HDR=(CKY-R=92ca5e88033673ed) VID=12f5f28c457168a9702d9fe274cc0100 (Cisco Unity) VID=afcad71368a1f1c96b8696fc77570100 (Dead Peer Detection v1.0) VID=09002689dfd6b712 (XAUTH)", "Cisco", "", ""},
		{"shodan cisco ikev2 copyright vid", 500, "VPN (IKE)\n\nVendor IDs:\n  - 434953434f28434f505952494748542926436f7079726967687420286329203230303920436973636f2053797374656d732c20496e632e\n  - 464c455856504e2d535550504f52544544", "Cisco", "", ""},
		{"fortigate", 500, "VID=1d6e178f6c2c0be284985465450fe9d4 VID=afcad71368a1f1c96b8696fc77570100 (Dead Peer Detection v1.0)", "Fortinet", "", ""},
		{"netscreen", 500, "VID=9b096d9ac3275a7d6fe8b91c583111b09efed1a0 (Netscreen)", "Juniper Networks", "", ""},
		{"ssg-550m screenos 6.2", 500, "VID=2c9d7e81995b9967d23f571ac641f9348122f1cc1200000014060000", "Juniper Networks", "6.2.x", ""},
		{"sonicwall", 500, "VID=404bf439522ca3f6 (SonicWall) VID=09002689dfd6b712 (XAUTH)", "SonicWall", "", ""},
		// the byte-separated forms of strongSwan's and libreswan's logs
		{"strongswan log colon hex", 500, "received unknown vendor ID: 1f:07:f7:0e:aa:65:14:d3:b0:fa:96:54:2a:50:01:00", "Cisco", "", ""},
		{"libreswan log spaced hex", 500, "ignoring unknown Vendor ID payload [69 93 69 22  87 41 c6 d4  ca 09 4c 93  e2 42 c9 de  19 e7 b7 c6  00 00 00 05  00 00 05 00]", "Juniper Networks", "", ""},
		{"libreswan names", 500, " received Vendor ID payload [Cisco-Unity]\n ignoring Vendor ID payload [Cisco VPN 3000 Series]", "Cisco", "", ""},
		{"inside a longer colon run", 500, "received unknown vendor ID: 00:1f:07:f7:0e:aa:65:14:d3:b0:fa:96:54:2a:50", "", "", ""},
		// names nothing: generic VIDs, Windows, strongSwan sending the Unity VID
		{"generic vids only", 500, "VID=09002689dfd6b712 (XAUTH) VID=afcad71368a1f1c96b8696fc77570100 (Dead Peer Detection v1.0) VID=4a131c81070358455c5728f20e95452f (RFC 3947 NAT-T)", "", "", ""},
		{"windows", 500, "vendor_id: Microsoft Windows 2000\n  attributes: \n    MS NT5 ISAKMPOAKLEY", "", "", ""},
		{"strongswan with unity", 500, "VID=882fe56d6fd20dbc2251613b2ebe5beb (strongSwan) VID=12f5f28c457168a9702d9fe274cc0100 (Cisco Unity)", "", "", ""},
		{"a longer hex run", 500, "data=00f4ed19e0c114eb516faaac0ee37daf2807b4381f", "", "", ""},
		// SNMP sysDescr
		{"asa sysdescr", 161, "Cisco Adaptive Security Appliance Version 9.8(4)20\n  System uptime: 12 days", "Cisco", "9.8.x", "9.8(4)20"},
		{"junos sysdescr", 161, "Juniper Networks, Inc. srx240h internet router, kernel JUNOS 12.1X44-D35.5, Build date: 2014-05-19 21:36:43 UTC", "Juniper Networks", "12.1.x", "12.1X44-D35.5"},
		{"sonicwall sysdescr", 161, "SonicWALL TZ 210 (SonicOS Enhanced 5.9.0.2-107o)", "SonicWall", "5.9.x", "5.9.0.2-107o"},
		{"sonicos 7 sysdescr", 161, "SonicWALL TZ 370 (SonicOS 7.0.1-5051-R2624)", "SonicWall", "7.0.x", "7.0.1-5051-R2624"},
		{"screenos sysdescr", 161, "NetScreen-ISG 1000 version 6.3.0r17b.0 (SN: 0000000000000, Firewall+VPN)", "Juniper Networks", "6.3.x", "6.3.0r17b.0"},
		{"fortigate sysdescr", 161, "FortiGate-100F", "Fortinet", "", ""},
		{"fortissh", 22, "SSH-2.0-FortiSSH_2.5\r\n", "Fortinet", "", ""},
		{"not fortissh", 22, "SSH-2.0-OpenSSH_9.6 FortiSSH-lookalike\r\n", "", "", ""},
		{"panos sysdescr", 161, "Palo Alto Networks PA-220 series firewall", "Palo Alto Networks", "", ""},
		{"ipso sysdescr", 161, "IPSO fw1 6.2-GA039 releng 1 04.14.2010-225515 i386", "Check Point", "", ""},
		{"cisco ios sysdescr", 161, "Cisco IOS Software, C2900 Software (C2900-UNIVERSALK9-M), Version 15.1(4)M4", "", "", ""},
		{"check point kernel sysdescr", 161, "Linux gw 2.6.18-92cpx86_64 #1 SMP x86_64", "Check Point", "", ""},
		{"linux sysdescr", 161, "Linux gw 2.6.18-92.el5 #1 SMP x86_64", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, svc(tt.port, tt.banner), wantMatch{Vendor: tt.vendor, Version: tt.version, Band: tt.band, StrictVersion: true, StrictBand: true})
		})
	}
}

// TestRules_NmapIKEAndSNMPScripts runs nmap's XML through the nmap-xml
// adapter and the rules: what the ike-version and snmp-sysdescr scripts
// printed reaches the rules as banner probes.
func TestRules_NmapIKEAndSNMPScripts(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	const xml = `<?xml version="1.0"?>
<nmaprun scanner="nmap" start="1700000000">
<host endtime="1700000100"><status state="up"/><address addr="192.0.2.10" addrtype="ipv4"/><ports>
<port protocol="udp" portid="500"><state state="open"/><service name="isakmp"/>
<script id="ike-version" output="&#xa;  vendor_id: Checkpoint VPN-1 / Firewall-1&#xa;  attributes: &#xa;    f4ed19e0c114eb516faaac0ee37daf2807b4381f000000010000138b00000000000000000000000000"/></port>
<port protocol="udp" portid="161"><state state="open"/><service name="snmp"/>
<script id="snmp-sysdescr" output="Cisco Adaptive Security Appliance Version 9.8(4)20&#xa;  System uptime: 12 days"/></port>
<port protocol="udp" portid="4500"><state state="open"/><service name="nat-t-ike"/>
<script id="ike-version" output="&#xa;  vendor_id: Microsoft Windows 2000&#xa;  attributes: &#xa;    MS NT5 ISAKMPOAKLEY"/></port>
<port protocol="tcp" portid="443"><state state="open"/><service name="https" tunnel="ssl"/>
<script id="http-cisco-anyconnect" output="&#xa;  version: 9.8(4)20&#xa;  tunnel-group: VPN&#xa;  group-alias: vpn"/></port>
<port protocol="tcp" portid="8443"><state state="open"/><service name="https-alt"/>
<script id="http-vuln-cve2018-13379" output="&#xa;  CVE-2018-13379: &#xa;    Host is vulnerable to CVE-2018-13379 (Fortinet SSL VPN)&#xa;    Path traversal: https://192.0.2.10:8443/remote/fgt_lang?lang=/../../../..//////////dev/cmdb/sslvpn_websession"/></port>
<port protocol="tcp" portid="8080"><state state="open"/><service name="http-proxy"/>
<script id="http-brute" output="&#xa;  Accounts: &#xa;    admin:admin - Valid credentials"/></port>
</ports></host></nmaprun>`
	got, named := matchNmapXML(t, rules, xml)
	if len(got) != 6 {
		t.Fatalf("%d observations, want 6", len(got))
	}
	if !named[3] || got[3].Vendor != "Cisco" || got[3].ExactVersion != "9.8(4)20" {
		t.Errorf("http-cisco-anyconnect = %+v %v, want Cisco 9.8(4)20", got[3], named[3])
	}
	if !named[4] || got[4].Vendor != "Fortinet" {
		t.Errorf("http-vuln-cve2018-13379 = %+v %v, want Fortinet", got[4], named[4])
	}
	if named[5] {
		t.Errorf("a brute-force script's output named %+v", got[5])
	}
	if !named[0] || got[0].Vendor != "Check Point" || got[0].VersionBand != "NG FP3" {
		t.Errorf("ike = %+v %v, want Check Point NG FP3", got[0], named[0])
	}
	if !named[1] || got[1].Vendor != "Cisco" || got[1].ExactVersion != "9.8(4)20" {
		t.Errorf("snmp = %+v %v, want Cisco 9.8(4)20", got[1], named[1])
	}
	if named[2] {
		t.Errorf("windows ike named %+v", got[2])
	}
}
