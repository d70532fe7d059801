// Package gen generates a synthetic IP intelligence state on the fly: a
// realistic mix of classifications, providers, remote-access assets,
// attributions and CVE findings, for tests and benchmarks of the snapshot.
// Nothing is held in memory or written to disk: record i is computed from
// (seed, i) each time, so a test can ask for Host(i) and compare it with
// what a reader finds in a published file.
package gen

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
)

// State is a generated ipmodel.State of Hosts addresses and Ranges networks.
//
// Hosts sit in blocks of 64 addresses, one block per /24 (IPv4) or /48
// (IPv6); every fifth block is IPv6. Range j covers host block 7*j (a /22
// around its /24, or a /44 around its /48), so the hosts of every seventh
// block fall inside a range and carry both in the MMDB.
type State struct {
	NHosts  int       // number of host records
	NRanges int       // number of range records; at most ceil(Hosts/64/7)
	Seed    uint64    // varies every random choice
	Now     time.Time // latest last_seen; the first 90 days before it hold first_seen
}

// New returns a state of n hosts and a range for every seventh block, at
// a fixed time so that runs are reproducible.
func New(n int, seed uint64) *State {
	blocks := (n + BlockSize - 1) / BlockSize
	return &State{NHosts: n, NRanges: (blocks + 6) / 7, Seed: seed, Now: time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC)}
}

var _ ipmodel.State = (*State)(nil)

// BlockSize is the number of hosts per /24 or /48 block.
const BlockSize = 64

// Hosts calls fn for every host record in index order.
func (s *State) Hosts(ctx context.Context, fn func(ipmodel.Record) error) error {
	for i := 0; i < s.NHosts; i++ {
		if i%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err := fn(s.Host(i)); err != nil {
			return err
		}
	}
	return nil
}

// Ranges calls fn for every range record in index order.
func (s *State) Ranges(ctx context.Context, fn func(ipmodel.Record) error) error {
	for j := 0; j < s.NRanges; j++ {
		if j%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err := fn(s.Range(j)); err != nil {
			return err
		}
	}
	return nil
}

// IsV6Block reports whether host block b is IPv6.
func IsV6Block(b int) bool { return b%5 == 4 }

// blockPrefix returns the /24 or /48 of host block b. Block numbers map
// one-to-one onto 1.0.0.0/24 .. 223.255.255.0/24 (an odd multiplier not
// divisible by 223 is a bijection modulo 223*65536) and onto /48s in
// 2a00::/12.
func blockPrefix(b int) netip.Prefix {
	const span = 223 * 65536
	idx := (uint64(b) * 2654435761) % span
	if IsV6Block(b) {
		var a [16]byte
		a[0], a[1] = 0x2a, byte(idx>>16)&0x0f
		a[2], a[3], a[4], a[5] = byte(idx>>8), byte(idx), byte(b>>8), byte(b)
		return netip.PrefixFrom(netip.AddrFrom16(a), 48)
	}
	a := [4]byte{byte(1 + idx/65536), byte(idx >> 8), byte(idx), 0}
	return netip.PrefixFrom(netip.AddrFrom4(a), 24)
}

// HostAddr returns the address of host i.
func HostAddr(i int) netip.Addr {
	p := blockPrefix(i / BlockSize)
	off := i%BlockSize*3 + 1
	if p.Addr().Is4() {
		a := p.Addr().As4()
		a[3] = byte(off)
		return netip.AddrFrom4(a)
	}
	a := p.Addr().As16()
	a[14], a[15] = byte(off>>8), byte(off)
	return netip.AddrFrom16(a)
}

// RangePrefix returns the network of range j: it contains host block 7*j.
func RangePrefix(j int) netip.Prefix {
	p := blockPrefix(7 * j)
	if p.Addr().Is4() {
		return netip.PrefixFrom(p.Addr(), 22).Masked()
	}
	return netip.PrefixFrom(p.Addr(), 44).Masked()
}

// InRange reports whether host i is inside a range, and which.
func (s *State) InRange(i int) (int, bool) {
	b := i / BlockSize
	if b%7 != 0 || b/7 >= s.NRanges {
		return 0, false
	}
	return b / 7, true
}

