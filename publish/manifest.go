// Package publish writes the daily IP intelligence snapshot (CSV, NDJSON,
// Parquet and MMDB, a manifest.json and SHA256SUMS) into the object store,
// and offers the reader side (Latest, ReadManifest, Download) that the API
// uses to serve it.
//
// Object layout (docs/snapshot.md): every run writes its own build folder,
// named by a build id, and never touches another build's objects:
//
//	snapshots/YYYY-MM-DD/BUILD/ipintel.csv.gz
//	snapshots/YYYY-MM-DD/BUILD/ipintel.ndjson.gz
//	snapshots/YYYY-MM-DD/BUILD/ipintel.parquet
//	snapshots/YYYY-MM-DD/BUILD/ipintel.mmdb
//	snapshots/YYYY-MM-DD/BUILD/ipintel-delta.ndjson.gz   rows changed since delta_base (delta.go)
//	snapshots/YYYY-MM-DD/BUILD/ipintel-delta.parquet
//	snapshots/YYYY-MM-DD/BUILD/SHA256SUMS
//	snapshots/YYYY-MM-DD/BUILD/manifest.json   written after every file above
//	snapshots/latest                           written last: names the date, build and manifest
//
// A snapshot is visible to readers only through snapshots/latest, which is
// written after every file was uploaded and verified and the manifest was
// written, so a reader never sees a half-written snapshot; and since a
// build's objects are written once, the bytes under a manifest always
// match it, even while the same date is published again.
package publish

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
)

// Object keys and names of a snapshot.
const (
	// Prefix is the folder of every snapshot in the object store.
	Prefix = "snapshots/"
	// LatestKey is the pointer to the newest complete snapshot.
	LatestKey = Prefix + "latest"
	// ManifestName is the manifest's file name inside a snapshot folder.
	ManifestName = "manifest.json"
	// SumsName is the checksum list (`sha256sum -c` format) in a snapshot folder.
	SumsName = "SHA256SUMS"
)

// Formats of the data files.
const (
	FormatCSV     = "csv"
	FormatNDJSON  = "ndjson"
	FormatParquet = "parquet"
	FormatMMDB    = "mmdb"
	// FormatNDJSONDelta and FormatParquetDelta are the delta files: the
	// rows that changed since the previous snapshot (docs/snapshot.md).
	FormatNDJSONDelta  = "ndjson-delta"
	FormatParquetDelta = "parquet-delta"
)

// Formats lists every data format in the order they are written.
var Formats = []string{FormatCSV, FormatNDJSON, FormatParquet, FormatMMDB}

// DeltaFormats lists the delta formats; each is written when its full
// format (ndjson, parquet) is, and the NDJSON is (the delta is computed
// while it is written).
var DeltaFormats = []string{FormatNDJSONDelta, FormatParquetDelta}

// File names of the data files inside a snapshot folder.
const (
	FileCSV     = "ipintel.csv.gz"
	FileNDJSON  = "ipintel.ndjson.gz"
	FileParquet = "ipintel.parquet"
	FileMMDB    = "ipintel.mmdb"
	// FileNDJSONDelta and FileParquetDelta are the delta files.
	FileNDJSONDelta  = "ipintel-delta.ndjson.gz"
	FileParquetDelta = "ipintel-delta.parquet"
)

// AudienceFileName returns the data file name of a format in an
// audience's build: the complete (enterprise) build keeps FileName's
// names, the others carry the audience (ipintel-pro.csv.gz,
// ipintel-free.mmdb); "" for an unknown format.
func AudienceFileName(format string, a ipmodel.Audience) string {
	n := FileName(format)
	if n == "" || a == ipmodel.AudienceEnterprise {
		return n
	}
	base, ext, _ := strings.Cut(n, ".")
	return base + "-" + a.String() + "." + ext
}

