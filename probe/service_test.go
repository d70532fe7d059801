package probe

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
)

// inputs writes a TLD list and a bootstrap for tlds (tld -> bootstrap
// behaviour host, "" = not in the bootstrap) and points cfg at them.
func writeInputs(t testing.TB, cfg *config.Probe, tlds []string, boot map[string][]string) {
	t.Helper()
	dir := t.TempDir()
	list := "# Version 1, test\n" + strings.ToUpper(strings.Join(tlds, "\n")) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "tlds.txt"), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	services := [][][]string{}
	for tld, urls := range boot {
		services = append(services, [][]string{{tld}, urls})
	}
	b, _ := json.Marshal(map[string]any{"version": "1.0", "services": services})
	if err := os.WriteFile(filepath.Join(dir, "dns.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.TLDList = filepath.Join(dir, "tlds.txt")
	cfg.RDAPBootstrap = filepath.Join(dir, "dns.json")
}

func newTestService(t *testing.T, n *testutil.NATS, store objstore.Store, cfg config.Probe) *Service {
	t.Helper()
	s, err := New(t.Context(), cfg, n.JS, store, testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startWorker runs s's worker until the returned stop is called (or the test ends).
func startWorker(t *testing.T, s *Service) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.RunWorker(ctx); err != nil {
			t.Errorf("worker: %v", err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func folderStore(t testing.TB) objstore.Store {
	t.Helper()
	st, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func getObject(t *testing.T, st objstore.Store, key string) []byte {
	t.Helper()
	rc, _, err := st.Get(t.Context(), key, nil)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestService_RunPublishes(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	s3 := testutil.StartS3(t)
	store, err := objstore.Open(t.Context(), s3.Config(), "")
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	w.rdapHosts = map[string]string{"rdap.good.test": "good", "rdap.notfound.test": "notfound", "rdap.html.test": "html", "rdap.nic.stealthy": "good"}
	w.ianaWhois = map[string]string{"nowhois": ""}
	w.whoisTLDs = map[string]string{"html": "junk"}
	cfg := w.config()
	tlds := []string{"good", "html", "nf", "nowhois", "stealthy", "xn--p1ai"}
	writeInputs(t, &cfg, tlds, map[string][]string{
		"good": {"http://rdap.good.test/"}, "nf": {"http://rdap.notfound.test/"}, "html": {"http://rdap.html.test/"}, "xn--p1ai": {"http://rdap.good.test/"},
	})
	a, b := newTestService(t, n, store, cfg), newTestService(t, n, store, cfg)
	startWorker(t, a)
	startWorker(t, b)
	if err := a.RunNow(t.Context()); err != nil {
		t.Fatal(err)
	}

	var res Results
	if err := json.Unmarshal(getObject(t, store, "tld/latest/results.json"), &res); err != nil {
		t.Fatal(err)
	}
	if res.TotalTLDs != len(tlds) || len(res.Results) != len(tlds) {
		t.Fatalf("total %d, results %d, want %d", res.TotalTLDs, len(res.Results), len(tlds))
	}
	by := map[string]Result{}
	for i, r := range res.Results {
		if r.TLD != tlds[i] {
			t.Errorf("results[%d] = %s, want %s (list order)", i, r.TLD, tlds[i])
		}
		by[r.TLD] = r
	}
	want := map[string]string{ // tld -> rdap_working/whois_available/stealth
		"good":     "true/true/false",
		"html":     "false/false/false",
		"nf":       "true/true/false",
		"nowhois":  "null/null/false",
		"stealthy": "null/true/true",
		"xn--p1ai": "true/true/false",
	}
	for tld, wnt := range want {
		r := by[tld]
		got := boolStr(r.RDAPWorking) + "/" + boolStr(r.WhoisAvailable) + "/" + map[bool]string{true: "true", false: "false"}[r.StealthRDAP]
		if got != wnt {
			t.Errorf("%s: got %s, want %s", tld, got, wnt)
		}
	}
	if res.StealthMetadata.TotalTLDsProbed != len(tlds) || res.StealthMetadata.StealthTLDsFound != 1 || res.StealthMetadata.MaxTLDsConfigured != nil || res.LastUpdate == 0 || res.StealthMetadata.DiscoveryTimestamp == 0 {
		t.Errorf("metadata: %+v last_update %d", res.StealthMetadata, res.LastUpdate)
	}
	// The raw document has exactly the spec's keys, null where not tested.
	var raw map[string]any
	_ = json.Unmarshal(getObject(t, store, "tld/latest/results.json"), &raw)
	first := raw["results"].([]any)[3].(map[string]any)
	if first["tld"] != "nowhois" || first["rdap_working"] != nil || first["whois_server"] != nil {
		t.Errorf("nowhois raw: %v", first)
	}
	var keys []string
	for k := range first {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"rdap_supported", "rdap_urls", "rdap_working", "stealth_rdap", "stealth_urls", "tld", "whois_available", "whois_server", "working_url"}) {
		t.Errorf("result keys: %v", keys)
	}

	rows, err := csv.NewReader(bytes.NewReader(getObject(t, store, "tld/latest/results.csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(tlds)+1 || !slices.Equal(rows[0], CSVHeader) || !slices.Contains(rows[0], "stealth_urls") {
		t.Fatalf("csv: %d rows, header %v", len(rows), rows[0])
	}
	if rows[5][0] != "stealthy" || rows[5][7] != "true" || rows[5][8] != "http://rdap.nic.stealthy/" {
		t.Errorf("csv stealthy row: %v", rows[5])
	}

	var sum Summary
	if err := json.Unmarshal(getObject(t, store, "tld/latest/summary.json"), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.TotalTLDs != 6 || sum.RDAPSupported != 4 || sum.RDAPWorking != 3 || sum.WhoisAvailable != 4 || sum.StealthFound != 1 || sum.ByType["idn"].TLDs != 1 || sum.ByType["generic"].TLDs != 4 || sum.ByType["country-code"].TLDs != 1 || sum.DurationSeconds < 0 {
		t.Errorf("summary: %+v", sum)
	}
	dated, err := store.List(t.Context(), "tld/runs/")
	if err != nil || len(dated) != 3 {
		t.Errorf("dated copies: %v %v", dated, err)
	}

	p, err := a.Progress(t.Context())
	if err != nil || p.Status != StatusCompleted || p.CurrentStep != StepCompleted || p.ProcessedTLDs != 6 || p.TotalTLDs != 6 {
		t.Errorf("progress: %+v %v", p, err)
	}
	pub, ok, err := b.Published(t.Context())
	if !ok || err != nil || pub.ResultsAvailable != 6 || pub.StealthCount != 1 {
		t.Errorf("published (read by the other instance): %+v %v %v", pub, ok, err)
	}
	// Per-TLD results left KV once published.
	keys, _ = a.kv.Keys(t.Context())
	for _, k := range keys {
		if strings.HasPrefix(k, "result.") {
			t.Errorf("result key left in kv: %s", k)
		}
	}
}

func TestLease(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	kv, err := n.JS.KeyValue(t.Context(), LocksKV)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	clock := func() time.Time { return now }
	a := &lease{kv: kv, js: n.JS, key: "k", owner: "a", ttl: time.Minute, now: clock}
	b := &lease{kv: kv, js: n.JS, key: "k", owner: "b", ttl: time.Minute, now: clock}
	if err := a.acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := b.acquire(t.Context()); !errors.Is(err, ErrBusy) {
		t.Fatalf("second owner: %v, want ErrBusy", err)
	}
	if err := a.renew(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if free, _ := leaseFree(t.Context(), kv, "k", now); free {
		t.Error("held lease reported free")
	}
	// a crashes: no renewal; after the TTL b takes over and a cannot renew.
	now = now.Add(2 * time.Minute)
	if free, _ := leaseFree(t.Context(), kv, "k", now); !free {
		t.Error("expired lease reported held")
	}
	if err := b.acquire(t.Context()); err != nil {
		t.Fatalf("takeover after expiry: %v", err)
	}
	if err := a.renew(t.Context(), time.Minute); !errors.Is(err, errLeaseLost) {
		t.Errorf("the old owner renewing a lease it lost: %v, want errLeaseLost", err)
	}
	a.release(t.Context()) // must not delete b's lease
	if err := a.acquire(t.Context()); !errors.Is(err, ErrBusy) {
		t.Errorf("after a stale release: %v, want ErrBusy", err)
	}
	b.release(t.Context())
	if err := a.acquire(t.Context()); err != nil {
		t.Errorf("after release: %v", err)
	}
}

func TestService_TwoInstancesNeverRunAtOnce(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	store := folderStore(t)
	w := newWorld(t)
	w.latency = 60 * time.Millisecond
	w.rdapHosts = map[string]string{"rdap.good.test": "good"}
	cfg := w.config()
	cfg.Concurrency = 2
	cfg.Stealth.Enabled = false
	var tlds []string
	for i := range 12 {
		tlds = append(tlds, "t"+string(rune('a'+i)))
	}
	writeInputs(t, &cfg, tlds, nil)
	a, b := newTestService(t, n, store, cfg), newTestService(t, n, store, cfg)
	startWorker(t, a)
	errc := make(chan error, 1)
	go func() { errc <- a.coordinate(t.Context(), true) }()
	waitFor(t, 10*time.Second, "a's run to start", func() bool {
		p, _ := a.Progress(t.Context())
		return p.Status == StatusRunning && p.RunID != ""
	})
	p0, _ := a.Progress(t.Context())
	if err := b.coordinate(t.Context(), true); !errors.Is(err, ErrBusy) {
		t.Fatalf("second instance: %v, want ErrBusy", err)
	}
	if err := b.RunNow(t.Context()); err != nil {
		t.Fatalf("scheduled tick on the second instance must be a quiet no-op: %v", err)
	}
	if err := a.coordinate(t.Context(), true); !errors.Is(err, ErrBusy) {
		t.Fatalf("second coordinator in the same process: %v, want ErrBusy", err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	p1, _ := b.Progress(t.Context())
	if p1.RunID != p0.RunID || p1.Status != StatusCompleted {
		t.Errorf("progress after: %+v, want run %s completed", p1, p0.RunID)
	}
	// The lease is free again: the next run may start anywhere.
	if err := b.RunNow(t.Context()); err != nil {
		t.Fatal(err)
	}
	p2, _ := b.Progress(t.Context())
	if p2.RunID == p0.RunID || p2.Status != StatusCompleted {
		t.Errorf("second run: %+v", p2)
	}
}

func TestService_ResumesInterruptedRun(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	store := folderStore(t)
	w := newWorld(t)
	w.latency = 40 * time.Millisecond
	w.rdapHosts = map[string]string{"rdap.good.test": "good"}
	cfg := w.config()
	cfg.Concurrency = 2
	cfg.Stealth.Enabled = false
	var tlds []string
	boot := map[string][]string{}
	for i := range 30 {
		tld := "r" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		tlds = append(tlds, tld)
		boot[tld] = []string{"http://rdap.good.test/"}
	}
	writeInputs(t, &cfg, tlds, boot)

	// Instance A coordinates and works, and dies part-way.
	a := newTestService(t, n, store, cfg)
	stopA := startWorker(t, a)
	ctxA, crashA := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- a.coordinate(ctxA, true) }()
	count := func() int {
		keys, _ := a.kv.Keys(t.Context())
		c := 0
		for _, k := range keys {
			if strings.HasPrefix(k, "result.") {
				c++
			}
		}
		return c
	}
	waitFor(t, 20*time.Second, "a third of the TLDs", func() bool { return count() >= 10 })
	crashA()
	stopA()
	if err := <-errc; err == nil {
		t.Fatal("interrupted coordinator returned nil")
	}
	doneBefore := map[string]int64{}
	keys, _ := a.kv.Keys(t.Context())
	for _, k := range keys {
		if tld, ok := strings.CutPrefix(k, "result."); ok {
			tld = tld[strings.LastIndex(tld, ".")+1:]
			doneBefore[tld] = w.hit("rdap.good.test", "/domain/nic."+tld)
		}
	}
	p, _ := a.Progress(t.Context())
	if p.Status != StatusRunning || len(doneBefore) >= len(tlds) {
		t.Fatalf("not interrupted mid-way: %+v, %d done", p, len(doneBefore))
	}

	// Instance B's worker notices the orphaned run and finishes it.
	b := newTestService(t, n, store, cfg)
	startWorker(t, b)
	waitFor(t, 30*time.Second, "the resumed run to complete", func() bool {
		p, _ := b.Progress(t.Context())
		if p.Status == StatusFailed {
			// Said at once, with the step, rather than as a timeout.
			t.Fatalf("the resumed run failed: %s", p.CurrentStep)
		}
		return p.Status == StatusCompleted
	})
	var res Results
	if err := json.Unmarshal(getObject(t, store, "tld/latest/results.json"), &res); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range res.Results {
		if seen[r.TLD] {
			t.Errorf("%s twice in results", r.TLD)
		}
		seen[r.TLD] = true
		if r.RDAPWorking == nil || !*r.RDAPWorking {
			t.Errorf("%s: not working", r.TLD)
		}
	}
	if len(seen) != len(tlds) {
		t.Errorf("%d TLDs in results, want %d", len(seen), len(tlds))
	}
	// TLDs finished before the crash were not checked again.
	for tld, hits := range doneBefore {
		if now := w.hit("rdap.good.test", "/domain/nic."+tld); now != hits {
			t.Errorf("%s re-checked after resume: %d -> %d requests", tld, hits, now)
		}
	}
	total := int64(0)
	for _, tld := range tlds {
		total += w.hit("rdap.good.test", "/domain/nic."+tld)
	}
	// At most the checks in flight at the crash (concurrency 2) ran twice.
	if total > int64(len(tlds)+cfg.Concurrency) {
		t.Errorf("%d domain queries for %d TLDs", total, len(tlds))
	}
}

// TestService_ResumeDoesNotWaitForHeldItems: a worker that died holding a
// work item (fetched, never acknowledged) leaves it to the consumer's ack
// wait (minutes). The resumed run queues its unfinished TLDs again and
// finishes without waiting for it.
func TestService_ResumeDoesNotWaitForHeldItems(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	store := folderStore(t)
	w := newWorld(t)
	w.rdapHosts = map[string]string{"rdap.good.test": "good"}
	cfg := w.config()
	cfg.Stealth.Enabled = false
	tlds := []string{"ha", "hb", "hc", "hd"}
	boot := map[string][]string{}
	for _, tld := range tlds {
		boot[tld] = []string{"http://rdap.good.test/"}
	}
	writeInputs(t, &cfg, tlds, boot)

	// Instance A queues the run and dies; no worker of its ran.
	a := newTestService(t, n, store, cfg)
	ctxA, crashA := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- a.coordinate(ctxA, true) }()
	waitFor(t, 20*time.Second, "the run to be queued", func() bool {
		var run Run
		return a.getJSON(t.Context(), KeyRun, &run) == nil && run.Queued
	})
	// A's worker had taken one item when it died.
	cons, err := n.JS.Consumer(t.Context(), Stream, Consumer)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for range batch.Messages() {
		held++ // never acknowledged
	}
	if held != 1 {
		t.Fatalf("held %d items, want 1 (%v)", held, batch.Error())
	}
	crashA()
	if err := <-errc; err == nil {
		t.Fatal("interrupted coordinator returned nil")
	}

	// Well inside the consumer's two-minute ack wait.
	b := newTestService(t, n, store, cfg)
	startWorker(t, b)
	waitFor(t, 30*time.Second, "the resumed run to complete", func() bool {
		p, _ := b.Progress(t.Context())
		if p.Status == StatusFailed {
			t.Fatalf("the resumed run failed: %s", p.CurrentStep)
		}
		return p.Status == StatusCompleted
	})
	for _, tld := range tlds {
		if hits := w.hit("rdap.good.test", "/domain/nic."+tld); hits != 1 {
			t.Errorf("%s: %d domain queries, want 1", tld, hits)
		}
	}
}

func TestService_RequestAndUnreachableInputs(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	store := folderStore(t)
	w := newWorld(t)
	cfg := w.config()
	cfg.TLDList = "http://data.iana.test/TLD/tlds-alpha-by-domain.txt" // the resolver sends it to a refused port
	cfg.Resolve["data.iana.test:80"] = w.closed
	s := newTestService(t, n, store, cfg)
	err := s.RunNow(t.Context())
	if err == nil || !strings.Contains(err.Error(), "TLD list") {
		t.Fatalf("unreachable inputs: %v", err)
	}
	p, _ := s.Progress(t.Context())
	// The reason names the input and what went wrong, not the address
	// dialled (the log has that).
	if p.Status != StatusFailed || p.CurrentStep != "failed while loading inputs: TLD list: connection refused" {
		t.Errorf("progress: %+v", p)
	}
	if host, _, _ := net.SplitHostPort(w.closed); strings.Contains(p.CurrentStep, host) {
		t.Errorf("status shows an internal address: %q", p.CurrentStep)
	}
	// No busy loop: the worker does not retry a failed run by itself.
	stop := startWorker(t, s)
	time.Sleep(5 * cfg.Poll)
	if p2, _ := s.Progress(t.Context()); p2.RunID != p.RunID || p2.LastUpdate != p.LastUpdate {
		t.Errorf("a failed run was retried without a request: %+v", p2)
	}
	stop()
	// A request (what `netintel probe` writes) starts a run on a worker.
	writeInputs(t, &cfg, []string{"good"}, map[string][]string{"good": {"http://rdap.good.test/"}})
	w.rdapHosts["rdap.good.test"] = "good"
	s2 := newTestService(t, n, store, cfg)
	startWorker(t, s2)
	if _, err := s2.Request(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the requested run", func() bool {
		p, _ := s2.Progress(t.Context())
		return p.Status == StatusCompleted
	})
	if pending, _ := s2.Requested(t.Context()); pending {
		t.Error("request still pending after the run")
	}
	if _, err := s2.kv.Get(t.Context(), KeyRequest); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("request key: %v", err)
	}
}

func TestService_Metrics(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	w := newWorld(t)
	w.rdapHosts["rdap.5xx.test"] = "5xx"
	w.rdapHosts["rdap.good.test"] = "good"
	cfg := w.config()
	cfg.Stealth.Enabled = false
	s := newTestService(t, n, folderStore(t), cfg)
	reg := prometheus.NewRegistry()
	if err := s.RegisterMetrics(reg); err != nil {
		t.Fatal(err)
	}
	s.checker.Check(t.Context(), Work{TLD: "good", RDAPURLs: []string{"http://rdap.5xx.test/", "http://rdap.good.test/"}})
	got := map[string]float64{
		"rdap/transient": promtest.ToFloat64(s.checker.m.requests.WithLabelValues("rdap", "transient")),
		"rdap/ok":        promtest.ToFloat64(s.checker.m.requests.WithLabelValues("rdap", "ok")),
		"whois/ok":       promtest.ToFloat64(s.checker.m.requests.WithLabelValues("whois", "ok")),
		"checks":         promtest.ToFloat64(s.checker.m.checks),
	}
	// 5xx: domain and help, each tried twice; good: one domain query; whois: IANA + the server.
	want := map[string]float64{"rdap/transient": 4, "rdap/ok": 1, "whois/ok": 2, "checks": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

func TestBuildResults_StealthMetadata(t *testing.T) {
	results := map[string]Result{
		"a": {TLD: "a", StealthRDAP: true, StealthURLs: []string{"https://rdap.nic.a/"}},
		"b": {TLD: "b", StealthURLs: []string{}},
		"c": {TLD: "c", StealthURLs: []string{}},
	}
	tests := []struct {
		name          string
		run           Run
		probed, found int
		maxConfigured string
	}{
		{"unlimited", Run{TLDs: []string{"a", "b", "c"}, Stealth: true, StartedAt: 5}, 3, 1, "null"},
		{"max 2", Run{TLDs: []string{"a", "b", "c"}, Stealth: true, StealthMax: 2, StartedAt: 5}, 2, 1, "2"},
		{"discovery off", Run{TLDs: []string{"a", "b", "c"}, StartedAt: 5}, 0, 1, "null"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := BuildResults(tc.run, results, time.Unix(10, 0))
			md := res.StealthMetadata
			got := "null"
			if md.MaxTLDsConfigured != nil {
				got = strconv.Itoa(*md.MaxTLDsConfigured)
			}
			if md.TotalTLDsProbed != tc.probed || md.StealthTLDsFound != tc.found || got != tc.maxConfigured || md.DiscoveryTimestamp != 5 || res.LastUpdate != 10 || res.TotalTLDs != 3 {
				t.Errorf("got %+v max %s", res, got)
			}
		})
	}
}

// TestService_OfflineFirstRunOneWarning: on a machine without internet
// (IANA's host names do not resolve) a run ends in one WARN line that says
// so, with no ERROR and none of the resolver's words.
func TestService_OfflineFirstRunOneWarning(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	cfg := config.Default().Probe
	var logs testutil.LockedBuffer
	s, err := New(t.Context(), cfg, n.JS, folderStore(t), slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	// What the resolver of an offline machine answers, without asking one.
	s.inputs = &http.Client{Transport: &http.Transport{DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
		host, _, _ := net.SplitHostPort(addr)
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: host, Server: "10.255.255.53:53", IsNotFound: true}}
	}}}
	err = s.FirstRun(t.Context())
	if !Offline(err) {
		t.Fatalf("FirstRun = %v, want an offline error", err)
	}
	var warns, errs []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		switch {
		case strings.Contains(line, `"level":"WARN"`):
			warns = append(warns, line)
		case strings.Contains(line, `"level":"ERROR"`):
			errs = append(errs, line)
		}
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "the internet is unreachable") || len(errs) != 0 {
		t.Fatalf("want one WARN saying the internet is unreachable and no ERROR; got warnings %q errors %q", warns, errs)
	}
	if strings.Contains(warns[0], "10.255.255.53") || strings.Contains(warns[0], "dial tcp") {
		t.Errorf("the warning carries the raw resolver error: %s", warns[0])
	}
	// A refused connection is not "offline": it stays an error to look at.
	if Offline(&inputError{"TLD list", syscall.ECONNREFUSED}) || Offline(errors.New("no such host")) {
		t.Error("Offline() true for a refused connection or a plain error")
	}
}
