package publish

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"net/netip"
	"os"
	"slices"
	"time"

	"github.com/maxmind/mmdbwriter/mmdbtype"

	"github.com/netintel/netintel/internal/ipmodel"
)

// mmdbWriter writes a GeoIP2-Anonymous-IP MMDB (IPv4 and IPv6 in one
// IPv6 tree) without holding its search tree in memory: memory stays
// flat however many networks go in (issue 33).
//
//  1. Write appends each record (spool.go's compact form) to a spool file
//     and a fixed-size entry (network, spool offset) to an external sort
//     (netSorter: sorted chunks spilled to disk as runs, merged at the
//     end).
//  2. Close walks the networks in sorted order (address, then shorter
//     prefix first) down the tree depth first (treeBuilder). Nested
//     networks form a stack of at most 129 levels, each holding the
//     merge of the networks around it (mergeRecords, widest first); a
//     leaf takes the value of the innermost, encoded once per level into
//     a data section spilled to a temp file. Nodes are numbered in the
//     order they complete (children before their parent) and appended to
//     a temp file; the root completes last.
//  3. The file is then written: the node file read backwards (so the root
//     is node 0, and a node's number is count-1 minus its completion
//     order), each record re-encoded with the smallest record size that
//     addresses nodes and data (24, 28 or 32 bits), the data section
//     copied, and the metadata mmdbwriter would write.
//
// The search tree is the one mmdbwriter builds for the same networks:
// a node wherever a network starts strictly inside, ::ffff:0:0/96 an
// alias of the IPv4 tree (::/96) and nothing else aliased, an IPv6
// network overlapping ::/96 left out (Write).
type mmdbWriter struct {
	w         io.Writer
	dir       string
	buildTime time.Time

	vals    *os.File // spooled records (spool.go)
	valsBuf *bufio.Writer
	valsLen int64
	sorter  *netSorter
	buf     []byte
	rows    int64
	// minRecordSize raises the record size (tests: every size is read
	// back alike); 0 picks the smallest that fits.
	minRecordSize int
}

// newMMDBWriter returns a writer of a GeoIP2-Anonymous-IP MMDB with IPv4
// and IPv6 in one tree; dir holds its temp files.
func newMMDBWriter(w io.Writer, dir string, buildTime time.Time) (*mmdbWriter, error) {
	f, err := os.CreateTemp(dir, "mmdb-values-*")
	if err != nil {
		return nil, fmt.Errorf("mmdb temp file: %w", err)
	}
	m := &mmdbWriter{w: w, dir: dir, buildTime: buildTime, vals: f, sorter: newNetSorter(dir, netSortChunk)}
	m.valsBuf = bufio.NewWriterSize(countWriter{f, &m.valsLen}, 1<<20)
	return m, nil
}

// mmdbDescription is the MMDB metadata's English description.
const mmdbDescription = "netintel IP intelligence: anonymity flags, remote-access assets and CVEs (schema " + ipmodel.SchemaVersion + ")"

type countWriter struct {
	w io.Writer
	n *int64
}

func (c countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	*c.n += int64(n)
	return n, err
}

// ipv4Mapped is the one block answered as the IPv4 address it embeds;
// ipv4Tree is where an IPv6 MMDB keeps IPv4 (::a.b.c.d).
var (
	ipv4Mapped = netip.MustParsePrefix("::ffff:0:0/96")
	ipv4Tree   = netip.MustParsePrefix("::/96")
)

// dataSectionSeparator sits between the search tree and the data section.
var dataSectionSeparator = make([]byte, 16)

var metadataMarker = []byte("\xAB\xCD\xEFMaxMind.com")

