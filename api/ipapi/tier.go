package ipapi

import (
	"slices"
	"strings"

	"github.com/netintel/netintel/internal/ipmodel"
)

// Tier is a plan tier, ordered: a higher tier has every feature of a lower one.
type Tier int

// Tiers from the spec, lowest first.
const (
	TierFree Tier = iota
	TierStarter
	TierPro
	TierScale
	TierBusiness
	TierEnterprise
)

var tierNames = []string{"free", "starter", "pro", "scale", "business", "enterprise"}

// String returns the tier's name as X-Tier carries it.
func (t Tier) String() string {
	if t < 0 || int(t) >= len(tierNames) {
		return "free"
	}
	return tierNames[t]
}

// ParseTier reads an X-Tier value (case-insensitive). An absent or unknown
// value is free: the backend never grants more than the gateway said.
func ParseTier(s string) Tier {
	if i := slices.Index(tierNames, strings.ToLower(strings.TrimSpace(s))); i >= 0 {
		return Tier(i)
	}
	return TierFree
}

// Feature thresholds (spec section 1.4).
const (
	// Residential proxy attribution, confidence/freshness fields, CSV export
	// and the dataset feed's CSV and NDJSON files.
	tierPro = TierPro
	// MMDB and Parquet bulk downloads.
	tierBulkBinary = TierBusiness
	// NetFlow protocol attribution.
	tierNetFlow = TierEnterprise
)

// isFlowSource reports whether an evidence source is flow telemetry
// (NetFlow, IPFIX, sFlow) rather than an active scan or a feed.
func isFlowSource(s string) bool {
	s = strings.ToLower(s)
	return strings.HasPrefix(s, "netflow") || strings.HasPrefix(s, "ipfix") || strings.HasPrefix(s, "sflow")
}

// flowOnly reports whether every piece of an asset's evidence is flow
// telemetry: such an asset is a NetFlow protocol attribution.
func flowOnly(a *ipmodel.Asset) bool {
	if len(a.EvidenceSources) == 0 {
		return false
	}
	for _, s := range a.EvidenceSources {
		if !isFlowSource(s) {
			return false
		}
	}
	return true
}

// isResidentialAttribution reports whether an attribution claim comes from
// residential proxy intelligence (its signal source names it).
func isResidentialAttribution(a *ipmodel.Attribution) bool {
	return strings.Contains(strings.ToLower(a.SignalSource), "residential")
}
