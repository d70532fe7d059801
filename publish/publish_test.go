package publish

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/oschwald/maxminddb-golang"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish/gen"
)

func testConfig(t *testing.T) config.Publish {
	t.Helper()
	c := config.Default().Publish
	c.WorkDir = t.TempDir()
	c.RetryBackoff = 10 * time.Millisecond
	c.ParquetRowGroupRows = 1024 // several row groups even in small tests
	return c
}

func newPublisher(t *testing.T, cfg config.Publish, st objstore.Store) *Publisher {
	t.Helper()
	return New(cfg, st, nil, testutil.Logger(t))
}

type storeCase struct {
	name string
	open func(t *testing.T) objstore.Store
}

var stores = []storeCase{
	{"folder", func(t *testing.T) objstore.Store {
		st, err := objstore.NewFolder(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
	{"s3", func(t *testing.T) objstore.Store {
		s3 := testutil.StartS3(t)
		st, err := objstore.NewS3(t.Context(), s3.Config().S3)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
}

// download fetches every file of the latest snapshot and SHA256SUMS into a
// fresh folder, as a customer would.
func download(t *testing.T, st objstore.Store, m *Manifest) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range m.Files {
		fh, err := os.Create(filepath.Join(dir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if err := Download(t.Context(), st, f, fh); err != nil {
			t.Fatal(err)
		}
		fh.Close()
	}
	rc, _, err := st.Get(t.Context(), m.SumsKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	if err := os.WriteFile(filepath.Join(dir, SumsName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPublisher_Run_ReadByOtherTools(t *testing.T) {
	t.Parallel()
	g := gen.New(3000, 11)
	for _, sc := range stores {
		t.Run(sc.name, func(t *testing.T) {
			st := sc.open(t)
			p := newPublisher(t, testConfig(t), st)
			p.Now = func() time.Time { return time.Date(2026, 11, 23, 3, 0, 5, 0, time.UTC) }
			res, err := p.Run(t.Context(), g, "")
			if err != nil {
				t.Fatal(err)
			}
			if !res.Latest || res.Manifest.SnapshotDate != "2026-11-23" {
				t.Fatalf("result = %+v", res)
			}
			m, err := Latest(t.Context(), st)
			if err != nil {
				t.Fatal(err)
			}
			wantRows := int64(g.NHosts + g.NRanges)
			if m.Hosts != int64(g.NHosts) || m.Ranges != int64(g.NRanges) || m.SchemaVersion != ipmodel.SchemaVersion || m.BuildTime != "2026-11-23T03:00:05Z" {
				t.Fatalf("manifest = %+v", m)
			}
			// Four formats of the pro and the enterprise builds, the free
			// build's MMDB (gen's records hold no restricted data, so the
			// builds are alike).
			if len(m.Files) != 9 {
				t.Fatalf("files = %+v", m.Files)
			}
			for _, f := range m.Files {
				if f.Rows != wantRows {
					t.Errorf("%s rows = %d, want %d", f.Name, f.Rows, wantRows)
				}
			}
			dir := download(t, st, m)

			t.Run("sha256sum", func(t *testing.T) {
				cmd := exec.Command("sha256sum", "-c", "--strict", SumsName)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("sha256sum -c: %v\n%s", err, out)
				} else if n := strings.Count(string(out), ": OK"); n != len(m.Files) {
					t.Fatalf("sha256sum -c checked %d files:\n%s", n, out)
				}
			})
			if sc.name != "s3" {
				return // the readers below see the same bytes from either store: read them once
			}
			t.Run("csv", func(t *testing.T) { checkCSV(t, g, filepath.Join(dir, FileCSV), wantRows) })
			t.Run("ndjson", func(t *testing.T) { checkNDJSON(t, g, filepath.Join(dir, FileNDJSON), wantRows) })
			t.Run("parquet", func(t *testing.T) { checkParquet(t, g, filepath.Join(dir, FileParquet), wantRows) })
			t.Run("mmdb", func(t *testing.T) {
				db, err := maxminddb.Open(filepath.Join(dir, FileMMDB))
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				for _, i := range []int{gen.BlockSize + 5, 4*gen.BlockSize + 1, 2999} {
					var got ipmodel.Record
					if err := db.Lookup(net.IP(gen.HostAddr(i).AsSlice()), &got); err != nil {
						t.Fatal(err)
					}
					if g, w := canon(t, got), canon(t, g.Host(i)); g != w {
						t.Fatalf("host %d\n got %s\nwant %s", i, g, w)
					}
				}
			})
		})
	}
}

func gunzip(t *testing.T, path string) io.Reader {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

func checkCSV(t *testing.T, g *gen.State, path string, wantRows int64) {
	r := csv.NewReader(gunzip(t, path))
	header, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(header, ",") != strings.Join(Columns, ",") {
		t.Fatalf("header = %v", header)
	}
	want := map[string]ipmodel.Record{}
	for _, i := range []int{3, gen.BlockSize*2 + 7, 2999} {
		h := g.Host(i)
		want[h.IP] = h
	}
	var rows int64
	found := 0
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("encoding/csv row %d: %v", rows+1, err)
		}
		rows++
		w, ok := want[rec[0]]
		if !ok {
			continue
		}
		found++
		prov := ""
		if w.Provider != nil {
			prov = *w.Provider
		}
		f := Flags(&w)
		if rec[1] != "" || rec[2] != strings.Join(w.Classifications, ";") || rec[3] != prov || rec[4] != strconv.FormatFloat(w.Confidence, 'f', -1, 64) ||
			rec[6] != w.LastSeen || rec[7] != strings.Join(w.Sources, ";") || rec[13] != strconv.FormatBool(f[5]) || rec[9] != strconv.FormatBool(f[1]) {
			t.Errorf("row %s = %q", rec[0], rec[:14])
		}
		var assets []ipmodel.Asset
		if err := json.Unmarshal([]byte(rec[14]), &assets); err != nil {
			t.Fatalf("assets of %s: %v", rec[0], err)
		}
		wr := w
		wr.Assets = assets
		if canon(t, wr) != canon(t, w) {
			t.Errorf("assets of %s = %s", rec[0], rec[14])
		}
	}
	if rows != wantRows || found != len(want) {
		t.Fatalf("encoding/csv: %d rows (want %d), found %d of %d", rows, wantRows, found, len(want))
	}
	// A second reader: Python's csv module on the decompressed text.
	host := g.Host(2999)
	script := `import csv, gzip, sys
rows = list(csv.reader(gzip.open(sys.argv[1], "rt", newline="")))
assert rows[0][0] == "ip", rows[0]
hit = [r for r in rows[1:] if r[0] == sys.argv[2]]
print(len(rows) - 1, hit[0][3] if hit else "MISSING", len(set(len(r) for r in rows)))`
	out, err := exec.Command("python3", "-c", script, path, host.IP).CombinedOutput()
	if err != nil {
		t.Fatalf("python3 csv: %v\n%s", err, out)
	}
	prov := ""
	if host.Provider != nil {
		prov = *host.Provider
	}
	if got, want := strings.TrimSpace(string(out)), fmt.Sprintf("%d %s 1", wantRows, prov); got != want {
		t.Fatalf("python3 csv: %q, want %q", got, want)
	}
}

func checkNDJSON(t *testing.T, g *gen.State, path string, wantRows int64) {
	index := map[string]int{}
	for i := 0; i < g.NHosts; i++ {
		index[gen.HostAddr(i).String()] = i
	}
	sc := bufio.NewScanner(gunzip(t, path))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var rows int64
	checked := 0
	for sc.Scan() {
		rows++
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatalf("line %d: %v", rows, err)
		}
		if len(raw) != len(Columns) {
			t.Fatalf("line %d has %d keys, want %d", rows, len(raw), len(Columns))
		}
		var rec ipmodel.Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Network != "" {
			continue
		}
		if a, _ := net.ResolveIPAddr("ip", rec.IP); a == nil {
			t.Fatalf("line %d: bad ip %q", rows, rec.IP)
		}
		if rows%500 == 0 { // compare a sample with the generator
			i, ok := index[rec.IP]
			if !ok {
				t.Fatalf("line %d: host %s is not in the state", rows, rec.IP)
			}
			if canon(t, rec) != canon(t, g.Host(i)) {
				t.Fatalf("line %d\n got %s\nwant %s", rows, canon(t, rec), canon(t, g.Host(i)))
			}
			checked++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rows != wantRows || checked == 0 {
		t.Fatalf("ndjson rows = %d, want %d (checked %d)", rows, wantRows, checked)
	}
}

// duckdb runs queries through DuckDB (npm @duckdb/node-api, tools/npm) in
// one process and returns each query's rows.
func duckdb(t *testing.T, sql ...string) [][]map[string]any {
	t.Helper()
	root, err := filepath.Abs("../tools/npm")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "@duckdb", "node-api")); err != nil {
		t.Fatalf("DuckDB for node is not installed (run `make npm-deps`): %v", err)
	}
	cmd := exec.Command("node", append([]string{filepath.Join(root, "duckdb-query.mjs")}, sql...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("duckdb: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("duckdb: %v", err)
	}
	var res [][]map[string]any
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(sql) {
		t.Fatalf("duckdb output: %v\n%s", err, out)
	}
	return res
}

func checkParquet(t *testing.T, g *gen.State, path string, wantRows int64) {
	// One host with CVEs, compared field by field through DuckDB's JSON.
	idx := -1
	for i := 0; i < g.NHosts && idx < 0; i++ {
		for _, a := range g.Host(i).Assets {
			if len(a.Cves) > 1 && a.Vendor != nil && a.VersionBand != nil {
				idx = i
			}
		}
	}
	h := g.Host(idx)
	var wantAssets int
	for i := 0; i < g.NHosts; i++ {
		wantAssets += len(g.Host(i).Assets)
	}
	pq := "read_parquet('" + path + "')"
	csvPath := strings.TrimSuffix(path, FileParquet) + FileCSV
	res := duckdb(t,
		`SELECT count(*)::INTEGER AS n, count(network)::INTEGER AS ranges, sum(len(assets))::INTEGER AS assets FROM `+pq,
		`SELECT count(DISTINCT row_group_id)::INTEGER AS n, string_agg(DISTINCT compression, ',') AS codecs FROM parquet_metadata('`+path+`')`,
		`SELECT to_json(t)::VARCHAR AS j FROM (SELECT * REPLACE (`+timesAsText+`) FROM `+pq+`) t WHERE ip = '`+h.IP+`'`,
		`SELECT count(*)::INTEGER AS n FROM `+pq+` WHERE is_tor_exit_node <> list_contains(classifications, 'tor') OR is_anonymous_vpn <> list_contains(classifications, 'vpn')`,
		// The CSV read by DuckDB too: same rows, same provider for h.
		`SELECT count(*)::INTEGER AS n, max(CASE WHEN ip = '`+h.IP+`' THEN coalesce(provider, '') END) AS provider FROM read_csv('`+csvPath+`', header=true, quote='"', escape='"', all_varchar=true, sample_size=-1)`,
	)
	if got := fmt.Sprint(res[0][0]["n"], " ", res[0][0]["ranges"], " ", res[0][0]["assets"]); got != fmt.Sprint(wantRows, " ", g.NRanges, " ", wantAssets) {
		t.Fatalf("duckdb count, ranges, assets = %s, want %d %d %d", got, wantRows, g.NRanges, wantAssets)
	}
	if n, _ := res[1][0]["n"].(float64); int64(n) != (wantRows+1023)/1024 {
		t.Fatalf("row groups = %v, want %d", res[1][0]["n"], (wantRows+1023)/1024)
	}
	if res[1][0]["codecs"] != "ZSTD" { // the default publish.parquet_compression
		t.Fatalf("column chunk codecs = %v, want ZSTD", res[1][0]["codecs"])
	}
	if len(res[2]) != 1 {
		t.Fatalf("duckdb rows for %s: %d", h.IP, len(res[2]))
	}
	var rec ipmodel.Record
	if err := json.Unmarshal([]byte(res[2][0]["j"].(string)), &rec); err != nil {
		t.Fatal(err)
	}
	if canon(t, rec) != canon(t, h) {
		t.Fatalf("duckdb row\n got %s\nwant %s", canon(t, rec), canon(t, h))
	}
	if res[3][0]["n"].(float64) != 0 {
		t.Fatalf("%v rows with flags that disagree with classifications", res[3][0]["n"])
	}
	checkParquetLayout(t, path)
	prov := ""
	if h.Provider != nil {
		prov = *h.Provider
	}
	if res[4][0]["n"].(float64) != float64(wantRows) || res[4][0]["provider"] != prov {
		t.Fatalf("duckdb read_csv = %v, want %d rows, provider %q", res[4][0], wantRows, prov)
	}
}

// timesAsText turns the Parquet file's timestamp columns back into the
// RFC 3339 text of the other formats (DuckDB SELECT * REPLACE), so a row
// compares with ipmodel.Record field by field.
const timesAsText = `strftime(first_seen, '%Y-%m-%dT%H:%M:%SZ') AS first_seen, strftime(last_seen, '%Y-%m-%dT%H:%M:%SZ') AS last_seen,
	list_transform(assets, a -> struct_update(a,
		first_seen := strftime(a.first_seen, '%Y-%m-%dT%H:%M:%SZ'), last_seen := strftime(a.last_seen, '%Y-%m-%dT%H:%M:%SZ'),
		attributions := list_transform(a.attributions, x -> struct_update(x, observed_at := strftime(x.observed_at, '%Y-%m-%dT%H:%M:%SZ'))),
		cve_summary := CASE WHEN a.cve_summary IS NULL THEN NULL ELSE struct_update(a.cve_summary, last_computed_at := strftime(a.cve_summary.last_computed_at, '%Y-%m-%dT%H:%M:%SZ')) END,
		cves := list_transform(a.cves, c -> struct_update(c, kev_added_at := strftime(c.kev_added_at, '%Y-%m-%dT%H:%M:%SZ'))))) AS assets,
	list_transform(attributions, x -> struct_update(x, observed_at := strftime(x.observed_at, '%Y-%m-%dT%H:%M:%SZ'))) AS attributions`

// checkParquetLayout reads the file's layout with DuckDB: every time
// column is a UTC timestamp (INT64 TIMESTAMP, not text), the rows are in
// the byte order of ip so that no two row groups' min/max of ip overlap,
// and created_by names netintel and its version.
func checkParquetLayout(t *testing.T, path string) {
	t.Helper()
	res := duckdb(t,
		`SELECT name, type, coalesce(logical_type, '') AS lt FROM parquet_schema('`+path+`') WHERE name IN ('first_seen', 'last_seen', 'observed_at', 'kev_added_at', 'last_computed_at')`,
		`SELECT typeof(first_seen) AS a, typeof(assets[1].last_seen) AS b, typeof(attributions[1].observed_at) AS c FROM read_parquet('`+path+`') LIMIT 1`,
		`SELECT count(*)::INTEGER AS n FROM (SELECT ip, lag(ip) OVER (ORDER BY file_row_number) AS prev FROM read_parquet('`+path+`', file_row_number=true)) WHERE prev > ip`,
		`SELECT row_group_id::INTEGER AS g, stats_min_value AS lo, stats_max_value AS hi FROM parquet_metadata('`+path+`') WHERE path_in_schema = 'ip' ORDER BY row_group_id`,
		`SELECT created_by FROM parquet_file_metadata('`+path+`')`,
	)
	// first_seen and last_seen of a record and of an asset, observed_at of
	// two attribution lists, kev_added_at, last_computed_at.
	if len(res[0]) != 8 {
		t.Errorf("time columns in the Parquet schema: %v, want 8", res[0])
	}
	for _, c := range res[0] {
		if c["type"] != "INT64" || !strings.Contains(fmt.Sprint(c["lt"]), "TimestampType") || !strings.Contains(fmt.Sprint(c["lt"]), "isAdjustedToUTC=1") {
			t.Errorf("time column %v is not a UTC timestamp", c)
		}
	}
	if len(res[1]) != 1 {
		t.Fatalf("no row")
	}
	for k, v := range res[1][0] {
		if v != "TIMESTAMP WITH TIME ZONE" {
			t.Errorf("DuckDB reads time column %s as %v", k, v)
		}
	}
	if n := res[2][0]["n"].(float64); n != 0 {
		t.Errorf("%v rows follow a row with a greater ip: not sorted", n)
	}
	if len(res[3]) < 2 {
		t.Fatalf("%d row groups: the order check needs several", len(res[3]))
	}
	for i := 1; i < len(res[3]); i++ {
		prev, cur := res[3][i-1], res[3][i]
		if fmt.Sprint(prev["hi"]) > fmt.Sprint(cur["lo"]) {
			t.Errorf("row groups %v and %v overlap on ip: %v..%v, %v..%v", prev["g"], cur["g"], prev["lo"], prev["hi"], cur["lo"], cur["hi"])
		}
	}
	if cb := fmt.Sprint(res[4][0]["created_by"]); !strings.HasPrefix(cb, "netintel version ") {
		t.Errorf("created_by %q, want netintel version ...", cb)
	}
}

// faultStore wraps a store and injects faults into Put.
type faultStore struct {
	objstore.Store
	mu sync.Mutex
	// failAfter makes every Put after that many succeed fail (0: never).
	failAfter int
	// corrupt names keys (or file names, matching any build's) whose next
	// Put stores flipped bytes.
	corrupt map[string]int
	puts    map[string]int
	n       int
	onFail  func()
}

var errUnavailable = errors.New("object store unavailable (injected)")

func (f *faultStore) Put(ctx context.Context, key string, r io.Reader, size int64, ct string) (objstore.Info, error) {
	f.mu.Lock()
	f.n++
	if f.puts == nil {
		f.puts = map[string]int{}
	}
	f.puts[key]++
	fail := f.failAfter > 0 && f.n > f.failAfter
	ck := key
	if name := key[strings.LastIndexByte(key, '/')+1:]; f.corrupt[name] > 0 {
		ck = name
	}
	corrupt := f.corrupt[ck] > 0
	if corrupt {
		f.corrupt[ck]--
	}
	f.mu.Unlock()
	if fail {
		if f.onFail != nil {
			f.onFail()
			return f.Store.Put(ctx, key, r, size, ct)
		}
		return objstore.Info{}, errUnavailable
	}
	if corrupt {
		b, err := io.ReadAll(r)
		if err != nil {
			return objstore.Info{}, err
		}
		b[len(b)/2] ^= 0xff
		return f.Store.Put(ctx, key, strings.NewReader(string(b)), size, ct)
	}
	return f.Store.Put(ctx, key, r, size, ct)
}

func TestPublisher_Run_Faults(t *testing.T) {
	t.Parallel()
	g := gen.New(500, 3)
	for _, sc := range stores {
		t.Run(sc.name, func(t *testing.T) {
			t.Run("unavailable mid-upload", func(t *testing.T) {
				base := sc.open(t)
				fs := &faultStore{Store: base}
				p := newPublisher(t, testConfig(t), fs)
				if _, err := p.Run(t.Context(), g, "2026-11-20"); err != nil {
					t.Fatal(err)
				}
				fs.failAfter = fs.n + 2 // two files of the next snapshot land, then the store goes away
				_, err := p.Run(t.Context(), g, "2026-11-21")
				if err == nil || !strings.Contains(err.Error(), "upload snapshots/2026-11-21/") || !errors.Is(err, errUnavailable) {
					t.Fatalf("err = %v", err)
				}
				m, err := Latest(t.Context(), base)
				if err != nil || m.SnapshotDate != "2026-11-20" {
					t.Fatalf("latest after failure = %+v, %v", m, err)
				}
				if b, err := Builds(t.Context(), base, "2026-11-21"); err != nil || len(b) != 0 {
					t.Fatalf("complete builds of the failed snapshot: %v, %v", b, err)
				}
				fs.failAfter = 0
				if _, err := p.Run(t.Context(), g, "2026-11-21"); err != nil {
					t.Fatalf("next run: %v", err)
				}
				if m, err := Latest(t.Context(), base); err != nil || m.SnapshotDate != "2026-11-21" {
					t.Fatalf("latest after recovery = %+v, %v", m, err)
				}
			})
			t.Run("corrupted upload is retried", func(t *testing.T) {
				base := sc.open(t)
				fs := &faultStore{Store: base, corrupt: map[string]int{FileParquet: 1, LatestKey: 1}}
				p := newPublisher(t, testConfig(t), fs)
				res, err := p.Run(t.Context(), g, "2026-11-22")
				if err != nil {
					t.Fatal(err)
				}
				b := res.Manifest.BuildID
				if fs.puts[Key("2026-11-22", b, FileParquet)] != 2 || fs.puts[LatestKey] != 2 || fs.puts[Key("2026-11-22", b, FileCSV)] != 1 {
					t.Fatalf("puts = %v", fs.puts)
				}
				m, err := Latest(t.Context(), base)
				if err != nil {
					t.Fatal(err)
				}
				f, _ := m.File(FormatParquet)
				if err := Download(t.Context(), base, f, io.Discard); err != nil {
					t.Fatal(err)
				}
			})
			t.Run("corrupted every time is never published", func(t *testing.T) {
				base := sc.open(t)
				fs := &faultStore{Store: base, corrupt: map[string]int{FileMMDB: 100}}
				p := newPublisher(t, testConfig(t), fs)
				_, err := p.Run(t.Context(), g, "2026-11-22")
				if !errors.Is(err, ErrChecksum) {
					t.Fatalf("err = %v", err)
				}
				if _, err := Latest(t.Context(), base); !errors.Is(err, ErrNoSnapshot) {
					t.Fatalf("latest = %v", err)
				}
			})
		})
	}
	t.Run("s3 server stops mid-upload", func(t *testing.T) {
		s3 := testutil.StartS3(t)
		st, err := objstore.NewS3(t.Context(), s3.Config().S3)
		if err != nil {
			t.Fatal(err)
		}
		fs := &faultStore{Store: st}
		cfg := testConfig(t)
		cfg.UploadAttempts = 2
		p := newPublisher(t, cfg, fs)
		if _, err := p.Run(t.Context(), g, "2026-11-20"); err != nil {
			t.Fatal(err)
		}
		fs.failAfter = fs.n + 1
		fs.onFail = s3.Stop // the real server dies under the second upload
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		_, err = p.Run(ctx, g, "2026-11-21")
		if err == nil || !strings.Contains(err.Error(), "upload snapshots/2026-11-21/") {
			t.Fatalf("err = %v", err)
		}
		t.Logf("error with the store down: %v", err)
	})
}

// rawDownload copies the files latest names and SHA256SUMS into a fresh
// folder without checking anything, as a customer's client would.
func rawDownload(t *testing.T, st objstore.Store) (*Manifest, string) {
	t.Helper()
	m, err := Latest(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keys := map[string]string{SumsName: m.SumsKey}
	for _, f := range m.Files {
		keys[f.Name] = f.Key
	}
	for name, key := range keys {
		rc, _, err := st.Get(t.Context(), key, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return m, dir
}

// sha256sumCheck runs `sha256sum -c --strict SHA256SUMS` in dir.
func sha256sumCheck(t *testing.T, dir string, files int) {
	t.Helper()
	cmd := exec.Command("sha256sum", "-c", "--strict", SumsName)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sha256sum -c: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), ": OK"); n != files {
		t.Fatalf("sha256sum -c checked %d files, want %d:\n%s", n, files, out)
	}
}

// Running again the date that latest already names, and failing half-way
// (here the store goes away after the run's first file), changes nothing
// latest names: the run wrote into a build folder of its own. The next
// successful run of the date publishes another build and moves latest to
// it; the superseded build stays readable for publish.superseded_grace,
// the failed run's leftovers for publish.timeout, then both are pruned.
func TestPublisher_Run_RerunLatestDateFails(t *testing.T) {
	t.Parallel()
	base, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fs := &faultStore{Store: base}
	cfg := testConfig(t)
	cfg.UploadAttempts = 1
	cfg.Formats = []string{FormatCSV, FormatNDJSON}
	p := newPublisher(t, cfg, fs)
	now := time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
	p.Now = func() time.Time { return now }
	const date = "2026-11-23"
	first, err := p.Run(t.Context(), gen.New(200, 1), date)
	if err != nil {
		t.Fatal(err)
	}
	changed := gen.New(200, 2) // the state moved on since
	fs.failAfter = fs.n + 1    // the new CSV lands, the NDJSON does not
	now = now.Add(time.Minute)
	if _, err := p.Run(t.Context(), changed, date); !errors.Is(err, errUnavailable) {
		t.Fatalf("err = %v", err)
	}
	m, dir := rawDownload(t, base)
	if m.Key != first.Manifest.Key {
		t.Fatalf("latest names %s after the failed run, want %s", m.Key, first.Manifest.Key)
	}
	sha256sumCheck(t, dir, 4) // csv and ndjson of the pro and enterprise builds
	for _, f := range m.Files {
		if err := Download(t.Context(), base, f, io.Discard); err != nil {
			t.Fatalf("after the failed run: %v", err)
		}
	}

	fs.failAfter = 0
	now = now.Add(time.Minute)
	second, err := p.Run(t.Context(), changed, date)
	if err != nil {
		t.Fatal(err)
	}
	if second.Manifest.BuildID == first.Manifest.BuildID || !second.Latest || len(second.PrunedBuilds) != 0 {
		t.Fatalf("second run = %+v", second)
	}
	m, dir = rawDownload(t, base)
	if m.Key != second.Manifest.Key {
		t.Fatalf("latest = %s, want %s", m.Key, second.Manifest.Key)
	}
	// Plus the NDJSON delta of each build, against the first build of the
	// same date (the failed run's build has no manifest: not a base).
	if m.DeltaBase == nil || m.DeltaBase.BuildID != first.Manifest.BuildID {
		t.Fatalf("delta_base = %+v, want build %s", m.DeltaBase, first.Manifest.BuildID)
	}
	sha256sumCheck(t, dir, 6)
	if f1, f2 := first.Manifest.Files[0], second.Manifest.Files[0]; f1.SHA256 == f2.SHA256 {
		t.Fatal("the changed state gave the same CSV")
	}
	// The superseded build is still readable, as it was published.
	old, err := ReadManifest(t.Context(), base, first.Manifest.Key)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range old.Files {
		if err := Download(t.Context(), base, f, io.Discard); err != nil {
			t.Fatalf("superseded build: %v", err)
		}
	}
	if builds, err := Builds(t.Context(), base, date); err != nil || fmt.Sprint(builds) != fmt.Sprint([]string{first.Manifest.BuildID, second.Manifest.BuildID}) {
		t.Fatalf("builds = %v, %v", builds, err)
	}
	if dm, err := DateManifest(t.Context(), base, date); err != nil || dm.Key != second.Manifest.Key {
		t.Fatalf("date manifest = %+v, %v", dm, err)
	}
	if n := len(storedBuilds(t, base)[date]); n != 3 {
		t.Fatalf("%d builds stored, want 3 (two complete, one failed)", n)
	}

	// A day later the first build and the failed one go; the second, now
	// superseded only a moment ago, stays.
	now = now.Add(cfg.SupersededGrace + time.Minute)
	third, err := p.Run(t.Context(), changed, date)
	if err != nil {
		t.Fatal(err)
	}
	if len(third.PrunedBuilds) != 2 || !slices.Contains(third.PrunedBuilds, date+"/"+first.Manifest.BuildID) {
		t.Fatalf("pruned builds = %v", third.PrunedBuilds)
	}
	if got := storedBuilds(t, base)[date]; fmt.Sprint(got) != fmt.Sprint([]string{second.Manifest.BuildID, third.Manifest.BuildID}) {
		t.Fatalf("builds left = %v", got)
	}
}

// storedBuilds lists the build folders (complete or not) of every date.
func storedBuilds(t *testing.T, st objstore.Store) map[string][]string {
	t.Helper()
	objs, err := st.List(t.Context(), Prefix)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, o := range objs {
		d, b, _, ok := splitKey(o.Key)
		if ok && !slices.Contains(out[d], b) {
			out[d] = append(out[d], b)
		}
	}
	return out
}

func TestPublisher_Run_IdempotentKeepBackfill(t *testing.T) {
	t.Parallel()
	st, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	g := gen.New(300, 5)
	cfg := testConfig(t)
	cfg.Keep = 2
	cfg.Formats = []string{FormatCSV, FormatMMDB}
	p := newPublisher(t, cfg, st)
	tests := []struct {
		name       string
		date       string
		wantLatest string
		wantDates  []string
	}{
		{"first", "2026-11-20", "2026-11-20", []string{"2026-11-20"}},
		{"second", "2026-11-21", "2026-11-21", []string{"2026-11-20", "2026-11-21"}},
		{"again the same date", "2026-11-21", "2026-11-21", []string{"2026-11-20", "2026-11-21"}},
		{"third prunes the first", "2026-11-22", "2026-11-22", []string{"2026-11-21", "2026-11-22"}},
		{"backfill does not move latest", "2026-11-01", "2026-11-22", []string{"2026-11-01", "2026-11-21", "2026-11-22"}},
		{"next day prunes beyond keep", "2026-11-23", "2026-11-23", []string{"2026-11-22", "2026-11-23"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := p.Run(t.Context(), g, tc.date)
			if err != nil {
				t.Fatal(err)
			}
			if res.Latest != (tc.date == tc.wantLatest) {
				t.Fatalf("latest moved = %v", res.Latest)
			}
			m, err := Latest(t.Context(), st)
			if err != nil || m.SnapshotDate != tc.wantLatest {
				t.Fatalf("latest = %+v, %v", m, err)
			}
			objs, err := st.List(t.Context(), Prefix)
			if err != nil {
				t.Fatal(err)
			}
			dates := map[string]int{}
			for _, o := range objs {
				if d, _, ok := strings.Cut(strings.TrimPrefix(o.Key, Prefix), "/"); ok {
					dates[d]++
				}
			}
			var got []string
			for d, n := range dates {
				// csv and mmdb of pro and enterprise, the free mmdb, SHA256SUMS, manifest.json a build
				if want := 7 * len(storedBuilds(t, st)[d]); n != want {
					t.Errorf("%s holds %d objects, want %d", d, n, want)
				}
				got = append(got, d)
			}
			slicesSort(got)
			if strings.Join(got, " ") != strings.Join(tc.wantDates, " ") {
				t.Fatalf("dates = %v, want %v", got, tc.wantDates)
			}
		})
	}
}

// storedDates lists the snapshot dates in st with their object counts.
func storedDates(t *testing.T, st objstore.Store) map[string]int {
	t.Helper()
	objs, err := st.List(t.Context(), Prefix)
	if err != nil {
		t.Fatal(err)
	}
	dates := map[string]int{}
	for _, o := range objs {
		if d, _, ok := strings.Cut(strings.TrimPrefix(o.Key, Prefix), "/"); ok {
			dates[d]++
		}
	}
	return dates
}

// A folder left without a manifest by a failed run does not count towards
// keep: the last keep complete snapshots stay, and the leftover is deleted
// once it is older than all of them.
func TestPublisher_Run_PruneIncompleteFolder(t *testing.T) {
	t.Parallel()
	st, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	g := gen.New(100, 5)
	cfg := testConfig(t)
	cfg.Keep = 2
	cfg.Formats = []string{FormatCSV}
	p := newPublisher(t, cfg, st)
	for _, d := range []string{"2026-11-20", "2026-11-21"} {
		if _, err := p.Run(t.Context(), g, d); err != nil {
			t.Fatal(err)
		}
	}
	// 2026-11-22 failed after its first file: no manifest (and it may
	// still be going: it started just now).
	partial := Key("2026-11-22", NewBuildID(time.Now()), FileCSV)
	if _, err := st.Put(t.Context(), partial, strings.NewReader("partial"), 7, "application/gzip"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		date       string
		wantPruned string
		wantDates  map[string]int // date -> objects (pro and enterprise csv, SHA256SUMS, manifest.json)
	}{
		{"2026-11-23", "2026-11-20", map[string]int{"2026-11-21": 4, "2026-11-22": 1, "2026-11-23": 4}},
		{"2026-11-24", "2026-11-22 2026-11-21", map[string]int{"2026-11-23": 4, "2026-11-24": 4}},
	}
	for _, tc := range tests {
		res, err := p.Run(t.Context(), g, tc.date)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(res.Pruned, " "); got != tc.wantPruned {
			t.Errorf("%s: pruned %q, want %q", tc.date, got, tc.wantPruned)
		}
		if got := storedDates(t, st); fmt.Sprint(got) != fmt.Sprint(tc.wantDates) {
			t.Fatalf("%s: stored %v, want %v", tc.date, got, tc.wantDates)
		}
		for d, n := range tc.wantDates {
			if n == 3 {
				if _, err := DateManifest(t.Context(), st, d); err != nil {
					t.Errorf("%s: kept snapshot %s: %v", tc.date, d, err)
				}
			}
		}
	}
}

func slicesSort(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestPublisher_Run_Event(t *testing.T) {
	t.Parallel()
	n := testutil.StartNATS(t)
	n.Ensure(t)
	st, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := New(testConfig(t), st, n.JS, testutil.Logger(t))
	g := gen.New(200, 1)
	res, err := p.Run(t.Context(), g, "2026-11-23")
	if err != nil {
		t.Fatal(err)
	}
	b := res.Manifest.BuildID
	s, err := n.JS.Stream(t.Context(), "EVENTS")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := s.GetLastMsgForSubject(t.Context(), EventSubject)
	if err != nil {
		t.Fatal(err)
	}
	var ev Event
	if err := json.Unmarshal(msg.Data, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.SnapshotDate != "2026-11-23" || ev.BuildID != b || !ValidBuildID(b) || ev.Manifest != ManifestKey("2026-11-23", b) || ev.Rows != int64(g.NHosts+g.NRanges) || !ev.Latest || ev.Files[FormatMMDB] != Key("2026-11-23", b, FileMMDB) {
		t.Fatalf("event = %+v", ev)
	}
}

// A snapshot event whose acknowledgement never comes (the stream's leader
// died after taking the publish) costs the run one request timeout, not
// the run's whole time limit: the run finishes, published, with the limit
// at its default of an hour. A plain subscriber on the event subject takes
// the publish and never answers, as such a leader does.
func TestPublisher_Run_LostEventAckDoesNotHoldTheRun(t *testing.T) {
	t.Parallel()
	n := testutil.StartNATS(t)
	taken := make(chan struct{}, 1)
	sub, err := n.NC.Subscribe(EventSubject, func(*nats.Msg) {
		select {
		case taken <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	js, err := jetstream.New(n.NC, jetstream.WithDefaultTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	st, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	if cfg.Timeout != time.Hour {
		t.Fatalf("default publish timeout %s; this test is written for one far longer than a request's", cfg.Timeout)
	}
	p := New(cfg, st, js, testutil.Logger(t))
	type result struct {
		res *Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := p.Run(t.Context(), gen.New(50, 1), "2026-11-23")
		done <- result{res, err}
	}()
	select {
	case r := <-done:
		if r.err != nil || !r.res.Latest {
			t.Fatalf("run = %+v, %v; want published as latest", r.res, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run still waiting 30 s for the event's acknowledgement")
	}
	select {
	case <-taken:
	default:
		t.Fatal("the event was never sent, so its lost acknowledgement was not tested")
	}
	if _, err := ReadPointer(t.Context(), st); err != nil {
		t.Fatalf("latest pointer after the run: %v", err)
	}
}

func TestPublisher_Run_BadInput(t *testing.T) {
	t.Parallel()
	st, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := newPublisher(t, testConfig(t), st)
	tests := []struct {
		name  string
		state ipmodel.State
		date  string
		want  string
	}{
		{"no state", nil, "2026-11-23", "no IP intelligence state"},
		{"bad date", gen.New(1, 1), "2026-13-01", "not a calendar day"},
		{"date shape", gen.New(1, 1), "23.11.2026", "want YYYY-MM-DD"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Run(t.Context(), tc.state, tc.date)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// badState yields records that cannot be placed in a tree.
type badState struct{ gen.State }

func (b *badState) Hosts(ctx context.Context, fn func(ipmodel.Record) error) error {
	for _, ip := range []string{"not-an-ip", "fe80::1%eth0", "::ffff:8.8.8.8"} {
		if err := fn(ipmodel.Record{IP: ip, Classifications: []string{"vpn"}, Sources: []string{"x"}}); err != nil {
			return err
		}
	}
	return nil
}

func (b *badState) Ranges(ctx context.Context, fn func(ipmodel.Record) error) error {
	return fn(ipmodel.Record{IP: "1.2.3.4", Network: "1.2.3.4/33"})
}

func TestBuild_SkipsBadRecords(t *testing.T) {
	t.Parallel()
	m := &Manifest{SnapshotDate: "2026-11-23"}
	files, err := Build(t.Context(), &badState{}, t.TempDir(), BuildOptions{Formats: []string{FormatNDJSON, FormatMMDB}}, m)
	if err != nil {
		t.Fatal(err)
	}
	if m.Skipped != 3 || m.Hosts != 1 || m.Ranges != 0 {
		t.Fatalf("manifest counts = %+v", m)
	}
	for _, f := range files {
		if f.Rows != 1 {
			t.Fatalf("%s rows = %d", f.Name, f.Rows)
		}
	}
}

func TestBuild_Cancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	before := runtime.NumGoroutine()
	cancel()
	_, err := Build(ctx, gen.New(100000, 1), t.TempDir(), BuildOptions{}, &Manifest{SnapshotDate: "2026-11-23"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("goroutines: %d before, %d after", before, n)
	}
}

func TestLatest_Invalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pointer string
		want    error
	}{
		{"absent", "", ErrNoSnapshot},
		{"not json", "{", ErrInvalid},
		{"bad date", `{"snapshot_date":"2026-02-30","manifest":"snapshots/2026-02-30/manifest.json"}`, ErrInvalid},
		{"key elsewhere", `{"snapshot_date":"2026-11-23","manifest":"other/manifest.json"}`, ErrInvalid},
		{"manifest missing", `{"snapshot_date":"2026-11-23","manifest":"snapshots/2026-11-23/manifest.json"}`, objstore.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := objstore.NewFolder(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if tc.pointer != "" {
				if _, err := st.Put(t.Context(), LatestKey, strings.NewReader(tc.pointer), int64(len(tc.pointer)), "application/json"); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := Latest(t.Context(), st); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("invalid pointer is replaced by the next publish", func(t *testing.T) {
		st, _ := objstore.NewFolder(t.TempDir())
		if _, err := st.Put(t.Context(), LatestKey, strings.NewReader("{"), 1, "application/json"); err != nil {
			t.Fatal(err)
		}
		if _, err := newPublisher(t, testConfig(t), st).Run(t.Context(), gen.New(50, 1), "2026-11-23"); err != nil {
			t.Fatal(err)
		}
		if m, err := Latest(t.Context(), st); err != nil || m.SnapshotDate != "2026-11-23" {
			t.Fatalf("latest = %+v, %v", m, err)
		}
	})
	t.Run("other schema major version", func(t *testing.T) {
		st, _ := objstore.NewFolder(t.TempDir())
		if _, err := newPublisher(t, testConfig(t), st).Run(t.Context(), gen.New(50, 1), "2026-11-23"); err != nil {
			t.Fatal(err)
		}
		m, _ := Latest(t.Context(), st)
		m.SchemaVersion = "2.0.0"
		b, _ := json.Marshal(m)
		if _, err := st.Put(t.Context(), m.Key, strings.NewReader(string(b)), int64(len(b)), "application/json"); err != nil {
			t.Fatal(err)
		}
		if _, err := Latest(t.Context(), st); !errors.Is(err, ErrInvalid) {
			t.Fatalf("err = %v", err)
		}
	})
}
