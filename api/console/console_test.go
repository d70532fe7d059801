package console_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/api/console"
	"github.com/netintel/netintel/internal/httpx"
)

type errBody struct {
	Error httpx.Error `json:"error"`
}

type lookupBody struct {
	Lookup struct {
		IP              string   `json:"ip"`
		Found           bool     `json:"found"`
		Classifications []string `json:"classifications"`
		Assets          []struct {
			Port int `json:"port"`
			Cves []struct {
				CveID      string   `json:"cve_id"`
				KevAddedAt *string  `json:"kev_added_at"`
				EpssScore  *float64 `json:"epss_score"`
			} `json:"cves"`
		} `json:"assets"`
	} `json:"lookup"`
	Record *console.RecordExtras `json:"record"`
}

func TestHandler_IPLookup(t *testing.T) {
	e := newEnv(t, nil)
	code, b, _ := e.get(t, "/console/api/ip/"+e.cveIP)
	if code != 200 {
		t.Fatalf("lookup: %d %s", code, b)
	}
	got := decode[lookupBody](t, b)
	want := e.gen.Host(hostIndex(t, e, e.cveIP))
	// The host's own classifications, and those of a range it is in.
	if got.Lookup.IP != e.cveIP || !got.Lookup.Found || len(want.Classifications) == 0 {
		t.Errorf("lookup = %+v", got.Lookup)
	}
	for _, c := range want.Classifications {
		if !slices.Contains(got.Lookup.Classifications, c) {
			t.Errorf("classifications %v, want %s among them", got.Lookup.Classifications, c)
		}
	}
	var kev bool
	for _, a := range got.Lookup.Assets {
		for _, c := range a.Cves {
			kev = kev || (c.CveID == e.cve && c.KevAddedAt != nil)
		}
	}
	if !kev {
		t.Errorf("lookup has no %s with its KEV date (include=cves, tier enterprise): %s", e.cve, b)
	}
	if got.Record == nil || got.Record.Snapshot != "2026-11-22" || len(got.Record.Sources) == 0 {
		t.Errorf("record extras = %+v, want the snapshot record", got.Record)
	}

	for _, tc := range []struct {
		name, path string
		code       int
		errCode    string
	}{
		{"not an address", "/console/api/ip/not-an-ip", 400, "invalid_ip"},
		{"unknown address", "/console/api/ip/198.18.0.1", 404, "not_found"},
		{"cidr", "/console/api/ip/" + url.PathEscape("10.0.0.0/8"), 400, "invalid_ip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b, _ := e.get(t, tc.path)
			if code != tc.code || decode[errBody](t, b).Error.Code != tc.errCode {
				t.Fatalf("%d %s, want %d %s", code, b, tc.code, tc.errCode)
			}
		})
	}
}

func hostIndex(t *testing.T, e *env, ip string) int {
	t.Helper()
	for i := range e.gen.NHosts {
		if e.gen.Host(i).IP == ip {
			return i
		}
	}
	t.Fatalf("%s is no generated host", ip)
	return 0
}

func TestHandler_Snapshots(t *testing.T) {
	e := newEnv(t, nil)
	code, b, _ := e.get(t, "/console/api/snapshots")
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	got := decode[console.Snapshots](t, b)
	if len(got.Snapshots) != 2 || got.Snapshots[0].Date != "2026-11-22" || got.Snapshots[1].Date != "2026-11-21" {
		t.Fatalf("snapshots = %+v, want both dates newest first", got.Snapshots)
	}
	if !got.Snapshots[0].Latest || got.Snapshots[1].Latest || got.Latest == nil || got.Latest.SnapshotDate != "2026-11-22" {
		t.Errorf("latest flags wrong: %+v / %+v", got.Latest, got.Snapshots)
	}
	s := got.Snapshots[1]
	if s.Hosts != 300 || len(s.Files) == 0 || s.Size <= 0 {
		t.Fatalf("build = %+v", s)
	}
	// Every listed file downloads with the bytes its checksum names.
	var sums strings.Builder
	for _, f := range s.Files {
		code, body, h := e.get(t, f.URL)
		sum := sha256.Sum256(body)
		if code != 200 || hex.EncodeToString(sum[:]) != f.SHA256 || int64(len(body)) != f.Size || h.Get("ETag") != `"`+f.SHA256+`"` {
			t.Errorf("%s: %d, %d bytes, etag %s", f.URL, code, len(body), h.Get("ETag"))
		}
		sums.WriteString(f.SHA256 + "  " + f.Name + "\n")
	}
	if code, body, _ := e.get(t, s.SumsURL); code != 200 || string(body) != sums.String() {
		t.Errorf("SHA256SUMS: %d %q, want %q", code, body, sums.String())
	}
	for _, p := range []string{
		"/console/api/snapshots/2026-11-21/" + s.BuildID + "/nope.csv",
		"/console/api/snapshots/2026-11-20/" + s.BuildID + "/ipintel.csv.gz",
		"/console/api/snapshots/2026-11-21/x/ipintel.csv.gz",
		"/console/api/snapshots/not-a-date/-/ipintel.csv.gz",
	} {
		if code, b, _ := e.get(t, p); code != 404 || decode[errBody](t, b).Error.Code != "not_found" {
			t.Errorf("%s: %d %s, want 404", p, code, b)
		}
	}
}

