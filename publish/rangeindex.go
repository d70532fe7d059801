package publish

import (
	"net/netip"
	"strings"

	"github.com/netintel/netintel/internal/ipmodel"
)

// rangeIndex holds, while a snapshot is built, the claims of the range
// records (ASN, attributions, place: what inheritClaims passes on), per
// audience, so that each host row of the CSV, NDJSON and Parquet files
// carries the claims of the ranges around it as the MMDB's merged record
// does. The state is read ranges first, so every range is indexed before
// the first host.
//
// Only the claims are held, not the records, with their strings interned
// (a decoded state record's strings are slices of its whole stored body,
// which a held string would keep alive): a range record's claims are a
// few repeated strings, and a map entry per range that has any.
type rangeIndex struct {
	byPrefix map[netip.Prefix]*[ipmodel.NumAudiences]*ipmodel.Record
	// lens[0] marks the IPv4 prefix lengths present, lens[1] the IPv6, so
	// a host looks up only lengths some range has.
	lens [2][129]bool
	strs map[string]string
}

func newRangeIndex() *rangeIndex {
	return &rangeIndex{byPrefix: map[netip.Prefix]*[ipmodel.NumAudiences]*ipmodel.Record{}, strs: map[string]string{}}
}

func (x *rangeIndex) intern(s string) string {
	if v, ok := x.strs[s]; ok {
		return v
	}
	v := strings.Clone(s)
	x.strs[v] = v
	return v
}

func (x *rangeIndex) internPtr(p *string) *string {
	if p == nil {
		return nil
	}
	s := x.intern(*p)
	return &s
}

// claims returns the part of range record r that a host inside inherits,
// or nil when there is none.
func (x *rangeIndex) claims(r *ipmodel.Record) *ipmodel.Record {
	if r.ASN == 0 && len(r.Attributions) == 0 && r.Country == nil && r.Region == nil && r.City == nil {
		return nil
	}
	c := &ipmodel.Record{Network: r.Network, ASN: r.ASN,
		Country: x.internPtr(r.Country), Region: x.internPtr(r.Region), City: x.internPtr(r.City)}
	if len(r.Attributions) > 0 {
		c.Attributions = make([]ipmodel.Attribution, len(r.Attributions))
		for i, at := range r.Attributions {
			c.Attributions[i] = ipmodel.Attribution{OrgName: x.intern(at.OrgName), SignalSource: x.intern(at.SignalSource),
				SignalConfidence: at.SignalConfidence, ObservedAt: x.intern(at.ObservedAt)}
		}
	}
	return c
}

// add indexes range pfx as audience a sees it (rec); a record every
// audience sees alike is indexed once and shared.
func (x *rangeIndex) add(pfx netip.Prefix, a ipmodel.Audience, rec *ipmodel.Record, sameAsPrevious bool) {
	e := x.byPrefix[pfx]
	if sameAsPrevious && e != nil && a > 0 {
		e[a] = e[a-1]
		return
	}
	c := x.claims(rec)
	if c == nil {
		return
	}
	if e == nil {
		e = &[ipmodel.NumAudiences]*ipmodel.Record{}
		x.byPrefix[pfx] = e
		x.lens[family(pfx.Addr())][pfx.Bits()] = true
	}
	e[a] = c
}

func family(a netip.Addr) int {
	if a.Is4() {
		return 0
	}
	return 1
}

// apply gives host record r (as audience a sees it, at address addr) the
// claims of the ranges that audience sees around it, the most specific
// first (inheritClaims: what r or a narrower range already says wins).
func (x *rangeIndex) apply(r *ipmodel.Record, addr netip.Addr, a ipmodel.Audience) {
	if len(x.byPrefix) == 0 {
		return
	}
	lens := &x.lens[family(addr)]
	for bits := addr.BitLen(); bits >= 0; bits-- {
		if !lens[bits] {
			continue
		}
		p, err := addr.Prefix(bits)
		if err != nil {
			continue
		}
		if e := x.byPrefix[p]; e != nil && e[a] != nil {
			inheritClaims(r, e[a])
		}
	}
}
