package enrich

import (
	"math"
	"net/netip"
	"slices"
	"strconv"
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
//
// Every piece of knowledge carries its data class (DC, the rank of an
// ipmodel data class: standard, residential, netflow), taken from the
// observation that brought it (ingest.Observation.DataClass): record builds
// one view per audience from the pieces that audience may see.
//
// Its collections are small (a handful of entries) and each entry is
// found by a linear search: slices, where maps cost a worker more to
// build on every decode than everything it then does with them. Their
// order carries no meaning.
type doc struct {
	V         int
	IP        string
	Network   string
	FirstSeen string
	LastSeen  string
	Signals   []sigEntry // one per (Source, Class)
	Claims    []claim    // one per (SignalSource, DC)
	Assets    []assetDoc // one per (Port, Family)
}

// dclass is the rank of a data class (ipmodel.DataRank): 0 standard,
// 1 residential, 2 netflow.
type dclass = uint8

// Data class ranks.
const (
	dcStandard    dclass = 0
	dcResidential dclass = 1
	dcNetflow     dclass = 2
)

func dclassOf(o *ingest.Observation) dclass { return dclass(ipmodel.DataRank(o.DataClass())) }

// sees reports whether audience a may see data of rank dc.
func sees(a ipmodel.Audience, dc dclass) bool { return int(dc) <= int(a) }

// claim is an attribution claim and the data class of the observation
// that made it. Claims of one signal source but different classes are
// kept apart, so a restricted claim never hides a standard one.
type claim struct {
	ipmodel.Attribution
	DC dclass `json:"dc,omitempty"`
}

type sigEntry struct {
	Class     string  `json:"class"`
	Source    string  `json:"source"`
	Provider  string  `json:"provider,omitempty"`
	Conf      float64 `json:"conf"`
	FirstSeen string  `json:"first_seen"`
	LastSeen  string  `json:"last_seen"`
	// Win orders competing values of Provider/Conf/DC (see winKey): a
	// re-listing refreshes LastSeen but wins only with content as new.
	Win string `json:"win"`
	// DC is the data class of the winning observation.
	DC dclass `json:"dc,omitempty"`
	// Country, Region and City are where the winning observation's range
	// is used (a geofeed, the Private Relay list); a cloud's region
	// without a country is not geography and is not kept.
	Country string `json:"country,omitempty"`
	Region  string `json:"region,omitempty"`
	City    string `json:"city,omitempty"`
}

type assetDoc struct {
	Port      int
	Family    string
	FirstSeen string
	LastSeen  string
	Svc       *fpWinner
	Flow      *fpWinner
	Sources   []srcEvidence // one per (Source, DC)
	Claims    []claim       // one per (SignalSource, DC)
	// CVE findings are not stored: they follow from the fingerprint and
	// the catalog, and are computed when the record is read (scorer).
}

type fpWinner struct {
	Win string      `json:"win"`
	Fp  Fingerprint `json:"fp"`
	DC  dclass      `json:"dc,omitempty"`
}

// srcEvidence is what one source (of one data class) said about an
// asset: its newest vendor, and when it saw the asset, so a view without
// the source's class has the asset's times from the sources it sees.
type srcEvidence struct {
	Source string `json:"-"`
	Vendor string `json:"vendor,omitempty"`
	Win    string `json:"win"`
	DC     dclass `json:"dc,omitempty"`
	First  string `json:"first,omitempty"`
	Last   string `json:"last,omitempty"`
	// Flow is how sure the source's newest observation of the asset, a
	// flow, was of its protocol (ingest.Flow.ProtocolConfidence: 0.5 for
	// a guess from the port, 1 for a protocol the source named); 0 when
	// that observation was not a flow, or was stored before format 5.
	Flow float64 `json:"flow,omitempty"`
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
	d := &doc{V: 1, IP: o.IP, Network: o.Network, FirstSeen: o.ObservedAt, LastSeen: o.SeenAt()}
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
// at is when the claim was last made (the observation's SeenAt): a feed
// that lists an entry again makes its claim again, which keeps the claim
// from ageing out, and is what the claim's published observed_at says.
func mergeClaim(cs []claim, c ingest.Claim, at string, dc dclass) []claim {
	n := ipmodel.Attribution{OrgName: c.OrgName, SignalSource: c.SignalSource, SignalConfidence: c.SignalConfidence, ObservedAt: at}
	for i := range cs {
		if cs[i].SignalSource == n.SignalSource && cs[i].DC == dc {
			if newerClaim(n, cs[i].Attribution) {
				cs[i].Attribution = n
			}
			return cs
		}
	}
	return append(cs, claim{n, dc})
}

// mergeAttribution adds n to cs, or puts it in place of the claim of the
// same signal source if it is newer (newerClaim).
func mergeAttribution(cs []ipmodel.Attribution, n ipmodel.Attribution) []ipmodel.Attribution {
	for i := range cs {
		if cs[i].SignalSource == n.SignalSource {
			if newerClaim(n, cs[i]) {
				cs[i] = n
			}
			return cs
		}
	}
	return append(cs, n)
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

// winKey orders competing values of one register (a signal's provider
// and confidence, an asset's fingerprint, a source's vendor): the
// content's own time first, so a feed listing an old entry again (same
// or older observed_at, newer listed_at) never displaces what a newer
// observation said; then the listing time, so of two listings of
// content of the same time the later one wins; then the message id.
// A stored key without a listing time (written before listed_at) sorts
// against these by the id's hex digits in its place: an arbitrary but
// fixed order among observations of the same time, as before.
func winKey(o *ingest.Observation, id string) string {
	w := o.ObservedAt + "|"
	if o.ListedAt != "" {
		w += o.ListedAt + "|"
	}
	return w + id[:min(len(id), winIDLen)]
}

// apply merges one normalized observation (with its message id) into d.
// First seen times come from observed_at; last seen times, which the
// age-out reads, from SeenAt (the later of observed_at and listed_at).
func (d *doc) apply(o *ingest.Observation, id string, rules *Rules) {
	at, seen := o.ObservedAt, o.SeenAt()
	win := winKey(o, id)
	dc := dclassOf(o)
	d.FirstSeen, d.LastSeen = minStr(d.FirstSeen, at), maxStr(d.LastSeen, seen)
	switch o.Type {
	case ingest.TypeSignal, ingest.TypeRange:
		var class, provider, country, region, city string
		var conf float64
		if o.Signal != nil {
			class, provider, conf = classesOfSignal[o.Signal.Kind], o.Signal.Provider, o.Signal.Confidence
		} else {
			class, provider, conf = o.Range.Kind, o.Range.Provider, o.Range.Confidence
			if country, city = o.Range.Country, o.Range.City; country != "" || city != "" {
				region = o.Range.Region
			}
		}
		if conf == 0 {
			conf = defaultConf
		}
		for _, c := range o.Claims {
			d.Claims = mergeClaim(d.Claims, c, seen, dc)
		}
		s := d.signal(o.Source, class, at)
		s.FirstSeen, s.LastSeen = minStr(s.FirstSeen, at), maxStr(s.LastSeen, seen)
		if win > s.Win {
			s.Win, s.Provider, s.Conf, s.DC = win, provider, conf, dc
			s.Country, s.Region, s.City = country, region, city
		}
		if o.Signal != nil && o.Signal.Port > 0 {
			family := o.Signal.ProtocolFamily
			if family == "" {
				family = "tcp"
			}
			a := d.asset(o.Signal.Port, family, at, seen)
			a.addSource(o.Source, "", win, dc, at, seen, 0)
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
		a := d.asset(o.Service.Port, family, at, seen)
		a.addSource(o.Source, fp.Vendor, win, dc, at, seen, 0)
		if a.Svc == nil || win > a.Svc.Win {
			a.Svc = &fpWinner{Win: win, Fp: fp, DC: dc}
		}
		for _, c := range o.Claims {
			a.Claims = mergeClaim(a.Claims, c, seen, dc)
		}
	case ingest.TypeFlow:
		fp, ok := rules.Match(nil, o.Flow)
		family := fp.ProtocolFamily
		if !ok {
			family = o.Flow.Protocol
		}
		a := d.asset(o.Flow.Port, family, at, seen)
		a.addSource(o.Source, "", win, dc, at, seen, o.Flow.ProtocolConfidence())
		if fp.Class == "" {
			fp.Class = classOfFlow[o.Flow.Protocol]
		}
		if a.Flow == nil || win > a.Flow.Win {
			a.Flow = &fpWinner{Win: win, Fp: fp, DC: dc}
		}
		for _, c := range o.Claims {
			a.Claims = mergeClaim(a.Claims, c, seen, dc)
		}
	}
}

// signal returns the entry of source and class, added (first seen at)
// if there is none; the pointer holds until d.Signals grows.
func (d *doc) signal(source, class, at string) *sigEntry {
	for i := range d.Signals {
		if s := &d.Signals[i]; s.Source == source && s.Class == class {
			return s
		}
	}
	d.Signals = append(d.Signals, sigEntry{Class: class, Source: source, FirstSeen: at})
	return &d.Signals[len(d.Signals)-1]
}

// appendKey appends the entry's key in the stored body and the JSON
// form: source|class.
func (s *sigEntry) appendKey(b []byte) []byte {
	return append(append(append(b, s.Source...), '|'), s.Class...)
}

// appendKey appends the asset's key in the stored body and the JSON
// form: port/family.
func (a *assetDoc) appendKey(b []byte) []byte {
	return append(append(strconv.AppendInt(b, int64(a.Port), 10), '/'), a.Family...)
}

// asset returns the asset of port and family, added if there is none,
// with at folded into its first seen and seen into its last seen; the
// pointer holds until d.Assets grows.
func (d *doc) asset(port int, family, at, seen string) *assetDoc {
	var a *assetDoc
	for i := range d.Assets {
		if d.Assets[i].Port == port && d.Assets[i].Family == family {
			a = &d.Assets[i]
			break
		}
	}
	if a == nil {
		d.Assets = append(d.Assets, assetDoc{Port: port, Family: family, FirstSeen: at})
		a = &d.Assets[len(d.Assets)-1]
	}
	a.FirstSeen, a.LastSeen = minStr(a.FirstSeen, at), maxStr(a.LastSeen, seen)
	return a
}

// addSource records what source said of the asset: vendor and flow (the
// flow's protocol confidence, 0 for anything but a flow) are the newest
// observation's.
func (a *assetDoc) addSource(src, vendor, win string, dc dclass, at, seen string, flow float64) {
	for i := range a.Sources {
		if s := &a.Sources[i]; s.Source == src && s.DC == dc {
			if win > s.Win {
				s.Vendor, s.Win, s.Flow = vendor, win, flow
			}
			s.First, s.Last = minStr(s.First, at), maxStr(s.Last, seen)
			return
		}
	}
	a.Sources = append(a.Sources, srcEvidence{Source: src, Vendor: vendor, Win: win, DC: dc, First: at, Last: seen, Flow: flow})
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
// outnumber contradicting ones, low otherwise or without a vendor. An
// asset known from flows alone is graded no higher than the surest of
// its flows' protocols (flowCap): two exporters guessing WireGuard from
// port 51820 are two guesses, not two confirmations.
func (a *assetDoc) band() string {
	return capBand(a.agreement(), a.flowCap())
}

// flowCap is the highest protocol confidence of the asset's flows when
// flows are all its sources say of it; 0 (no cap) when a source backs it
// otherwise (a scan, a signal on its port), or a flow's confidence is
// unknown (stored before format 5).
func (a *assetDoc) flowCap() float64 {
	c := 0.0
	for i := range a.Sources {
		f := a.Sources[i].Flow
		if f == 0 {
			return 0
		}
		c = max(c, f)
	}
	return c
}

// confBand is the highest band whose confidence (bandConf) c reaches.
func confBand(c float64) string {
	switch {
	case c >= bandConf["high"]:
		return "high"
	case c >= bandConf["medium"]:
		return "medium"
	}
	return "low"
}

// capBand returns the lower of band b and the band of confidence c; c 0
// caps nothing.
func capBand(b string, c float64) string {
	if c == 0 {
		return b
	}
	if cb := confBand(c); slices.Index(ipmodel.ConfidenceBands, cb) < slices.Index(ipmodel.ConfidenceBands, b) {
		return cb
	}
	return b
}

// agreement is band's grade before the flows' cap.
func (a *assetDoc) agreement() string {
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
	d.Signals = slices.DeleteFunc(d.Signals, func(s sigEntry) bool { return s.LastSeen < cutoff })
	for _, s := range d.Signals {
		d.LastSeen = maxStr(d.LastSeen, s.LastSeen)
	}
	old := func(c claim) bool { return c.ObservedAt < cutoff }
	d.Claims = slices.DeleteFunc(d.Claims, old)
	d.Assets = slices.DeleteFunc(d.Assets, func(a assetDoc) bool { return a.LastSeen < cutoff })
	for i := range d.Assets {
		a := &d.Assets[i]
		a.Claims = slices.DeleteFunc(a.Claims, old)
		d.LastSeen = maxStr(d.LastSeen, a.LastSeen)
	}
	return len(d.Signals) > 0 || len(d.Assets) > 0
}

var bandConf = map[string]float64{"high": 0.9, "medium": 0.75, "low": 0.5}

// record builds the published record of d (what enterprise sees), with
// CVE fields from sc; when d holds restricted knowledge, its Views are the
// records the lower audiences see, each built from that audience's part
// of d alone (view), so a hidden piece leaves no trace: not in the
// classifications, provider, confidence, times, sources, assets or
// attributions.
func (d *doc) record(sc *scorer) ipmodel.Record {
	r := d.build(sc)
	if !d.restricted() {
		return r
	}
	r.Views = &ipmodel.Views{}
	for _, a := range ipmodel.Audiences[:ipmodel.NumAudiences-1] {
		if v := d.view(a); v != nil {
			vr := v.build(sc)
			r.Views[a] = &vr
		}
	}
	return r
}

// restricted reports whether any piece of d is above standard.
func (d *doc) restricted() bool {
	for i := range d.Signals {
		if d.Signals[i].DC != dcStandard {
			return true
		}
	}
	for i := range d.Claims {
		if d.Claims[i].DC != dcStandard {
			return true
		}
	}
	for i := range d.Assets {
		a := &d.Assets[i]
		if (a.Svc != nil && a.Svc.DC != dcStandard) || (a.Flow != nil && a.Flow.DC != dcStandard) {
			return true
		}
		for j := range a.Sources {
			if a.Sources[j].DC != dcStandard {
				return true
			}
		}
		for j := range a.Claims {
			if a.Claims[j].DC != dcStandard {
				return true
			}
		}
	}
	return false
}

// view returns the part of d that audience aud may see, as a document of
// its own (sharing d's strings), or nil when aud sees nothing of d. An
// asset stays when a source aud sees reported it; its times are then
// those sources' and its fingerprint the newest one aud may see (a
// service fingerprint from a restricted source is left out, not replaced
// by an older one: the state keeps only the newest).
func (d *doc) view(aud ipmodel.Audience) *doc {
	v := &doc{V: d.V, IP: d.IP, Network: d.Network}
	for _, s := range d.Signals {
		if sees(aud, s.DC) {
			v.Signals = append(v.Signals, s)
			v.FirstSeen, v.LastSeen = minStr(v.FirstSeen, s.FirstSeen), maxStr(v.LastSeen, s.LastSeen)
		}
	}
	for _, c := range d.Claims {
		if sees(aud, c.DC) {
			v.Claims = append(v.Claims, c)
		}
	}
	for i := range d.Assets {
		a := &d.Assets[i]
		va := assetDoc{Port: a.Port, Family: a.Family}
		for _, e := range a.Sources {
			if !sees(aud, e.DC) {
				continue
			}
			va.Sources = append(va.Sources, e)
			first, last := e.First, e.Last
			if first == "" { // stored before per-source times
				first, last = a.FirstSeen, a.LastSeen
			}
			va.FirstSeen, va.LastSeen = minStr(va.FirstSeen, first), maxStr(va.LastSeen, last)
		}
		if len(va.Sources) == 0 {
			continue
		}
		if a.Svc != nil && sees(aud, a.Svc.DC) {
			va.Svc = a.Svc
		}
		if a.Flow != nil && sees(aud, a.Flow.DC) {
			va.Flow = a.Flow
		}
		for _, c := range a.Claims {
			if sees(aud, c.DC) {
				va.Claims = append(va.Claims, c)
			}
		}
		v.Assets = append(v.Assets, va)
		v.FirstSeen, v.LastSeen = minStr(v.FirstSeen, va.FirstSeen), maxStr(v.LastSeen, va.LastSeen)
	}
	if len(v.Signals) == 0 && len(v.Assets) == 0 {
		return nil
	}
	return v
}

// build builds the record of d's pieces, with CVE fields from sc.
func (d *doc) build(sc *scorer) ipmodel.Record {
	r := ipmodel.Record{IP: d.IP, Network: d.Network, FirstSeen: d.FirstSeen, LastSeen: d.LastSeen,
		Classifications: []string{}, Sources: []string{}, Assets: []ipmodel.Asset{}}
	classes := map[string]bool{}
	sources := map[string]float64{} // source -> best confidence
	var prov, geo *sigEntry
	surer := func(s, than *sigEntry) bool {
		return than == nil || s.Conf > than.Conf || (s.Conf == than.Conf && s.Win > than.Win)
	}
	for i := range d.Signals {
		s := &d.Signals[i]
		classes[s.Class] = true
		sources[s.Source] = math.Max(sources[s.Source], s.Conf)
		if s.Provider != "" && surer(s, prov) {
			prov = s
		}
		if (s.Country != "" || s.City != "") && surer(s, geo) {
			geo = s
		}
	}
	if prov != nil {
		r.Provider = strPtr(prov.Provider)
	}
	if geo != nil {
		r.Country, r.Region, r.City = optStr(geo.Country), optStr(geo.Region), optStr(geo.City)
	}
	assets := make([]*assetDoc, len(d.Assets))
	for i := range d.Assets {
		assets[i] = &d.Assets[i]
	}
	slices.SortFunc(assets, func(a, b *assetDoc) int {
		if a.Port != b.Port {
			return a.Port - b.Port
		}
		return strings.Compare(a.Family, b.Family)
	})
	for _, a := range assets {
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
		for _, e := range a.Sources {
			s := e.Source
			if !slices.Contains(as.EvidenceSources, s) {
				as.EvidenceSources = append(as.EvidenceSources, s)
			}
			if fp.Class != "" {
				// A flow counts no surer than its protocol was inferred.
				c := bandConf[band]
				if e.Flow > 0 {
					c = math.Min(c, e.Flow)
				}
				sources[s] = math.Max(sources[s], c)
			} else if _, ok := sources[s]; !ok {
				sources[s] = 0
			}
		}
		slices.Sort(as.EvidenceSources)
		// The newest claim per signal source, of the address's and the asset's.
		for _, c := range slices.Concat(d.Claims, a.Claims) {
			as.Attributions = mergeAttribution(as.Attributions, c.Attribution)
		}
		slices.SortFunc(as.Attributions, func(x, y ipmodel.Attribution) int { return strings.Compare(x.SignalSource, y.SignalSource) })
		r.Assets = append(r.Assets, as)
	}
	for _, c := range ipmodel.Classes {
		if classes[c] {
			r.Classifications = append(r.Classifications, c)
		}
	}
	d.attribute(&r, sc)
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

// attribute sets r's own attributions: the newest claim per signal
// source; for a signal source that claimed nothing, its provider (of a
// range or signal) at its confidence and last seen time; and the AS of the
// address (of a range, of its first address) from the catalog's IP-to-ASN
// table, which each asset also carries.
func (d *doc) attribute(r *ipmodel.Record, sc *scorer) {
	var out []ipmodel.Attribution
	for _, c := range d.Claims {
		out = mergeAttribution(out, c.Attribution)
	}
	for i := range d.Signals {
		s := &d.Signals[i]
		if s.Provider == "" || slices.ContainsFunc(d.Claims, func(c claim) bool { return c.SignalSource == s.Source }) {
			continue
		}
		out = mergeAttribution(out, ipmodel.Attribution{OrgName: s.Provider, SignalSource: s.Source, SignalConfidence: s.Conf, ObservedAt: s.LastSeen})
	}
	if sc != nil && sc.cat != nil {
		if addr, err := netip.ParseAddr(d.IP); err == nil {
			if at, info, ok := sc.cat.ASN().attribution(addr); ok {
				r.ASN = info.ASN
				out = mergeAttribution(out, at)
				for i := range r.Assets {
					r.Assets[i].Attributions = mergeAttribution(r.Assets[i].Attributions, at)
					slices.SortFunc(r.Assets[i].Attributions, byAttributionSource)
				}
			}
		}
	}
	slices.SortFunc(out, byAttributionSource)
	r.Attributions = out
}

func byAttributionSource(x, y ipmodel.Attribution) int {
	return strings.Compare(x.SignalSource, y.SignalSource)
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
