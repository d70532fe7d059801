package publish

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/jsonx"
)

// The NDJSON lines and the CSV's JSON columns are written by the append
// functions below rather than by encoding/json's reflection, which cost
// about a third of those files' CPU. They write exactly the bytes
// json.Encoder (SetEscapeHTML(false)) writes for ndRecord, ndAsset and
// the attribution lists: the same field order, nulls, number and string
// forms (jsonenc_test.go compares them on generated and edge-case
// records). A float that JSON cannot hold (NaN, ±Inf) falls back to
// encoding/json, which reports it.

// appendNDJSON appends r's NDJSON line (without its line end), as
// json.Encoder writes toND(r).
func appendNDJSON(b []byte, r *ipmodel.Record) ([]byte, error) {
	if !recordFloatsOK(r) {
		return appendStdJSON(b, toND(r))
	}
	f := Flags(r)
	b = append(b, `{"ip":`...)
	b = jsonx.AppendString(b, r.IP)
	b = append(b, `,"network":`...)
	if r.Network == "" {
		b = append(b, "null"...)
	} else {
		b = jsonx.AppendString(b, r.Network)
	}
	b = append(b, `,"classifications":`...)
	b = appendJSONStrings(b, r.Classifications)
	b = append(b, `,"provider":`...)
	b = appendJSONOptString(b, r.Provider)
	b = append(b, `,"confidence":`...)
	b = jsonx.AppendFloat(b, r.Confidence)
	b = append(b, `,"first_seen":`...)
	b = jsonx.AppendString(b, r.FirstSeen)
	b = append(b, `,"last_seen":`...)
	b = jsonx.AppendString(b, r.LastSeen)
	b = append(b, `,"sources":`...)
	b = appendJSONStrings(b, r.Sources)
	for i, name := range FlagNames {
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		b = strconv.AppendBool(b, f[i])
	}
	b = append(b, `,"assets":`...)
	b = appendJSONAssets(b, r.Assets)
	b = append(b, `,"asn":`...)
	if r.ASN == 0 {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendUint(b, uint64(r.ASN), 10)
	}
	b = append(b, `,"attributions":`...)
	b = appendJSONAttributions(b, r.Attributions)
	b = append(b, `,"country":`...)
	b = appendJSONOptString(b, r.Country)
	b = append(b, `,"region":`...)
	b = appendJSONOptString(b, r.Region)
	b = append(b, `,"city":`...)
	b = appendJSONOptString(b, r.City)
	return append(b, '}'), nil
}

// appendStdJSON appends v as json.Encoder (no HTML escaping) writes it,
// without the line end.
func appendStdJSON(b []byte, v any) ([]byte, error) {
	var buf jsonBuf
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	out := buf.b
	if n := len(out); n > 0 && out[n-1] == '\n' {
		out = out[:n-1]
	}
	return append(b, out...), nil
}

type jsonBuf struct{ b []byte }

func (j *jsonBuf) Write(p []byte) (int, error) { j.b = append(j.b, p...); return len(p), nil }

// appendJSONAssets appends as as ndAssets encode (an empty list for nil).
func appendJSONAssets(b []byte, as []ipmodel.Asset) []byte {
	b = append(b, '[')
	for i := range as {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONAsset(b, &as[i])
	}
	return append(b, ']')
}

