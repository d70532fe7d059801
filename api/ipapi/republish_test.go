package ipapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish"
	"github.com/netintel/netintel/publish/gen"
)

// failingStore fails every Put after the first failAfter (0: none).
type failingStore struct {
	objstore.Store
	mu        sync.Mutex
	puts      int
	failAfter int
}

var errStoreDown = errors.New("object store down (injected)")

func (f *failingStore) Put(ctx context.Context, key string, r io.Reader, size int64, ct string) (objstore.Info, error) {
	f.mu.Lock()
	f.puts++
	fail := f.failAfter > 0 && f.puts > f.failAfter
	f.mu.Unlock()
	if fail {
		return objstore.Info{}, errStoreDown
	}
	return f.Store.Put(ctx, key, r, size, ct)
}

// fetched is one file downloaded through the route.
type fetched struct {
	url, etag string
	body      []byte
}

// fetchDataset lists the dataset and downloads every file and SHA256SUMS
// through the download route into a fresh folder, as a customer would,
// checking that each ETag is the SHA-256 of the bytes it came with; then
// it runs `sha256sum -c` there.
func fetchDataset(t *testing.T, base string) (DatasetResponse, map[string]fetched) {
	t.Helper()
	r := call(t, base, "GET", PathDataset, "", key("business")...)
	if r.status != 200 {
		t.Fatalf("dataset: %d %s", r.status, r.body)
	}
	var d DatasetResponse
	if err := json.Unmarshal(r.body, &d); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{sumsName: d.Checksums.URL}
	for _, f := range d.Files {
		links[f.Name] = f.URL
	}
	dir := t.TempDir()
	out := map[string]fetched{}
	for name, u := range links {
		path := strings.Replace(u, DefaultLinkPrefix+"/export/", "/api/v1/export/", 1)
		r := call(t, base, "GET", path, "", key("business")...)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		sum := sha256.Sum256(r.body)
		if want := `"` + hex.EncodeToString(sum[:]) + `"`; r.header.Get("ETag") != want {
			t.Fatalf("%s: ETag %s over bytes whose SHA-256 is %s", name, r.header.Get("ETag"), want)
		}
		if err := os.WriteFile(filepath.Join(dir, name), r.body, 0o644); err != nil {
			t.Fatal(err)
		}
		out[name] = fetched{url: path, etag: r.header.Get("ETag"), body: r.body}
	}
	cmd := exec.Command("sha256sum", "-c", "--strict", "--ignore-missing", sumsName) // SHA256SUMS lists every audience's files
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil || strings.Count(string(b), ": OK") != len(d.Files) {
		t.Fatalf("sha256sum -c: %v\n%s", err, b)
	}
	return d, out
}

// Publishing again the date the API serves, with a run that fails after
// its first file (the store goes away), changes nothing the route serves:
// the same bytes under the same ETags, each the SHA-256 of its bytes, and
// `sha256sum -c` passes; If-None-Match is 304 only for bytes that did not
// change. Once a run of the date succeeds, the API serves the new build:
// new ETags, a 200 for the old If-None-Match, and the old build's links
// answer 404 "fetch again".
func TestDownload_RepublishSameDate(t *testing.T) {
	t.Parallel()
	base, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := &failingStore{Store: base}
	cfg := config.Default().Publish
	cfg.WorkDir = t.TempDir()
	cfg.UploadAttempts = 1
	cfg.Formats = []string{"csv", "ndjson", "mmdb"}
	pub := publish.New(cfg, st, nil, testutil.Logger(t))
	const date = "2026-11-23"
	if _, err := pub.Run(t.Context(), gen.New(300, 1), date); err != nil {
		t.Fatal(err)
	}
	svc := New(Options{InternalKey: testKey, Store: base, Log: testutil.Logger(t)})
	t.Cleanup(svc.stopBuilds)
	mux := http.NewServeMux()
	svc.Mount(mux)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	srv := hs.URL
	svc.refresh(t.Context())
	d1, before := fetchDataset(t, srv)

	changed := gen.New(300, 2)
	st.failAfter = st.puts + 1 // the new CSV lands, then the store goes away
	if _, err := pub.Run(t.Context(), changed, date); !errors.Is(err, errStoreDown) {
		t.Fatalf("republish: %v", err)
	}
	svc.refresh(t.Context())
	d2, after := fetchDataset(t, srv)
	if d2.BuildID != d1.BuildID {
		t.Fatalf("build %s served after a failed run, want %s", d2.BuildID, d1.BuildID)
	}
	for name, f := range before {
		if string(after[name].body) != string(f.body) || after[name].etag != f.etag {
			t.Errorf("%s changed under a failed run", name)
		}
		r := call(t, srv, "GET", f.url, "", append(key("business"), "If-None-Match: "+f.etag)...)
		if r.status != 304 {
			t.Errorf("%s If-None-Match of unchanged bytes: %d", name, r.status)
		}
	}

	st.failAfter = 0
	if _, err := pub.Run(t.Context(), changed, date); err != nil {
		t.Fatal(err)
	}
	svc.refresh(t.Context())
	d3, now := fetchDataset(t, srv)
	if d3.BuildID == d1.BuildID || d3.SnapshotDate != date {
		t.Fatalf("after the successful run: build %s, date %s", d3.BuildID, d3.SnapshotDate)
	}
	for name, f := range before {
		if name == "ipintel.mmdb" && string(now[name].body) == string(f.body) {
			continue
		}
		if now[name].etag == f.etag {
			t.Errorf("%s: same ETag %s for changed bytes", name, f.etag)
		}
		// The new link answers the old tag with the new bytes.
		r := call(t, srv, "GET", now[name].url, "", append(key("business"), "If-None-Match: "+f.etag)...)
		if r.status != 200 || r.header.Get("ETag") != now[name].etag {
			t.Errorf("%s If-None-Match of the old bytes: %d, ETag %s", name, r.status, r.header.Get("ETag"))
		}
		// The old build's link: gone, fetch the dataset again.
		r = call(t, srv, "GET", f.url, "", key("business")...)
		if r.status != 404 || !strings.Contains(string(r.body), "fetch "+PathDataset+" again") {
			t.Errorf("%s old build's link: %d %s", name, r.status, r.body)
		}
	}
}
