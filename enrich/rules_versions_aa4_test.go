package enrich

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_VersionFormsAA4 checks the version forms of group AA4: the
// vendors' own SNMP version objects (enrich/rules/58-snmp-versions.yaml),
// each in the renderings a walk is recorded in (snmpsim's OID|4|value,
// net-snmp's numeric, iso., enterprises. and MIB-named lines), alone or
// beside a sysDescr; the look-alikes that must not take a release from
// them (Panorama, BIG-IQ and Policy Secure answering the same MIBs: no
// version, and neither PAN-OS, BIG-IP nor Connect Secure named; a generic object
// name without its MIB and another enterprise's subtree: nothing named);
// and batch 2's suffixes (RouterOS pre-releases, IVE and SonicOS
// hotfixes, a beta tag that gives no release) and RouterOS 2.x's sshd;
// and batch 3's CLI words (Check Point's fw ver, the SFOS console banner).
func TestRules_VersionFormsAA4(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	snmp := func(s string) wantService { return wantService{port: 161, transport: "udp", text: s} }
	tests := []struct {
		name string
		svc  wantService
		want wantMatch
	}{
		// FortiGate: fgSysVersion
		{"fgSysVersion snmprec with empty sysDescr", snmp("1.3.6.1.2.1.1.1.0|4|\n1.3.6.1.2.1.1.2.0|6|1.3.6.1.4.1.12356.101.1.644\n1.3.6.1.4.1.12356.101.4.1.1.0|4|v7.2.6,build1575,230926 (GA.F)"), wantMatch{Vendor: "Fortinet", Version: "7.2.6", Band: "7.2.x"}},
		{"fgSysVersion enterprises form alone", snmp(`SNMPv2-SMI::enterprises.12356.101.4.1.1.0 = STRING: "v7.0.6,build0366,220606 (GA.F)"`), wantMatch{Vendor: "Fortinet", Version: "7.0.6"}},
		{"fgSysVersion iso form", snmp(`iso.3.6.1.4.1.12356.101.4.1.1.0 = STRING: "v7.6.3,build3510,250415 (GA.M)"`), wantMatch{Vendor: "Fortinet", Version: "7.6.3"}},
		{"fgSysVersion by name", snmp("FORTINET-FORTIGATE-MIB::fgSysVersion.0 = STRING: v6.4.8,build1914,211117 (GA)"), wantMatch{Vendor: "Fortinet", Version: "6.4.8"}},
		{"fgSysVersion without patch gives the band", snmp("FORTINET-FORTIGATE-MIB::fgSysVersion.0 = STRING: v5.0,build0252,130627 (GA Patch 2)"), wantMatch{Vendor: "Fortinet", StrictVersion: true, Band: "5.0.x"}},
		{"fortigate sysDescr as a walk line", snmp("SNMPv2-MIB::sysDescr.0 = STRING: FortiGate-60E v6.4.5,build1828,210217 (GA)"), wantMatch{Vendor: "Fortinet", Version: "6.4.5"}},
		{"fortigate sysDescr in nmap's snmp-sysdescr", snmp("| snmp-sysdescr: FortiGate-100F v7.0.12,build0523,230629 (GA.M)\n|_  System uptime: 12 days"), wantMatch{Vendor: "Fortinet", Version: "7.0.12"}},
		{"netscaler sysDescr in shodan's snmp banner", snmp("SNMP:\n  Versions:\n    1\n    2\n  Description: NetScaler NS13.0: Build 79.64.nc, Date: Dec 16 2020, 09:08:51   (64-bit)\n"), wantMatch{Vendor: "Citrix", Version: "13.0-79.64"}},
		{"fortigate sysDescr snmprec", snmp("1.3.6.1.2.1.1.1.0|4|FortiGate-60E v6.4.5,build1828,210217 (GA)"), wantMatch{Vendor: "Fortinet", Version: "6.4.5"}},
		{"netscaler sysDescr in nmap's snmp-sysdescr", snmp("|_snmp-sysdescr: NetScaler NS12.1: Build 55.18.nc, Date: May  9 2020, 08:50:30"), wantMatch{Vendor: "Citrix", Version: "12.1-55.18"}},
		{"another enterprise's subtree is not fgSysVersion", snmp(`SNMPv2-SMI::enterprises.112356.101.4.1.1.0 = STRING: "v7.0.6,build0366,220606 (GA.F)"`), wantMatch{}},
		// PAN-OS: panSysSwVersion
		{"panSysSwVersion snmprec", snmp("1.3.6.1.2.1.1.1.0|4|Palo Alto Networks PA-3000 series firewall\n1.3.6.1.2.1.1.2.0|6|1.3.6.1.4.1.25461\n1.3.6.1.4.1.25461.2.1.2.1.1.0|4|9.0.7"), wantMatch{Vendor: "Palo Alto Networks", Version: "9.0.7", Band: "9.0.x"}},
		{"panSysSwVersion by name alone", snmp("PAN-COMMON-MIB::panSysSwVersion.0 = STRING: 10.2.4-h3\nPAN-COMMON-MIB::panSysHwVersion.0 = STRING: 2.0"), wantMatch{Vendor: "Palo Alto Networks", Version: "10.2.4-h3"}},
		{"panSysSwVersion of a Panorama", snmp("SNMPv2-MIB::sysDescr.0 = STRING: Palo Alto Networks Panorama\nPAN-COMMON-MIB::panSysSwVersion.0 = STRING: 10.1.9"), wantMatch{}}, // a management server, a negative since round AK4
		// NetScaler: sysBuildVersion and the sysDescr as a walk line
		{"sysBuildVersion by name", snmp(`NS-ROOT-MIB::sysBuildVersion.0 = STRING: "NetScaler NS8.1: Build 69.4, Date: Jan 28 2010, 02:00:43  "`), wantMatch{Vendor: "Citrix", Version: "8.1-69.4", Band: "8.1.x"}},
		{"sysBuildVersion snmprec", snmp("1.3.6.1.4.1.5951.4.1.1.1.0|4|NetScaler NS12.0: Build 57.19.nc, Date: Feb 26 2018, 07:24:38"), wantMatch{Vendor: "Citrix", Version: "12.0-57.19"}},
		{"netscaler sysDescr as a walk line", snmp("SNMPv2-MIB::sysDescr.0 = STRING: NetScaler NS13.1: Build 49.13.nc, Date: May 20 2023, 03:10:53   (64-bit)"), wantMatch{Vendor: "Citrix", Version: "13.1-49.13"}},
		{"a generic sysBuildVersion is not NetScaler's", snmp(`OTHER-MIB::sysBuildVersion.0 = STRING: "Build 69.4"`), wantMatch{}},
		// BIG-IP: sysProductVersion
		{"sysProductVersion by name", snmp("F5-BIGIP-SYSTEM-MIB::sysProductName.0 = STRING: BIG-IP\nF5-BIGIP-SYSTEM-MIB::sysProductVersion.0 = STRING: 11.4.1\nF5-BIGIP-SYSTEM-MIB::sysProductBuild.0 = STRING: 637.0"), wantMatch{Vendor: "F5", Version: "11.4.1", Band: "11.4.x"}},
		{"sysProductVersion enterprises form", snmp(`SNMPv2-SMI::enterprises.3375.2.1.4.2.0 = STRING: "15.1.8.2"`), wantMatch{Vendor: "F5", Version: "15.1.8.2"}},
		{"sysProductVersion of a BIG-IQ", snmp("F5-BIGIP-SYSTEM-MIB::sysProductName.0 = STRING: BIG-IQ\nF5-BIGIP-SYSTEM-MIB::sysProductVersion.0 = STRING: 8.2.0"), wantMatch{}},
		{"a bare sysProductVersion names no one", snmp("sysProductVersion.0 = STRING: 11.4.1"), wantMatch{}},
		// Check Point: svnVersion
		{"svnVersion with net-snmp's own sysObjectID", snmp("1.3.6.1.2.1.1.1.0|4|Linux CP1100 2.6.22.18 #1 Thu May 10 14:36:02 IDT 2018 armv5tejl\n1.3.6.1.2.1.1.2.0|6|1.3.6.1.4.1.8072.3.2.10\n1.3.6.1.4.1.2620.1.6.4.1.0|4|R77.20"), wantMatch{Vendor: "Check Point", Version: "R77.20"}},
		{"svnVersion enterprises form alone", snmp(`SNMPv2-SMI::enterprises.2620.1.6.4.1.0 = STRING: "R76"`), wantMatch{Vendor: "Check Point", Version: "R76"}},
		// Barracuda NG / CloudGen: phionRelease
		{"phionRelease enterprises form", snmp(`SNMPv2-SMI::enterprises.10704.1.2 = STRING: "GWAY-5.2.6-021"`), wantMatch{Vendor: "Barracuda", Version: "5.2.6"}},
		{"phionRelease by name", snmp("PHION-MIB::phionRelease.0 = STRING: GWAY-8.0.1-0157"), wantMatch{Vendor: "Barracuda", Version: "8.0.1"}},
		// Ivanti / Pulse: productVersion
		{"productVersion snmprec", snmp("1.3.6.1.4.1.12532.6.0|4|Pulse Connect Secure,PSA-3000\n1.3.6.1.4.1.12532.7.0|4|9.1R8"), wantMatch{Vendor: "Ivanti", Version: "9.1R8"}},
		{"productVersion of a Policy Secure", snmp("PULSESECURE-PSG-MIB::productName.0 = STRING: \"Pulse Policy Secure,PSA-3000\"\nPULSESECURE-PSG-MIB::productVersion.0 = STRING: \"9.1R3\""), wantMatch{}},
		// SonicWall: snwlSysFirmwareVersion
		{"snwlSysFirmwareVersion snmprec SonicOS", snmp("1.3.6.1.2.1.1.2.0|6|1.0.3.0.6.0.1.0\n1.3.6.1.4.1.8741.2.1.1.3.0|4|SonicOS 7.0.1-R1456"), wantMatch{Vendor: "SonicWall", Version: "7.0.1-R1456"}},
		{"snwlSysFirmwareVersion snmprec SMA", snmp("1.3.6.1.4.1.8741.2.1.1.3.0|4|8.6.0.3-11sv"), wantMatch{Vendor: "SonicWall", Product: "SMA", Version: "8.6.0.3-11sv"}},
		// batch 2: pre-release and hotfix suffixes, RouterOS 2.x's sshd
		{"routeros ftp greeting release candidate", wantService{21, "tcp", "Super Thing_Place-  FTP server (MikroTik 6.43.16rc56) ready"}, wantMatch{Vendor: "MikroTik", Version: "6.43.16rc56"}},
		{"routeros telnet greeting testing channel", wantService{23, "tcp", "MikroTik v6.36rc12 (testing)\r\nLogin:\n"}, wantMatch{Vendor: "MikroTik", Version: "6.36rc12"}},
		{"routeros telnet greeting two numbers", wantService{23, "tcp", "MikroTik v5.2\r\nLogin:\n"}, wantMatch{Vendor: "MikroTik", Version: "5.2"}},
		{"routeros 2.x openssh banner", wantService{22, "tcp", "OpenSSH_2.3.0_Mikrotik_v2.9"}, wantMatch{Vendor: "MikroTik", StrictVersion: true, Band: "2.9.x"}},
		{"routeros 2.x openssh identification line", wantService{22, "tcp", "SSH-1.99-OpenSSH_2.3.0_Mikrotik_v2.9\r\n"}, wantMatch{Vendor: "MikroTik", Band: "2.9.x"}},
		{"plain openssh names no one", wantService{22, "tcp", "SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.10\r\n"}, wantMatch{}},
		{"ive sysDescr with a hotfix", snmp("Juniper Networks,Inc,MAG-4610,7.1R7:HF2 (build 21415)"), wantMatch{Vendor: "Juniper Networks", Version: "7.1R7"}},
		{"ive sysDescr with a beta tag gives no release", snmp("Juniper Networks,Inc,MAG-SM160,7.3R1:B2 (build 21317)"), wantMatch{Vendor: "Juniper Networks", StrictVersion: true}},
		{"sonicos sysDescr with a hotfix", snmp("SonicWALL SOHO wireless-N (SonicOS Enhanced 6.2.5.1-26n--HF175723-2n)"), wantMatch{Vendor: "SonicWall", Version: "6.2.5.1-26n"}},
		// batch 3: the appliances' own CLI words (20-checkpoint.yaml's and 35-sophos.yaml's CLI rules, round AA3)
		{"check point fw ver", wantService{22, "tcp", "[Expert@host:0]# fw ver\nThis is Check Point's software version R80.10 - Build 236\n"}, wantMatch{Vendor: "Check Point", Version: "R80.10"}},
		{"check point fw ver before R80", wantService{22, "tcp", "This is Check Point VPN-1(TM) & FireWall-1(R) R76 - Build 380\n"}, wantMatch{Vendor: "Check Point", Version: "R76"}},
		{"fw ver quoted inside another line names no one", wantService{22, "tcp", "echo \"This is Check Point's software version R81.20 - Build 059\"\n"}, wantMatch{}},
		{"sfos console banner", wantService{22, "tcp", "Sophos Firmware Version SFOS 18.0.0 GA-Build339\n\nMain Menu\n\n    1.  Network  Configuration\n"}, wantMatch{Vendor: "Sophos", Version: "18.0.0"}},
		{"sfos console banner maintenance release", wantService{22, "tcp", "Sophos Firmware Version SFOS 17.5.8 MR-8\n\nMain Menu\n"}, wantMatch{Vendor: "Sophos", Version: "17.5.8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, bannerService(tt.svc.port, tt.svc.transport, tt.svc.text), tt.want)
		})
	}
}

