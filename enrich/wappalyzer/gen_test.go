package wappalyzer

import (
	"flag"
	"os"
	"testing"

	"github.com/netintel/netintel/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite enrich/rules/65-wappalyzer.yaml")

const generated = "../rules/65-wappalyzer.yaml"

// TestGenerate_UpToDate regenerates the rules from the data excerpt and
// fails when the committed file differs.
func TestGenerate_UpToDate(t *testing.T) {
	data, err := os.ReadFile("data/fingerprints_data.json")
	if err != nil {
		t.Fatal(err)
	}
	got, st, err := Generate(data)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rules == 0 {
		t.Fatal("no rules generated")
	}
	t.Logf("%d technologies, %d rules, %d tells, %d versions, skipped %v, tells skipped %v", st.Technologies, st.Rules, st.Tells, st.Versions, st.Skipped, st.SkippedTells)
	testutil.GeneratedFile(t, generated, got, *update, "go test ./enrich/wappalyzer -run TestGenerate_UpToDate -update")
}
