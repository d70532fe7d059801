package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Under `netintel run` the pages and the secret API share the secrets
// listener, next to the probes, without a route conflict.
func TestSecretPages_Wiring(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "none.yaml"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: os.Getenv}
	s, err := openSystem(t.Context(), env, &commonFlags{config: filepath.Join(dir, "none.yaml"), dataDir: filepath.Join(dir, "data")}, roleOpts{embedded: true, ensure: true, store: true, listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	ls := s.listeners([]string{"secrets"})
	if len(ls) != 1 {
		t.Fatalf("%d listeners", len(ls))
	}
	srv := httptest.NewServer(ls[0].Handler)
	defer srv.Close()
	for _, tc := range []struct {
		method, path string
		want         int
		wantType     string
	}{
		{"GET", "/", 200, "text/html"},
		{"GET", "/v/", 200, "text/html"},
		{"GET", "/f/", 200, "text/html"},
		{"GET", "/static/ots/ots.js", 200, "text/javascript"},
		{"POST", "/api/ss?src=test", 200, "application/json"},
		{"GET", "/health", 200, "application/json"},
		{"GET", "/nope", 404, ""},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), tc.method, srv.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.wantType) {
			t.Errorf("%s %s: %d %q", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
}
