package ipapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"testing"
)

// fuzzMux serves the test snapshot in-process.
func fuzzMux(t testing.TB) http.Handler {
	svc := New(Options{InternalKey: testKey})
	snap, err := newMemSnapshot(Manifest{SnapshotDate: "2026-11-23"}, testRecords(t))
	if err != nil {
		t.Fatal(err)
	}
	svc.Swap(snap)
	mux := http.NewServeMux()
	svc.Mount(mux)
	return mux
}

func serve(h http.Handler, method, p, rawQuery string, body []byte, tier string) *httptest.ResponseRecorder {
	req := &http.Request{Method: method, URL: &url.URL{Path: p, RawQuery: rawQuery}, Header: http.Header{},
		Body: http.NoBody, Host: "example.test", RemoteAddr: "127.0.0.1:1234", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	if body != nil {
		req.Body = httpBody(body)
		req.ContentLength = int64(len(body))
	}
	req.Header.Set("X-Internal-Key", testKey)
	req.Header.Set("X-Tier", tier)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

func httpBody(b []byte) readCloser { return readCloser{bytes.NewReader(b)} }

func FuzzParseAddr(f *testing.F) {
	for _, s := range []string{"198.51.100.7", "2001:db8::5", "::ffff:1.2.3.4", "fe80::1%eth0", "1.2.3", "01.2.3.4", "", "::", "0.0.0.0", "1.2.3.4/24", strings.Repeat("1", 70)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := parseAddr(s)
		std, err := netip.ParseAddr(s)
		want := err == nil && std.Zone() == "" && len(s) <= 64
		if ok != want {
			t.Fatalf("parseAddr(%q) ok=%v, want %v", s, ok, want)
		}
		if !ok {
			return
		}
		if a.Is4In6() || a != std.Unmap() {
			t.Fatalf("parseAddr(%q) = %v, want %v unmapped", s, a, std)
		}
		if b, ok := parseAddr(a.String()); !ok || b != a {
			t.Fatalf("canonical %q does not parse back", a.String())
		}
	})
}

func FuzzLookupQuery(f *testing.F) {
	for _, s := range [][2]string{
		{"198.51.100.7", "include=cves&min_severity=high&kev_only=true&cve_min_confidence=medium&min_confidence=0.5"},
		{"198.51.100.7", "min_confidence=1.5&min_severity=urgent&kev_only=maybe"},
		{"2001:db8::5", "min_confidence=NaN"},
		{"1.2.3", "include="},
		{"10.0.0.1", "min_confidence=1e400&kev_only=&include=,,cves,"},
		{"198.51.100.7", "%zz=%zz&min_confidence=%"},
	} {
		f.Add(s[0], s[1], "pro")
	}
	h := fuzzMux(f)
	f.Fuzz(func(t *testing.T, ip, rawQuery, tier string) {
		p := "/api/v1/shadow_vpn/lookup/" + ip
		if ip == "" || strings.Contains(ip, "/") || path.Clean(p) != p {
			return // another route (or a mux redirect), not this handler
		}
		w := serve(h, "GET", p, rawQuery, nil, tier)
		switch w.Code {
		case 200, 400, 404, 422:
		default:
			t.Fatalf("GET %s?%s: status %d: %s", p, rawQuery, w.Code, w.Body)
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("body is not JSON: %s", w.Body)
		}
	})
}

func FuzzExportQuery(f *testing.F) {
	for _, s := range []string{"", "limit=5", "classification=vpn&min_confidence=0.5&last_seen_after=2026-11-01&limit=2",
		"limit=-1", "limit=99999999999999999999", "last_seen_after=2026-02-30", "classification=residential_proxy"} {
		f.Add(s)
	}
	h := fuzzMux(f)
	f.Fuzz(func(t *testing.T, rawQuery string) {
		w := serve(h, "GET", PathCSV, rawQuery, nil, "enterprise")
		if w.Code != 200 && w.Code != 422 {
			t.Fatalf("?%s: status %d: %s", rawQuery, w.Code, w.Body)
		}
		if w.Header().Get("X-Svc-Row-Limit") == "" {
			t.Fatal("no X-Svc-Row-Limit")
		}
	})
}

func FuzzBatchBody(f *testing.F) {
	for _, s := range []string{`{"ips":["198.51.100.7","x",""]}`, `{"ips":[]}`, `{"ips":null}`, `[]`, `{`, `{"ips":[1,{},[]]}`,
		`{"ips":["1.2.3.4"]} {}`, `{"ips":["::ffff:1.2.3.4","2001:db8::5"],"extra":true}`, "\x00"} {
		f.Add([]byte(s))
	}
	h := fuzzMux(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		w := serve(h, "POST", PathBatch, "", body, "pro")
		switch w.Code {
		case 200:
			var res struct {
				Results     []json.RawMessage `json:"results"`
				CreditsUsed int               `json:"credits_used"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || len(res.Results) != res.CreditsUsed || res.CreditsUsed < 1 || res.CreditsUsed > MaxBatch {
				t.Fatalf("200 body %s: %v", w.Body, err)
			}
		case 422:
			var ve ValidationError
			if err := json.Unmarshal(w.Body.Bytes(), &ve); err != nil || len(ve.Detail) == 0 {
				t.Fatalf("422 body %s: %v", w.Body, err)
			}
		default:
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
	})
}
