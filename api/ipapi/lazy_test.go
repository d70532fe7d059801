package ipapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish"
	"github.com/netintel/netintel/publish/gen"
)

// gate holds export table builds (loader.beforeTable) until it is opened.
type gate struct {
	open    chan struct{}
	started chan struct{} // one send per build that reached the gate
}

func newGate() *gate { return &gate{open: make(chan struct{}), started: make(chan struct{}, 16)} }

func (g *gate) hold(ctx context.Context) error {
	g.started <- struct{}{}
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// lazyFixture is a service with a cache folder on a folder store, behind
// an HTTP server, its background builds stopped at the test's end.
func lazyFixture(t *testing.T) (*Service, objstore.Store, *httptest.Server) {
	t.Helper()
	svc, st, srv, _ := lazyFixtureActive(t)
	return svc, st, srv
}

// lazyFixtureActive is lazyFixture whose channel receives a value each
// time a connection starts serving a request.
func lazyFixtureActive(t *testing.T) (*Service, objstore.Store, *httptest.Server, <-chan struct{}) {
	t.Helper()
	st, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc := New(Options{InternalKey: testKey, Store: st, CacheDir: t.TempDir(), Log: testutil.Logger(t)})
	mux := http.NewServeMux()
	svc.Mount(mux)
	active := make(chan struct{}, 64)
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ConnState = func(_ net.Conn, cs http.ConnState) {
		if cs == http.StateActive {
			select {
			case active <- struct{}{}:
			default:
			}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(svc.stopBuilds) // before the folders go
	return svc, st, srv, active
}

// wantExport is the CSV export of m's enterprise table, loaded on its own.
func wantExport(t *testing.T, st objstore.Store, m *publish.Manifest) string {
	t.Helper()
	snap, err := LoadManifestDir(t.Context(), st, m, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := snap.Complete().Rows.WriteCSV(t.Context(), &b, Filter{}, MaxRowLimit); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestService_RefreshLookupsBeforeExportTable publishes a snapshot, then a
// second one whose export table build is held: the second answers lookups
// and batch at once; an export whose request ends (or whose ExportWait
// passes) during the wait gets a JSON 503 and no CSV; an export sent during
// the build waits and returns the second snapshot's rows under its date.
func TestService_RefreshLookupsBeforeExportTable(t *testing.T) {
	t.Parallel()
	svc, st, srv, active := lazyFixtureActive(t)
	publishSnapshot(t, st, nil, 300, 1, "2026-11-21")
	svc.refresh(t.Context())
	if err := svc.Current().Complete().Rows.Wait(t.Context()); err != nil || !svc.Current().Complete().Rows.Ready() {
		t.Fatalf("first snapshot's table: %v, ready %v", err, svc.Current().Complete().Rows.Ready())
	}
	// An address with assets only the second snapshot holds.
	i := 300
	for g := gen.New(400, 2); len(g.Host(i).Assets) == 0; i++ {
	}
	addr := gen.HostAddr(i).String()
	if r := call(t, srv.URL, "GET", "/api/v1/shadow_vpn/lookup/"+addr, "", key("enterprise")...); r.status != 404 {
		t.Fatalf("first snapshot: lookup %s: %d, want 404", addr, r.status)
	}

	m2 := publishSnapshot(t, st, nil, 400, 2, "2026-11-22")
	want := wantExport(t, st, m2)
	g := newGate()
	svc.beforeTable = g.hold
	svc.refresh(t.Context())
	<-g.started // the build runs (and is held)
	snap := svc.Current()
	if snap.Manifest.SnapshotDate != "2026-11-22" {
		t.Fatalf("serving %s while the export table builds, want 2026-11-22", snap.Manifest.SnapshotDate)
	}
	if r := call(t, srv.URL, "GET", "/api/v1/shadow_vpn/lookup/"+addr, "", key("enterprise")...); r.status != 200 || !strings.Contains(string(r.body), addr) {
		t.Fatalf("lookup during the build: %d %s", r.status, r.body)
	}
	if r := call(t, srv.URL, "POST", PathBatch, `{"ips":["`+addr+`"]}`, key("pro")...); r.status != 200 || !strings.Contains(string(r.body), `"found":true`) {
		t.Fatalf("batch during the build: %d %s", r.status, r.body)
	}
	if !errors.Is(snap.Complete().Rows.Wait(canceled(t)), context.Canceled) || snap.Complete().Rows.Ready() {
		t.Fatal("the table is built while its build is held")
	}

	// A request that ends during the wait: the error, no CSV.
	mux := http.NewServeMux()
	svc.Mount(mux)
	req := httptest.NewRequestWithContext(canceled(t), "GET", PathCSV+"?limit=10", nil)
	req.Header.Set("X-Internal-Key", testKey)
	req.Header.Set("X-Tier", "enterprise")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Code != 503 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") || rec.Header().Get("Retry-After") == "" ||
		!strings.Contains(rec.Body.String(), `"code":"unavailable"`) || !strings.Contains(rec.Body.String(), "2026-11-22 is still being prepared") ||
		strings.Contains(rec.Body.String(), "ip,network") || rec.Header().Get("X-Snapshot-Date") != "" || rec.Header().Get("Content-Disposition") != "" {
		t.Fatalf("export ended during the wait: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}

	// A wait longer than Options.ExportWait: the error too (the handler
	// runs on this goroutine, which alone changes the option).
	svc.opts.ExportWait = time.Nanosecond
	req = httptest.NewRequestWithContext(t.Context(), "GET", PathCSV+"?limit=10", nil)
	req.Header.Set("X-Internal-Key", testKey)
	req.Header.Set("X-Tier", "enterprise")
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	svc.opts.ExportWait = DefaultExportWait
	if rec.Code != 503 || rec.Header().Get("Retry-After") != "30" || !strings.Contains(rec.Body.String(), "2026-11-22 is still being prepared") || rec.Header().Get("X-Snapshot-Date") != "" {
		t.Fatalf("export past ExportWait: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}

	// An export during the build waits for it (its request is being
	// served when the build is let go).
	for len(active) > 0 {
		<-active
	}
	got := make(chan resp, 1)
	go func() {
		got <- getAsync(t.Context(), srv.URL+PathCSV+"?limit="+strconv.Itoa(MaxRowLimit), "enterprise")
	}()
	<-active
	close(g.open)
	r := <-got
	if r.status != 200 || r.header.Get("X-Snapshot-Date") != "2026-11-22" || !strings.Contains(r.header.Get("Content-Disposition"), "ipintel-2026-11-22.csv") {
		t.Fatalf("export after the wait: %d %v %.200s", r.status, r.header, r.body)
	}
	if string(r.body) != want {
		t.Fatalf("export after the wait: %d bytes, want the second snapshot's %d", len(r.body), len(want))
	}
}

// TestService_RefreshSupersededBuild swaps in a third snapshot while the
// second's export table is still held: the second's build stops, and an
// export that waited on it is served the third's rows under its date.
func TestService_RefreshSupersededBuild(t *testing.T) {
	t.Parallel()
	svc, st, _ := lazyFixture(t)
	publishSnapshot(t, st, nil, 300, 1, "2026-11-21")
	g := newGate()
	svc.beforeTable = g.hold
	svc.refresh(t.Context())
	<-g.started
	second := svc.Current()
	type result struct {
		snap *Snapshot
		rows *Table
		err  error
	}
	done := make(chan result, 1)
	go func() {
		snap, rows, err := svc.exportTable(t.Context(), second, TierEnterprise)
		done <- result{snap, rows, err}
	}()
	m3 := publishSnapshot(t, st, nil, 500, 3, "2026-11-22")
	svc.beforeTable = nil
	svc.refresh(t.Context())
	res := <-done
	if res.err != nil || res.snap.Manifest.SnapshotDate != "2026-11-22" || int64(res.rows.Len()) != m3.Hosts+m3.Ranges {
		t.Fatalf("export waiting on a superseded build: %v, want the third snapshot's rows", res.err)
	}
	if err := second.Complete().Rows.Wait(t.Context()); !errors.Is(err, errSuperseded) {
		t.Fatalf("the superseded build: %v, want errSuperseded", err)
	}
}

// TestService_RefreshExportTableFails publishes a snapshot whose NDJSON is
// corrupt: it is served for lookups (its MMDB is sound; no lookup goes back
// to the older date), its exports answer 503 naming it, and the next
// check loads it again, which succeeds once the file is right.
func TestService_RefreshExportTableFails(t *testing.T) {
	t.Parallel()
	svc, st, srv := lazyFixture(t)
	publishSnapshot(t, st, nil, 300, 1, "2026-11-21")
	svc.refresh(t.Context())
	m := publishSnapshot(t, st, nil, 400, 2, "2026-11-22")
	f, _ := m.FileFor(publish.FormatNDJSON, ipmodel.AudienceEnterprise)
	rc, _, err := st.Get(t.Context(), f.Key, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	_, _ = b.ReadFrom(rc)
	rc.Close()
	good := bytes.Clone(b.Bytes())
	bad := b.Bytes()
	bad[len(bad)/2] ^= 0xff
	put := func(data []byte) {
		if _, err := st.Put(t.Context(), f.Key, bytes.NewReader(data), int64(len(data)), f.ContentType); err != nil {
			t.Fatal(err)
		}
	}
	put(bad)
	svc.refresh(t.Context())
	snap := svc.Current()
	if snap.Manifest.SnapshotDate != "2026-11-22" {
		t.Fatalf("serving %s, want 2026-11-22", snap.Manifest.SnapshotDate)
	}
	if err := snap.Complete().Rows.Wait(t.Context()); !errors.Is(err, publish.ErrChecksum) {
		t.Fatalf("table build: %v, want ErrChecksum", err)
	}
	if r := call(t, srv.URL, "GET", "/api/v1/ip/"+gen.HostAddr(5).String(), "", key("enterprise")...); r.status != 200 {
		t.Fatalf("lookup with the export table failed: %d %s", r.status, r.body)
	}
	r := call(t, srv.URL, "GET", PathCSV, "", key("enterprise")...)
	if r.status != 503 || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), "2026-11-22 could not be prepared") || strings.Contains(string(r.body), "ip,network") {
		t.Fatalf("export with the table failed: %d %v %s", r.status, r.header, r.body)
	}
	put(good)
	svc.refresh(t.Context())
	if svc.Current() == snap {
		t.Fatal("the snapshot with a failed export table was not loaded again")
	}
	r = call(t, srv.URL, "GET", PathCSV+"?limit="+strconv.Itoa(MaxRowLimit), "", key("enterprise")...)
	if r.status != 200 || r.header.Get("X-Snapshot-Date") != "2026-11-22" || string(r.body) != wantExport(t, st, m) {
		t.Fatalf("export after the retry: %d %v", r.status, r.header)
	}
	// A snapshot whose tables are built is not loaded again.
	cur := svc.Current()
	svc.refresh(t.Context())
	if svc.Current() != cur {
		t.Fatal("a complete snapshot was loaded again")
	}
}

// getAsync is call for another goroutine than the test's: a failure is status 0
// with the error as body.
func getAsync(ctx context.Context, url, tier string) resp {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return resp{body: []byte(err.Error())}
	}
	req.Header.Set("X-Internal-Key", testKey)
	req.Header.Set("X-Tier", tier)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return resp{body: []byte(err.Error())}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return resp{body: []byte(err.Error())}
	}
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// canceled returns a context that has ended.
func canceled(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx
}