// FileName returns the data file name of a format, or "" for an unknown one.
func FileName(format string) string {
	switch format {
	case FormatCSV:
		return FileCSV
	case FormatNDJSON:
		return FileNDJSON
	case FormatParquet:
		return FileParquet
	case FormatMMDB:
		return FileMMDB
	case FormatNDJSONDelta:
		return FileNDJSONDelta
	case FormatParquetDelta:
		return FileParquetDelta
	}
	return ""
}

// ContentType returns the HTTP content type of a format's file.
func ContentType(format string) string {
	switch format {
	case FormatCSV, FormatNDJSON, FormatNDJSONDelta:
		return "application/gzip"
	case FormatParquet, FormatParquetDelta:
		return "application/vnd.apache.parquet"
	case FormatMMDB:
		return "application/octet-stream"
	}
	return "application/octet-stream"
}

// DatabaseType is the MMDB metadata database_type, so GeoIP2 readers open
// the file as an Anonymous IP database.
const DatabaseType = "GeoIP2-Anonymous-IP"

// EventSubject is the NATS subject (stream EVENTS) of the event sent after a
// snapshot is published; its payload is an Event in JSON.
const EventSubject = "events.snapshot.published"

// DateFormat is the layout of a snapshot date.
const DateFormat = "2006-01-02"

// ErrNoSnapshot is returned by Latest when nothing has been published yet.
var ErrNoSnapshot = errors.New("no snapshot published yet")

// ErrInvalid marks a pointer or manifest that exists but cannot be used
// (bad JSON, inconsistent keys, another schema major version).
var ErrInvalid = errors.New("invalid snapshot metadata")

// ErrChecksum is returned when an object's bytes do not match the manifest.
var ErrChecksum = errors.New("checksum mismatch")

// File describes one data file of a snapshot.
type File struct {
	// Name is the file name inside the snapshot folder (as in SHA256SUMS).
	Name string `json:"name"`
	// Key is the full object key.
	Key string `json:"key"`
	// Format is csv, ndjson, parquet, mmdb, or a delta format
	// (ndjson-delta, parquet-delta).
	Format string `json:"format"`
	// ContentType is the HTTP content type to serve it with.
	ContentType string `json:"content_type"`
	// Size in bytes.
	Size int64 `json:"size"`
	// Rows is the number of records (for mmdb: records inserted, hosts and
	// ranges; a host inside a range is merged into it, see docs/snapshot.md).
	Rows int64 `json:"rows"`
	// SHA256 is the lower-case hex SHA-256 of the file's bytes.
	SHA256 string `json:"sha256"`
	// Audience names the build the file belongs to (free, pro,
	// enterprise: ipmodel.Audience) and Tiers the plan tiers it is for;
	// each build holds only the data classes its tiers may see. Empty in
	// manifests written before audiences (one complete build).
	Audience string   `json:"audience,omitempty"`
	Tiers    []string `json:"tiers,omitempty"`
	// ContentSHA256 is, for NDJSON files (full and delta), the SHA-256 of
	// the uncompressed lines: what a file rebuilt with `netintel dataset
	// apply` (compressed its own way) is checked against.
	ContentSHA256 string `json:"content_sha256,omitempty"`
	// Ops counts a delta file's rows by operation.
	Ops *DeltaOps `json:"ops,omitempty"`
}

