package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/testutil"
)

// TestIngestCommand_EndToEnd runs `netintel ingest` against a real
// nats-server with an enrich worker and reads the stored state back.
func TestIngestCommand_EndToEnd(t *testing.T) {
	t.Parallel()
	n, _ := startEnrich(t)

	run := func(args ...string) (string, string, error) {
		var o, e bytes.Buffer
		env := &Env{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
		err := run(t.Context(), env, append([]string{"ingest"}, args...))
		return o.String(), e.String(), err
	}
	if _, _, err := run("--config", "testdata/missing.yaml", "--nats", n.URL, "--format", "observations", "../../samples/observations.ndjson"); err == nil || !strings.Contains(err.Error(), "read config") {
		t.Errorf("missing config file: %v", err)
	}
	out, _, err := run("--nats", n.URL, "--format", "observations", "../../samples/observations.ndjson")
	if err != nil || !strings.Contains(out, "20 observations read, 20 stored") {
		t.Fatalf("ingest: %v %q", err, out)
	}
	out, _, err = run("--nats", n.URL, "--format", "cidr-list", "--kind", "cdn", "--provider", "Cloudflare", "../../samples/cloudflare-ips-v4.txt")
	if err != nil || !strings.Contains(out, "15 stored") {
		t.Fatalf("cidr-list: %v %q", err, out)
	}
	// A gzipped feed is read as the plain one (recognised by its bytes,
	// whatever its name).
	plain, err := os.ReadFile("../../samples/proxy-list-http.txt")
	if err != nil {
		t.Fatal(err)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(plain)
	zw.Close()
	gz := filepath.Join(t.TempDir(), "http.txt")
	if err := os.WriteFile(gz, zb.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err = run("--nats", n.URL, "--format", "proxy-list", "--kind", "http", gz)
	if err != nil || !strings.Contains(out, "40 observations read, 40 stored") {
		t.Fatalf("gzipped proxy-list: %v %q", err, out)
	}
	waitCtx, stop := context.WithTimeout(t.Context(), 30*time.Second)
	defer stop()
	if err := enrich.WaitIdle(waitCtx, n.JS); err != nil {
		t.Fatal(err)
	}
	st := enrich.NewState(n.JS, "ipstate")
	if r, ok, err := st.Get(t.Context(), "203.0.113.20"); err != nil || !ok || *r.Assets[0].Vendor != "Cisco" {
		t.Errorf("203.0.113.20 = %+v %v %v", r, ok, err)
	}
	if r, ok, err := st.Get(t.Context(), "104.16.0.0/13"); err != nil || !ok || !r.Has("cdn") || *r.Provider != "Cloudflare" {
		t.Errorf("104.16.0.0/13 = %+v %v %v", r, ok, err)
	}

	bad := []struct {
		name string
		args []string
		want string
	}{
		{"no file", []string{"--nats", n.URL, "--format", "tor-exits"}, "name a FILE_OR_URL"},
		{"no format", []string{"--nats", n.URL, "x"}, "--format is required"},
		{"cidr-list without kind", []string{"--nats", n.URL, "--format", "cidr-list", "x"}, "--kind"},
		{"unknown format", []string{"--nats", n.URL, "--format", "csv", "../../samples/mullvad.txt"}, "unknown format"},
		{"unknown kind", []string{"--nats", n.URL, "--format", "cidr-list", "--kind", "vpn_exit", "../../samples/mullvad.txt"}, "cidr-list needs --kind: one of"},
		{"geofeed without provider", []string{"--nats", n.URL, "--format", "geofeed", "--kind", "hosting", "x"}, "geofeed needs --provider"},
		{"proxy-list with a class as kind", []string{"--nats", n.URL, "--format", "proxy-list", "--kind", "vpn", "x"}, "proxy-list kind is its protocol"},
		{"kind on another format", []string{"--nats", n.URL, "--format", "tor-exits", "--kind", "tor", "../../samples/tor-exit-addresses"}, "only a cidr-list, geofeed, ip2proxy or proxy-list takes --kind"},
		{"provider on another format", []string{"--nats", n.URL, "--format", "aws-ranges", "--provider", "AWS", "../../samples/aws-ip-ranges.json"}, "only a cidr-list or geofeed takes --provider"},
		{"confidence out of range", []string{"--nats", n.URL, "--format", "tor-exits", "--confidence", "1.5", "../../samples/tor-exit-addresses"}, "--confidence must be 0..1"},
		{"missing file", []string{"--nats", n.URL, "--format", "tor-exits", "/nonexistent/feed"}, "open feed"},
		{"no nats", []string{"--format", "tor-exits", "x"}, "no NATS"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := run(tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	// A malformed line is reported with its number and the rest goes in.
	out, errOut, err := run("--nats", n.URL, "--format", "cidr-list", "--kind", "vpn", "testdata/ingest-bad.txt")
	if err != nil || !strings.Contains(errOut, "testdata/ingest-bad.txt: line 2: not an IP address, CIDR or range: \"not-an-address\"") {
		t.Errorf("malformed line: %v %q", err, errOut)
	}
	if !strings.Contains(out, "2 observations read, 2 stored, 0 duplicates, 1 malformed") {
		t.Errorf("malformed line: the rest did not go in: %q", out)
	}
	if err := enrich.WaitIdle(waitCtx, n.JS); err != nil {
		t.Fatal(err)
	}
	for _, ip := range []string{"192.0.2.1", "192.0.2.2"} {
		if r, ok, err := st.Get(t.Context(), ip); err != nil || !ok || !r.Has("vpn") {
			t.Errorf("%s after the malformed file = %+v %v %v", ip, r, ok, err)
		}
	}
}

// TestIngestCommand_Flows ingests what nfdump wrote of known flows: the
// flows with a protocol are stored and classified, the others counted.
func TestIngestCommand_Flows(t *testing.T) {
	t.Parallel()
	n, _ := startEnrich(t)

	var o, e bytes.Buffer
	env := &Env{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
	if err := run(t.Context(), env, []string{"ingest", "--nats", n.URL, "--format", "nfdump-csv", "--source", "edge-1",
		"../../ingest/testdata/nfdump-1.7.1.csv"}); err != nil {
		t.Fatalf("ingest: %v %s", err, e.String())
	}
	// GRE (PPTP) and TCP 9001 (Tor) are no longer taken for a protocol:
	// on real captures every such flow was another tunnel or program
	// (docs/ingest-enrich.md, "On real captures").
	if want := "14 observations read, 14 stored, 0 duplicates, 0 malformed; skipped 10 records (flow with no protocol recognised: 10)"; !strings.Contains(o.String(), want) {
		t.Fatalf("got %q, want %q", o.String(), want)
	}
	waitCtx, stop := context.WithTimeout(t.Context(), 30*time.Second)
	defer stop()
	if err := enrich.WaitIdle(waitCtx, n.JS); err != nil {
		t.Fatal(err)
	}
	st := enrich.NewState(n.JS, "ipstate")
	for ip, class := range map[string]string{"198.51.100.20": "vpn", "203.0.113.40": "vpn", "2001:db8:2::21": "vpn"} {
		if r, ok, err := st.Get(t.Context(), ip); err != nil || !ok || !r.Has(class) {
			t.Errorf("%s = %+v %v %v, want %s", ip, r, ok, err, class)
		}
	}
	for _, ip := range []string{"198.51.100.80", "198.51.100.53", "192.0.2.10", "198.51.100.70"} {
		if _, ok, err := st.Get(t.Context(), ip); err != nil || ok {
			t.Errorf("%s stored (%v %v): no protocol was recognised in its flows, or it is a client", ip, ok, err)
		}
	}
}

// `netintel ingest --help` lists every format with its line.
func TestIngestCommand_HelpListsFormats(t *testing.T) {
	t.Parallel()
	var o, e bytes.Buffer
	env := &Env{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
	_ = run(t.Context(), env, []string{"ingest", "--help"})
	for _, f := range config.IngestFormats {
		if config.IngestFormatHelp[f] == "" || !strings.Contains(o.String(), "  "+f+" ") || !strings.Contains(o.String(), config.IngestFormatHelp[f]) {
			t.Errorf("help misses format %s: %s", f, o.String())
		}
	}
}

// Scanner output goes in with failed modules counted; a file of the
// wrong format is refused with one line naming the format and the first
// record that did not fit.
func TestIngestCommand_ScannerFormats(t *testing.T) {
	t.Parallel()
	n := testutil.StartNATS(t)
	n.Ensure(t)
	run := func(args ...string) (string, string, error) {
		var o, e bytes.Buffer
		env := &Env{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
		err := run(t.Context(), env, append([]string{"ingest", "--nats", n.URL}, args...))
		return o.String(), e.String(), err
	}
	out, _, err := run("--format", "zgrab2", "../../ingest/testdata/zgrab2-constructed.jsonl")
	if err != nil || !strings.Contains(out, "2 observations read, 2 stored") ||
		!strings.Contains(out, "skipped 2 records (zgrab2 module failed: http io-timeout: 1; zgrab2 module failed: ssh connection-timeout: 1)") {
		t.Errorf("zgrab2: %v %q", err, out)
	}
	out, errOut, err := run("--format", "masscan", "../../ingest/testdata/nmap-complex.xml")
	if err == nil || !strings.Contains(err.Error(), "nothing in ../../ingest/testdata/nmap-complex.xml reads as masscan: first record that did not fit: line 4: nmap's XML, not masscan's") || !strings.Contains(err.Error(), "--format nmap-xml") ||
		strings.Contains(errOut, "(skipped)") || out != "" {
		t.Errorf("wrong format: %v, stdout %q, stderr %q", err, out, errOut)
	}
}

// startEnrich starts a real nats-server with the declared streams and an
// enrich worker with the built-in rules, both stopped at the test's end.
func startEnrich(t *testing.T) (*testutil.NATS, *config.Config) {
	t.Helper()
	n := testutil.StartNATS(t)
	cfg := n.Ensure(t)
	w, err := enrich.NewWorker(n.JS, cfg.Enrich, nil, nil, testutil.Logger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return n, cfg
}

// TestIngestCommand_DryRun: --dry-run needs no system and writes to stdout
// the very lines the stream stores for the same file (read back from a
// real nats-server), which --format observations reads back unchanged;
// the counts go to stderr, and --wait with it is refused.
func TestIngestCommand_DryRun(t *testing.T) {
	t.Parallel()
	const file = "../../ingest/testdata/nmap-complex.xml"
	dry, errOut, code := runCLI(t, "ingest", "--format", "nmap-xml", "--dry-run", file)
	if code != 0 || !strings.Contains(errOut, "nmap-xml: 4 observations read, 4 written (dry run: nothing published), 0 malformed") {
		t.Fatalf("dry run: exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(dry, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("dry run wrote %d lines, want 4:\n%s", len(lines), dry)
	}

	n := testutil.StartNATS(t)
	n.Ensure(t)
	if out, errOut, code := runCLI(t, "ingest", "--nats", n.URL, "--format", "nmap-xml", file); code != 0 || !strings.Contains(out, "4 stored") {
		t.Fatalf("ingest: exit %d, %q %q", code, out, errOut)
	}
	cons, err := n.JS.OrderedConsumer(t.Context(), "OBSERVATIONS", jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for range 4 {
		m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, string(m.Data()))
	}
	// The stream orders by subject partition's arrival; compare as sets.
	slices.Sort(stored)
	sorted := slices.Sorted(slices.Values(lines))
	if !slices.Equal(stored, sorted) {
		t.Errorf("dry run and stream differ:\ndry:    %q\nstored: %q", sorted, stored)
	}

	p := filepath.Join(t.TempDir(), "obs.ndjson")
	if err := os.WriteFile(p, []byte(dry), 0o644); err != nil {
		t.Fatal(err)
	}
	again, _, code := runCLI(t, "ingest", "--format", "observations", "--dry-run", p)
	if code != 0 || again != dry {
		t.Errorf("observations read back: exit %d\n%s\nwant\n%s", code, again, dry)
	}

	if _, errOut, code := runCLI(t, "ingest", "--format", "nmap-xml", "--dry-run", "--wait", file); code == 0 || !strings.Contains(errOut, "--wait and --dry-run do not go together") {
		t.Errorf("--wait --dry-run: exit %d, %q", code, errOut)
	}
	if out, errOut, code := runCLI(t, "ingest", "--format", "masscan", "--dry-run", file); code == 0 || out != "" || !strings.Contains(errOut, "reads as masscan") {
		t.Errorf("wrong format dry run: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
