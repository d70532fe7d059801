package publish

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/publish/gen"
)

// publishAt publishes state as date with the clock at 03:00 that day.
func publishAt(t *testing.T, p *Publisher, state ipmodel.State, date string) *Manifest {
	t.Helper()
	d, _ := time.Parse(DateFormat, date)
	p.Now = func() time.Time { return d.Add(3 * time.Hour) }
	res, err := p.Run(t.Context(), state, date)
	if err != nil {
		t.Fatal(err)
	}
	return res.Manifest
}

func fetch(t *testing.T, st objstore.Store, f File, dir string) string {
	t.Helper()
	path := filepath.Join(dir, f.Name)
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if err := Download(t.Context(), st, f, fh); err != nil {
		t.Fatal(err)
	}
	return path
}

func gunzipAll(t *testing.T, path string) []byte {
	t.Helper()
	b, err := io.ReadAll(gunzip(t, path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustFile(t *testing.T, m *Manifest, format string, a ipmodel.Audience) File {
	t.Helper()
	f, ok := m.FileFor(format, a)
	if !ok {
		t.Fatalf("manifest %s has no %s file for %s: %+v", m.SnapshotDate, format, a, m.Files)
	}
	return f
}

func TestPublisher_Run_Delta(t *testing.T) {
	t.Parallel()
	base := gen.New(3000, 7)
	next := &gen.Churned{Base: base, Every: 300}
	for _, sc := range stores {
		t.Run(sc.name, func(t *testing.T) {
			st := sc.open(t)
			p := newPublisher(t, testConfig(t), st)
			m1 := publishAt(t, p, base, "2026-11-21")
			if m1.DeltaBase != nil || !strings.Contains(m1.DeltaNote, "no earlier snapshot") {
				t.Fatalf("first snapshot: delta_base %+v, note %q", m1.DeltaBase, m1.DeltaNote)
			}
			for _, f := range m1.Files {
				if f.Format == FormatNDJSONDelta || f.Format == FormatParquetDelta {
					t.Fatalf("first snapshot has a delta file: %+v", f)
				}
			}
			// 2026-11-22 has no snapshot: a gap of one day.
			m2 := publishAt(t, p, next, "2026-11-23")
			want := DeltaBase{SnapshotDate: "2026-11-21", BuildID: m1.BuildID, Manifest: m1.Key, GapDays: 1}
			if m2.DeltaBase == nil || *m2.DeltaBase != want || m2.DeltaNote != "" {
				t.Fatalf("delta_base = %+v, want %+v (note %q)", m2.DeltaBase, want, m2.DeltaNote)
			}
			wantOps := DeltaOps{Add: int64(next.Added()), Change: int64(base.NHosts/300 + base.NRanges/300 + 1), Remove: int64(base.NHosts / 300)}
			for _, a := range []ipmodel.Audience{ipmodel.AudiencePro, ipmodel.AudienceEnterprise} {
				for _, format := range DeltaFormats {
					f := mustFile(t, m2, format, a)
					if f.Ops == nil || f.Ops.Add != wantOps.Add || f.Ops.Remove != wantOps.Remove || f.Ops.Change < wantOps.Change || f.Rows != f.Ops.Add+f.Ops.Change+f.Ops.Remove {
						t.Errorf("%s: rows %d ops %+v, want add %d, remove %d, change >= %d", f.Name, f.Rows, f.Ops, wantOps.Add, wantOps.Remove, wantOps.Change)
					}
				}
			}
			if _, ok := m2.FileFor(FormatNDJSONDelta, ipmodel.AudienceFree); ok {
				t.Fatal("the free build has a delta (it has no NDJSON)")
			}
			dir := download(t, st, m2)
			if sc.name == "folder" {
				// The same files through the S3 store are read alike; check
				// their content once.
				checkDelta(t, st, m1, m2, dir)
			}
		})
	}
}

// checkDelta checks the delta files of m2 against the full files of m1
// and m2: netintel's apply and DuckDB's SQL from docs/snapshot.md both
// rebuild the new full file.
func checkDelta(t *testing.T, st objstore.Store, m1, m2 *Manifest, dir2 string) {
	dir1 := t.TempDir()
	for _, a := range []ipmodel.Audience{ipmodel.AudiencePro, ipmodel.AudienceEnterprise} {
		t.Run(a.String(), func(t *testing.T) {
			baseND := fetch(t, st, mustFile(t, m1, FormatNDJSON, a), dir1)
			newND := filepath.Join(dir2, mustFile(t, m2, FormatNDJSON, a).Name)
			deltaND := filepath.Join(dir2, mustFile(t, m2, FormatNDJSONDelta, a).Name)
			t.Run("key order", func(t *testing.T) {
				sc := bufio.NewScanner(bytes.NewReader(gunzipAll(t, newND)))
				sc.Buffer(make([]byte, 1<<20), 16<<20)
				var prev SortKey
				n := 0
				for sc.Scan() {
					k, _, err := KeyOfLine(sc.Bytes())
					if err != nil {
						t.Fatal(err)
					}
					if n > 0 && bytes.Compare(prev[:], k[:]) >= 0 {
						t.Fatalf("line %d is not after line %d in key order", n+1, n)
					}
					prev = k
					n++
				}
				if int64(n) != mustFile(t, m2, FormatNDJSON, a).Rows {
					t.Fatalf("%d lines", n)
				}
			})
			t.Run("lines", func(t *testing.T) {
				sc := bufio.NewScanner(bytes.NewReader(gunzipAll(t, deltaND)))
				sc.Buffer(make([]byte, 1<<20), 16<<20)
				ops := map[string]int{}
				for sc.Scan() {
					var raw map[string]json.RawMessage
					if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
						t.Fatal(err)
					}
					var l deltaLine
					_ = json.Unmarshal(sc.Bytes(), &l)
					ops[l.Op]++
					switch l.Op {
					case OpAdd:
						if len(raw) != 3 || l.Record == nil {
							t.Fatalf("add line %s", sc.Bytes())
						}
					case OpRemove:
						if len(raw) != 2 || l.Key == "" {
							t.Fatalf("remove line %s", sc.Bytes())
						}
					case OpChange:
						if len(raw) != 4 || len(l.Changed) == 0 {
							t.Fatalf("change line %s", sc.Bytes())
						}
						if !strings.Contains(l.Key, "/") && (l.Changed[0] != "confidence" || l.Changed[1] != "last_seen") {
							t.Fatalf("host change names %v, want [confidence last_seen ...]", l.Changed)
						}
					default:
						t.Fatalf("op %q", l.Op)
					}
				}
				if ops[OpAdd] == 0 || ops[OpChange] == 0 || ops[OpRemove] == 0 {
					t.Fatalf("ops %v", ops)
				}
			})
			t.Run("apply", func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "rebuilt.ndjson.gz")
				h, err := ApplyDelta(baseND, deltaND, out)
				if err != nil {
					t.Fatal(err)
				}
				if h.SnapshotDate != m2.SnapshotDate || h.Audience != a.String() {
					t.Fatalf("header %+v", h)
				}
				got, want := gunzipAll(t, out), gunzipAll(t, newND)
				if !bytes.Equal(got, want) {
					t.Fatalf("apply gave %d bytes, the full file has %d", len(got), len(want))
				}
				sum := sha256.Sum256(got)
				if hex.EncodeToString(sum[:]) != mustFile(t, m2, FormatNDJSON, a).ContentSHA256 {
					t.Fatal("content_sha256 of the full NDJSON is not its lines' SHA-256")
				}
				// The result is a base for the next delta: it names its snapshot.
				fh, _ := os.Open(out)
				defer fh.Close()
				zr, err := gzip.NewReader(fh)
				if err != nil {
					t.Fatal(err)
				}
				var fhdr FileHeader
				if err := json.Unmarshal([]byte(zr.Comment), &fhdr); err != nil || fhdr.SnapshotDate != m2.SnapshotDate || fhdr.BuildID != m2.BuildID || fhdr.Kind != HeaderFull {
					t.Fatalf("header of the result %q: %v", zr.Comment, err)
				}
			})
			t.Run("wrong base", func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out.ndjson.gz")
				_, err := ApplyDelta(newND, deltaND, out)
				if !errors.Is(err, ErrWrongBase) || !strings.Contains(err.Error(), m1.SnapshotDate) || !strings.Contains(err.Error(), m2.SnapshotDate) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err = %v, want one line naming %s and %s", err, m1.SnapshotDate, m2.SnapshotDate)
				}
				if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 0 {
					t.Fatalf("wrote %v", ents)
				}
			})
			t.Run("base without header", func(t *testing.T) {
				// Recompressed by another tool: the lines decide.
				plain := filepath.Join(t.TempDir(), "plain.ndjson.gz")
				regzip(t, newND, plain)
				out := filepath.Join(t.TempDir(), "out.ndjson.gz")
				if _, err := ApplyDelta(plain, deltaND, out); !errors.Is(err, ErrWrongBase) || !strings.Contains(err.Error(), m1.SnapshotDate) {
					t.Fatalf("err = %v", err)
				}
				if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("out written: %v", err)
				}
				regzip(t, baseND, plain)
				if _, err := ApplyDelta(plain, deltaND, out); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(gunzipAll(t, out), gunzipAll(t, newND)) {
					t.Fatal("apply to a recompressed base differs")
				}
			})
			t.Run("duckdb", func(t *testing.T) {
				basePQ := fetch(t, st, mustFile(t, m1, FormatParquet, a), dir1)
				newPQ := filepath.Join(dir2, mustFile(t, m2, FormatParquet, a).Name)
				deltaPQ := filepath.Join(dir2, mustFile(t, m2, FormatParquetDelta, a).Name)
				// The SQL of docs/snapshot.md, "Applying a delta".
				res := duckdb(t,
					`CREATE TABLE ipintel AS SELECT * FROM read_parquet('`+basePQ+`')`,
					`DELETE FROM ipintel WHERE coalesce(network, ip) IN (SELECT key FROM read_parquet('`+deltaPQ+`'))`,
					`INSERT INTO ipintel SELECT unnest(record) FROM read_parquet('`+deltaPQ+`') WHERE op <> 'remove'`,
					`SELECT (SELECT count(*) FROM ipintel) AS n,
					        (SELECT count(*) FROM (SELECT * FROM ipintel EXCEPT ALL SELECT * FROM read_parquet('`+newPQ+`'))) AS extra,
					        (SELECT count(*) FROM (SELECT * FROM read_parquet('`+newPQ+`') EXCEPT ALL SELECT * FROM ipintel)) AS missing`,
				)
				got := res[3][0]
				if toInt(got["n"]) != mustFile(t, m2, FormatParquet, a).Rows || toInt(got["extra"]) != 0 || toInt(got["missing"]) != 0 {
					t.Fatalf("duckdb: %v (want n = %d, no extra, none missing)", got, mustFile(t, m2, FormatParquet, a).Rows)
				}
			})
		})
	}
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case float64:
		return int64(x)
	case string:
		var n int64
		_ = json.Unmarshal([]byte(x), &n)
		return n
	}
	return -1
}

