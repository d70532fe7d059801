package apigw_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/netintel/netintel/api/apigw"
	gw "github.com/netintel/netintel/gateway"
	"github.com/netintel/netintel/gateway/gatewaytest"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/testutil"
)

const internalKey = "internal-test-key-7f3a"

// received is one request the test backend saw.
type received struct {
	Method, Path, RawQuery string
	// EscapedPath is the path as sent on the wire.
	EscapedPath string
	Header      http.Header
	Body        string
}

// backend is a loopback test double of the IP backend: it records every
// request and answers like the backend would (status from X-Test-Status
// when the test asks for one).
type backend struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []received
}

func newBackend(t *testing.T) *backend {
	b := &backend{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.reqs = append(b.reqs, received{r.Method, r.URL.Path, r.URL.RawQuery, r.URL.EscapedPath(), r.Header.Clone(), string(body)})
		b.mu.Unlock()
		if r.Header.Get("X-Internal-Key") != internalKey {
			http.Error(w, `{"detail":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		if s := r.Header.Get("X-Test-Status"); s != "" {
			code, _ := strconv.Atoi(s)
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"status":%d}`, code)
			return
		}
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/v1/export/csv"):
			w.Header().Set("Content-Type", "text/csv")
			w.Header().Set("X-Svc-Row-Limit", "100000")
			fmt.Fprint(w, "ip,classification\r\n192.0.2.1,vpn\r\n")
		case r.URL.Path == "/api/v1/ip/batch":
			var req struct{ IPs []string }
			if json.Unmarshal(body, &req) != nil || len(req.IPs) > 100 || len(req.IPs) == 0 {
				w.WriteHeader(http.StatusUnprocessableEntity)
				fmt.Fprint(w, `{"detail":[{"loc":["body","ips"],"msg":"1 to 100 addresses","type":"value_error"}]}`)
				return
			}
			fmt.Fprint(w, `{"results":[]}`)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"ip":%q,"assets":[]}`, strings.TrimPrefix(r.URL.Path, "/api/v1/shadow_vpn/lookup/"))
		}
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *backend) all() []received {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]received(nil), b.reqs...)
}

func (b *backend) last(t *testing.T) received {
	t.Helper()
	r := b.all()
	if len(r) == 0 {
		t.Fatal("backend saw no request")
	}
	return r[len(r)-1]
}

type harness struct {
	nats    *testutil.NATS
	keys    *gw.Keys
	usage   *gw.Usage
	backend *backend
	url     string
	logs    *testutil.LockedBuffer
	reg     *prometheus.Registry
	limits  map[string]gw.Limits
}

type option func(*apigw.Options)

func newHarness(t *testing.T, opts ...option) *harness {
	t.Helper()
	n := testutil.StartNATS(t)
	n.Ensure(t)
	keysKV, err := n.JS.KeyValue(t.Context(), gw.KeysBucket)
	if err != nil {
		t.Fatal(err)
	}
	usageKV, err := n.JS.KeyValue(t.Context(), gw.UsageBucket)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{nats: n, logs: &testutil.LockedBuffer{}, reg: prometheus.NewRegistry(), backend: newBackend(t), limits: map[string]gw.Limits{}}
	log := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.keys = gw.NewKeys(keysKV, gw.NewHasher("hash-key-for-tests"), log)
	h.usage = gw.NewUsage(usageKV)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h.keys.Run(ctx, 20*time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-done })
	tiers := config.Default().Gateway.Tiers
	bu, _ := url.Parse(h.backend.URL)
	o := apigw.Options{Keys: h.keys, Usage: h.usage, Backend: bu, InternalKey: internalKey, Log: log, Registerer: h.reg,
		Limits: func(tier string) gw.Limits {
			if l, ok := h.limits[tier]; ok {
				return l
			}
			l, _ := tiers.ByName(tier)
			return gw.Limits{RatePerMinute: l.RatePerMinute, MonthlyQuota: l.MonthlyQuota}
		}}
	for _, f := range opts {
		f(&o)
	}
	srv := httptest.NewServer(apigw.New(o))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

func (h *harness) key(t *testing.T, user, tier string) string {
	t.Helper()
	k, _, err := h.keys.Create(t.Context(), user, tier, nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

type resp struct {
	code   int
	header http.Header
	body   string
}

func (r resp) errCode(t *testing.T) string {
	t.Helper()
	var b struct {
		Error struct {
			Code         string `json:"code"`
			Message      string `json:"message"`
			RequiredTier string `json:"required_tier"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.body), &b); err != nil || b.Error.Code == "" || b.Error.Message == "" {
		t.Fatalf("body is not a JSON error: %q", r.body)
	}
	return b.Error.Code
}

