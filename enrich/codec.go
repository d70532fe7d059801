package enrich

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/klauspost/compress/s2"

	"github.com/netintel/netintel/internal/ipmodel"
)

// State documents are stored in a compact binary form (marked by a leading
// 'b' and a format version): a worker encodes one on every state write and
// decodes one on every cache hit, and the JSON these replaced cost it more
// CPU than the rest of the enrichment together (BenchmarkDocCodec). Older
// records, JSON compressed with S2 (marked 's') or plain JSON, still read.
//
// The body is compressed with S2 (timestamps, message ids and source names
// repeat within a document: about half the size, for about a microsecond).
// The layout of the body, field by field in the order of the doc struct: strings and
// byte counts as uvarint length + bytes, integers as zig-zag varints,
// floats as 8 bytes little-endian, an optional value behind a 0/1 byte, a
// map as a count then key + value pairs. It is not meant for other readers:
// snapshots are what the product publishes.
const (
	binMark    = 'b'
	binVersion = 1
	s2Mark     = 's'
)

// maxDocBody bounds a decoded body: far above any real document (the
// largest values NATS stores are a few MiB), it keeps a corrupt length
// from allocating gigabytes.
const maxDocBody = 64 << 20

// errDocFormat reports a stored document that is not one this code wrote.
var errDocFormat = errors.New("malformed state document")

// bodyPool holds the buffers a document body is built in before
// compression, and decompressed into before decoding.
var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func encodeDoc(d *doc) ([]byte, error) {
	bp := bodyPool.Get().(*[]byte)
	defer bodyPool.Put(bp)
	e := docEncoder{b: (*bp)[:0]}
	e.doc(d)
	*bp = e.b
	out := make([]byte, 2+s2.MaxEncodedLen(len(e.b)))
	out[0], out[1] = binMark, binVersion
	return out[:2+len(s2.Encode(out[2:], e.b))], nil
}

func decodeDoc(b []byte, d *doc) error {
	if len(b) > 1 && b[0] == binMark {
		if b[1] != binVersion {
			return fmt.Errorf("%w: format version %d", errDocFormat, b[1])
		}
		bp := bodyPool.Get().(*[]byte)
		defer bodyPool.Put(bp)
		n, err := s2.DecodedLen(b[2:])
		if err != nil {
			return fmt.Errorf("%w: %v", errDocFormat, err)
		}
		if n > maxDocBody {
			return fmt.Errorf("%w: body of %d bytes", errDocFormat, n)
		}
		if cap(*bp) < n {
			*bp = make([]byte, n)
		}
		body, err := s2.Decode((*bp)[:cap(*bp)], b[2:])
		if err != nil {
			return fmt.Errorf("%w: %v", errDocFormat, err)
		}
		// One string holds every field: the decoded strings are slices of it.
		r := docDecoder{s: string(body)}
		r.doc(d)
		if r.err == nil && r.i != len(r.s) {
			r.err = fmt.Errorf("%w: %d bytes left over", errDocFormat, len(r.s)-r.i)
		}
		return r.err
	}
	if len(b) > 0 && b[0] == s2Mark {
		js, err := s2.Decode(nil, b[1:])
		if err != nil {
			return err
		}
		b = js
	}
	return jsonv2.Unmarshal(b, d, jsontext.AllowInvalidUTF8(true))
}

type docEncoder struct{ b []byte }

