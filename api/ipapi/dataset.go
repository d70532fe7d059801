package ipapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/netintel/netintel/internal/httpx"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/publish"
)

// Dataset formats and the tier each needs; a delta file needs the tier of
// its full format.
var formatTier = map[string]Tier{"csv": tierPro, "ndjson": tierPro, "parquet": tierBulkBinary, "mmdb": tierBulkBinary,
	"ndjson-delta": tierPro, "parquet-delta": tierBulkBinary}

var datasetFormats = []string{"csv", "ndjson", "parquet", "mmdb", "ndjson-delta", "parquet-delta"}

// DefaultLinkPrefix is the customer-facing path prefix that the gateway
// forwards to this backend's /api/v1/... paths.
const DefaultLinkPrefix = "/api/v1/vpn"

// DatasetResponse is the body of GET /api/v1/export/dataset.
type DatasetResponse struct {
	SnapshotDate string `json:"snapshot_date"`
	// BuildID names the build of that date the files come from; a later
	// publish of the same date is another build (docs/snapshot.md).
	BuildID       string        `json:"build_id,omitempty"`
	SchemaVersion string        `json:"schema_version"`
	BuildTime     string        `json:"build_time"`
	Hosts         int64         `json:"hosts"`
	Ranges        int64         `json:"ranges"`
	Files         []DatasetFile `json:"files"`
	// DeltaBase is the snapshot the delta files are against (null when
	// there are none); DeltaNote says why an audience has no delta.
	DeltaBase *publish.DeltaBase `json:"delta_base"`
	DeltaNote string             `json:"delta_note,omitempty"`
	// Checksums is the SHA256SUMS file (`sha256sum -c` format), when published.
	Checksums *DatasetLink `json:"checksums"`
	// Unavailable lists formats the caller's tier does not include.
	Unavailable []UnavailableFormat `json:"unavailable"`
}

