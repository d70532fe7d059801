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
)

// Audience returns the audience whose build of the snapshot the tier is
// served from (ipmodel.AudienceOfTier): what it may see follows from the
// data class of each piece of knowledge, never from a feed's name.
func (t Tier) Audience() ipmodel.Audience { return ipmodel.AudienceOfTier(t.String()) }
