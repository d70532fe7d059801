package ingest

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
)

// geoRow is one row of an RFC 8805 geofeed: prefix, country (ISO 3166-1
// alpha-2), region (ISO 3166-2), city, postal code.
type geoRow struct {
	prefix                netip.Prefix
	country, region, city string
}

// parseGeoRow reads one geofeed line (CSV, quoting allowed). The postal
// code is read and dropped: RFC 8805 deprecates it and nothing here uses it.
func parseGeoRow(line string) (geoRow, error) {
	cr := csv.NewReader(strings.NewReader(line))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	f, err := cr.Read()
	if err != nil {
		return geoRow{}, fmt.Errorf("csv: %w", err)
	}
	if len(f) > 5 && strings.TrimSpace(strings.Join(f[5:], "")) != "" {
		return geoRow{}, fmt.Errorf("%d fields, want at most 5 (prefix,country,region,city,postal)", len(f))
	}
	for len(f) < 4 {
		f = append(f, "")
	}
	p, err := netip.ParsePrefix(strings.TrimSpace(f[0]))
	if err != nil {
		// RFC 8805 allows a bare address for a single host.
		a, aerr := netip.ParseAddr(strings.TrimSpace(f[0]))
		if aerr != nil {
			return geoRow{}, fmt.Errorf("prefix: not a CIDR: %q", f[0])
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	row := geoRow{prefix: p.Masked(), country: strings.ToUpper(strings.TrimSpace(f[1])), region: strings.ToUpper(strings.TrimSpace(f[2])), city: strings.TrimSpace(f[3])}
	if row.country != "" && !isAlpha2(row.country) {
		return geoRow{}, fmt.Errorf("country: want an ISO 3166-1 alpha-2 code, got %q", f[1])
	}
	if row.region != "" && row.country != "" && !strings.HasPrefix(row.region, row.country+"-") {
		return geoRow{}, fmt.Errorf("region: want an ISO 3166-2 code of %s, got %q", row.country, f[2])
	}
	return row, nil
}

func isAlpha2(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

// geoRanges emits one range per geofeed row, with the row's country,
// region and city.
func geoRanges(r io.Reader, opt Options, what, src, kind, provider string, conf float64, claims []Claim, emit Emit, bad func(LineError)) error {
	when := opt.observedAt()
	return opt.lines(r, what, bad, func(n int, b []byte) error {
		line := strings.TrimSpace(string(b))
		if line == "" || line[0] == '#' {
			return nil
		}
		row, err := parseGeoRow(line)
		if err != nil {
			bad(LineError{n, err})
			return nil
		}
		o := Observation{Type: TypeRange, Network: row.prefix.String(), Source: src, ObservedAt: when, Claims: claims,
			Range: &Range{Kind: kind, Provider: provider, Region: row.region, Country: row.country, City: row.city, Confidence: conf}}
		return emitChecked(n, o, emit, bad)
	})
}

// Geofeed reads an RFC 8805 self-published geofeed: CSV lines of
// prefix,country,region,city,postal, with # comments. A geofeed states
// where an operator's ranges are, not what they are, so the kind and
// provider come from opt (--kind, --provider, both required, as the
// operator is known from where the feed was found: a VPN provider's or a
// cloud's own geofeed). Every row, even a single address, becomes a range
// with the row's country, region and city; the postal code is dropped.
// The feed carries no time: observed_at is opt.ObservedAt.
func Geofeed(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	if signalKindOf[opt.Kind] == "" {
		return fmt.Errorf("geofeed: --kind must be one of %s, got %q", strings.Join(RangeKinds, ", "), opt.Kind)
	}
	if strings.TrimSpace(opt.Provider) == "" {
		return errors.New("geofeed: --provider is required (the operator that publishes the feed)")
	}
	conf := opt.conf(0.8)
	claims := []Claim{{OrgName: opt.Provider, SignalConfidence: conf}}
	return geoRanges(r, opt, "geofeed", opt.source("geofeed"), opt.Kind, opt.Provider, conf, claims, emit, bad)
}

// PrivateRelay reads Apple's iCloud Private Relay egress list
// (mask-api.icloud.com/egress-ip-ranges.csv: prefix,country,region,city,
// lines in the geofeed layout). Each prefix becomes a relay range of
// provider iCloud Private Relay with its country, region and city. No
// claim is made: the egress addresses belong to Apple's partner networks
// (Akamai, Cloudflare, Fastly), not to Apple. The list carries no time:
// observed_at is opt.ObservedAt.
func PrivateRelay(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	return geoRanges(r, opt, "private relay", opt.source("private-relay"), "relay", "iCloud Private Relay", opt.conf(0.95), nil, emit, bad)
}
