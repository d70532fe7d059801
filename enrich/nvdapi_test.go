package enrich

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/config"
)

// nvdAPIServer serves the real NVD CVE records of testdir (the bundled
// samples, copies of /work/shared/data/nvd) as NVD CVE API 2.0 pages, the
// way services.nvd.nist.gov does: startIndex, resultsPerPage (at most
// 2000), totalResults, the response envelope; 404 with a message header
// on a bad parameter. fail answers the first requests with 403, as NVD
// does past its rate limit.
type nvdAPIServer struct {
	*httptest.Server
	mu       sync.Mutex
	records  []json.RawMessage
	requests []url.Values
	keys     []string
	fail     int
}

func newNVDAPIServer(t *testing.T) *nvdAPIServer {
	t.Helper()
	files, err := filepath.Glob("../samples/cve/nvd/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("nvd samples: %v", err)
	}
	s := &nvdAPIServer{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s.records = append(s.records, b)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *nvdAPIServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	q := r.URL.Query()
	s.requests = append(s.requests, q)
	s.keys = append(s.keys, r.Header.Get("apiKey"))
	fail := s.fail > 0
	if fail {
		s.fail--
	}
	s.mu.Unlock()
	if r.URL.Path != "/rest/json/cves/2.0" {
		http.NotFound(w, r)
		return
	}
	if fail {
		w.Header().Set("message", "Request forbidden by administrative rules.")
		w.WriteHeader(http.StatusForbidden)
		return
	}
	start, err1 := strconv.Atoi(q.Get("startIndex"))
	per, err2 := strconv.Atoi(q.Get("resultsPerPage"))
	if err1 != nil || err2 != nil || start < 0 || per < 1 || per > 2000 {
		w.Header().Set("message", "Invalid startIndex or resultsPerPage parameter.")
		w.WriteHeader(http.StatusNotFound)
		return
	}
	end := min(start+per, len(s.records))
	start = min(start, end)
	type vuln struct {
		CVE json.RawMessage `json:"cve"`
	}
	page := struct {
		ResultsPerPage  int    `json:"resultsPerPage"`
		StartIndex      int    `json:"startIndex"`
		TotalResults    int    `json:"totalResults"`
		Format          string `json:"format"`
		Version         string `json:"version"`
		Timestamp       string `json:"timestamp"`
		Vulnerabilities []vuln `json:"vulnerabilities"`
	}{ResultsPerPage: end - start, StartIndex: start, TotalResults: len(s.records), Format: "NVD_CVE", Version: "2.0",
		Timestamp: "2026-11-26T10:00:00.000", Vulnerabilities: []vuln{}}
	for _, rec := range s.records[start:end] {
		page.Vulnerabilities = append(page.Vulnerabilities, vuln{rec})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(page)
}

// sleeps records the pauses asked for instead of taking them.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func TestNVDClient_Pages(t *testing.T) {
	srv := newNVDAPIServer(t)
	var sl sleeps
	n := &NVDClient{URL: srv.URL + "/rest/json/cves/2.0", ResultsPerPage: 4, Delay: 6 * time.Second,
		APIKey: "k-123", Query: url.Values{"hasKev": {""}}, HTTP: srv.Client(), Sleep: sl.sleep}
	c := NewCatalog()
	read, err := n.Load(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	if read != len(srv.records) || len(c.cves) != len(srv.records) {
		t.Fatalf("read %d records, catalog holds %d, want %d", read, len(c.cves), len(srv.records))
	}
	// 15 records, 4 a page: startIndex 0, 4, 8, 12.
	var starts []string
	for i, q := range srv.requests {
		starts = append(starts, q.Get("startIndex"))
		if q.Get("resultsPerPage") != "4" || !q.Has("hasKev") || srv.keys[i] != "k-123" {
			t.Errorf("request %d: %v apiKey %q", i, q, srv.keys[i])
		}
	}
	if want := []string{"0", "4", "8", "12"}; !slices.Equal(starts, want) {
		t.Errorf("startIndex %v, want %v", starts, want)
	}
	if want := []time.Duration{6 * time.Second, 6 * time.Second, 6 * time.Second}; !slices.Equal(sl.d, want) {
		t.Errorf("pauses %v, want %v (one between two requests)", sl.d, want)
	}
	// The API's records match like the files' do.
	fs, _ := c.Match(Fingerprint{CPE: []string{"cpe:2.3:o:paloaltonetworks:pan-os"}, ExactVersion: "10.2.9"}, time.Now())
	if len(fs) != 1 || fs[0].CveID != "CVE-2024-3400" {
		t.Errorf("findings %+v, want CVE-2024-3400", fs)
	}
}

func TestNVDClient_RetriesForbidden(t *testing.T) {
	srv := newNVDAPIServer(t)
	srv.fail = 2
	var sl sleeps
	n := &NVDClient{URL: srv.URL + "/rest/json/cves/2.0", ResultsPerPage: 2000, Delay: time.Second, Retries: 3,
		HTTP: srv.Client(), Sleep: sl.sleep}
	read, err := n.Load(t.Context(), NewCatalog())
	if err != nil || read != len(srv.records) {
		t.Fatalf("read %d, %v", read, err)
	}
	if want := []time.Duration{time.Second, 2 * time.Second}; !slices.Equal(sl.d, want) {
		t.Errorf("pauses %v, want %v", sl.d, want)
	}
	if srv.keys[0] != "" {
		t.Errorf("apiKey sent without a key: %q", srv.keys[0])
	}

	srv.fail = 10
	n.Retries = 1
	if _, err := n.Load(t.Context(), NewCatalog()); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("err = %v, want the 403 after the retries", err)
	}
	n.URL = srv.URL + "/rest/json/cves/2.0?resultsPerPage=x"
	srv.fail = 0
	n.ResultsPerPage = 0 // 2000
	if _, err := n.Load(t.Context(), NewCatalog()); err != nil {
		t.Errorf("resultsPerPage in the URL is replaced: %v", err)
	}
	n.URL = srv.URL + "/elsewhere"
	if _, err := n.Load(t.Context(), NewCatalog()); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("err = %v, want a 404 without retry", err)
	}
}

