package publish

// The MMDB writer publish used before mmdbtree.go (issue 33): mmdbwriter's
// in-memory tree of placeholder ids, rewritten with the records. Kept
// only as the reference the tests and the benchmark compare the
// streaming writer with.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/inserter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
	"github.com/oschwald/maxminddb-golang"

	"github.com/netintel/netintel/internal/ipmodel"
)

// refMMDBWriter writes the MMDB in two passes so that memory does not grow
// with the records' content, only with the number of networks:
//
//  1. Write inserts every network into an mmdbwriter.Tree with a tiny
//     placeholder value (mmdbtype.Uint64 id) and appends the record itself
//     (a compact binary form, spool.go) to a temp file. Where networks overlap, the inserter records
//     "id c = merge of a and b" instead of merging data in memory.
//  2. Close writes the placeholder tree with mmdbwriter (search tree, data
//     section of ids, metadata), then streams its search tree out again,
//     replacing each placeholder pointer with a pointer into a new data
//     section: each id's record is read back (and merged), converted to
//     MMDB types and encoded once, with pointers for repeated strings and
//     shared values (map keys, CVE findings, lists). The metadata section
//     is copied as mmdbwriter wrote it.
type refMMDBWriter struct {
	w         io.Writer
	dir       string
	buildTime time.Time
	tree      *mmdbwriter.Tree

	vals    *os.File // spooled records (spool.go), at spans[id]
	valsBuf *bufio.Writer
	valsLen int64
	spans   []span // by id: where its spooled record is in vals; n < 0 for a merge id
	merges  map[uint64][2]uint64
	memo    map[[2]uint64]uint64
	buf     []byte
	rows    int64
}

// newRefMMDBWriter returns a writer of a GeoIP2-Anonymous-IP MMDB with IPv4
// and IPv6 in one tree; dir holds its temp files.
func newRefMMDBWriter(w io.Writer, dir string, buildTime time.Time) (*refMMDBWriter, error) {
	m := &refMMDBWriter{w: w, dir: dir, buildTime: buildTime, merges: map[uint64][2]uint64{}, memo: map[[2]uint64]uint64{}}
	tree, err := mmdbwriter.New(mmdbwriter.Options{
		BuildEpoch:   buildTime.Unix(),
		DatabaseType: DatabaseType,
		Description: map[string]string{
			"en": mmdbDescription,
		},
		Languages: []string{"en"},
		IPVersion: 6,
		// 32-bit records: room for the most networks and data.
		RecordSize: 32,
		// Every address the state holds is published, even in reserved
		// space, so that the MMDB holds the same records as the other files.
		IncludeReservedNetworks: true,
		// mmdbwriter's aliasing points ::ffff:0:0/96 and also Teredo
		// (2001::/32) and 6to4 (2002::/16) at the IPv4 tree, so a Teredo
		// address answered with its server's IPv4 record and a 6to4 one
		// with its embedded address (issue 31 item 8); nor could an address
		// of those blocks hold its own record. Only IPv4-mapped addresses
		// are the IPv4: Close aliases ::ffff:0:0/96 alone (aliasID).
		DisableIPv4Aliasing: true,
		Inserter:            m.mergeInserter,
		KeyGenerator:        idKey{},
	})
	if err != nil {
		return nil, fmt.Errorf("new mmdb tree: %w", err)
	}
	m.tree = tree
	f, err := os.CreateTemp(dir, "mmdb-values-*")
	if err != nil {
		return nil, fmt.Errorf("mmdb temp file: %w", err)
	}
	m.vals = f
	m.valsBuf = bufio.NewWriterSize(countWriter{f, &m.valsLen}, 1<<20)
	return m, nil
}

type span struct {
	off int64
	n   int32
}

// aliasID is the placeholder of ipv4Mapped: rewrite points its record at
// the IPv4 tree (the node at ::/96), as mmdbwriter's own alias would, so
// readers that look up ::ffff:a.b.c.d as IPv6 (mmdblookup) find the IPv4
// record, and readers that skip aliased networks when iterating
// (maxminddb-golang's Networks) see it as the alias it is.
const aliasID = math.MaxUint64

// idKey is the tree's KeyGenerator: placeholders are unique by their id.
type idKey struct{}

