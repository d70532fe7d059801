package enrich

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
)

// StateKey is the key of an address ("h.<ip>") or a range ("r.<cidr>")
// in the state bucket, with ':' written as '_'; a malformed address or
// range is an error naming it.
func StateKey(ipOrCIDR string) (string, error) {
	if strings.Contains(ipOrCIDR, "/") {
		p, err := netip.ParsePrefix(ipOrCIDR)
		if err != nil {
			return "", fmt.Errorf("%q is not an address or a CIDR range", ipOrCIDR)
		}
		return "r." + strings.ReplaceAll(p.Masked().String(), ":", "_"), nil
	}
	a, err := netip.ParseAddr(ipOrCIDR)
	if err != nil {
		return "", fmt.Errorf("%q is not an address or a CIDR range", ipOrCIDR)
	}
	return "h." + strings.ReplaceAll(a.Unmap().String(), ":", "_"), nil
}

// Stored returns the stored document of an address or range as JSON (the
// binary record of the state bucket decoded: its signals, claims and
// assets with their sources, as enrichment keeps them), its revision, and
// false when there is none.
func (s *Store) Stored(ctx context.Context, ipOrCIDR string) (json.RawMessage, uint64, bool, error) {
	key, err := StateKey(ipOrCIDR)
	if err != nil {
		return nil, 0, false, err
	}
	d, rev, err := s.get(ctx, key)
	if err != nil || d == nil {
		return nil, rev, false, err
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, rev, false, fmt.Errorf("encode %s: %w", key, err)
	}
	return b, rev, true, nil
}
