package publish

import (
	"cmp"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/inserter"
	"github.com/maxmind/mmdbwriter/mmdbtype"

	"github.com/netintel/netintel/internal/ipmodel"
)

// MMDB keys of our own, beside the GeoIP2 flags. They are exactly the
// maxminddb struct tags of ipmodel.Record and its nested types, so that
// maxminddb-golang decodes a record straight into ipmodel.Record.
const (
	keyNetwork        = "network"
	keyClassification = "classification"
	keyProvider       = "provider"
	keyConfidence     = "confidence"
	keyFirstSeen      = "first_seen"
	keyLastSeen       = "last_seen"
	keySources        = "sources"
	keyAssets         = "assets"
	keyPort           = "port"
	keyProtocolFamily = "protocol_family"
)

// mmdbWriter builds the MMDB tree in memory (mmdbwriter keeps its whole
// tree there) and writes it on Close. To keep that memory small, repeated
// values (strings of low cardinality, string lists, CVE findings) are
// interned so that records share them, and mmdbwriter deduplicates whole
// records by content.
type mmdbWriter struct {
	w    io.Writer
	tree *mmdbwriter.Tree
	in   *interner
	rows int64
}

// newMMDBWriter returns a writer of a GeoIP2-Anonymous-IP MMDB with IPv4
// and IPv6 in one tree. buildTime is the metadata build epoch.
func newMMDBWriter(w io.Writer, buildTime time.Time) (*mmdbWriter, error) {
	tree, err := mmdbwriter.New(mmdbwriter.Options{
		BuildEpoch:   buildTime.Unix(),
		DatabaseType: DatabaseType,
		Description: map[string]string{
			"en": "netintel IP intelligence: anonymity flags, remote-access assets and CVEs (schema " + ipmodel.SchemaVersion + ")",
		},
		Languages: []string{"en"},
		IPVersion: 6,
		// 32-bit records: room for tens of millions of networks.
		RecordSize: 32,
		// Every address the state holds is published, even in reserved
		// space, so that the MMDB holds the same records as the other files.
		IncludeReservedNetworks: true,
		Inserter:                mergeInserter,
	})
	if err != nil {
		return nil, fmt.Errorf("new mmdb tree: %w", err)
	}
	return &mmdbWriter{w: w, tree: tree, in: newInterner()}, nil
}

// Write inserts one record: a range as its network, a host as a /32 or
// /128. Where networks overlap the values are merged (see mergeMMDB), so a
// host inside a range carries both, whatever the insertion order.
func (m *mmdbWriter) Write(r *ipmodel.Record, pfx netip.Prefix) error {
	v := m.value(r)
	n := &net.IPNet{IP: net.IP(pfx.Addr().AsSlice()), Mask: net.CIDRMask(pfx.Bits(), pfx.Addr().BitLen())}
	if err := m.tree.Insert(n, v); err != nil {
		return fmt.Errorf("mmdb insert %s: %w", pfx, err)
	}
	m.rows++
	return nil
}

// Close writes the tree to the underlying writer.
func (m *mmdbWriter) Close() error {
	if _, err := m.tree.WriteTo(m.w); err != nil {
		return fmt.Errorf("write mmdb: %w", err)
	}
	m.tree, m.in = nil, nil
	return nil
}

// Rows is the number of records inserted.
func (m *mmdbWriter) Rows() int64 { return m.rows }

func mergeInserter(v mmdbtype.DataType) inserter.Func {
	return func(old mmdbtype.DataType) (mmdbtype.DataType, error) {
		o, ok := old.(mmdbtype.Map)
		if !ok || o == nil {
			return v, nil
		}
		n, ok := v.(mmdbtype.Map)
		if !ok || n == nil {
			return old, nil
		}
		return mergeMMDB(o, n), nil
	}
}

// value converts a record to its MMDB map. Null pointers and false flags
// are omitted; ip is the lookup key and not stored.
func (m *mmdbWriter) value(r *ipmodel.Record) mmdbtype.Map {
	in := m.in
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
		assets = append(assets, m.asset(&r.Assets[i]))
	}
	v[keyAssets] = assets
	return v
}

func (m *mmdbWriter) asset(a *ipmodel.Asset) mmdbtype.Map {
	in := m.in
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
	attrs := make(mmdbtype.Slice, 0, len(a.Attributions))
	for _, at := range a.Attributions {
		attrs = append(attrs, mmdbtype.Map{
			"org_name":          in.str(at.OrgName),
			"signal_source":     in.str(at.SignalSource),
			"signal_confidence": mmdbtype.Float64(at.SignalConfidence),
			"observed_at":       mmdbtype.String(at.ObservedAt),
		})
	}
	v["attributions"] = attrs
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
	kb    strings.Builder
}

