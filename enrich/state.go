package enrich

import (
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/ipmodel"
)

// doc is the stored state of one address or range: what the observations
// said, kept so that applying them is idempotent and order-independent
// (every field is a max, a min, a union or a newest-wins register with a
// deterministic tie-break). A redelivered observation therefore changes
// nothing, and two workers applying observations in different orders
// reach the same state.
type doc struct {
	V         int                            `json:"v"`
	IP        string                         `json:"ip"`
	Network   string                         `json:"network,omitempty"`
	FirstSeen string                         `json:"first_seen"`
	LastSeen  string                         `json:"last_seen"`
	Signals   map[string]*sigEntry           `json:"signals,omitempty"` // source|class
	Claims    map[string]ipmodel.Attribution `json:"claims,omitempty"`  // per signal_source
	Assets    map[string]*assetDoc           `json:"assets,omitempty"`  // port/family
}

type sigEntry struct {
	Class     string  `json:"class"`
	Source    string  `json:"source"`
	Provider  string  `json:"provider,omitempty"`
	Conf      float64 `json:"conf"`
	FirstSeen string  `json:"first_seen"`
	LastSeen  string  `json:"last_seen"`
	// Win orders competing values of Provider/Conf: observed_at|message id.
	Win string `json:"win"`
}

type assetDoc struct {
	Port      int                            `json:"port"`
	Family    string                         `json:"family"`
	FirstSeen string                         `json:"first_seen"`
	LastSeen  string                         `json:"last_seen"`
	Svc       *fpWinner                      `json:"svc,omitempty"`
	Flow      *fpWinner                      `json:"flow,omitempty"`
	Sources   map[string]srcEvidence         `json:"sources"`
	Claims    map[string]ipmodel.Attribution `json:"claims,omitempty"`
	// CVE findings are not stored: they follow from the fingerprint and
	// the catalog, and are computed when the record is read (scorer).
}

type fpWinner struct {
	Win string      `json:"win"`
	Fp  Fingerprint `json:"fp"`
}

type srcEvidence struct {
	Vendor string `json:"vendor,omitempty"`
	Win    string `json:"win"`
}

// classesOfSignal maps a signal kind to classifications. A Tor relay that
// is not an exit is Tor infrastructure; "relay" is a private relay
// (iCloud Private Relay and the like).
var classesOfSignal = map[string]string{
	"vpn_exit": ipmodel.ClassVPN, "open_proxy": ipmodel.ClassProxy, "tor_exit": ipmodel.ClassTor,
	"tor_relay": ipmodel.ClassTor, "residential_proxy": ipmodel.ClassResidentialProxy,
	"private_relay": ipmodel.ClassRelay, "hosting": ipmodel.ClassHosting, "cdn": ipmodel.ClassCDN,
}

// classOfFlow maps a flow protocol to a classification.
var classOfFlow = map[string]string{
	"wireguard": ipmodel.ClassVPN, "openvpn": ipmodel.ClassVPN, "ipsec": ipmodel.ClassVPN, "ikev2": ipmodel.ClassVPN,
	"l2tp": ipmodel.ClassVPN, "pptp": ipmodel.ClassVPN, "sstp": ipmodel.ClassVPN, "tor": ipmodel.ClassTor,
}

// defaultConf is a signal's confidence when neither it nor its source says.
const defaultConf = 0.6

func newDoc(o *ingest.Observation) *doc {
	d := &doc{V: 1, IP: o.IP, Network: o.Network, FirstSeen: o.ObservedAt, LastSeen: o.ObservedAt}
	if o.Network != "" {
		if p, err := netip.ParsePrefix(o.Network); err == nil {
			d.IP = p.Addr().String()
		}
	}
	return d
}

func minStr(a, b string) string {
	if a == "" || (b != "" && b < a) {
		return b
	}
	return a
}

func maxStr(a, b string) string {
	if b > a {
		return b
	}
	return a
}

// mergeClaim keeps the newest claim per signal source; equal times keep
// the larger (org, confidence) so the result does not depend on order.
func mergeClaim(m map[string]ipmodel.Attribution, c ingest.Claim, at string) map[string]ipmodel.Attribution {
	if m == nil {
		m = map[string]ipmodel.Attribution{}
	}
	n := ipmodel.Attribution{OrgName: c.OrgName, SignalSource: c.SignalSource, SignalConfidence: c.SignalConfidence, ObservedAt: at}
	old, ok := m[c.SignalSource]
	if !ok || newerClaim(n, old) {
		m[c.SignalSource] = n
	}
	return m
}

func newerClaim(a, b ipmodel.Attribution) bool {
	if a.ObservedAt != b.ObservedAt {
		return a.ObservedAt > b.ObservedAt
	}
	if a.OrgName != b.OrgName {
		return a.OrgName > b.OrgName
	}
	return a.SignalConfidence > b.SignalConfidence
}

// winIDLen is how much of a message id breaks ties between observations
// of the same time: 16 hex digits (64 bits) decide as surely as 32, and
// every newest-wins register of a document carries one.
const winIDLen = 16

