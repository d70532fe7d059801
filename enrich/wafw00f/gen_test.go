package wafw00f

import (
	"bytes"
	"flag"
	"os"
	"testing"
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
		t.Fatalf("%s is out of date: run go test ./enrich/wafw00f -run TestGenerate_UpToDate -update", generated)
	}
}