func (e *docEncoder) int(n int)     { e.b = binary.AppendVarint(e.b, int64(n)) }
func (e *docEncoder) str(s string)  { e.b = append(binary.AppendUvarint(e.b, uint64(len(s))), s...) }
func (e *docEncoder) f64(f float64) { e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(f)) }
func (e *docEncoder) flag(set bool) bool {
	if set {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
	return set
}

func (e *docEncoder) optStr(p *string) {
	if e.flag(p != nil) {
		e.str(*p)
	}
}

func (e *docEncoder) optF64(p *float64) {
	if e.flag(p != nil) {
		e.f64(*p)
	}
}

func (e *docEncoder) doc(d *doc) {
	e.int(d.V)
	e.str(d.IP)
	e.str(d.Network)
	e.str(d.FirstSeen)
	e.str(d.LastSeen)
	e.int(len(d.Signals))
	for k, s := range d.Signals {
		e.str(k)
		e.str(s.Class)
		e.str(s.Source)
		e.str(s.Provider)
		e.f64(s.Conf)
		e.str(s.FirstSeen)
		e.str(s.LastSeen)
		e.str(s.Win)
	}
	e.claims(d.Claims)
	e.int(len(d.Assets))
	for k, a := range d.Assets {
		e.str(k)
		e.asset(a)
	}
}

func (e *docEncoder) claims(m map[string]ipmodel.Attribution) {
	e.int(len(m))
	for k, c := range m {
		e.str(k)
		e.str(c.OrgName)
		e.str(c.SignalSource)
		e.f64(c.SignalConfidence)
		e.str(c.ObservedAt)
	}
}

func (e *docEncoder) asset(a *assetDoc) {
	e.int(a.Port)
	e.str(a.Family)
	e.str(a.FirstSeen)
	e.str(a.LastSeen)
	e.winner(a.Svc)
	e.winner(a.Flow)
	e.int(len(a.Sources))
	for k, s := range a.Sources {
		e.str(k)
		e.str(s.Vendor)
		e.str(s.Win)
	}
	e.claims(a.Claims)
	e.int(len(a.Cves))
	for i := range a.Cves {
		f := &a.Cves[i]
		e.str(f.CveID)
		e.str(f.DetectionConfidence)
		e.str(f.Source)
		e.optF64(f.SeverityScore)
		e.optStr(f.SeverityRating)
		e.optStr(f.CvssVersion)
		e.optStr(f.KevAddedAt)
		e.optF64(f.EpssScore)
		e.optF64(f.EpssPercentile)
		e.optStr(f.EuvdID)
		e.optStr(f.JvnID)
		e.optStr(f.MatchedVia)
	}
	if e.flag(a.Summary != nil) {
		s := a.Summary
		e.int(s.TotalCount)
		e.int(s.KevCount)
		e.optF64(s.MaxSeverityScore)
		e.optStr(s.MaxSeverityRating)
		e.optStr(s.EolStatus)
		e.optStr(s.LastComputedAt)
	}
	e.str(a.CveKey)
}

func (e *docEncoder) winner(w *fpWinner) {
	if !e.flag(w != nil) {
		return
	}
	e.str(w.Win)
	fp := &w.Fp
	e.str(fp.RuleID)
	e.str(fp.Vendor)
	e.str(fp.Product)
	e.int(len(fp.CPE))
	for _, c := range fp.CPE {
		e.str(c)
	}
	e.str(fp.ProtocolFamily)
	e.str(fp.Class)
	e.str(fp.ExactVersion)
	e.str(fp.VersionBand)
	e.str(fp.VersionPrecision)
}

// docDecoder reads what docEncoder wrote; the first problem sticks in err
// and every later read returns a zero value.
type docDecoder struct {
	s   string
	i   int
	err error
	// Optional values point into these, allocated 16 at a time.
	strs []string
	f64s []float64
}

func (r *docDecoder) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: bad %s at byte %d of the body", errDocFormat, what, r.i)
	}
	r.i = len(r.s)
}

func (r *docDecoder) uvarint() uint64 {
	var x uint64
	for shift := uint(0); r.i < len(r.s) && shift < 64; shift += 7 {
		c := r.s[r.i]
		r.i++
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x
		}
	}
	r.fail("varint")
	return 0
}

func (r *docDecoder) int() int {
	u := r.uvarint()
	return int(int64(u>>1) ^ -int64(u&1))
}

// count reads a collection's length; every entry takes at least one byte,
// so a count beyond what is left is corrupt (and never allocated).
func (r *docDecoder) count() int {
	n := r.int()
	if n < 0 || n > len(r.s)-r.i {
		r.fail("count")
		return 0
	}
	return n
}

func (r *docDecoder) str() string {
	n := r.uvarint()
	if n > uint64(len(r.s)-r.i) {
		r.fail("string length")
		return ""
	}
	s := r.s[r.i : r.i+int(n)]
	r.i += int(n)
	return s
}

func (r *docDecoder) f64() float64 {
	if len(r.s)-r.i < 8 {
		r.fail("float")
		return 0
	}
	var v uint64
	for j := 7; j >= 0; j-- {
		v = v<<8 | uint64(r.s[r.i+j])
	}
	r.i += 8
	return math.Float64frombits(v)
}

