package publish

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/netintel/netintel/internal/ipmodel"
)

// recordEncoder encodes a record's MMDB data value straight into bytes:
// the bytes dataWriter.value(recordValue(r, in)) writes (mmdbtype's
// encoders, map keys in sorted order, the same pointers to strings and
// to the interned lists and CVE findings), without building an
// mmdbtype.Map per record and sorting its keys, which cost most of the
// MMDB's CPU (mmdbenc_test.go compares the two byte for byte). Maps are
// written with their keys in the sorted order below.
type recordEncoder struct {
	b    []byte
	base int64 // data section offset of b[0]
	// strs: strings written once and pointed to (the dataWriter's rule);
	// lists and cves: the interned values written, by content.
	strs  map[string]uint32
	lists map[string]uint32
	cves  map[string]uint32
	// seen counts the distinct lists and CVE findings met (interned or
	// not), capped as the interner's tables are.
	listN, cveN int
	kb          []byte
}

func newRecordEncoder() *recordEncoder {
	return &recordEncoder{strs: map[string]uint32{}, lists: map[string]uint32{}, cves: map[string]uint32{}}
}

// MMDB data types (the format's type numbers).
const (
	mtPointer = 1
	mtString  = 2
	mtFloat64 = 3
	mtUint16  = 5
	mtUint32  = 6
	mtMap     = 7
	mtSlice   = 11
	mtBool    = 14
)

func (e *recordEncoder) off() int64 { return e.base + int64(len(e.b)) }

// ctrl appends a control byte (and its extension and size bytes).
func (e *recordEncoder) ctrl(typ, size int) {
	var first, second byte
	if typ < 8 {
		first = byte(typ << 5)
	} else {
		second = byte(typ - 7)
	}
	switch {
	case size < 29:
		e.b = append(e.b, first|byte(size))
		if second != 0 {
			e.b = append(e.b, second)
		}
	case size < 29+256:
		e.b = append(e.b, first|29)
		if second != 0 {
			e.b = append(e.b, second)
		}
		e.b = append(e.b, byte(size-29))
	case size < 29+256+1<<16:
		v := size - 29 - 256
		e.b = append(e.b, first|30)
		if second != 0 {
			e.b = append(e.b, second)
		}
		e.b = append(e.b, byte(v>>8), byte(v))
	default:
		v := size - 29 - 256 - 1<<16
		e.b = append(e.b, first|31)
		if second != 0 {
			e.b = append(e.b, second)
		}
		e.b = append(e.b, byte(v>>16), byte(v>>8), byte(v))
	}
}

func (e *recordEncoder) pointer(p uint32) {
	switch {
	case p < 1<<11:
		e.b = append(e.b, 0b00100000|byte(0b111&(p>>8)), byte(p))
	case p < 1<<11+1<<19:
		v := p - 1<<11
		e.b = append(e.b, 0b00101000|byte(0b111&(v>>16)), byte(v>>8), byte(v))
	case p < 1<<11+1<<19+1<<27:
		v := p - (1<<11 + 1<<19)
		e.b = append(e.b, 0b00110000|byte(0b111&(v>>24)), byte(v>>16), byte(v>>8), byte(v))
	default:
		e.b = append(e.b, 0b00111000, byte(p>>24), byte(p>>16), byte(p>>8), byte(p))
	}
}

// str appends s, or a pointer to where it was written before (the
// dataWriter's rule: 3 to 128 bytes and not a timestamp).
func (e *recordEncoder) str(s string) {
	if len(s) < 3 || len(s) > 128 || isTimestamp(s) {
		e.rawStr(s)
		return
	}
	if off, ok := e.strs[s]; ok {
		e.pointer(off)
		return
	}
	off := e.off()
	e.rawStr(s)
	if off <= math.MaxUint32 && len(e.strs) < maxPointed {
		e.strs[s] = uint32(off)
	}
}

func (e *recordEncoder) rawStr(s string) {
	e.ctrl(mtString, len(s))
	e.b = append(e.b, s...)
}

func (e *recordEncoder) optStr(key string, p *string) {
	if p != nil {
		e.str(key)
		e.str(*p)
	}
}

func (e *recordEncoder) f64(f float64) {
	e.ctrl(mtFloat64, 8)
	e.b = binary.BigEndian.AppendUint64(e.b, math.Float64bits(f))
}

