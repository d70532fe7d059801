package publish

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/netintel/netintel/internal/ipmodel"
)

// errBadRecord marks a state record that cannot be published (its address
// or network does not parse); such records are skipped and counted.
var errBadRecord = errors.New("bad record")

// recordPrefix returns the network a record covers: the range's network
// (masked) for a range, or the single address (/32 or /128) for a host.
// IPv4-mapped IPv6 addresses are unmapped, so that IPv4 lives in one place.
func recordPrefix(r *ipmodel.Record, isRange bool) (netip.Prefix, error) {
	if isRange {
		p, err := netip.ParsePrefix(r.Network)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%w: range network %q: %w", errBadRecord, r.Network, err)
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(r.IP)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%w: host ip %q: %w", errBadRecord, r.IP, err)
	}
	if a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%w: host ip %q has a zone", errBadRecord, r.IP)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}
