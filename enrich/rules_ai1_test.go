package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_AI1SophosPageTells checks the tells the group AI1 round added
// (85-ai1-mix.yaml): Sophos Firewall's <noscript> warning and its console's
// CSRF token variable name the firewall on a page with nothing else, and
// the look-alikes they must not name: a page that only talks about
// JavaScript support, another product's CSRF variable, and the warning on
// a page that was not served (a 404).
func TestRules_AI1SophosPageTells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	page := func(path string, status int, body string) *ingest.Service {
		return &ingest.Service{Port: 4444, Transport: "tcp", Probes: []ingest.Probe{httpProbe("GET", path, status, body)}}
	}
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"web console noscript warning", page("/", 200, "<noscript>\n\t<div class=\"center\">\n\t\t<h2>Your browser does not support JavaScript or it is disabled!<br>Without JavaScript support web console will not work.</h2>\n\t</div>\n</noscript>"), wantMatch{Vendor: "Sophos"}},
		{"user portal noscript warning", page("/userportal/webpages/myaccount/login.jsp", 200, "<noscript><h2>Without JavaScript support user portal will not work.</h2></noscript>"), wantMatch{Vendor: "Sophos"}},
		{"console csrf variable", page("/webconsole/webpages/index.jsp", 200, "<script>\n\tCyberoam.c$rFt0k3n = '3ms4cmcc89ol1l1atfcsqft6r9';\n\tCyberoam.setCSRFToken(Cyberoam.c$rFt0k3n);\n</script>"), wantMatch{Vendor: "Sophos"}},
		{"another app's javascript warning", page("/", 200, "<noscript>Without JavaScript support this application will not work.</noscript>"), wantMatch{}},
		{"another csrf variable", page("/", 200, "<script>App.csrfToken = 'abc';</script>"), wantMatch{}},
		{"the warning on a 404", page("/missing", 404, "<noscript>Without JavaScript support web console will not work.</noscript>"), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, tt.want)
		})
	}
}

// TestRules_AI1PipeSeparatedGreeting checks the RouterOS telnet greeting as
// Shadowserver's scan reports write it, line breaks as '|' (85-ai1-mix.yaml),
// with its release, and what it must not name: the greeting's words without
// the login prompt, and another device's pipe-separated greeting.
func TestRules_AI1PipeSeparatedGreeting(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		text string
		want wantMatch
	}{
		{"stable channel", "|MikroTik v6.45.3 (stable)|Login:", wantMatch{Vendor: "MikroTik", Version: "6.45.3"}},
		{"no channel", "|MikroTik v6.5|Login:", wantMatch{Vendor: "MikroTik", Version: "6.5"}},
		{"release candidate with an identity", "|MikroTik v6.43rc56 (testing)|gw1 Login:", wantMatch{Vendor: "MikroTik", Version: "6.43rc56"}},
		{"greeting without the prompt", "|MikroTik v6.45.3 (stable)|", wantMatch{}},
		{"another device's greeting", "|ZyXEL P-660HW-D1|Login:", wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, bannerService(5678, "tcp", tt.text), tt.want)
		})
	}
}