func (e *recordEncoder) optF64(key string, p *float64) {
	if p != nil {
		e.str(key)
		e.f64(*p)
	}
}

func (e *recordEncoder) u16(v uint16) {
	n := 2 - bits.LeadingZeros16(v)/8
	e.ctrl(mtUint16, n)
	for i := n; i > 0; i-- {
		e.b = append(e.b, byte(v>>(8*(i-1))))
	}
}

func (e *recordEncoder) u32(v uint32) {
	n := 4 - bits.LeadingZeros32(v)/8
	e.ctrl(mtUint32, n)
	for i := n; i > 0; i-- {
		e.b = append(e.b, byte(v>>(8*(i-1))))
	}
}

// list appends an interned list of strings (interner.list): a pointer to
// an equal list written before, else the list.
func (e *recordEncoder) list(ss []string) {
	if len(ss) == 0 {
		e.ctrl(mtSlice, 0)
		return
	}
	e.kb = e.kb[:0]
	for _, s := range ss {
		e.kb = append(e.kb, s...)
		e.kb = append(e.kb, 0)
	}
	if off, ok := e.lists[string(e.kb)]; ok {
		e.pointer(off)
		return
	}
	k := string(e.kb)
	shared := e.listN < maxInterned
	if shared {
		e.listN++
	}
	off := e.off()
	e.ctrl(mtSlice, len(ss))
	for _, s := range ss {
		e.str(s)
	}
	if shared && off <= math.MaxUint32 {
		e.lists[k] = uint32(off)
	}
}

func (e *recordEncoder) attributions(as []ipmodel.Attribution) {
	e.ctrl(mtSlice, len(as))
	for i := range as {
		at := &as[i]
		e.ctrl(mtMap, 4)
		e.str("observed_at")
		e.str(at.ObservedAt)
		e.str("org_name")
		e.str(at.OrgName)
		e.str("signal_confidence")
		e.f64(at.SignalConfidence)
		e.str("signal_source")
		e.str(at.SignalSource)
	}
}

// record appends r's value (recordValue's map).
func (e *recordEncoder) record(r *ipmodel.Record) {
	f := Flags(r)
	n := 6 // assets, classifications, confidence, first_seen, last_seen, sources
	for _, set := range f {
		if set {
			n++
		}
	}
	if r.Network != "" {
		n++
	}
	if r.Provider != nil {
		n++
	}
	if r.ASN != 0 {
		n++
	}
	if len(r.Attributions) > 0 {
		n++
	}
	for _, p := range [3]*string{r.Country, r.Region, r.City} {
		if p != nil {
			n++
		}
	}
	e.ctrl(mtMap, n)
	if r.ASN != 0 {
		e.str("asn")
		e.u32(r.ASN)
	}
	e.str(keyAssets)
	e.ctrl(mtSlice, len(r.Assets))
	for i := range r.Assets {
		e.asset(&r.Assets[i])
	}
	if len(r.Attributions) > 0 {
		e.str("attributions")
		e.attributions(r.Attributions)
	}
	e.optStr("city", r.City)
	e.str(keyClassification)
	e.list(r.Classifications)
	e.str(keyConfidence)
	e.f64(r.Confidence)
	e.optStr("country", r.Country)
	e.str(keyFirstSeen)
	e.str(r.FirstSeen)
	for i, set := range f {
		if set {
			e.str(FlagNames[i])
			e.ctrl(mtBool, 1)
		}
	}
	e.str(keyLastSeen)
	e.str(r.LastSeen)
	if r.Network != "" {
		e.str(keyNetwork)
		e.str(r.Network)
	}
	e.optStr(keyProvider, r.Provider)
	e.optStr("region", r.Region)
	e.str(keySources)
	e.list(r.Sources)
}