func do(t *testing.T, method, u string, hdr map[string]string, body string) resp {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return resp{r.StatusCode, r.Header, string(b)}
}

func bearer(k string) map[string]string { return map[string]string{"Authorization": "Bearer " + k} }

func TestHandler_PathMapping(t *testing.T) {
	h := newHarness(t)
	key := h.key(t, "map", "enterprise")
	tests := []struct {
		name, method, path, body string
		wantPath, wantQuery      string
	}{
		{"lookup", "GET", "/api/v1/vpn/ip/192.0.2.1", "", "/api/v1/ip/192.0.2.1", ""},
		{"lookup ipv6 and query", "GET", "/api/v1/vpn/ip/2001:db8::1?include=cves&min_confidence=0.5&kev_only=true", "",
			"/api/v1/ip/2001:db8::1", "include=cves&min_confidence=0.5&kev_only=true"},
		{"apiKey never forwarded", "GET", "/api/v1/vpn/ip/192.0.2.1?apiKey=svc_vpn_x&include=cves", "", "/api/v1/ip/192.0.2.1", "include=cves"},
		{"asset lookup", "GET", "/api/v1/vpn/shadow_vpn/lookup/192.0.2.1?min_confidence=0.5", "", "/api/v1/shadow_vpn/lookup/192.0.2.1", "min_confidence=0.5"},
		{"batch", "POST", "/api/v1/vpn/ip/batch", `{"ips":["192.0.2.1"]}`, "/api/v1/ip/batch", ""},
		{"batch alias", "POST", "/api/v1/vpn/batch", `{"ips":["192.0.2.1"]}`, "/api/v1/ip/batch", ""},
		{"csv export", "GET", "/api/v1/vpn/export/csv?classification=vpn&limit=10", "", "/api/v1/export/csv", "classification=vpn&limit=10"},
		{"dataset", "GET", "/api/v1/vpn/export/dataset", "", "/api/v1/export/dataset", ""},
		{"dataset download", "GET", "/api/v1/vpn/export/dataset/2026-11-23/snapshot.mmdb", "", "/api/v1/export/dataset/2026-11-23/snapshot.mmdb", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, tc.method, h.url+tc.path, bearer(key), tc.body)
			if r.code != 200 {
				t.Fatalf("status %d %s", r.code, r.body)
			}
			got := h.backend.last(t)
			if got.Path != tc.wantPath || got.RawQuery != tc.wantQuery || got.Method != tc.method {
				t.Fatalf("backend got %s %s ? %s, want %s %s ? %s", got.Method, got.Path, got.RawQuery, tc.method, tc.wantPath, tc.wantQuery)
			}
			if tc.body != "" && got.Body != tc.body {
				t.Fatalf("body %q, want %q", got.Body, tc.body)
			}
		})
	}
	if r := do(t, "GET", h.url+"/api/v1/vpn/nothing/here", bearer(key), ""); r.code != 404 || r.errCode(t) != "not_found" {
		t.Fatalf("unknown path: %d %s", r.code, r.body)
	}
	for _, m := range []struct{ method, path, allow string }{
		{"DELETE", "/api/v1/vpn/ip/192.0.2.1", "GET, HEAD"},
		{"POST", "/api/v1/vpn/export/csv", "GET, HEAD"},
		{"PUT", "/api/v1/vpn/export/dataset/files/2026-11-23/x.csv", "GET, HEAD"},
		{"GET", "/api/v1/vpn/batch", "POST"},
		{"HEAD", "/api/v1/vpn/ip/batch", "POST"},
	} {
		r := do(t, m.method, h.url+m.path, bearer(key), "")
		if r.code != 405 || r.header.Get("Allow") != m.allow || (m.method != "HEAD" && r.errCode(t) != "method_not_allowed") {
			t.Fatalf("%s %s: %d Allow %q %s, want 405 Allow %q", m.method, m.path, r.code, r.header.Get("Allow"), r.body, m.allow)
		}
	}
}

