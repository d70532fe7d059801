package publish

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/netintel/netintel/internal/ipmodel"
)

// The MMDB writer spools records to a temp file between its two passes in
// this compact binary form (several times faster to decode than JSON).
// Lists decode as nil when empty; the MMDB writes nil and empty alike.

var errSpool = errors.New("mmdb spool: truncated record")

type spoolEnc struct{ b []byte }

func (e *spoolEnc) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *spoolEnc) optStr(p *string) {
	if p == nil {
		e.b = append(e.b, 0)
		return
	}
	e.b = append(e.b, 1)
	e.str(*p)
}

func (e *spoolEnc) f64(f float64) { e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(f)) }

func (e *spoolEnc) optF64(p *float64) {
	if p == nil {
		e.b = append(e.b, 0)
		return
	}
	e.b = append(e.b, 1)
	e.f64(*p)
}

func (e *spoolEnc) int(n int) { e.b = binary.AppendVarint(e.b, int64(n)) }

func (e *spoolEnc) strs(ss []string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}

// appendRecord appends the spool form of r to b.
func appendRecord(b []byte, r *ipmodel.Record) []byte {
	e := spoolEnc{b}
	e.str(r.IP)
	e.str(r.Network)
	e.strs(r.Classifications)
	e.optStr(r.Provider)
	e.f64(r.Confidence)
	e.str(r.FirstSeen)
	e.str(r.LastSeen)
	e.strs(r.Sources)
	e.b = binary.AppendUvarint(e.b, uint64(len(r.Assets)))
	for i := range r.Assets {
		a := &r.Assets[i]
		e.int(a.Port)
		e.str(a.ProtocolFamily)
		e.optStr(a.Vendor)
		e.optStr(a.Product)
		e.optStr(a.VersionBand)
		e.optStr(a.VersionPrecision)
		e.optStr(a.ExactVersion)
		e.str(a.ConfidenceBand)
		e.strs(a.EvidenceSources)
		e.str(a.FirstSeen)
		e.str(a.LastSeen)
		e.b = binary.AppendUvarint(e.b, uint64(len(a.Attributions)))
		for _, at := range a.Attributions {
			e.str(at.OrgName)
			e.str(at.SignalSource)
			e.f64(at.SignalConfidence)
			e.str(at.ObservedAt)
		}
		if s := a.CveSummary; s == nil {
			e.b = append(e.b, 0)
		} else {
			e.b = append(e.b, 1)
			e.int(s.TotalCount)
			e.int(s.KevCount)
			e.optF64(s.MaxSeverityScore)
			e.optStr(s.MaxSeverityRating)
			e.optStr(s.EolStatus)
			e.optStr(s.LastComputedAt)
		}
		e.b = binary.AppendUvarint(e.b, uint64(len(a.Cves)))
		for k := range a.Cves {
			c := &a.Cves[k]
			e.str(c.CveID)
			e.str(c.DetectionConfidence)
			e.str(c.Source)
			e.optF64(c.SeverityScore)
			e.optStr(c.SeverityRating)
			e.optStr(c.CvssVersion)
			e.optStr(c.KevAddedAt)
			e.optF64(c.EpssScore)
			e.optF64(c.EpssPercentile)
			e.optStr(c.EuvdID)
			e.optStr(c.JvnID)
			e.optStr(c.MatchedVia)
		}
	}
	return e.b
}

type spoolDec struct {
	b   []byte
	err error
}

func (d *spoolDec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errSpool
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *spoolDec) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) { // every element takes at least a byte
		d.err = errSpool
		return 0
	}
	return int(n)
}

func (d *spoolDec) int() int {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errSpool
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

func (d *spoolDec) str() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errSpool
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *spoolDec) flag() bool {
	if d.err != nil || len(d.b) == 0 {
		d.err = errSpool
		return false
	}
	f := d.b[0] == 1
	d.b = d.b[1:]
	return f
}

func (d *spoolDec) optStr() *string {
	if !d.flag() {
		return nil
	}
	s := d.str()
	return &s
}

func (d *spoolDec) f64() float64 {
	if d.err != nil || len(d.b) < 8 {
		d.err = errSpool
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return f
}

func (d *spoolDec) optF64() *float64 {
	if !d.flag() {
		return nil
	}
	f := d.f64()
	return &f
}

func (d *spoolDec) strs() []string {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

// decodeRecord reads a record written by appendRecord.
func decodeRecord(b []byte) (ipmodel.Record, error) {
	d := spoolDec{b: b}
	r := ipmodel.Record{IP: d.str(), Network: d.str(), Classifications: d.strs(), Provider: d.optStr(),
		Confidence: d.f64(), FirstSeen: d.str(), LastSeen: d.str(), Sources: d.strs()}
	if n := d.count(); n > 0 {
		r.Assets = make([]ipmodel.Asset, n)
	}
	for i := range r.Assets {
		a := &r.Assets[i]
		a.Port = d.int()
		a.ProtocolFamily = d.str()
		a.Vendor, a.Product = d.optStr(), d.optStr()
		a.VersionBand, a.VersionPrecision, a.ExactVersion = d.optStr(), d.optStr(), d.optStr()
		a.ConfidenceBand = d.str()
		a.EvidenceSources = d.strs()
		a.FirstSeen, a.LastSeen = d.str(), d.str()
		if n := d.count(); n > 0 {
			a.Attributions = make([]ipmodel.Attribution, n)
		}
		for k := range a.Attributions {
			a.Attributions[k] = ipmodel.Attribution{OrgName: d.str(), SignalSource: d.str(), SignalConfidence: d.f64(), ObservedAt: d.str()}
		}
		if d.flag() {
			a.CveSummary = &ipmodel.CveSummary{TotalCount: d.int(), KevCount: d.int(), MaxSeverityScore: d.optF64(),
				MaxSeverityRating: d.optStr(), EolStatus: d.optStr(), LastComputedAt: d.optStr()}
		}
		if n := d.count(); n > 0 {
			a.Cves = make([]ipmodel.CveFinding, n)
		}
		for k := range a.Cves {
			c := &a.Cves[k]
			c.CveID, c.DetectionConfidence, c.Source = d.str(), d.str(), d.str()
			c.SeverityScore, c.SeverityRating, c.CvssVersion, c.KevAddedAt = d.optF64(), d.optStr(), d.optStr(), d.optStr()
			c.EpssScore, c.EpssPercentile = d.optF64(), d.optF64()
			c.EuvdID, c.JvnID, c.MatchedVia = d.optStr(), d.optStr(), d.optStr()
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errors.New("mmdb spool: trailing bytes")
	}
	return r, d.err
}
