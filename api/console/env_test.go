package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/api/apigw"
	"github.com/netintel/netintel/api/console"
	"github.com/netintel/netintel/api/ipapi"
	"github.com/netintel/netintel/enrich"
	gw "github.com/netintel/netintel/gateway"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/schedule"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/probe"
	"github.com/netintel/netintel/publish"
	"github.com/netintel/netintel/publish/gen"
)

const internalKey = "console-test-internal-key"

// env is a console over real parts: an in-process nats-server with the
// default streams and buckets, a folder object store holding two
// published snapshots and two TLD runs, the IP API loaded from them, the
// TLD checker's state, and a scheduler that ran a job.
type env struct {
	nats    *testutil.NATS
	store   objstore.Store
	gen     *gen.State
	keys    *gw.Keys
	sampler *console.Sampler
	opt     console.Options
	srv     *httptest.Server
	// cveIP is a host with a CVE in the known-exploited list.
	cveIP string
	cve   string
}

func newEnv(t *testing.T, mutate func(*console.Options)) *env {
	t.Helper()
	e := &env{nats: testutil.StartNATS(t)}
	cfg := e.nats.Ensure(t)
	ctx := t.Context()
	var err error
	if e.store, err = objstore.NewFolder(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	// Two dates of snapshots from the generated state.
	e.gen = gen.New(300, 3)
	pc := config.Default().Publish
	pc.WorkDir = t.TempDir()
	pc.Formats = []string{"csv", "ndjson", "mmdb"}
	for _, d := range []string{"2026-11-21", "2026-11-22"} {
		if _, err := publish.New(pc, e.store, nil, testutil.Logger(t)).Run(ctx, e.gen, d); err != nil {
			t.Fatal(err)
		}
	}
	for i := range e.gen.NHosts {
		for _, a := range e.gen.Host(i).Assets {
			for _, c := range a.Cves {
				if c.KevAddedAt != nil && e.cveIP == "" {
					e.cveIP, e.cve = gen.HostAddr(i).String(), c.CveID
				}
			}
		}
	}
	if e.cveIP == "" {
		t.Fatal("the generated state has no host with a KEV CVE")
	}
	ip := ipapi.New(ipapi.Options{InternalKey: internalKey, Store: e.store, Log: testutil.Logger(t)})
	snap, err := ipapi.Load(ctx, e.store)
	if err != nil {
		t.Fatal(err)
	}
	ip.Swap(snap)

	// The TLD checker: two published runs and a run going now.
	svc, err := probe.New(ctx, cfg.Probe, e.nats.JS, e.store, testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	writeTLD(t, e.store, cfg.Probe.Prefix)
	kv, err := e.nats.JS.KeyValue(ctx, probe.ProgressKV)
	if err != nil {
		t.Fatal(err)
	}
	putJSON(t, kv, probe.KeyProgress, probe.Progress{Status: probe.StatusRunning, CurrentStep: "checking RDAP, WHOIS and stealth RDAP", TotalTLDs: 1400, ProcessedTLDs: 350, LastUpdate: time.Now().Unix(), RunID: "20261122T000000Zbeef"})
	putJSON(t, kv, probe.KeyPublished, probe.Published{RunID: "20261120T000000Zcafe", LastUpdate: time.Date(2026, 11, 20, 1, 0, 0, 0, time.UTC).Unix(), ResultsAvailable: 4, StealthCount: 1})

	// A scheduled job that ran once.
	status, err := e.nats.JS.KeyValue(ctx, schedule.StatusBucket)
	if err != nil {
		t.Fatal(err)
	}
	job := schedule.Job{Name: "snapshot", Spec: "0 3 * * *", Run: func(context.Context) error { return nil }}
	sched, err := schedule.New(nil, testutil.Logger(t), []schedule.Job{job})
	if err != nil {
		t.Fatal(err)
	}
	sched.Status = status
	sched.Fire(ctx, job, time.Now().Truncate(time.Hour))

	keysKV, err := e.nats.JS.KeyValue(ctx, gw.KeysBucket)
	if err != nil {
		t.Fatal(err)
	}
	e.keys = gw.NewKeys(keysKV, gw.NewHasher("console-test-hash-key"), testutil.Logger(t))
	kctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = e.keys.Run(kctx, time.Minute) }()
	t.Cleanup(func() { cancel(); <-done })

	e.sampler = console.NewSampler(e.nats.JS, console.SamplerOptions{Stream: enrich.Stream, Consumers: enrich.ConsumerNames(), DeadStream: "DEADLETTER", Interval: time.Second, Size: 10})
	mux := http.NewServeMux()
	ip.Mount(mux)
	var streams []string
	for _, s := range cfg.Streams {
		streams = append(streams, s.Name)
	}
	e.opt = console.Options{
		Allow: []string{console.AllowLoopback}, Keys: e.keys, KeyTag: "operator",
		IPClient: &http.Client{Transport: apigw.HandlerTransport(mux)}, IPBase: "http://in-process", InternalKey: internalKey,
		Records: func(addr netip.Addr) (*ipmodel.Record, string, bool, error) {
			s := ip.Current()
			rec, ok, err := s.Complete().Index.Lookup(addr, false)
			return rec, s.Manifest.SnapshotDate, ok, err
		},
		Examples: func(context.Context) []string { return []string{e.cveIP} },
		Store:    e.store, TLD: svc, TLDPrefix: cfg.Probe.Prefix, History: console.StoreHistory{Store: e.store, Prefix: cfg.Probe.Prefix},
		JS: e.nats.JS, Streams: streams, JobStatus: status, Sampler: e.sampler,
		Jobs: func() []console.Job {
			return []console.Job{{Name: "snapshot", Spec: "0 3 * * *", Next: time.Now().Add(time.Hour)}, {Name: "tld_probe", Spec: "@every 48h"}}
		},
		Log: testutil.Logger(t),
	}
	if mutate != nil {
		mutate(&e.opt)
	}
	console.New(e.opt).Mount(mux)
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	return e
}

// writeTLD publishes two runs' summaries and the latest results as the
// checker does (probe/publish.go).
func writeTLD(t *testing.T, st objstore.Store, prefix string) {
	t.Helper()
	yes, no := true, false
	srv := func(s string) *string { return &s }
	res := probe.Results{LastUpdate: time.Date(2026, 11, 20, 1, 0, 0, 0, time.UTC).Unix(), TotalTLDs: 4, Results: []probe.Result{
		{TLD: "com", RDAPSupported: true, RDAPURLs: []string{"https://rdap.verisign.com/com/v1/"}, RDAPWorking: &yes, WorkingURL: srv("https://rdap.verisign.com/com/v1/"), WhoisAvailable: &yes, WhoisServer: srv("whois.verisign-grs.com"), StealthURLs: []string{}},
		{TLD: "de", RDAPSupported: false, RDAPURLs: []string{}, WhoisAvailable: &yes, WhoisServer: srv("whois.denic.de"), StealthRDAP: true, StealthURLs: []string{"https://rdap.denic.de/"}},
		{TLD: "xn--p1ai", RDAPSupported: true, RDAPURLs: []string{"https://rdap.tcinet.ru/"}, RDAPWorking: &no, WhoisAvailable: &no, WhoisServer: srv("whois.tcinet.ru"), StealthURLs: []string{}},
		{TLD: "zz", RDAPSupported: false, RDAPURLs: []string{}, StealthURLs: []string{}},
	}}
	put := func(key string, v any) {
		b, _ := json.Marshal(v)
		if _, err := st.Put(t.Context(), key, bytes.NewReader(b), int64(len(b)), "application/json"); err != nil {
			t.Fatal(err)
		}
	}
	put(prefix+probe.LatestJSON, res)
	// The run before the latest: .com's RDAP was not working yet.
	before := res
	before.LastUpdate = time.Date(2026, 11, 18, 1, 0, 0, 0, time.UTC).Unix()
	before.Results = slices.Clone(res.Results[:3]) // .zz came with the latest run
	before.Results[0].RDAPWorking, before.Results[0].WorkingURL = &no, nil
	for i, run := range []string{"20261118T000000Z0001", "20261120T000000Zcafe"} {
		put(prefix+"runs/"+run+"/results.json", []probe.Results{before, res}[i])
		sum := probe.Summary{RunID: run, FinishedAt: time.Date(2026, 11, 18+2*i, 1, 0, 0, 0, time.UTC).Unix(), TotalTLDs: 4 - (1 - i), RDAPWorking: 1, WhoisAvailable: 1 + i, StealthFound: i}
		put(prefix+"runs/"+run+"/summary.json", sum)
		if i == 1 {
			put(prefix+probe.LatestSummary, sum)
		}
	}
}

func putJSON(t *testing.T, kv jetstream.KeyValue, key string, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if _, err := kv.Put(t.Context(), key, b); err != nil {
		t.Fatal(err)
	}
}

// get fetches a console path with optional headers; it returns the status,
// the body and the response headers.
func (e *env) get(t *testing.T, path string, hdr ...string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b, res.Header
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// publishObs stores n observations on partition 00 without a worker to
// take them, and one dead letter.
func publishObs(t *testing.T, js jetstream.JetStream, n int) {
	t.Helper()
	for i := range n {
		if _, err := js.Publish(t.Context(), "obs.scan.console.00", []byte(`{}`)); err != nil {
			t.Fatal(i, err)
		}
	}
}

func publishDead(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	m := nats.NewMsg(enrich.DeadLetterSubject)
	m.Data = []byte(`{}`)
	m.Header.Set(enrich.ErrorHeader, "malformed observation: missing ip")
	m.Header.Set(enrich.SubjectHeader, "obs.scan.console.00")
	if _, err := js.PublishMsg(t.Context(), m); err != nil {
		t.Fatal(err)
	}
}
