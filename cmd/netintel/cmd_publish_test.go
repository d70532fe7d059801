package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/schedule"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish"
	"github.com/netintel/netintel/publish/gen"
)

func TestCmdPublish_BadArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad date", []string{"publish", "--date", "2026-02-30"}, "--date: date \"2026-02-30\": not a calendar day"},
		{"date shape", []string{"publish", "--date", "yesterday"}, "--date: date \"yesterday\": want YYYY-MM-DD"},
		{"extra argument", []string{"publish", "now"}, "unexpected argument \"now\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(t.Context(), &Env{Stdout: &out, Stderr: &out, Getenv: os.Getenv}, tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPublishSnapshot_NoState(t *testing.T) {
	t.Parallel()
	st, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &System{Cfg: config.Default(), Log: testutil.Logger(t), Store: st}
	if _, err := publishSnapshot(t.Context(), s, ""); !errors.Is(err, errNoIPState) {
		t.Fatalf("err = %v", err)
	}
}

// TestPublishSnapshot_System publishes through the wiring a running system
// uses: openSystem against NATS, the folder store from the config, the
// state the enrich module would set.
func TestPublishSnapshot_System(t *testing.T) {
	t.Parallel()
	s, dir := openTestSystem(t, func(dir string) string {
		return "publish:\n  keep: 3\n  run_retries: 2\n  work_dir: " + filepath.Join(dir, "work") + "\n"
	})
	objDir := filepath.Join(dir, "objects")
	j, ok := job(s, "snapshot")
	if !ok {
		t.Fatal("snapshot job not registered")
	}
	if j.Retries != 2 || j.RetryWait != time.Minute {
		t.Fatalf("snapshot job retries %d after %s, want publish.run_retries 2 after the default 1m", j.Retries, j.RetryWait)
	}
	s.IPState = gen.New(300, 9)
	res, err := publishSnapshot(t.Context(), s, "2026-11-23")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := objstore.NewFolder(objDir)
	m, err := publish.Latest(t.Context(), st)
	if err != nil || m.SnapshotDate != "2026-11-23" || m.Hosts != 300 || len(m.Files) != 9 || res.Manifest.Key != m.Key {
		t.Fatalf("latest = %+v, %v", m, err)
	}
	stream, err := s.Bus.JS.Stream(t.Context(), "EVENTS")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.GetLastMsgForSubject(t.Context(), publish.EventSubject); err != nil {
		t.Fatalf("event: %v", err)
	}
}

func job(s *System, name string) (schedule.Job, bool) {
	for _, j := range s.jobs {
		if j.Name == name {
			return j, true
		}
	}
	return schedule.Job{}, false
}

// TestPublishCommand_EndToEnd runs `netintel publish` as an operator
// would: observations ingested and enriched into the state, then the
// command builds and publishes the snapshot of that state, prints what it
// wrote, and a backfill of an older date leaves latest alone.
func TestPublishCommand_EndToEnd(t *testing.T) {
	t.Parallel()
	n, _ := startEnrich(t)

	dir := t.TempDir()
	objDir := filepath.Join(dir, "objects")
	cfgPath := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(cfgPath, []byte("object_store:\n  type: file\n  file:\n    dir: "+objDir+"\npublish:\n  work_dir: "+filepath.Join(dir, "work")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(cmd string, args ...string) (string, error) {
		var o, e bytes.Buffer
		env := &Env{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
		err := run(t.Context(), env, append([]string{cmd, "--config", cfgPath, "--nats", n.URL, "--log-level", "error"}, args...))
		return o.String(), err
	}
	if out, err := run("ingest", "--format", "cidr-list", "--kind", "cdn", "--provider", "Cloudflare", "../../samples/cloudflare-ips-v4.txt"); err != nil || !strings.Contains(out, "15 stored") {
		t.Fatalf("ingest: %v %q", err, out)
	}
	waitCtx, stop := context.WithTimeout(t.Context(), 30*time.Second)
	defer stop()
	if err := enrich.WaitIdle(waitCtx, n.JS); err != nil {
		t.Fatal(err)
	}

	out, err := run("publish", "--date", "2026-11-23")
	if err != nil {
		t.Fatalf("publish: %v\n%s", err, out)
	}
	build := `\d{8}T\d{6}\.\d{3}Z-[0-9a-f]{8}` // each run publishes into a build folder of its own
	for _, want := range []string{
		`published snapshots/2026-11-23/` + build + `/manifest\.json: 0 hosts, 15 ranges, 0 skipped`,
		`snapshots/2026-11-23/` + build + `/ipintel\.parquet`,
		`snapshots/2026-11-23/` + build + `/ipintel\.mmdb`,
		`snapshots/latest -> 2026-11-23`,
		`delta: no earlier snapshot: no delta`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("publish output lacks %q:\n%s", want, out)
		}
	}
	st, err := objstore.NewFolder(objDir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := publish.Latest(t.Context(), st)
	if err != nil || m.SnapshotDate != "2026-11-23" || m.Ranges != 15 || len(m.Files) != 9 {
		t.Fatalf("latest = %+v, %v", m, err)
	}
	for _, f := range m.Files {
		if f.Rows != 15 {
			t.Errorf("%s rows = %d, want 15", f.Name, f.Rows)
		}
	}

	out, err = run("publish", "--date", "2026-11-01")
	if err != nil || !strings.Contains(out, "snapshots/latest unchanged (a newer snapshot is latest)") {
		t.Fatalf("backfill: %v\n%s", err, out)
	}
	if m, err := publish.Latest(t.Context(), st); err != nil || m.SnapshotDate != "2026-11-23" {
		t.Fatalf("latest after backfill = %+v, %v", m, err)
	}
}

// openTestSystem opens the system of a role on a real nats-server and a
// folder object store in a temp dir, with tail (given the dir) appended to
// the configuration; it is closed at the test's end.
func openTestSystem(t *testing.T, tail func(dir string) string) (*System, string) {
	t.Helper()
	n := testutil.StartNATS(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "pipeline.yaml")
	cfg := "object_store:\n  type: file\n  file:\n    dir: " + filepath.Join(dir, "objects") + "\n" + tail(dir)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &out, Getenv: os.Getenv}
	cf := commonFlags{config: cfgPath, natsURL: n.URL, logLevel: "error"}
	s, err := openSystem(t.Context(), env, &cf, roleOpts{ensure: true, store: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s, dir
}
