package ipapi

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish"
	"github.com/netintel/netintel/publish/gen"
)

// publishSnapshot publishes a generated state of n hosts for date with the
// real publisher.
func publishSnapshot(t testing.TB, st objstore.Store, js jetstream.JetStream, n int, seed uint64, date string) *publish.Manifest {
	t.Helper()
	cfg := config.Default().Publish
	cfg.WorkDir = t.TempDir()
	cfg.Formats = []string{"ndjson", "mmdb"}
	res, err := publish.New(cfg, st, js, testutil.Logger(t)).Run(context.Background(), gen.New(n, seed), date)
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	return res.Manifest
}

func TestLoad_PublishedSnapshot(t *testing.T) {
	t.Parallel()
	st, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Load(t.Context(), st); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("empty store: %v, want ErrNoSnapshot", err)
	}
	const n = 3000
	m := publishSnapshot(t, st, nil, n, 7, "2026-11-22")
	snap, err := Load(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Manifest.SnapshotDate != "2026-11-22" || int64(snap.Complete().Rows.Len()) != m.Hosts+m.Ranges {
		t.Fatalf("date %s rows %d, want 2026-11-22 and %d", snap.Manifest.SnapshotDate, snap.Complete().Rows.Len(), m.Hosts+m.Ranges)
	}
	g := gen.New(n, 7)
	for i := 0; i < n; i += 37 {
		want := g.Host(i)
		got, ok, err := snap.Complete().Index.Lookup(gen.HostAddr(i), true)
		if err != nil || !ok {
			t.Fatalf("host %d (%s): found %v, %v", i, want.IP, ok, err)
		}
		if got.IP != want.IP || len(got.Assets) != len(want.Assets) {
			t.Fatalf("host %d: ip %s assets %d, want %s and %d", i, got.IP, len(got.Assets), want.IP, len(want.Assets))
		}
		for k := range want.Assets {
			if got.Assets[k].Port != want.Assets[k].Port || len(got.Assets[k].Cves) != len(want.Assets[k].Cves) ||
				len(got.Assets[k].Attributions) != len(want.Assets[k].Attributions) {
				t.Fatalf("host %d asset %d differs:\n got %+v\nwant %+v", i, k, got.Assets[k], want.Assets[k])
			}
		}
		light, _, err := snap.Complete().Index.Lookup(gen.HostAddr(i), false)
		if err != nil || len(light.Assets) != len(want.Assets) {
			t.Fatalf("host %d without cves: %v", i, err)
		}
		for k := range light.Assets {
			wa := want.Assets[k]
			wa.Cves = nil
			if !reflect.DeepEqual(light.Assets[k], wa) {
				t.Fatalf("host %d asset %d without cves:\n got %+v\nwant %+v", i, k, light.Assets[k], wa)
			}
		}
		for _, c := range want.Classifications {
			if !slices.Contains(got.Classifications, c) {
				t.Fatalf("host %d: classifications %v lack %s", i, got.Classifications, c)
			}
		}
	}
	var buf bytes.Buffer
	rows, err := snap.Complete().Rows.WriteCSV(t.Context(), &buf, Filter{}, MaxRowLimit)
	if err != nil || int64(rows) != m.Hosts+m.Ranges {
		t.Fatalf("export: %d rows (%v), want %d", rows, err, m.Hosts+m.Ranges)
	}
}

func TestLoad_RefusesBadChecksum(t *testing.T) {
	t.Parallel()
	for _, format := range []string{publish.FormatMMDB, publish.FormatNDJSON} {
		t.Run(format, func(t *testing.T) {
			st, err := objstore.NewFolder(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			m := publishSnapshot(t, st, nil, 200, 1, "2026-11-22")
			// The first build loaded of the format (builds with the
			// same bytes are loaded once).
			f, _ := m.FileFor(format, ipmodel.AudienceFree)
			if format == publish.FormatNDJSON {
				f, _ = m.FileFor(format, ipmodel.AudiencePro)
			}
			rc, _, err := st.Get(t.Context(), f.Key, nil)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			_, _ = b.ReadFrom(rc)
			rc.Close()
			data := b.Bytes()
			data[len(data)-1] ^= 0xff // same size, other bytes
			if _, err := st.Put(t.Context(), f.Key, bytes.NewReader(data), int64(len(data)), f.ContentType); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(t.Context(), st); !errors.Is(err, publish.ErrChecksum) {
				t.Fatalf("Load: %v, want ErrChecksum", err)
			}
		})
	}
}

// TestWatch_HotSwap publishes a snapshot, then a second one while clients
// hammer the API, and checks that the service answered 503 before the
// first, picked up each from the NATS event alone (the poll is an hour),
// and that no request failed or errored across the swap.
func TestWatch_HotSwap(t *testing.T) {
	t.Parallel()
	nt := testutil.StartNATS(t)
	nt.Ensure(t)
	st, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc := New(Options{InternalKey: testKey, Store: st, Log: testutil.Logger(t)})
	mux := http.NewServeMux()
	svc.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(t.Context())
	watchDone := make(chan error, 1)
	go func() { watchDone <- svc.Watch(ctx, nt.NC, time.Hour) }()
	t.Cleanup(func() { cancel(); <-watchDone })

	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// A host that exists only in the second, larger snapshot.
	late := gen.HostAddr(1500).String()
	lookup := func(ip string) int {
		return call(t, srv.URL, "GET", "/api/v1/shadow_vpn/lookup/"+ip+"?include=cves", "", key("enterprise")...).status
	}
	// The watcher subscribes before its first refresh; give it that moment.
	waitFor("first refresh", func() bool { return nt.NC.NumSubscriptions() > 0 })
	if s := lookup(late); s != 503 {
		t.Fatalf("before any snapshot: %d, want 503", s)
	}
	publishSnapshot(t, st, nt.JS, 1000, 1, "2026-11-21")
	waitFor("first snapshot", func() bool { return svc.Current() != nil })
	if s := lookup(late); s != 404 {
		t.Fatalf("host %s in the first snapshot: %d, want 404", late, s)
	}

	var ok, bad atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i += 8 {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("GET", srv.URL+"/api/v1/shadow_vpn/lookup/"+gen.HostAddr(i%1000).String(), nil)
				req.Header.Set("X-Internal-Key", testKey)
				req.Header.Set("X-Tier", "pro")
				res, err := client.Do(req)
				if err != nil || (res.StatusCode != 200 && res.StatusCode != 404) {
					bad.Add(1)
				} else {
					ok.Add(1)
				}
				if res != nil {
					res.Body.Close()
				}
			}
		}()
	}
	waitFor("load", func() bool { return ok.Load() > 200 })
	publishSnapshot(t, st, nt.JS, 2000, 2, "2026-11-22")
	waitFor("second snapshot", func() bool { return svc.Current().Manifest.SnapshotDate == "2026-11-22" })
	before := ok.Load()
	waitFor("load after swap", func() bool { return ok.Load() > before+200 })
	close(stop)
	wg.Wait()
	if bad.Load() != 0 {
		t.Errorf("%d of %d requests failed across the swap", bad.Load(), bad.Load()+ok.Load())
	}
	if s := lookup(late); s != 200 {
		t.Errorf("host %s after the swap: %d, want 200", late, s)
	}
}
