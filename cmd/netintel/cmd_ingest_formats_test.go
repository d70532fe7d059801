package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/netintel/netintel/internal/testutil"
)

// The real samples of httpx, naabu, fingerprintx, nmap -oG, Censys,
// Zeek and Suricata go in through `netintel ingest` with nothing
// malformed, and their skipped records are counted by reason.
func TestIngestCommand_MoreScannerAndFlowFormats(t *testing.T) {
	t.Parallel()
	n := testutil.StartNATS(t)
	n.Ensure(t)
	for _, c := range []struct{ format, file, want string }{
		{"httpx", "httpx.jsonl", "8 observations read, 8 stored, 0 duplicates, 0 malformed"},
		{"naabu", "naabu.jsonl", "7 observations read, 7 stored, 0 duplicates, 0 malformed"},
		{"fingerprintx", "fingerprintx.jsonl", "3 observations read, 3 stored, 0 duplicates, 0 malformed"},
		{"nmap-grep", "nmap-grep.gnmap", "13 observations read, 13 stored, 0 duplicates, 0 malformed"},
		{"censys", "censys-v2-host.json", "2 observations read, 2 stored, 0 duplicates, 0 malformed"},
		{"censys", "censys-platform-host.json", "3 observations read, 3 stored, 0 duplicates, 0 malformed"},
		{"zeek", "zeek-docs.ndjson", "13 observations read, 12 stored, 1 duplicates, 0 malformed; skipped 11 records (flow with no protocol recognised: 7; zeek x509 record (read for ssl.log): 4)"},
		{"zeek", "zeek-conn.log", "0 observations read, 0 stored, 0 duplicates, 0 malformed; skipped 5 records (flow with no protocol recognised: 5)"},
		{"suricata-eve", "suricata-eve.json", "10 observations read, 10 stored, 0 duplicates, 0 malformed; skipped 11 records"},
	} {
		var o, e bytes.Buffer
		env := &Env{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
		err := run(t.Context(), env, []string{"ingest", "--nats", n.URL, "--format", c.format, "../../ingest/testdata/" + c.file})
		if err != nil || !strings.Contains(o.String(), c.want) {
			t.Errorf("%s %s: %v, stdout %q, stderr %q, want %q", c.format, c.file, err, o.String(), e.String(), c.want)
		}
	}
	// A file of another format is refused, naming the first record that did not fit.
	var o, e bytes.Buffer
	env := &Env{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
	err := run(t.Context(), env, []string{"ingest", "--nats", n.URL, "--format", "httpx", "../../ingest/testdata/zeek-conn.log"})
	if err == nil || !strings.Contains(err.Error(), "reads as httpx: first record that did not fit: line 1:") {
		t.Errorf("wrong format: %v, stdout %q", err, o.String())
	}
}
