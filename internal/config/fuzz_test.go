package config

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary documents to the config parser. No input may
// panic; a refused document is an *Error whose every line names the file
// and is one line.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"../../pipeline.yaml", "../../deploy/pipeline.cluster.yaml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("nats:\n  embeded: {}\n"))
	f.Add([]byte("schedules:\n  snapshot: \"61 * * * *\"\napi:\n  listen: x\n"))
	f.Add([]byte("enrich:\n  workers: -1\n  cache_mb: ${NOPE}\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		cfg, err := Parse(doc, "f.yaml")
		if err == nil {
			if cfg == nil {
				t.Fatal("no config and no error")
			}
			return
		}
		var ce *Error
		if !errors.As(err, &ce) || len(ce.Lines) == 0 {
			t.Fatalf("error %T %q is not a list of lines", err, err)
		}
		for _, l := range ce.Lines {
			if !strings.HasPrefix(l, "f.yaml: ") || strings.Contains(l, "\n") {
				t.Fatalf("error line %q does not name the file on one line", l)
			}
		}
	})
}
