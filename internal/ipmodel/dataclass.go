package ipmodel

import "fmt"

// Data classes: every piece of knowledge (a signal, a range, an asset's
// evidence, a claim) has one, and which tiers may see it follows from the
// class alone, never from the name of the feed that brought it
// (docs/ip-api.md, "Tier features").
const (
	// DataStandard is everything that is neither of the others.
	DataStandard = "standard"
	// DataResidential is residential-proxy intelligence: pro and above.
	DataResidential = "residential"
	// DataNetflow is what is known only from flow records (NetFlow,
	// IPFIX, sFlow): enterprise.
	DataNetflow = "netflow"
)

// DataClasses lists the data classes from least to most restricted: an
// audience that sees a class sees every class before it.
var DataClasses = []string{DataStandard, DataResidential, DataNetflow}

// DataRank is the rank of a data class in DataClasses; an unknown or empty
// class is standard.
func DataRank(class string) int {
	switch class {
	case DataResidential:
		return 1
	case DataNetflow:
		return 2
	}
	return 0
}

// MoreRestricted returns the more restricted of two data classes.
func MoreRestricted(a, b string) string {
	if DataRank(b) > DataRank(a) {
		return b
	}
	if a == "" {
		return DataStandard
	}
	return a
}

// Audience is one build of the data: what a group of tiers may see.
// Audiences are nested: each sees everything the one before it sees.
type Audience int

// The audiences, by the lowest tier that gets each.
const (
	// AudienceFree (tiers free and starter) sees standard data.
	AudienceFree Audience = iota
	// AudiencePro (tiers pro, scale and business) adds residential data.
	AudiencePro
	// AudienceEnterprise (tier enterprise) sees everything, netflow too.
	AudienceEnterprise
	// NumAudiences counts the audiences.
	NumAudiences = 3
)

// Audiences lists every audience, least first.
var Audiences = []Audience{AudienceFree, AudiencePro, AudienceEnterprise}

var audienceNames = [NumAudiences]string{"free", "pro", "enterprise"}

var audienceTiers = [NumAudiences][]string{{"free", "starter"}, {"pro", "scale", "business"}, {"enterprise"}}

// String returns the audience's name: free, pro or enterprise.
func (a Audience) String() string {
	if a < 0 || int(a) >= NumAudiences {
		return fmt.Sprintf("audience(%d)", int(a))
	}
	return audienceNames[a]
}

// Tiers returns the plan tiers the audience serves.
func (a Audience) Tiers() []string {
	if a < 0 || int(a) >= NumAudiences {
		return nil
	}
	return append([]string(nil), audienceTiers[a]...)
}

// Sees reports whether the audience may see data of class.
func (a Audience) Sees(class string) bool { return DataRank(class) <= int(a) }

// ParseAudience reads an audience name; ok is false for an unknown one.
func ParseAudience(s string) (Audience, bool) {
	for i, n := range audienceNames {
		if n == s {
			return Audience(i), true
		}
	}
	return 0, false
}

// AudienceOfTier returns the audience of a plan tier; an unknown tier is
// free, so nothing is ever granted by mistake.
func AudienceOfTier(tier string) Audience {
	for a, ts := range audienceTiers {
		for _, t := range ts {
			if t == tier {
				return Audience(a)
			}
		}
	}
	return AudienceFree
}

// Views are a record as the audiences below enterprise see it: set only
// on a record that holds restricted knowledge (a record without Views is
// the same for every audience). Views[a] is nil when audience a sees
// nothing of the record.
type Views [NumAudiences - 1]*Record

// For returns the record as audience a sees it, and false when a sees
// nothing of it. r is the complete record (what enterprise sees).
func (r *Record) For(a Audience) (*Record, bool) {
	if r.Views == nil || a >= AudienceEnterprise {
		return r, true
	}
	if a < 0 {
		a = AudienceFree
	}
	v := r.Views[a]
	return v, v != nil
}
