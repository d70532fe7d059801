package publish

import (
	"github.com/netintel/netintel/internal/ipmodel"
)

// The GeoIP2 Anonymous IP flags, derived from a record's classifications.
// They are columns in CSV, NDJSON and Parquet and keys in the MMDB (where
// they are written only when true, as MaxMind does).
const (
	FlagAnonymous        = "is_anonymous"
	FlagAnonymousVPN     = "is_anonymous_vpn"
	FlagHostingProvider  = "is_hosting_provider"
	FlagPublicProxy      = "is_public_proxy"
	FlagResidentialProxy = "is_residential_proxy"
	FlagTorExitNode      = "is_tor_exit_node"
	flagCount            = 6
)

// FlagNames lists the flags in column order.
var FlagNames = [flagCount]string{FlagAnonymous, FlagAnonymousVPN, FlagHostingProvider, FlagPublicProxy, FlagResidentialProxy, FlagTorExitNode}

// Flags computes the GeoIP2 Anonymous IP flags of r, in FlagNames order:
// vpn sets is_anonymous_vpn, hosting is_hosting_provider, proxy
// is_public_proxy, residential_proxy is_residential_proxy, tor
// is_tor_exit_node; is_anonymous is set when any of those is, or for relay
// (an anonymising relay such as iCloud Private Relay). cdn sets no flag.
func Flags(r *ipmodel.Record) [flagCount]bool {
	var f [flagCount]bool
	for _, c := range r.Classifications {
		switch c {
		case ipmodel.ClassVPN:
			f[1] = true
		case ipmodel.ClassHosting:
			f[2] = true
		case ipmodel.ClassProxy:
			f[3] = true
		case ipmodel.ClassResidentialProxy:
			f[4] = true
		case ipmodel.ClassTor:
			f[5] = true
		case ipmodel.ClassRelay:
			f[0] = true
		}
	}
	f[0] = f[0] || f[1] || f[2] || f[3] || f[4] || f[5]
	return f
}

// Columns are the top-level columns of the snapshot, in order, for CSV
// (header row), NDJSON (key order) and Parquet (schema). docs/snapshot.md
// describes each.
var Columns = []string{
	"ip", "network", "classifications", "provider", "confidence",
	"first_seen", "last_seen", "sources",
	FlagAnonymous, FlagAnonymousVPN, FlagHostingProvider, FlagPublicProxy, FlagResidentialProxy, FlagTorExitNode,
	"assets",
	"asn", "attributions", "country", "region", "city",
}
