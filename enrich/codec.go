package enrich

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/klauspost/compress/s2"

	"github.com/netintel/netintel/internal/bincodec"
	"github.com/netintel/netintel/internal/ipmodel"
)

// State documents are stored in a compact binary form (marked by a leading
// 'b' and a format version): a worker encodes one on every state write and
// decodes one on every cache hit, and the JSON these replaced cost it more
// CPU than the rest of the enrichment together (BenchmarkDocCodec). Older
// records, JSON compressed with S2 (marked 's') or plain JSON, still read.
//
// The body is compressed with S2 (timestamps, message ids and source names
// repeat within a document: about half the size, for about a microsecond).
// The body is the doc struct field by field in internal/bincodec's form
// (shared with the MMDB writer's spool), a map as a count then key + value
// pairs. It is not meant for other readers: snapshots are what the product
// publishes.
const (
	binMark    = 'b'
	binVersion = 5 // 1: counts as zig-zag varints, before bincodec; 2: with CVE fields; 3: without data classes; 4: without range geography and flow confidence
	s2Mark     = 's'
)

// maxDocBody bounds a decoded body: far above any real document (the
// largest values NATS stores are a few MiB), it keeps a corrupt length
// from allocating gigabytes.
const maxDocBody = 64 << 20

// errDocFormat reports a stored document that is not one this code wrote.
var errDocFormat = errors.New("malformed state document")

// bodyPool holds the buffers a document body is built and compressed in
// before it is stored, and decompressed into before decoding.
var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// encodeDoc returns d's stored form.
func encodeDoc(d *doc) ([]byte, error) { return appendDoc(nil, d) }

// appendDoc appends d's stored form to dst.
func appendDoc(dst []byte, d *doc) ([]byte, error) {
	bp := bodyPool.Get().(*[]byte)
	defer bodyPool.Put(bp)
	e := bincodec.Encoder{B: (*bp)[:0]}
	encodeBody(&e, d)
	*bp = e.B
	dst = append(dst, binMark, binVersion)
	// S2 compresses straight into dst, grown to the worst case.
	n := s2.MaxEncodedLen(len(e.B))
	dst = slices.Grow(dst, n)
	comp := s2.Encode(dst[len(dst):len(dst)+n], e.B)
	return dst[:len(dst)+len(comp)], nil
}

func decodeDoc(b []byte, d *doc) error {
	if len(b) > 1 && b[0] == binMark {
		if b[1] < 2 || b[1] > binVersion {
			return fmt.Errorf("%w: format version %d", errDocFormat, b[1])
		}
		bp := bodyPool.Get().(*[]byte)
		defer bodyPool.Put(bp)
		n, err := s2.DecodedLen(b[2:])
		if err != nil {
			return fmt.Errorf("%w: %v", errDocFormat, err)
		}
		if n > maxDocBody {
			return fmt.Errorf("%w: body of %d bytes", errDocFormat, n)
		}
		if cap(*bp) < n {
			*bp = make([]byte, n)
		}
		body, err := s2.Decode((*bp)[:cap(*bp)], b[2:])
		if err != nil {
			return fmt.Errorf("%w: %v", errDocFormat, err)
		}
		// One string holds every field: the decoded strings are slices of it.
		r := bincodec.NewDecoder(string(body))
		decodeBody(r, d, b[1])
		if err := r.End(); err != nil {
			return fmt.Errorf("%w: %v", errDocFormat, err)
		}
		if b[1] < 4 {
			d.legacyClasses()
		}
		return nil
	}
	if len(b) > 0 && b[0] == s2Mark {
		js, err := s2.Decode(nil, b[1:])
		if err != nil {
			return err
		}
		b = js
	}
	var j jsonDoc
	if err := jsonv2.Unmarshal(b, &j, jsontext.AllowInvalidUTF8(true)); err != nil {
		return err
	}
	d.fromJSON(&j)
	d.legacyClasses()
	return nil
}

