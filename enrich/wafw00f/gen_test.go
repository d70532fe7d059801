package wafw00f

import (
	"flag"
	"os"
	"testing"

	"github.com/netintel/netintel/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite enrich/rules/66-wafw00f.yaml")

const generated = "../rules/66-wafw00f.yaml"

// TestGenerate_UpToDate regenerates the rules from the plugins and
// fails when the committed file differs.
func TestGenerate_UpToDate(t *testing.T) {
	got, st, err := Generate(os.DirFS("plugins"), ".")
	if err != nil {
		t.Fatal(err)
	}
	if st.Rules == 0 {
		t.Fatal("no rules generated")
	}
	t.Logf("%d plugins, %d rules, skipped %v, alternatives skipped %v", st.Plugins, st.Rules, st.Skipped, st.SkippedTells)
	testutil.GeneratedFile(t, generated, got, *update, "go test ./enrich/wafw00f -run TestGenerate_UpToDate -update")
}
