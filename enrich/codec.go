package enrich

import (
	"errors"
	"fmt"
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
	binVersion = 3 // 1: counts as zig-zag varints, before bincodec; 2: with CVE fields
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

// encodeDoc returns d's stored form, in a slice of exactly its length:
// the state cache keeps it, and S2's worst-case output size is about
// twice what a document compresses to.
func encodeDoc(d *doc) ([]byte, error) {
	bp := bodyPool.Get().(*[]byte)
	defer bodyPool.Put(bp)
	e := bincodec.Encoder{B: (*bp)[:0]}
	encodeBody(&e, d)
	*bp = e.B
	cp := bodyPool.Get().(*[]byte)
	defer bodyPool.Put(cp)
	if n := s2.MaxEncodedLen(len(e.B)); cap(*cp) < n {
		*cp = make([]byte, n)
	}
	comp := s2.Encode((*cp)[:cap(*cp)], e.B)
	out := make([]byte, 2+len(comp))
	out[0], out[1] = binMark, binVersion
	copy(out[2:], comp)
	return out, nil
}

func decodeDoc(b []byte, d *doc) error {
	if len(b) > 1 && b[0] == binMark {
		if b[1] != binVersion && b[1] != 2 {
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
		return nil
	}
	if len(b) > 0 && b[0] == s2Mark {
		js, err := s2.Decode(nil, b[1:])
		if err != nil {
			return err
		}
		b = js
	}
	return jsonv2.Unmarshal(b, d, jsontext.AllowInvalidUTF8(true))
}

func encodeBody(e *bincodec.Encoder, d *doc) {
	e.Int(d.V)
	e.Str(d.IP)
	e.Str(d.Network)
	e.Str(d.FirstSeen)
	e.Str(d.LastSeen)
	e.Count(len(d.Signals))
	for k, s := range d.Signals {
		e.Str(k)
		e.Str(s.Class)
		e.Str(s.Source)
		e.Str(s.Provider)
		e.F64(s.Conf)
		e.Str(s.FirstSeen)
		e.Str(s.LastSeen)
		e.Str(s.Win)
	}
	encodeClaims(e, d.Claims)
	e.Count(len(d.Assets))
	for k, a := range d.Assets {
		e.Str(k)
		encodeAsset(e, a)
	}
}

func encodeClaims(e *bincodec.Encoder, m map[string]ipmodel.Attribution) {
	e.Count(len(m))
	for k, c := range m {
		e.Str(k)
		e.Attribution(c)
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
	for k, s := range a.Sources {
		e.Str(k)
		e.Str(s.Vendor)
		e.Str(s.Win)
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
}

// decodeBody reads a body of format version v (2 or 3).
func decodeBody(r *bincodec.Decoder, d *doc, v byte) {
	d.V = r.Int()
	d.IP, d.Network, d.FirstSeen, d.LastSeen = r.Str(), r.Str(), r.Str(), r.Str()
	// Entries are allocated together, one slice per kind, not one by one.
	if n := r.Count(); n > 0 {
		d.Signals = make(map[string]*sigEntry, n)
		ents := make([]sigEntry, n)
		for i := range ents {
			k := r.Str()
			ents[i] = sigEntry{Class: r.Str(), Source: r.Str(), Provider: r.Str(), Conf: r.F64(),
				FirstSeen: r.Str(), LastSeen: r.Str(), Win: r.Str()}
			d.Signals[k] = &ents[i]
		}
	}
	d.Claims = decodeClaims(r)
	if n := r.Count(); n > 0 {
		d.Assets = make(map[string]*assetDoc, n)
		assets := make([]assetDoc, n)
		for i := range assets {
			k := r.Str()
			decodeAsset(r, &assets[i], v)
			d.Assets[k] = &assets[i]
		}
	}
}

func decodeClaims(r *bincodec.Decoder) map[string]ipmodel.Attribution {
	n := r.Count()
	if n == 0 {
		return nil
	}
	m := make(map[string]ipmodel.Attribution, n)
	for range n {
		k := r.Str()
		m[k] = r.Attribution()
	}
	return m
}

func decodeAsset(r *bincodec.Decoder, a *assetDoc, v byte) {
	a.Port, a.Family, a.FirstSeen, a.LastSeen = r.Int(), r.Str(), r.Str(), r.Str()
	a.Svc, a.Flow = decodeWinner(r), decodeWinner(r)
	n := r.Count()
	a.Sources = make(map[string]srcEvidence, n) // written to without a nil check
	for range n {
		k := r.Str()
		a.Sources[k] = srcEvidence{Vendor: r.Str(), Win: r.Str()}
	}
	a.Claims = decodeClaims(r)
	if v == 2 { // CVE fields, computed when read since version 3
		r.CveFindings()
		r.CveSummary()
		r.Str()
	}
}

func decodeWinner(r *bincodec.Decoder) *fpWinner {
	if !r.Flag() {
		return nil
	}
	w := &fpWinner{Win: r.Str()}
	fp := &w.Fp
	fp.RuleID, fp.Vendor, fp.Product = r.Str(), r.Str(), r.Str()
	fp.CPE = r.Strs()
	fp.ProtocolFamily, fp.Class, fp.ExactVersion, fp.VersionBand, fp.VersionPrecision = r.Str(), r.Str(), r.Str(), r.Str(), r.Str()
	return w
}