// TestRules_AI1DefaultCertificates checks the default certificates as
// Shadowserver's scans record them (85-ai1-mix.yaml): a FortiGate's
// self-signed certificate whose issuer names Fortinet and the unit's
// serial, SonicOS's management certificate with the phrase in the OU or
// the issuer, a ZyWALL's zywall_<model>_<MAC> common name; and the
// look-alikes: a FortiManager's serial, another vendor's OU, a common
// name with the model but no MAC.
func TestRules_AI1DefaultCertificates(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	cert := func(subject, issuer ingest.DN) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{TLS: &ingest.TLS{Subject: &subject, Issuer: &issuer}}}}
	}
	const mgmt = "HTTPS Management Certificate for SonicWALL (self-signed)"
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"fortigate issuer serial", cert(ingest.DN{CN: "FGT60C3G12019794", O: []string{"some_org_name"}}, ingest.DN{CN: "FGT60C3G12019794", O: []string{"Fortinet Ltd."}}), wantMatch{Vendor: "Fortinet"}},
		{"fortimanager issuer serial", cert(ingest.DN{CN: "FMG-VM0000000001"}, ingest.DN{CN: "FMG-VM0000000001", O: []string{"Fortinet Ltd."}}), wantMatch{}},
		{"sonicwall ou", cert(ingest.DN{O: []string{"Example Corp."}, OU: []string{mgmt}}, ingest.DN{O: []string{mgmt}, OU: []string{mgmt}}), wantMatch{Vendor: "SonicWall"}},
		{"sonicwall issuer only", cert(ingest.DN{CN: "192.0.2.4"}, ingest.DN{O: []string{mgmt}}), wantMatch{Vendor: "SonicWall"}},
		{"another vendor's management ou", cert(ingest.DN{O: []string{"Example Corp."}, OU: []string{"HTTPS Management Certificate"}}, ingest.DN{O: []string{"Example Corp."}}), wantMatch{}},
		{"zywall model and mac", cert(ingest.DN{CN: "zywall_110_A0E4CB7CE5AF"}, ingest.DN{CN: "zywall_110_A0E4CB7CE5AF"}), wantMatch{Vendor: "Zyxel"}},
		{"zywall without a mac", cert(ingest.DN{CN: "zywall_110"}, ingest.DN{CN: "zywall_110"}), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, tt.want)
		})
	}
}

// TestRules_AI1BarracudaFactoryCertificate checks Barracuda's factory
// certificate (85-ai1-mix.yaml) and that a certificate of Barracuda's own
// web site, or another vendor's Engineering unit, is not named.
func TestRules_AI1BarracudaFactoryCertificate(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	cert := func(d ingest.DN) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{TLS: &ingest.TLS{Subject: &d, Issuer: &d}}}}
	}
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"factory certificate", cert(ingest.DN{CN: "Barracuda", O: []string{"Barracuda Networks"}, OU: []string{"Engineering"}, C: "US", ST: "California", L: "Campbell"}), wantMatch{Vendor: "Barracuda"}},
		{"the vendor's web site", cert(ingest.DN{CN: "www.barracuda.com", O: []string{"Barracuda Networks, Inc."}}), wantMatch{}},
		{"another vendor's engineering unit", cert(ingest.DN{CN: "Barracuda", O: []string{"Example Networks"}, OU: []string{"Engineering"}}), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, tt.want)
		})
	}
}

// TestRules_AI1ApplianceCAIssuers checks the Sophos and Cyberoam appliances'
// certificate authorities as issuers (85-ai1-mix.yaml, from Chromium's list
// of TLS-intercepting products), and that a certificate issued by Sophos's
// public CA or naming Cyberoam elsewhere is not named.
func TestRules_AI1ApplianceCAIssuers(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	issued := func(iss ingest.DN) *ingest.Service {
		sub := ingest.DN{CN: "vpn.example.com"}
		return &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{TLS: &ingest.TLS{Subject: &sub, Issuer: &iss}}}}
	}
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"sfos default ca", issued(ingest.DN{CN: "Sophos_CA_C01001W4GJTTVB1"}), wantMatch{Vendor: "Sophos"}},
		{"sophos ssl ca", issued(ingest.DN{CN: "Sophos SSL CA_C01001-W4GJ", O: []string{"Sophos"}}), wantMatch{Vendor: "Sophos"}},
		{"utm proxy ca", issued(ingest.DN{CN: "sophosutm Proxy CA", O: []string{"sophosutm"}}), wantMatch{Vendor: "Sophos"}},
		{"cyberoam ca", issued(ingest.DN{CN: "Default", O: []string{"Cyberoam Certificate Authority"}}), wantMatch{Vendor: "Sophos"}},
		{"a public ca", issued(ingest.DN{CN: "DigiCert Global G2 TLS RSA SHA256 2020 CA1", O: []string{"DigiCert Inc"}}), wantMatch{}},
		{"sophos ssl ca without the organisation", issued(ingest.DN{CN: "Sophos SSL CA_X1", O: []string{"Example"}}), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, tt.want)
		})
	}
}