// TestHandler_PathValuesEscapedOnce: a path value reaches the backend as
// the customer sent it, escaped once (not "%C3%A9" as a literal), and a
// value that would make a dot segment of the backend path is refused here.
func TestHandler_PathValuesEscapedOnce(t *testing.T) {
	h := newHarness(t)
	key := h.key(t, "esc", "enterprise")
	tests := []struct {
		name, path            string
		wantPath, wantEscaped string
	}{
		{"unicode", "/api/v1/vpn/ip/%C3%A9", "/api/v1/ip/é", "/api/v1/ip/%C3%A9"},
		{"zone id", "/api/v1/vpn/ip/fe80::1%25eth0", "/api/v1/ip/fe80::1%eth0", "/api/v1/ip/fe80::1%25eth0"},
		{"slash in value", "/api/v1/vpn/ip/1.2.3.4%2F5", "/api/v1/ip/1.2.3.4/5", "/api/v1/ip/1.2.3.4%2F5"},
		{"space", "/api/v1/vpn/ip/a%20b", "/api/v1/ip/a b", "/api/v1/ip/a%20b"},
		{"download name", "/api/v1/vpn/export/dataset/files/2026-11-23/a%25b.csv", "/api/v1/export/dataset/files/2026-11-23/a%b.csv", "/api/v1/export/dataset/files/2026-11-23/a%25b.csv"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := do(t, "GET", h.url+tc.path, bearer(key), ""); r.code != 200 {
				t.Fatalf("status %d %s", r.code, r.body)
			}
			got := h.backend.last(t)
			if got.Path != tc.wantPath || got.EscapedPath != tc.wantEscaped {
				t.Fatalf("backend got path %q (sent as %q), want %q (sent as %q)", got.Path, got.EscapedPath, tc.wantPath, tc.wantEscaped)
			}
		})
	}
	for _, p := range []string{
		"/api/v1/vpn/export/dataset/files/2026-11-23/..%2F..%2Fcsv",
		"/api/v1/vpn/export/dataset/files%2F..%2F..%2F..%2Fshadow_vpn%2Flookup%2F192.0.2.1",
		"/api/v1/vpn/export/dataset/",
		"/api/v1/vpn/ip/%2E%2E",
	} {
		before := len(h.backend.all())
		r := do(t, "GET", h.url+p, bearer(key), "")
		if r.code != 404 || r.errCode(t) != "not_found" {
			t.Errorf("%s: %d %s, want the gateway's JSON 404", p, r.code, r.body)
		}
		if n := len(h.backend.all()); n != before {
			t.Errorf("%s reached the backend as %q", p, h.backend.last(t).EscapedPath)
		}
	}
}

func TestHandler_InternalHeadersReplaceCustomerCopies(t *testing.T) {
	h := newHarness(t)
	key := h.key(t, "hdr-user", "pro")
	hdr := bearer(key)
	for k, v := range map[string]string{"X-Internal-Key": "forged", "X-Tier": "enterprise", "X-User-Id": "admin", "X-Quota-Used": "0", "Cookie": "session=1"} {
		hdr[k] = v
	}
	for i := 1; i <= 3; i++ {
		if r := do(t, "GET", h.url+"/api/v1/vpn/ip/192.0.2.1", hdr, ""); r.code != 200 {
			t.Fatalf("status %d %s", r.code, r.body)
		}
		got := h.backend.last(t)
		want := map[string]string{"X-Internal-Key": internalKey, "X-Tier": "pro", "X-User-Id": "hdr-user", "X-Quota-Used": strconv.Itoa(i)}
		for k, v := range want {
			if vs := got.Header.Values(k); len(vs) != 1 || vs[0] != v {
				t.Fatalf("backend %s = %q, want exactly %q", k, vs, v)
			}
		}
		for _, k := range []string{"Authorization", "Cookie"} {
			if got.Header.Get(k) != "" {
				t.Fatalf("customer %s forwarded", k)
			}
		}
		dump := fmt.Sprint(got)
		_, secret, _ := gw.ParseKey(key)
		if strings.Contains(dump, secret) {
			t.Fatalf("backend received the key secret: %s", dump)
		}
	}
}

