package ipapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
)

const testKey = "test-internal-key"

// fixtureClasses are the data classes of the restricted pieces of
// testdata/records.ndjson (which, as a snapshot file, carries none):
// "ip" a whole record, "ip port" an asset, "ip @signal_source" an
// attribution. The names in the file would mislead a name-based gate:
// the residential attribution's source is residential-proxy-feed but the
// netflow asset of 198.51.100.7 is reported by "collector-a"-like names.
var fixtureClasses = map[string]string{
	"192.0.2.44":                           ipmodel.DataResidential,
	"198.51.100.7 2055":                    ipmodel.DataNetflow,
	"198.51.100.7 @residential-proxy-feed": ipmodel.DataResidential,
	"192.0.2.80 9001":                      ipmodel.DataNetflow,
}

// withViews gives each record that fixtureClasses restricts the Views the
// state would: the record without the pieces each audience may not see.
func withViews(recs []ipmodel.Record) {
	for i := range recs {
		r := &recs[i]
		restricted := false
		for k := range fixtureClasses {
			if k == r.IP || strings.HasPrefix(k, r.IP+" ") {
				restricted = true
			}
		}
		if !restricted {
			continue
		}
		r.Views = &ipmodel.Views{}
		for _, a := range ipmodel.Audiences[:ipmodel.NumAudiences-1] {
			if c, ok := fixtureClasses[r.IP]; ok && !a.Sees(c) {
				continue
			}
			v := cloneRecord(r)
			v.Views = nil
			v.Assets = v.Assets[:0]
			for _, as := range r.Assets {
				if c, ok := fixtureClasses[fmt.Sprintf("%s %d", r.IP, as.Port)]; ok && !a.Sees(c) {
					continue
				}
				var keep []ipmodel.Attribution
				for _, at := range as.Attributions {
					if c, ok := fixtureClasses[r.IP+" @"+at.SignalSource]; ok && !a.Sees(c) {
						continue
					}
					keep = append(keep, at)
				}
				as.Attributions = keep
				v.Assets = append(v.Assets, as)
			}
			r.Views[a] = v
		}
	}
}

// testRecords reads testdata/records.ndjson, with the Views its
// restricted pieces (fixtureClasses) give.
func testRecords(t testing.TB) []ipmodel.Record {
	t.Helper()
	f, err := os.Open("testdata/records.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []ipmodel.Record
	if err := ReadNDJSON(f, func(r *ipmodel.Record) error { out = append(out, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	withViews(out)
	return out
}

// putFiles stores files for a snapshot date in st and returns their
// manifest entries: ipintel.* as the pro audience's build,
// ipintel-enterprise.* as enterprise's (the API goes by the manifest's
// audience, not by names).
func putFiles(t testing.TB, st objstore.Store, date string, files map[string][]byte) []ManifestFile {
	t.Helper()
	var out []ManifestFile
	for _, name := range []string{"ipintel.csv.gz", "ipintel.ndjson.gz", "ipintel.parquet", "ipintel.mmdb",
		"ipintel-enterprise.csv.gz", "ipintel-enterprise.ndjson.gz", "ipintel-enterprise.parquet", "ipintel-enterprise.mmdb"} {
		b, ok := files[name]
		if !ok {
			continue
		}
		key := "snapshots/" + date + "/" + name
		if _, err := st.Put(context.Background(), key, bytes.NewReader(b), int64(len(b)), "application/octet-stream"); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		aud, ext, _ := strings.Cut(name, ".")
		format := strings.TrimSuffix(ext, ".gz")
		audience := "pro"
		if aud == "ipintel-enterprise" {
			audience = "enterprise"
		}
		out = append(out, ManifestFile{Name: name, Key: key, Format: format, ContentType: "application/octet-stream", Size: int64(len(b)), Rows: 7, SHA256: hex.EncodeToString(sum[:]), Audience: audience})
	}
	return out
}

type fixture struct {
	svc   *Service
	srv   *httptest.Server
	store objstore.Store
	files map[string][]byte
}

// newFixture serves a Service over testdata with a folder object store
// holding four small files of snapshot 2026-11-23.
func newFixture(t testing.TB, opts Options) *fixture {
	t.Helper()
	st, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"ipintel.csv.gz":    bytes.Repeat([]byte("csv-bytes-"), 100),
		"ipintel.ndjson.gz": []byte("ndjson bytes"),
		"ipintel.parquet":   []byte("PAR1 parquet bytes PAR1"),
		"ipintel.mmdb":      bytes.Repeat([]byte{0xab, 0xcd}, 500),
	}
	for _, n := range []string{"csv.gz", "ndjson.gz", "parquet", "mmdb"} {
		files["ipintel-enterprise."+n] = append([]byte("enterprise "), files["ipintel."+n]...)
	}
	m := Manifest{SnapshotDate: "2026-11-23", SchemaVersion: ipmodel.SchemaVersion, BuildTime: "2026-11-23T03:00:00Z", Hosts: 6, Ranges: 1,
		Files: putFiles(t, st, "2026-11-23", files), SumsKey: "snapshots/2026-11-23/SHA256SUMS"}
	sums := ""
	for _, f := range m.Files {
		sums += f.SHA256 + "  " + f.Name + "\n"
	}
	if _, err := st.Put(context.Background(), m.SumsKey, strings.NewReader(sums), int64(len(sums)), "text/plain"); err != nil {
		t.Fatal(err)
	}
	files["SHA256SUMS"] = []byte(sums)
	snap, err := newMemSnapshot(m, testRecords(t))
	if err != nil {
		t.Fatal(err)
	}
	if opts.InternalKey == "" {
		opts.InternalKey = testKey
	}
	if opts.Store == nil {
		opts.Store = st
	}
	opts.Log = testutil.Logger(t)
	svc := New(opts)
	svc.Swap(snap)
	mux := http.NewServeMux()
	svc.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &fixture{svc: svc, srv: srv, store: st, files: files}
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return v
}

// call sends a request; hdr holds headers as "Name: value" pairs.
func call(t testing.TB, base, method, path string, body string, hdr ...string) resp {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// key returns the internal headers for a tier.
func key(tier string) []string {
	return []string{"X-Internal-Key: " + testKey, "X-Tier: " + tier}
}

// sameView is a snapshot that serves every audience the same index and
// table: for tests whose data holds no restricted class.
func sameView(m Manifest, idx Index, rows *Table) *Snapshot {
	s := &Snapshot{Manifest: m}
	for a := range s.Views {
		s.Views[a] = View{Index: idx, Rows: rows}
	}
	return s
}

// newMemSnapshot builds a snapshot held entirely in memory from records
// (complete records, with Views where they hold restricted knowledge, as
// the state gives them): per audience an in-memory index and the export
// table of the records as that audience sees them. (A test double:
// the API loads snapshots from published files.)
func newMemSnapshot(m Manifest, records []ipmodel.Record) (*Snapshot, error) {
	s := &Snapshot{Manifest: m}
	for _, a := range ipmodel.Audiences {
		var tb TableBuilder
		var recs []ipmodel.Record
		for i := range records {
			v, ok := records[i].For(a)
			if !ok {
				continue
			}
			r := *v
			r.Views = nil
			if r.IP == "" {
				r.IP = records[i].IP
			}
			recs = append(recs, r)
			tb.Add(&recs[len(recs)-1])
		}
		t, err := tb.Table()
		if err != nil {
			return nil, err
		}
		s.Views[a] = View{Index: NewMemIndex(recs), Rows: t}
	}
	return s, nil
}
