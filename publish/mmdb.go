package publish

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/maxmind/mmdbwriter/mmdbtype"

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
