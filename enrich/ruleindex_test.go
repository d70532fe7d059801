package enrich

import (
	"testing"

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
