package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netintel/netintel/api/ipapi"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
)

// Under `netintel run` the console shares the listener with every
// product: its page and JSON routes answer, its lookups reach the IP API
// in process with the internal key (no snapshot yet: the IP API's 503,
// not a 401), and it lists the configured jobs; console.enabled false
// leaves /console/ to the 404.
func TestConsole_Wiring(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, yaml string
		want       int
	}{
		{"enabled", "", 200},
		{"disabled", "console:\n  enabled: false\n", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "p.yaml")
			if err := os.WriteFile(cfg, []byte("schedules:\n  tld_probe: \"off\"\n  snapshot: \"0 3 * * *\"\n"+tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: os.Getenv}
			s, err := openSystem(t.Context(), env, &commonFlags{config: cfg, dataDir: filepath.Join(dir, "data")}, roleOpts{embedded: true, ensure: true, store: true, listen: "127.0.0.1:0"})
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			ls := s.listeners(config.Products)
			if len(ls) != 1 {
				t.Fatalf("%d listeners", len(ls))
			}
			srv := httptest.NewServer(ls[0].Handler)
			defer srv.Close()
			get := func(path string) (int, string) {
				res, err := http.Get(srv.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				return res.StatusCode, string(b)
			}
			if code, b := get("/console/"); code != tc.want {
				t.Fatalf("/console/: %d %.200s", code, b)
			}
			if tc.want != 200 {
				return
			}
			if code, b := get("/console/api/ip/192.0.2.1"); code != 503 || !strings.Contains(b, "no_snapshot") {
				t.Errorf("lookup before a snapshot: %d %s", code, b)
			}
			code, b := get("/console/api/pipeline")
			var p struct {
				Jobs []struct {
					Name string `json:"name"`
				} `json:"jobs"`
				Streams []struct {
					Name string `json:"name"`
				} `json:"streams"`
			}
			if err := json.Unmarshal([]byte(b), &p); code != 200 || err != nil {
				t.Fatalf("pipeline: %d %s", code, b)
			}
			if len(p.Jobs) == 0 || p.Jobs[len(p.Jobs)-1].Name != "snapshot" || len(p.Streams) != len(s.Cfg.Streams) {
				t.Errorf("pipeline = %+v", p)
			}
			if code, b := get("/console/api/tld"); code != 200 || !strings.Contains(b, `"status":"idle"`) {
				t.Errorf("tld: %d %s", code, b)
			}
			if code, b := get("/console/api/snapshots"); code != 200 || b != "{\"latest\":null,\"snapshots\":[]}\n" {
				t.Errorf("snapshots: %d %q", code, b)
			}
			if code, b := get("/console/api/examples"); code != 200 || b != "{\"addresses\":[]}\n" {
				t.Errorf("examples before a snapshot: %d %q", code, b)
			}
		})
	}
}

func TestSnapshotExamples(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	recs := []ipmodel.Record{
		{IP: "198.51.100.1", Classifications: []string{"hosting"}, Network: "198.51.100.0/24", Provider: str("Acme"), Confidence: 0.9},
		{IP: "203.0.113.20", Classifications: []string{"vpn"}, Confidence: 0.8, Assets: []ipmodel.Asset{{Port: 443, ProtocolFamily: "ssl-vpn", ConfidenceBand: "high"}}},
		{IP: "185.220.101.4", Classifications: []string{"tor"}, Confidence: 0.99},
	}
	var tb ipapi.TableBuilder
	for i := range recs {
		tb.Add(&recs[i])
	}
	rows, err := tb.Table()
	if err != nil {
		t.Fatal(err)
	}
	snap := &ipapi.Snapshot{Manifest: ipapi.Manifest{SnapshotDate: "2026-11-22"}}
	snap.Views[ipmodel.AudienceEnterprise] = ipapi.View{Index: ipapi.NewMemIndex(recs), Rows: rows}
	got := snapshotExamples(t.Context(), snap)
	want := []string{"203.0.113.20", "185.220.101.4", "198.51.100.1"}
	if !slices.Equal(got, want) {
		t.Fatalf("examples = %v, want %v (services first, then tor, vpn, hosting, each once)", got, want)
	}
	if got := snapshotExamples(t.Context(), nil); got != nil {
		t.Fatalf("no snapshot: %v", got)
	}
}
