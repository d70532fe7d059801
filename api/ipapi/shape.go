package ipapi

import (
	"slices"

	"github.com/netintel/netintel/internal/ipmodel"
)

// LookupResult is the spec's LookupResult.
type LookupResult struct {
	IP     string     `json:"ip"`
	Assets []assetOut `json:"assets"`
}

// assetOut is an Asset as the lookup shows it: cves only on request (then
// always present, possibly empty), and the CVE summary shaped per tier.
type assetOut struct {
	ipmodel.Asset
	CveSummary *summaryOut           `json:"cve_summary"`
	Cves       *[]ipmodel.CveFinding `json:"cves,omitempty"`
}

// summaryOut leaves last_computed_at (a freshness field) out below pro.
type summaryOut struct {
	ipmodel.CveSummary
	LastComputedAt *string `json:"last_computed_at,omitempty"`
}

// shapeLookup applies the query's filters and the tier's fields to a
// record's assets; r comes from the tier's audience build, so it holds
// only data classes the tier may see. The result has no assets when
// nothing is left to show.
func shapeLookup(ip string, r *ipmodel.Record, p lookupParams, tier Tier) LookupResult {
	out := LookupResult{IP: ip, Assets: make([]assetOut, 0, len(r.Assets))}
	for i := range r.Assets {
		a := &r.Assets[i]
		o := assetOut{Asset: *a}
		o.Asset.Cves = nil
		if o.EvidenceSources == nil {
			o.EvidenceSources = []string{}
		}
		attrs := make([]ipmodel.Attribution, 0, len(a.Attributions))
		for j := range a.Attributions {
			at := &a.Attributions[j]
			if at.SignalConfidence < p.minConfidence {
				continue
			}
			attrs = append(attrs, *at)
		}
		o.Attributions = attrs
		if a.CveSummary != nil {
			s := &summaryOut{CveSummary: *a.CveSummary}
			if tier >= tierPro {
				s.LastComputedAt = a.CveSummary.LastComputedAt
			}
			o.CveSummary = s
		}
		if p.cves {
			cves := filterCves(a.Cves, p)
			o.Cves = &cves
		}
		out.Assets = append(out.Assets, o)
	}
	return out
}

// filterCves keeps the findings that pass min_severity, kev_only and
// cve_min_confidence. A finding without a rating fails a min_severity.
func filterCves(in []ipmodel.CveFinding, p lookupParams) []ipmodel.CveFinding {
	out := make([]ipmodel.CveFinding, 0, len(in))
	for _, c := range in {
		if p.minSeverity >= 0 && (c.SeverityRating == nil || slices.Index(severityLevels, *c.SeverityRating) < p.minSeverity) {
			continue
		}
		if p.kevOnly && c.KevAddedAt == nil {
			continue
		}
		if p.minDetection >= 0 && slices.Index(confidenceLevels, c.DetectionConfidence) < p.minDetection {
			continue
		}
		out = append(out, c)
	}
	return out
}

// BatchResponse is the body of a successful batch lookup.
type BatchResponse struct {
	// Results has one entry per requested address, in request order.
	Results []any `json:"results"`
	// CreditsUsed is the number of addresses in the request.
	CreditsUsed int `json:"credits_used"`
}

// BatchRecord is the classification record of one address.
type BatchRecord struct {
	Index           int      `json:"index"`
	IP              string   `json:"ip"`
	Found           bool     `json:"found"`
	Classifications []string `json:"classifications"`
	IsVPN           bool     `json:"is_vpn"`
	IsProxy         bool     `json:"is_proxy"`
	IsTor           bool     `json:"is_tor"`
	IsRelay         bool     `json:"is_relay"`
	IsHosting       bool     `json:"is_hosting"`
	IsCDN           bool     `json:"is_cdn"`
	// Pro and above.
	IsResidentialProxy *bool    `json:"is_residential_proxy,omitempty"`
	Provider           *string  `json:"provider"`
	Confidence         *float64 `json:"confidence,omitempty"`
	FirstSeen          *string  `json:"first_seen,omitempty"`
	LastSeen           *string  `json:"last_seen,omitempty"`
	AssetCount         int      `json:"asset_count"`
}

// IPResult is the single-address classification (GET /api/v1/ip/{ip}):
// the fields of a batch item, without its index, where the address is
// (the place of the range it is in: a geofeed, the Private Relay list;
// null when unknown) and the address's assets as the asset lookup shows
// them.
type IPResult struct {
	BatchRecord
	// Index hides the batch item's index (nil: omitted).
	Index   *int       `json:"index,omitempty"`
	Country *string    `json:"country"`
	Region  *string    `json:"region"`
	City    *string    `json:"city"`
	Assets  []assetOut `json:"assets"`
}

// BatchError is the entry of a batch item that is not an address.
type BatchError struct {
	Index int         `json:"index"`
	Input string      `json:"input"`
	Error ErrorDetail `json:"error"`
}

// shapeBatch builds the classification record of one address; r is nil
// when the snapshot knows nothing of it.
func shapeBatch(i int, ip string, r *ipmodel.Record, tier Tier) BatchRecord {
	b := BatchRecord{Index: i, IP: ip, Classifications: []string{}}
	if tier >= tierPro {
		f := false
		b.IsResidentialProxy = &f
	}
	if r == nil {
		return b
	}
	b.Found = true
	b.Classifications = visibleClasses(r.Classifications, tier)
	b.IsVPN, b.IsProxy, b.IsTor = r.Has(ipmodel.ClassVPN), r.Has(ipmodel.ClassProxy), r.Has(ipmodel.ClassTor)
	b.IsRelay, b.IsHosting, b.IsCDN = r.Has(ipmodel.ClassRelay), r.Has(ipmodel.ClassHosting), r.Has(ipmodel.ClassCDN)
	b.Provider = r.Provider
	if tier >= tierPro {
		rp := r.Has(ipmodel.ClassResidentialProxy)
		b.IsResidentialProxy = &rp
		c, fs, ls := r.Confidence, r.FirstSeen, r.LastSeen
		b.Confidence, b.FirstSeen, b.LastSeen = &c, &fs, &ls
	}
	b.AssetCount = len(r.Assets)
	return b
}

// visibleClasses drops residential_proxy below pro, in canonical order.
func visibleClasses(in []string, tier Tier) []string {
	out := make([]string, 0, len(in))
	for _, c := range canonicalClasses(in) {
		if c == ipmodel.ClassResidentialProxy && tier < tierPro {
			continue
		}
		out = append(out, c)
	}
	return out
}

// PublicLookup is the restricted public lookup: classification only.
type PublicLookup struct {
	IP              string   `json:"ip"`
	Found           bool     `json:"found"`
	Classifications []string `json:"classifications"`
	SnapshotDate    string   `json:"snapshot_date"`
}
