package ipapi

import (
	"net/netip"
	"slices"
	"sync/atomic"

	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/publish"
)

// Index answers point lookups on one snapshot. Implementations are
// immutable and safe for concurrent use.
type Index interface {
	// Lookup returns the record that covers addr (a host record, a range
	// record, or both merged), or false when the snapshot knows nothing of
	// it. The returned record belongs to the caller. An error means the
	// snapshot is corrupt at that place. With cves false the assets' Cves
	// may be left empty (the lookup shows them only on request).
	Lookup(addr netip.Addr, cves bool) (*ipmodel.Record, bool, error)
}

// Manifest is what the API tells customers about a snapshot: its date and
// its files. It mirrors the publish package's manifest.json.
type Manifest struct {
	SnapshotDate string `json:"snapshot_date"`
	// BuildID is the build of that date ("" for the older layout without
	// build folders); Key is the manifest's object key.
	BuildID       string         `json:"build_id,omitempty"`
	Key           string         `json:"key,omitempty"`
	SchemaVersion string         `json:"schema_version"`
	BuildTime     string         `json:"build_time"`
	Hosts         int64          `json:"hosts"`
	Ranges        int64          `json:"ranges"`
	Files         []ManifestFile `json:"files"`
	// DeltaBase and DeltaNote are the manifest's (publish.Manifest).
	DeltaBase *publish.DeltaBase `json:"delta_base,omitempty"`
	DeltaNote string             `json:"delta_note,omitempty"`
	// SumsKey is the object key of SHA256SUMS ("" when there is none).
	SumsKey string `json:"sha256sums_key"`
}

// ManifestFile is one data file of a snapshot.
type ManifestFile struct {
	Name        string `json:"name"`
	Key         string `json:"key"`
	Format      string `json:"format"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	Rows        int64  `json:"rows"`
	SHA256      string `json:"sha256"`
	// Audience is the build the file belongs to (free, pro, enterprise).
	Audience string `json:"audience,omitempty"`
	// ContentSHA256 and Ops are the manifest's (publish.File).
	ContentSHA256 string            `json:"content_sha256,omitempty"`
	Ops           *publish.DeltaOps `json:"ops,omitempty"`
}

// Sums renders SHA256SUMS (`sha256sum -c` format) from the manifest's
// files: the bytes the publisher wrote, and never other checksums than the
// ones the data files are served under.
func (m *Manifest) Sums() []byte {
	var b []byte
	for _, f := range m.Files {
		b = append(b, f.SHA256+"  "+f.Name+"\n"...)
	}
	return b
}

// File returns the manifest's file with the given name.
func (m *Manifest) File(name string) (ManifestFile, bool) {
	i := slices.IndexFunc(m.Files, func(f ManifestFile) bool { return f.Name == name })
	if i < 0 {
		return ManifestFile{}, false
	}
	return m.Files[i], true
}

// View is one audience's build of a snapshot: a point index for lookups
// and batch, and a row table for the CSV export. It holds only the data
// classes the audience's tiers may see.
type View struct {
	Index Index
	Rows  *Table
}

// Snapshot is one loaded published snapshot: a View per audience. It
// never changes once built; a newer snapshot replaces it as a whole.
type Snapshot struct {
	Manifest Manifest
	// Views are indexed by ipmodel.Audience. An audience without a view
	// is served an empty one (nothing known), never another's.
	Views [ipmodel.NumAudiences]View
}

// Complete returns the enterprise view: every data class.
func (s *Snapshot) Complete() View { return s.Views[ipmodel.AudienceEnterprise] }

// exportFailed reports whether an export table of the snapshot failed to
// build (the loader then loads the snapshot again).
func (s *Snapshot) exportFailed() bool {
	for _, v := range s.Views {
		if v.Rows != nil && v.Rows.failed() {
			return true
		}
	}
	return false
}

// emptyView is what an audience without a build is served.
var emptyView = View{Index: NewMemIndex(nil), Rows: &Table{}}

// For returns the view tier t is served from: its audience's build.
func (s *Snapshot) For(t Tier) View {
	v := s.Views[t.Audience()]
	if v.Index == nil || v.Rows == nil {
		return emptyView
	}
	return v
}

// current holds the snapshot requests read. Swapping is one atomic store:
// a request that already loaded the old snapshot finishes on it.
type current struct{ p atomic.Pointer[Snapshot] }

func (c *current) load() *Snapshot   { return c.p.Load() }
func (c *current) store(s *Snapshot) { c.p.Store(s) }

// memIndex is an in-memory Index over records, for tests and small data:
// hosts by address, ranges scanned longest prefix first. Like the MMDB, a
// host inside a range carries the range's classifications and sources too.
type memIndex struct {
	hosts  map[netip.Addr]*ipmodel.Record
	ranges []memRange
}

type memRange struct {
	p netip.Prefix
	r *ipmodel.Record
}

// NewMemIndex builds an Index over records (hosts have IP set, ranges
// Network). Records that do not parse are skipped.
func NewMemIndex(records []ipmodel.Record) Index {
	m := &memIndex{hosts: map[netip.Addr]*ipmodel.Record{}}
	for i := range records {
		r := &records[i]
		if r.Network != "" {
			if p, err := netip.ParsePrefix(r.Network); err == nil {
				m.ranges = append(m.ranges, memRange{p.Masked(), r})
			}
			continue
		}
		if a, err := netip.ParseAddr(r.IP); err == nil {
			m.hosts[a.Unmap()] = r
		}
	}
	slices.SortFunc(m.ranges, func(a, b memRange) int { return b.p.Bits() - a.p.Bits() })
	return m
}

func (m *memIndex) Lookup(addr netip.Addr, _ bool) (*ipmodel.Record, bool, error) {
	addr = addr.Unmap()
	var rng *ipmodel.Record
	for _, x := range m.ranges {
		if x.p.Contains(addr) {
			rng = x.r
			break
		}
	}
	h := m.hosts[addr]
	switch {
	case h == nil && rng == nil:
		return nil, false, nil
	case h == nil:
		out := cloneRecord(rng)
		return out, true, nil
	case rng == nil:
		return cloneRecord(h), true, nil
	}
	out := cloneRecord(h)
	for _, c := range rng.Classifications {
		if !out.Has(c) {
			out.Classifications = append(out.Classifications, c)
		}
	}
	out.Classifications = canonicalClasses(out.Classifications)
	if out.Provider == nil {
		out.Provider = rng.Provider
	}
	if out.Country == nil && out.Region == nil && out.City == nil {
		out.Country, out.Region, out.City = rng.Country, rng.Region, rng.City
	}
	for _, s := range rng.Sources {
		if !slices.Contains(out.Sources, s) {
			out.Sources = append(out.Sources, s)
		}
	}
	return out, true, nil
}

func cloneRecord(r *ipmodel.Record) *ipmodel.Record {
	out := *r
	out.Classifications = slices.Clone(r.Classifications)
	out.Sources = slices.Clone(r.Sources)
	out.Assets = make([]ipmodel.Asset, len(r.Assets))
	for i, a := range r.Assets {
		a.EvidenceSources = slices.Clone(a.EvidenceSources)
		a.Attributions = slices.Clone(a.Attributions)
		a.Cves = slices.Clone(a.Cves)
		out.Assets[i] = a
	}
	return &out
}

// canonicalClasses orders classifications as ipmodel.Classes does.
func canonicalClasses(in []string) []string {
	out := in[:0:0]
	for _, c := range ipmodel.Classes {
		if slices.Contains(in, c) {
			out = append(out, c)
		}
	}
	return out
}
