package secretpages_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/netintel/netintel/api/secretpages"
	"github.com/netintel/netintel/secrets/client/fakehost"
)

// reqLog records every request the site served: the URI and, for API
// calls, the body, to prove the key never reaches a server.
type reqLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *reqLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		l.mu.Lock()
		l.seen = append(l.seen, r.Method+" "+r.RequestURI+" "+r.Header.Get("Referer")+" "+string(body))
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (l *reqLog) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.seen, "\n")
}

func (l *reqLog) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.seen {
		if strings.Contains(s, substr) {
			n++
		}
	}
	return n
}

// site is the pages and a secret API on one loopback origin.
type site struct {
	URL string
	log *reqLog
}

// startFakeSite serves the pages with the fake host's API.
func startFakeSite(t *testing.T) (*site, *fakehost.Host) {
	t.Helper()
	h := fakehost.New()
	mux := http.NewServeMux()
	h.Mount(mux)
	secretpages.Mount(mux)
	s := &site{log: &reqLog{}}
	srv := httptest.NewServer(s.log.wrap(mux))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s, h
}

func TestMount_Headers(t *testing.T) {
	s, _ := startFakeSite(t)
	tests := []struct {
		name, path  string
		wantCode    int
		wantType    string
		wantNoStore bool
	}{
		{"create page", "/", 200, "text/html", true},
		{"text page", "/v/", 200, "text/html", true},
		{"file page", "/f/", 200, "text/html", true},
		{"script", "/static/ots/ots.js", 200, "text/javascript", false},
		{"style", "/static/ots/style.css", 200, "text/css", false},
		{"unknown under root", "/nope", 404, "", false},
		{"deeper under v", "/v/x", 404, "", false},
		{"static listing", "/static/ots/", 404, "", false},
		{"missing asset", "/static/ots/none.js", 404, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Get(s.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.wantCode {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantCode)
			}
			if tc.wantCode != 200 {
				return
			}
			h := resp.Header
			if !strings.HasPrefix(h.Get("Content-Type"), tc.wantType) {
				t.Errorf("Content-Type %q", h.Get("Content-Type"))
			}
			if h.Get("Content-Security-Policy") != secretpages.CSP || h.Get("Referrer-Policy") != "no-referrer" || h.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("security headers: %v", h)
			}
			if got := h.Get("Cache-Control") == "no-store"; got != tc.wantNoStore {
				t.Errorf("Cache-Control %q", h.Get("Cache-Control"))
			}
		})
	}
	resp, err := http.Post(s.URL+"/v/", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST /v/: %d", resp.StatusCode)
	}
}

// The CSP forbids inline script; this checks the files keep to it and load
// nothing from another origin.
func TestMount_NoInlineScriptNoThirdParty(t *testing.T) {
	s, _ := startFakeSite(t)
	inline := regexp.MustCompile(`(?i)<script(\s[^>]*)?>\s*[^<\s]|\son[a-z]+\s*=|\sstyle\s*=|javascript:`)
	external := regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:)?//|@import|url\(\s*['"]?(https?:)?//|fonts\.googleapis`)
	for _, p := range []string{"/", "/v/", "/f/", "/static/ots/ots.js", "/static/ots/create.js", "/static/ots/read.js", "/static/ots/style.css"} {
		resp, err := http.Get(s.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.HasSuffix(p, "/") && inline.Match(b) {
			t.Errorf("%s: inline script, handler or style: %q", p, inline.Find(b))
		}
		if external.Match(b) {
			t.Errorf("%s: third-party resource: %q", p, external.Find(b))
		}
	}
}