func TestHandler_TLD(t *testing.T) {
	e := newEnv(t, nil)
	code, b, _ := e.get(t, "/console/api/tld")
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	got := decode[console.TLDStatus](t, b)
	if got.Progress.Status != "running" || got.Progress.ProcessedTLDs != 350 || got.Progress.TotalTLDs != 1400 {
		t.Errorf("progress = %+v", got.Progress)
	}
	if got.Published == nil || got.Published.StealthCount != 1 || len(got.Results) != 4 || got.Results[1].TLD != "de" {
		t.Errorf("published %+v, results %+v", got.Published, got.Results)
	}
	// A progress poll leaves the results out.
	code, b, _ = e.get(t, "/console/api/tld?results=false")
	if poll := decode[console.TLDStatus](t, b); code != 200 || poll.Results != nil || poll.Progress.ProcessedTLDs != 350 {
		t.Errorf("poll: %d %s", code, b)
	}
	code, b, _ = e.get(t, "/console/api/tld/history")
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	h := decode[console.TLDHistoryBody](t, b)
	want := []console.RunSummary{
		{Run: "20261118T000000Z0001", Date: "2026-11-18T01:00:00Z", Total: 3, RDAP: 1, WHOIS: 1, Stealth: 0},
		{Run: "20261120T000000Zcafe", Date: "2026-11-20T01:00:00Z", Total: 4, RDAP: 1, WHOIS: 2, Stealth: 1},
	}
	if len(h.Runs) != 2 || h.Runs[0] != want[0] || h.Runs[1] != want[1] {
		t.Errorf("history = %+v, want %+v", h.Runs, want)
	}
	// The changes between the two kept runs, newest first.
	code, b, _ = e.get(t, "/console/api/tld/changes")
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	c := decode[console.TLDChanges](t, b)
	var got2 []string
	for _, ch := range c.Changes {
		if ch.RunID != "20261120T000000Zcafe" || ch.PreviousRunID != "20261118T000000Z0001" {
			t.Errorf("change %+v: wrong runs", ch)
		}
		got2 = append(got2, ch.TLD+" "+ch.Change)
	}
	if c.Runs != 2 || strings.Join(got2, ", ") != "zz tld_added, com working_flipped" {
		t.Errorf("changes = %d runs, %v", c.Runs, got2)
	}
}

// Without per-run summaries the latest one is the history's one point.
func TestStoreHistory_LatestOnly(t *testing.T) {
	e := newEnv(t, nil)
	objs, err := e.store.List(t.Context(), "tld/runs/")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := e.store.Delete(t.Context(), o.Key); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := console.StoreHistory{Store: e.store, Prefix: "tld/"}.Runs(t.Context(), 10)
	if err != nil || len(runs) != 1 || runs[0].Run != "20261120T000000Zcafe" {
		t.Fatalf("runs = %+v, %v", runs, err)
	}
	runs, err = console.StoreHistory{Store: e.store, Prefix: "none/"}.Runs(t.Context(), 10)
	if err != nil || len(runs) != 0 {
		t.Fatalf("empty store: %+v, %v", runs, err)
	}
}

