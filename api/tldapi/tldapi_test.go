package tldapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/probe"
)

// fakeState is the shared state as the probe records it.
type fakeState struct {
	progress  probe.Progress
	published *probe.Published
	err       error
}

func (f *fakeState) Progress(context.Context) (probe.Progress, error) { return f.progress, f.err }
func (f *fakeState) Published(context.Context) (probe.Published, bool, error) {
	if f.published == nil {
		return probe.Published{}, false, f.err
	}
	return *f.published, true, f.err
}

func setup(t *testing.T, st *fakeState, rate int) (*httptest.Server, objstore.Store) {
	t.Helper()
	store, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := New(st, store, Options{Prefix: "tld/", RatePerMinute: rate}, testutil.Logger(t))
	mux := http.NewServeMux()
	h.Mount(mux)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(h.Health())
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, store
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func keysOf(m map[string]any) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

var specTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$`)

func TestStatus(t *testing.T) {
	tests := []struct {
		name           string
		state          *fakeState
		wantStatus     string
		wantAvailable  float64
		wantLastUpdate string
	}{
		{"before the first run", &fakeState{progress: probe.Progress{Status: probe.StatusIdle, CurrentStep: "waiting for the first check"}}, "idle", 0, "1970-01-01 00:00:00"},
		{"running with earlier results", &fakeState{
			progress:  probe.Progress{Status: probe.StatusRunning, CurrentStep: "checking", TotalTLDs: 1438, ProcessedTLDs: 700, LastUpdate: 1795420000, RunID: "x"},
			published: &probe.Published{LastUpdate: 1795400000, ResultsAvailable: 1438, StealthCount: 12},
		}, "running", 1438, time.Unix(1795400000, 0).UTC().Format("2006-01-02 15:04:05")},
		{"completed", &fakeState{
			progress:  probe.Progress{Status: probe.StatusCompleted, CurrentStep: probe.StepCompleted, TotalTLDs: 3, ProcessedTLDs: 3, LastUpdate: 1795420000},
			published: &probe.Published{LastUpdate: 1795420000, ResultsAvailable: 3},
		}, "completed", 3, time.Unix(1795420000, 0).UTC().Format("2006-01-02 15:04:05")},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := setup(t, tc.state, 100)
			resp, b := get(t, srv.URL+"/api/status")
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("status %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if got := keysOf(m); !slices.Equal(got, []string{"last_update", "progress", "results_available", "tld_check_status", "tld_checker_initialized", "web_server"}) {
				t.Errorf("keys %v", got)
			}
			prog := m["progress"].(map[string]any)
			if got := keysOf(prog); !slices.Equal(got, []string{"current_step", "last_update", "processed_tlds", "status", "total_tlds"}) {
				t.Errorf("progress keys %v", got)
			}
			if m["tld_check_status"] != tc.wantStatus || prog["status"] != tc.wantStatus || m["results_available"] != tc.wantAvailable {
				t.Errorf("body %s", b)
			}
			lu, _ := m["last_update"].(string)
			if !specTime.MatchString(lu) || lu != tc.wantLastUpdate {
				t.Errorf("last_update %q, want %q", lu, tc.wantLastUpdate)
			}
			if _, ok := prog["last_update"].(float64); !ok {
				t.Errorf("progress.last_update must be a number: %s", b)
			}
			if m["tld_checker_initialized"] != (i > 0) || m["web_server"] != "running" {
				t.Errorf("body %s", b)
			}
		})
	}
}

func TestStatus_StateDown(t *testing.T) {
	srv, _ := setup(t, &fakeState{err: errors.New("nats: timeout")}, 100)
	resp, b := get(t, srv.URL+"/api/status")
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), `"code":"unavailable"`) || strings.Contains(string(b), "nats: timeout") {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
	_, hb := get(t, srv.URL+"/health")
	if !strings.Contains(string(hb), `"status":"degraded"`) {
		t.Errorf("health %s", hb)
	}
}

func TestResultsAndDownloads(t *testing.T) {
	st := &fakeState{progress: probe.Progress{Status: probe.StatusIdle}}
	srv, store := setup(t, st, 100)

	// Before the first publish: empty results, downloads 404 with a JSON error.
	resp, b := get(t, srv.URL+"/api/results")
	var empty map[string]any
	if err := json.Unmarshal(b, &empty); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if got := keysOf(empty); !slices.Equal(got, []string{"last_update", "results", "stealth_metadata", "total_tlds"}) || string(must(json.Marshal(empty["results"]))) != "[]" {
		t.Errorf("empty results %s", b)
	}
	if md := empty["stealth_metadata"].(map[string]any); md["max_tlds_configured"] != nil || len(md) != 4 {
		t.Errorf("stealth_metadata %v", md)
	}
	for _, p := range []string{"/download/json", "/download/csv", "/download/summary"} {
		resp, b := get(t, srv.URL+p)
		if resp.StatusCode != 404 || !strings.Contains(string(b), `"no_results"`) {
			t.Errorf("%s before publish: %d %s", p, resp.StatusCode, b)
		}
	}

	// After a publish, the stored files are served as they are.
	res := probe.Results{Results: []probe.Result{{TLD: "com", RDAPSupported: true, RDAPURLs: []string{"https://rdap.verisign.com/com/v1/"}, StealthURLs: []string{}}}, LastUpdate: 1795420000, TotalTLDs: 1}
	files := map[string][]byte{
		"tld/latest/results.json": must(json.Marshal(res)),
		"tld/latest/results.csv":  probe.WriteCSV(res),
		"tld/latest/summary.json": []byte(`{"total_tlds":1}`),
	}
	for k, v := range files {
		if _, err := store.Put(t.Context(), k, bytes.NewReader(v), int64(len(v)), ""); err != nil {
			t.Fatal(err)
		}
	}
	resp, b = get(t, srv.URL+"/api/results")
	if resp.StatusCode != 200 || !bytes.Equal(b, files["tld/latest/results.json"]) || resp.Header.Get("Content-Disposition") != "" {
		t.Errorf("results: %d %s", resp.StatusCode, b)
	}
	tests := []struct{ path, key, ctype, file string }{
		{"/download/json", "tld/latest/results.json", "application/json", "tld_status_results.json"},
		{"/download/csv", "tld/latest/results.csv", "text/csv; charset=utf-8", "tld_status_results.csv"},
		{"/download/summary", "tld/latest/summary.json", "application/json", "tld_status_summary.json"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			resp, b := get(t, srv.URL+tc.path)
			if resp.StatusCode != 200 || !bytes.Equal(b, files[tc.key]) {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			if got := resp.Header.Get("Content-Disposition"); got != `attachment; filename="`+tc.file+`"` {
				t.Errorf("Content-Disposition %q", got)
			}
			if got := resp.Header.Get("Content-Type"); got != tc.ctype {
				t.Errorf("Content-Type %q", got)
			}
		})
	}
	if !strings.HasPrefix(string(files["tld/latest/results.csv"]), "tld,rdap_supported,rdap_urls,rdap_working,working_url,whois_available,whois_server,stealth_rdap,stealth_urls\r\n") {
		t.Errorf("csv header: %s", files["tld/latest/results.csv"])
	}
}

func TestRateLimit(t *testing.T) {
	srv, _ := setup(t, &fakeState{progress: probe.Progress{Status: probe.StatusIdle}}, 100)
	for i := range 100 {
		path := []string{"/api/status", "/api/results", "/download/csv"}[i%3]
		if resp, b := get(t, srv.URL+path); resp.StatusCode == 429 {
			t.Fatalf("request %d limited early: %s", i+1, b)
		}
	}
	resp, b := get(t, srv.URL+"/api/status")
	if resp.StatusCode != 429 {
		t.Fatalf("101st request: %d", resp.StatusCode)
	}
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(b, &body); err != nil || body.Error.Code != "rate_limited" {
		t.Errorf("429 body %s", b)
	}
	if ra := resp.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("Retry-After %q", ra)
	}
	// /health is the liveness check: never limited.
	if resp, _ := get(t, srv.URL+"/health"); resp.StatusCode != 200 {
		t.Errorf("health limited: %d", resp.StatusCode)
	}
}

func TestHealth(t *testing.T) {
	srv, _ := setup(t, &fakeState{published: &probe.Published{StealthCount: 7}}, 100)
	_, b := get(t, srv.URL+"/health")
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if got := keysOf(m); !slices.Equal(got, []string{"status", "stealth_count", "timestamp"}) || m["stealth_count"] != 7.0 || m["status"] != "healthy" {
		t.Errorf("health %s", b)
	}
	if ts, _ := m["timestamp"].(float64); time.Since(time.Unix(int64(ts), 0)) > time.Minute {
		t.Errorf("timestamp %v", m["timestamp"])
	}
}

func TestMethodNotAllowed(t *testing.T) {
	srv, _ := setup(t, &fakeState{}, 100)
	for _, tc := range []struct{ method, path string }{
		{"POST", "/api/status"},
		{"PUT", "/api/results"},
		{"DELETE", "/download/json"},
		{"POST", "/download/csv"},
		{"PATCH", "/download/summary"},
	} {
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var body struct {
			Error struct{ Code, Message string }
		}
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			json.Unmarshal(b, &body) != nil || body.Error.Code != "method_not_allowed" || body.Error.Message == "" {
			t.Errorf("%s %s: %d Allow %q Content-Type %q body %s, want a JSON 405 method_not_allowed with Allow: GET, HEAD",
				tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"), resp.Header.Get("Content-Type"), b)
		}
	}
}

func TestUnknownPath(t *testing.T) {
	srv, _ := setup(t, &fakeState{}, 100)
	for _, p := range []string{"/api/statusx", "/api/status/", "/api/", "/download/", "/download/xml", "/download/json/x"} {
		resp, b := get(t, srv.URL+p)
		var body struct {
			Error struct{ Code, Message string }
		}
		if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			json.Unmarshal(b, &body) != nil || body.Error.Code != "not_found" || body.Error.Message == "" {
			t.Errorf("GET %s: %d Content-Type %q body %s, want a JSON 404 not_found", p, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
