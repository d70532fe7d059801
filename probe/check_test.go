package probe

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/testutil"
)

func boolStr(b *bool) string {
	if b == nil {
		return "null"
	}
	if *b {
		return "true"
	}
	return "false"
}

func strOrNull(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

func TestChecker_RDAP(t *testing.T) {
	w := newWorld(t)
	for _, h := range []string{"good", "notfound", "helponly", "broken", "slow", "5xx", "redirect", "loop", "html", "norc"} {
		w.rdapHosts["rdap."+h+".test"] = h
	}
	ck := NewChecker(w.config(), testutil.Logger(t))
	tests := []struct {
		name        string
		urls        []string
		wantWorking string
		wantURL     string
	}{
		{"good", []string{"http://rdap.good.test/"}, "true", "http://rdap.good.test/"},
		{"rdap-shaped 404 for an unknown name counts", []string{"http://rdap.notfound.test/"}, "true", "http://rdap.notfound.test/"},
		{"help answers when domain does not", []string{"http://rdap.helponly.test/"}, "true", "http://rdap.helponly.test/"},
		{"broken json", []string{"http://rdap.broken.test/"}, "false", "null"},
		{"slow past the timeout", []string{"http://rdap.slow.test/"}, "false", "null"},
		{"5xx", []string{"http://rdap.5xx.test/"}, "false", "null"},
		{"redirect followed", []string{"http://rdap.redirect.test/"}, "true", "http://rdap.redirect.test/"},
		{"redirect loop", []string{"http://rdap.loop.test/"}, "false", "null"},
		{"catch-all html", []string{"http://rdap.html.test/"}, "false", "null"},
		{"json without rdapConformance", []string{"http://rdap.norc.test/"}, "false", "null"},
		{"connection refused", []string{"http://rdap.refuse.test/"}, "false", "null"},
		{"second url works", []string{"http://rdap.html.test/", "http://rdap.good.test/"}, "true", "http://rdap.good.test/"},
		{"not in bootstrap: not tested", nil, "null", "null"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ck.Check(t.Context(), Work{RunID: "r", TLD: "example", RDAPURLs: tc.urls})
			if got := boolStr(r.RDAPWorking); got != tc.wantWorking {
				t.Errorf("rdap_working = %s, want %s", got, tc.wantWorking)
			}
			if got := strOrNull(r.WorkingURL); got != tc.wantURL {
				t.Errorf("working_url = %s, want %s", got, tc.wantURL)
			}
			if r.RDAPSupported != (len(tc.urls) > 0) {
				t.Errorf("rdap_supported = %v", r.RDAPSupported)
			}
			if r.RDAPURLs == nil || r.StealthURLs == nil {
				t.Errorf("lists must be [] not null: %+v", r)
			}
		})
	}
	// 5xx is transient: retried once (retries: 1) on each of the two queries.
	if got := w.hit("rdap.5xx.test", "/domain/nic.example"); got != 2 {
		t.Errorf("5xx domain query attempts = %d, want 2 (1 + 1 retry)", got)
	}
	// A broken body is not transient: no retry.
	if got := w.hit("rdap.broken.test", "/domain/nic.example"); got != 1 {
		t.Errorf("broken domain query attempts = %d, want 1", got)
	}
}

func TestChecker_Whois(t *testing.T) {
	w := newWorld(t)
	w.whoisTLDs = map[string]string{"good": "good", "nomatch": "nomatch", "hang": "hang", "junk": "junk", "denied": "denied", "silent": "silent", "xn--p1ai": "good"}
	w.ianaWhois = map[string]string{"refuse": "whois.refuse.test", "none": "", "fallback": ""}
	cfg := w.config()
	cfg.Stealth.Enabled = false
	ck := NewChecker(cfg, testutil.Logger(t))
	tests := []struct {
		tld, fallback         string
		wantAvail, wantServer string
	}{
		{"good", "", "true", "whois.nic.good"},
		{"nomatch", "", "true", "whois.nic.nomatch"},
		{"hang", "", "false", "whois.nic.hang"},
		{"junk", "", "false", "whois.nic.junk"},
		{"denied", "", "false", "whois.nic.denied"},
		{"silent", "", "false", "whois.nic.silent"},
		{"refuse", "", "false", "whois.refuse.test"},
		{"none", "", "null", "null"},
		{"fallback", "whois.fallback.test", "true", "whois.fallback.test"},
		{"xn--p1ai", "", "true", "whois.nic.xn--p1ai"},
	}
	for _, tc := range tests {
		t.Run(tc.tld, func(t *testing.T) {
			r := ck.Check(t.Context(), Work{RunID: "r", TLD: tc.tld, WhoisFallback: tc.fallback})
			if got := boolStr(r.WhoisAvailable); got != tc.wantAvail {
				t.Errorf("whois_available = %s, want %s", got, tc.wantAvail)
			}
			if got := strOrNull(r.WhoisServer); got != tc.wantServer {
				t.Errorf("whois_server = %s, want %s", got, tc.wantServer)
			}
		})
	}
}

