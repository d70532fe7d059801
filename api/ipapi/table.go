package ipapi

import (
	"bufio"
	"context"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
)

// CSVHeader is the header row of the CSV export (docs/ip-api.md).
const CSVHeader = "ip,network,classifications,provider,confidence,first_seen,last_seen,asset_count\r\n"

// Table is a snapshot's records in column form for the CSV export: the
// filter columns, and each row's CSV text up to (not including) its
// asset_count, rendered once at load. An export scans the filter columns and
// copies matching text to the wire, so it streams at memory speed and its
// memory does not depend on the number of rows asked for.
//
// A loaded snapshot's table lives in memory-mapped files of the snapshot
// cache folder (fileTableBuilder), so the heap does not grow with the rows;
// TableBuilder builds one on the heap (tests, small data).
type Table struct {
	class []uint8   // bit i = ipmodel.Classes[i]
	conf  []float64 // record confidence
	last  []int64   // last_seen, Unix seconds (math.MinInt64 when unknown)
	// assets counts a row's assets (of the audience's build: only those
	// its tiers may see).
	assets []uint16
	text   []byte
	ends   []uint64 // row i's text is text[ends[i-1]:ends[i]]
	// owner holds the maps the columns live in (nil on the heap): see
	// mapping. Methods that read the columns keep t alive to their end.
	owner *mapping
	// built, when not nil, is closed once the table is built in the
	// background (pendingTable): the columns and err are set before, and
	// read only after it closes. A nil built is a table built at once.
	built chan struct{}
	err   error
}

// pendingTable returns a table that finish fills later: the export table of
// a snapshot swapped in before it was built (docs/ip-api.md).
func pendingTable() *Table { return &Table{built: make(chan struct{})} }

// finish sets a pending table's columns to src's, or its failure to err,
// and wakes every Wait. It is called once.
func (t *Table) finish(src *Table, err error) {
	if err == nil && src != nil {
		t.class, t.conf, t.last, t.assets, t.text, t.ends, t.owner = src.class, src.conf, src.last, src.assets, src.text, src.ends, src.owner
	}
	t.err = err
	close(t.built)
}