// Manifest describes one complete snapshot.
type Manifest struct {
	// SnapshotDate is the snapshot's date, YYYY-MM-DD (UTC).
	SnapshotDate string `json:"snapshot_date"`
	// BuildID names the run that built it and its folder under the date
	// (NewBuildID); "" for a snapshot of the older layout, whose files sit
	// in the date's folder itself.
	BuildID string `json:"build_id,omitempty"`
	// SchemaVersion is ipmodel.SchemaVersion at build time.
	SchemaVersion string `json:"schema_version"`
	// BuildTime is when the build started, RFC 3339 UTC.
	BuildTime string `json:"build_time"`
	// Key is the manifest's own object key.
	Key string `json:"key"`
	// Hosts and Ranges count the state records the snapshot holds.
	Hosts  int64 `json:"hosts"`
	Ranges int64 `json:"ranges"`
	// Skipped counts state records left out because their address or
	// network did not parse.
	Skipped int64 `json:"skipped"`
	// Files are the data files, in Formats order, each audience's delta
	// files after its full files.
	Files []File `json:"files"`
	// DeltaBase is the snapshot the delta files are against: the newest
	// complete build before this one. Nil when there are no delta files.
	DeltaBase *DeltaBase `json:"delta_base,omitempty"`
	// DeltaNote says why an audience has no delta ("" when each audience
	// with an NDJSON file has one).
	DeltaNote string `json:"delta_note,omitempty"`
	// SumsKey is the object key of SHA256SUMS.
	SumsKey string `json:"sha256sums_key"`
}

// File returns the manifest's file of the given format in the complete
// (enterprise) build.
func (m *Manifest) File(format string) (File, bool) {
	return m.FileFor(format, ipmodel.AudienceEnterprise)
}

// FileFor returns the manifest's file of the given format in audience a's
// build. A manifest written before audiences has only the complete build:
// it is the enterprise one, and the other audiences have none.
func (m *Manifest) FileFor(format string, a ipmodel.Audience) (File, bool) {
	for _, f := range m.Files {
		if f.Format != format {
			continue
		}
		if f.Audience == a.String() || (f.Audience == "" && a == ipmodel.AudienceEnterprise) {
			return f, true
		}
	}
	return File{}, false
}

// Pointer is the content of snapshots/latest.
type Pointer struct {
	SnapshotDate string `json:"snapshot_date"`
	// BuildID is the build of that date that latest names ("" for the
	// older layout without build folders).
	BuildID       string `json:"build_id,omitempty"`
	Manifest      string `json:"manifest"`
	BuildTime     string `json:"build_time"`
	SchemaVersion string `json:"schema_version"`
}

var dateRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// ParseDate checks a snapshot date (YYYY-MM-DD, a real calendar day).
func ParseDate(s string) (time.Time, error) {
	if !dateRe.MatchString(s) {
		return time.Time{}, fmt.Errorf("date %q: want YYYY-MM-DD", s)
	}
	t, err := time.Parse(DateFormat, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("date %q: not a calendar day", s)
	}
	return t, nil
}

// Dir returns the folder (with trailing slash) of a snapshot date, which
// holds one folder per build.
func Dir(date string) string { return Prefix + date + "/" }

// BuildDir returns the folder (with trailing slash) of one build of a
// date; build "" is the date's folder itself (the older layout).
func BuildDir(date, build string) string {
	if build == "" {
		return Dir(date)
	}
	return Dir(date) + build + "/"
}

// Key returns the object key of a file name in a build's folder.
func Key(date, build, name string) string { return BuildDir(date, build) + name }

// ManifestKey returns the object key of a build's manifest.
func ManifestKey(date, build string) string { return Key(date, build, ManifestName) }

// buildIDLayout is the time part of a build id: it sorts as it happened.
const buildIDLayout = "20060102T150405.000Z"

var buildIDRe = regexp.MustCompile(`^\d{8}T\d{6}\.\d{3}Z-[0-9a-f]{8}$`)

// NewBuildID returns a new build id: the start time in UTC to the
// millisecond, then 8 random hex digits (two runs started in the same
// millisecond still get their own folders), e.g. 20261123T030000.000Z-9f86d081.
// Ids of one date sort in the order the builds started.
func NewBuildID(start time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return start.UTC().Format(buildIDLayout) + "-" + hex.EncodeToString(b[:])
}

// ValidBuildID reports whether s is a build id as NewBuildID makes them.
func ValidBuildID(s string) bool { return buildIDRe.MatchString(s) }

