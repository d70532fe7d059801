package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupW1ReminedViews checks the group W1 tells (answers re-mined
// from sources already cited): the ASA's aggregate-auth version element on
// its own (rules/10-cisco.yaml), the VPN session database CLI listing of an
// ASA or FTD, FortiOS's "get system ha status" and its login prompt with a
// default hostname (10-fortinet.yaml), PAN-OS's software manager listing and
// an XML API answer quoting only <sw-version> (10-paloalto.yaml). Their
// look-alikes name nothing (ocserv's fixed 0.1(1) version element names
// ocserv, not the ASA): a session
// listing without the AnyConnect protocol list, an HA status of another
// vendor's model, a login prompt of a host that names no FortiGate, a
// partition table without the maint row, <sw-version> off the API path.
// Batch 2: the ASA's show inventory, show vpn-sessiondb summary and show vpn
// load-balancing (not IOS's inventory, not a summary without the ASA's
// capacity line), PAN-OS's configuration and show interface all as the XML
// API returns them (not another product's <config version>). Batch 3: the
// ASA's show failover (with the pair's release), PAN-OS's show
// high-availability all (its Build Release) and show interface all,
// FortiOS's diagnose sys top, get system interface and its log lines; not
// Linux's top, a lone Build Release line, another product's key=value log.
func TestRules_GroupW1ReminedViews(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	cli := func(port int, text string) *ingest.Service {
		return bannerService(port, "tcp", text)
	}
	web := func(p ingest.Probe) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{p}}
	}
	const sessiondb = "Session Type: AnyConnect\n\nUsername     : USER                 Index        : 7033\n" +
		"Protocol     : AnyConnect-Parent SSL-Tunnel DTLS-Tunnel\nLicense      : AnyConnect Premium\n"
	const swm = "\nPartition         State             Version\n" +
		"--------------------------------------------------------------------------------\n" +
		"sysroot0          RUNNING-ACTIVE    9.0.5.xfr\nsysroot1          PENDING-CHANGE    9.1.2\nmaint             READY             9.1.2\n"
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"asa version element alone", web(httpProbe("POST", "/", 200, `<version who="sg">8.4(1)</version>`)),
			wantMatch{Vendor: "Cisco", Version: "8.4(1)"}},
		{"ocserv's fixed version element names ocserv, not the asa", web(httpProbe("POST", "/", 200, `<version who="sg">0.1(1)</version>`)),
			wantMatch{Vendor: "OpenConnect", Rule: "ocserv"}},
		{"asa or ftd vpn-sessiondb anyconnect", cli(22, sessiondb), wantMatch{Vendor: "Cisco", Rule: "cisco-asa-vpn-sessiondb-cli"}},
		{"session listing without the protocol list", cli(22, "Session Type: AnyConnect\nUsername : USER\n"), wantMatch{}},
		{"fortigate ha status with model", cli(22, "HA Health Status: OK\nModel: FortiGate-200D\nMode: HA A-P\nGroup: 0\n"),
			wantMatch{Vendor: "Fortinet", Rule: "fortinet-fortigate-cli-other"}},
		{"fortigate ha status with warnings", cli(22, "HA Health Status:\n    WARNING: FGT40XXXXXXXXXXX has hbdev down;\nModel: FortiGate-40F\n"),
			wantMatch{Vendor: "Fortinet"}},
		{"ha status of another model", cli(22, "HA Health Status: OK\nModel: SRX1500\n"), wantMatch{}},
		{"fortigate telnet prompt serial hostname", cli(23, "FGT60C3G13001111 login: "), wantMatch{Vendor: "Fortinet"}},
		{"fortigate 600e prompt serial hostname", cli(23, "FG6H0ETB19900000 login: "), wantMatch{Vendor: "Fortinet"}},
		{"fortimanager prompt serial hostname", cli(23, "FMG-VM0000000000 login: "), wantMatch{}},
		{"fortigate vm prompt model hostname", cli(23, "\r\nFortiGate-VM64 login: "), wantMatch{Vendor: "Fortinet"}},
		{"linux telnet prompt", cli(23, "ubuntu login: "), wantMatch{}},
		{"prompt of a host merely named fgt", cli(23, "fgt-lab login: "), wantMatch{}},
		{"pan-os swm status", cli(22, swm), wantMatch{Vendor: "Palo Alto Networks", Band: "9.0.x", StrictVersion: true}},
		{"partition table without maint", cli(22, "sysroot0          RUNNING-ACTIVE    9.0.5\n"), wantMatch{}},
		{"pan-os xml api sw-version", web(httpProbe("GET", "/api/?type=op&cmd=%3Cshow%3E%3Csystem%3E%3Cinfo%3E%3C%2Finfo%3E%3C%2Fsystem%3E%3C%2Fshow%3E&key=REDACTED", 200,
			"<sw-version>10.2.10-h9</sw-version>")), wantMatch{Vendor: "Palo Alto Networks", Version: "10.2.10-h9", Band: "10.2.x"}},
		// batch 2: the ASA's other CLI answers, PAN-OS's configuration and interface listing by the XML API
		{"asa show inventory chassis", cli(22, "Name: \"Chassis\", DESCR: \"ASA 5555-X with SW, 8 GE Data, 1 GE Mgmt\"\nPID: ASA5555, VID: V01, SN: AAAAA11111\n"),
			wantMatch{Vendor: "Cisco", Rule: "cisco-asa-cli-other"}},
		{"ios show inventory chassis", cli(22, "NAME: \"Chassis\", DESCR: \"Cisco ISR4331 Chassis\"\nPID: ISR4331/K9\n"), wantMatch{}},
		{"asa vpn session summary", cli(22, "  VPN Session Summary\n  Device Total VPN Capacity    :    250\n  Device Load                  :     1%\n"),
			wantMatch{Vendor: "Cisco"}},
		{"session summary without the capacity line", cli(22, "VPN Session Summary\nActive: 2\n"), wantMatch{}},
		{"asa vpn load-balancing peers", cli(22, "Role    Pri  Model             Load-Balancing Version  Public IP\nMaster    5  ASA-VASA       4  10.246.0.1*\n"),
			wantMatch{Vendor: "Cisco"}},
		{"pan-os config by the xml api", web(httpProbe("GET", "/api/?type=config&action=show", 200, `<response status="success"><result><config urldb="paloaltonetworks" version="7.0.0">`)),
			wantMatch{Vendor: "Palo Alto Networks", Band: "7.0.x", StrictVersion: true}},
		{"a config element of another product", web(httpProbe("GET", "/config.xml", 200, `<config version="2.1.0">`)), wantMatch{}},
		{"pan-os show interface all", web(httpProbe("GET", "/api/?type=op", 200, "<response status=\"success\"><result>\n  <ifnet>\n    <entry>\n      <name>ethernet1/1</name>\n      <zone/>\n      <fwd>vr:default</fwd>\n      <vsys>1</vsys>\n      <dyn-addr/>\n")),
			wantMatch{Vendor: "Palo Alto Networks"}},
		// batch 3: ntc-templates' other CLI outputs
		{"asa show failover with the pair's release", cli(22, "Failover On \nFailover unit Secondary\nVersion: Ours 9.6(4)5, Mate 9.6(4)5\n"),
			wantMatch{Vendor: "Cisco", Version: "9.6(4)5"}},
		{"failover line without the ours/mate versions", cli(22, "Failover On\nState: active\n"), wantMatch{}},
		{"pan-os ha all build release", cli(22, "    Version Information:\n      Build Release: 6.1.10\n      URL Database: 4773\n      Application Content: 580-3287\n"),
			wantMatch{Vendor: "Palo Alto Networks", Version: "6.1.10", Band: "6.1.x"}},
		{"a build release line alone", cli(22, "Build Release: 6.1.10\n"), wantMatch{}},
		{"pan-os show interface all", cli(22, "total configured hardware interfaces: 12\nname id speed/duplex/state/fec mac address\n"),
			wantMatch{Vendor: "Palo Alto Networks", Rule: "paloalto-panos-cli-other"}},
		{"fortios diagnose sys top", cli(22, "Run Time:  12 days, 3 hours and 4 minutes\n0U, 0N, 0S, 100I, 0WA, 0HI, 0SI, 0ST; 1919T, 1214F\n          newcli    29806      R       0.1     0.5\n"),
			wantMatch{Vendor: "Fortinet"}},
		{"linux top header", cli(22, "top - 10:00:01 up 12 days,  3:04,  1 user,  load average: 0.00, 0.01, 0.05\n%Cpu(s):  0.0 us,  0.0 sy,  0.0 ni,100.0 id\n"), wantMatch{}},
		{"fortios get system interface", cli(22, "== [ wan ]\nname: wan   mode: static    management-ip: 0.0.0.0 0.0.0.0   ip: 0.0.0.0 0.0.0.0   status: up    netbios-forward: disable\n"),
			wantMatch{Vendor: "Fortinet"}},
		{"fortios execute log display", cli(22, "2492 logs found.\n10 logs returned.\n\n1: date=2023-08-10 time=19:41:18 logid=\"0000000013\" type=\"traffic\" subtype=\"forward\" level=\"notice\" vd=\"root\"\n"),
			wantMatch{Vendor: "Fortinet"}},
		{"fortigate syslog line in a log tool's body", web(httpProbe("GET", "/logs", 200, `date=2019-05-10 time=11:37:47 devname="FG100E" devid="FG100ETK18000000" logid="0000000013" type="traffic" subtype="forward" level="notice"`)),
			wantMatch{Vendor: "Fortinet"}},
		{"fortios system log with unquoted values", web(httpProbe("GET", "/logs", 200, `date=2016-02-12 time=10:48:12 logid=0100032001 type=event subtype=system level=information vd="vdom1"`)),
			wantMatch{Vendor: "Fortinet"}},
		{"fortios log as cef over syslog", &ingest.Service{Port: 514, Transport: "udp", Probes: []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.TextBody(
			"Feb 12 10:48:12 syslog-800c CEF:0|Fortinet|Fortigate|v5.6.0|32001|event:system login success|2|FTNTFGTlogid=0100032001 cat=event:system")}}}},
			wantMatch{Vendor: "Fortinet", Version: "5.6.0", Band: "5.6.x"}},
		{"cef of fortinet's other product", &ingest.Service{Port: 514, Transport: "udp", Probes: []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.TextBody(
			"CEF:0|Fortinet|FortiWeb|7.0.1|11|attack|5|")}}}}, wantMatch{}},
		{"fortigate syslog line over udp", &ingest.Service{Port: 514, Transport: "udp", Probes: []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.TextBody(
			`date=2019-05-10 time=11:37:47 devname="FG100E" devid="FG100ETK18000000" logid="0000000013" type="traffic" subtype="forward" level="notice"`)}}}},
			wantMatch{Vendor: "Fortinet"}},
		{"key=value log of another product", web(httpProbe("GET", "/logs", 200, `date=2019-05-10 time=11:37:47 host=fw1 type=traffic action=allow`)), wantMatch{}},
		{"sw-version off the api path", web(httpProbe("GET", "/status.xml", 200, "<sw-version>10.2.10</sw-version>")), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, tt.want)
		})
	}
}