// Wait returns once the table is built (nil), its build failed (the
// build's error) or ctx ended first (ctx's error).
func (t *Table) Wait(ctx context.Context) error {
	if t.built == nil {
		return nil
	}
	select {
	case <-t.built:
		return t.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// status reports, without waiting, whether the table's build has ended
// and with what error (a table built at once is done without one).
func (t *Table) status() (done bool, err error) {
	if t.built == nil {
		return true, nil
	}
	select {
	case <-t.built:
		return true, t.err
	default:
		return false, nil
	}
}

// Ready reports, without waiting, whether the table is built and usable
// (false while its build runs and after it failed).
func (t *Table) Ready() bool {
	done, err := t.status()
	return done && err == nil
}

// failed reports whether the table's build has ended in a failure (without
// waiting for a build still running).
func (t *Table) failed() bool {
	_, err := t.status()
	return err != nil
}

// Len returns the number of rows, waiting for a table still being built
// (0 when its build failed).
func (t *Table) Len() int {
	if t.built != nil {
		<-t.built
	}
	return len(t.ends)
}

// tableRow is one row's columns and text, rendered from a record's parts.
type tableRow struct {
	class  uint8
	conf   float64
	last   int64
	assets uint16
	text   []byte
}

// renderRow renders a row from its parts into r, reusing r.text's memory;
// assets counts the row's assets.
func renderRow(r *tableRow, ip, network string, classes []string, provider *string, confidence float64, firstSeen, lastSeen string, assets int) {
	var mask uint8
	for i, c := range ipmodel.Classes {
		if slices.Contains(classes, c) {
			mask |= 1 << i
		}
	}
	last := int64(math.MinInt64)
	if ts, err := time.Parse(time.RFC3339, lastSeen); err == nil {
		last = ts.Unix()
	}
	buf := r.text[:0]
	if ip == "" && network != "" {
		ip, _, _ = strings.Cut(network, "/")
	}
	buf = appendCSVField(buf, ip)
	buf = append(buf, ',')
	buf = appendCSVField(buf, network)
	buf = append(buf, ',')
	for i, c := range canonicalClasses(classes) {
		if i > 0 {
			buf = append(buf, ';')
		}
		buf = appendCSVField(buf, c)
	}
	buf = append(buf, ',')
	if provider != nil {
		buf = appendCSVField(buf, *provider)
	}
	buf = append(buf, ',')
	buf = strconv.AppendFloat(buf, confidence, 'f', -1, 64)
	buf = append(buf, ',')
	buf = appendCSVField(buf, firstSeen)
	buf = append(buf, ',')
	buf = appendCSVField(buf, lastSeen)
	buf = append(buf, ',')
	*r = tableRow{class: mask, conf: confidence, last: last, assets: clampU16(assets), text: buf}
}

// rowSink takes export rows one at a time: TableBuilder and
// fileTableBuilder.
type rowSink interface {
	add(ip, network string, classes []string, provider *string, confidence float64, firstSeen, lastSeen string, assets int)
}

// TableBuilder builds a Table on the heap one record at a time.
type TableBuilder struct {
	t   Table
	row tableRow
}

// Add appends a record (a host, or a range with Network set).
func (b *TableBuilder) Add(r *ipmodel.Record) {
	b.add(r.IP, r.Network, r.Classifications, r.Provider, r.Confidence, r.FirstSeen, r.LastSeen, len(r.Assets))
}

// add appends one row from its parts; assets counts the row's assets.
func (b *TableBuilder) add(ip, network string, classes []string, provider *string, confidence float64, firstSeen, lastSeen string, assets int) {
	renderRow(&b.row, ip, network, classes, provider, confidence, firstSeen, lastSeen, assets)
	t := &b.t
	t.text = append(t.text, b.row.text...)
	t.ends = append(t.ends, uint64(len(t.text)))
	t.class = append(t.class, b.row.class)
	t.conf = append(t.conf, b.row.conf)
	t.last = append(t.last, b.row.last)
	t.assets = append(t.assets, b.row.assets)
}

// Table returns the built table.
func (b *TableBuilder) Table() (*Table, error) {
	t := b.t
	b.t = Table{}
	return &t, nil
}

func clampU16(n int) uint16 {
	if n > math.MaxUint16 {
		return math.MaxUint16
	}
	return uint16(n)
}

// appendCSVField appends s quoted per RFC 4180 when it needs quoting.
func appendCSVField(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// Filter selects export rows. Zero values select everything.
type Filter struct {
	// Class, when non-zero, is the bit of the classification rows must have.
	Class uint8
	// MinConfidence is the lowest record confidence kept.
	MinConfidence float64
	// LastSeenFrom, when set, keeps rows last seen at or after it (Unix seconds).
	LastSeenFrom int64
	HasLastSeen  bool
}

// classBit returns the Filter.Class bit of a classification name.
func classBit(name string) uint8 {
	for i, c := range ipmodel.Classes {
		if c == name {
			return 1 << i
		}
	}
	return 0
}

// WriteCSV writes the header and up to limit matching rows to w, in the
// snapshot's order, and returns the number of rows written. A table still
// being built is waited for first (Wait); nothing is written when that
// fails. It checks ctx between chunks, so a client that goes away stops
// the scan.
func (t *Table) WriteCSV(ctx context.Context, w io.Writer, f Filter, limit int) (int, error) {
	if err := t.Wait(ctx); err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := bw.WriteString(CSVHeader); err != nil {
		return 0, err
	}
	defer runtime.KeepAlive(t) // the maps stay until the scan ends
	n := 0
	num := make([]byte, 0, 8) // one scratch buffer: no allocation per row
	var start uint64
	for i := 0; i < len(t.ends) && n < limit; i++ {
		end := t.ends[i]
		if i&4095 == 0 && ctx.Err() != nil {
			return n, ctx.Err()
		}
		if (f.Class == 0 || t.class[i]&f.Class != 0) &&
			t.conf[i] >= f.MinConfidence &&
			(!f.HasLastSeen || t.last[i] >= f.LastSeenFrom) {
			if _, err := bw.Write(t.text[start:end]); err != nil {
				return n, err
			}
			line := strconv.AppendUint(num[:0], uint64(t.assets[i]), 10)
			line = append(line, '\r', '\n') // RFC 4180, as the snapshot CSV
			if _, err := bw.Write(line); err != nil {
				return n, err
			}
			n++
		}
		start = end
	}
	return n, bw.Flush()
}

// Example returns the address of the first host row with assets (or of the
// first row), for the hints printed at start; "" for an empty table. A
// table still being built is waited for ("" when its build failed).
func (t *Table) Example() string {
	if t.built != nil {
		<-t.built
	}
	defer runtime.KeepAlive(t)
	pick := -1
	for i := range t.ends {
		if t.assets[i] > 0 {
			pick = i
			break
		}
	}
	if pick < 0 {
		if len(t.ends) == 0 {
			return ""
		}
		pick = 0
	}
	var start uint64
	if pick > 0 {
		start = t.ends[pick-1]
	}
	ip, _, _ := strings.Cut(string(t.text[start:t.ends[pick]]), ",")
	return ip
}