// DatasetFile is one downloadable file of the snapshot.
type DatasetFile struct {
	Name        string `json:"name"`
	Format      string `json:"format"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	Rows        int64  `json:"rows"`
	SHA256      string `json:"sha256"`
	// ContentSHA256 (NDJSON files) is the SHA-256 of the uncompressed lines.
	ContentSHA256 string `json:"content_sha256,omitempty"`
	// Ops counts a delta file's rows by operation.
	Ops *publish.DeltaOps `json:"ops,omitempty"`
	DatasetLink
}

// DatasetLink is where to download a file. ExpiresAt is set for presigned
// links straight to the object store; other links go through the API.
type DatasetLink struct {
	URL       string  `json:"url"`
	ExpiresAt *string `json:"url_expires_at"`
}

// UnavailableFormat names a format and the tier that includes it.
type UnavailableFormat struct {
	Format       string `json:"format"`
	RequiredTier string `json:"required_tier"`
}

// dataset is GET /api/v1/export/dataset[?format=...].
func (s *Service) dataset(w http.ResponseWriter, r *http.Request, tier Tier) error {
	q := query{v: r.URL.Query()}
	only := q.enum("format", datasetFormats)
	if tier < tierPro {
		return tierError("the dataset feed", tierPro)
	}
	if only != "" && tier < formatTier[only] {
		return tierError("the "+only+" dataset", formatTier[only])
	}
	if err := q.errs.err(); err != nil {
		return err
	}
	snap, err := s.snapshot()
	if err != nil {
		return err
	}
	m := &snap.Manifest
	out := DatasetResponse{SnapshotDate: m.SnapshotDate, BuildID: m.BuildID, SchemaVersion: m.SchemaVersion, BuildTime: m.BuildTime,
		Hosts: m.Hosts, Ranges: m.Ranges, Files: []DatasetFile{}, Unavailable: []UnavailableFormat{}, DeltaBase: m.DeltaBase, DeltaNote: m.DeltaNote}
	for _, f := range m.Files {
		// Each tier is offered its audience's build alone.
		if only != "" && f.Format != only || fileAudience(f) != tier.Audience() {
			continue
		}
		need, known := formatTier[f.Format]
		if !known {
			continue
		}
		if tier < need {
			out.Unavailable = append(out.Unavailable, UnavailableFormat{Format: f.Format, RequiredTier: need.String()})
			continue
		}
		link, err := s.link(r.Context(), m, f.Name, f.Key)
		if err != nil {
			s.log.Error("dataset link", "key", f.Key, "err", err)
			return errStoreUnreachable
		}
		out.Files = append(out.Files, DatasetFile{Name: f.Name, Format: f.Format, ContentType: f.ContentType, Size: f.Size, Rows: f.Rows, SHA256: f.SHA256,
			ContentSHA256: f.ContentSHA256, Ops: f.Ops, DatasetLink: link})
	}
	if m.SumsKey != "" {
		if link, err := s.link(r.Context(), m, sumsName, m.SumsKey); err == nil {
			out.Checksums = &link
		}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

const sumsName = "SHA256SUMS"

// link presigns key when the store can, else points at the download route
// of m's build.
func (s *Service) link(ctx context.Context, m *Manifest, name, key string) (DatasetLink, error) {
	if s.opts.Store != nil {
		u, err := s.opts.Store.PresignGet(ctx, key, s.opts.PresignTTL, name)
		switch {
		case err == nil:
			exp := time.Now().Add(s.opts.PresignTTL).UTC().Format(time.RFC3339)
			return DatasetLink{URL: u, ExpiresAt: &exp}, nil
		case !errors.Is(err, objstore.ErrNotSupported):
			return DatasetLink{}, err
		}
	}
	u := strings.TrimRight(s.opts.PublicURL, "/") + s.linkPrefix() + "/export/dataset/files/" + m.SnapshotDate + "/" + name
	if m.BuildID != "" {
		u += "?build=" + url.QueryEscape(m.BuildID)
	}
	return DatasetLink{URL: u}, nil
}

// linkPrefix is the customer path prefix of this backend's /api/v1 routes
// (Options.LinkPrefix): links and messages that send a customer to
// another route name the path the customer calls.
func (s *Service) linkPrefix() string {
	if s.opts.LinkPrefix == "" {
		return DefaultLinkPrefix
	}
	return s.opts.LinkPrefix
}

// fileAudience returns the audience whose build a snapshot file belongs
// to. A file of a manifest written before audiences (no audience) is the
// complete build: enterprise's. The dataset feed offers each tier its
// audience's build alone; a download may also fetch a lower build (a
// subset of what the tier sees).
func fileAudience(f ManifestFile) ipmodel.Audience {
	if a, ok := ipmodel.ParseAudience(f.Audience); ok {
		return a
	}
	return ipmodel.AudienceEnterprise
}

var dateRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// download is GET /api/v1/export/dataset/files/{date}/{name}[?build=ID]: a
// file of the current snapshot's manifest streamed from the object store,
// with ETag (the file's SHA-256 in the manifest), If-None-Match, Range and
// If-Range; SHA256SUMS is rendered from the same manifest. A link of
// another build (the date published again since) is 404. It streams, so it
// stays a plain handler: the failures before the first byte are answered
// by httpx.Fail.
func (s *Service) download(w http.ResponseWriter, r *http.Request, tier Tier) {
	date, name := r.PathValue("date"), r.PathValue("name")
	snap, f, err := s.downloadFile(r, date, name, tier)
	if err != nil {
		httpx.Fail(s.log, w, r, err)
		return
	}
	if f == nil { // SHA256SUMS, rendered from the manifest
		s.serveSums(w, r, &snap.Manifest)
		return
	}
	key, etag, ctype := f.Key, `"`+f.SHA256+`"`, f.ContentType
	st := s.opts.Store
	info, err := st.Stat(r.Context(), key)
	if err == nil && info.Size != f.Size {
		// Only a snapshot of the older layout, whose date was published
		// again in place, can get here: never serve bytes under a
		// checksum they do not have.
		s.log.Error("object does not match its manifest", "key", key, "size", info.Size, "want", f.Size)
		err = unavailable("the snapshot is being replaced; fetch " + PathDataset + " again shortly")
	}
	if err != nil {
		httpx.Fail(s.log, w, r, s.storeError(key, err))
		return
	}
	h := w.Header()
	h.Set("Accept-Ranges", "bytes")
	h.Set("Content-Type", ctype)
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	h.Set("ETag", etag)
	// A file is written once and never changed under its key: the object's
	// time is its Last-Modified (the build's time when the store has none).
	mod := info.ModTime
	if mod.IsZero() {
		mod = snap.buildTime()
	}
	setLastModified(h, mod)
	if notModified(r, etag, mod) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	var rng *objstore.Range
	status := http.StatusOK
	length := info.Size
	if rh := r.Header.Get("Range"); rh != "" && (r.Header.Get("If-Range") == "" || r.Header.Get("If-Range") == etag) {
		start, end, ok, satisfiable := parseRange(rh, info.Size)
		if ok && !satisfiable {
			h.Set("Content-Range", "bytes */"+strconv.FormatInt(info.Size, 10))
			httpx.Write(w, &httpx.Error{Status: http.StatusRequestedRangeNotSatisfiable, Code: "range_not_satisfiable",
				Message: "the range is outside the file's " + strconv.FormatInt(info.Size, 10) + " bytes"})
			return
		}
		if ok {
			rng = &objstore.Range{Start: start, End: end}
			status = http.StatusPartialContent
			length = end - start + 1
			h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end, info.Size))
		}
	}
	rc, _, err := st.Get(r.Context(), key, rng)
	if err != nil {
		httpx.Fail(s.log, w, r, s.storeError(key, err))
		return
	}
	defer rc.Close()
	h.Set("Content-Length", strconv.FormatInt(length, 10))
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(w, rc); err != nil {
		s.log.Debug("download stopped", "key", key, "err", err)
	}
}

// downloadFile finds the file name of the current snapshot that tier may
// download, or returns the failure to answer (403, 404, 503). A nil file
// with no error is SHA256SUMS, which comes from the manifest.
func (s *Service) downloadFile(r *http.Request, date, name string, tier Tier) (*Snapshot, *ManifestFile, error) {
	if tier < tierPro {
		return nil, nil, tierError("the dataset feed", tierPro)
	}
	snap, err := s.snapshot()
	if err != nil {
		return nil, nil, err
	}
	m := &snap.Manifest
	if b := r.URL.Query().Get("build"); b != "" && date == m.SnapshotDate && b != m.BuildID {
		return nil, nil, notFound("build " + strconv.Quote(truncate(b, 40)) + " of " + m.SnapshotDate + " is not the current one (" + m.BuildID + "); fetch " + PathDataset + " again")
	}
	if f, found := m.File(name); found && date == m.SnapshotDate {
		if fa := fileAudience(f); fa > tier.Audience() {
			// A file of a build above the tier's: another audience's data.
			return nil, nil, tierError("the file "+f.Name, ParseTier(fa.String()))
		}
		if need := formatTier[f.Format]; tier < need {
			return nil, nil, tierError("the "+f.Format+" dataset", need)
		}
		if s.opts.Store == nil {
			return nil, nil, unavailable("no object store configured")
		}
		return snap, &f, nil
	}
	if name == sumsName && date == m.SnapshotDate && m.SumsKey != "" {
		return snap, nil, nil
	}
	msg := "no file " + strconv.Quote(truncate(name, 64)) + " in the current snapshot (" + m.SnapshotDate + ")"
	if !dateRe.MatchString(date) || date != m.SnapshotDate {
		msg = "snapshot " + strconv.Quote(truncate(date, 16)) + " is not the current one (" + m.SnapshotDate + "); fetch " + s.linkPrefix() + "/export/dataset again"
	}
	return nil, nil, notFound(msg)
}

// serveSums answers SHA256SUMS from the manifest, ETag its SHA-256. It is
// a few hundred bytes: Range is not offered.
func (s *Service) serveSums(w http.ResponseWriter, r *http.Request, m *Manifest) {
	b := m.Sums()
	sum := sha256.Sum256(b)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="`+sumsName+`"`)
	h.Set("ETag", etag)
	mod, _ := time.Parse(time.RFC3339, m.BuildTime)
	setLastModified(h, mod)
	if notModified(r, etag, mod) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// storeError is the answer to an object store failure on key: 404 for a
