// Package ipmodel holds the IP intelligence record types shared by the
// enrich workers (which build them), the snapshot writers (which publish
// them) and the API (which serves them). JSON names follow the spec
// (../shared/spec/ip-intelligence.md, section 2); maxminddb tags are the
// same names, so the MMDB and the NDJSON carry one logical schema.
//
// Timestamps are RFC 3339 in UTC with second precision ("2026-11-23T07:30:00Z");
// dates are YYYY-MM-DD.
package ipmodel

import (
	"context"
	"time"
)

// SchemaVersion is the version of the record schema in snapshots.
const SchemaVersion = "1.0.0"

// TimeFormat is the format of every timestamp string in records.
const TimeFormat = "2006-01-02T15:04:05Z"

// FormatTime formats t as a record timestamp.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// Classification names, in their canonical order.
const (
	ClassVPN              = "vpn"
	ClassProxy            = "proxy"
	ClassTor              = "tor"
	ClassRelay            = "relay"
	ClassHosting          = "hosting"
	ClassCDN              = "cdn"
	ClassResidentialProxy = "residential_proxy"
)

// Classes lists every classification in canonical order.
var Classes = []string{ClassVPN, ClassProxy, ClassTor, ClassRelay, ClassHosting, ClassCDN, ClassResidentialProxy}

// Confidence bands of an asset, lowest to highest.
var ConfidenceBands = []string{"low", "medium", "high"}

// Detection confidence ranks of a CVE finding, lowest to highest.
var DetectionRanks = []string{"low", "medium", "high"}

// Severity ratings, lowest to highest (CVSS qualitative scale).
var SeverityRatings = []string{"none", "low", "medium", "high", "critical"}

// Attribution is one org claim about an asset.
type Attribution struct {
	OrgName          string  `json:"org_name" maxminddb:"org_name"`
	SignalSource     string  `json:"signal_source" maxminddb:"signal_source"`
	SignalConfidence float64 `json:"signal_confidence" maxminddb:"signal_confidence"`
	ObservedAt       string  `json:"observed_at" maxminddb:"observed_at"`
}

// CveSummary summarises an asset's CVE findings.
type CveSummary struct {
	TotalCount        int      `json:"total_count" maxminddb:"total_count"`
	KevCount          int      `json:"kev_count" maxminddb:"kev_count"`
	MaxSeverityScore  *float64 `json:"max_severity_score" maxminddb:"max_severity_score"`
	MaxSeverityRating *string  `json:"max_severity_rating" maxminddb:"max_severity_rating"`
	EolStatus         *string  `json:"eol_status" maxminddb:"eol_status"`
	LastComputedAt    *string  `json:"last_computed_at" maxminddb:"last_computed_at"`
}

// CveFinding is one CVE matched to an asset.
type CveFinding struct {
	CveID               string   `json:"cve_id" maxminddb:"cve_id"`
	DetectionConfidence string   `json:"detection_confidence" maxminddb:"detection_confidence"`
	Source              string   `json:"source" maxminddb:"source"`
	SeverityScore       *float64 `json:"severity_score" maxminddb:"severity_score"`
	SeverityRating      *string  `json:"severity_rating" maxminddb:"severity_rating"`
	CvssVersion         *string  `json:"cvss_version" maxminddb:"cvss_version"`
	KevAddedAt          *string  `json:"kev_added_at" maxminddb:"kev_added_at"`
	EpssScore           *float64 `json:"epss_score" maxminddb:"epss_score"`
	EpssPercentile      *float64 `json:"epss_percentile" maxminddb:"epss_percentile"`
	EuvdID              *string  `json:"euvd_id" maxminddb:"euvd_id"`
	JvnID               *string  `json:"jvn_id" maxminddb:"jvn_id"`
	MatchedVia          *string  `json:"matched_via" maxminddb:"matched_via"`
}