// legacyClasses gives the pieces of a document stored before data
// classes (binary format 2 and 3, JSON) the classes they can be told to
// have: a residential_proxy signal is residential, and so are the claims
// of its source; an asset's flow fingerprint is netflow, and so is the
// evidence of the source that made it and of a source whose name the
// gating of those versions took for flow telemetry (netflow*, ipfix*,
// sflow*), with those sources' claims. Such records are rewritten in the
// current form by the next observation of their address, and age out in
// enrich.retention_days otherwise.
func (d *doc) legacyClasses() {
	for i := range d.Signals {
		if s := &d.Signals[i]; s.Class == ipmodel.ClassResidentialProxy {
			s.DC = max(s.DC, dcResidential)
			for j := range d.Claims {
				if d.Claims[j].SignalSource == s.Source {
					d.Claims[j].DC = max(d.Claims[j].DC, dcResidential)
				}
			}
		}
	}
	for i := range d.Assets {
		a := &d.Assets[i]
		if a.Flow != nil {
			a.Flow.DC = dcNetflow
		}
		for j := range a.Sources {
			e := &a.Sources[j]
			n := strings.ToLower(e.Source)
			if (a.Flow != nil && e.Win == a.Flow.Win) || strings.HasPrefix(n, "netflow") || strings.HasPrefix(n, "ipfix") || strings.HasPrefix(n, "sflow") {
				e.DC = dcNetflow
				for k := range a.Claims {
					if a.Claims[k].SignalSource == e.Source {
						a.Claims[k].DC = dcNetflow
					}
				}
			}
		}
	}
}

// The body keeps the layout of the map-based documents of format version
// 3: each entry follows the key it had in the map (source|class for a
// signal, port/family for an asset, the signal source for a claim, the
// source for an asset's evidence). A decoder takes an evidence source's
// name from its key and every other entry's from the entry itself.

func encodeBody(e *bincodec.Encoder, d *doc) {
	e.Int(d.V)
	e.Str(d.IP)
	e.Str(d.Network)
	e.Str(d.FirstSeen)
	e.Str(d.LastSeen)
	e.Count(len(d.Signals))
	var key [64]byte
	for i := range d.Signals {
		s := &d.Signals[i]
		encodeKey(e, s.appendKey(key[:0]))
		e.Str(s.Class)
		e.Str(s.Source)
		e.Str(s.Provider)
		e.F64(s.Conf)
		e.Str(s.FirstSeen)
		e.Str(s.LastSeen)
		e.Str(s.Win)
		e.Int(int(s.DC))
		e.Str(s.Country)
		e.Str(s.Region)
		e.Str(s.City)
	}
	encodeClaims(e, d.Claims)
	e.Count(len(d.Assets))
	for i := range d.Assets {
		a := &d.Assets[i]
		encodeKey(e, a.appendKey(key[:0]))
		encodeAsset(e, a)
	}
}

// encodeKey writes k as a string (its length, then its bytes).
func encodeKey(e *bincodec.Encoder, k []byte) {
	e.Count(len(k))
	e.B = append(e.B, k...)
}

func encodeClaims(e *bincodec.Encoder, cs []claim) {
	e.Count(len(cs))
	for _, c := range cs {
		e.Str(c.SignalSource)
		e.Attribution(c.Attribution)
		e.Int(int(c.DC))
	}
}

func encodeAsset(e *bincodec.Encoder, a *assetDoc) {
	e.Int(a.Port)
	e.Str(a.Family)
	e.Str(a.FirstSeen)
	e.Str(a.LastSeen)
	encodeWinner(e, a.Svc)
	encodeWinner(e, a.Flow)
	e.Count(len(a.Sources))
	for _, s := range a.Sources {
		e.Str(s.Source)
		e.Str(s.Vendor)
		e.Str(s.Win)
		e.Int(int(s.DC))
		e.Str(s.First)
		e.Str(s.Last)
		e.F64(s.Flow)
	}
	encodeClaims(e, a.Claims)
}

