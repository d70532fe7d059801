package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/netintel/netintel/internal/testutil"
)

// The nuclei, tlsx, LeakIX and ONYPHE samples go in through `netintel ingest` with
// nothing malformed, and another tool's file is refused with one line
// naming the format.
func TestIngestCommand_NucleiTLSXLeakIXOnyphe(t *testing.T) {
	t.Parallel()
	n := testutil.StartNATS(t)
	n.Ensure(t)
	run1 := func(format, file string) (string, error) {
		var o, e bytes.Buffer
		env := &Env{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
		err := run(t.Context(), env, []string{"ingest", "--nats", n.URL, "--format", format, "../../ingest/testdata/" + file})
		return o.String(), err
	}
	for _, c := range []struct{ format, file, want string }{
		{"nuclei", "nuclei.jsonl", "2 observations read, 2 stored, 0 duplicates, 0 malformed"},
		{"nuclei", "nuclei-appliance.jsonl", "2 observations read, 2 stored, 0 duplicates, 0 malformed"},
		{"tlsx", "tlsx.jsonl", "4 observations read, 4 stored, 0 duplicates, 0 malformed"},
		{"leakix", "leakix-ip4scout.jsonl", "5 observations read, 5 stored, 0 duplicates, 0 malformed"},
		{"leakix", "leakix-l9event.json", "1 observations read, 1 stored, 0 duplicates, 0 malformed"},
		{"onyphe", "onyphe-api-v1.json", "2 observations read, 2 stored, 0 duplicates, 0 malformed"},
	} {
		out, err := run1(c.format, c.file)
		if err != nil || !strings.Contains(out, c.want) {
			t.Errorf("%s %s: %v, stdout %q, want %q", c.format, c.file, err, out, c.want)
		}
	}
	for _, c := range []struct{ format, file string }{{"nuclei", "httpx.jsonl"}, {"tlsx", "nuclei.jsonl"}, {"nuclei", "tlsx.jsonl"}, {"leakix", "naabu.jsonl"}, {"onyphe", "nuclei.jsonl"}} {
		_, err := run1(c.format, c.file)
		if err == nil || strings.Count(err.Error(), "\n") != 0 || !strings.Contains(err.Error(), "reads as "+c.format+": first record that did not fit: line 1:") {
			t.Errorf("%s reading %s: %v", c.format, c.file, err)
		}
	}
}
