package ipapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"runtime"
	"strconv"
	"sync"

	"github.com/netintel/netintel/internal/jsonx"
)

// The lookup's body is rendered into a pooled buffer and written at once:
// by the MMDB index straight from the snapshot bytes (appendLookup below),
// by other indexes through shapeLookup and encoding/json. Both give the
// same bytes (TestAppendLookup_MatchesEncodingJSON).

// bodyPool holds lookup body buffers. Buffers that grew past maxPooledBody
// (a lookup with thousands of CVEs) are left to the GC rather than kept.
var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

const maxPooledBody = 64 << 10

// lookupAppender is an Index that renders a lookup body itself.
type lookupAppender interface {
	// appendLookup appends the LookupResult JSON of addr (a canonical,
	// unmapped address), shaped for p and tier, and a newline to dst. It
	// returns the number of assets shown: 0 when the address is unknown or
	// nothing is left to show, and dst's contents are then undefined.
	appendLookup(dst []byte, addr netip.Addr, p lookupParams, tier Tier) ([]byte, int, error)
}

// appendLookup renders the lookup body of addr from idx.
func appendLookup(dst []byte, idx Index, addr netip.Addr, p lookupParams, tier Tier) ([]byte, int, error) {
	if a, ok := idx.(lookupAppender); ok {
		return a.appendLookup(dst, addr, p, tier)
	}
	return appendLookupShaped(dst, idx, addr, p, tier)
}

// appendLookupShaped renders through Index.Lookup, shapeLookup and
// encoding/json: the reference the MMDB renderer is tested against.
func appendLookupShaped(dst []byte, idx Index, addr netip.Addr, p lookupParams, tier Tier) ([]byte, int, error) {
	rec, found, err := idx.Lookup(addr, p.cves)
	if err != nil || !found {
		return dst, 0, err
	}
	res := shapeLookup(addr.String(), rec, p, tier)
	if len(res.Assets) == 0 {
		return dst, 0, nil
	}
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return dst, 0, fmt.Errorf("encode lookup %s: %w", addr, err)
	}
	return buf.Bytes(), len(res.Assets), nil
}

// writeBody writes a rendered JSON body. net/http works out Content-Length
// by itself for a body that fits its 2 KiB chunking buffer; a longer one
// would go out chunked, which the known length avoids.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if len(body) > 2048 {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// MMDB keys the lookup reads, in the order of the JSON it writes.
var (
	assetKeys = []string{"port", "protocol_family", "vendor", "product", "version_band", "version_precision", "exact_version",
		"confidence_band", "evidence_sources", "first_seen", "last_seen", "attributions", "cve_summary", "cves"}
	attributionKeys = []string{"org_name", "signal_source", "signal_confidence", "observed_at"}
	summaryKeys     = []string{"total_count", "kev_count", "max_severity_score", "max_severity_rating", "eol_status", "last_computed_at"}
	cveKeys         = []string{"cve_id", "detection_confidence", "source", "severity_score", "severity_rating", "cvss_version",
		"kev_added_at", "epss_score", "epss_percentile", "euvd_id", "jvn_id", "matched_via"}
)

// Indexes into assetKeys, attributionKeys, summaryKeys and cveKeys.
const (
	aPort, aProtocolFamily, aVendor, aProduct, aVersionBand, aVersionPrecision, aExactVersion   = 0, 1, 2, 3, 4, 5, 6
	aConfidenceBand, aEvidenceSources, aFirstSeen, aLastSeen, aAttributions, aCveSummary, aCves = 7, 8, 9, 10, 11, 12, 13

	atOrgName, atSignalSource, atSignalConfidence, atObservedAt = 0, 1, 2, 3

	sTotalCount, sKevCount, sMaxScore, sMaxRating, sEolStatus, sLastComputedAt = 0, 1, 2, 3, 4, 5

	cCveID, cDetection, cSource, cScore, cRating, cCvssVersion = 0, 1, 2, 3, 4, 5
	cKevAddedAt, cEpssScore, cEpssPercentile, cEuvdID, cJvnID  = 6, 7, 8, 9, 10
	cMatchedVia                                                = 11
)