func TestHandler_Unauthorized(t *testing.T) {
	h := newHarness(t)
	key := h.key(t, "auth", "pro")
	revoked := h.key(t, "auth", "pro")
	id, _, _ := gw.ParseKey(revoked)
	if _, err := h.keys.Revoke(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	kid, _, _ := gw.ParseKey(key)
	other := h.key(t, "auth", "pro")
	_, otherSecret, _ := gw.ParseKey(other)
	tests := []struct {
		name     string
		hdr      map[string]string
		query    string
		wantCode string
	}{
		{"no credentials", nil, "", "missing_key"},
		{"apiKey without option B is ignored", nil, "?apiKey=" + key, "missing_key"},
		{"basic scheme", map[string]string{"Authorization": "Basic dXNlcjpwYXNz"}, "", "malformed_key"},
		{"bearer empty", map[string]string{"Authorization": "Bearer "}, "", "malformed_key"},
		{"malformed key", bearer("svc_vpn_short"), "", "malformed_key"},
		{"unknown id", bearer("svc_vpn_0000000000000000_" + otherSecret), "", "invalid_key"},
		{"wrong secret", bearer(gw.KeyPrefix + kid + "_" + otherSecret), "", "invalid_key"},
		{"revoked", bearer(revoked), "", "revoked_key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(h.backend.all())
			r := do(t, "GET", h.url+"/api/v1/vpn/ip/192.0.2.1"+tc.query, tc.hdr, "")
			if r.code != 401 || r.errCode(t) != tc.wantCode {
				t.Fatalf("got %d %s, want 401 %s", r.code, r.body, tc.wantCode)
			}
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatal("no WWW-Authenticate: Bearer")
			}
			if len(h.backend.all()) != before {
				t.Fatal("rejected request reached the backend")
			}
		})
	}
	// lower-case scheme is fine
	if r := do(t, "GET", h.url+"/api/v1/vpn/ip/192.0.2.1", map[string]string{"Authorization": "bearer " + key}, ""); r.code != 200 {
		t.Fatalf("lower-case bearer: %d %s", r.code, r.body)
	}
}

func TestHandler_TierGating(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		tier, path   string
		wantStatus   int
		wantRequired string
	}{
		{"free", "/api/v1/vpn/export/csv", 403, "pro"},
		{"starter", "/api/v1/vpn/export/csv", 403, "pro"},
		{"pro", "/api/v1/vpn/export/csv", 200, ""},
		{"pro", "/api/v1/vpn/export/dataset/latest/snapshot.mmdb", 403, "business"},
		{"scale", "/api/v1/vpn/export/dataset?format=parquet", 403, "business"},
		{"scale", "/api/v1/vpn/export/dataset/latest/snapshot.csv", 200, ""},
		{"business", "/api/v1/vpn/export/dataset/latest/snapshot.parquet", 200, ""},
		{"free", "/api/v1/vpn/ip/192.0.2.1", 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.tier+" "+tc.path, func(t *testing.T) {
			r := do(t, "GET", h.url+tc.path, bearer(h.key(t, "tier-"+tc.tier, tc.tier)), "")
			if r.code != tc.wantStatus {
				t.Fatalf("status %d %s, want %d", r.code, r.body, tc.wantStatus)
			}
			if tc.wantStatus == 403 {
				var b struct {
					Error struct{ Code, RequiredTier string } `json:"error"`
				}
				_ = json.Unmarshal([]byte(r.body), &b)
				if r.errCode(t) != "tier_required" || !strings.Contains(r.body, `"required_tier":"`+tc.wantRequired+`"`) || !strings.Contains(r.body, "needs tier "+tc.wantRequired) {
					t.Fatalf("403 body %s does not name tier %s", r.body, tc.wantRequired)
				}
			}
		})
	}
}

func TestHandler_RateLimit(t *testing.T) {
	h := newHarness(t)
	key := h.key(t, "rl", "free") // 2 per minute
	// Stay clear of a minute boundary so the three requests share a window.
	if s := time.Now().Second(); s > 55 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
	for i := range 2 {
		if r := do(t, "GET", h.url+"/api/v1/vpn/ip/192.0.2.1", bearer(key), ""); r.code != 200 {
			t.Fatalf("request %d: %d %s", i, r.code, r.body)
		}
	}
	r := do(t, "GET", h.url+"/api/v1/vpn/ip/192.0.2.1", bearer(key), "")
	if r.code != 429 || r.errCode(t) != "rate_limited" {
		t.Fatalf("3rd request: %d %s", r.code, r.body)
	}
	ra, err := strconv.Atoi(r.header.Get("Retry-After"))
	want := 60 - time.Now().Second()
	if err != nil || ra < 1 || ra > 60 || ra < want-1 || ra > want+1 {
		t.Fatalf("Retry-After %q, want about %d (seconds to the next minute)", r.header.Get("Retry-After"), want)
	}
	if len(h.backend.all()) != 2 {
		t.Fatalf("backend saw %d requests, want 2", len(h.backend.all()))
	}
	// A second key of the same user has its own window.
	if r := do(t, "GET", h.url+"/api/v1/vpn/ip/192.0.2.1", bearer(h.key(t, "rl", "free")), ""); r.code != 200 {
		t.Fatalf("other key: %d", r.code)
	}
}

