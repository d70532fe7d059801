package ipapi

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
)

func TestExportCSV_Filters(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	cases := []struct {
		name, query, tier string
		wantIPs           []string
		wantLimit         string
	}{
		{"everything", "", "pro", []string{"198.51.100.7", "2001:db8::5", "203.0.113.0", "203.0.113.9", "192.0.2.44", "192.0.2.80", "198.51.100.200"}, "100000"},
		{"limit", "limit=2", "pro", []string{"198.51.100.7", "2001:db8::5"}, "2"},
		{"classification", "classification=hosting", "pro", []string{"198.51.100.7", "203.0.113.0"}, "100000"},
		{"min_confidence", "min_confidence=0.9", "pro", []string{"198.51.100.7", "203.0.113.0", "192.0.2.80"}, "100000"},
		{"last_seen_after is exclusive", "last_seen_after=2026-11-21", "pro", []string{"203.0.113.0", "192.0.2.80"}, "100000"},
		{"combined", "classification=vpn&min_confidence=0.6&last_seen_after=2026-11-01&limit=1", "pro", []string{"198.51.100.7"}, "1"},
		{"no match", "classification=relay", "pro", nil, "100000"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, f.srv.URL, "GET", PathCSV+"?"+tt.query, "", key(tt.tier)...)
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if got := r.header.Get("X-Svc-Row-Limit"); got != tt.wantLimit {
				t.Errorf("X-Svc-Row-Limit %q, want %q", got, tt.wantLimit)
			}
			rows, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
			if err != nil {
				t.Fatalf("not RFC 4180: %v", err)
			}
			if strings.Join(rows[0], ",")+"\r\n" != CSVHeader {
				t.Fatalf("header %v", rows[0])
			}
			var ips []string
			for _, row := range rows[1:] {
				if len(row) != 8 {
					t.Fatalf("row %v has %d fields", row, len(row))
				}
				ips = append(ips, row[0])
			}
			if !reflect.DeepEqual(ips, tt.wantIPs) {
				t.Errorf("ips %v, want %v", ips, tt.wantIPs)
			}
		})
	}
}

func TestExportCSV_Columns(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	for _, tt := range []struct{ tier, want7, wantRange string }{
		{"pro", "198.51.100.7,,vpn;hosting,Acme Cloud,0.92,2026-10-01T00:00:00Z,2026-11-20T12:00:00Z,1",
			`203.0.113.0,203.0.113.0/24,hosting,"""Quoted"" Hosting, Inc.",0.95,2026-01-01T00:00:00Z,2026-11-22T00:00:00Z,0`},
		{"enterprise", "198.51.100.7,,vpn;hosting,Acme Cloud,0.92,2026-10-01T00:00:00Z,2026-11-20T12:00:00Z,2", ""},
	} {
		r := call(t, f.srv.URL, "GET", PathCSV, "", key(tt.tier)...)
		lines := strings.Split(string(r.body), "\r\n")
		if lines[1] != tt.want7 {
			t.Errorf("%s: row\n got %s\nwant %s", tt.tier, lines[1], tt.want7)
		}
		if tt.wantRange != "" && lines[3] != tt.wantRange {
			t.Errorf("%s: range row\n got %s\nwant %s", tt.tier, lines[3], tt.wantRange)
		}
	}
}

func TestExportCSV_Validation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	cases := []struct{ query, loc, typ, limit string }{
		{"classification=residential_proxy", "classification", "enum", "100000"},
		{"min_confidence=1.01", "min_confidence", "less_than_equal", "100000"},
		{"last_seen_after=2026-13-01", "last_seen_after", "date_from_datetime_parsing", "100000"},
		{"last_seen_after=2026-1-1", "last_seen_after", "date_from_datetime_parsing", "100000"},
		{"limit=1000001", "limit", "less_than_equal", "100000"},
		{"limit=0", "limit", "greater_than_equal", "100000"},
		{"limit=ten", "limit", "int_parsing", "100000"},
		{"limit=5&min_confidence=x", "min_confidence", "float_parsing", "5"},
	}
	for _, tt := range cases {
		t.Run(tt.query, func(t *testing.T) {
			r := call(t, f.srv.URL, "GET", PathCSV+"?"+tt.query, "", key("pro")...)
			if r.status != 422 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if r.header.Get("X-Svc-Row-Limit") != tt.limit {
				t.Errorf("X-Svc-Row-Limit %q, want %s", r.header.Get("X-Svc-Row-Limit"), tt.limit)
			}
			body := r.json(t)
			d := body["detail"].([]any)[0].(map[string]any)
			if fmt.Sprint(d["loc"]) != "[query "+tt.loc+"]" || d["type"] != tt.typ {
				t.Errorf("detail %v", d)
			}
		})
	}
}