// Write takes one record: a range as its network, a host as a /32 or
// /128. Where networks overlap the values are merged (see mergeRecords),
// so a host inside a range carries both, whatever the order of Writes.
//
// An IPv6 network overlapping ::/96 is left out of the MMDB: an IPv6 MMDB
// keeps the IPv4 tree there, so a record of ::a.b.c.d (the deprecated
// IPv4-compatible form) would be answered for, and merged into, the IPv4
// address a.b.c.d. The other files keep it.
func (m *mmdbWriter) Write(r *ipmodel.Record, pfx netip.Prefix) error {
	if pfx.Addr().Is6() && pfx.Overlaps(ipv4Tree) {
		return nil
	}
	e := netEntry{off: m.valsLen + int64(m.valsBuf.Buffered()), host: r.Network == ""}
	pfx = pfx.Masked()
	if pfx.Addr().Is4() {
		a4 := pfx.Addr().As4()
		copy(e.addr[12:], a4[:])
		e.bits = uint8(96 + pfx.Bits())
	} else {
		e.addr = pfx.Addr().As16()
		e.bits = uint8(pfx.Bits())
	}
	m.buf = appendRecord(m.buf[:0], r)
	if len(m.buf) > math.MaxInt32 {
		return fmt.Errorf("mmdb: record %s too large", r.IP)
	}
	e.n = int32(len(m.buf))
	if _, err := m.valsBuf.Write(m.buf); err != nil {
		return fmt.Errorf("mmdb spool: %w", err)
	}
	if err := m.sorter.add(e); err != nil {
		return err
	}
	m.rows++
	return nil
}

// Rows is the number of records written.
func (m *mmdbWriter) Rows() int64 { return m.rows }

