package enrich

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/testutil"
)

// corpusDir holds the real captures of the accuracy harness.
const corpusDir = "../testdata/fingerprints"

// The built-in rules name no wrong vendor on any capture of the corpus
// and no vendor on any negative (docs/accuracy.md).
func TestRules_Accuracy(t *testing.T) {
	rules, caps := rulesAndCorpus(t)
	rep := Evaluate(rules, caps)
	t.Logf("\n%s", rep.Table())
	wrong, misses := rep.Mistakes()
	for _, m := range misses {
		t.Log(m)
	}
	for _, w := range wrong {
		t.Error(w)
	}
}

func TestEvaluate_Scores(t *testing.T) {
	rules := legacyRules(t)
	vendor := func(s string) *string { return &s }
	svc := func(headers ...string) ingest.Observation {
		p := ingest.Probe{Request: &ingest.Request{Path: "/"}, Response: &ingest.Response{Status: 200}}
		for i := 0; i+1 < len(headers); i += 2 {
			p.Response.Headers = append(p.Response.Headers, ingest.Header{Name: headers[i], Value: headers[i+1]})
		}
		return ingest.Observation{Type: ingest.TypeService, IP: "192.0.2.1", Source: "t", ObservedAt: "2026-11-01T00:00:00Z",
			Service: &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{p}}}
	}
	caps := []Capture{
		{ID: "right", Family: "fortinet-fortigate-sslvpn", Expect: Expect{Vendor: vendor("Fortinet"), Band: "7.0.x"},
			Observation: svc("Server", "xxxxxxxx-xxxxx", "Last-Modified", "Tue, 10 Aug 2021 08:12:00 GMT")},
		{ID: "wrong version", Family: "fortinet-fortigate-sslvpn", Expect: Expect{Vendor: vendor("Fortinet"), Version: "6.4.2"},
			Observation: svc("Server", "xxxxxxxx-xxxxx", "Last-Modified", "Tue, 10 Aug 2021 08:12:00 GMT")},
		{ID: "wrong vendor", Family: "ocserv", Expect: Expect{Vendor: vendor("OpenConnect")}, Observation: svc("X-Transcend-Version", "1")},
		{ID: "miss", Family: "ocserv", Expect: Expect{Vendor: vendor("OpenConnect")}, Observation: svc("Server", "nginx")},
		{ID: "negative", Negative: true, Observation: svc("Set-Cookie", "SVPNCOOKIE=x")},
		{ID: "clean negative", Negative: true, Observation: svc("Server", "Apache")},
		{ID: "named copy", Negative: true, Copy: "sends FortiOS's masked Server header", Observation: svc("Server", "xxxxxxxx-xxxxx")},
		{ID: "clean copy", Negative: true, Copy: "a copy the rules miss", Observation: svc("Server", "nginx")},
	}
	rep := Evaluate(rules, caps)
	if rep.Positives != 4 || rep.Negatives != 4 || rep.Right != 2 || rep.WrongVendors != 1 || rep.OnNegatives != 1 ||
		rep.Versioned != 2 || rep.VersionRight != 1 || rep.Copies != 2 || rep.CopiesNamed != 1 {
		t.Errorf("totals: %+v", *rep)
	}
	byFam := map[string]FamilyScore{}
	for _, f := range rep.Families {
		byFam[f.Family] = f
	}
	if f := byFam["fortinet-fortigate-sslvpn"]; f.Positives != 2 || f.Right != 2 || f.Named != 3 || f.WrongNamed != 1 || f.Recall() != 1 {
		t.Errorf("fortinet: %+v", f)
	}
	if f := byFam["ocserv"]; f.Positives != 2 || f.Right != 0 || f.Recall() != 0 {
		t.Errorf("ocserv: %+v", f)
	}
	if f := byFam["cisco-asa-anyconnect"]; f.Named != 1 || f.WrongNamed != 1 || f.Precision() != 0 {
		t.Errorf("cisco: %+v", f)
	}
	wrong, misses := rep.Mistakes()
	// the named copy is listed with the misses, with its reason, not failed
	if len(wrong) != 2 || len(misses) != 3 || !strings.Contains(strings.Join(misses, "\n"), "exact copy named \"Fortinet\"") {
		t.Errorf("wrong %v, misses %v", wrong, misses)
	}
	if !strings.Contains(rep.Table(), "Exact copies among the negatives") {
		t.Errorf("table does not count the copies:\n%s", rep.Table())
	}
}

