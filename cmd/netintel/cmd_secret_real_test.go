package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netintel/netintel/api/secretapi"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/secrets"
	"github.com/netintel/netintel/secrets/client/fakehost"
)

// The CLI against the real secret API on an in-process nats-server.
func TestSecretCLI_RealServer(t *testing.T) {
	t.Parallel()
	n := testutil.StartNATS(t)
	cfg := n.Ensure(t)
	blobs, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc, err := secrets.New(t.Context(), n.JS, blobs, secrets.OptionsFrom(cfg.Secrets), testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	secretapi.New(svc, secretapi.Options{ReadRate: config.Rate{PerMinute: 1, Burst: 3}}, testutil.Logger(t)).Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	r := &secretRun{t: t, host: fakehost.New(), url: srv.URL, env: map[string]string{envSecretHost: srv.URL, envSecretPassphrase: "pp"}}
	link := strings.TrimSpace(r.mustRun("db password: hunter2\n", "send", "--passphrase", "--views", "2", "--expires", "1h"))
	if got := r.mustRun("", "read", link); got != "db password: hunter2\n" {
		t.Fatalf("read %q", got)
	}
	delete(r.env, envSecretPassphrase)
	if _, _, err := r.run("", "read", link); err == nil || !strings.HasPrefix(err.Error(), "wrong key:") {
		t.Fatalf("no passphrase: %v", err)
	}

	dir := t.TempDir()
	src := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(src, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n..."), 0o600); err != nil {
		t.Fatal(err)
	}
	flink := strings.TrimSpace(r.mustRun("", "send-file", src))
	r.mustRun("", "read-file", flink, "--out", dir)
	got, err := os.ReadFile(filepath.Join(dir, "id_ed25519 (1)"))
	if err != nil || !bytes.HasPrefix(got, []byte("-----BEGIN OPENSSH")) {
		t.Fatalf("saved: %q %v", got, err)
	}
	// The read limit (burst 3) is used up by read, wrong key and read-file:
	// status, limited like reads, gets the one-line 429 message.
	_, _, err = r.run("", "status", link)
	if err == nil || !strings.Contains(err.Error(), "429") {
		t.Fatalf("after the read limit: %v", err)
	}
}