// BuildStart returns the start time a build id records (false for "" or
// an invalid id).
func BuildStart(build string) (time.Time, bool) {
	if !ValidBuildID(build) {
		return time.Time{}, false
	}
	t, err := time.Parse(buildIDLayout, build[:len(buildIDLayout)])
	return t, err == nil
}

// ReadPointer reads snapshots/latest. ErrNoSnapshot when absent.
func ReadPointer(ctx context.Context, st objstore.Store) (*Pointer, error) {
	var p Pointer
	if err := readJSON(ctx, st, LatestKey, 1<<16, &p); err != nil {
		if errors.Is(err, objstore.ErrNotFound) {
			return nil, ErrNoSnapshot
		}
		return nil, err
	}
	if _, err := ParseDate(p.SnapshotDate); err != nil {
		return nil, fmt.Errorf("read %s: %w: %w", LatestKey, ErrInvalid, err)
	}
	if p.BuildID != "" && !ValidBuildID(p.BuildID) {
		return nil, fmt.Errorf("read %s: %w: build id %q", LatestKey, ErrInvalid, p.BuildID)
	}
	if p.Manifest != ManifestKey(p.SnapshotDate, p.BuildID) {
		return nil, fmt.Errorf("read %s: %w: manifest key %q does not match date %s build %q", LatestKey, ErrInvalid, p.Manifest, p.SnapshotDate, p.BuildID)
	}
	return &p, nil
}

// Latest returns the manifest of the newest complete snapshot, or
// ErrNoSnapshot when none was published.
func Latest(ctx context.Context, st objstore.Store) (*Manifest, error) {
	p, err := ReadPointer(ctx, st)
	if err != nil {
		return nil, err
	}
	return ReadManifest(ctx, st, p.Manifest)
}

// DateManifest returns the manifest of the newest complete build of date
// (the one a backfill or a later run of that date left last), whether or
// not latest names it; ErrNoSnapshot when the date has no complete build.
func DateManifest(ctx context.Context, st objstore.Store, date string) (*Manifest, error) {
	builds, err := Builds(ctx, st, date)
	if err != nil {
		return nil, err
	}
	if len(builds) == 0 {
		return nil, fmt.Errorf("snapshot %s: %w", date, ErrNoSnapshot)
	}
	return ReadManifest(ctx, st, ManifestKey(date, builds[len(builds)-1]))
}

// Builds lists the complete builds (those with a manifest) of date that
// are still in the store, oldest first; "" stands for a snapshot of the
// older layout and sorts first. ReadManifest(ManifestKey(date, id)) reads
// each: a date's history until superseded builds are pruned.
func Builds(ctx context.Context, st objstore.Store, date string) ([]string, error) {
	if _, err := ParseDate(date); err != nil {
		return nil, err
	}
	objs, err := st.List(ctx, Dir(date))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", Dir(date), err)
	}
	var out []string
	for _, o := range objs {
		_, build, name, ok := splitKey(o.Key)
		if ok && name == ManifestName {
			out = append(out, build)
		}
	}
	slices.Sort(out)
	return out, nil
}

// splitKey splits an object key under Prefix into its date, build ("" in
// the older layout) and file name; ok is false for keys of no snapshot
// (snapshots/latest, foreign files).
func splitKey(key string) (date, build, name string, ok bool) {
	rest, found := strings.CutPrefix(key, Prefix)
	if !found {
		return "", "", "", false
	}
	parts := strings.Split(rest, "/")
	if _, err := ParseDate(parts[0]); err != nil {
		return "", "", "", false
	}
	switch {
	case len(parts) == 2 && parts[1] != "":
		return parts[0], "", parts[1], true
	case len(parts) == 3 && ValidBuildID(parts[1]) && parts[2] != "":
		return parts[0], parts[1], parts[2], true
	}
	return "", "", "", false
}

// ReadManifest reads and checks the manifest at key.
func ReadManifest(ctx context.Context, st objstore.Store, key string) (*Manifest, error) {
	var m Manifest
	if err := readJSON(ctx, st, key, 1<<20, &m); err != nil {
		return nil, err
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("read manifest %s: %w: %w", key, ErrInvalid, err)
	}
	return &m, nil
}