func (idKey) Key(v mmdbtype.DataType) ([]byte, error) {
	id, ok := v.(mmdbtype.Uint64)
	if !ok {
		return nil, fmt.Errorf("mmdb placeholder of type %T", v)
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(id))
	return b[:], nil
}

// Write inserts one record: a range as its network, a host as a /32 or
// /128. Where networks overlap the values are merged (see mergeRecords),
// so a host inside a range carries both, whatever the insertion order.
//
// An IPv6 network overlapping ::/96 is left out of the MMDB: an IPv6 MMDB
// keeps the IPv4 tree there, so a record of ::a.b.c.d (the deprecated
// IPv4-compatible form) would be answered for, and merged into, the IPv4
// address a.b.c.d. The other files keep it.
func (m *refMMDBWriter) Write(r *ipmodel.Record, pfx netip.Prefix) error {
	if pfx.Addr().Is6() && pfx.Overlaps(ipv4Tree) {
		return nil
	}
	id := uint64(len(m.spans))
	start := m.valsLen + int64(m.valsBuf.Buffered())
	m.buf = appendRecord(m.buf[:0], r)
	if _, err := m.valsBuf.Write(m.buf); err != nil {
		return fmt.Errorf("mmdb spool: %w", err)
	}
	n := len(m.buf)
	if n > math.MaxInt32 {
		return fmt.Errorf("mmdb: record %s too large", r.IP)
	}
	m.spans = append(m.spans, span{start, int32(n)})
	ipn := &net.IPNet{IP: net.IP(pfx.Addr().AsSlice()), Mask: net.CIDRMask(pfx.Bits(), pfx.Addr().BitLen())}
	if err := m.tree.Insert(ipn, mmdbtype.Uint64(id)); err != nil {
		return fmt.Errorf("mmdb insert %s: %w", pfx, err)
	}
	m.rows++
	return nil
}

// Rows is the number of records inserted.
func (m *refMMDBWriter) Rows() int64 { return m.rows }

func (m *refMMDBWriter) mergeInserter(v mmdbtype.DataType) inserter.Func {
	return func(old mmdbtype.DataType) (mmdbtype.DataType, error) {
		o, ok := old.(mmdbtype.Uint64)
		if !ok {
			return v, nil
		}
		n, ok := v.(mmdbtype.Uint64)
		if !ok || n == o {
			return old, nil
		}
		pair := [2]uint64{uint64(o), uint64(n)}
		if id, ok := m.memo[pair]; ok {
			return mmdbtype.Uint64(id), nil
		}
		id := uint64(len(m.spans))
		m.spans = append(m.spans, span{n: -1})
		m.merges[id] = pair
		m.memo[pair] = id
		return mmdbtype.Uint64(id), nil
	}
}

// record returns the record of a placeholder id, merging as recorded.
func (m *refMMDBWriter) record(id uint64, depth int) (ipmodel.Record, error) {
	if depth > 64 {
		return ipmodel.Record{}, errors.New("mmdb: merge chain too deep")
	}
	if id >= uint64(len(m.spans)) {
		return ipmodel.Record{}, fmt.Errorf("mmdb: unknown placeholder %d", id)
	}
	if sp := m.spans[id]; sp.n >= 0 {
		buf := make([]byte, sp.n)
		if _, err := m.vals.ReadAt(buf, sp.off); err != nil {
			return ipmodel.Record{}, fmt.Errorf("mmdb read spool: %w", err)
		}
		return decodeRecord(buf)
	}
	pair := m.merges[id]
	a, err := m.record(pair[0], depth+1)
	if err != nil {
		return a, err
	}
	b, err := m.record(pair[1], depth+1)
	if err != nil {
		return a, err
	}
	return mergeRecords(a, b), nil
}

// Close writes the MMDB (see refMMDBWriter) and removes the temp files.
func (m *refMMDBWriter) Close() error {
	defer func() {
		m.vals.Close()
		os.Remove(m.vals.Name())
		m.tree = nil
	}()
	if err := m.valsBuf.Flush(); err != nil {
		return fmt.Errorf("mmdb spool: %w", err)
	}
	// Inserted last and replacing whatever is there, so no merge involves
	// it; the state holds IPv4-mapped addresses as IPv4 (ingest unmaps).
	ipn := &net.IPNet{IP: net.IP(ipv4Mapped.Addr().AsSlice()), Mask: net.CIDRMask(ipv4Mapped.Bits(), 128)}
	if err := m.tree.InsertFunc(ipn, inserter.ReplaceWith(mmdbtype.Uint64(aliasID))); err != nil {
		return fmt.Errorf("mmdb alias %s: %w", ipv4Mapped, err)
	}
	ph, err := os.CreateTemp(m.dir, "mmdb-tree-*")
	if err != nil {
		return fmt.Errorf("mmdb temp file: %w", err)
	}
	defer os.Remove(ph.Name())
	_, err = m.tree.WriteTo(ph)
	if cerr := ph.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write mmdb tree: %w", err)
	}
	m.tree, m.memo = nil, nil
	return m.rewrite(ph.Name())
}