// regzip recompresses a gzip file without its header comment.
func regzip(t *testing.T, from, to string) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(gunzipAll(t, from))
	zw.Close()
	if err := os.WriteFile(to, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLineSorter_Each(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 500, 20000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			dir := t.TempDir()
			// A buffer of 256 bytes: about 10 lines a run, so 20,000 lines
			// make more runs than one merge reads (several rounds).
			s := newLineSorter(dir, 256)
			want := map[string]bool{}
			for i := 0; i < n; i++ {
				a := gen.HostAddr(i)
				line := `{"ip":"` + a.String() + `","n":` + strconv.Itoa(i) + `}`
				want[line] = true
				if err := s.add(MakeSortKey(netip.PrefixFrom(a, a.BitLen()), false), []byte(line)); err != nil {
					t.Fatal(err)
				}
			}
			if n == 20000 && len(s.runs) <= sortFanIn {
				t.Fatalf("%d runs: the test does not reach a second merge round", len(s.runs))
			}
			var prev SortKey
			got := 0
			err := s.each(func(k SortKey, line []byte) error {
				if got > 0 && bytes.Compare(prev[:], k[:]) >= 0 {
					t.Fatalf("line %d out of order", got)
				}
				if !want[string(line)] {
					t.Fatalf("line %q was not added (or twice)", line)
				}
				delete(want, string(line))
				prev = k
				got++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != n || len(want) != 0 {
				t.Fatalf("got %d lines of %d", got, n)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("runs left behind: %v", ents)
			}
		})
	}
}

