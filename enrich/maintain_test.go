package enrich

import (
	"testing"
	"time"

	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/testutil"
)

func publishObs(t *testing.T, e *testEnv, obs ...string) {
	t.Helper()
	in := ingest.New(e.nats.JS, testutil.Logger(t), nil, 64, time.Minute)
	var lines string
	for _, o := range obs {
		lines += o + "\n"
	}
	st, err := in.Ingest(t.Context(), "observations", stringsReader(lines), ingest.Options{})
	if err != nil || len(st.Malformed) > 0 {
		t.Fatalf("ingest: %v %v", err, st.Malformed)
	}
}

func TestStore_Sweep(t *testing.T) {
	e := newEnv(t, 5*time.Second, 3)
	e.startWorker(t, e.cfg.Enrich)
	publishObs(t, e,
		`{"type":"service","ip":"192.0.2.10","source":"scan-a","observed_at":"2026-09-01T00:00:00Z","service":{"port":22,"transport":"tcp","banner":"SSH-2.0-OpenSSH_9.6"}}`,
		`{"type":"service","ip":"192.0.2.10","source":"scan-a","observed_at":"2026-11-20T00:00:00Z","service":{"port":443,"transport":"tcp","http":{"cookies":["SVPNCOOKIE"]}}}`,
		`{"type":"signal","ip":"192.0.2.11","source":"tor-exits","observed_at":"2026-09-01T00:00:00Z","signal":{"kind":"tor_exit"}}`,
		`{"type":"range","network":"192.0.2.128/25","source":"x","observed_at":"2026-09-01T00:00:00Z","range":{"kind":"hosting"}}`,
	)
	e.waitIdle(t)
	st := NewState(e.nats.JS, "ipstate")
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	up, rm, err := st.Sweep(t.Context(), now, 30*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if up != 1 || rm != 2 {
		t.Errorf("updated %d removed %d, want 1 and 2", up, rm)
	}
	r, ok, err := st.Get(t.Context(), "192.0.2.10")
	if err != nil || !ok || len(r.Assets) != 1 || r.Assets[0].Port != 443 || r.LastSeen != "2026-11-20T00:00:00Z" {
		t.Errorf("192.0.2.10 after sweep = %+v %v %v", r, ok, err)
	}
	for _, k := range []string{"192.0.2.11", "192.0.2.128/25"} {
		if _, ok, err := st.Get(t.Context(), k); ok || err != nil {
			t.Errorf("%s survived the sweep (%v)", k, err)
		}
	}
	got := dump(t, st)
	if len(got) != 1 {
		t.Errorf("state after sweep holds %d records: %v", len(got), got)
	}
	// A new observation of a purged key starts a fresh record.
	publishObs(t, e, `{"type":"signal","ip":"192.0.2.11","source":"tor-exits","observed_at":"2026-11-21T00:00:00Z","signal":{"kind":"tor_exit"}}`)
	e.waitIdle(t)
	if r, ok, _ := st.Get(t.Context(), "192.0.2.11"); !ok || r.FirstSeen != "2026-11-21T00:00:00Z" {
		t.Errorf("re-observed 192.0.2.11 = %+v %v", r, ok)
	}
}

// A catalog refresh re-scores every asset without writing the state: the
// findings are computed when records are read, so the refreshing process
// reads the new scores at once, and another process that follows refreshes
// (FollowCatalog) reads them once it has reloaded.
func TestWorker_RefreshCatalogRescores(t *testing.T) {
	e := newEnv(t, 5*time.Second, 3)
	newWorker := func() *Worker {
		w, err := NewWorker(e.nats.JS, e.cfg.Enrich, nil, NewCatalog(), testutil.Logger(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	w, other := newWorker(), newWorker()
	if err := other.FollowCatalog(); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	done := make(chan error, 1)
	wctx, cancel := contextWithCancel(ctx)
	go func() { done <- w.Run(wctx) }()
	t.Cleanup(func() { cancel(); <-done })
	publishObs(t, e, `{"type":"service","ip":"192.0.2.20","source":"scan-a","observed_at":"2026-11-20T00:00:00Z","service":{"port":443,"transport":"tcp","probes":[`+
		`{"request":{"method":"POST","path":"/"},"response":{"status":200,"headers":[{"name":"X-Aggregate-Auth","value":"1"}],"body":{"data":"<config-auth client=\"vpn\" type=\"auth-request\"><version who=\"sg\">9.8(4)10</version></config-auth>"}}}]}}`)
	e.waitIdle(t)
	cves := func(st *Store) *ipmodel.Asset {
		t.Helper()
		r, ok, err := st.Get(ctx, "192.0.2.20")
		if err != nil || !ok || len(r.Assets) != 1 || r.Assets[0].CveSummary == nil {
			t.Fatalf("get: %+v %v %v", r, ok, err)
		}
		return &r.Assets[0]
	}
	if a := cves(w.State()); a.CveSummary.TotalCount != 0 {
		t.Fatalf("before refresh: %+v", a.CveSummary)
	}
	lastSeq := func() uint64 {
		info, err := e.nats.JS.Stream(ctx, "KV_ipstate")
		if err != nil {
			t.Fatal(err)
		}
		return info.CachedInfo().State.LastSeq
	}
	before := lastSeq()
	if err := w.RefreshCatalog(ctx); err != nil {
		t.Fatal(err)
	}
	a := cves(w.State())
	if a.CveSummary.TotalCount < 2 || a.CveSummary.KevCount != a.CveSummary.TotalCount || len(a.Cves) != a.CveSummary.TotalCount {
		t.Errorf("after refresh: %+v cves %d", a.CveSummary, len(a.Cves))
	}
	if after := lastSeq(); after != before {
		t.Errorf("the refresh wrote to the state: last sequence %d, was %d", after, before)
	}
	deadline := time.Now().Add(10 * time.Second)
	for cves(other.State()).CveSummary.TotalCount != a.CveSummary.TotalCount {
		if time.Now().After(deadline) {
			t.Fatalf("the other process still scores with the old catalog: %+v", cves(other.State()).CveSummary)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