func appendJSONAsset(b []byte, a *ipmodel.Asset) []byte {
	b = append(b, `{"port":`...)
	b = strconv.AppendInt(b, int64(a.Port), 10)
	b = append(b, `,"protocol_family":`...)
	b = jsonx.AppendString(b, a.ProtocolFamily)
	b = append(b, `,"vendor":`...)
	b = appendJSONOptString(b, a.Vendor)
	b = append(b, `,"product":`...)
	b = appendJSONOptString(b, a.Product)
	b = append(b, `,"version_band":`...)
	b = appendJSONOptString(b, a.VersionBand)
	b = append(b, `,"version_precision":`...)
	b = appendJSONOptString(b, a.VersionPrecision)
	b = append(b, `,"exact_version":`...)
	b = appendJSONOptString(b, a.ExactVersion)
	b = append(b, `,"confidence_band":`...)
	b = jsonx.AppendString(b, a.ConfidenceBand)
	b = append(b, `,"evidence_sources":`...)
	b = appendJSONStrings(b, a.EvidenceSources)
	b = append(b, `,"first_seen":`...)
	b = jsonx.AppendString(b, a.FirstSeen)
	b = append(b, `,"last_seen":`...)
	b = jsonx.AppendString(b, a.LastSeen)
	b = append(b, `,"attributions":`...)
	b = appendJSONAttributions(b, a.Attributions)
	b = append(b, `,"cve_summary":`...)
	if s := a.CveSummary; s == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"total_count":`...)
		b = strconv.AppendInt(b, int64(s.TotalCount), 10)
		b = append(b, `,"kev_count":`...)
		b = strconv.AppendInt(b, int64(s.KevCount), 10)
		b = append(b, `,"max_severity_score":`...)
		b = appendJSONOptFloat(b, s.MaxSeverityScore)
		b = append(b, `,"max_severity_rating":`...)
		b = appendJSONOptString(b, s.MaxSeverityRating)
		b = append(b, `,"eol_status":`...)
		b = appendJSONOptString(b, s.EolStatus)
		b = append(b, `,"last_computed_at":`...)
		b = appendJSONOptString(b, s.LastComputedAt)
		b = append(b, '}')
	}
	b = append(b, `,"cves":[`...)
	for i := range a.Cves {
		c := &a.Cves[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"cve_id":`...)
		b = jsonx.AppendString(b, c.CveID)
		b = append(b, `,"detection_confidence":`...)
		b = jsonx.AppendString(b, c.DetectionConfidence)
		b = append(b, `,"source":`...)
		b = jsonx.AppendString(b, c.Source)
		b = append(b, `,"severity_score":`...)
		b = appendJSONOptFloat(b, c.SeverityScore)
		b = append(b, `,"severity_rating":`...)
		b = appendJSONOptString(b, c.SeverityRating)
		b = append(b, `,"cvss_version":`...)
		b = appendJSONOptString(b, c.CvssVersion)
		b = append(b, `,"kev_added_at":`...)
		b = appendJSONOptString(b, c.KevAddedAt)
		b = append(b, `,"epss_score":`...)
		b = appendJSONOptFloat(b, c.EpssScore)
		b = append(b, `,"epss_percentile":`...)
		b = appendJSONOptFloat(b, c.EpssPercentile)
		b = append(b, `,"euvd_id":`...)
		b = appendJSONOptString(b, c.EuvdID)
		b = append(b, `,"jvn_id":`...)
		b = appendJSONOptString(b, c.JvnID)
		b = append(b, `,"matched_via":`...)
		b = appendJSONOptString(b, c.MatchedVia)
		b = append(b, '}')
	}
	return append(b, ']', '}')
}

// appendJSONAttributions appends as as a JSON list (empty for nil).
func appendJSONAttributions(b []byte, as []ipmodel.Attribution) []byte {
	b = append(b, '[')
	for i := range as {
		at := &as[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"org_name":`...)
		b = jsonx.AppendString(b, at.OrgName)
		b = append(b, `,"signal_source":`...)
		b = jsonx.AppendString(b, at.SignalSource)
		b = append(b, `,"signal_confidence":`...)
		b = jsonx.AppendFloat(b, at.SignalConfidence)
		b = append(b, `,"observed_at":`...)
		b = jsonx.AppendString(b, at.ObservedAt)
		b = append(b, '}')
	}
	return append(b, ']')
}

// recordFloatsOK reports whether every float of r is one JSON holds.
func recordFloatsOK(r *ipmodel.Record) bool {
	if !finite(r.Confidence) || !attributionFloatsOK(r.Attributions) {
		return false
	}
	for i := range r.Assets {
		if !assetFloatsOK(&r.Assets[i]) {
			return false
		}
	}
	return true
}

func assetFloatsOK(a *ipmodel.Asset) bool {
	if !attributionFloatsOK(a.Attributions) {
		return false
	}
	if s := a.CveSummary; s != nil && !optFinite(s.MaxSeverityScore) {
		return false
	}
	for i := range a.Cves {
		c := &a.Cves[i]
		if !optFinite(c.SeverityScore) || !optFinite(c.EpssScore) || !optFinite(c.EpssPercentile) {
			return false
		}
	}
	return true
}

func attributionFloatsOK(as []ipmodel.Attribution) bool {
	for i := range as {
		if !finite(as[i].SignalConfidence) {
			return false
		}
	}
	return true
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func optFinite(p *float64) bool { return p == nil || finite(*p) }

func appendJSONStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonx.AppendString(b, s)
	}
	return append(b, ']')
}

func appendJSONOptString(b []byte, p *string) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return jsonx.AppendString(b, *p)
}

func appendJSONOptFloat(b []byte, p *float64) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return jsonx.AppendFloat(b, *p)
}
