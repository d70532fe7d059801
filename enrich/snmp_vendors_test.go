package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_SNMPVendors checks rules/59-snmp-vendors.yaml on the forms
// scanners print an SNMP agent's sysDescr and sysObjectID in: the bare
// value (nmap's snmp-sysdescr, Shodan), snmpwalk lines, numeric and
// MIB-named OIDs; and that other vendors' look-alike values name nothing.
func TestRules_SNMPVendors(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name            string
		banner          string
		vendor, product string
		version, band   string
	}{
		{"fortigate upper case", "FORTIGATE 200B", "Fortinet", "FortiGate", "", ""},
		{"fortiweb snmpwalk", `SNMPv2-MIB::sysDescr.0 = STRING: "FortiwebAz"`, "Fortinet", "FortiWeb", "", ""},
		{"fortigate oid mib form", "SNMPv2-MIB::sysObjectID.0 = OID: SNMPv2-SMI::enterprises.12356.101.1.1041", "Fortinet", "FortiGate", "", ""},
		{"fortigate oid numeric", ".1.3.6.1.2.1.1.2.0 = OID: .1.3.6.1.4.1.12356.101.1.1041", "Fortinet", "FortiGate", "", ""},
		{"pulse ive without product", "Pulse Secure,LLC,MAG-2600,8.0R14 (build 41869)", "Ivanti", "Connect Secure", "8.0R14", "8.0.x"},
		{"juniper sa", "Juniper Networks,Inc,VA-DTE,7.2R4 (build 21697)", "Juniper Networks", "Secure Access SSL VPN (IVE)", "7.2R4", "7.2.x"},
		{"juniper mag no build", "Juniper Networks,Inc,MAG-4610,7.2R10", "Juniper Networks", "Secure Access SSL VPN (IVE)", "7.2R10", "7.2.x"},
		{"policy secure", "Pulse Secure,LLC,Pulse Policy Secure,IC-6500,5.2R7.1 (build 37645)", "Ivanti", "Policy Secure", "5.2R7.1", "5.2.x"},
		{"pulse bare", "Pulse Connect Secure", "Ivanti", "Connect Secure", "", ""},
		{"ive oid", "iso.3.6.1.2.1.1.2.0 = OID: iso.3.6.1.4.1.12532.252.3.1", "Ivanti", "Connect Secure", "", ""},
		{"forcepoint", "Forcepoint NGFW Firewall/VPN", "Forcepoint", "Forcepoint NGFW", "", ""},
		{"zywall", "ZyWALL USG 300", "Zyxel", "ZyWALL/USG", "", ""},
		{"zyxel usg20-vpn", "USG20-VPN", "Zyxel", "ZyWALL/USG", "", ""},
		{"zyxel vpn series", "VPN100", "Zyxel", "ZyWALL/USG", "", ""},
		{"watchguard versioned", "WatchGuard Fireware v12.5.4", "WatchGuard", "Firebox", "12.5.4", "12.5.x"},
		{"cyberoam", "Cyberoam cloud partitio", "Sophos", "Cyberoam", "", ""},
		{"array apv", "Hardware: Array APV 2600 Intel(R) Pentium(R) CPU - Software: ArrayOS Rel.APV.8.5.0.92 build on Tue Jun 28 16:20:47 2016", "Array Networks", "ArrayOS (APV/ASF)", "8.5.0.92", "8.5.x"},
		{"array ag", "Hardware: Array AG1000 - Software: ArrayOS Rel.AG.9.4.0.170 build on Mon Jan 1 00:00:00 2018", "Array Networks", "AG SSL VPN", "9.4.0.170", "9.4.x"},
		{"f5 kernel nmap", "Linux F5_device 2.6.32-431.56.1.el6.f5.x86_64 #1 SMP Thu Dec 13 14:25:45 PST 2018 x86_64\n  System uptime: 3 days", "F5", "BIG-IP", "", ""},
		{"gaia r81 kernel", "Linux hostname 3.10.0-957.21.3cpx86_64 #1 SMP Thu Jan 13 17:48:54 IST 2022 x86_64", "Check Point", "Gaia", "", ""},
		{"splat kernel", "Linux hostname #1 2.6.18-92cp SMP Thu Apr 12 03:28:54 IDT 2012 i686", "Check Point", "Gaia", "", ""},
		{"sophos utm kernel", "Linux some.host.local 3.12.40-26.gc80f187.rb1-smp64 #1 SMP Wed Sep 30 19:29:45 UTC 2015 x86_64", "Sophos", "Sophos UTM", "", ""},
		{"netscaler sdx", "FreeBSD examplehost 8.4-NETSCALER-11.1 FreeBSD 8.4-NETSCALER-11.1 #6: Thu Dec 22 14:25:33 PST 2016", "Citrix", "NetScaler SDX", "", "11.1.x"},
		{"barracuda load balancer", "Barracuda Load Balancer ADC", "Barracuda", "Load Balancer ADC", "", ""},
		{"routeros", "RouterOS RB951G-2HnD", "MikroTik", "RouterOS", "", ""},
		{"asa oid", "1.3.6.1.4.1.9.1.670", "Cisco", "ASA", "", ""},
		{"screenos oid", "SNMPv2-SMI::enterprises.3224.1.29", "Juniper Networks", "ScreenOS", "", ""},
		{"panos model without series", "Palo Alto Networks PA-3220", "Palo Alto Networks", "PAN-OS", "", ""},
		{"masscan sysdescr", "sysDescr.0:WatchGuard Fireware v12.1", "WatchGuard", "Firebox", "12.1", "12.1.x"},
		{"masscan sysobjectid", "sysName.0:gw1\nsysObjectID.0:enterprise.3097.1.5.21", "WatchGuard", "Firebox", "", ""},
		{"firefly snmpwalk", "SNMPv2-MIB::sysDescr.0 = STRING: Juniper Networks, Inc. firefly-perimeter internet router, kernel JUNOS 12.1X47-D15.4 #0: 2014-11-12 02:13:59 UTC", "Juniper Networks", "vSRX (JUNOS)", "12.1X47-D15.4", "12.1.x"},
		{"vsrx oid", "SNMPv2-MIB::sysObjectID.0 = OID: SNMPv2-SMI::enterprises.2636.1.1.1.2.96", "Juniper Networks", "vSRX (JUNOS)", "", ""},
		{"watchguard os", "WatchGuard OS 5.2.0", "WatchGuard", "Firebox", "5.2.0", "5.2.x"},
		{"embedded ngx oid", "1.3.6.1.4.1.6983.1.2", "Check Point", "Gaia", "", ""},
		// any Junos device: Juniper Networks and its release, not as an SRX
		{"junos mx router", "Juniper Networks, Inc. mx960 internet router, kernel JUNOS 21.2R3-S2.9, Build date: 2022", "Juniper Networks", "Junos", "21.2R3-S2.9", "21.2.x"},
		// names nothing
		{"barracuda alone", "Barracuda", "", "", "", ""},
		{"plain rhel kernel", "Linux unitrends 3.10.0-862.14.4.el7.x86_64 #1 SMP Wed Sep 26 15:12:11 UTC 2018 x86_64", "", "", "", ""},
		{"vendor kernel not f5", "Linux ntnx-cvm 3.10.0-1160.76.1.el7.nutanix.20220817.cvm.x86_64 #1 SMP x86_64", "", "", "", ""},
		{"huawei usg", "USG6350", "", "", "", ""},
		{"huawei usg multi-line", "Huawei Versatile Routing Platform\r\nSoftware Version: VRP (R) software, Version 5.30 USG6350 V100R001C20SPC700", "", "", "", ""},
		{"stormshield", "NS-BSD SN2KXA16C086XXX amd64", "", "", "", ""},
		{"dell sonic", "SONiC Software Version: SONiC.4.4.1-Lite - HwSku: DELL-E3248P", "", "", "", ""},
		{"cisco ios oid", "1.3.6.1.4.1.9.1.543", "", "", "", ""},
		{"asa oid inside a longer one", "1.3.6.1.4.1.9.1.6700", "", "", "", ""},
		{"fortinet switch oid", "1.3.6.1.4.1.12356.106.1.2482", "", "", "", ""},
		{"zyxel ap oid", "1.3.6.1.4.1.890.1.15", "", "", "", ""},
		{"hp switch", "HP J9625A 2620-24-PoEP Switch, revision RA.16.02.0012", "", "", "", ""},
		{"bare firebox model", "M400", "", "", "", ""},
		{"mcafee web gateway", "McAfee Web Gateway 7;VMWare;VMware, Inc.", "", "", "", ""},
		{"smp kernel without hash", "Linux host 3.12.40-26-smp64 #1 SMP x86_64", "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &ingest.Service{Port: 161, Transport: "udp", Probes: []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.TextBody(tt.banner)}}}}
			checkMatch(t, rules, svc, wantMatch{Vendor: tt.vendor, Product: tt.product, Version: tt.version, Band: tt.band, StrictVersion: true, StrictBand: true})
		})
	}
}