// wantService is a banner service of a test table: its port, transport
// and the text the probe received.
type wantService struct {
	port      int
	transport string
	text      string
}

// TestRules_SysDescrRenderingsKeepVersion runs every bare sysDescr of the
// corpus (a one-line banner on 161) that the rules name (with its release,
// if any) through the renderings a walk or a scanner records it in (net-snmp's
// named and quoted numeric lines, snmpsim's OID|4|value, nmap's
// snmp-sysdescr, Shodan's "Description:", masscan's "sysDescr.0:"): each
// must still be named for the same vendor with the same release (group
// AA4's sweep found ScreenOS, WatchGuard, FWSM, a cut SonicOS sysDescr and
// the IVE's release lost in some of them; round AA's sweep without the
// release found the vendor itself lost for Barracuda, IPSO, Zyxel, SD-WAN,
// the ASA, RouterOS, Forcepoint and Fortinet's other lines, which the
// rules now read from the value a rendering carries: derived.go).
func TestRules_SysDescrRenderingsKeepVersion(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../testdata/fingerprints/*/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Negative    bool               `json:"negative"`
			Observation ingest.Observation `json:"observation"`
		}
		if json.Unmarshal(b, &c) != nil || c.Negative || c.Observation.Service == nil || c.Observation.Service.Port != 161 {
			continue
		}
		ps := c.Observation.Service.Probes
		if len(ps) != 1 || ps[0].Banner == nil {
			continue
		}
		v := strings.TrimSpace(string(ps[0].Banner.Received.Bytes()))
		if v == "" || strings.ContainsAny(v, "\n=|") || strings.Contains(v, "sysDescr") || strings.Contains(v, "Description:") || seen[v] {
			continue
		}
		seen[v] = true
		base, ok := rules.Match(bannerService(161, "udp", v), nil)
		if !ok {
			continue
		}
		for _, r := range []string{
			"SNMPv2-MIB::sysDescr.0 = STRING: " + v,
			`.1.3.6.1.2.1.1.1.0 = STRING: "` + v + `"`,
			`iso.3.6.1.2.1.1.1.0 = STRING: "` + v + `"`,
			"1.3.6.1.2.1.1.1.0|4|" + v + "\n1.3.6.1.2.1.1.3.0|67|123456",
			"| snmp-sysdescr: " + v + "\n|_  System uptime: 1 day",
			"SNMP:\n  Versions:\n    2\n  Description: " + v + "\n",
			"sysDescr.0:" + v,
		} {
			fp, ok := rules.Match(bannerService(161, "udp", r), nil)
			if !ok || !SameVendor(fp.Vendor, base.Vendor) || fp.ExactVersion != base.ExactVersion || fp.VersionBand != base.VersionBand {
				t.Errorf("%s: %q gives %q %q %q (rule %s); the bare value gives %q %q %q", filepath.Base(f), r, fp.Vendor, fp.ExactVersion, fp.VersionBand, fp.RuleID, base.Vendor, base.ExactVersion, base.VersionBand)
			}
		}
	}
	if len(seen) < 20 {
		t.Fatalf("only %d bare sysDescr captures found", len(seen))
	}
}
