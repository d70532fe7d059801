package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupW4Tells checks the tells the group W4 round added (NTP
// readvar answers naming Junos and BIG-IP, testdata/fingerprints/README.md)
// Zyxel's DNS-filter block page, SecurePlatform's title and the
// CloudGen Firewall's SIP Server header, and the look-alikes they must not
// name: another ntpd's system variable, the release words outside
// `system="`, a DNS-filter portal that is not Zyxel's.
func TestRules_GroupW4Tells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	ntp := func(text string) *ingest.Service {
		return bannerService(123, "udp", text)
	}
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"junos ntpd readvar", ntp(`version="ntpd 4.2.0-a Wed Aug 12 04:22:47 UTC 2009 (1)", processor="i386", system="JUNOS9.3R4.4", leap=11, stratum=16,`), wantMatch{Vendor: "Juniper Networks", Version: "9.3R4.4"}},
		{"junos readvar without ntpd version", ntp(`processor="i386", system="JUNOS12.1X46-D40.2", leap=0, stratum=3`), wantMatch{Vendor: "Juniper Networks", Version: "12.1X46-D40.2"}},
		{"big-ip 4.x ntpd readvar", ntp(`version="ntpd 4.1.1a@1.791 Fri Aug  8 04:08:19 PDT 2003 (1)", processor="i386", system="BIG-IPBIG-IP 4.5PTF-0", leap=3, stratum=16,`), wantMatch{Vendor: "F5", Version: "4.5PTF-0"}},
		{"linux ntpd readvar", ntp(`version="ntpd 4.2.8p15@1.3728-o", processor="x86_64", system="Linux/5.10.0-28-amd64", leap=0, stratum=2`), wantMatch{}},
		{"freebsd ntpd readvar", ntp(`version="ntpd 4.2.8p17-a", processor="amd64", system="FreeBSD/13.2-RELEASE-p4", leap=0, stratum=3`), wantMatch{}},
		{"the word JUNOS in free text", ntp(`JUNOS9.3R4.4 release notes mirror`), wantMatch{}},
		{"zyxel dns-filter block page", &ingest.Service{Port: 80, Transport: "tcp", Probes: []ingest.Probe{httpProbe("GET", "/", 200, "<html><head><title>Zyxel Security Cloud-DNS Filter Service Portal</title></head></html>")}}, wantMatch{Vendor: "Zyxel"}},
		{"securePlatform deployment manager title", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{httpProbe("GET", "/deploymentmanager/index.jsp", 200, "<title>SecurePlatform NG with Application Intelligence (R55) </title>")}}, wantMatch{Vendor: "Check Point", Version: "R55"}},
		{"a page about SecurePlatform", &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{httpProbe("GET", "/", 200, "<title>Migrating from SecurePlatform to Gaia</title>")}}, wantMatch{}},
		{"cloudgen firewall sip server", bannerService(5060, "udp", "SIP/2.0 200 OK\r\nServer: Barracuda CloudGen Firewall\r\n"), wantMatch{Vendor: "Barracuda"}},
		{"another sip server", bannerService(5060, "udp", "SIP/2.0 200 OK\r\nServer: Asterisk PBX 18.9.0\r\n"), wantMatch{}},
		{"another vendor's dns-filter portal", &ingest.Service{Port: 80, Transport: "tcp", Probes: []ingest.Probe{httpProbe("GET", "/", 200, "<html><head><title>Security Cloud DNS Filter Service Portal</title></head></html>")}}, wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, tt.want)
		})
	}
}
