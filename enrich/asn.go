package enrich

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/netintel/netintel/internal/ipmodel"
)

// ASN attribution: the IP-to-ASN table (iptoasn.com's ip2asn-v4.tsv,
// ip2asn-v6.tsv or ip2asn-combined.tsv) gives every routed address its
// autonomous system and the AS's description, which the records read
// from the state carry as an attribution of source SourceASN.
const (
	// SourceASN is the signal_source of attributions from the ASN table.
	SourceASN = "ip2asn"
	// ASNConfidence is their signal_confidence: a BGP origin names who
	// announces the prefix, usually but not always who operates the
	// address (a customer's space announced by its upstream).
	ASNConfidence = 0.7
)

// ASNInfo is what the table says of one address.
type ASNInfo struct {
	ASN     uint32
	Country string // ISO 3166-1 alpha-2 as the table gives it ("None" = "")
	Org     string // the AS description, e.g. "CLOUDFLARENET - Cloudflare, Inc."
}

// ASNTable is a sorted, non-overlapping range table, flat in memory: the
// ranges' starts and ends in parallel arrays (IPv4 as uint32, IPv6 as
// 16-byte arrays) and for each an index into a de-duplicated table of
// (ASN, country, org). The full combined file (about 500,000 ranges, 80,000
// distinct ASes) takes about 30 MB: no pointer per range, so the garbage
// collector does not walk it. Unrouted ranges (AS 0) are not kept.
type ASNTable struct {
	v4Start, v4End []uint32
	v4Org          []uint32
	v6Start, v6End [][16]byte
	v6Org          []uint32
	orgs           []ASNInfo
	// ObservedAt is the attributions' observed_at: the table's time
	// (file modification time or Last-Modified, else when it was loaded).
	ObservedAt string
}

// Len is the number of ranges held.
func (t *ASNTable) Len() int {
	if t == nil {
		return 0
	}
	return len(t.v4Start) + len(t.v6Start)
}

// LoadASN reads an iptoasn TSV (range_start, range_end, AS_number,
// country_code, AS_description, tab-separated; IPv4, IPv6 or both).
// Lines that do not parse are counted in bad and skipped; the table is
// sorted by start, and a range overlapping the one before it is dropped
// (the published files have none).
func LoadASN(r io.Reader) (t *ASNTable, bad int, err error) {
	t = &ASNTable{}
	orgIndex := map[ASNInfo]uint32{}
	type r4 struct{ s, e, o uint32 }
	type r6 struct {
		s, e [16]byte
		o    uint32
	}
	var v4 []r4
	var v6 []r6
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 || line[0] == '#' {
			continue
		}
		f := strings.SplitN(string(line), "\t", 5)
		if len(f) != 5 {
			bad++
			continue
		}
		s, err1 := netip.ParseAddr(f[0])
		e, err2 := netip.ParseAddr(f[1])
		asn, err3 := strconv.ParseUint(f[2], 10, 32)
		if err1 != nil || err2 != nil || err3 != nil || s.Is4() != e.Is4() || e.Less(s) {
			bad++
			continue
		}
		if asn == 0 {
			continue // "Not routed"
		}
		info := ASNInfo{ASN: uint32(asn), Country: f[3], Org: strings.TrimSpace(f[4])}
		if info.Country == "None" {
			info.Country = ""
		}
		oi, ok := orgIndex[info]
		if !ok {
			oi = uint32(len(t.orgs))
			orgIndex[info] = oi
			t.orgs = append(t.orgs, info)
		}
		if s.Is4() {
			v4 = append(v4, r4{u32(s), u32(e), oi})
		} else {
			v6 = append(v6, r6{s.As16(), e.As16(), oi})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, bad, fmt.Errorf("read asn table: %w", err)
	}
	slices.SortFunc(v4, func(a, b r4) int { return cmp.Compare(a.s, b.s) })
	slices.SortFunc(v6, func(a, b r6) int { return bytes.Compare(a.s[:], b.s[:]) })
	for i, x := range v4 {
		if i > 0 && x.s <= t.v4End[len(t.v4End)-1] {
			bad++
			continue
		}
		t.v4Start, t.v4End, t.v4Org = append(t.v4Start, x.s), append(t.v4End, x.e), append(t.v4Org, x.o)
	}
	for i, x := range v6 {
		if i > 0 && bytes.Compare(x.s[:], t.v6End[len(t.v6End)-1][:]) <= 0 {
			bad++
			continue
		}
		t.v6Start, t.v6End, t.v6Org = append(t.v6Start, x.s), append(t.v6End, x.e), append(t.v6Org, x.o)
	}
	t.v4Start, t.v4End, t.v4Org = slices.Clip(t.v4Start), slices.Clip(t.v4End), slices.Clip(t.v4Org)
	t.v6Start, t.v6End, t.v6Org = slices.Clip(t.v6Start), slices.Clip(t.v6End), slices.Clip(t.v6Org)
	return t, bad, nil
}

func u32(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// Lookup returns the AS of addr (IPv4-mapped IPv6 is read as IPv4), and
// false when no routed range holds it.
func (t *ASNTable) Lookup(addr netip.Addr) (ASNInfo, bool) {
	if t == nil {
		return ASNInfo{}, false
	}
	addr = addr.Unmap()
	if addr.Is4() {
		k := u32(addr)
		// The last range starting at or before k.
		i, found := slices.BinarySearch(t.v4Start, k)
		if !found {
			i--
		}
		if i < 0 || k > t.v4End[i] {
			return ASNInfo{}, false
		}
		return t.orgs[t.v4Org[i]], true
	}
	k := addr.As16()
	i, found := slices.BinarySearchFunc(t.v6Start, k, func(s, k [16]byte) int { return bytes.Compare(s[:], k[:]) })
	if !found {
		i--
	}
	if i < 0 || bytes.Compare(k[:], t.v6End[i][:]) > 0 {
		return ASNInfo{}, false
	}
	return t.orgs[t.v6Org[i]], true
}

// attribution is the ASN table's attribution of addr, if any.
func (t *ASNTable) attribution(addr netip.Addr) (ipmodel.Attribution, ASNInfo, bool) {
	info, ok := t.Lookup(addr)
	if !ok || info.Org == "" {
		return ipmodel.Attribution{}, info, false
	}
	return ipmodel.Attribution{OrgName: info.Org, SignalSource: SourceASN, SignalConfidence: ASNConfidence, ObservedAt: t.ObservedAt}, info, true
}
