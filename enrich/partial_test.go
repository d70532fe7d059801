package enrich

import (
	"testing"
)

// The partial variants of the corpus (docs/accuracy.md, "Partial
// evidence"): the figures are logged.
func TestEvaluatePartial_Corpus(t *testing.T) {
	rules, caps := rulesAndCorpus(t)
	rep := EvaluatePartial(rules, caps)
	t.Logf("\n%s", rep.Table())
	for _, w := range rep.Wrong {
		t.Log("WRONG: " + w)
	}
	for _, c := range rep.Copies {
		t.Log("copy: " + c)
	}
}

func TestEvaluatePartial_Lost(t *testing.T) {
	rules, caps := rulesAndCorpus(t)
	rep := EvaluatePartial(rules, caps)
	for k, m := range rep.LostBy {
		for r, n := range m {
			t.Logf("LOST\t%s\t%s\t%d", k, r, n)
		}
	}
	for _, m := range rep.Missed {
		t.Log("MISSED " + m)
	}
}