var (
	providers = []string{"Acme Cloud", "NordLynx Networks", "Hetzner Online GmbH", "OVH SAS", "DigitalOcean, LLC",
		"Mullvad VPN AB", "Proton AG", "\"Quoted\" Hosting, Inc.", "Amazon.com, Inc.", "Cloudflare, Inc.",
		"Bright Data Ltd.", "Oxylabs UAB", "Tor Project volunteers", "Private Relay (Apple)", "M247 Europe SRL"}
	sources   = []string{"tor-exits", "aws-ranges", "scan-masscan", "netflow", "vpn-feed", "proxy-list", "bgp-asn"}
	families  = []string{"openvpn", "wireguard", "ipsec", "sslvpn", "pptp", "ssh", "rdp"}
	ports     = []int{443, 1194, 51820, 500, 4500, 8443, 1723, 22, 3389, 10443}
	vendors   = [][2]string{{"Fortinet", "FortiGate"}, {"Palo Alto Networks", "GlobalProtect"}, {"Cisco", "ASA"}, {"Ivanti", "Connect Secure"}, {"OpenVPN Inc.", "Access Server"}, {"SonicWall", "SMA"}, {"Citrix", "NetScaler Gateway"}}
	bands     = []string{"7.0.x", "7.2.x", "9.1.x", "10.2.x", "22.7.x", "2.11.x"}
	precision = []string{"exact", "minor", "major", "band"}
	evidence  = []string{"banner", "tls-cert", "favicon-hash", "http-title", "jarm"}
	orgs      = []string{"Example Corp", "Globex, Inc.", "Initech", "Umbrella \"Health\"", "Stark Industries", "Wayne Enterprises"}
	signals   = []string{"tls-cert-cn", "whois", "reverse-dns", "asn-registry"}
	eol       = []string{"supported", "eol", "extended-support"}
	matched   = []string{"cpe", "version-band", "banner"}
	cveSrc    = []string{"nvd", "vendor-advisory", "euvd"}
)

// classMix is the weighted choice of classification sets.
var classMix = []struct {
	w  int
	cs []string
}{
	{30, []string{ipmodel.ClassVPN}},
	{10, []string{ipmodel.ClassVPN, ipmodel.ClassHosting}},
	{15, []string{ipmodel.ClassHosting}},
	{10, []string{ipmodel.ClassProxy}},
	{3, []string{ipmodel.ClassTor}},
	{2, []string{ipmodel.ClassProxy, ipmodel.ClassTor}},
	{15, []string{ipmodel.ClassResidentialProxy}},
	{5, []string{ipmodel.ClassRelay}},
	{5, []string{ipmodel.ClassCDN}},
	{5, []string{}},
}

func (s *State) rng(kind, i uint64) *rand.Rand {
	return rand.New(rand.NewPCG(s.Seed^kind*0x9e3779b97f4a7c15, i))
}