// TestRules_SNMPEngineNmap checks the rules that read nmap's -sV name of an
// SNMPv3 agent (from the enterprise in its engine ID).
func TestRules_SNMPEngineNmap(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		product, vendor string
	}{
		{"Fortinet SNMP service", "Fortinet"},
		{"MikroTik router SNMP service", "MikroTik"},
		{"Cisco SNMP service", ""},
		{"net-snmp", ""},
	}
	for _, tt := range tests {
		t.Run(tt.product, func(t *testing.T) {
			svc := &ingest.Service{Port: 161, Transport: "udp", Detected: &ingest.Detected{By: "nmap", Service: "snmp", Product: tt.product}}
			checkMatch(t, rules, svc, wantMatch{Vendor: tt.vendor})
		})
	}
}

// TestRules_SNMPVendorsNmapXML runs nmap's XML through the nmap-xml adapter
// and the rules: the snmp-sysdescr script's output of an IVE and -sV's
// name of an SNMPv3 agent reach 59-snmp-vendors.yaml.
func TestRules_SNMPVendorsNmapXML(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	const xml = `<?xml version="1.0"?>
<nmaprun scanner="nmap" start="1700000000">
<host endtime="1700000100"><status state="up"/><address addr="192.0.2.11" addrtype="ipv4"/><ports>
<port protocol="udp" portid="161"><state state="open"/><service name="snmp" product="SNMPv1 server; net-snmp SNMPv3 server"/>
<script id="snmp-sysdescr" output="Pulse Secure,LLC,MAG-2600,8.0R14 (build 41869)&#xa;  System uptime: 40 days"/></port>
</ports></host>
<host endtime="1700000100"><status state="up"/><address addr="192.0.2.12" addrtype="ipv4"/><ports>
<port protocol="udp" portid="161"><state state="open"/><service name="snmp" product="Fortinet SNMP service" devicetype="firewall"/></port>
</ports></host></nmaprun>`
	got, named := matchNmapXML(t, rules, xml)
	if len(got) != 2 {
		t.Fatalf("%d observations, want 2", len(got))
	}
	if !named[0] || got[0].Vendor != "Ivanti" || got[0].ExactVersion != "8.0R14" {
		t.Errorf("ive = %+v %v, want Ivanti 8.0R14", got[0], named[0])
	}
	if !named[1] || got[1].Vendor != "Fortinet" {
		t.Errorf("snmpv3 = %+v %v, want Fortinet", got[1], named[1])
	}
}