func TestChecker_WhoisDiscoveryDown(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	cfg.Stealth.Enabled = false
	cfg.WhoisDiscovery = "whois.refuse.test:43" // IANA unreachable
	ck := NewChecker(cfg, testutil.Logger(t))
	r := ck.Check(t.Context(), Work{TLD: "good", WhoisFallback: "whois.nic.good"})
	if strOrNull(r.WhoisServer) != "whois.nic.good" || boolStr(r.WhoisAvailable) != "true" {
		t.Errorf("fallback not used: server %s available %s", strOrNull(r.WhoisServer), boolStr(r.WhoisAvailable))
	}
}

func TestWhoisAnswerOK(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"record", "Domain Name: NIC.EXAMPLE\r\nRegistrar: X\r\n", true},
		{"no match is an answer", "No match for \"NIC.EXAMPLE\".\r\n", true},
		{"comments then record", "% This is the WHOIS server\n%\ndomain: nic.ch\n", true},
		{"latin-1", "Titulaire: Soci\xe9t\xe9 G\xe9n\xe9rale\n", true},
		{"empty", "  \r\n", false},
		{"binary junk", "\x00\x01\x02\x03\x04\x05abc\x06\x07\x08\x0e\x0f", false},
		{"digits only", "12345\n", false},
		{"error", "Error: query refused\n", false},
		{"access denied", "Access denied.\n", false},
		{"rate limit in comment", "% Query rate limit exceeded\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := WhoisAnswerOK([]byte(tc.in)); got != tc.want {
				t.Errorf("WhoisAnswerOK(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestChecker_Stealth(t *testing.T) {
	w := newWorld(t)
	w.rdapHosts = map[string]string{
		"rdap.nic.stealthy":    "good",    // answers RDAP about nic.stealthy: stealth
		"rdap.nic.catchall":    "html",    // 200 HTML to everything: not RDAP
		"rdap.nic.norc":        "norc",    // JSON without rdapConformance: not RDAP
		"rdap.nic.rdap404":     "rdap404", // RDAP 404 for everything: proves nothing about the TLD
		"rdap.nic.listed":      "good",    // listed in the bootstrap: not stealth
		"rdap.backend.test":    "good",    // from the candidates file
		"rdap.registry.test":   "good",    // derived from whois.registry.test
		"rdap.derivedreg.test": "good",    // derived from the registry URL www.derivedreg.test
		"rdap.nic.xn--p1ai":    "good",    // IDN
		"rdap.good.test":       "good",
	}
	w.ianaWhois = map[string]string{"derived": "whois.registry.test", "fromreg": ""}
	w.ianaRegistry = map[string]string{"fromreg": "http://www.derivedreg.test/"}
	ck := NewChecker(w.config(), testutil.Logger(t))
	tests := []struct {
		name string
		work Work
		want []string
	}{
		{"rdap.nic.<tld> answers", Work{TLD: "stealthy"}, []string{"http://rdap.nic.stealthy/"}},
		{"catch-all html is not RDAP", Work{TLD: "catchall"}, nil},
		{"json without rdapConformance is not RDAP", Work{TLD: "norc"}, nil},
		{"rdap-shaped 404 everywhere is not stealth", Work{TLD: "rdap404"}, nil},
		{"bootstrap-listed server is not stealth", Work{TLD: "listed", RDAPURLs: []string{"https://rdap.nic.listed/"}}, nil},
		{"candidate file entry", Work{TLD: "cand", Candidates: []string{"http://rdap.backend.test/cand/"}}, []string{"http://rdap.backend.test/cand/"}},
		{"whois.X gives rdap.X", Work{TLD: "derived"}, []string{"http://rdap.registry.test/"}},
		{"registry www.X gives rdap.X", Work{TLD: "fromreg"}, []string{"http://rdap.derivedreg.test/"}},
		{"IDN", Work{TLD: "xn--p1ai"}, []string{"http://rdap.nic.xn--p1ai/"}},
		{"stealth off for this TLD", Work{TLD: "stealthy", Stealth: false}, nil},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.work.Stealth = i != len(tests)-1
			r := ck.Check(t.Context(), tc.work)
			if !slices.Equal(r.StealthURLs, tc.want) && !(len(tc.want) == 0 && len(r.StealthURLs) == 0) {
				t.Errorf("stealth_urls = %v, want %v", r.StealthURLs, tc.want)
			}
			if r.StealthRDAP != (len(tc.want) > 0) {
				t.Errorf("stealth_rdap = %v", r.StealthRDAP)
			}
			b, _ := json.Marshal(r)
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			if _, ok := m["stealth_urls"].([]any); !ok {
				t.Errorf("stealth_urls must be an array: %s", b)
			}
		})
	}
}