func encodeWinner(e *bincodec.Encoder, w *fpWinner) {
	if !e.Flag(w != nil) {
		return
	}
	e.Str(w.Win)
	fp := &w.Fp
	e.Str(fp.RuleID)
	e.Str(fp.Vendor)
	e.Str(fp.Product)
	e.Strs(fp.CPE)
	e.Str(fp.ProtocolFamily)
	e.Str(fp.Class)
	e.Str(fp.ExactVersion)
	e.Str(fp.VersionBand)
	e.Str(fp.VersionPrecision)
	e.Int(int(w.DC))
}

// decodeBody reads a body of format version v (2 to 5; before 4 there
// are no data classes and no per-source times, before 5 no range
// geography and no flow confidence).
func decodeBody(r *bincodec.Decoder, d *doc, v byte) {
	d.V = r.Int()
	d.IP, d.Network, d.FirstSeen, d.LastSeen = r.Str(), r.Str(), r.Str(), r.Str()
	if n := r.Count(); n > 0 {
		d.Signals = make([]sigEntry, n)
		for i := range d.Signals {
			r.Str() // source|class
			d.Signals[i] = sigEntry{Class: r.Str(), Source: r.Str(), Provider: r.Str(), Conf: r.F64(),
				FirstSeen: r.Str(), LastSeen: r.Str(), Win: r.Str()}
			if v >= 4 {
				d.Signals[i].DC = decodeDC(r)
			}
			if v >= 5 {
				d.Signals[i].Country, d.Signals[i].Region, d.Signals[i].City = r.Str(), r.Str(), r.Str()
			}
		}
	}
	d.Claims = decodeClaims(r, v)
	if n := r.Count(); n > 0 {
		d.Assets = make([]assetDoc, n)
		for i := range d.Assets {
			r.Str() // port/family
			decodeAsset(r, &d.Assets[i], v)
		}
	}
}

// decodeDC reads a data class rank; one outside 0..2 (a corrupt body) is
// clamped into it.
func decodeDC(r *bincodec.Decoder) dclass {
	return dclass(min(max(r.Int(), 0), int(dcNetflow)))
}

func decodeClaims(r *bincodec.Decoder, v byte) []claim {
	n := r.Count()
	if n == 0 {
		return nil
	}
	cs := make([]claim, n)
	for i := range cs {
		r.Str() // the signal source
		cs[i].Attribution = r.Attribution()
		if v >= 4 {
			cs[i].DC = decodeDC(r)
		}
	}
	return cs
}

func decodeAsset(r *bincodec.Decoder, a *assetDoc, v byte) {
	a.Port, a.Family, a.FirstSeen, a.LastSeen = r.Int(), r.Str(), r.Str(), r.Str()
	a.Svc, a.Flow = decodeWinner(r, v), decodeWinner(r, v)
	if n := r.Count(); n > 0 {
		a.Sources = make([]srcEvidence, n)
		for i := range a.Sources {
			a.Sources[i] = srcEvidence{Source: r.Str(), Vendor: r.Str(), Win: r.Str()}
			if v >= 4 {
				a.Sources[i].DC, a.Sources[i].First, a.Sources[i].Last = decodeDC(r), r.Str(), r.Str()
			}
			if v >= 5 {
				a.Sources[i].Flow = r.F64()
			}
		}
	}
	a.Claims = decodeClaims(r, v)
	if v == 2 { // CVE fields, computed when read since version 3
		r.CveFindings()
		r.CveSummary()
		r.Str()
	}
}

func decodeWinner(r *bincodec.Decoder, v byte) *fpWinner {
	if !r.Flag() {
		return nil
	}
	w := &fpWinner{Win: r.Str()}
	fp := &w.Fp
	fp.RuleID, fp.Vendor, fp.Product = r.Str(), r.Str(), r.Str()
	fp.CPE = r.Strs()
	fp.ProtocolFamily, fp.Class, fp.ExactVersion, fp.VersionBand, fp.VersionPrecision = r.Str(), r.Str(), r.Str(), r.Str(), r.Str()
	if v >= 4 {
		w.DC = decodeDC(r)
	}
	return w
}

