package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateCommand_Reshard moves a state of one bucket to two shards:
// refused while a worker runs, done with --force; afterwards the default
// configuration (one shard) is refused with the command to run, and a
// configuration with enrich.shards: 2 reads every record.
func TestStateCommand_Reshard(t *testing.T) {
	t.Parallel()
	n, _ := startEnrich(t)
	if _, errOut, code := runCLI(t, "ingest", "--nats", n.URL, "--log-level", "warn", "--format", "observations", "--wait", "../../samples/observations.ndjson"); code != 0 {
		t.Fatal(errOut)
	}
	for _, tc := range []struct {
		args    []string
		code    int
		out, er string
	}{
		{[]string{"state", "reshard", "--nats", n.URL}, 2, "", "give --to N or --abort"},
		{[]string{"state", "reshard", "--to", "65", "--nats", n.URL}, 2, "", "--to must be 1..64, got 65"},
		{[]string{"state", "reshard", "--to", "2", "--nats", n.URL}, 1, "", "enrich worker(s) are running: stop them first"},
		{[]string{"state", "reshard", "--to", "2", "--force", "--log-level", "warn", "--nats", n.URL}, 0, "state resharded from 1 to 2 shard(s)", ""},
		{[]string{"state", "get", "--nats", n.URL, "203.0.113.20"}, 1, "", "enrich.shards is 1: run `netintel state reshard --to 1`"},
		{[]string{"state", "reshard", "--abort", "--nats", n.URL}, 0, "no reshard in progress", ""},
	} {
		out, errOut, code := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.er) {
			t.Errorf("%s: exit %d, want %d\nstdout %q (want %q)\nstderr %q (want %q)", strings.Join(tc.args, " "), code, tc.code, out, tc.out, errOut, tc.er)
		}
	}
	cfg := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(cfg, []byte("enrich:\n  shards: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "state", "get", "--config", cfg, "--nats", n.URL, "203.0.113.20")
	if code != 0 || !strings.Contains(out, `"ip": "203.0.113.20"`) {
		t.Errorf("with enrich.shards: 2: exit %d\n%s%s", code, out, errOut)
	}
}
