// Package bincodec is the compact binary form the enrich state documents
// and the MMDB writer's spool file share: strings and counts as uvarint
// length + bytes, integers as zig-zag varints, floats as 8 bytes
// little-endian, an optional value behind a 0/1 byte, and the ipmodel
// values both carry (CVE findings and summaries, attributions) in one
// layout. It is for our own files and records, not for other readers.
//
// A Decoder reads from one string, so decoded strings are slices of it
// (one allocation per record, not one per field); its first problem
// sticks and every later read returns a zero value.
package bincodec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/netintel/netintel/internal/ipmodel"
)

// ErrCorrupt reports bytes that are not what an Encoder wrote.
var ErrCorrupt = errors.New("corrupt binary record")

// Encoder appends values to B.
type Encoder struct{ B []byte }

// Int appends n as a zig-zag varint.
func (e *Encoder) Int(n int) { e.B = binary.AppendVarint(e.B, int64(n)) }

// Count appends a collection's length.
func (e *Encoder) Count(n int) { e.B = binary.AppendUvarint(e.B, uint64(n)) }

// Str appends s with its length.
func (e *Encoder) Str(s string) { e.B = append(binary.AppendUvarint(e.B, uint64(len(s))), s...) }

// F64 appends f in 8 bytes.
func (e *Encoder) F64(f float64) { e.B = binary.LittleEndian.AppendUint64(e.B, math.Float64bits(f)) }

// Flag appends set as one byte and returns it.
func (e *Encoder) Flag(set bool) bool {
	if set {
		e.B = append(e.B, 1)
	} else {
		e.B = append(e.B, 0)
	}
	return set
}

// OptStr appends an optional string.
func (e *Encoder) OptStr(p *string) {
	if e.Flag(p != nil) {
		e.Str(*p)
	}
}

// OptF64 appends an optional float.
func (e *Encoder) OptF64(p *float64) {
	if e.Flag(p != nil) {
		e.F64(*p)
	}
}

// Strs appends a list of strings.
func (e *Encoder) Strs(ss []string) {
	e.Count(len(ss))
	for _, s := range ss {
		e.Str(s)
	}
}

// Attribution appends a.
func (e *Encoder) Attribution(a ipmodel.Attribution) {
	e.Str(a.OrgName)
	e.Str(a.SignalSource)
	e.F64(a.SignalConfidence)
	e.Str(a.ObservedAt)
}

// CveSummary appends an optional summary.
func (e *Encoder) CveSummary(s *ipmodel.CveSummary) {
	if !e.Flag(s != nil) {
		return
	}
	e.Int(s.TotalCount)
	e.Int(s.KevCount)
	e.OptF64(s.MaxSeverityScore)
	e.OptStr(s.MaxSeverityRating)
	e.OptStr(s.EolStatus)
	e.OptStr(s.LastComputedAt)
}

// CveFindings appends a list of findings.
func (e *Encoder) CveFindings(fs []ipmodel.CveFinding) {
	e.Count(len(fs))
	for i := range fs {
		f := &fs[i]
		e.Str(f.CveID)
		e.Str(f.DetectionConfidence)
		e.Str(f.Source)
		e.OptF64(f.SeverityScore)
		e.OptStr(f.SeverityRating)
		e.OptStr(f.CvssVersion)
		e.OptStr(f.KevAddedAt)
		e.OptF64(f.EpssScore)
		e.OptF64(f.EpssPercentile)
		e.OptStr(f.EuvdID)
		e.OptStr(f.JvnID)
		e.OptStr(f.MatchedVia)
	}
}

// Decoder reads what an Encoder wrote.
type Decoder struct {
	s   string
	i   int
	err error
	// Optional values point into these, allocated 16 at a time.
	strs []string
	f64s []float64
}

// NewDecoder reads s.
func NewDecoder(s string) *Decoder { return &Decoder{s: s} }

// Err is the first problem met, if any.
func (d *Decoder) Err() error { return d.err }

// End reports the first problem met, or bytes left over once everything
// was read.
func (d *Decoder) End() error {
	if d.err == nil && d.i != len(d.s) {
		d.err = fmt.Errorf("%w: %d bytes left over", ErrCorrupt, len(d.s)-d.i)
	}
	return d.err
}