func TestHandler_QuotaAndCredits(t *testing.T) {
	h := newHarness(t)
	h.limits["starter"] = gw.Limits{RatePerMinute: 1000, MonthlyQuota: 10}
	key := h.key(t, "quota", "starter")
	used := func(r resp) string { return r.header.Get("X-Quota-Used") }
	steps := []struct {
		name, method, path, body string
		hdr                      map[string]string
		wantStatus               int
		wantUsed                 string // customer-visible X-Quota-Used
		wantBackendUsed          string // what the backend was told; "" = not called
	}{
		{"batch of 5 costs 5", "POST", "/api/v1/vpn/ip/batch", `{"ips":["192.0.2.1","192.0.2.2","192.0.2.3","192.0.2.4","192.0.2.5"]}`, nil, 200, "5", "5"},
		{"lookup costs 1", "GET", "/api/v1/vpn/ip/192.0.2.1", "", nil, 200, "6", "6"},
		{"404 is an answer and costs 1", "GET", "/api/v1/vpn/ip/192.0.2.9", "", map[string]string{"X-Test-Status": "404"}, 404, "7", "7"},
		{"backend 500 is refunded", "GET", "/api/v1/vpn/ip/192.0.2.1", "", map[string]string{"X-Test-Status": "500"}, 500, "7", "8"},
		{"batch above 100 costs 1, refunded on 422", "POST", "/api/v1/vpn/ip/batch", `{"ips":[` + strings.Repeat(`"192.0.2.1",`, 100) + `"192.0.2.1"]}`, nil, 422, "7", "8"},
		{"batch of 3 fits exactly", "POST", "/api/v1/vpn/ip/batch", `{"ips":["192.0.2.1","192.0.2.2","192.0.2.3"]}`, nil, 200, "10", "10"},
		{"quota used up", "GET", "/api/v1/vpn/ip/192.0.2.1", "", nil, 429, "10", ""},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			before := len(h.backend.all())
			hdr := bearer(key)
			for k, v := range s.hdr {
				hdr[k] = v
			}
			r := do(t, s.method, h.url+s.path, hdr, s.body)
			if r.code != s.wantStatus || used(r) != s.wantUsed {
				t.Fatalf("got %d used %q (%s), want %d used %q", r.code, used(r), r.body, s.wantStatus, s.wantUsed)
			}
			if s.wantBackendUsed == "" {
				if len(h.backend.all()) != before {
					t.Fatal("backend called")
				}
				return
			}
			if got := h.backend.last(t).Header.Get("X-Quota-Used"); got != s.wantBackendUsed {
				t.Fatalf("backend X-Quota-Used %q, want %q", got, s.wantBackendUsed)
			}
		})
	}
	r := do(t, "GET", h.url+"/api/v1/vpn/ip/192.0.2.1", bearer(key), "")
	if r.code != 429 || r.errCode(t) != "quota_exceeded" || r.header.Get("X-Quota-Limit") != "10" {
		t.Fatalf("quota response %d %s %v", r.code, r.body, r.header)
	}
	now := time.Now().UTC()
	toMonth := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC).Sub(now).Seconds()
	if ra, _ := strconv.Atoi(r.header.Get("Retry-After")); float64(ra) < toMonth-5 || float64(ra) > toMonth+5 {
		t.Fatalf("Retry-After %d, want ~%f (seconds to the next month)", ra, toMonth)
	}
}