// apply merges one normalized observation (with its message id) into d.
func (d *doc) apply(o *ingest.Observation, id string, rules *Rules) {
	at := o.ObservedAt
	win := at + "|" + id[:min(len(id), winIDLen)]
	d.FirstSeen, d.LastSeen = minStr(d.FirstSeen, at), maxStr(d.LastSeen, at)
	switch o.Type {
	case ingest.TypeSignal, ingest.TypeRange:
		var class, provider string
		var conf float64
		if o.Signal != nil {
			class, provider, conf = classesOfSignal[o.Signal.Kind], o.Signal.Provider, o.Signal.Confidence
		} else {
			class, provider, conf = o.Range.Kind, o.Range.Provider, o.Range.Confidence
		}
		if conf == 0 {
			conf = defaultConf
		}
		for _, c := range o.Claims {
			d.Claims = mergeClaim(d.Claims, c, at)
		}
		if d.Signals == nil {
			d.Signals = map[string]*sigEntry{}
		}
		k := o.Source + "|" + class
		s, ok := d.Signals[k]
		if !ok {
			s = &sigEntry{Class: class, Source: o.Source, FirstSeen: at}
			d.Signals[k] = s
		}
		s.FirstSeen, s.LastSeen = minStr(s.FirstSeen, at), maxStr(s.LastSeen, at)
		if win > s.Win {
			s.Win, s.Provider, s.Conf = win, provider, conf
		}
		if o.Signal != nil && o.Signal.Port > 0 {
			family := o.Signal.ProtocolFamily
			if family == "" {
				family = "tcp"
			}
			a := d.asset(o.Signal.Port, family, at)
			a.addSource(o.Source, "", win)
		}
	case ingest.TypeService:
		fp, ok := rules.Match(o.Service, nil)
		family := fp.ProtocolFamily
		if !ok {
			family = o.Service.ProtocolFamily
			if family == "" {
				family = o.Service.Transport
			}
		}
		a := d.asset(o.Service.Port, family, at)
		a.addSource(o.Source, fp.Vendor, win)
		if a.Svc == nil || win > a.Svc.Win {
			a.Svc = &fpWinner{Win: win, Fp: fp}
		}
		for _, c := range o.Claims {
			a.Claims = mergeClaim(a.Claims, c, at)
		}
	case ingest.TypeFlow:
		fp, ok := rules.Match(nil, o.Flow)
		family := fp.ProtocolFamily
		if !ok {
			family = o.Flow.Protocol
		}
		a := d.asset(o.Flow.Port, family, at)
		a.addSource(o.Source, "", win)
		if fp.Class == "" {
			fp.Class = classOfFlow[o.Flow.Protocol]
		}
		if a.Flow == nil || win > a.Flow.Win {
			a.Flow = &fpWinner{Win: win, Fp: fp}
		}
		for _, c := range o.Claims {
			a.Claims = mergeClaim(a.Claims, c, at)
		}
	}
}

func (d *doc) asset(port int, family, at string) *assetDoc {
	if d.Assets == nil {
		d.Assets = map[string]*assetDoc{}
	}
	k := assetKey(port, family)
	a, ok := d.Assets[k]
	if !ok {
		a = &assetDoc{Port: port, Family: family, FirstSeen: at, Sources: map[string]srcEvidence{}}
		d.Assets[k] = a
	}
	a.FirstSeen, a.LastSeen = minStr(a.FirstSeen, at), maxStr(a.LastSeen, at)
	return a
}