func (e *recordEncoder) asset(a *ipmodel.Asset) {
	n := 8 // attributions, confidence_band, cves, evidence_sources, first_seen, last_seen, port, protocol_family
	for _, p := range [5]*string{a.Vendor, a.Product, a.VersionBand, a.VersionPrecision, a.ExactVersion} {
		if p != nil {
			n++
		}
	}
	if a.CveSummary != nil {
		n++
	}
	e.ctrl(mtMap, n)
	e.str("attributions")
	e.attributions(a.Attributions)
	e.str("confidence_band")
	e.str(a.ConfidenceBand)
	if s := a.CveSummary; s != nil {
		e.str("cve_summary")
		m := 2
		for _, set := range [4]bool{s.MaxSeverityScore != nil, s.MaxSeverityRating != nil, s.EolStatus != nil, s.LastComputedAt != nil} {
			if set {
				m++
			}
		}
		e.ctrl(mtMap, m)
		e.optStr("eol_status", s.EolStatus)
		e.str("kev_count")
		e.u32(clampU32(s.KevCount))
		e.optStr("last_computed_at", s.LastComputedAt)
		e.optStr("max_severity_rating", s.MaxSeverityRating)
		e.optF64("max_severity_score", s.MaxSeverityScore)
		e.str("total_count")
		e.u32(clampU32(s.TotalCount))
	}
	e.str("cves")
	e.ctrl(mtSlice, len(a.Cves))
	for i := range a.Cves {
		e.cve(&a.Cves[i])
	}
	e.str("evidence_sources")
	e.list(a.EvidenceSources)
	e.optStr("exact_version", a.ExactVersion)
	e.str(keyFirstSeen)
	e.str(a.FirstSeen)
	e.str(keyLastSeen)
	e.str(a.LastSeen)
	e.str(keyPort)
	e.u16(uint16(a.Port))
	e.optStr("product", a.Product)
	e.str(keyProtocolFamily)
	e.str(a.ProtocolFamily)
	e.optStr("vendor", a.Vendor)
	e.optStr("version_band", a.VersionBand)
	e.optStr("version_precision", a.VersionPrecision)
}

// cve appends an interned CVE finding (interner.cve): a pointer to an
// equal one written before, else the finding's map.
func (e *recordEncoder) cve(c *ipmodel.CveFinding) {
	e.kb = e.kb[:0]
	for _, s := range [3]string{c.CveID, c.DetectionConfidence, c.Source} {
		e.kb = append(e.kb, s...)
		e.kb = append(e.kb, 0)
	}
	for _, p := range [6]*string{c.SeverityRating, c.CvssVersion, c.KevAddedAt, c.EuvdID, c.JvnID, c.MatchedVia} {
		if p != nil {
			e.kb = append(e.kb, 2)
			e.kb = append(e.kb, *p...)
		} else {
			e.kb = append(e.kb, 1)
		}
		e.kb = append(e.kb, 0)
	}
	for _, p := range [3]*float64{c.SeverityScore, c.EpssScore, c.EpssPercentile} {
		if p != nil {
			e.kb = append(e.kb, 2)
			e.kb = binary.LittleEndian.AppendUint64(e.kb, math.Float64bits(*p))
		} else {
			e.kb = append(e.kb, 1)
		}
	}
	if off, ok := e.cves[string(e.kb)]; ok {
		e.pointer(off)
		return
	}
	k := string(e.kb)
	shared := e.cveN < maxInterned
	if shared {
		e.cveN++
	}
	off := e.off()
	n := 3
	for _, set := range [9]bool{c.SeverityScore != nil, c.SeverityRating != nil, c.CvssVersion != nil, c.KevAddedAt != nil,
		c.EpssScore != nil, c.EpssPercentile != nil, c.EuvdID != nil, c.JvnID != nil, c.MatchedVia != nil} {
		if set {
			n++
		}
	}
	e.ctrl(mtMap, n)
	e.str("cve_id")
	e.str(c.CveID)
	e.optStr("cvss_version", c.CvssVersion)
	e.str("detection_confidence")
	e.str(c.DetectionConfidence)
	e.optF64("epss_percentile", c.EpssPercentile)
	e.optF64("epss_score", c.EpssScore)
	e.optStr("euvd_id", c.EuvdID)
	e.optStr("jvn_id", c.JvnID)
	e.optStr("kev_added_at", c.KevAddedAt)
	e.optStr("matched_via", c.MatchedVia)
	e.optStr("severity_rating", c.SeverityRating)
	e.optF64("severity_score", c.SeverityScore)
	e.str("source")
	e.str(c.Source)
	if shared && off <= math.MaxUint32 {
		e.cves[k] = uint32(off)
	}
}