// jsonDoc is the JSON form of a document, as records were stored before
// the binary form (and still read): its collections are objects keyed as
// the binary body's (see encodeBody). Documents also marshal to it, for
// tests and for Sweep's comparison, which JSON's sorted keys make exact.
type jsonDoc struct {
	V         int                  `json:"v"`
	IP        string               `json:"ip"`
	Network   string               `json:"network,omitempty"`
	FirstSeen string               `json:"first_seen"`
	LastSeen  string               `json:"last_seen"`
	Signals   map[string]sigEntry  `json:"signals,omitempty"`
	Claims    map[string]claim     `json:"claims,omitempty"`
	Assets    map[string]jsonAsset `json:"assets,omitempty"`
}

type jsonAsset struct {
	Port      int                    `json:"port"`
	Family    string                 `json:"family"`
	FirstSeen string                 `json:"first_seen"`
	LastSeen  string                 `json:"last_seen"`
	Svc       *fpWinner              `json:"svc,omitempty"`
	Flow      *fpWinner              `json:"flow,omitempty"`
	Sources   map[string]srcEvidence `json:"sources"`
	Claims    map[string]claim       `json:"claims,omitempty"`
}

// dcKey is a JSON key of an entry of a class: the key itself for
// standard, key|dc otherwise.
func dcKey(k string, dc dclass) string {
	if dc == dcStandard {
		return k
	}
	return k + "|" + strconv.Itoa(int(dc))
}

func jsonClaims(cs []claim) map[string]claim {
	if len(cs) == 0 {
		return nil
	}
	m := make(map[string]claim, len(cs))
	for _, c := range cs {
		m[dcKey(c.SignalSource, c.DC)] = c
	}
	return m
}

// MarshalJSON writes d in its JSON form (jsonDoc).
func (d *doc) MarshalJSON() ([]byte, error) {
	j := jsonDoc{V: d.V, IP: d.IP, Network: d.Network, FirstSeen: d.FirstSeen, LastSeen: d.LastSeen, Claims: jsonClaims(d.Claims)}
	if len(d.Signals) > 0 {
		j.Signals = make(map[string]sigEntry, len(d.Signals))
		for _, s := range d.Signals {
			j.Signals[string(s.appendKey(nil))] = s
		}
	}
	if len(d.Assets) > 0 {
		j.Assets = make(map[string]jsonAsset, len(d.Assets))
		for _, a := range d.Assets {
			ja := jsonAsset{Port: a.Port, Family: a.Family, FirstSeen: a.FirstSeen, LastSeen: a.LastSeen, Svc: a.Svc, Flow: a.Flow,
				Sources: make(map[string]srcEvidence, len(a.Sources)), Claims: jsonClaims(a.Claims)}
			for _, s := range a.Sources {
				ja.Sources[dcKey(s.Source, s.DC)] = s
			}
			j.Assets[string(a.appendKey(nil))] = ja
		}
	}
	return json.Marshal(j)
}

// fromJSON fills d from its JSON form, each collection in key order.
func (d *doc) fromJSON(j *jsonDoc) {
	*d = doc{V: j.V, IP: j.IP, Network: j.Network, FirstSeen: j.FirstSeen, LastSeen: j.LastSeen, Claims: claimsFromJSON(j.Claims)}
	for _, k := range slices.Sorted(maps.Keys(j.Signals)) {
		d.Signals = append(d.Signals, j.Signals[k])
	}
	for _, k := range slices.Sorted(maps.Keys(j.Assets)) {
		ja := j.Assets[k]
		a := assetDoc{Port: ja.Port, Family: ja.Family, FirstSeen: ja.FirstSeen, LastSeen: ja.LastSeen, Svc: ja.Svc, Flow: ja.Flow,
			Claims: claimsFromJSON(ja.Claims)}
		for _, src := range slices.Sorted(maps.Keys(ja.Sources)) {
			e := ja.Sources[src]
			e.Source = src
			if i := strings.LastIndexByte(src, '|'); i >= 0 {
				e.Source = src[:i]
			}
			a.Sources = append(a.Sources, e)
		}
		d.Assets = append(d.Assets, a)
	}
}

func claimsFromJSON(m map[string]claim) []claim {
	var cs []claim
	for _, k := range slices.Sorted(maps.Keys(m)) {
		cs = append(cs, m[k])
	}
	return cs
}