// check verifies the manifest's internal consistency: keys inside its
// date's folder, known formats, hex checksums, a schema of the same major
// version as this code.
func (m *Manifest) check() error {
	if _, err := ParseDate(m.SnapshotDate); err != nil {
		return err
	}
	if major(m.SchemaVersion) != major(ipmodel.SchemaVersion) {
		return fmt.Errorf("schema version %q: this build reads %s", m.SchemaVersion, ipmodel.SchemaVersion)
	}
	if m.BuildID != "" && !ValidBuildID(m.BuildID) {
		return fmt.Errorf("build id %q: not a build id", m.BuildID)
	}
	if m.Key != ManifestKey(m.SnapshotDate, m.BuildID) {
		return fmt.Errorf("key %q does not match date %s build %q", m.Key, m.SnapshotDate, m.BuildID)
	}
	if m.SumsKey != "" && m.SumsKey != Key(m.SnapshotDate, m.BuildID, SumsName) {
		return fmt.Errorf("sha256sums_key %q is not %s", m.SumsKey, Key(m.SnapshotDate, m.BuildID, SumsName))
	}
	for i, f := range m.Files {
		if FileName(f.Format) == "" {
			return fmt.Errorf("files[%d].format: unknown %q", i, f.Format)
		}
		if _, ok := ipmodel.ParseAudience(f.Audience); !ok && f.Audience != "" {
			return fmt.Errorf("files[%d].audience: unknown %q", i, f.Audience)
		}
		if want := Key(m.SnapshotDate, m.BuildID, f.Name); f.Key != want {
			return fmt.Errorf("files[%d].key %q is not %s", i, f.Key, want)
		}
		if b, err := hex.DecodeString(f.SHA256); err != nil || len(b) != sha256.Size {
			return fmt.Errorf("files[%d].sha256: not a SHA-256 hex digest", i)
		}
	}
	return nil
}

func major(v string) string {
	if i := strings.IndexByte(v, '.'); i >= 0 {
		return v[:i]
	}
	return v
}

func readJSON(ctx context.Context, st objstore.Store, key string, limit int64, v any) error {
	rc, _, err := st.Get(ctx, key, nil)
	if err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	if int64(len(b)) > limit {
		return fmt.Errorf("read %s: larger than %d bytes", key, limit)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w: %w", key, ErrInvalid, err)
	}
	return nil
}

// Download copies a snapshot file to w and verifies its size and SHA-256
// against the manifest entry; ErrChecksum on a mismatch (w then holds bad
// bytes: write to a temp file and discard it on error).
func Download(ctx context.Context, st objstore.Store, f File, w io.Writer) error {
	rc, _, err := st.Get(ctx, f.Key, nil)
	if err != nil {
		return fmt.Errorf("download %s: %w", f.Key, err)
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), rc)
	if err != nil {
		return fmt.Errorf("download %s: %w", f.Key, err)
	}
	if n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
		return fmt.Errorf("download %s: %w", f.Key, ErrChecksum)
	}
	return nil
}

// Event is the JSON payload published on EventSubject.
type Event struct {
	SnapshotDate string `json:"snapshot_date"`
	// BuildID is the build published (docs/snapshot.md, object layout).
	BuildID       string `json:"build_id"`
	Manifest      string `json:"manifest"`
	BuildTime     string `json:"build_time"`
	SchemaVersion string `json:"schema_version"`
	// Rows is the number of state records (hosts + ranges) in the snapshot.
	Rows int64 `json:"rows"`
	// Latest is true when snapshots/latest now names this snapshot (false
	// for a backfill of a date older than the latest).
	Latest bool `json:"latest"`
	// Files maps each format to the object key of its complete
	// (enterprise) build.
	Files map[string]string `json:"files"`
}