func (s *State) ts(r *rand.Rand, maxAgo time.Duration) string {
	return ipmodel.FormatTime(s.Now.Add(-time.Duration(r.Int64N(int64(maxAgo/time.Second))) * time.Second))
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func ptr[T any](v T) *T { return &v }

func round(f float64, n int) float64 {
	p := math.Pow(10, float64(n))
	return math.Round(f*p) / p
}

// Host returns host record i.
func (s *State) Host(i int) ipmodel.Record {
	r := s.rng(1, uint64(i))
	rec := ipmodel.Record{IP: HostAddr(i).String()}
	s.common(r, &rec)
	n := r.IntN(100)
	var assets int
	switch {
	case n < 25:
		assets = 0
	case n < 70:
		assets = 1
	case n < 90:
		assets = 2
	default:
		assets = 3 + r.IntN(3)
	}
	rec.Assets = make([]ipmodel.Asset, 0, assets)
	used := map[int]bool{}
	for k := 0; k < assets; k++ {
		port := pick(r, ports)
		if used[port] {
			continue
		}
		used[port] = true
		rec.Assets = append(rec.Assets, s.asset(r, port))
	}
	return rec
}

// Range returns range record j.
func (s *State) Range(j int) ipmodel.Record {
	r := s.rng(2, uint64(j))
	p := RangePrefix(j)
	rec := ipmodel.Record{IP: p.Addr().String(), Network: p.String()}
	s.common(r, &rec)
	if r.IntN(3) > 0 {
		rec.Classifications = []string{ipmodel.ClassHosting}
	} else {
		rec.Classifications = []string{ipmodel.ClassVPN, ipmodel.ClassHosting}
	}
	rec.Sources = []string{"aws-ranges"}
	rec.Assets = []ipmodel.Asset{}
	return rec
}

func (s *State) common(r *rand.Rand, rec *ipmodel.Record) {
	w := r.IntN(100)
	for _, m := range classMix {
		if w < m.w {
			rec.Classifications = append([]string{}, m.cs...)
			break
		}
		w -= m.w
	}
	if r.IntN(10) < 7 {
		rec.Provider = ptr(pick(r, providers))
	}
	rec.Confidence = round(0.3+r.Float64()*0.69, 2)
	rec.FirstSeen = s.ts(r, 90*24*time.Hour)
	rec.LastSeen = s.ts(r, 24*time.Hour)
	if rec.LastSeen < rec.FirstSeen {
		rec.FirstSeen, rec.LastSeen = rec.LastSeen, rec.FirstSeen
	}
	rec.Sources = []string{}
	for k, src := range sources {
		if r.IntN(4) == 0 || (k == 0 && rec.Has(ipmodel.ClassTor)) {
			rec.Sources = append(rec.Sources, src)
		}
	}
	if len(rec.Sources) == 0 {
		rec.Sources = append(rec.Sources, "scan-masscan")
	}
}

func (s *State) asset(r *rand.Rand, port int) ipmodel.Asset {
	a := ipmodel.Asset{
		Port:            port,
		ProtocolFamily:  pick(r, families),
		ConfidenceBand:  pick(r, ipmodel.ConfidenceBands),
		EvidenceSources: []string{pick(r, evidence)},
		FirstSeen:       s.ts(r, 60*24*time.Hour),
		LastSeen:        s.ts(r, 48*time.Hour),
		Attributions:    []ipmodel.Attribution{},
	}
	if a.LastSeen < a.FirstSeen {
		a.FirstSeen, a.LastSeen = a.LastSeen, a.FirstSeen
	}
	if r.IntN(3) == 0 {
		a.EvidenceSources = append(a.EvidenceSources, "jarm")
	}
	if r.IntN(5) > 0 {
		v := pick(r, vendors)
		a.Vendor, a.Product = ptr(v[0]), ptr(v[1])
		if r.IntN(3) > 0 {
			a.VersionBand = ptr(pick(r, bands))
			a.VersionPrecision = ptr(pick(r, precision))
			if *a.VersionPrecision == "exact" {
				a.ExactVersion = ptr(fmt.Sprintf("%s.%d", (*a.VersionBand)[:len(*a.VersionBand)-2], r.IntN(20)))
			}
		}
	}
	for k := r.IntN(3); k > 0; k-- {
		a.Attributions = append(a.Attributions, ipmodel.Attribution{
			OrgName: pick(r, orgs), SignalSource: pick(r, signals),
			SignalConfidence: round(r.Float64(), 2), ObservedAt: s.ts(r, 30*24*time.Hour),
		})
	}
	if a.Vendor == nil || r.IntN(4) == 0 {
		return a
	}
	n := r.IntN(7)
	a.Cves = make([]ipmodel.CveFinding, 0, n)
	sum := ipmodel.CveSummary{LastComputedAt: ptr(ipmodel.FormatTime(s.Now.Truncate(24 * time.Hour)))}
	if r.IntN(2) == 0 {
		sum.EolStatus = ptr(pick(r, eol))
	}
	seen := map[int]bool{}
	for k := 0; k < n; k++ {
		id := r.IntN(2000)
		if seen[id] {
			continue
		}
		seen[id] = true
		c := Cve(id)
		a.Cves = append(a.Cves, c)
		sum.TotalCount++
		if c.KevAddedAt != nil {
			sum.KevCount++
		}
		if c.SeverityScore != nil && (sum.MaxSeverityScore == nil || *c.SeverityScore > *sum.MaxSeverityScore) {
			sum.MaxSeverityScore, sum.MaxSeverityRating = ptr(*c.SeverityScore), ptr(*c.SeverityRating)
		}
	}
	a.CveSummary = &sum
	return a
}

// Cve returns finding number id of a fixed catalog of 2000 CVEs: the same
// id always has the same attributes, as a real catalog would.
func Cve(id int) ipmodel.CveFinding {
	r := rand.New(rand.NewPCG(0xc0ffee, uint64(id)))
	c := ipmodel.CveFinding{
		CveID:               fmt.Sprintf("CVE-%d-%05d", 2018+id%8, 1000+id*7),
		DetectionConfidence: pick(r, ipmodel.DetectionRanks),
		Source:              pick(r, cveSrc),
	}
	if r.IntN(10) > 0 {
		score := round(1+r.Float64()*9, 1)
		c.SeverityScore = &score
		rating := "low"
		switch {
		case score >= 9:
			rating = "critical"
		case score >= 7:
			rating = "high"
		case score >= 4:
			rating = "medium"
		}
		c.SeverityRating = &rating
		c.CvssVersion = ptr(pick(r, []string{"3.1", "4.0"}))
	}
	if r.IntN(8) == 0 {
		c.KevAddedAt = ptr(fmt.Sprintf("20%02d-%02d-%02dT00:00:00Z", 21+r.IntN(5), 1+r.IntN(12), 1+r.IntN(28)))
	}
	if r.IntN(3) > 0 {
		c.EpssScore, c.EpssPercentile = ptr(round(r.Float64(), 5)), ptr(round(r.Float64(), 5))
	}
	if r.IntN(4) == 0 {
		c.EuvdID = ptr(fmt.Sprintf("EUVD-2025-%05d", id))
	}
	if r.IntN(6) == 0 {
		c.JvnID = ptr(fmt.Sprintf("JVNDB-2024-%06d", id))
	}
	if r.IntN(2) == 0 {
		c.MatchedVia = ptr(pick(r, matched))
	}
	return c
}