// bigTable builds a table of n synthetic rows.
func bigTable(tb testing.TB, n int) *Table {
	tb.Helper()
	var b TableBuilder
	p := "Acme Cloud"
	for i := range n {
		r := ipmodel.Record{IP: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), Classifications: []string{ipmodel.Classes[i%6]},
			Provider: &p, Confidence: float64(i%100) / 100, FirstSeen: "2026-01-01T00:00:00Z", LastSeen: "2026-11-20T00:00:00Z",
			Assets: make([]ipmodel.Asset, i%3)}
		b.Add(&r)
	}
	t, err := b.Table()
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// blockingWriter is a ResponseWriter whose first Write waits until the
// test has seen it, to observe the handler mid-export.
type blockingWriter struct {
	h       http.Header
	first   chan int
	release chan struct{}
	n       int
}

func (w *blockingWriter) Header() http.Header { return w.h }
func (w *blockingWriter) WriteHeader(int)     {}
func (w *blockingWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		w.first <- len(p)
		<-w.release
	}
	w.n += len(p)
	return len(p), nil
}

// TestExportCSV_Streams shows that the first rows leave before the export
// is complete, and that the memory an export allocates does not grow with
// its limit.
func TestExportCSV_Streams(t *testing.T) {
	tbl := bigTable(t, 200_000)
	svc := New(Options{InternalKey: testKey})
	svc.Swap(sameView(Manifest{SnapshotDate: "2026-11-23"}, NewMemIndex(nil), tbl))
	mux := http.NewServeMux()
	svc.Mount(mux)

	w := &blockingWriter{h: http.Header{}, first: make(chan int), release: make(chan struct{})}
	req := httptest.NewRequest("GET", PathCSV+"?limit=200000", nil)
	req.Header.Set("X-Internal-Key", testKey)
	req.Header.Set("X-Tier", "pro")
	done := make(chan struct{})
	go func() { mux.ServeHTTP(w, req); close(done) }()
	var first int
	select {
	case first = <-w.first:
	case <-time.After(10 * time.Second):
		t.Fatal("no bytes written")
	}
	select {
	case <-done:
		t.Fatal("handler finished before its first bytes were taken")
	default:
	}
	close(w.release)
	<-done
	if first >= w.n/4 {
		t.Errorf("first write %d bytes of %d: not streamed", first, w.n)
	}

	alloc := func(limit int) uint64 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		n, err := tbl.WriteCSV(context.Background(), io.Discard, Filter{}, limit)
		runtime.ReadMemStats(&b)
		if err != nil || n != limit {
			t.Fatalf("wrote %d rows (%v), want %d", n, err, limit)
		}
		return b.TotalAlloc - a.TotalAlloc
	}
	small, large := alloc(10), alloc(200_000)
	if large > 4*small+(256<<10) {
		t.Errorf("allocated %d bytes for 10 rows but %d for 200000: grows with limit", small, large)
	}
}

func TestTable_Example(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		recs []ipmodel.Record
		want string
	}{
		{"empty", nil, ""},
		{"first with assets", testRecords(t), "198.51.100.7"},
		{"without assets skipped", []ipmodel.Record{testRecords(t)[2], testRecords(t)[3]}, "203.0.113.9"},
		{"none with assets", []ipmodel.Record{testRecords(t)[2]}, "203.0.113.0"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var b TableBuilder
			for i := range tt.recs {
				b.Add(&tt.recs[i])
			}
			tbl, err := b.Table()
			if err != nil {
				t.Fatal(err)
			}
			if got := tbl.Example(); got != tt.want {
				t.Errorf("Example() = %q, want %q", got, tt.want)
			}
		})
	}
}
