package publish

import (
	"errors"
	"fmt"

	"github.com/netintel/netintel/internal/bincodec"
	"github.com/netintel/netintel/internal/ipmodel"
)

// The MMDB writer spools records to a temp file between its two passes in
// internal/bincodec's compact binary form (several times faster to decode
// than JSON). Lists decode as nil when empty; the MMDB writes nil and
// empty alike.

var errSpool = errors.New("mmdb spool: truncated record")

// appendRecord appends the spool form of r to b.
func appendRecord(b []byte, r *ipmodel.Record) []byte {
	e := bincodec.Encoder{B: b}
	e.Str(r.IP)
	e.Str(r.Network)
	e.Strs(r.Classifications)
	e.OptStr(r.Provider)
	e.F64(r.Confidence)
	e.Str(r.FirstSeen)
	e.Str(r.LastSeen)
	e.Strs(r.Sources)
	e.Count(len(r.Assets))
	for i := range r.Assets {
		a := &r.Assets[i]
		e.Int(a.Port)
		e.Str(a.ProtocolFamily)
		e.OptStr(a.Vendor)
		e.OptStr(a.Product)
		e.OptStr(a.VersionBand)
		e.OptStr(a.VersionPrecision)
		e.OptStr(a.ExactVersion)
		e.Str(a.ConfidenceBand)
		e.Strs(a.EvidenceSources)
		e.Str(a.FirstSeen)
		e.Str(a.LastSeen)
		e.Count(len(a.Attributions))
		for _, at := range a.Attributions {
			e.Attribution(at)
		}
		e.CveSummary(a.CveSummary)
		e.CveFindings(a.Cves)
	}
	e.Int(int(r.ASN))
	e.Count(len(r.Attributions))
	for _, at := range r.Attributions {
		e.Attribution(at)
	}
	e.OptStr(r.Country)
	e.OptStr(r.Region)
	e.OptStr(r.City)
	return e.B
}

// decodeRecord reads a record written by appendRecord.
func decodeRecord(b []byte) (ipmodel.Record, error) {
	d := bincodec.NewDecoder(string(b))
	r := ipmodel.Record{IP: d.Str(), Network: d.Str(), Classifications: d.Strs(), Provider: d.OptStr(),
		Confidence: d.F64(), FirstSeen: d.Str(), LastSeen: d.Str(), Sources: d.Strs()}
	if n := d.Count(); n > 0 {
		r.Assets = make([]ipmodel.Asset, n)
	}
	for i := range r.Assets {
		a := &r.Assets[i]
		a.Port = d.Int()
		a.ProtocolFamily = d.Str()
		a.Vendor, a.Product = d.OptStr(), d.OptStr()
		a.VersionBand, a.VersionPrecision, a.ExactVersion = d.OptStr(), d.OptStr(), d.OptStr()
		a.ConfidenceBand = d.Str()
		a.EvidenceSources = d.Strs()
		a.FirstSeen, a.LastSeen = d.Str(), d.Str()
		if n := d.Count(); n > 0 {
			a.Attributions = make([]ipmodel.Attribution, n)
		}
		for k := range a.Attributions {
			a.Attributions[k] = d.Attribution()
		}
		a.CveSummary = d.CveSummary()
		a.Cves = d.CveFindings()
	}
	r.ASN = uint32(d.Int())
	if n := d.Count(); n > 0 {
		r.Attributions = make([]ipmodel.Attribution, n)
	}
	for k := range r.Attributions {
		r.Attributions[k] = d.Attribution()
	}
	r.Country, r.Region, r.City = d.OptStr(), d.OptStr(), d.OptStr()
	if err := d.End(); err != nil {
		return r, fmt.Errorf("%w: %v", errSpool, err)
	}
	return r, nil
}