// appendLookup renders the body from the MMDB record in place: the same
// JSON as shapeLookup and encoding/json give for the decoded record
// (fields in struct order, nil pointers as null, empty lists as []), with
// no decoded record, no reflection and no allocation.
func (m mmdbIndex) appendLookup(dst []byte, addr netip.Addr, p lookupParams, tier Tier) ([]byte, int, error) {
	defer runtime.KeepAlive(m.owner) // the map stays until the body is rendered
	res, found, err := m.find(addr)
	if err != nil || !found {
		return dst, 0, err
	}
	r := renderer{d: m.data, buf: dst, p: p, tier: tier}
	n := r.lookup(uint(res.Offset()), addr)
	if r.err != nil {
		return dst, 0, fmt.Errorf("mmdb record of %s: %w", addr, r.err)
	}
	return r.buf, n, nil
}

// renderer appends JSON from MMDB values to buf. The first error sticks
// (later ones are dropped) and loops stop on it; the caller checks err at
// the end and then discards buf.
type renderer struct {
	d    mmdbData
	buf  []byte
	err  error
	p    lookupParams
	tier Tier
}

func (r *renderer) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// lookup renders the LookupResult of the record at off and returns the
// number of assets shown. It reads the record once: the assets are
// rendered where the map holds them (again, over the first rendering, if
// the key comes twice: the last value counts, as for the decoder).
func (r *renderer) lookup(off uint, addr netip.Addr) int {
	r.buf = append(r.buf, `{"ip":"`...)
	r.buf = addr.AppendTo(r.buf) // digits, dots, colons and hex: nothing to escape
	r.buf = append(r.buf, `","assets":[`...)
	mark, shown := len(r.buf), 0
	n, p, _, err := r.d.mapAt(off)
	r.fail(err)
	for i := uint(0); i < n && r.err == nil; i++ {
		key, next, err := r.d.key(p)
		r.fail(err)
		if string(key) == "assets" {
			r.buf = r.buf[:mark]
			shown, p = r.assets(next)
			continue
		}
		p, err = r.d.skip(next)
		r.fail(err)
	}
	r.buf = append(r.buf, "]}\n"...)
	return shown
}

// assets renders the asset array at off and returns the number shown and
// the offset after the array.
func (r *renderer) assets(off uint) (int, uint) {
	n, el, end, err := r.d.array(off)
	r.fail(err)
	shown := 0
	for i := uint(0); i < n && r.err == nil; i++ {
		var ok bool
		if ok, el = r.asset(el, shown > 0); ok {
			shown++
		}
	}
	if end == 0 {
		end = el
	}
	return shown, end
}

