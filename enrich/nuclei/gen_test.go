package nuclei

import (
	"bytes"
	"flag"
	"os"
	"testing"
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
	if *update {
		if err := os.WriteFile(generated, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(generated)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date: run go test ./enrich/nuclei -run TestGenerate_UpToDate -update", generated)
	}
}
