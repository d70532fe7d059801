package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// sysDescrValue reads the value out of each rendering, whole (a quoted
// value over lines, snmpsim's hex), and nothing out of a bare value, a
// walk without sysDescr, or a "Description:" line off SNMP's port.
func TestSysDescrValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		port       int
		want       string
		ok         bool
	}{
		{"snmpwalk named", "SNMPv2-MIB::sysDescr.0 = STRING: Barracuda Spam Firewall\nSNMPv2-MIB::sysObjectID.0 = OID: SNMPv2-SMI::enterprises.20632", 161, "Barracuda Spam Firewall", true},
		{"snmpwalk numeric quoted", `.1.3.6.1.2.1.1.1.0 = STRING: "Check Point IPSO 4.2"`, 161, "Check Point IPSO 4.2", true},
		{"snmpwalk iso", `iso.3.6.1.2.1.1.1.0 = STRING: "RouterOS RB951G-2HnD"`, 161, "RouterOS RB951G-2HnD", true},
		{"quoted over lines", "SNMPv2-MIB::sysDescr.0 = STRING: \"Cisco Adaptive Security Appliance Version 9.8(4)\r\nCompiled on x\"\nSNMPv2-MIB::sysUpTime.0 = 1", 161, "Cisco Adaptive Security Appliance Version 9.8(4)\r\nCompiled on x", true},
		{"snmpsim", "1.3.6.1.2.1.1.1.0|4|Forcepoint NGFW 6.10.5\n1.3.6.1.2.1.1.2.0|6|1.3.6.1.4.1.1369.5.2", 161, "Forcepoint NGFW 6.10.5", true},
		{"snmpsim hex", "1.3.6.1.2.1.1.1.0|4x|5a7958454c20555347\n", 161, "ZyXEL USG", true},
		{"nmap", "| snmp-sysdescr: Juniper Networks, Inc. srx240h\n|_  System uptime: 1 day", 161, "Juniper Networks, Inc. srx240h", true},
		{"masscan", "sysDescr.0:SonicWALL SRA 4600", 161, "SonicWALL SRA 4600", true},
		{"bindings", "SNMP response received; bindings: {sysDescr=SonicWALL TZ 670 (SonicOS 7.1.1-7058), sysName=gw, sysObjectID=1.3.6.1.4.1.8741.1}", 161, "SonicWALL TZ 670 (SonicOS 7.1.1-7058)", true},
		{"shodan", "SNMP:\n  Versions:\n    2\n  Description: Fortinet FortiGate-60F\n", 161, "Fortinet FortiGate-60F", true},
		{"a description elsewhere", "Description: FortiGate", 443, "", false},
		{"bare value", "Barracuda Spam Firewall", 161, "", false},
		{"no sysDescr in the walk", "SNMPv2-MIB::sysName.0 = STRING: gw1", 161, "", false},
		{"empty value", "SNMPv2-MIB::sysDescr.0 = STRING: ", 161, "", false},
		{"bad hex", "1.3.6.1.2.1.1.1.0|4x|zz\n", 161, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := sysDescrValue(tt.text, tt.port)
			if got != tt.want || ok != tt.ok {
				t.Errorf("got %q %v, want %q %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// A scanner's report quoted in a banner gives the identification the
// rules read when the observation has none (a CPE, Greenbone's "Detected"
// line with its version line), and the version an identification lacks
// (Nessus's "Installed version"); a page that names a CPE gives nothing,
// nor does a version line without a product.
func TestRules_ReportInABanner(t *testing.T) {
	checkMatches(t, []matchCase{
		{"greenbone detection", bannerService(443, "tcp", "Detected Palo Alto PAN-OS\n\nVersion:       10.2.4\nLocation:      /php/login.php\nCPE:           cpe:/o:paloaltonetworks:pan-os:10.2.4\n"), wantMatch{Vendor: "Palo Alto Networks", Version: "10.2.4"}},
		{"a cpe alone", bannerService(443, "tcp", "cpe:2.3:o:fortinet:fortios:7.0.12:*:*:*:*:*:*:*"), wantMatch{Vendor: "Fortinet", Version: "7.0.12"}},
		{"nessus installed version", &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{By: "nessus", Product: "Palo Alto Networks PAN-OS"},
			Probes: []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.TextBody("  URL               : https://192.0.2.1/\n  Installed version : 9.1.4\n")}}}}, wantMatch{Vendor: "Palo Alto Networks", Version: "9.1.4"}},
		{"tenable asset os", bannerService(22, "tcp", "asset.operating_system: FortiOS on Fortinet FortiGate\nasset.system_type: firewall\n"), wantMatch{Vendor: "Fortinet"}},
		{"nessus os identification", bannerService(443, "tcp", "Remote operating system : F5 Networks BIG-IP\nConfidence level : 95\n"), wantMatch{Vendor: "F5"}},
		{"another os", bannerService(22, "tcp", "Remote operating system : Linux Kernel 5.15 on Ubuntu 22.04\n"), wantMatch{}},
		{"a page naming a cpe", tcpService(443, httpProbe("GET", "/nvd", 200, "<p>Affected: cpe:2.3:o:fortinet:fortios:7.0.12</p>")), wantMatch{}},
		{"a version line alone", bannerService(443, "tcp", "Version: 7.2.5\n"), wantMatch{}},
		{"another product detected", bannerService(443, "tcp", "Detected Apache HTTP Server\nVersion: 2.4.58\nCPE: cpe:/a:apache:http_server:2.4.58\n"), wantMatch{}},
	})
}