func TestVersionAgrees(t *testing.T) {
	tests := []struct {
		want Expect
		fp   Fingerprint
		ok   bool
	}{
		{Expect{Version: "7.0.12"}, Fingerprint{ExactVersion: "7.0.12"}, true},
		{Expect{Version: "7.0.12"}, Fingerprint{ExactVersion: "7.0.13"}, false},
		{Expect{Version: "7.0.12"}, Fingerprint{VersionBand: "7.0.x"}, true},
		{Expect{Version: "7.2.1"}, Fingerprint{VersionBand: "7.0.x"}, false},
		{Expect{Band: "7.0.x"}, Fingerprint{ExactVersion: "7.0.4"}, true},
		{Expect{Band: "7.0.x"}, Fingerprint{VersionBand: "7.0.x"}, true},
		{Expect{Band: "7.0.x"}, Fingerprint{}, false},
		{Expect{Version: "9.16(4)"}, Fingerprint{ExactVersion: "9.16(4)"}, true},
		// a narrower band inside the expected band, and one reaching out of it
		{Expect{Band: "22.7.x"}, Fingerprint{VersionBand: "22.7R2.x"}, true},
		{Expect{Band: "22.7.x"}, Fingerprint{VersionBand: "22.x"}, false},
		{Expect{Band: "10.2.x"}, Fingerprint{VersionBand: "10.2.4,11.0.1"}, false},
		{Expect{Version: "11.0.1"}, Fingerprint{VersionBand: "10.2.4,11.0.1"}, true},
		{Expect{Version: "22.7R2.3", Band: "22.7.x"}, Fingerprint{VersionBand: "22.7R2.x"}, true},
		// one version written differently, and one more precise
		{Expect{Version: "9.18.1"}, Fingerprint{ExactVersion: "9.18(1)"}, true},
		{Expect{Version: "v7.0.12"}, Fingerprint{ExactVersion: "7.0.12"}, true},
		{Expect{Version: "13.1.59.19"}, Fingerprint{ExactVersion: "13.1-59.19"}, true},
		{Expect{Version: "7.2.5"}, Fingerprint{ExactVersion: "7.2.5.1517"}, true},
		{Expect{Version: "7.2.5.1517"}, Fingerprint{ExactVersion: "7.2.5"}, false},
		{Expect{Version: "7.2.5"}, Fingerprint{ExactVersion: "7.2.50"}, false},
		{Expect{Version: "7"}, Fingerprint{ExactVersion: "7.2.5"}, false},
		// expected bands written without ".x"
		{Expect{Band: "7.0"}, Fingerprint{ExactVersion: "7.0.4"}, true},
		{Expect{Band: "7.0.*"}, Fingerprint{VersionBand: "7.0.x"}, true},
		{Expect{Band: "7.0"}, Fingerprint{ExactVersion: "7.2.4"}, false},
		{Expect{Band: "10.2.4,11.0.1"}, Fingerprint{VersionBand: "10.2.4,11.0.1"}, true},
	}
	for _, tt := range tests {
		if got := versionAgrees(tt.want, tt.fp); got != tt.ok {
			t.Errorf("versionAgrees(%+v, %+v) = %v", tt.want, tt.fp, got)
		}
	}
}

// Vendor names written another way, or by a former owner of the product
// line, are the same vendor; different vendors are not.
func TestSameVendor(t *testing.T) {
	same := [][2]string{
		{"Palo Alto Networks", "Palo Alto"}, {"Palo Alto Networks", "paloaltonetworks"}, {"Cisco", "Cisco Systems, Inc."},
		{"OpenVPN Inc.", "OpenVPN"}, {"Juniper Networks", "Juniper"}, {"Check Point", "Check Point Software Technologies Ltd."},
		{"Check Point", "CheckPoint"}, {"F5", "F5 Networks"}, {"F5", "F5, Inc."}, {"Ivanti", "Pulse Secure"}, {"SonicWall", "Dell SonicWALL"},
		{"SonicWall", "SonicWALL"}, {"Citrix", "NetScaler"}, {"Citrix", "Citrix Systems"}, {"Sophos", "Cyberoam"}, {"Forcepoint", "Stonesoft"},
		{"OpenConnect", "ocserv"}, {"SoftEther", "SoftEther VPN Project"}, {"Zyxel", "ZyXEL Communications"}, {"Array Networks", "Array"},
		{"Microsoft", "Microsoft Corporation"}, {"Barracuda", "Barracuda Networks"}, {"WatchGuard", "WatchGuard Technologies"},
	}
	for _, p := range same {
		if !SameVendor(p[0], p[1]) || !SameVendor(p[1], p[0]) {
			t.Errorf("SameVendor(%q, %q) = false", p[0], p[1])
		}
	}
	differ := [][2]string{
		{"Fortinet", "Forcepoint"}, {"Juniper Networks", "Ivanti"}, {"Cisco", "OpenConnect"}, {"Citrix", "F5"}, {"Sophos", "SonicWall"},
		{"", ""}, {"Inc.", "Ltd."}, {"Palo Alto Networks", "Check Point"},
	}
	for _, p := range differ {
		if SameVendor(p[0], p[1]) {
			t.Errorf("SameVendor(%q, %q) = true", p[0], p[1])
		}
	}
}