// asset renders the asset at off as shapeLookup shapes it, preceded by a
// comma when comma is set, and reports whether it was shown and where it
// ends. The snapshot's build for the tier's audience holds only what the
// tier may see, so nothing is filtered here but by the query.
func (r *renderer) asset(off uint, comma bool) (bool, uint) {
	var a mmdbMap
	end, err := r.d.fields(off, assetKeys, &a)
	if err != nil {
		r.fail(err)
		return false, 0
	}
	if comma {
		r.buf = append(r.buf, ',')
	}
	r.buf = append(r.buf, `{"port":`...)
	r.int(&a, aPort)
	r.buf = append(r.buf, `,"protocol_family":`...)
	r.str(&a, aProtocolFamily, false)
	r.buf = append(r.buf, `,"vendor":`...)
	r.str(&a, aVendor, true)
	r.buf = append(r.buf, `,"product":`...)
	r.str(&a, aProduct, true)
	r.buf = append(r.buf, `,"version_band":`...)
	r.str(&a, aVersionBand, true)
	r.buf = append(r.buf, `,"version_precision":`...)
	r.str(&a, aVersionPrecision, true)
	r.buf = append(r.buf, `,"exact_version":`...)
	r.str(&a, aExactVersion, true)
	r.buf = append(r.buf, `,"confidence_band":`...)
	r.str(&a, aConfidenceBand, false)
	r.buf = append(r.buf, `,"evidence_sources":[`...)
	if a.has(aEvidenceSources) {
		n, el, _, err := r.d.array(a.at[aEvidenceSources])
		r.fail(err)
		for i := uint(0); i < n && r.err == nil; i++ {
			if i > 0 {
				r.buf = append(r.buf, ',')
			}
			var s []byte
			s, el, err = r.d.str(el)
			r.fail(err)
			r.buf = jsonx.AppendBytes(r.buf, s)
		}
	}
	r.buf = append(r.buf, `],"first_seen":`...)
	r.str(&a, aFirstSeen, false)
	r.buf = append(r.buf, `,"last_seen":`...)
	r.str(&a, aLastSeen, false)
	r.buf = append(r.buf, `,"attributions":[`...)
	if a.has(aAttributions) {
		n, el, _, err := r.d.array(a.at[aAttributions])
		r.fail(err)
		shown := 0
		for i := uint(0); i < n && r.err == nil; i++ {
			var ok bool
			if ok, el = r.attribution(el, shown > 0); ok {
				shown++
			}
		}
	}
	r.buf = append(r.buf, `],"cve_summary":`...)
	if a.has(aCveSummary) {
		r.summary(a.at[aCveSummary])
	} else {
		r.buf = append(r.buf, "null"...)
	}
	if r.p.cves {
		r.buf = append(r.buf, `,"cves":[`...)
		if a.has(aCves) {
			n, el, _, err := r.d.array(a.at[aCves])
			r.fail(err)
			shown := 0
			for i := uint(0); i < n && r.err == nil; i++ {
				var ok bool
				if ok, el = r.cve(el, shown > 0); ok {
					shown++
				}
			}
		}
		r.buf = append(r.buf, ']')
	}
	r.buf = append(r.buf, '}')
	return true, end
}

// attribution renders the attribution at off unless min_confidence or the
// tier leaves it out, and reports whether it did and where it ends.
func (r *renderer) attribution(off uint, comma bool) (bool, uint) {
	var at mmdbMap
	end, err := r.d.fields(off, attributionKeys, &at)
	if err != nil {
		r.fail(err)
		return false, 0
	}
	var conf float64
	if at.has(atSignalConfidence) {
		if conf, err = r.d.float(at.at[atSignalConfidence]); err != nil {
			r.fail(err)
			return false, 0
		}
	}
	if conf < r.p.minConfidence {
		return false, end
	}
	if comma {
		r.buf = append(r.buf, ',')
	}
	r.buf = append(r.buf, `{"org_name":`...)
	r.str(&at, atOrgName, false)
	r.buf = append(r.buf, `,"signal_source":`...)
	r.str(&at, atSignalSource, false)
	r.buf = append(r.buf, `,"signal_confidence":`...)
	r.float(&at, atSignalConfidence, false)
	r.buf = append(r.buf, `,"observed_at":`...)
	r.str(&at, atObservedAt, false)
	r.buf = append(r.buf, '}')
	return true, end
}

// summary renders a cve_summary; last_computed_at is a freshness field,
// shown from pro on.
func (r *renderer) summary(off uint) {
	var s mmdbMap
	if _, err := r.d.fields(off, summaryKeys, &s); err != nil {
		r.fail(err)
		return
	}
	r.buf = append(r.buf, `{"total_count":`...)
	r.int(&s, sTotalCount)
	r.buf = append(r.buf, `,"kev_count":`...)
	r.int(&s, sKevCount)
	r.buf = append(r.buf, `,"max_severity_score":`...)
	r.float(&s, sMaxScore, true)
	r.buf = append(r.buf, `,"max_severity_rating":`...)
	r.str(&s, sMaxRating, true)
	r.buf = append(r.buf, `,"eol_status":`...)
	r.str(&s, sEolStatus, true)
	if r.tier >= tierPro && s.has(sLastComputedAt) {
		r.buf = append(r.buf, `,"last_computed_at":`...)
		r.str(&s, sLastComputedAt, false)
	}
	r.buf = append(r.buf, '}')
}