// TestHandler_BatchCreditsCountTheBackendsList: the credits of a batch are
// the length of the list the backend serves, the exact key "ips" (last
// duplicate wins), never a differently cased key beside it.
func TestHandler_BatchCreditsCountTheBackendsList(t *testing.T) {
	h := newHarness(t)
	h.limits["starter"] = gw.Limits{RatePerMinute: 1000, MonthlyQuota: 1000}
	five := `["192.0.2.1","192.0.2.2","192.0.2.3","192.0.2.4","192.0.2.5"]`
	cases := []struct {
		name, body, wantUsed string
	}{
		{"plain", `{"ips":` + five + `}`, "5"},
		{"other case after", `{"ips":` + five + `,"IPS":["192.0.2.9"]}`, "5"},
		{"other case before", `{"Ips":["192.0.2.9"],"ips":` + five + `}`, "5"},
		{"duplicate key, last wins", `{"ips":["192.0.2.9"],"ips":` + five + `}`, "5"},
		{"only another case", `{"IPS":` + five + `}`, "1"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := h.key(t, "credits"+strconv.Itoa(i), "starter")
			r := do(t, "POST", h.url+"/api/v1/vpn/batch", bearer(key), tc.body)
			if r.code != 200 || r.header.Get("X-Quota-Used") != tc.wantUsed {
				t.Fatalf("got %d used %q (%s), want 200 used %q", r.code, r.header.Get("X-Quota-Used"), r.body, tc.wantUsed)
			}
		})
	}
}

func TestHandler_BackendDownIs502AndRefunded(t *testing.T) {
	h := newHarness(t, func(o *apigw.Options) { o.Backend, _ = url.Parse("http://127.0.0.1:1") })
	key := h.key(t, "down", "pro")
	r := do(t, "GET", h.url+"/api/v1/vpn/ip/192.0.2.1", bearer(key), "")
	if r.code != 502 || r.errCode(t) != "backend_unavailable" || r.header.Get("X-Quota-Used") != "0" {
		t.Fatalf("got %d %s used %q", r.code, r.body, r.header.Get("X-Quota-Used"))
	}
	if n, _ := h.usage.Used(t.Context(), "down", time.Now()); n != 0 {
		t.Fatalf("credits used %d after a failed forward, want 0", n)
	}
}

func TestHandler_BodyTooLarge(t *testing.T) {
	h := newHarness(t, func(o *apigw.Options) { o.MaxBodyBytes = 64 })
	r := do(t, "POST", h.url+"/api/v1/vpn/ip/batch", bearer(h.key(t, "big", "pro")), `{"ips":["`+strings.Repeat("1", 100)+`"]}`)
	if r.code != 413 || r.errCode(t) != "body_too_large" {
		t.Fatalf("got %d %s", r.code, r.body)
	}
}

