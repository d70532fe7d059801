package enrich

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/ingest"
)

// TestRules_VersionLentFromAnswer: a rule that names a product without a
// version takes the version a later rule of the same vendor reads from the
// answer itself (not only from a scanner's identification or a banner),
// when that rule holds on the same evidence; a later rule that does not
// hold, or one of another vendor, lends nothing.
func TestRules_VersionLentFromAnswer(t *testing.T) {
	doc := `version: 2
rules:
  - {id: by-header, vendor: Acme, product: Box, protocol_family: https, match: {header.server: '^AcmeOS$'}}
  - id: by-page
    vendor: Acme
    product: Box
    protocol_family: https
    match: {body: 'acme-version='}
    versions:
      - {from: body, regex: 'acme-version=(\d+\.\d+\.\d+)', precision: exact}
  - id: other-vendor
    vendor: Other
    product: Thing
    protocol_family: https
    match: {body: 'other-version='}
    versions:
      - {from: body, regex: 'other-version=(\d+\.\d+\.\d+)', precision: exact}
`
	rs, err := ParseRules([]byte(doc), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	page := func(body string) *ingest.Service {
		return tcpService(443, httpProbe("GET", "/", 200, body, "Server", "AcmeOS"))
	}
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"the later rule of the vendor reads the page", page("<p>acme-version=1.2.3</p>"), wantMatch{Vendor: "Acme", Rule: "by-header", Version: "1.2.3"}},
		{"no later rule holds", page("<p>hello</p>"), wantMatch{Vendor: "Acme", Rule: "by-header", StrictVersion: true, StrictBand: true}},
		{"another vendor's version is not lent", page("<p>other-version=9.9.9</p>"), wantMatch{Vendor: "Acme", Rule: "by-header", StrictVersion: true, StrictBand: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rs, tt.svc, tt.want)
		})
	}
}

// TestRules_GaiaPortalBehindCPWS: Check Point's Gaia portal named by its
// CPWS Server header (checkpoint-mobile-access, which reads no version)
// gets the release its script states through the later Gaia rule.
func TestRules_GaiaPortalBehindCPWS(t *testing.T) {
	body := `<meta name="others" content="WEBUI LOGIN PAGE"/><TITLE>GAiA</TITLE>` +
		`<script type="text/javascript">var twofaConf='';var version='R81.20';var formAction="/cgi-bin/home.tcl";</script>`
	checkMatches(t, []matchCase{
		{"CPWS and the portal's script", tcpService(443, httpProbe("GET", "/", 200, body, "Server", "CPWS", "Set-Cookie", "Session=Login;path=/; secure; HttpOnly")),
			wantMatch{Vendor: "Check Point", Version: "R81.20"}},
		{"CPWS alone", tcpService(443, httpProbe("GET", "/", 200, "<html></html>", "Server", "CPWS")),
			wantMatch{Vendor: "Check Point", StrictVersion: true, StrictBand: true}},
	})
}

// TestRules_FTDLoginGreeting: Firepower Threat Defense's greeting after an
// SSH login names FTD with the release of its Threat Defense line, not the
// FX-OS or Fire Linux line's; the FMC's greeting and FX-OS's line alone
// are not FTD.
func TestRules_FTDLoginGreeting(t *testing.T) {
	hw := "Copyright 2004-2024, Cisco and/or its affiliates. All rights reserved. \n\n" +
		"Cisco Firepower Extensible Operating System (FX-OS) v2.14.1 (build 167)\n" +
		"Cisco Firepower 1010 Threat Defense v7.4.2 (build 172)\n\n> "
	vm := "Cisco Fire Linux OS v6.5.0 (build 6)\nCisco Firepower Threat Defense for VMware v6.5.0 (build 115)\n\n> "
	fmc := "Cisco Fire Linux OS v6.6.0 (build 90)\nCisco Firepower Management Center for VMware v6.6.0 (build 90)\n\nadmin@fmc:~$ "
	checkMatches(t, []matchCase{
		{"a Firepower 1010", bannerService(22, "tcp", hw), wantMatch{Vendor: "Cisco", Rule: "cisco-ftd-login-greeting", Product: "Firepower Threat Defense", Version: "7.4.2"}},
		{"FTDv", bannerService(22, "tcp", vm), wantMatch{Vendor: "Cisco", Rule: "cisco-ftd-login-greeting", Version: "6.5.0"}},
		{"the FMC's greeting", bannerService(22, "tcp", fmc), wantMatch{Vendor: "Cisco", Rule: "cisco-fmc-web", Product: "Firepower Management Center"}},
		{"FX-OS's line alone", bannerService(22, "tcp", "Cisco Firepower Extensible Operating System (FX-OS) v2.14.1 (build 167)\n\nfirepower# "), wantMatch{}},
	})
}

