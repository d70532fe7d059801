package enrich

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/testutil"
)

// fakeClock is a clock tests move by hand; the worker's age-out and the
// ingester's fetch times read it.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// Days of hourly re-listings and age-outs over feeds whose files are
// months old: nothing the feeds still list ages out,
// and an entry a feed dropped ages out retention after its last listing,
// not before and not later than the next sweep.
func TestWorker_RelistingKeepsListedRows(t *testing.T) {
	e := newEnv(t, 5*time.Second, 3)
	cfg := e.cfg.Enrich
	cfg.RetentionDays = 2
	retention := 48 * time.Hour
	start := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: start}
	var w *Worker
	e.startWorkerWith(t, cfg, func(x *Worker) { w = x; x.now = clock.now })
	in := ingest.New(e.nats.JS, testutil.Logger(t), nil, 64, time.Minute)
	in.SetClock(clock.now)
	ctx := t.Context()

	// Two list feeds whose entries carry old times: a cidr-list read from
	// a file last modified 60 days ago (its observed_at), and Tor exits
	// tested in 2024.
	dir := t.TempDir()
	list := filepath.Join(dir, "vpn.txt")
	listed := []string{"192.0.2.1", "192.0.2.2", "192.0.2.3", "198.51.100.0/24"}
	dropped := "192.0.2.3"
	mtime := start.AddDate(0, 0, -60)
	writeList := func(entries []string) {
		t.Helper()
		if err := os.WriteFile(list, []byte(strings.Join(entries, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(list, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	writeList(listed)
	tor := filepath.Join(dir, "exits")
	fp := strings.Repeat("A", 40)
	if err := os.WriteFile(tor, []byte("ExitNode "+fp+"\nPublished 2024-03-12 10:00:00\nLastStatus 2024-03-12 11:00:00\nExitAddress 203.0.113.7 2024-03-12 11:05:00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	keys := append(append([]string{}, listed...), "203.0.113.7")

	st := NewState(e.nats.JS, cfg.Bucket)
	var lastListing time.Time
	for h := 0; h <= 5*24; h++ {
		clock.t = start.Add(time.Duration(h) * time.Hour)
		if h == 45 { // the feed stops listing one entry
			listed = []string{"192.0.2.1", "192.0.2.2", "198.51.100.0/24"}
			writeList(listed)
		}
		// The feeds are fetched every hour.
		if _, err := in.IngestFile(ctx, "cidr-list", list, ingest.Options{Kind: "vpn", Provider: "Example VPN"}); err != nil {
			t.Fatal(err)
		}
		if _, err := in.IngestFile(ctx, "tor-exits", tor, ingest.Options{}); err != nil {
			t.Fatal(err)
		}
		e.waitIdle(t)
		if h < 45 {
			lastListing = clock.t
		}
		if err := w.Age(ctx); err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			r, ok, err := st.Get(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if k == dropped {
				if alive := !clock.t.After(lastListing.Add(retention)); ok != alive {
					t.Fatalf("hour %d: %s present=%v, want %v (last listed %s)", h, k, ok, alive, lastListing.Format(time.RFC3339))
				}
				continue
			}
			if !ok {
				t.Fatalf("hour %d: %s, still listed, aged out", h, k)
			}
			wantLast := ipmodel.FormatTime(clock.t)
			if r.LastSeen != wantLast {
				t.Fatalf("hour %d: %s last_seen %s, want the last listing %s", h, k, r.LastSeen, wantLast)
			}
			if k == "203.0.113.7" && r.FirstSeen != "2024-03-12T11:05:00Z" {
				t.Errorf("hour %d: tor exit first_seen %s, want its own test time", h, r.FirstSeen)
			}
			if k == "192.0.2.1" && r.FirstSeen != ipmodel.FormatTime(mtime) {
				t.Errorf("hour %d: %s first_seen %s, want the file's time", h, k, r.FirstSeen)
			}
		}
	}
	// The claim of the list (its provider) was renewed with every listing.
	d, _, err := st.get(ctx, "h.192.0.2.1")
	if err != nil || d == nil || len(d.Claims) != 1 || d.Claims[0].OrgName != "Example VPN" || d.Claims[0].ObservedAt != ipmodel.FormatTime(start.Add(120*time.Hour)) {
		t.Errorf("claims of 192.0.2.1 = %+v (%v)", d, err)
	}
}

// Ingesting the same file in two fetches refreshes last_seen; the same
// fetch published twice is stored once.
func TestIngest_TwoFetchesRefreshOneFetchOnce(t *testing.T) {
	e := newEnv(t, 5*time.Second, 3)
	e.startWorker(t, e.cfg.Enrich)
	in := ingest.New(e.nats.JS, testutil.Logger(t), nil, 64, time.Minute)
	ctx := t.Context()
	file := filepath.Join(t.TempDir(), "list.txt")
	if err := os.WriteFile(file, []byte("192.0.2.50\n192.0.2.51\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(file, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	st := NewState(e.nats.JS, e.cfg.Enrich.Bucket)
	fetch := func(at time.Time) ingest.Stats {
		t.Helper()
		s, err := in.IngestFile(ctx, "cidr-list", file, ingest.Options{Kind: "proxy", ListedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		e.waitIdle(t)
		return s
	}
	lastSeen := func() string {
		t.Helper()
		r, ok, err := st.Get(ctx, "192.0.2.50")
		if err != nil || !ok {
			t.Fatalf("get: %v %v", ok, err)
		}
		return r.LastSeen
	}
	t1 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	if s := fetch(t1); s.Published != 2 || s.Duplicates != 0 {
		t.Fatalf("first fetch: %v", s)
	}
	if got := lastSeen(); got != "2026-11-26T08:00:00Z" {
		t.Errorf("after the first fetch last_seen = %s", got)
	}
	// The same fetch again (a retry of its publishes): stored once.
	if s := fetch(t1); s.Published != 0 || s.Duplicates != 2 {
		t.Fatalf("same fetch again: %v", s)
	}
	// A later fetch of the unchanged file, inside the duplicate window.
	if s := fetch(t1.Add(time.Hour)); s.Published != 2 || s.Duplicates != 0 {
		t.Fatalf("second fetch: %v", s)
	}
	if got := lastSeen(); got != "2026-11-26T09:00:00Z" {
		t.Errorf("after the second fetch last_seen = %s", got)
	}
	r, _, _ := st.Get(ctx, "192.0.2.50")
	if r.FirstSeen != "2026-09-01T00:00:00Z" {
		t.Errorf("first_seen = %s, want the file's time", r.FirstSeen)
	}
}

// A re-listing of older content (older observed_at, newer listed_at)
// refreshes last_seen but does not take the register from newer content;
// the result is the same in either order of application.
func TestDoc_RelistingRefreshesWithoutFlippingWinner(t *testing.T) {
	newer := ingest.Observation{Type: ingest.TypeSignal, IP: "192.0.2.9", Source: "feed", ObservedAt: "2026-11-20T00:00:00Z",
		ListedAt: "2026-11-20T01:00:00Z", Signal: &ingest.Signal{Kind: "vpn_exit", Provider: "New VPN", Confidence: 0.9}}
	older := ingest.Observation{Type: ingest.TypeSignal, IP: "192.0.2.9", Source: "feed", ObservedAt: "2026-11-10T00:00:00Z",
		ListedAt: "2026-11-25T00:00:00Z", Signal: &ingest.Signal{Kind: "vpn_exit", Provider: "Old VPN", Confidence: 0.5}}
	for _, o := range []*ingest.Observation{&newer, &older} {
		if err := o.Normalize(); err != nil {
			t.Fatal(err)
		}
	}
	var docs []string
	for _, order := range [][]*ingest.Observation{{&newer, &older}, {&older, &newer}} {
		d := newDoc(order[0])
		for i, o := range order {
			d.apply(o, strings.Repeat(string(rune('a'+i)), 32), nil)
		}
		r := d.record(newScorer(NewCatalog(), time.Now()))
		if r.Provider == nil || *r.Provider != "New VPN" || r.LastSeen != "2026-11-25T00:00:00Z" || r.FirstSeen != "2026-11-10T00:00:00Z" || r.Confidence != 0.9 {
			t.Errorf("record = %+v provider %v", r, r.Provider)
		}
		s := d.Signals[0]
		if s.LastSeen != "2026-11-25T00:00:00Z" || s.FirstSeen != "2026-11-10T00:00:00Z" {
			t.Errorf("signal = %+v", s)
		}
		docs = append(docs, s.Provider+s.LastSeen)
	}
	if docs[0] != docs[1] {
		t.Errorf("order matters: %q vs %q", docs[0], docs[1])
	}
	// Of two listings of content of the same time, the later one wins.
	a, b := newer, newer
	b.ListedAt, b.Signal = "2026-11-21T00:00:00Z", &ingest.Signal{Kind: "vpn_exit", Provider: "Renamed VPN", Confidence: 0.9}
	for _, ids := range [][2]string{{"f", "0"}, {"0", "f"}} {
		d := newDoc(&a)
		d.apply(&a, strings.Repeat(ids[0], 32), nil)
		d.apply(&b, strings.Repeat(ids[1], 32), nil)
		if d.Signals[0].Provider != "Renamed VPN" {
			t.Errorf("ids %v: provider %q, want the later listing's", ids, d.Signals[0].Provider)
		}
	}
}

// The bundled samples (every source pipeline.yaml declares with a file),
// as `make run` ingests them on a fresh data dir,
// all survive the first hourly age-out, though most of their files carry
// times months or years old (the defect of issue 29: 492 of 648 rows
// vanished).
func TestSamples_SurviveFirstAgeOut(t *testing.T) {
	e := newEnv(t, 5*time.Second, 3)
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: start}
	var w *Worker
	e.startWorkerWith(t, e.cfg.Enrich, func(x *Worker) { w = x; x.now = clock.now })
	in := ingest.New(e.nats.JS, testutil.Logger(t), nil, 256, time.Minute)
	in.SetClock(clock.now)
	// A checkout made 60 days ago: every file's modification time (the
	// observed_at of feeds without their own) is that old.
	// The sources pipeline.yaml declares with a bundled file, as the
	// bootstrap ingests them.
	cfg, err := config.Load("../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := 0
	for _, src := range cfg.Ingest.Sources {
		if src.Path == "" {
			continue
		}
		b, err := os.ReadFile(src.Path) // config.Load resolved it against ../pipeline.yaml
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Base(src.Path))
		old := start.AddDate(0, 0, -60)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		// As the bootstrap does: every bundled sample listed at the start.
		opt := ingest.SourceOptions(src, cfg.Ingest)
		opt.ListedAt = start
		if _, err := in.IngestFile(t.Context(), src.Format, p, opt); err != nil {
			t.Fatalf("sample %s: %v", src.Name, err)
		}
		n++
	}
	if n < 10 {
		t.Fatalf("only %d bundled sources in pipeline.yaml", n)
	}
	e.waitIdle(t)
	st := NewState(e.nats.JS, e.cfg.Enrich.Bucket)
	before := dump(t, st)
	if len(before) < 600 {
		t.Fatalf("only %d records from the samples", len(before))
	}
	clock.t = start.Add(time.Hour)
	if err := w.Age(t.Context()); err != nil {
		t.Fatal(err)
	}
	if after := dump(t, st); len(after) != len(before) {
		t.Errorf("the first age-out removed %d of %d sample records", len(before)-len(after), len(before))
	}
	// Not listed again, they age out retention after the listing.
	clock.t = start.AddDate(0, 0, e.cfg.Enrich.RetentionDays).Add(time.Hour)
	if err := w.Age(t.Context()); err != nil {
		t.Fatal(err)
	}
	if after := dump(t, st); len(after) != 0 {
		t.Errorf("%d records outlived their last listing by more than retention_days", len(after))
	}
}