func TestHandler_OptionB(t *testing.T) {
	fake := gatewaytest.NewFakeValidator()
	fake.Token = "validator-token"
	fake.Stall = 600 * time.Millisecond
	vs := httptest.NewServer(fake)
	t.Cleanup(vs.Close)
	h := newHarness(t, func(o *apigw.Options) {
		o.Validator = gw.NewValidator(vs.URL, "validator-token", 200*time.Millisecond, 1)
	})
	key := h.key(t, "optb", "business")
	id, _, _ := gw.ParseKey(key)
	fake.Set(func(f *gatewaytest.FakeValidator) { f.Credits[id] = 20 })
	lookup := h.url + "/api/v1/vpn/ip/192.0.2.1?include=cves&apiKey=" + url.QueryEscape(key)
	batch := h.url + "/api/v1/vpn/ip/batch?apiKey=" + url.QueryEscape(key)

	r := do(t, "GET", lookup, nil, "")
	if r.code != 200 {
		t.Fatalf("option B lookup: %d %s", r.code, r.body)
	}
	got := h.backend.last(t)
	if got.RawQuery != "include=cves" || got.Header.Get("X-Tier") != "business" || got.Header.Get("X-Internal-Key") != internalKey {
		t.Fatalf("backend got query %q tier %q", got.RawQuery, got.Header.Get("X-Tier"))
	}
	if fake.Deducted() != 1 {
		t.Fatalf("deducted %d, want 1", fake.Deducted())
	}
	if r := do(t, "POST", batch, nil, `{"ips":["192.0.2.1","192.0.2.2","192.0.2.3"]}`); r.code != 200 || fake.Deducted() != 4 {
		t.Fatalf("batch: %d, deducted %d want 4", r.code, fake.Deducted())
	}
	// The customer's own retry with the same Idempotency-Key is charged once.
	for range 2 {
		if r := do(t, "GET", lookup, map[string]string{"Idempotency-Key": "retry-abc"}, ""); r.code != 200 {
			t.Fatalf("idempotent retry: %d", r.code)
		}
	}
	if fake.Deducted() != 5 {
		t.Fatalf("after a customer retry deducted %d, want 5", fake.Deducted())
	}
	// The same header on other requests is not a retry: ten different
	// batches of 100 sent with one Idempotency-Key cost 1,000 credits, and
	// another query or path under that header is charged too (issue 31
	// item 1: the key was bound to the header alone, so they were free).
	fake.Set(func(f *gatewaytest.FakeValidator) { f.Credits[id] = 2000 })
	reused := map[string]string{"Idempotency-Key": "reused-abc"}
	for i := range 10 {
		if r := do(t, "POST", batch, reused, batchOf100(i)); r.code != 200 {
			t.Fatalf("batch %d under a reused Idempotency-Key: %d %s", i, r.code, r.body)
		}
	}
	if fake.Deducted() != 1005 {
		t.Fatalf("ten batches of 100 under one Idempotency-Key: deducted %d, want 1005", fake.Deducted())
	}
	// Its retry (the same batch again) is charged once.
	if r := do(t, "POST", batch, reused, batchOf100(9)); r.code != 200 || fake.Deducted() != 1005 {
		t.Fatalf("retry of the last batch: %d, deducted %d want 1005", r.code, fake.Deducted())
	}
	for _, u := range []string{lookup + "&min_confidence=0.5", h.url + "/api/v1/vpn/ip/192.0.2.9?apiKey=" + url.QueryEscape(key)} {
		if r := do(t, "GET", u, map[string]string{"Idempotency-Key": "retry-abc"}, ""); r.code != 200 {
			t.Fatalf("reused key on another request: %d", r.code)
		}
	}
	if fake.Deducted() != 1007 {
		t.Fatalf("another query and another path under a used Idempotency-Key: deducted %d, want 1007", fake.Deducted())
	}
	fake.Set(func(f *gatewaytest.FakeValidator) { f.Credits[id] = 20 })
	// A deduction that times out once is retried with the same key: once.
	fake.Set(func(f *gatewaytest.FakeValidator) { f.StallNext["/deduct"] = 1 })
	if r := do(t, "GET", lookup, nil, ""); r.code != 200 || fake.Deducted() != 1008 {
		t.Fatalf("after a timed-out deduct: %d, deducted %d want 1008", r.code, fake.Deducted())
	}
	fails := []struct {
		name     string
		set      func(f *gatewaytest.FakeValidator)
		status   int
		code     string
		deducted int
	}{
		{"validator always times out", func(f *gatewaytest.FakeValidator) { f.StallNext["/check"] = 5 }, 503, "validation_unavailable", 1008},
		{"validator 5xx", func(f *gatewaytest.FakeValidator) { f.FailNext["/deduct"] = 5 }, 503, "validation_unavailable", 1008},
		{"no credits", func(f *gatewaytest.FakeValidator) { f.Credits[id] = 0 }, 402, "no_credits", 1008},
		{"inactive", func(f *gatewaytest.FakeValidator) { f.Credits[id] = 9; f.Inactive[id] = true }, 403, "subscription_inactive", 1008},
	}
	for _, tc := range fails {
		t.Run(tc.name, func(t *testing.T) {
			fake.Set(tc.set)
			before := len(h.backend.all())
			r := do(t, "GET", lookup, nil, "")
			if r.code != tc.status || r.errCode(t) != tc.code {
				t.Fatalf("got %d %s, want %d %s", r.code, r.body, tc.status, tc.code)
			}
			if len(h.backend.all()) != before {
				t.Fatal("request reached the backend although validation failed")
			}
			if fake.Deducted() != tc.deducted {
				t.Fatalf("deducted %d, want %d", fake.Deducted(), tc.deducted)
			}
			fake.Set(func(f *gatewaytest.FakeValidator) { f.StallNext = map[string]int{}; f.FailNext = map[string]int{} })
		})
	}
	// Bearer still works next to option B, and a revoked key fails either way.
	if r := do(t, "GET", h.url+"/api/v1/vpn/ip/192.0.2.1", bearer(key), ""); r.code != 200 {
		t.Fatalf("bearer with option B configured: %d", r.code)
	}
	if _, err := h.keys.Revoke(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if r := do(t, "GET", lookup, nil, ""); r.code != 401 || r.errCode(t) != "revoked_key" {
		t.Fatalf("revoked key via apiKey: %d %s", r.code, r.body)
	}
}

// batchOf100 is a batch body of 100 addresses, different for every n.
func batchOf100(n int) string {
	ips := make([]string, 100)
	for i := range ips {
		ips[i] = fmt.Sprintf("198.51.%d.%d", n, i+1)
	}
	b, _ := json.Marshal(map[string][]string{"ips": ips})
	return string(b)
}

// No key secret in logs, errors or metrics, whatever happened.
func TestHandler_NoSecretInLogsOrMetrics(t *testing.T) {
	h := newHarness(t)
	h.limits["free"] = gw.Limits{RatePerMinute: 1, MonthlyQuota: 1}
	good := h.key(t, "leak", "free")
	revoked := h.key(t, "leak", "pro")
	rid, _, _ := gw.ParseKey(revoked)
	_, _ = h.keys.Revoke(t.Context(), rid)
	_, _, _ = gw.ParseKey(good)
	gid, gsecret, _ := gw.ParseKey(good)
	wrong := gw.KeyPrefix + gid + "_" + strings.Repeat("a", 52)
	for _, k := range []string{good, good, good, revoked, wrong, good + "x"} {
		do(t, "GET", h.url+"/api/v1/vpn/ip/192.0.2.1", bearer(k), "")
		do(t, "GET", h.url+"/api/v1/vpn/export/csv?apiKey="+k, bearer(k), "")
	}
	h.keys.FlushLastUsed(t.Context())
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var metrics bytes.Buffer
	for _, mf := range mfs {
		_, _ = expfmt.MetricFamilyToText(&metrics, mf)
	}
	if !strings.Contains(metrics.String(), "netintel_gateway_requests_total") {
		t.Fatal("no gateway metrics")
	}
	logs := h.logs.String()
	if !strings.Contains(logs, gid) {
		t.Fatal("logs do not name the key id (the test would prove nothing)")
	}
	_, rsecret, _ := gw.ParseKey(revoked)
	for _, secret := range []string{gsecret, rsecret, strings.Repeat("a", 52)} {
		if strings.Contains(logs, secret) || strings.Contains(metrics.String(), secret) {
			t.Fatalf("a key secret appears in logs or metrics:\n%s", logs)
		}
	}
}

func TestHandler_BackendRefusesInternalKeyIs502(t *testing.T) {
	h := newHarness(t, func(o *apigw.Options) { o.InternalKey = "not-the-backends-key" })
	r := do(t, "GET", h.url+"/api/v1/vpn/ip/192.0.2.1", bearer(h.key(t, "mis", "pro")), "")
	if r.code != 502 || r.errCode(t) != "backend_unavailable" || r.header.Get("X-Quota-Used") != "0" {
		t.Fatalf("got %d %s used %q", r.code, r.body, r.header.Get("X-Quota-Used"))
	}
	if !strings.Contains(h.logs.String(), "api.internal_key") {
		t.Fatal("no log line naming the misconfiguration")
	}
}

func TestHandler_ForwardedFor(t *testing.T) {
	for _, trust := range []bool{false, true} {
		t.Run(fmt.Sprint("trust=", trust), func(t *testing.T) {
			h := newHarness(t, func(o *apigw.Options) { o.TrustProxy = trust })
			hdr := bearer(h.key(t, "xff", "pro"))
			hdr["X-Forwarded-For"] = "203.0.113.9"
			if r := do(t, "GET", h.url+"/api/v1/vpn/ip/192.0.2.1", hdr, ""); r.code != 200 {
				t.Fatalf("status %d", r.code)
			}
			want := "127.0.0.1"
			if trust {
				want = "203.0.113.9, 127.0.0.1"
			}
			if got := h.backend.last(t).Header.Get("X-Forwarded-For"); got != want {
				t.Fatalf("X-Forwarded-For %q, want %q", got, want)
			}
		})
	}
}

func TestHandler_NATSDownFailsClosed(t *testing.T) {
	h := newHarness(t, func(o *apigw.Options) { o.StateTimeout = 500 * time.Millisecond })
	key := h.key(t, "down", "pro") // known to the cache: only the usage update needs NATS
	h.nats.Server.Shutdown()
	h.nats.Server.WaitForShutdown()
	start := time.Now()
	r := do(t, "GET", h.url+"/api/v1/vpn/ip/192.0.2.1", bearer(key), "")
	if r.code != 503 || r.errCode(t) != "unavailable" || r.header.Get("Retry-After") == "" {
		t.Fatalf("got %d %s", r.code, r.body)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %s; the state timeout is 500ms", d)
	}
	if len(h.backend.all()) != 0 {
		t.Fatal("forwarded without counting")
	}
}