func TestNewNVDClient(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	cfg := config.DefaultNVDAPI
	cfg.APIKeyEnv = "NETINTEL_TEST_NVD_KEY"
	t.Setenv("NETINTEL_TEST_NVD_KEY", "")
	if n := NewNVDClient(cfg, nil, now); n.Delay != NVDDelayNoKey || n.APIKey != "" || len(n.Query) != 0 {
		t.Errorf("without key: %+v", n)
	}
	t.Setenv("NETINTEL_TEST_NVD_KEY", "secret")
	cfg.ModifiedWithin = 48 * time.Hour
	cfg.Query = map[string]string{"noRejected": ""}
	n := NewNVDClient(cfg, nil, now)
	if n.Delay != NVDDelayWithKey || n.APIKey != "secret" {
		t.Errorf("with key: delay %s key %q", n.Delay, n.APIKey)
	}
	if n.Query.Get("lastModStartDate") != "2026-11-24T12:00:00.000Z" || n.Query.Get("lastModEndDate") != "2026-11-26T12:00:00.000Z" || !n.Query.Has("noRejected") {
		t.Errorf("query %v", n.Query)
	}
	cfg.Delay = time.Millisecond
	if n := NewNVDClient(cfg, nil, now); n.Delay != time.Millisecond {
		t.Errorf("configured delay %s", n.Delay)
	}
}

// LoadCatalog reads nvd_api after the files; the API's record of a CVE
// replaces the file's.
func TestLoadCatalog_NVDAPI(t *testing.T) {
	srv := newNVDAPIServer(t)
	// The API's copy of CVE-2024-3400 lists no configuration: the file's
	// PAN-OS ranges must go.
	var rec map[string]any
	if err := json.Unmarshal(srv.records[slices.IndexFunc(srv.records, func(b json.RawMessage) bool {
		return strings.Contains(string(b), `"id": "CVE-2024-3400"`)
	})], &rec); err != nil {
		t.Fatal(err)
	}
	delete(rec, "configurations")
	b, _ := json.Marshal(rec)
	srv.records = []json.RawMessage{b}
	cfg := sampleCatalogConfig()
	api := config.DefaultNVDAPI
	api.URL, api.Delay = srv.URL+"/rest/json/cves/2.0", time.Millisecond
	cfg.NVDAPI = &api
	c, err := LoadCatalog(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if fs, _ := c.Match(Fingerprint{CPE: []string{"cpe:2.3:o:paloaltonetworks:pan-os"}, ExactVersion: "10.2.9"}, time.Now()); len(fs) != 0 {
		t.Errorf("findings %+v, want none: the API record replaced the file's", fs)
	}
	if len(srv.requests) != 1 {
		t.Errorf("%d requests, want 1", len(srv.requests))
	}
	api.URL = srv.URL + "/gone"
	if _, err := LoadCatalog(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), "nvd_api") {
		t.Errorf("err = %v, want nvd_api", err)
	}
}