func (d *Decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: bad %s at byte %d", ErrCorrupt, what, d.i)
	}
	d.i = len(d.s)
}

func (d *Decoder) uvarint() uint64 {
	var x uint64
	for shift := uint(0); d.i < len(d.s) && shift < 64; shift += 7 {
		c := d.s[d.i]
		d.i++
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x
		}
	}
	d.fail("varint")
	return 0
}

// Int reads a zig-zag varint.
func (d *Decoder) Int() int {
	u := d.uvarint()
	return int(int64(u>>1) ^ -int64(u&1))
}

// Count reads a collection's length; every entry takes at least one
// byte, so a count beyond what is left is corrupt (and never allocated).
func (d *Decoder) Count() int {
	n := d.uvarint()
	if n > uint64(len(d.s)-d.i) {
		d.fail("count")
		return 0
	}
	return int(n)
}

// Str reads a string: a slice of the decoder's input.
func (d *Decoder) Str() string {
	n := d.uvarint()
	if n > uint64(len(d.s)-d.i) {
		d.fail("string length")
		return ""
	}
	s := d.s[d.i : d.i+int(n)]
	d.i += int(n)
	return s
}

// F64 reads a float.
func (d *Decoder) F64() float64 {
	if len(d.s)-d.i < 8 {
		d.fail("float")
		return 0
	}
	var v uint64
	for j := 7; j >= 0; j-- {
		v = v<<8 | uint64(d.s[d.i+j])
	}
	d.i += 8
	return math.Float64frombits(v)
}

// Flag reads a 0/1 byte.
func (d *Decoder) Flag() bool {
	if d.i >= len(d.s) || d.s[d.i] > 1 {
		d.fail("flag")
		return false
	}
	d.i++
	return d.s[d.i-1] == 1
}

// OptStr reads an optional string.
func (d *Decoder) OptStr() *string {
	if !d.Flag() {
		return nil
	}
	if len(d.strs) == cap(d.strs) {
		d.strs = make([]string, 0, 16)
	}
	d.strs = append(d.strs, d.Str())
	return &d.strs[len(d.strs)-1]
}

// OptF64 reads an optional float.
func (d *Decoder) OptF64() *float64 {
	if !d.Flag() {
		return nil
	}
	if len(d.f64s) == cap(d.f64s) {
		d.f64s = make([]float64, 0, 16)
	}
	d.f64s = append(d.f64s, d.F64())
	return &d.f64s[len(d.f64s)-1]
}

// Strs reads a list of strings; an empty one is nil.
func (d *Decoder) Strs() []string {
	n := d.Count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.Str()
	}
	return out
}

// Attribution reads an attribution.
func (d *Decoder) Attribution() ipmodel.Attribution {
	return ipmodel.Attribution{OrgName: d.Str(), SignalSource: d.Str(), SignalConfidence: d.F64(), ObservedAt: d.Str()}
}

// CveSummary reads an optional summary.
func (d *Decoder) CveSummary() *ipmodel.CveSummary {
	if !d.Flag() {
		return nil
	}
	return &ipmodel.CveSummary{TotalCount: d.Int(), KevCount: d.Int(), MaxSeverityScore: d.OptF64(),
		MaxSeverityRating: d.OptStr(), EolStatus: d.OptStr(), LastComputedAt: d.OptStr()}
}

// CveFindings reads a list of findings; an empty one is nil.
func (d *Decoder) CveFindings() []ipmodel.CveFinding {
	n := d.Count()
	if n == 0 {
		return nil
	}
	fs := make([]ipmodel.CveFinding, n)
	for i := range fs {
		f := &fs[i]
		f.CveID, f.DetectionConfidence, f.Source = d.Str(), d.Str(), d.Str()
		f.SeverityScore, f.SeverityRating, f.CvssVersion, f.KevAddedAt = d.OptF64(), d.OptStr(), d.OptStr(), d.OptStr()
		f.EpssScore, f.EpssPercentile = d.OptF64(), d.OptF64()
		f.EuvdID, f.JvnID, f.MatchedVia = d.OptStr(), d.OptStr(), d.OptStr()
	}
	return fs
}