// Asset is one remote-access service on one port and protocol family.
type Asset struct {
	Port             int           `json:"port" maxminddb:"port"`
	ProtocolFamily   string        `json:"protocol_family" maxminddb:"protocol_family"`
	Vendor           *string       `json:"vendor" maxminddb:"vendor"`
	Product          *string       `json:"product" maxminddb:"product"`
	VersionBand      *string       `json:"version_band" maxminddb:"version_band"`
	VersionPrecision *string       `json:"version_precision" maxminddb:"version_precision"`
	ExactVersion     *string       `json:"exact_version" maxminddb:"exact_version"`
	ConfidenceBand   string        `json:"confidence_band" maxminddb:"confidence_band"`
	EvidenceSources  []string      `json:"evidence_sources" maxminddb:"evidence_sources"`
	FirstSeen        string        `json:"first_seen" maxminddb:"first_seen"`
	LastSeen         string        `json:"last_seen" maxminddb:"last_seen"`
	Attributions     []Attribution `json:"attributions" maxminddb:"attributions"`
	CveSummary       *CveSummary   `json:"cve_summary" maxminddb:"cve_summary"`
	// Cves is always kept in state and snapshots; the lookup API attaches
	// it only when asked (include=cves).
	Cves []CveFinding `json:"cves,omitempty" maxminddb:"cves"`
}

// Record is everything known about one address (Network empty) or one
// network range (Network is its CIDR, IP its first address).
type Record struct {
	IP      string `json:"ip" maxminddb:"-"`
	Network string `json:"network,omitempty" maxminddb:"network"`
	// Classifications is the sorted (canonical order) subset of Classes.
	Classifications []string `json:"classifications" maxminddb:"classifications"`
	// Provider is the hosting, CDN, VPN or proxy provider, if known.
	Provider *string `json:"provider" maxminddb:"provider"`
	// Confidence (0..1) that the classifications are right.
	Confidence float64 `json:"confidence" maxminddb:"confidence"`
	FirstSeen  string  `json:"first_seen" maxminddb:"first_seen"`
	LastSeen   string  `json:"last_seen" maxminddb:"last_seen"`
	// Sources are the feeds that contributed (e.g. tor-exits, aws-ranges).
	Sources []string `json:"sources" maxminddb:"sources"`
	Assets  []Asset  `json:"assets" maxminddb:"assets"`
	// ASN is the autonomous system announcing the address (the IP-to-ASN
	// table, enrich.catalog.asn); 0 when unknown. Not a spec field: the
	// spec leaves the record's fields open (section 2, "Gaps").
	ASN uint32 `json:"asn,omitempty" maxminddb:"asn"`
	// Attributions are the record's own: the newest claim per signal
	// source of its signals and ranges (a range's provider when its
	// source made no claim), the AS's (signal source ip2asn) and, in the
	// MMDB, those of the ranges that cover a host. Each asset's
	// attributions include them.
	Attributions []Attribution `json:"attributions,omitempty" maxminddb:"attributions"`
	// Country (ISO 3166-1 alpha-2), Region (ISO 3166-2) and City are where
	// a range is used, as a geofeed (RFC 8805) or the Private Relay list
	// states it; a host inside such a range has them in the MMDB and in
	// the other files (the range's, when the host has none). Not spec
	// fields (the spec leaves the record's fields open): documented
	// extensions, nil when unknown.
	Country *string `json:"country,omitempty" maxminddb:"country"`
	Region  *string `json:"region,omitempty" maxminddb:"region"`
	City    *string `json:"city,omitempty" maxminddb:"city"`
	// Views, set by the state on a record that holds restricted knowledge
	// (residential or netflow data), are the record as the lower
	// audiences see it (Record.For). Never published: each audience's
	// files hold its own view.
	Views *Views `json:"-" maxminddb:"-"`
}

// Has reports whether the record carries classification c.
func (r *Record) Has(c string) bool {
	for _, x := range r.Classifications {
		if x == c {
			return true
		}
	}
	return false
}

// State streams the current enriched state. Implementations must not hold
// the whole data set in memory.
type State interface {
	// Hosts calls fn once per address that has a record, in any order.
	Hosts(ctx context.Context, fn func(Record) error) error
	// Ranges calls fn once per network range record, in any order.
	Ranges(ctx context.Context, fn func(Record) error) error
}