func (r *docDecoder) flag() bool {
	if r.i >= len(r.s) || r.s[r.i] > 1 {
		r.fail("flag")
		return false
	}
	r.i++
	return r.s[r.i-1] == 1
}

func (r *docDecoder) optStr() *string {
	if !r.flag() {
		return nil
	}
	if len(r.strs) == cap(r.strs) {
		r.strs = make([]string, 0, 16)
	}
	r.strs = append(r.strs, r.str())
	return &r.strs[len(r.strs)-1]
}

func (r *docDecoder) optF64() *float64 {
	if !r.flag() {
		return nil
	}
	if len(r.f64s) == cap(r.f64s) {
		r.f64s = make([]float64, 0, 16)
	}
	r.f64s = append(r.f64s, r.f64())
	return &r.f64s[len(r.f64s)-1]
}

func (r *docDecoder) doc(d *doc) {
	d.V = r.int()
	d.IP, d.Network, d.FirstSeen, d.LastSeen = r.str(), r.str(), r.str(), r.str()
	// Entries are allocated together, one slice per kind, not one by one.
	if n := r.count(); n > 0 {
		d.Signals = make(map[string]*sigEntry, n)
		ents := make([]sigEntry, n)
		for i := range ents {
			k := r.str()
			ents[i] = sigEntry{Class: r.str(), Source: r.str(), Provider: r.str(), Conf: r.f64(),
				FirstSeen: r.str(), LastSeen: r.str(), Win: r.str()}
			d.Signals[k] = &ents[i]
		}
	}
	d.Claims = r.claims()
	if n := r.count(); n > 0 {
		d.Assets = make(map[string]*assetDoc, n)
		assets := make([]assetDoc, n)
		for i := range assets {
			k := r.str()
			r.asset(&assets[i])
			d.Assets[k] = &assets[i]
		}
	}
}

func (r *docDecoder) claims() map[string]ipmodel.Attribution {
	n := r.count()
	if n == 0 {
		return nil
	}
	m := make(map[string]ipmodel.Attribution, n)
	for range n {
		k := r.str()
		m[k] = ipmodel.Attribution{OrgName: r.str(), SignalSource: r.str(), SignalConfidence: r.f64(), ObservedAt: r.str()}
	}
	return m
}

func (r *docDecoder) asset(a *assetDoc) {
	a.Port, a.Family, a.FirstSeen, a.LastSeen = r.int(), r.str(), r.str(), r.str()
	a.Svc, a.Flow = r.winner(), r.winner()
	n := r.count()
	a.Sources = make(map[string]srcEvidence, n) // written to without a nil check
	for range n {
		k := r.str()
		a.Sources[k] = srcEvidence{Vendor: r.str(), Win: r.str()}
	}
	a.Claims = r.claims()
	if n := r.count(); n > 0 {
		a.Cves = make([]ipmodel.CveFinding, n)
		for i := range a.Cves {
			f := &a.Cves[i]
			f.CveID, f.DetectionConfidence, f.Source = r.str(), r.str(), r.str()
			f.SeverityScore, f.SeverityRating, f.CvssVersion, f.KevAddedAt = r.optF64(), r.optStr(), r.optStr(), r.optStr()
			f.EpssScore, f.EpssPercentile = r.optF64(), r.optF64()
			f.EuvdID, f.JvnID, f.MatchedVia = r.optStr(), r.optStr(), r.optStr()
		}
	}
	if r.flag() {
		a.Summary = &ipmodel.CveSummary{TotalCount: r.int(), KevCount: r.int(), MaxSeverityScore: r.optF64(),
			MaxSeverityRating: r.optStr(), EolStatus: r.optStr(), LastComputedAt: r.optStr()}
	}
	a.CveKey = r.str()
}

func (r *docDecoder) winner() *fpWinner {
	if !r.flag() {
		return nil
	}
	w := &fpWinner{Win: r.str()}
	fp := &w.Fp
	fp.RuleID, fp.Vendor, fp.Product = r.str(), r.str(), r.str()
	if n := r.count(); n > 0 {
		fp.CPE = make([]string, n)
		for i := range fp.CPE {
			fp.CPE[i] = r.str()
		}
	}
	fp.ProtocolFamily, fp.Class, fp.ExactVersion, fp.VersionBand, fp.VersionPrecision = r.str(), r.str(), r.str(), r.str(), r.str()
	return w
}