// cve renders the finding at off unless min_severity, kev_only or
// cve_min_confidence leave it out (filterCves), and reports whether it did
// and where it ends.
func (r *renderer) cve(off uint, comma bool) (bool, uint) {
	var c mmdbMap
	end, err := r.d.fields(off, cveKeys, &c)
	if err != nil {
		r.fail(err)
		return false, 0
	}
	if r.p.minSeverity >= 0 {
		if !c.has(cRating) {
			return false, end
		}
		s, _, err := r.d.str(c.at[cRating])
		if err != nil {
			r.fail(err)
			return false, 0
		}
		if rank(severityLevels, s) < r.p.minSeverity {
			return false, end
		}
	}
	if r.p.kevOnly && !c.has(cKevAddedAt) {
		return false, end
	}
	if r.p.minDetection >= 0 {
		var s []byte
		if c.has(cDetection) {
			if s, _, err = r.d.str(c.at[cDetection]); err != nil {
				r.fail(err)
				return false, 0
			}
		}
		if rank(confidenceLevels, s) < r.p.minDetection {
			return false, end
		}
	}
	if comma {
		r.buf = append(r.buf, ',')
	}
	r.buf = append(r.buf, `{"cve_id":`...)
	r.str(&c, cCveID, false)
	r.buf = append(r.buf, `,"detection_confidence":`...)
	r.str(&c, cDetection, false)
	r.buf = append(r.buf, `,"source":`...)
	r.str(&c, cSource, false)
	r.buf = append(r.buf, `,"severity_score":`...)
	r.float(&c, cScore, true)
	r.buf = append(r.buf, `,"severity_rating":`...)
	r.str(&c, cRating, true)
	r.buf = append(r.buf, `,"cvss_version":`...)
	r.str(&c, cCvssVersion, true)
	r.buf = append(r.buf, `,"kev_added_at":`...)
	r.str(&c, cKevAddedAt, true)
	r.buf = append(r.buf, `,"epss_score":`...)
	r.float(&c, cEpssScore, true)
	r.buf = append(r.buf, `,"epss_percentile":`...)
	r.float(&c, cEpssPercentile, true)
	r.buf = append(r.buf, `,"euvd_id":`...)
	r.str(&c, cEuvdID, true)
	r.buf = append(r.buf, `,"jvn_id":`...)
	r.str(&c, cJvnID, true)
	r.buf = append(r.buf, `,"matched_via":`...)
	r.str(&c, cMatchedVia, true)
	r.buf = append(r.buf, '}')
	return true, end
}

// str renders field i of m as a JSON string; an absent field is null when
// nullable (a *string), else "" (a string's zero value).
func (r *renderer) str(m *mmdbMap, i int, nullable bool) {
	if !m.has(i) {
		if nullable {
			r.buf = append(r.buf, "null"...)
		} else {
			r.buf = append(r.buf, `""`...)
		}
		return
	}
	s, _, err := r.d.str(m.at[i])
	r.fail(err)
	r.buf = jsonx.AppendBytes(r.buf, s)
}

// float renders field i of m as a JSON number (null or 0 when absent).
func (r *renderer) float(m *mmdbMap, i int, nullable bool) {
	if !m.has(i) {
		if nullable {
			r.buf = append(r.buf, "null"...)
		} else {
			r.buf = append(r.buf, '0')
		}
		return
	}
	f, err := r.d.float(m.at[i])
	r.fail(err)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		// encoding/json refuses these too; JSON has no such numbers.
		r.fail(errMMDBData)
		return
	}
	r.buf = jsonx.AppendFloat(r.buf, f)
}

// int renders field i of m as a JSON integer (0 when absent).
func (r *renderer) int(m *mmdbMap, i int) {
	var v int64
	if m.has(i) {
		var err error
		v, err = r.d.int(m.at[i])
		r.fail(err)
	}
	r.buf = strconv.AppendInt(r.buf, v, 10)
}

// rank is slices.Index(levels, string(s)) without the conversion.
func rank(levels []string, s []byte) int {
	for i, l := range levels {
		if l == string(s) {
			return i
		}
	}
	return -1
}