// file gone from the store, else 503 (logged). An *httpx.Error passes.
func (s *Service) storeError(key string, err error) error {
	var e *httpx.Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, objstore.ErrNotFound):
		return errFileNotInStore
	}
	s.log.Error("object store", "key", key, "err", err)
	return errStoreUnreachable
}

// setLastModified sets Last-Modified to mod in HTTP date form (none for
// the zero time).
func setLastModified(h http.Header, mod time.Time) {
	if !mod.IsZero() {
		h.Set("Last-Modified", mod.UTC().Format(http.TimeFormat))
	}
}

// notModified applies RFC 9110's conditional GET: If-None-Match when sent
// (it takes precedence), else If-Modified-Since against mod, at the
// second precision of HTTP dates (curl -z, wget -N). An unparseable date
// is ignored.
func notModified(r *http.Request, etag string, mod time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		return etagMatch(inm, etag)
	}
	ims := r.Header.Get("If-Modified-Since")
	if ims == "" || mod.IsZero() {
		return false
	}
	t, err := http.ParseTime(ims)
	if err != nil {
		return false
	}
	return !mod.Truncate(time.Second).After(t)
}

// etagMatch applies If-None-Match's weak comparison to a list of tags.
func etagMatch(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == strings.TrimPrefix(etag, "W/") {
			return true
		}
	}
	return false
}

// parseRange reads a single "bytes=a-b", "bytes=a-" or "bytes=-n" range.
// ok is false for anything else (multiple ranges, other units, syntax):
// the whole file is then served, as RFC 9110 allows. satisfiable is false
// when the range lies outside the file.
func parseRange(h string, size int64) (start, end int64, ok, satisfiable bool) {
	spec, found := strings.CutPrefix(h, "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false, false
	}
	a, b, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, 0, false, false
	}
	if a == "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, false, false
		}
		if n == 0 || size == 0 {
			return 0, 0, true, false
		}
		n = min(n, size)
		return size - n, size - 1, true, true
	}
	s, err := strconv.ParseInt(a, 10, 64)
	if err != nil || s < 0 {
		return 0, 0, false, false
	}
	e := size - 1
	if b != "" {
		if e, err = strconv.ParseInt(b, 10, 64); err != nil || e < s {
			return 0, 0, false, false
		}
		e = min(e, size-1)
	}
	if s >= size {
		return 0, 0, true, false
	}
	return s, e, true, true
}