func TestLoadCaptures_Errors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	obs := `"observation":{"type":"service","ip":"192.0.2.1","source":"t","observed_at":"2026-11-01T00:00:00Z","service":{"port":443,"transport":"tcp"}}`
	write("a.json", `{"id":"a","family":"f","provenance":{"url":"u","retrieved":"2026-11-26"},"expect":{"vendor":"V"},`+obs+`}`)
	write("b.json", `{"id":"b","provenance":{"url":"u","retrieved":"2026-11-26"},"expect":{"vendor":null},`+obs+`}`)
	write("c.json", `{"id":"c","negative":true,"provenance":{"retrieved":"2026-11-26"},"expect":{"vendor":null},`+obs+`}`)
	write("d.json", `{"id":"d","family":"f","copy":"why","provenance":{"url":"u","retrieved":"2026-11-26"},"expect":{"vendor":"V"},`+obs+`}`)
	_, err := LoadCaptures(dir)
	if err == nil || !strings.Contains(err.Error(), "b.json: expect.vendor: required") || !strings.Contains(err.Error(), "c.json: provenance") ||
		!strings.Contains(err.Error(), "d.json: copy: only a negative") || strings.Contains(err.Error(), "a.json") {
		t.Errorf("err = %v", err)
	}
}

// BenchmarkRulesMatch is the per-observation cost of fingerprinting with
// the built-in rules: over the sample observations (what the pipeline
// benchmark's generator replays) and over the real captures of the
// accuracy corpus, most of which carry far more evidence.
func BenchmarkRulesMatch(b *testing.B) {
	testutil.Micro(b)
	rules, err := DefaultRules()
	if err != nil {
		b.Fatal(err)
	}
	// The same rules without some files, for the ratio those cost in the
	// same run: nuclei's, Wappalyzer's and wafw00f's, the IKE and SNMP ones.
	without := func(skip ...string) *Rules {
		fsys := fstest.MapFS{}
		ents, err := fs.ReadDir(defaultRules, "rules")
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range ents {
			if slices.Contains(skip, e.Name()) {
				continue
			}
			data, err := fs.ReadFile(defaultRules, "rules/"+e.Name())
			if err != nil {
				b.Fatal(err)
			}
			fsys["rules/"+e.Name()] = &fstest.MapFile{Data: data}
		}
		rs, err := LoadRulesFS(fsys, "rules")
		if err != nil {
			b.Fatal(err)
		}
		return rs
	}
	withoutNuclei := without("60-nuclei.yaml")
	withoutWapWaf := without("65-wappalyzer.yaml", "66-wafw00f.yaml")
	withoutIKESNMP := without("58-ike.yaml", "59-snmp.yaml")
	var samples []ingest.Observation
	for _, list := range sampleObs(b) {
		for _, o := range list {
			if o.Service != nil || o.Flow != nil {
				samples = append(samples, o)
			}
		}
	}
	caps, err := LoadCaptures(corpusDir)
	if err != nil {
		b.Fatal(err)
	}
	var corpus []ingest.Observation
	for _, c := range caps {
		corpus = append(corpus, c.Observation)
	}
	type ruleSet struct {
		name  string
		rules *Rules
	}
	sets := []ruleSet{{"all", rules}, {"without-nuclei", withoutNuclei}, {"without-wappalyzer-wafw00f", withoutWapWaf}, {"without-ike-snmp", withoutIKESNMP}}
	// NETINTEL_BASE_RULES names a folder of rule files (an earlier
	// commit's enrich/rules) to measure as "base" over the same
	// observations: a round's cost before and after, in one run.
	if dir := os.Getenv("NETINTEL_BASE_RULES"); dir != "" {
		base, err := LoadRulesFS(os.DirFS(dir), ".")
		if err != nil {
			b.Fatalf("NETINTEL_BASE_RULES: %v", err)
		}
		sets = append(sets, ruleSet{"base", base})
	}
	for _, set := range []struct {
		name string
		obs  []ingest.Observation
	}{{"samples", samples}, {"corpus", corpus}} {
		for _, rs := range sets {
			b.Run(set.name+"/"+rs.name, func(b *testing.B) {
				for b.Loop() {
					for i := range set.obs {
						rs.rules.Match(set.obs[i].Service, set.obs[i].Flow)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(set.obs)), "ns/obs")
			})
		}
	}
}

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated table in docs/accuracy.md")

// TestRules_AccuracyDoc keeps the table in docs/accuracy.md equal to what
// the harness measures today. Regenerate with:
//
//	go test ./enrich -run TestRules_AccuracyDoc -update-docs
func TestRules_AccuracyDoc(t *testing.T) {
	rules, caps := rulesAndCorpus(t)
	testutil.GeneratedSection(t, "../docs/accuracy.md", "<!-- BEGIN GENERATED by enrich TestRules_AccuracyDoc; do not edit -->",
		"<!-- END GENERATED -->", Evaluate(rules, caps).Table(), *updateDocs, "go test ./enrich -run TestRules_AccuracyDoc -update-docs")
}
