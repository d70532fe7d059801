package publish

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/inserter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
	"github.com/oschwald/maxminddb-golang"

	"github.com/netintel/netintel/internal/ipmodel"
)

// MMDB keys of our own, beside the GeoIP2 flags. They are exactly the
// maxminddb struct tags of ipmodel.Record and its nested types, so that
// maxminddb-golang decodes a record straight into ipmodel.Record.
const (
	keyNetwork        = "network"
	keyClassification = "classifications"
	keyProvider       = "provider"
	keyConfidence     = "confidence"
	keyFirstSeen      = "first_seen"
	keyLastSeen       = "last_seen"
	keySources        = "sources"
	keyAssets         = "assets"
	keyPort           = "port"
	keyProtocolFamily = "protocol_family"
)

// mmdbWriter writes the MMDB in two passes so that memory does not grow
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
type mmdbWriter struct {
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

// newMMDBWriter returns a writer of a GeoIP2-Anonymous-IP MMDB with IPv4
// and IPv6 in one tree; dir holds its temp files.
func newMMDBWriter(w io.Writer, dir string, buildTime time.Time) (*mmdbWriter, error) {
	m := &mmdbWriter{w: w, dir: dir, buildTime: buildTime, merges: map[uint64][2]uint64{}, memo: map[[2]uint64]uint64{}}
	tree, err := mmdbwriter.New(mmdbwriter.Options{
		BuildEpoch:   buildTime.Unix(),
		DatabaseType: DatabaseType,
		Description: map[string]string{
			"en": "netintel IP intelligence: anonymity flags, remote-access assets and CVEs (schema " + ipmodel.SchemaVersion + ")",
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
func (m *mmdbWriter) Write(r *ipmodel.Record, pfx netip.Prefix) error {
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
func (m *mmdbWriter) Rows() int64 { return m.rows }

func (m *mmdbWriter) mergeInserter(v mmdbtype.DataType) inserter.Func {
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
func (m *mmdbWriter) record(id uint64, depth int) (ipmodel.Record, error) {
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

// Close writes the MMDB (see mmdbWriter) and removes the temp files.
func (m *mmdbWriter) Close() error {
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

// dataSectionSeparator sits between the search tree and the data section.
var dataSectionSeparator = make([]byte, 16)

func (m *mmdbWriter) rewrite(placeholder string) error {
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

var metadataMarker = []byte("\xAB\xCD\xEFMaxMind.com")

// dataWriter encodes MMDB data values (through mmdbtype's encoders) and
// writes a pointer instead of a value written before when that is shorter:
// for strings seen before (map keys, enum-like values) and for the shared
// values the interner hands out (lists, CVE findings).
type dataWriter struct {
	bw     *bufio.Writer
	n      int64
	in     *interner
	strs   map[string]uint32
	shared map[uintptr]uint32
}

func newDataWriter(w io.Writer) *dataWriter {
	return &dataWriter{bw: bufio.NewWriterSize(w, 1<<20), in: newInterner(), strs: map[string]uint32{}, shared: map[uintptr]uint32{}}
}

func (d *dataWriter) Write(b []byte) (int, error) {
	n, err := d.bw.Write(b)
	d.n += int64(n)
	return n, err
}

func (d *dataWriter) WriteByte(c byte) error {
	d.n++
	return d.bw.WriteByte(c)
}

func (d *dataWriter) WriteString(s string) (int, error) {
	n, err := d.bw.WriteString(s)
	d.n += int64(n)
	return n, err
}

func (d *dataWriter) flush() error { return d.bw.Flush() }

func (d *dataWriter) value(v mmdbtype.DataType) error {
	_, err := d.WriteOrWritePointer(v)
	return err
}

// isTimestamp reports whether s has the shape of a record timestamp.
func isTimestamp(s string) bool {
	return len(s) == len(ipmodel.TimeFormat) && s[10] == 'T' && s[19] == 'Z'
}

// maxPointed bounds the tables of values written once and pointed to.
const maxPointed = 1 << 20

// WriteOrWritePointer is called by mmdbtype's encoders for every nested
// value.
func (d *dataWriter) WriteOrWritePointer(t mmdbtype.DataType) (int64, error) {
	var (
		skey  string
		ptr   uintptr
		table bool
	)
	switch v := t.(type) {
	case mmdbtype.String:
		// Short strings are no longer than a pointer; timestamps are
		// nearly all distinct, so tabling them would only cost memory.
		if len(v) < 3 || len(v) > 128 || isTimestamp(string(v)) {
			return v.WriteTo(d)
		}
		if off, ok := d.strs[string(v)]; ok {
			return mmdbtype.Pointer(off).WriteTo(d)
		}
		skey, table = string(v), true
	case mmdbtype.Map:
		ptr = d.in.sharedMap(v)
	case mmdbtype.Slice:
		ptr = d.in.sharedSlice(v)
	}
	if ptr != 0 {
		if off, ok := d.shared[ptr]; ok {
			return mmdbtype.Pointer(off).WriteTo(d)
		}
	}
	off := d.n
	n, err := t.WriteTo(d)
	if err != nil || off > math.MaxUint32 {
		return n, err
	}
	switch {
	case table && len(d.strs) < maxPointed:
		d.strs[skey] = uint32(off)
	case ptr != 0:
		d.shared[ptr] = uint32(off)
	}
	return n, nil
}

// value converts a record to its MMDB map. Null pointers and false flags
// are omitted; ip is the lookup key and not stored.
func recordValue(r *ipmodel.Record, in *interner) mmdbtype.Map {
	v := mmdbtype.Map{}
	for i, set := range Flags(r) {
		if set {
			v[mmdbtype.String(FlagNames[i])] = mmdbtype.Bool(true)
		}
	}
	if r.Network != "" {
		v[keyNetwork] = mmdbtype.String(r.Network)
	}
	v[keyClassification] = in.list(r.Classifications)
	if r.Provider != nil {
		v[keyProvider] = in.str(*r.Provider)
	}
	v[keyConfidence] = mmdbtype.Float64(r.Confidence)
	v[keyFirstSeen] = mmdbtype.String(r.FirstSeen)
	v[keyLastSeen] = mmdbtype.String(r.LastSeen)
	v[keySources] = in.list(r.Sources)
	assets := make(mmdbtype.Slice, 0, len(r.Assets))
	for i := range r.Assets {
		assets = append(assets, assetValue(&r.Assets[i], in))
	}
	v[keyAssets] = assets
	if r.ASN != 0 {
		v["asn"] = mmdbtype.Uint32(r.ASN)
	}
	if len(r.Attributions) > 0 {
		v["attributions"] = attributionsValue(r.Attributions, in)
	}
	if r.Country != nil {
		v["country"] = in.str(*r.Country)
	}
	if r.Region != nil {
		v["region"] = in.str(*r.Region)
	}
	if r.City != nil {
		v["city"] = in.str(*r.City)
	}
	return v
}

func attributionsValue(as []ipmodel.Attribution, in *interner) mmdbtype.Slice {
	attrs := make(mmdbtype.Slice, 0, len(as))
	for _, at := range as {
		attrs = append(attrs, mmdbtype.Map{
			"org_name":          in.str(at.OrgName),
			"signal_source":     in.str(at.SignalSource),
			"signal_confidence": mmdbtype.Float64(at.SignalConfidence),
			"observed_at":       mmdbtype.String(at.ObservedAt),
		})
	}
	return attrs
}

func assetValue(a *ipmodel.Asset, in *interner) mmdbtype.Map {
	v := mmdbtype.Map{
		keyPort:            mmdbtype.Uint16(a.Port),
		keyProtocolFamily:  in.str(a.ProtocolFamily),
		"confidence_band":  in.str(a.ConfidenceBand),
		"evidence_sources": in.list(a.EvidenceSources),
		"first_seen":       mmdbtype.String(a.FirstSeen),
		"last_seen":        mmdbtype.String(a.LastSeen),
	}
	in.optStr(v, "vendor", a.Vendor)
	in.optStr(v, "product", a.Product)
	in.optStr(v, "version_band", a.VersionBand)
	in.optStr(v, "version_precision", a.VersionPrecision)
	in.optStr(v, "exact_version", a.ExactVersion)
	v["attributions"] = attributionsValue(a.Attributions, in)
	if s := a.CveSummary; s != nil {
		sm := mmdbtype.Map{
			"total_count": mmdbtype.Uint32(clampU32(s.TotalCount)),
			"kev_count":   mmdbtype.Uint32(clampU32(s.KevCount)),
		}
		optFloat(sm, "max_severity_score", s.MaxSeverityScore)
		in.optStr(sm, "max_severity_rating", s.MaxSeverityRating)
		in.optStr(sm, "eol_status", s.EolStatus)
		in.optStr(sm, "last_computed_at", s.LastComputedAt)
		v["cve_summary"] = sm
	}
	cves := make(mmdbtype.Slice, 0, len(a.Cves))
	for i := range a.Cves {
		cves = append(cves, in.cve(&a.Cves[i]))
	}
	v["cves"] = cves
	return v
}

func clampU32(n int) uint32 {
	if n < 0 {
		return 0
	}
	if int64(n) > int64(^uint32(0)) {
		return ^uint32(0)
	}
	return uint32(n)
}

func optFloat(m mmdbtype.Map, k mmdbtype.String, f *float64) {
	if f != nil {
		m[k] = mmdbtype.Float64(*f)
	}
}

// maxInterned bounds each intern table, so that high-cardinality values
// (which gain nothing from sharing) cannot grow it without limit.
const maxInterned = 1 << 18

// interner shares equal values between records.
type interner struct {
	strs  map[string]mmdbtype.String
	lists map[string]mmdbtype.Slice
	cves  map[string]mmdbtype.Map
	// ptrs identifies the interned lists and maps (which stay alive as
	// long as the interner), so that the data writer can point to them.
	ptrs map[uintptr]bool
	kb   strings.Builder
}

func newInterner() *interner {
	return &interner{strs: map[string]mmdbtype.String{}, lists: map[string]mmdbtype.Slice{}, cves: map[string]mmdbtype.Map{}, ptrs: map[uintptr]bool{}}
}

// sharedMap returns the identity of m if the interner handed it out, else 0.
func (in *interner) sharedMap(m mmdbtype.Map) uintptr {
	if p := reflect.ValueOf(m).Pointer(); in.ptrs[p] {
		return p
	}
	return 0
}

// sharedSlice returns the identity of s if the interner handed it out, else 0.
func (in *interner) sharedSlice(s mmdbtype.Slice) uintptr {
	if len(s) == 0 {
		return 0
	}
	if p := uintptr(unsafe.Pointer(&s[0])); in.ptrs[p] {
		return p
	}
	return 0
}

func (in *interner) str(s string) mmdbtype.String {
	if v, ok := in.strs[s]; ok {
		return v
	}
	v := mmdbtype.String(strings.Clone(s))
	if len(in.strs) < maxInterned {
		in.strs[string(v)] = v
	}
	return v
}

func (in *interner) optStr(m mmdbtype.Map, k mmdbtype.String, s *string) {
	if s != nil {
		m[k] = in.str(*s)
	}
}

func (in *interner) list(ss []string) mmdbtype.Slice {
	in.kb.Reset()
	for _, s := range ss {
		in.kb.WriteString(s)
		in.kb.WriteByte(0)
	}
	k := in.kb.String()
	if v, ok := in.lists[k]; ok {
		return v
	}
	v := make(mmdbtype.Slice, len(ss))
	for i, s := range ss {
		v[i] = in.str(s)
	}
	if len(in.lists) < maxInterned {
		in.lists[k] = v
		if len(v) > 0 {
			in.ptrs[uintptr(unsafe.Pointer(&v[0]))] = true
		}
	}
	return v
}

func (in *interner) cve(c *ipmodel.CveFinding) mmdbtype.Map {
	in.kb.Reset()
	for _, s := range []string{c.CveID, c.DetectionConfidence, c.Source} {
		in.kb.WriteString(s)
		in.kb.WriteByte(0)
	}
	for _, p := range []*string{c.SeverityRating, c.CvssVersion, c.KevAddedAt, c.EuvdID, c.JvnID, c.MatchedVia} {
		if p != nil {
			in.kb.WriteString(*p)
		} else {
			in.kb.WriteByte(1)
		}
		in.kb.WriteByte(0)
	}
	for _, p := range []*float64{c.SeverityScore, c.EpssScore, c.EpssPercentile} {
		if p != nil {
			fmt.Fprintf(&in.kb, "%g", *p)
		} else {
			in.kb.WriteByte(1)
		}
		in.kb.WriteByte(0)
	}
	k := in.kb.String()
	if v, ok := in.cves[k]; ok {
		return v
	}
	v := mmdbtype.Map{
		"cve_id":               in.str(c.CveID),
		"detection_confidence": in.str(c.DetectionConfidence),
		"source":               in.str(c.Source),
	}
	optFloat(v, "severity_score", c.SeverityScore)
	in.optStr(v, "severity_rating", c.SeverityRating)
	in.optStr(v, "cvss_version", c.CvssVersion)
	in.optStr(v, "kev_added_at", c.KevAddedAt)
	optFloat(v, "epss_score", c.EpssScore)
	optFloat(v, "epss_percentile", c.EpssPercentile)
	in.optStr(v, "euvd_id", c.EuvdID)
	in.optStr(v, "jvn_id", c.JvnID)
	in.optStr(v, "matched_via", c.MatchedVia)
	if len(in.cves) < maxInterned {
		in.cves[k] = v
		in.ptrs[reflect.ValueOf(v).Pointer()] = true
	}
	return v
}

// mergeRecords merges two overlapping records. It is symmetric, so the
// result does not depend on insertion order: classifications and sources
// are united (classifications in canonical order, sources sorted), which
// also ORs the flags; confidence is the higher one; first_seen the earlier
// and last_seen the later; network and provider come from the more
// specific record (a host, which has no network, beats any range; between
// ranges the longer prefix; a missing provider is taken from the other);
// assets are concatenated and sorted by port and protocol family.
// The more specific record inherits the other's claims (inheritClaims):
// attributions, ASN and place.
func mergeRecords(a, b ipmodel.Record) ipmodel.Record {
	if moreSpecific(b, a) {
		a, b = b, a
	}
	out := a
	if out.Network == "" {
		out.Network = b.Network
	}
	if out.Provider == nil {
		out.Provider = b.Provider
	}
	inheritClaims(&out, &b)
	out.Classifications = union(a.Classifications, b.Classifications, classRank)
	out.Sources = union(a.Sources, b.Sources, strings.Compare)
	out.Confidence = max(a.Confidence, b.Confidence)
	out.FirstSeen = minTime(a.FirstSeen, b.FirstSeen)
	out.LastSeen = max(a.LastSeen, b.LastSeen)
	if len(b.Assets) > 0 {
		out.Assets = slices.Concat(out.Assets, b.Assets)
		slices.SortStableFunc(out.Assets, func(x, y ipmodel.Asset) int {
			if c := cmp.Compare(x.Port, y.Port); c != 0 {
				return c
			}
			return strings.Compare(x.ProtocolFamily, y.ProtocolFamily)
		})
	}
	return out
}

// inheritClaims gives r what it takes of a less specific record that
// covers it, wider (a host of the ranges around it, a range of a wider
// one): wider's attributions of the signal sources r has none of, on r
// and on each of r's assets (so a host inside a cloud's or a relay's
// range carries the range's claim, its provider, source and confidence);
// wider's ASN when r has none; wider's place (country, region and city,
// together) when r has none. r's slices are replaced, never modified, so
// r may share them with another record. This is the one merge of claims:
// the MMDB's merge of overlapping records (mergeRecords) and the host
// rows of the other files (rangeIndex) both use it, so every file says
// the same of an address.
func inheritClaims(r, wider *ipmodel.Record) {
	if r.ASN == 0 {
		r.ASN = wider.ASN
	}
	if r.Country == nil && r.Region == nil && r.City == nil {
		r.Country, r.Region, r.City = wider.Country, wider.Region, wider.City
	}
	r.Attributions = addAttributions(r.Attributions, wider.Attributions)
	if len(wider.Attributions) > 0 && len(r.Assets) > 0 {
		r.Assets = slices.Clone(r.Assets)
		for i := range r.Assets {
			r.Assets[i].Attributions = addAttributions(r.Assets[i].Attributions, wider.Attributions)
		}
	}
}

// addAttributions returns own with those of other whose signal source own
// lacks, sorted by signal source; own is not modified.
func addAttributions(own, other []ipmodel.Attribution) []ipmodel.Attribution {
	out := slices.Clone(own)
	for _, at := range other {
		if !slices.ContainsFunc(out, func(x ipmodel.Attribution) bool { return x.SignalSource == at.SignalSource }) {
			out = append(out, at)
		}
	}
	slices.SortStableFunc(out, func(x, y ipmodel.Attribution) int { return strings.Compare(x.SignalSource, y.SignalSource) })
	return out
}

func minTime(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return min(a, b)
}

// moreSpecific reports whether record a is more specific than b: a host
// (no network) beats a range, a longer prefix beats a shorter one, and
// equal prefixes are ordered by their text so the choice is stable.
func moreSpecific(a, b ipmodel.Record) bool {
	switch {
	case a.Network == "" && b.Network == "":
		return a.IP < b.IP
	case a.Network == "":
		return true
	case b.Network == "":
		return false
	}
	ap, aerr := netip.ParsePrefix(a.Network)
	bp, berr := netip.ParsePrefix(b.Network)
	if aerr == nil && berr == nil && ap.Bits() != bp.Bits() {
		return ap.Bits() > bp.Bits()
	}
	return a.Network < b.Network
}

func classRank(a, b string) int {
	return cmp.Compare(rank(a), rank(b))
}

func rank(c string) int {
	if i := slices.Index(ipmodel.Classes, c); i >= 0 {
		return i
	}
	return len(ipmodel.Classes)
}

func union(a, b []string, order func(x, y string) int) []string {
	out := slices.Concat(a, b)
	slices.SortFunc(out, func(x, y string) int {
		if c := order(x, y); c != 0 {
			return c
		}
		return strings.Compare(x, y)
	})
	return slices.Compact(out)
}
