package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/testutil"
)

// TestModSecrets_Run: `netintel run` mounts the secret API on the
// listener and registers the sweeper worker, on the embedded NATS.
func TestModSecrets_Run(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	out := &testutil.LockedBuffer{}
	done := make(chan error, 1)
	env := &Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: io.Discard, Getenv: os.Getenv}
	cfg := filepath.Join(dir, "none.yaml")
	if err := os.WriteFile(cfg, []byte("secrets:\n  sweep_interval: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		done <- run(ctx, env, []string{"run", "--config", cfg, "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0"})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("netintel run did not stop")
		}
	})
	re := regexp.MustCompile(`listening on (http://\S+)`)
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
			break
		}
		select {
		case err := <-done:
			t.Fatalf("run ended: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("not listening after 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	res, err := http.Post(base+"/api/ss?src=dev", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), `"saveSchemes":[0,3]`) {
		t.Fatalf("ss: %d %s", res.StatusCode, b)
	}
	res, err = http.Get(base + "/api/get")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 405 {
		t.Fatalf("GET /api/get: %d", res.StatusCode)
	}
}

func TestModSecrets_SweeperWorker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		yaml string
		want bool
	}{
		{"default", "", true},
		{"off", "secrets:\n  sweep_interval: 0s\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := filepath.Join(dir, tt.name+".yaml")
			if err := os.WriteFile(cfg, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: os.Getenv}
			s, err := openSystem(t.Context(), env, &commonFlags{config: cfg, dataDir: filepath.Join(dir, tt.name)}, roleOpts{embedded: true, ensure: true, store: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			has := false
			for _, n := range s.workerNames() {
				has = has || n == "secrets-sweeper"
			}
			if has != tt.want {
				t.Fatalf("workers %v, want secrets-sweeper %v", s.workerNames(), tt.want)
			}
			// The API, plus the pages of mod_secretpages on the same listener.
			if len(s.routes["secrets"]) < 1 {
				t.Fatalf("secrets routes: %d", len(s.routes["secrets"]))
			}
		})
	}
}