func assetKey(port int, family string) string {
	return strings.Join([]string{itoa(port), family}, "/")
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

func (a *assetDoc) addSource(src, vendor, win string) {
	old, ok := a.Sources[src]
	if !ok || win > old.Win {
		a.Sources[src] = srcEvidence{Vendor: vendor, Win: win}
	}
}

// fingerprint is the asset's effective fingerprint: the newest service
// observation's when one matched a rule, else the newest flow's.
func (a *assetDoc) fingerprint() Fingerprint {
	if a.Svc != nil && a.Svc.Fp.Vendor != "" {
		return a.Svc.Fp
	}
	if a.Flow != nil && a.Flow.Fp.Vendor != "" {
		return a.Flow.Fp
	}
	if a.Flow != nil {
		return a.Flow.Fp
	}
	return Fingerprint{}
}

// band grades how far the evidence agrees: high when two or more sources
// back the vendor and none contradicts it, medium when agreeing sources
// outnumber contradicting ones, low otherwise or without a vendor.
func (a *assetDoc) band() string {
	v := a.fingerprint().Vendor
	if v == "" {
		return "low"
	}
	agree, disagree := 0, 0
	for _, s := range a.Sources {
		switch s.Vendor {
		case v, "":
			agree++
		default:
			disagree++
		}
	}
	switch {
	case agree >= 2 && disagree == 0:
		return "high"
	case agree > disagree:
		return "medium"
	}
	return "low"
}

// scorer computes the CVE fields of assets against one catalog at one
// time, once per distinct fingerprint: a walk of millions of records meets
// a few thousand fingerprints. The findings it returns are shared between
// records and must not be modified.
type scorer struct {
	cat  *Catalog
	now  time.Time
	memo map[scoreKey]scored
}

type scoreKey struct{ rule, exact, band string }

type scored struct {
	cves []ipmodel.CveFinding
	sum  *ipmodel.CveSummary
}

func newScorer(cat *Catalog, now time.Time) *scorer {
	return &scorer{cat: cat, now: now, memo: map[scoreKey]scored{}}
}

func (s *scorer) score(fp Fingerprint) ([]ipmodel.CveFinding, *ipmodel.CveSummary) {
	k := scoreKey{fp.RuleID, fp.ExactVersion, fp.VersionBand}
	r, ok := s.memo[k]
	if !ok {
		r.cves, r.sum = s.cat.Match(fp, s.now)
		s.memo[k] = r
	}
	return r.cves, r.sum
}

// prune drops what was last seen before cutoff and reports whether
// anything is left.
func (d *doc) prune(cutoff string) bool {
	d.LastSeen = ""
	for k, s := range d.Signals {
		if s.LastSeen < cutoff {
			delete(d.Signals, k)
			continue
		}
		d.LastSeen = maxStr(d.LastSeen, s.LastSeen)
	}
	for k, c := range d.Claims {
		if c.ObservedAt < cutoff {
			delete(d.Claims, k)
		}
	}
	for k, a := range d.Assets {
		if a.LastSeen < cutoff {
			delete(d.Assets, k)
			continue
		}
		for c, cl := range a.Claims {
			if cl.ObservedAt < cutoff {
				delete(a.Claims, c)
			}
		}
		d.LastSeen = maxStr(d.LastSeen, a.LastSeen)
	}
	return len(d.Signals) > 0 || len(d.Assets) > 0
}

var bandConf = map[string]float64{"high": 0.9, "medium": 0.75, "low": 0.5}

// record builds the published view of d, with CVE fields from sc.
func (d *doc) record(sc *scorer) ipmodel.Record {
	r := ipmodel.Record{IP: d.IP, Network: d.Network, FirstSeen: d.FirstSeen, LastSeen: d.LastSeen,
		Classifications: []string{}, Sources: []string{}, Assets: []ipmodel.Asset{}}
	classes := map[string]bool{}
	sources := map[string]float64{} // source -> best confidence
	var prov *sigEntry
	for _, s := range d.Signals {
		classes[s.Class] = true
		sources[s.Source] = math.Max(sources[s.Source], s.Conf)
		if s.Provider != "" && (prov == nil || s.Conf > prov.Conf || (s.Conf == prov.Conf && s.Win > prov.Win)) {
			prov = s
		}
	}
	if prov != nil {
		r.Provider = strPtr(prov.Provider)
	}
	keys := make([]string, 0, len(d.Assets))
	for k := range d.Assets {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y string) int {
		a, b := d.Assets[x], d.Assets[y]
		if a.Port != b.Port {
			return a.Port - b.Port
		}
		return strings.Compare(a.Family, b.Family)
	})
	for _, k := range keys {
		a := d.Assets[k]
		fp := a.fingerprint()
		band := a.band()
		if fp.Class != "" {
			classes[fp.Class] = true
		}
		as := ipmodel.Asset{Port: a.Port, ProtocolFamily: a.Family, ConfidenceBand: band, FirstSeen: a.FirstSeen, LastSeen: a.LastSeen,
			Vendor: optStr(fp.Vendor), Product: optStr(fp.Product), VersionBand: optStr(fp.VersionBand),
			VersionPrecision: optStr(fp.VersionPrecision), ExactVersion: optStr(fp.ExactVersion),
			EvidenceSources: []string{}, Attributions: []ipmodel.Attribution{}}
		as.Cves, as.CveSummary = sc.score(fp)
		for s := range a.Sources {
			as.EvidenceSources = append(as.EvidenceSources, s)
			if fp.Class != "" {
				sources[s] = math.Max(sources[s], bandConf[band])
			} else if _, ok := sources[s]; !ok {
				sources[s] = 0
			}
		}
		slices.Sort(as.EvidenceSources)
		claims := map[string]ipmodel.Attribution{}
		for _, m := range []map[string]ipmodel.Attribution{d.Claims, a.Claims} {
			for k, c := range m {
				if old, ok := claims[k]; !ok || newerClaim(c, old) {
					claims[k] = c
				}
			}
		}
		for _, c := range claims {
			as.Attributions = append(as.Attributions, c)
		}
		slices.SortFunc(as.Attributions, func(x, y ipmodel.Attribution) int { return strings.Compare(x.SignalSource, y.SignalSource) })
		r.Assets = append(r.Assets, as)
	}
	for _, c := range ipmodel.Classes {
		if classes[c] {
			r.Classifications = append(r.Classifications, c)
		}
	}
	miss := 1.0
	for s, c := range sources {
		r.Sources = append(r.Sources, s)
		miss *= 1 - c
	}
	slices.Sort(r.Sources)
	if len(r.Classifications) > 0 {
		r.Confidence = math.Round((1-miss)*1000) / 1000
	}
	return r
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
