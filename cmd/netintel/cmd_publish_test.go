package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish"
	"github.com/netintel/netintel/publish/gen"
)

func TestCmdPublish_BadArgs(t *testing.T) {
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
	n := testutil.StartNATS(t)
	dir := t.TempDir()
	objDir := filepath.Join(dir, "objects")
	cfgPath := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(cfgPath, []byte("object_store:\n  type: file\n  file:\n    dir: "+objDir+"\npublish:\n  keep: 3\n  work_dir: "+filepath.Join(dir, "work")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &out, Getenv: os.Getenv}
	cf := commonFlags{config: cfgPath, natsURL: n.URL, logLevel: "error"}
	s, err := openSystem(t.Context(), env, &cf, roleOpts{ensure: true, store: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if !hasJob(s, "snapshot") {
		t.Fatal("snapshot job not registered")
	}
	s.IPState = gen.New(300, 9)
	res, err := publishSnapshot(t.Context(), s, "2026-11-23")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := objstore.NewFolder(objDir)
	m, err := publish.Latest(t.Context(), st)
	if err != nil || m.SnapshotDate != "2026-11-23" || m.Hosts != 300 || len(m.Files) != 4 || res.Manifest.Key != m.Key {
		t.Fatalf("latest = %+v, %v", m, err)
	}
	stream, err := n.JS.Stream(t.Context(), "EVENTS")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.GetLastMsgForSubject(t.Context(), publish.EventSubject); err != nil {
		t.Fatalf("event: %v", err)
	}
}

func hasJob(s *System, name string) bool {
	for _, j := range s.jobs {
		if j.Name == name {
			return true
		}
	}
	return false
}