func TestMakeSortKey_Order(t *testing.T) {
	t.Parallel()
	// In key order: IPv4 first, a range before what it contains, a range
	// before a host of the same address and length.
	keys := []struct {
		s      string
		range_ bool
	}{
		{"1.2.0.0/16", true}, {"1.2.3.0/24", true}, {"1.2.3.0/32", true}, {"1.2.3.0/32", false},
		{"1.2.3.4/32", false}, {"10.0.0.0/8", true}, {"2a00::/12", true}, {"2a00::1/128", false},
	}
	for i := 1; i < len(keys); i++ {
		a := MakeSortKey(netip.MustParsePrefix(keys[i-1].s), keys[i-1].range_)
		b := MakeSortKey(netip.MustParsePrefix(keys[i].s), keys[i].range_)
		if bytes.Compare(a[:], b[:]) >= 0 {
			t.Errorf("%v is not before %v", keys[i-1], keys[i])
		}
	}
}

func TestBuild_DeltaBaseFaults(t *testing.T) {
	t.Parallel()
	// A base that cannot serve as one gives no delta for its audience,
	// says why in delta_note, and the snapshot is built whole all the same.
	base := gen.New(2000, 3)
	dir1 := t.TempDir()
	build := func(unsorted bool) []File {
		files, err := Build(t.Context(), base, dir1, BuildOptions{Formats: []string{FormatNDJSON}, unsorted: unsorted}, &Manifest{SnapshotDate: "2026-11-21"})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	open := func(f File) func(context.Context) (io.ReadCloser, error) {
		return func(context.Context) (io.ReadCloser, error) { return os.Open(filepath.Join(dir1, f.Name)) }
	}
	tests := []struct {
		name     string
		unsorted bool
		src      func(f File) DeltaSource
		want     string
	}{
		{"published before deltas", true, func(f File) DeltaSource { return DeltaSource{File: f, Open: open(f)} }, "not in key order"},
		{"store down", false, func(f File) DeltaSource {
			return DeltaSource{File: f, Open: func(context.Context) (io.ReadCloser, error) { return nil, errors.New("connection refused") }}
		}, "connection refused"},
		{"lines do not match the manifest", false, func(f File) DeltaSource {
			f.ContentSHA256 = strings.Repeat("0", 64)
			return DeltaSource{File: f, Open: open(f)}
		}, "content checksum mismatch"},
		{"bytes do not match a manifest without content_sha256", false, func(f File) DeltaSource {
			f.ContentSHA256, f.SHA256 = "", strings.Repeat("0", 64)
			return DeltaSource{File: f, Open: open(f)}
		}, "checksum mismatch"},
		{"size does not match the manifest", false, func(f File) DeltaSource {
			f.Size++
			return DeltaSource{File: f, Open: open(f)}
		}, "checksum mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcs := map[ipmodel.Audience]DeltaSource{}
			for _, f := range build(tt.unsorted) {
				a, _ := ipmodel.ParseAudience(f.Audience)
				srcs[a] = tt.src(f)
			}
			m2 := &Manifest{SnapshotDate: "2026-11-22"}
			files, err := Build(t.Context(), &gen.Churned{Base: base, Every: 300}, t.TempDir(), BuildOptions{Formats: []string{FormatNDJSON, FormatParquet},
				DeltaBase: &DeltaBase{SnapshotDate: "2026-11-21"}, DeltaSources: srcs}, m2)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 4 || m2.DeltaBase != nil || !strings.Contains(m2.DeltaNote, tt.want) || !strings.Contains(m2.DeltaNote, "pro: no delta") {
				t.Fatalf("files %d, delta_base %+v, note %q", len(files), m2.DeltaBase, m2.DeltaNote)
			}
		})
	}
}