func TestHandler_Pipeline(t *testing.T) {
	e := newEnv(t, nil)
	if err := e.sampler.Sample(t.Context()); err != nil {
		t.Fatal(err)
	}
	publishObs(t, e.nats.JS, 25)
	publishDead(t, e.nats.JS)
	time.Sleep(10 * time.Millisecond) // the samples' times must differ
	if err := e.sampler.Sample(t.Context()); err != nil {
		t.Fatal(err)
	}
	code, b, _ := e.get(t, "/console/api/pipeline")
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	got := decode[console.Pipeline](t, b)
	var lag uint64
	for _, c := range got.Consumers {
		if c.Stream == "OBSERVATIONS" && c.Name == "enrich-00" {
			lag = c.NumPending + uint64(c.AckPending)
		}
	}
	if lag != 25 {
		t.Errorf("enrich-00 lag = %d, want 25 (consumers %+v)", lag, got.Consumers)
	}
	if got.DeadLetters == nil || got.DeadLetters.Count != 1 || len(got.DeadLetters.Recent) != 1 ||
		got.DeadLetters.Recent[0].Error != "malformed observation: missing ip" || got.DeadLetters.Recent[0].Original != "obs.scan.console.00" {
		t.Errorf("dead letters = %+v", got.DeadLetters)
	}
	jobs := map[string]console.JobInfo{}
	for _, j := range got.Jobs {
		jobs[j.Name] = j
	}
	if j := jobs["snapshot"]; j.LastSuccess == nil || j.Next == nil {
		t.Errorf("snapshot job = %+v, want its last success and next tick", j)
	}
	if j, ok := jobs["tld_probe"]; !ok || j.LastSuccess != nil || j.Spec != "@every 48h" {
		t.Errorf("tld_probe job = %+v, want listed, never run", j)
	}
	// 25 observations stored and none settled between the two samples.
	if len(got.Rates) != 1 || got.Rates[0].Ingest <= 0 || got.Rates[0].Enrich != 0 || got.Rates[0].Backlog != 25 || got.Rates[0].Dead <= 0 {
		t.Errorf("rates = %+v", got.Rates)
	}
}