func newInterner() *interner {
	return &interner{strs: map[string]mmdbtype.String{}, lists: map[string]mmdbtype.Slice{}, cves: map[string]mmdbtype.Map{}}
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
	}
	return v
}

// mergeMMDB merges the values of two overlapping records into a new map
// (neither input is modified: mmdbwriter shares values between networks).
// The merge is symmetric, so the result does not depend on insertion order:
// flags are ORed; classifications and sources are united (classifications
// in canonical order, sources sorted); confidence is the higher one;
// first_seen the earlier and last_seen the later; network and provider come
// from the more specific record (a host, which has no network key, beats
// any range; between ranges the longer prefix); assets are concatenated and
// sorted by port and protocol family.
func mergeMMDB(a, b mmdbtype.Map) mmdbtype.Map {
	if moreSpecific(b, a) {
		a, b = b, a
	}
	out := make(mmdbtype.Map, len(a)+2)
	for k, v := range a {
		out[k] = v
	}
	for _, f := range FlagNames {
		if b[mmdbtype.String(f)] == mmdbtype.Bool(true) {
			out[mmdbtype.String(f)] = mmdbtype.Bool(true)
		}
	}
	if _, ok := a[keyNetwork]; !ok {
		if n, ok := b[keyNetwork]; ok {
			out[keyNetwork] = n
		}
	}
	if _, ok := a[keyProvider]; !ok {
		if p, ok := b[keyProvider]; ok {
			out[keyProvider] = p
		}
	}
	out[keyClassification] = unionStrings(a[keyClassification], b[keyClassification], classRank)
	out[keySources] = unionStrings(a[keySources], b[keySources], strings.Compare)
	if bc, ok := b[keyConfidence].(mmdbtype.Float64); ok {
		if ac, ok := a[keyConfidence].(mmdbtype.Float64); !ok || bc > ac {
			out[keyConfidence] = bc
		}
	}
	if bs, ok := b[keyFirstSeen].(mmdbtype.String); ok {
		if as, ok := a[keyFirstSeen].(mmdbtype.String); !ok || bs < as {
			out[keyFirstSeen] = bs
		}
	}
	if bs, ok := b[keyLastSeen].(mmdbtype.String); ok {
		if as, ok := a[keyLastSeen].(mmdbtype.String); !ok || bs > as {
			out[keyLastSeen] = bs
		}
	}
	aa, _ := a[keyAssets].(mmdbtype.Slice)
	ba, _ := b[keyAssets].(mmdbtype.Slice)
	if len(ba) > 0 {
		assets := make(mmdbtype.Slice, 0, len(aa)+len(ba))
		assets = append(append(assets, aa...), ba...)
		slices.SortStableFunc(assets, func(x, y mmdbtype.DataType) int {
			xm, _ := x.(mmdbtype.Map)
			ym, _ := y.(mmdbtype.Map)
			xp, _ := xm[keyPort].(mmdbtype.Uint16)
			yp, _ := ym[keyPort].(mmdbtype.Uint16)
			if c := cmp.Compare(xp, yp); c != 0 {
				return c
			}
			xf, _ := xm[keyProtocolFamily].(mmdbtype.String)
			yf, _ := ym[keyProtocolFamily].(mmdbtype.String)
			return strings.Compare(string(xf), string(yf))
		})
		out[keyAssets] = assets
	}
	return out
}

// moreSpecific reports whether record value a is more specific than b: a
// host (no network key) beats a range, a longer prefix beats a shorter one,
// and equal prefixes are ordered by their text so the choice is stable.
func moreSpecific(a, b mmdbtype.Map) bool {
	an, aok := a[keyNetwork].(mmdbtype.String)
	bn, bok := b[keyNetwork].(mmdbtype.String)
	switch {
	case !aok && !bok:
		return false
	case !aok:
		return true
	case !bok:
		return false
	}
	ap, aerr := netip.ParsePrefix(string(an))
	bp, berr := netip.ParsePrefix(string(bn))
	if aerr == nil && berr == nil && ap.Bits() != bp.Bits() {
		return ap.Bits() > bp.Bits()
	}
	return an < bn
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

func unionStrings(a, b mmdbtype.DataType, order func(x, y string) int) mmdbtype.Slice {
	as, _ := a.(mmdbtype.Slice)
	bs, _ := b.(mmdbtype.Slice)
	seen := make(map[string]bool, len(as)+len(bs))
	var out []string
	for _, s := range append(slices.Clip(as), bs...) {
		if str, ok := s.(mmdbtype.String); ok && !seen[string(str)] {
			seen[string(str)] = true
			out = append(out, string(str))
		}
	}
	slices.SortStableFunc(out, func(x, y string) int {
		if c := order(x, y); c != 0 {
			return c
		}
		return strings.Compare(x, y)
	})
	res := make(mmdbtype.Slice, len(out))
	for i, s := range out {
		res[i] = mmdbtype.String(s)
	}
	return res
}