func (m *refMMDBWriter) rewrite(placeholder string) error {
	db, err := maxminddb.Open(placeholder)
	if err != nil {
		return fmt.Errorf("read mmdb tree: %w", err)
	}
	defer db.Close()
	if db.Metadata.RecordSize != 32 {
		return fmt.Errorf("mmdb tree: record size %d, want 32", db.Metadata.RecordSize)
	}
	nodes := uint64(db.Metadata.NodeCount)
	raw, err := os.ReadFile(placeholder)
	if err != nil {
		return fmt.Errorf("read mmdb tree: %w", err)
	}
	treeLen := nodes * 8
	meta := bytes.LastIndex(raw, metadataMarker)
	if meta < 0 || uint64(len(raw)) < treeLen+16 {
		return errors.New("mmdb tree: malformed placeholder file")
	}

	data, err := os.CreateTemp(m.dir, "mmdb-data-*")
	if err != nil {
		return fmt.Errorf("mmdb temp file: %w", err)
	}
	defer func() { data.Close(); os.Remove(data.Name()) }()
	dw := newDataWriter(data)
	newOff := make([]uint32, len(m.spans)) // id -> data offset + 1
	bw := bufio.NewWriterSize(m.w, 1<<20)
	tree := raw[:treeLen]
	// The IPv4 tree: the record reached by 96 zero bits from the root (a
	// node, or the empty or data record covering all of IPv4).
	v4 := uint64(0)
	for depth := 0; depth < 96 && v4 < nodes; depth++ {
		v4 = uint64(binary.BigEndian.Uint32(tree[v4*8:]))
	}
	idAt := func(v uint64) (uint64, error) {
		var id uint64
		if err := db.Decode(uintptr(v-nodes-16), &id); err != nil {
			return 0, fmt.Errorf("mmdb tree: decode placeholder: %w", err)
		}
		return id, nil
	}
	for i := uint64(0); i < treeLen; i += 4 {
		v := uint64(binary.BigEndian.Uint32(tree[i:]))
		if v > nodes {
			id, err := idAt(v)
			if err == nil && id == aliasID {
				// A node, empty, or the one record covering all of IPv4.
				if v = v4; v > nodes {
					id, err = idAt(v)
				}
			}
			if err != nil {
				return err
			}
			if v > nodes {
				if id >= uint64(len(newOff)) {
					return fmt.Errorf("mmdb tree: unknown placeholder %d", id)
				}
				if newOff[id] == 0 {
					r, err := m.record(id, 0)
					if err != nil {
						return err
					}
					off := dw.n
					if err := dw.value(recordValue(&r, dw.in)); err != nil {
						return err
					}
					if nodes+16+uint64(off) >= 1<<32-1 {
						return errors.New("mmdb: data section exceeds what 32-bit records address (about 4 GiB)")
					}
					newOff[id] = uint32(off) + 1
				}
				v = nodes + 16 + uint64(newOff[id]-1)
			}
		}
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(v))
		if _, err := bw.Write(b[:]); err != nil {
			return fmt.Errorf("write mmdb: %w", err)
		}
	}
	if err := dw.flush(); err != nil {
		return fmt.Errorf("write mmdb data: %w", err)
	}
	if _, err := bw.Write(dataSectionSeparator); err != nil {
		return fmt.Errorf("write mmdb: %w", err)
	}
	if _, err := data.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("write mmdb: %w", err)
	}
	if _, err := io.Copy(bw, data); err != nil {
		return fmt.Errorf("write mmdb: %w", err)
	}
	if _, err := bw.Write(raw[meta:]); err != nil {
		return fmt.Errorf("write mmdb: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write mmdb: %w", err)
	}
	return nil
}
