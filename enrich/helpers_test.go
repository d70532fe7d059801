package enrich

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/testutil"
)

// sampleCatalog is the catalog in ../samples/cve.
func sampleCatalogConfig() config.Catalog {
	return config.Catalog{NVD: []string{"../samples/cve/nvd"}, KEV: "../samples/cve/kev.json",
		EPSS: "../samples/cve/epss.csv", EOL: "../samples/cve/eol.yaml", EndOfLife: []string{"../samples/cve/endoflife"},
		EUVD: []string{"../samples/cve/euvd.json"}, JVN: []string{"../samples/cve/jvn.rdf"}, FetchTimeout: time.Minute}
}

func sampleCatalog(t testing.TB) *Catalog {
	t.Helper()
	c, err := LoadCatalog(context.Background(), sampleCatalogConfig())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sampleObs returns the bundled sample observations (format v2) keyed by
// address or network.
func sampleObs(t testing.TB) map[string][]ingest.Observation {
	t.Helper()
	return readObs(t, "../samples/observations.ndjson")
}

// readObs reads an observations file keyed by address or network.
func readObs(t testing.TB, path string) map[string][]ingest.Observation {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]ingest.Observation{}
	err = ingest.NDJSON(f, ingest.Options{}, func(_ int, o ingest.Observation) error {
		out[o.Key()] = append(out[o.Key()], o)
		return nil
	}, func(le ingest.LineError) { t.Fatalf("sample: %v", le) })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// testEnv is a real embedded NATS with the declared streams, a consumer
// with a short ack wait so that killed workers' messages come back fast.
type testEnv struct {
	nats *testutil.NATS
	cfg  *config.Config
}

func newEnv(t testing.TB, ackWait time.Duration, maxFailures int) *testEnv {
	t.Helper()
	n := testutil.StartNATS(t)
	cfg := n.Ensure(t)
	for i := range cfg.Consumers {
		if cfg.Consumers[i].Name == ConsumerName {
			cfg.Consumers[i].AckWait = ackWait
		}
	}
	ctx := context.Background()
	if err := ensureAgain(ctx, n, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Enrich.Catalog = sampleCatalogConfig()
	cfg.Enrich.MaxFailures = maxFailures
	return &testEnv{nats: n, cfg: cfg}
}

// startWorker runs a worker until the returned stop is called.
func (e *testEnv) startWorker(t testing.TB, cfg config.Enrich) (stop func()) {
	t.Helper()
	return e.startWorkerWith(t, cfg, nil)
}

// startWorkerWith starts a worker after calling set, when not nil, on it.
func (e *testEnv) startWorkerWith(t testing.TB, cfg config.Enrich, set func(*Worker)) (stop func()) {
	t.Helper()
	w, err := NewWorker(e.nats.JS, cfg, nil, sampleCatalog(t), testutil.Logger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if set != nil {
		set(w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var stopped bool
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("worker: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("worker did not stop")
		}
	}
	t.Cleanup(stop)
	return stop
}

func (e *testEnv) waitIdle(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := WaitIdle(ctx, e.nats.JS); err != nil {
		t.Fatal(err)
	}
}

// dump reads every host and range record, normalised for comparison
// (last_computed_at is the time of computation).
func dump(t testing.TB, st ipmodel.State) map[string]string {
	t.Helper()
	out := map[string]string{}
	add := func(r ipmodel.Record) error {
		for i := range r.Assets {
			if s := r.Assets[i].CveSummary; s != nil {
				c := *s
				c.LastComputedAt = nil
				r.Assets[i].CveSummary = &c
			}
		}
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		k := r.IP
		if r.Network != "" {
			k = r.Network
		}
		if _, dup := out[k]; dup {
			t.Errorf("record %s streamed twice", k)
		}
		out[k] = string(b)
		return nil
	}
	if err := st.Hosts(context.Background(), add); err != nil {
		t.Fatal(err)
	}
	if err := st.Ranges(context.Background(), add); err != nil {
		t.Fatal(err)
	}
	return out
}

func ensureAgain(ctx context.Context, n *testutil.NATS, cfg *config.Config) error {
	return busEnsure(ctx, n, cfg)
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

func contextWithCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

// sameState fails t unless got holds exactly want's records (as dump
// gives them), naming the first few that differ.
func sameState(t testing.TB, got, want map[string]string) {
	t.Helper()
	if maps.Equal(got, want) {
		return
	}
	diff := 0
	for k, v := range want {
		if got[k] != v {
			if diff < 3 {
				t.Errorf("record %s differs:\n got %s\nwant %s", k, got[k], v)
			}
			diff++
		}
	}
	t.Fatalf("%d of %d records differ (got %d records)", diff, len(want), len(got))
}

// noAckSwitch returns a function that makes the stream name take writes
// without acknowledging them (on) or acknowledge them again (off): a state
// bucket that is unavailable for its writers.
func noAckSwitch(t testing.TB, js jetstream.JetStream, name string) func(on bool) {
	t.Helper()
	s, err := js.Stream(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return func(on bool) {
		t.Helper()
		c := s.CachedInfo().Config
		c.NoAck = on
		if _, err := js.UpdateStream(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
}