// Close writes the MMDB (see mmdbWriter) and removes the temp files.
func (m *mmdbWriter) Close() error {
	var temps []*os.File
	defer func() {
		m.sorter.remove()
		for _, f := range append(temps, m.vals) {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := m.valsBuf.Flush(); err != nil {
		return fmt.Errorf("mmdb spool: %w", err)
	}
	in, err := m.sorter.stream()
	if err != nil {
		return err
	}
	nodes, err := os.CreateTemp(m.dir, "mmdb-nodes-*")
	if err != nil {
		return fmt.Errorf("mmdb temp file: %w", err)
	}
	temps = append(temps, nodes)
	data, err := os.CreateTemp(m.dir, "mmdb-data-*")
	if err != nil {
		return fmt.Errorf("mmdb temp file: %w", err)
	}
	temps = append(temps, data)
	b := &treeBuilder{vals: m.vals, in: in, nodes: bufio.NewWriterSize(nodes, 1<<20), dw: newDataWriter(data), enc: newRecordEncoder(),
		dedupe: map[[2]uint64]int64{}, seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
	if err := b.next(); err != nil {
		return err
	}
	root, err := b.build([16]byte{}, 0)
	if err != nil {
		return err
	}
	if root&refKind != refNode || b.nodeCount == 0 || uint64(root&refValue) != b.nodeCount-1 {
		return errors.New("mmdb: tree has no root node")
	}
	if b.hasHead {
		return fmt.Errorf("mmdb: network %x/%d left unplaced", b.head.addr, b.head.bits)
	}
	if err := b.nodes.Flush(); err != nil {
		return fmt.Errorf("mmdb temp file: %w", err)
	}
	if err := b.dw.flush(); err != nil {
		return fmt.Errorf("mmdb temp file: %w", err)
	}
	return writeMMDBFile(m.w, nodes, b.nodeCount, data, b.dw.n, m.buildTime, m.minRecordSize)
}

// A ref is a record of the search tree while it is built: a node (by its
// completion order), data (by its data section offset) or empty.
type ref uint64

const (
	refEmpty ref = 0
	refNode  ref = 1 << 62
	refData  ref = 2 << 62
	refKind  ref = 3 << 62
	refValue ref = 1<<62 - 1
)

// maxDedupe bounds the table of data records by content: a value written
// before is pointed to again while the table holds it (it is cleared
// when full).
const maxDedupe = 1 << 16

// treeBuilder walks the sorted networks depth first (see mmdbWriter).
type treeBuilder struct {
	vals      *os.File
	in        *netStream
	head      netEntry
	hasHead   bool
	nodes     *bufio.Writer
	nodeCount uint64
	levels    []level
	dw        *dataWriter
	enc       *recordEncoder
	v4        ref // the record of ::/96, the IPv4 tree
	v4Set     bool
	dedupe    map[[2]uint64]int64
	seeds     [2]maphash.Seed
	scratch   []byte
	rec       []byte
}

// level is one network around the current position (with those of the
// same prefix): the merge of it and every wider one, and where its data
// is once written (offset + 1; 0 not yet).
type level struct {
	rec  ipmodel.Record
	data int64
}

var aliasAddr = ipv4Mapped.Addr().As16()

func (b *treeBuilder) next() error {
	e, ok, err := b.in.next()
	if err != nil {
		return err
	}
	b.head, b.hasHead = e, ok
	return nil
}

// inPrefix reports whether a is inside the prefix of addr p and length bits.
func inPrefix(a, p *[16]byte, bits int) bool {
	full := bits / 8
	if !bytes.Equal(a[:full], p[:full]) {
		return false
	}
	if rem := bits % 8; rem != 0 {
		mask := byte(0xff) << (8 - rem)
		return a[full]&mask == p[full]&mask
	}
	return true
}

// build returns the record of the prefix addr/bits (addr masked), writing
// the nodes and data below it.
func (b *treeBuilder) build(addr [16]byte, bits int) (ref, error) {
	if bits == 96 && addr == aliasAddr {
		// Only IPv4-mapped addresses are the IPv4 they embed: the alias
		// replaces whatever is there (ingest unmaps them, so nothing is).
		for b.hasHead && inPrefix(&b.head.addr, &addr, bits) {
			if err := b.next(); err != nil {
				return 0, err
			}
		}
		if !b.v4Set {
			return 0, errors.New("mmdb: alias before the IPv4 tree")
		}
		return b.v4, nil
	}
	pushed := 0
	for b.hasHead && int(b.head.bits) == bits && b.head.addr == addr {
		if err := b.push(b.head); err != nil {
			return 0, err
		}
		pushed++
		if err := b.next(); err != nil {
			return 0, err
		}
	}
	var r ref
	split := bits < 128 && b.hasHead && inPrefix(&b.head.addr, &addr, bits)
	if !split && bits < 96 && inPrefix(&aliasAddr, &addr, bits) {
		split = true // down to the alias
	}
	if split {
		// Both children from one call site: the runtime's allocation
		// profile keeps a record per distinct call stack, and two sites
		// would make every path down the tree a stack of its own (2^depth
		// records, never freed: memory that grew with the data).
		var kids [2]ref
		for side := range kids {
			child := addr
			if side == 1 {
				child[bits/8] |= 0x80 >> (bits % 8)
			}
			var err error
			if kids[side], err = b.build(child, bits+1); err != nil {
				return 0, err
			}
		}
		var err error
		if r, err = b.node(kids[0], kids[1]); err != nil {
			return 0, err
		}
	} else {
		var err error
		if r, err = b.leaf(); err != nil {
			return 0, err
		}
	}
	var zero [16]byte
	if (bits == 96 || (!split && bits < 96)) && inPrefix(&zero, &addr, bits) {
		b.v4, b.v4Set = r, true
	}
	b.levels = b.levels[:len(b.levels)-pushed]
	return r, nil
}

// push reads the record of e from the spool and adds its level.
func (b *treeBuilder) push(e netEntry) error {
	b.rec = slices.Grow(b.rec[:0], int(e.n))[:e.n]
	if _, err := b.vals.ReadAt(b.rec, e.off); err != nil {
		return fmt.Errorf("mmdb read spool: %w", err)
	}
	r, err := decodeRecord(b.rec)
	if err != nil {
		return err
	}
	if n := len(b.levels); n > 0 {
		r = mergeRecords(b.levels[n-1].rec, r)
	}
	b.levels = append(b.levels, level{rec: r})
	return nil
}

func (b *treeBuilder) node(left, right ref) (ref, error) {
	if b.nodeCount >= uint64(refValue) {
		return 0, errors.New("mmdb: too many nodes")
	}
	var buf [16]byte
	binary.LittleEndian.PutUint64(buf[:], uint64(left))
	binary.LittleEndian.PutUint64(buf[8:], uint64(right))
	if _, err := b.nodes.Write(buf[:]); err != nil {
		return 0, fmt.Errorf("mmdb temp file: %w", err)
	}
	r := refNode | ref(b.nodeCount)
	b.nodeCount++
	return r, nil
}

// leaf returns the record of a prefix no network starts inside: the
// innermost level's data, or empty.
func (b *treeBuilder) leaf() (ref, error) {
	if len(b.levels) == 0 {
		return refEmpty, nil
	}
	lv := &b.levels[len(b.levels)-1]
	if lv.data == 0 {
		off, err := b.data(&lv.rec)
		if err != nil {
			return 0, err
		}
		lv.data = off + 1
	}
	return refData | ref(lv.data-1), nil
}

// data writes r into the data section, or returns where an equal record
// (the ip, which the MMDB does not hold, aside) was written if the
// dedupe table holds it.
func (b *treeBuilder) data(r *ipmodel.Record) (int64, error) {
	ip := r.IP
	r.IP = ""
	b.scratch = appendRecord(b.scratch[:0], r)
	r.IP = ip
	key := [2]uint64{maphash.Bytes(b.seeds[0], b.scratch), maphash.Bytes(b.seeds[1], b.scratch)}
	if off, ok := b.dedupe[key]; ok {
		return off, nil
	}
	off := b.dw.n
	b.enc.base, b.enc.b = off, b.enc.b[:0]
	b.enc.record(r)
	if _, err := b.dw.Write(b.enc.b); err != nil {
		return 0, fmt.Errorf("mmdb data: %w", err)
	}
	if off >= int64(refValue) {
		return 0, errors.New("mmdb: data section too large")
	}
	if len(b.dedupe) >= maxDedupe {
		clear(b.dedupe)
	}
	b.dedupe[key] = off
	return off, nil
}

// writeMMDBFile writes the MMDB: the search tree from the node file
// (nodeCount nodes, in completion order), the separator, the data section
// (dataLen bytes) and the metadata, with the smallest record size of at
// least minRecordSize that addresses them.
func writeMMDBFile(w io.Writer, nodes *os.File, nodeCount uint64, data *os.File, dataLen int64, buildTime time.Time, minRecordSize int) error {
	maxRef := nodeCount + 16 + uint64(dataLen)
	var recordSize int
	switch {
	case maxRef < 1<<24 && minRecordSize <= 24:
		recordSize = 24
	case maxRef < 1<<28 && minRecordSize <= 28:
		recordSize = 28
	case maxRef < 1<<32:
		recordSize = 32
	default:
		return fmt.Errorf("mmdb: %d nodes and %d bytes of data exceed what 32-bit records address (about 4 GiB)", nodeCount, dataLen)
	}
	if nodeCount > math.MaxUint32 {
		return fmt.Errorf("mmdb: %d nodes exceed the format's limit", nodeCount)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	conv := func(r ref) (uint64, error) {
		v := uint64(r & refValue)
		switch r & refKind {
		case refEmpty:
			return nodeCount, nil
		case refNode:
			if v >= nodeCount {
				return 0, fmt.Errorf("mmdb: node %d of %d", v, nodeCount)
			}
			return nodeCount - 1 - v, nil
		case refData:
			return nodeCount + 16 + v, nil
		}
		return 0, fmt.Errorf("mmdb: bad record %x", uint64(r))
	}
	const chunk = 1 << 16 // nodes read at a time
	buf := make([]byte, chunk*16)
	out := make([]byte, 8)
	for end := nodeCount; end > 0; {
		start := end - min(end, chunk)
		b := buf[:(end-start)*16]
		if _, err := nodes.ReadAt(b, int64(start)*16); err != nil {
			return fmt.Errorf("mmdb read nodes: %w", err)
		}
		for i := len(b) - 16; i >= 0; i -= 16 {
			l, err := conv(ref(binary.LittleEndian.Uint64(b[i:])))
			if err != nil {
				return err
			}
			r, err := conv(ref(binary.LittleEndian.Uint64(b[i+8:])))
			if err != nil {
				return err
			}
			switch recordSize {
			case 24:
				out = append(out[:0], byte(l>>16), byte(l>>8), byte(l), byte(r>>16), byte(r>>8), byte(r))
			case 28:
				out = append(out[:0], byte(l>>16), byte(l>>8), byte(l), byte((l>>24)<<4|(r>>24)&0x0f), byte(r>>16), byte(r>>8), byte(r))
			default:
				out = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(out[:0], uint32(l)), uint32(r))
			}
			if _, err := bw.Write(out); err != nil {
				return fmt.Errorf("write mmdb: %w", err)
			}
		}
		end = start
	}
	if _, err := bw.Write(dataSectionSeparator); err != nil {
		return fmt.Errorf("write mmdb: %w", err)
	}
	if n, err := io.Copy(bw, io.NewSectionReader(data, 0, dataLen)); err != nil || n != dataLen {
		return fmt.Errorf("write mmdb data: %d of %d bytes: %w", n, dataLen, err)
	}
	if _, err := bw.Write(metadataMarker); err != nil {
		return fmt.Errorf("write mmdb: %w", err)
	}
	meta := mmdbtype.Map{
		"binary_format_major_version": mmdbtype.Uint16(2),
		"binary_format_minor_version": mmdbtype.Uint16(0),
		"build_epoch":                 mmdbtype.Uint64(max(buildTime.Unix(), 0)),
		"database_type":               mmdbtype.String(DatabaseType),
		"description":                 mmdbtype.Map{"en": mmdbtype.String(mmdbDescription)},
		"ip_version":                  mmdbtype.Uint16(6),
		"languages":                   mmdbtype.Slice{mmdbtype.String("en")},
		"node_count":                  mmdbtype.Uint32(nodeCount),
		"record_size":                 mmdbtype.Uint16(recordSize),
	}
	if _, err := meta.WriteTo(plainWriter{bw}); err != nil {
		return fmt.Errorf("write mmdb metadata: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write mmdb: %w", err)
	}
	return nil
}

// plainWriter encodes MMDB values without pointers (the metadata).
type plainWriter struct{ *bufio.Writer }

func (p plainWriter) WriteOrWritePointer(t mmdbtype.DataType) (int64, error) {
	return t.WriteTo(p)
}

// netEntry is one network to sort: its address in the IPv6 tree (IPv4 at
// ::a.b.c.d), prefix length there, whether it is a host, and its record
// in the spool (off is also the order of Writes).
//
// The order (address, shorter prefix first, a range before a host of the
// same prefix, then Writes) is the order of the merge: a record merges
// into the merge of the wider ones (a host record after the ranges, even
// a /32 one, as Build writes ranges first); a network written twice
// merges in the order of the Writes.
type netEntry struct {
	addr [16]byte
	bits uint8
	host bool
	n    int32
	off  int64
}

const netEntrySize = 16 + 1 + 1 + 4 + 8

func compareEntries(a, b netEntry) int {
	if c := bytes.Compare(a.addr[:], b.addr[:]); c != 0 {
		return c
	}
	if c := cmp.Compare(a.bits, b.bits); c != 0 {
		return c
	}
	if a.host != b.host {
		if a.host {
			return 1
		}
		return -1
	}
	return cmp.Compare(a.off, b.off)
}

// netSortChunk is how many entries (32 bytes each) are sorted in memory
// before they are spilled to disk as a run.
const netSortChunk = 1 << 18

// maxNetRuns is how many runs of one level the sorter keeps before it
// merges them into one run of the next level, so that open files and
// read buffers stay bounded (64 runs of 262,144 entries are 16 M
// networks; 64 of those a billion) and each entry is rewritten once per
// level.
const maxNetRuns = 64

// netSorter sorts network entries in bounded memory: chunks are sorted
// and written to run files, which stream merges.
type netSorter struct {
	dir  string
	max  int
	buf  []netEntry
	runs []netRun
}

// netRun is a sorted run file and its level (0: a chunk; n+1: the merge
// of maxNetRuns runs of level n).
type netRun struct {
	f     *os.File
	level int
}

func newNetSorter(dir string, chunk int) *netSorter {
	return &netSorter{dir: dir, max: max(chunk, 2)}
}

func (s *netSorter) add(e netEntry) error {
	if s.buf == nil {
		s.buf = make([]netEntry, 0, s.max)
	}
	s.buf = append(s.buf, e)
	if len(s.buf) == s.max {
		return s.spill()
	}
	return nil
}

func (s *netSorter) spill() error {
	slices.SortFunc(s.buf, compareEntries)
	f, err := os.CreateTemp(s.dir, "mmdb-sort-*")
	if err != nil {
		return fmt.Errorf("mmdb sort: %w", err)
	}
	s.runs = append(s.runs, netRun{f: f})
	bw := bufio.NewWriterSize(f, 1<<16)
	var b [netEntrySize]byte
	for _, e := range s.buf {
		putEntry(b[:], e)
		if _, err := bw.Write(b[:]); err != nil {
			return fmt.Errorf("mmdb sort: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("mmdb sort: %w", err)
	}
	s.buf = s.buf[:0]
	// Runs are appended in level order (a merge's result replaces the
	// newest runs), so full levels are at the end.
	for n := len(s.runs); n >= maxNetRuns && s.runs[n-maxNetRuns].level == s.runs[n-1].level; n = len(s.runs) {
		if err := s.mergeTail(maxNetRuns); err != nil {
			return err
		}
	}
	return nil
}

// mergeTail merges the last k runs into one of the next level.
func (s *netSorter) mergeTail(k int) error {
	tail := s.runs[len(s.runs)-k:]
	f, err := os.CreateTemp(s.dir, "mmdb-sort-*")
	if err != nil {
		return fmt.Errorf("mmdb sort: %w", err)
	}
	st, err := mergeNetRuns(tail)
	if err == nil {
		bw := bufio.NewWriterSize(f, 1<<16)
		var b [netEntrySize]byte
		for {
			e, ok, err2 := st.next()
			if err = err2; err != nil || !ok {
				break
			}
			putEntry(b[:], e)
			if _, err = bw.Write(b[:]); err != nil {
				break
			}
		}
		if err == nil {
			err = bw.Flush()
		}
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("mmdb sort: merge runs: %w", err)
	}
	level := tail[0].level + 1
	for _, r := range tail {
		r.f.Close()
		os.Remove(r.f.Name())
	}
	s.runs = append(s.runs[:len(s.runs)-k], netRun{f: f, level: level})
	return nil
}

func putEntry(b []byte, e netEntry) {
	copy(b, e.addr[:])
	b[16] = e.bits
	b[17] = 0
	if e.host {
		b[17] = 1
	}
	binary.LittleEndian.PutUint32(b[18:], uint32(e.n))
	binary.LittleEndian.PutUint64(b[22:], uint64(e.off))
}

func getEntry(b []byte) netEntry {
	var e netEntry
	copy(e.addr[:], b)
	e.bits = b[16]
	e.host = b[17] == 1
	e.n = int32(binary.LittleEndian.Uint32(b[18:]))
	e.off = int64(binary.LittleEndian.Uint64(b[22:]))
	return e
}

// remove deletes the run files.
func (s *netSorter) remove() {
	for _, r := range s.runs {
		r.f.Close()
		os.Remove(r.f.Name())
	}
	s.runs = nil
	s.buf = nil
}

// stream returns the entries in order: from memory if they never filled
// a chunk, else merged from the runs.
func (s *netSorter) stream() (*netStream, error) {
	if len(s.runs) == 0 {
		slices.SortFunc(s.buf, compareEntries)
		return &netStream{mem: s.buf}, nil
	}
	if len(s.buf) > 0 {
		if err := s.spill(); err != nil {
			return nil, err
		}
	}
	s.buf = nil
	return mergeNetRuns(s.runs)
}

// mergeNetRuns streams the entries of sorted runs in order.
func mergeNetRuns(runs []netRun) (*netStream, error) {
	st := &netStream{heap: netRunHeap{}}
	for _, run := range runs {
		r := &netRunReader{r: bufio.NewReaderSize(io.NewSectionReader(run.f, 0, math.MaxInt64), 1<<16)}
		ok, err := r.read()
		if err != nil {
			return nil, err
		}
		if ok {
			st.heap = append(st.heap, r)
		}
	}
	heap.Init(&st.heap)
	return st, nil
}

// netStream yields the sorted entries.
type netStream struct {
	mem  []netEntry
	heap netRunHeap
}

func (s *netStream) next() (netEntry, bool, error) {
	if s.heap == nil {
		if len(s.mem) == 0 {
			return netEntry{}, false, nil
		}
		e := s.mem[0]
		s.mem = s.mem[1:]
		return e, true, nil
	}
	if len(s.heap) == 0 {
		return netEntry{}, false, nil
	}
	r := s.heap[0]
	e := r.cur
	ok, err := r.read()
	if err != nil {
		return e, false, err
	}
	if ok {
		heap.Fix(&s.heap, 0)
	} else {
		heap.Pop(&s.heap)
	}
	return e, true, nil
}

type netRunReader struct {
	r   *bufio.Reader
	cur netEntry
	b   [netEntrySize]byte
}

func (r *netRunReader) read() (bool, error) {
	if _, err := io.ReadFull(r.r, r.b[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, fmt.Errorf("mmdb sort: read run: %w", err)
	}
	r.cur = getEntry(r.b[:])
	return true, nil
}

type netRunHeap []*netRunReader

func (h netRunHeap) Len() int           { return len(h) }
func (h netRunHeap) Less(i, j int) bool { return compareEntries(h[i].cur, h[j].cur) < 0 }
func (h netRunHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *netRunHeap) Push(x any)        { *h = append(*h, x.(*netRunReader)) }
func (h *netRunHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