// TestRules_FortiOSBuildDaysAF2: a FortiGate page whose ETag or
// Last-Modified falls on a build day of af2-fortios-build-days gets that
// release (lent to the rule that named the page); another day gives none,
// and the same ETag on another vendor's page names nothing.
func TestRules_FortiOSBuildDaysAF2(t *testing.T) {
	login := `<html><head><title>Please Login</title></head><body><f-icon class="ftnt-fortinet-grid icon-xl"></f-icon><form action="/remote/logincheck"></form></body></html>`
	etag := func(day string) string {
		ts, err := time.Parse(time.DateTime, day+" 12:00:00")
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf(`"3a8-%x"`, ts.Unix())
	}
	fgt := func(headers ...string) *ingest.Service {
		return tcpService(443, httpProbe("GET", "/remote/login", 200, login, append([]string{"Server", "xxxxxxxx-xxxxx"}, headers...)...))
	}
	checkMatches(t, []matchCase{
		{"7.4.7 by ETag", fgt("ETag", etag("2025-01-20")), wantMatch{Vendor: "Fortinet", Version: "7.4.7"}},
		{"7.6.3 by ETag", fgt("ETag", etag("2025-04-01")), wantMatch{Vendor: "Fortinet", Version: "7.6.3"}},
		{"7.0.16 by Last-Modified", fgt("Last-Modified", "Tue, 01 Oct 2024 08:00:00 GMT"), wantMatch{Vendor: "Fortinet", Version: "7.0.16"}},
		{"5.4.4 by Last-Modified", fgt("Last-Modified", "Thu, 09 Feb 2017 03:00:00 GMT"), wantMatch{Vendor: "Fortinet", Version: "5.4.4"}},
		{"the table of 10-fortinet.yaml still answers first", fgt("ETag", etag("2022-06-06")), wantMatch{Vendor: "Fortinet", Version: "7.0.6"}},
		{"a day no table holds", fgt("ETag", etag("2025-01-23")), wantMatch{Vendor: "Fortinet", StrictVersion: true, StrictBand: true}},
		{"another server's page", tcpService(443, httpProbe("GET", "/", 200, "<html>hello</html>", "Server", "nginx", "ETag", etag("2025-01-20"))), wantMatch{}},
	})
}

// TestRules_NucleiExtractedVersions: nuclei's JSON results of the
// version-detect and panel templates, read through the nuclei adapter,
// name the product with the release their extracted value states (or the
// release a table maps it to); an extracted value that is no release gives
// none, and a template of another product names nothing here.
func TestRules_NucleiExtractedVersions(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	line := func(id, name, port, extracted string) string {
		return fmt.Sprintf(`{"template-id":%q,"info":{"name":%q,"severity":"info"},"type":"http","host":"192.0.2.7:%s","port":%q,"matched-at":"https://192.0.2.7:%s/","extracted-results":[%q],"ip":"192.0.2.7","timestamp":"2024-01-10T10:00:00Z","matcher-status":true}`,
			id, name, port, port, port, extracted)
	}
	tests := []struct {
		name, line string
		want       wantMatch
	}{
		{"Pulse's ProductVersion through ivanti-builds", line("pulse-secure-version", "Pulse Secure Version - Detect", "443", "9.1.18.24467"), wantMatch{Vendor: "Ivanti", Version: "9.1R18.2"}},
		{"a build no table holds gives the band", line("pulse-secure-version", "Pulse Secure Version - Detect", "443", "22.7.2.9999"), wantMatch{Vendor: "Ivanti", StrictVersion: true, Band: "22.7R2.x"}},
		{"SFOS's asset version", line("sophos-fw-version-detect", "Sophos Firewall Version - Detect", "4444", "17.5.13.692"), wantMatch{Vendor: "Sophos", Version: "17.5.13.692"}},
		{"the ASA's config-auth version", line("cisco-asa-detect", "Cisco ASA - Detect", "443", "9.16(3)19"), wantMatch{Vendor: "Cisco", Product: "ASA", Version: "9.16(3)19"}},
		{"FortiGate's release date, a build day of af2-fortios-build-days", line("fortinet-fortigate-panel", "Fortinet FortiGate Panel - Detect", "443", "Release date: Jan 20, 2025"), wantMatch{Vendor: "Fortinet", Version: "7.4.7"}},
		{"FortiGate's release date, a build day of fortios-build-dates", line("fortinet-fortigate-panel", "Fortinet FortiGate Panel - Detect", "443", "Release date: Sep 26, 2023"), wantMatch{Vendor: "Fortinet", Version: "7.2.6"}},
		{"RouterOS's panel", line("mikrotik-routeros", "MikroTik RouterOS Panel - Detect", "80", "v6.49.7"), wantMatch{Vendor: "MikroTik", Product: "RouterOS", Version: "6.49.7"}},
		{"RouterOS's login page", line("routeros-login", "RouterOS Login - Detect", "80", "6.48.6"), wantMatch{Vendor: "MikroTik", Version: "6.48.6"}},
		{"RouterOS's panel without a release", line("mikrotik-routeros", "MikroTik RouterOS Panel - Detect", "80", "configuration"), wantMatch{Vendor: "MikroTik", StrictVersion: true, StrictBand: true}},
		{"another product's template", line("casaos-detection", "CasaOS - Detect", "80", "v0.4.4"), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var svc *ingest.Service
			err := ingest.Nuclei(strings.NewReader(tt.line+"\n"), ingest.Options{}, func(_ int, o ingest.Observation) error {
				svc = o.Service
				return nil
			}, func(le ingest.LineError) { t.Errorf("bad record: %v", le) })
			if err != nil || svc == nil {
				t.Fatalf("the adapter gave no service (%v)", err)
			}
			checkMatch(t, rules, svc, tt.want)
		})
	}
}
