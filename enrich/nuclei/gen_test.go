package nuclei

import (
	"flag"
	"os"
	"testing"

	"github.com/netintel/netintel/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite enrich/rules/60-nuclei.yaml")

const generated = "../rules/60-nuclei.yaml"

// TestGenerate_UpToDate regenerates the rules from the templates and
// fails when the committed file differs.
func TestGenerate_UpToDate(t *testing.T) {
	got, st, err := Generate(os.DirFS("templates"), ".")
	if err != nil {
		t.Fatal(err)
	}
	if st.Rules == 0 {
		t.Fatal("no rules generated")
	}
	t.Logf("%d templates, %d rules, %d versions, skipped %v, matchers skipped %v", st.Templates, st.Rules, st.Versions, st.Skipped, st.SkippedMatchers)
	testutil.GeneratedFile(t, generated, got, *update, "go test ./enrich/nuclei -run TestGenerate_UpToDate -update")
}
