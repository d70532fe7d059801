package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish"
	"github.com/netintel/netintel/publish/gen"
)

// TestIPAPI_RunServesPublishedSnapshot runs the real binary: the IP routes
// answer 503 before a snapshot while /ready says 200, and 401 without the
// internal key; a snapshot
// published into its data dir (with the event on its NATS) is served
// without a restart.
func TestIPAPI_RunServesPublishedSnapshot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(cfgPath, []byte("api:\n  internal_key: mod-test-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "run", "--config", cfgPath, "--data-dir", dir, "--listen", "127.0.0.1:0")
	base := "http://" + p.addr
	lookup := func(ip, key string) int {
		req, _ := http.NewRequest("GET", base+"/api/v1/shadow_vpn/lookup/"+ip, nil)
		req.Header.Set("X-Internal-Key", key)
		req.Header.Set("X-Tier", "enterprise")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	g := gen.New(300, 3)
	var ip string
	for i := range 300 {
		if len(g.Host(i).Assets) > 0 {
			ip = gen.HostAddr(i).String()
			break
		}
	}
	if code := lookup(ip, "mod-test-key"); code != 503 {
		t.Fatalf("before a snapshot: %d, want 503", code)
	}
	// No snapshot is not a readiness problem: the rest of the system serves.
	if code, body := get(t, base+"/ready"); code != 200 {
		t.Fatalf("/ready before a snapshot: %d %s", code, body)
	}
	if code := lookup(ip, "wrong"); code != 401 {
		t.Fatalf("wrong key: %d, want 401", code)
	}
	if code, body := get(t, base+"/internal/openapi.json"); code != 200 || !strings.Contains(body, `"openapi": "3.1.0"`) {
		t.Fatalf("/internal/openapi.json: %d", code)
	}
	if code, body := get(t, base+"/openapi.json"); code != 200 || !strings.Contains(body, `"openapi": "3.0.3"`) || !strings.Contains(body, `"url": "`+base+`"`) {
		t.Fatalf("/openapi.json (the customer document, servers %s): %d %.300s", base, code, body)
	}

	url, err := bus.URLFromDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, js := testutil.Connect(t, url)
	st, err := objstore.NewFolder(filepath.Join(dir, "objects"))
	if err != nil {
		t.Fatal(err)
	}
	pc := config.Default().Publish
	pc.WorkDir = t.TempDir()
	pc.Formats = []string{"ndjson", "mmdb"}
	if _, err := publish.New(pc, st, js, testutil.Logger(t)).Run(context.Background(), g, "2026-11-22"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for lookup(ip, "mod-test-key") != 200 {
		if time.Now().After(deadline) {
			t.Fatalf("snapshot not served 30s after publishing\n%s", p.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body := get(t, base+"/public/v1/snapshot"); code != 200 || !strings.Contains(body, "2026-11-22") {
		t.Errorf("/public/v1/snapshot: %d %s", code, body)
	}
}