func TestSampler_RingKeepsSize(t *testing.T) {
	e := newEnv(t, nil)
	for range 15 {
		if err := e.sampler.Sample(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.sampler.Points()); n != 9 {
		t.Fatalf("%d points from a ring of 10 samples, want 9", n)
	}
}

func TestHandler_Access(t *testing.T) {
	both := func(o *console.Options) {
		o.Allow = []string{console.AllowLoopback, console.AllowKeys}
		o.TrustProxy = true
	}
	keysOnly := func(o *console.Options) { o.Allow = []string{console.AllowKeys}; o.TrustProxy = true }
	loopOnly := func(o *console.Options) { o.TrustProxy = true }
	type req struct {
		name, path string
		hdr        []string
		want       int
	}
	remote := []string{"X-Forwarded-For", "203.0.113.9"}
	for _, tc := range []struct {
		name   string
		mutate func(*console.Options)
		reqs   func(op, cust, revoked string) []req
	}{
		{"loopback only", loopOnly, func(op, _, _ string) []req {
			return []req{
				{"local page", "/console/", nil, 200},
				{"local api", "/console/api/tld", nil, 200},
				{"local through the proxy", "/console/api/tld", []string{"X-Forwarded-For", "127.0.0.1"}, 200},
				{"remote page", "/console/", remote, 403},
				{"remote api", "/console/api/tld", remote, 403},
				{"remote with an operator key", "/console/api/tld", append(remote, "Authorization", "Bearer "+op), 403},
				{"remote sign-in page", "/console/login", remote, 403},
				{"remote asset", "/console/assets/console.js", remote, 403},
			}
		}},
		{"keys only", keysOnly, func(op, cust, revoked string) []req {
			return []req{
				{"local without a key", "/console/api/tld", nil, 403},
				{"remote with an operator key", "/console/api/tld", append(remote, "Authorization", "Bearer "+op), 200},
				{"remote with a customer key", "/console/api/tld", append(remote, "Authorization", "Bearer "+cust), 403},
				{"remote with a revoked key", "/console/api/tld", append(remote, "Authorization", "Bearer "+revoked), 403},
				{"remote with a malformed key", "/console/api/tld", append(remote, "Authorization", "Bearer nope"), 403},
				{"remote with the key in the cookie", "/console/api/pipeline", append(remote, "Cookie", console.CookieName+"="+op), 200},
				{"remote sign-in page", "/console/login", remote, 200},
				{"remote asset", "/console/assets/console.css", remote, 200},
			}
		}},
		{"loopback and keys", both, func(op, _, _ string) []req {
			return []req{
				{"local without a key", "/console/api/tld", nil, 200},
				{"remote without a key", "/console/api/tld", remote, 403},
				{"remote with an operator key", "/console/api/snapshots", append(remote, "Authorization", "Bearer "+op), 200},
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.mutate)
			op, _, err := e.keys.Create(t.Context(), "ops", "enterprise", []string{"operator"})
			if err != nil {
				t.Fatal(err)
			}
			cust, _, err := e.keys.Create(t.Context(), "acme", "enterprise", nil)
			if err != nil {
				t.Fatal(err)
			}
			revoked, rec, err := e.keys.Create(t.Context(), "old", "enterprise", []string{"operator"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.keys.Revoke(t.Context(), rec.ID); err != nil {
				t.Fatal(err)
			}
			for _, r := range tc.reqs(op, cust, revoked) {
				code, b, h := e.get(t, r.path, r.hdr...)
				if code != r.want {
					t.Errorf("%s: %d %s, want %d", r.name, code, b, r.want)
					continue
				}
				if code == 403 {
					if eb := decode[errBody](t, b); eb.Error.Code != "forbidden" || eb.Error.Message == "" || strings.Contains(string(b), op) {
						t.Errorf("%s: body %s, want the standard error body", r.name, b)
					}
				}
				if h.Get("Content-Security-Policy") == "" {
					t.Errorf("%s: no Content-Security-Policy", r.name)
				}
			}
		})
	}
}

// Signing in with an operator key sets an HttpOnly cookie that opens the
// console; a wrong key goes back to the form.
func TestHandler_Login(t *testing.T) {
	e := newEnv(t, func(o *console.Options) { o.Allow = []string{console.AllowKeys} })
	op, _, err := e.keys.Create(t.Context(), "ops", "enterprise", []string{"operator"})
	if err != nil {
		t.Fatal(err)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(key string) *http.Response {
		res, err := noRedirect.PostForm(e.srv.URL+"/console/login", url.Values{"key": {key}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	res := post("svc_vpn_0000000000000000_" + strings.Repeat("a", 52))
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login?failed=1" || len(res.Cookies()) != 0 {
		t.Fatalf("wrong key: %d %s %v", res.StatusCode, res.Header.Get("Location"), res.Cookies())
	}
	res = post(op)
	cs := res.Cookies()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/" || len(cs) != 1 || !cs[0].HttpOnly || cs[0].Path != "/console/" || cs[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("operator key: %d %s %+v", res.StatusCode, res.Header.Get("Location"), cs)
	}
	if code, b, h := e.get(t, "/console/api/tld", "Cookie", cs[0].Name+"="+cs[0].Value); code != 200 || h.Get(console.AccessHeader) != "key" {
		t.Fatalf("with the cookie: %d %s", code, b)
	}
	// A browser without a key asking for the page is sent to sign in.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.srv.URL+"/console/", nil)
	req.Header.Set("Accept", "text/html")
	r2, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != http.StatusSeeOther || r2.Header.Get("Location") != "/console/login" {
		t.Fatalf("page without a key: %d %s", r2.StatusCode, r2.Header.Get("Location"))
	}
}

func TestHandler_Routes(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		path, ctype string
		code        int
	}{
		{"/console/", "text/html", 200},
		{"/console/login", "text/html", 200},
		{"/console/assets/console.js", "text/javascript", 200},
		{"/console/assets/console.css", "text/css", 200},
		{"/console/assets/nope.js", "text/plain", 404},
		{"/console/nope", "application/json", 404},
		{"/console/api/nope", "application/json", 404},
	} {
		code, b, h := e.get(t, tc.path)
		if code != tc.code || !strings.HasPrefix(h.Get("Content-Type"), tc.ctype) {
			t.Errorf("%s: %d %q %.80s", tc.path, code, h.Get("Content-Type"), b)
		}
	}
}

// Loopback means the connection's peer and, behind a trusted proxy, the
// client it names: a remote client cannot forge its way in, and a proxy
// on this machine does not open the console to the world.
func TestHandler_LoopbackNeedsThePeer(t *testing.T) {
	mux := http.NewServeMux()
	console.New(console.Options{Allow: []string{console.AllowLoopback}, TrustProxy: true}).Mount(mux)
	for _, tc := range []struct {
		name, peer, xff string
		want            int
	}{
		{"local", "127.0.0.1:5000", "", 200},
		{"local ipv6", "[::1]:5000", "", 200},
		{"local proxy, local client", "127.0.0.1:5000", "127.0.0.1", 200},
		{"local proxy, remote client", "127.0.0.1:5000", "198.51.100.7", 403},
		{"remote forging loopback", "203.0.113.5:5000", "127.0.0.1", 403},
		{"remote", "203.0.113.5:5000", "", 403},
	} {
		req := httptest.NewRequest(http.MethodGet, "/console/", nil)
		req.RemoteAddr = tc.peer
		if tc.xff != "" {
			req.Header.Set("X-Forwarded-For", tc.xff)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, rec.Code, tc.want)
		}
	}
}
