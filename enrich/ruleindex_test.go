package enrich

import (
	"testing"
	"testing/fstest"

	"github.com/netintel/netintel/ingest"
)

// TestRuleIndex_SameResults: the index only rules out rules that could
// not match: every capture and sample gets the same fingerprint with it
// as without it.
func TestRuleIndex_SameResults(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	if rules.index == nil {
		t.Fatal("the built-in rules have no index")
	}
	plain := *rules
	plain.index = nil
	caps, err := LoadCaptures(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var obs []ingest.Observation
	for _, c := range caps {
		obs = append(obs, c.Observation)
	}
	for _, list := range sampleObs(t) {
		obs = append(obs, list...)
	}
	skipped := 0
	for i := range obs {
		o := &obs[i]
		got, gotOK := rules.Match(o.Service, o.Flow)
		want, wantOK := plain.Match(o.Service, o.Flow)
		if gotOK != wantOK || got.RuleID != want.RuleID || got.ExactVersion != want.ExactVersion || got.VersionBand != want.VersionBand {
			t.Errorf("observation %d: with index %v %+v, without %v %+v", i, gotOK, got, wantOK, want)
		}
		e := newEvidence(o.Service, o.Flow)
		found := e.literalSet(rules.index.nlits + 1)
		rules.index.scan(e, found)
		for j := range rules.rules {
			if !rules.index.possible(j, found) {
				skipped++
			}
		}
		e.release()
	}
	if skipped == 0 {
		t.Error("the index ruled out no rule on any observation")
	}
	// Rules always tried (a branch without literals) have their other
	// branches gated; the results above are the same with and without.
	gates := 0
	var count func(c condition)
	count = func(c condition) {
		switch c := c.(type) {
		case *gated:
			gates++
			count(c.c)
		case anyOf:
			for _, s := range c {
				count(s)
			}
		case allOf:
			for _, s := range c {
				count(s)
			}
		case notOf:
			count(c.c)
		}
	}
	for j, r := range rules.rules {
		if rules.index.lits[j] == nil {
			count(r.match)
		}
	}
	if gates == 0 {
		t.Error("no branch of a rule without literals is gated")
	}
}

// TestRuleIndex_Search finds literals in any ASCII case, overlapping and
// nested, and only those present.
func TestRuleIndex_Search(t *testing.T) {
	tests := []struct {
		name string
		lits []string
		text string
		want []bool
	}{
		{"case", []string{"fortigate"}, "xx FortiGate yy", []bool{true}},
		{"absent", []string{"fortigate", "sslvpn"}, "forti gate ssl-vpn", []bool{false, false}},
		{"folds beyond ASCII, ASCII text", []string{"sslvpn"}, "ssl-vpn", []bool{false}},
		{"folds beyond ASCII, other text", []string{"sslvpn"}, "ſslvpn", []bool{true}},
		{"overlap", []string{"abcd", "bcx", "cx"}, "zabcx", []bool{false, true, true}},
		{"nested", []string{"she", "he", "hers"}, "uSHERS", []bool{true, true, true}},
		{"prefix then restart", []string{"aab"}, "aaab", []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rs []*rule
			for _, l := range tt.lits {
				var errs []error
				c := &leaf{probe: []fieldTest{{f: field{kind: fBody}, m: matcher{re: compilePattern("body", l, &errs)}}}}
				rs = append(rs, &rule{match: c})
			}
			ix := newRuleIndex(rs)
			found := make([]bool, ix.nlits+1)
			ix.search(0, tt.text, found)
			for i, l := range tt.lits {
				if got := ix.possible(i, found); got != tt.want[i] {
					t.Errorf("%q in %q: %v, want %v", l, tt.text, got, tt.want[i])
				}
			}
		})
	}
}

// TestRules_GuardVendor: a rule with guard_vendor is guarded by the
// guards of the other rules of its vendor, and by nothing of another's.
func TestRules_GuardVendor(t *testing.T) {
	doc := `version: 2
rules:
  - id: lookalike
    vendor: Other
    product: Look-alike
    protocol_family: https
    match: {header.server: '^never$'}
    guard: {body: 'other-guard'}
  - id: hand
    vendor: Acme
    product: Gateway
    protocol_family: https
    match: {body: 'acme-hand-tell'}
    guard: {body: 'imitator-tell'}
  - id: generated
    vendor: acme
    product: Gateway
    protocol_family: https
    match: {body: 'acme-generated-tell'}
    guard_vendor: true
`
	rules, err := ParseRules([]byte(doc), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, body, want string
	}{
		{"generated tell", "acme-generated-tell", "generated"},
		{"guard of its vendor's rule", "acme-generated-tell imitator-tell", ""},
		{"guard of another vendor's rule", "acme-generated-tell other-guard", "generated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{
				Request: &ingest.Request{Method: "GET", Path: "/"}, Response: &ingest.Response{Status: 200, Body: &ingest.Body{Data: tt.body}}}}}
			fp, _ := rules.Match(svc, nil)
			if fp.RuleID != tt.want {
				t.Errorf("rule %q, want %q", fp.RuleID, tt.want)
			}
		})
	}
}

// An expression is compiled once for the rule set: a named condition used
// by many rules, and the same expression written in several, share one
// compiled pattern.
func TestLoadRules_SharesCompiledExpressions(t *testing.T) {
	fsys := fstest.MapFS{"rules/a.yaml": &fstest.MapFile{Data: []byte(`version: 2
conditions:
  tell: {header.server: '^Imitation$'}
rules:
  - id: one
    vendor: V
    product: P
    protocol_family: https
    match: {body: 'same expression'}
    guard: {use: tell}
  - id: two
    vendor: V
    product: Q
    protocol_family: https
    match: {body: 'same expression'}
    guard: {use: tell}
`)}}
	rs, err := LoadRulesFS(fsys, "rules")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[*pattern]int{}
	count := func(p *pattern) { seen[p]++ }
	for _, r := range rs.rules {
		eachPattern(r.match, count)
		eachPattern(r.guard, count)
	}
	if len(seen) != 2 {
		t.Fatalf("%d compiled patterns for 2 distinct expressions used 4 times", len(seen))
	}
	for p, n := range seen {
		if n != 2 {
			t.Errorf("%s used %d times, want 2 (shared)", p.re, n)
		}
	}
}