func TestResolver_Map(t *testing.T) {
	r := NewResolver(map[string]string{"*:80": "127.0.0.1:8080", "rdap.nic.*": "127.0.0.2", "exact.test:43": "127.0.0.3:4343", "*": "127.0.0.9"})
	tests := []struct{ in, want string }{
		{"rdap.nic.xn--p1ai:443", "127.0.0.2:443"},
		{"any.test:80", "127.0.0.1:8080"},
		{"exact.test:43", "127.0.0.3:4343"},
		{"other.test:43", "127.0.0.9:43"},
	}
	for _, tc := range tests {
		if got := r.Map(tc.in); got != tc.want {
			t.Errorf("Map(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := NewResolver(nil).Map("a.test:80"); got != "a.test:80" {
		t.Errorf("no table: %s", got)
	}
}

func TestLimiter_PerHost(t *testing.T) {
	l := NewLimiter(2, 0)
	ctx := context.Background()
	r1, _ := l.Acquire(ctx, "a")
	r2, _ := l.Acquire(ctx, "A") // same host, case-insensitive
	if _, err := l.Acquire(ctx, "b"); err != nil {
		t.Fatalf("another host must not wait: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := l.Acquire(short, "a"); err == nil {
		t.Fatal("third request to host a got a slot; per_host is 2")
	}
	r1()
	r3, err := l.Acquire(ctx, "a")
	if err != nil {
		t.Fatalf("slot not freed: %v", err)
	}
	r2()
	r3()
}

func TestLimiter_GlobalRate(t *testing.T) {
	l := NewLimiter(100, 50) // burst 50, then 50 per second
	start := time.Now()
	for i := range 60 {
		release, err := l.Acquire(t.Context(), "h"+string(rune('a'+i%26)))
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	// 10 tokens beyond the burst need 200 ms at 50/s.
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("60 requests at 50/s with burst 50 took %s; the rate is not applied", d)
	}
}

func TestChecker_RetryBackoff(t *testing.T) {
	w := newWorld(t)
	w.rdapHosts["rdap.5xx.test"] = "5xx"
	cfg := w.config()
	cfg.Retries = 3
	cfg.Backoff = 250 * time.Millisecond
	ck := NewChecker(cfg, testutil.Logger(t))
	var waits []time.Duration
	ck.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	if ck.RDAPWorks(t.Context(), "example", "http://rdap.5xx.test/") {
		t.Fatal("5xx server counted as working")
	}
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second}
	// Two queries (domain, then help), each retried 3 times with doubling waits.
	if !slices.Equal(waits, append(slices.Clone(want), want...)) {
		t.Errorf("waits %v, want %v twice", waits, want)
	}
	if got := w.hit("rdap.5xx.test", "/help"); got != 4 {
		t.Errorf("help attempts %d, want 4", got)
	}
}

func TestChecker_HTTPS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, name, _ := strings.Cut(r.URL.Path, "/domain/")
		writeRDAP(w, 200, rdapJSON, map[string]any{"rdapConformance": []string{"rdap_level_0"}, "objectClassName": "domain", "ldhName": name})
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	for _, insecure := range []bool{false, true} {
		cfg := newWorld(t).config()
		cfg.Resolve = map[string]string{"*:443": srv.Listener.Addr().String()}
		cfg.WhoisDiscovery = ""
		cfg.Retries = 0
		cfg.InsecureSkipVerify = insecure
		cfg.Stealth.Candidates = []string{"https://rdap.nic.<tld>/"}
		ck := NewChecker(cfg, testutil.Logger(t))
		r := ck.Check(t.Context(), Work{TLD: "example", RDAPURLs: []string{"https://rdap.example.test/"}, Stealth: true})
		// The test server's certificate does not name these hosts: only
		// insecure_skip_verify lets the checks through.
		if boolStr(r.RDAPWorking) != strconv.FormatBool(insecure) || r.StealthRDAP != insecure {
			t.Errorf("insecure=%v: rdap_working %s, stealth %v", insecure, boolStr(r.RDAPWorking), r.StealthURLs)
		}
	}
}

// TestChecker_TimedOutServer: one dead RDAP server behind three TLDs. The
// first TLD costs one timeout (no retry at full timeout, no /help after
// it); the next TLDs of the same run ask it once with dead_timeout; a new
// run starts afresh. A hanging WHOIS server is not retried either.
func TestChecker_TimedOutServer(t *testing.T) {
	w := newWorld(t)
	w.rdapHosts["rdap.slow.test"] = "slow"
	w.whoisTLDs["hung"] = "hang"
	cfg := w.config()
	cfg.Timeout, cfg.DeadTimeout, cfg.Retries = 300*time.Millisecond, 50*time.Millisecond, 2
	ck := NewChecker(cfg, testutil.Logger(t))
	urls := []string{"http://rdap.slow.test/"}
	for i, tld := range []string{"one", "two", "three"} {
		start := time.Now()
		r := ck.Check(t.Context(), Work{RunID: "run1", TLD: tld, RDAPURLs: urls})
		took := time.Since(start)
		if boolStr(r.RDAPWorking) != "false" {
			t.Fatalf("%s: rdap_working %s", tld, boolStr(r.RDAPWorking))
		}
		if got := w.hit("rdap.slow.test", "/domain/nic."+tld); got != 1 {
			t.Errorf("%s: %d domain queries to the dead server, want 1", tld, got)
		}
		if i > 0 && took > 250*time.Millisecond {
			t.Errorf("%s: took %s with the server known dead, want about dead_timeout (50ms)", tld, took)
		}
	}
	if got := w.hit("rdap.slow.test", "/help"); got != 0 {
		t.Errorf("/help asked %d times of a server that timed out", got)
	}
	start := time.Now()
	ck.Check(t.Context(), Work{RunID: "run2", TLD: "four", RDAPURLs: urls})
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Errorf("a new run used the old run's memory: took %s, want the full timeout", took)
	}
	cfg.WhoisServers = map[string]string{"hung": "whois.hung.test"}
	ck = NewChecker(cfg, testutil.Logger(t))
	r := ck.Check(t.Context(), Work{RunID: "run1", TLD: "hung"})
	if boolStr(r.WhoisAvailable) != "false" {
		t.Fatalf("hanging whois: whois_available %s", boolStr(r.WhoisAvailable))
	}
	if v, ok := w.whoisQueries.Load("nic.hung"); !ok || v.(*atomic.Int64).Load() != 1 {
		t.Errorf("hanging whois server queried %v times, want 1", v)
	}
}

// A timeout outside any run (run "", the zero value's) is remembered like
// one inside a run; it once panicked on the zero value's nil map.
func TestTimedOut_OutsideARun(t *testing.T) {
	var d timedOut
	d.set("", "rdap.example:443", false)
	if d.has("", "rdap.example:443") {
		t.Fatal("an answer marked the host dead")
	}
	d.set("", "rdap.example:443", true)
	if !d.has("", "rdap.example:443") || d.has("run2", "rdap.example:443") {
		t.Fatal("the timeout outside a run was not remembered for that run alone")
	}
	d.set("", "rdap.example:443", false)
	if d.has("", "rdap.example:443") {
		t.Fatal("a host that answered again is still dead")
	}
}
