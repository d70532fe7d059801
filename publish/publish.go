package publish

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
)

// ErrNoState is returned by Run when there is no state to publish.
var ErrNoState = errors.New("no IP intelligence state to publish (is the enrich module wired in?)")

// Publisher builds and publishes snapshots. It holds no snapshot data
// between runs; one Run at a time per store is expected (the scheduler
// fires a job once per tick across copies).
type Publisher struct {
	cfg   config.Publish
	store objstore.Store
	js    jetstream.JetStream
	log   *slog.Logger
	// Now is the clock (build time, default date); tests replace it.
	Now func() time.Time
}

// New returns a publisher writing to store and announcing snapshots on js
// (nil: no event). cfg.WorkDir must be set or empty (system temp folder).
func New(cfg config.Publish, store objstore.Store, js jetstream.JetStream, log *slog.Logger) *Publisher {
	return &Publisher{cfg: cfg, store: store, js: js, log: log.With("stage", "publish"), Now: time.Now}
}

// Result is what Run did.
type Result struct {
	Manifest *Manifest
	// Latest is true when snapshots/latest now names this snapshot (false
	// for a date older than the one already latest: a backfill).
	Latest bool
	// Pruned are the dates deleted to keep cfg.Keep snapshots.
	Pruned []string
	// PrunedBuilds are the builds deleted from dates that stay: superseded
	// ones past cfg.SupersededGrace and those of runs that never finished,
	// as "YYYY-MM-DD/BUILD" ("YYYY-MM-DD/" for the older layout's files).
	PrunedBuilds []string
}

// Run builds the snapshot of state for date (YYYY-MM-DD; "" = today in
// UTC) and publishes it into a build folder of its own (a new build id):
// data files and SHA256SUMS (each verified by reading it back), then
// manifest.json, then snapshots/latest, then the event; then it deletes
// snapshots beyond cfg.Keep and superseded builds. Running a date again
// publishes a new build of that date and moves latest to it only once
// it is complete; a failed run leaves the previous latest, and every
// object it names, untouched.
func (p *Publisher) Run(ctx context.Context, state ipmodel.State, date string) (res *Result, err error) {
	if state == nil {
		return nil, ErrNoState
	}
	now := p.Now().UTC()
	start := now.Truncate(time.Second)
	if date == "" {
		date = start.Format(DateFormat)
	}
	if _, err := ParseDate(date); err != nil {
		return nil, err
	}
	// The run's time limit is a cancellation, not a deadline, so that each
	// NATS request in it keeps its own timeout (see bus.RunContext).
	ctx, cancel := bus.RunContext(ctx, p.cfg.Timeout)
	defer cancel()
	defer func() { err = bus.RunErr(ctx, err) }()
	build := NewBuildID(now)
	log := p.log.With("date", date, "build", build)
	p.sweepWorkDirs(log)
	dir, release, err := newWorkDir(p.cfg.WorkDir, date)
	if err != nil {
		return nil, err
	}
	defer release()

	m := &Manifest{SnapshotDate: date, BuildID: build, SchemaVersion: ipmodel.SchemaVersion, BuildTime: ipmodel.FormatTime(start),
		Key: ManifestKey(date, build), SumsKey: Key(date, build, SumsName)}
	bo := BuildOptions{Formats: p.cfg.Formats, BuildTime: start, RowGroupRows: p.cfg.ParquetRowGroupRows, ParquetCompression: p.cfg.ParquetCompression}
	if p.cfg.Delta && slices.Contains(p.cfg.Formats, FormatNDJSON) {
		bo.DeltaBase, bo.DeltaSources, bo.DeltaNote, err = p.deltaBase(ctx, date, build)
		if err != nil {
			return nil, err
		}
	}
	files, err := Build(ctx, state, dir, bo, m)
	if err != nil {
		return nil, err
	}
	if m.DeltaNote != "" {
		log.Info("snapshot delta", "note", m.DeltaNote)
	}
	log.Info("snapshot built", "hosts", m.Hosts, "ranges", m.Ranges, "skipped", m.Skipped, "took", time.Since(start).Round(time.Millisecond))

	for _, f := range files {
		path := filepath.Join(dir, f.Name)
		if err := p.upload(ctx, f.Key, f.ContentType, f.SHA256, f.Size, fileSource(path)); err != nil {
			return nil, err
		}
		// Uploaded and read back: the work copy is not needed any more,
		// so the work folder holds the snapshot once, not once more per
		// file uploaded (a store on the same disk, or a full disk).
		if err := os.Remove(path); err != nil {
			log.Warn("work file not removed", "file", f.Name, "err", err)
		}
	}
	m.Files = files
	sums := SumsFile(files)
	if err := p.uploadBytes(ctx, m.SumsKey, "text/plain; charset=utf-8", sums); err != nil {
		return nil, err
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	if err := p.uploadBytes(ctx, m.Key, "application/json", append(mb, '\n')); err != nil {
		return nil, err
	}

	res = &Result{Manifest: m}
	cur, err := ReadPointer(ctx, p.store)
	switch {
	case errors.Is(err, ErrNoSnapshot):
	case errors.Is(err, ErrInvalid):
		// A corrupt pointer is replaced rather than blocking every future
		// snapshot.
		log.Warn("latest pointer invalid, replacing it", "err", err)
		cur = nil
	case err != nil:
		return nil, fmt.Errorf("read latest pointer: %w", err)
	}
	if cur == nil || cur.SnapshotDate <= date {
		pb, _ := json.Marshal(Pointer{SnapshotDate: date, BuildID: build, Manifest: m.Key, BuildTime: m.BuildTime, SchemaVersion: m.SchemaVersion})
		if err := p.uploadBytes(ctx, LatestKey, "application/json", append(pb, '\n')); err != nil {
			return nil, err
		}
		res.Latest = true
	} else {
		log.Info("older than latest: published without moving latest", "latest", cur.SnapshotDate)
	}
	log.Info("snapshot published", "manifest", m.Key, "latest", res.Latest)

	p.announce(ctx, m, res.Latest)
	res.Pruned, res.PrunedBuilds, err = p.prune(ctx, date, build)
	if err != nil {
		return res, err
	}
	return res, nil
}

// deltaBase finds the snapshot the delta of (date, build) is against: the
// newest complete build before it in (date, build id) order, the same
// date's earlier builds included; and its NDJSON file of each audience.
// No earlier snapshot is no delta (a note says so), not an error; a store
// that cannot be listed is an error.
func (p *Publisher) deltaBase(ctx context.Context, date, build string) (*DeltaBase, map[ipmodel.Audience]DeltaSource, string, error) {
	objs, err := p.store.List(ctx, Prefix)
	if err != nil {
		return nil, nil, "", fmt.Errorf("find delta base: list: %w", err)
	}
	var bestDate, bestBuild string
	found := false
	for _, o := range objs {
		d, b, name, ok := splitKey(o.Key)
		if !ok || name != ManifestName {
			continue
		}
		if d > date || (d == date && b >= build) {
			continue
		}
		if !found || d > bestDate || (d == bestDate && b > bestBuild) {
			bestDate, bestBuild, found = d, b, true
		}
	}
	if !found {
		return nil, nil, "no earlier snapshot: no delta", nil
	}
	bm, err := ReadManifest(ctx, p.store, ManifestKey(bestDate, bestBuild))
	if err != nil {
		// A manifest that cannot be read (another schema major version,
		// damaged) gives no delta; the snapshot itself is still published.
		return nil, nil, "previous snapshot " + snapshotName(bestDate, bestBuild) + " unreadable: no delta", nil
	}
	base := &DeltaBase{SnapshotDate: bm.SnapshotDate, BuildID: bm.BuildID, Manifest: bm.Key}
	if t0, err := ParseDate(bm.SnapshotDate); err == nil {
		if t1, err := ParseDate(date); err == nil {
			base.GapDays = max(int(t1.Sub(t0).Hours()/24)-1, 0)
		}
	}
	srcs := map[ipmodel.Audience]DeltaSource{}
	var missing []string
	for _, a := range ipmodel.Audiences {
		if a == ipmodel.AudienceFree {
			continue // no tabular files
		}
		f, ok := bm.FileFor(FormatNDJSON, a)
		if !ok {
			missing = append(missing, a.String())
			continue
		}
		srcs[a] = DeltaSource{File: f, Open: func(ctx context.Context) (io.ReadCloser, error) {
			rc, _, err := p.store.Get(ctx, f.Key, nil)
			return rc, err
		}}
	}
	note := ""
	if len(missing) > 0 {
		note = "previous snapshot " + snapshotName(bm.SnapshotDate, bm.BuildID) + " has no NDJSON for " + strings.Join(missing, ", ") + ": no delta for it"
	}
	return base, srcs, note, nil
}

// announce sends the event. A failure is logged, not returned: the
// snapshot is published, and readers also find it through snapshots/latest.
func (p *Publisher) announce(ctx context.Context, m *Manifest, latest bool) {
	if p.js == nil {
		return
	}
	ev := Event{SnapshotDate: m.SnapshotDate, BuildID: m.BuildID, Manifest: m.Key, BuildTime: m.BuildTime, SchemaVersion: m.SchemaVersion, Rows: m.Hosts + m.Ranges, Latest: latest, Files: map[string]string{}}
	for _, f := range m.Files {
		if f.Audience == ipmodel.AudienceEnterprise.String() {
			ev.Files[f.Format] = f.Key
		}
	}
	b, _ := json.Marshal(ev)
	if _, err := p.js.Publish(ctx, EventSubject, b, jetstream.WithMsgID("snapshot-"+m.SnapshotDate+"-"+m.BuildID)); err != nil {
		p.log.Warn("snapshot event not sent", "subject", EventSubject, "err", err)
	}
}

// SumsFile renders SHA256SUMS in the format `sha256sum -c` reads.
func SumsFile(files []File) []byte {
	var b bytes.Buffer
	for _, f := range files {
		fmt.Fprintf(&b, "%s  %s\n", f.SHA256, f.Name)
	}
	return b.Bytes()
}

type source func() (io.ReadCloser, error)

func fileSource(path string) source {
	return func() (io.ReadCloser, error) { return os.Open(path) }
}

func (p *Publisher) uploadBytes(ctx context.Context, key, ctype string, b []byte) error {
	sum := sha256.Sum256(b)
	return p.upload(ctx, key, ctype, hex.EncodeToString(sum[:]), int64(len(b)), func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	})
}

// upload puts an object and reads it back to verify its SHA-256, retrying
// (with doubling backoff) on a failed put, a failed read or a mismatch.
func (p *Publisher) upload(ctx context.Context, key, ctype, sum string, size int64, src source) error {
	attempts := max(p.cfg.UploadAttempts, 1)
	backoff := p.cfg.RetryBackoff
	var last error
	for a := 1; a <= attempts; a++ {
		if a > 1 {
			p.log.Warn("upload failed, retrying", "key", key, "attempt", a, "err", last)
			select {
			case <-ctx.Done():
				return fmt.Errorf("upload %s: %w (last error: %w)", key, ctx.Err(), last)
			case <-time.After(backoff):
			}
			backoff *= 2
		}
		last = p.uploadOnce(ctx, key, ctype, sum, size, src)
		if last == nil {
			return nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("upload %s: gave up after %d attempts: %w", key, attempts, last)
}

func (p *Publisher) uploadOnce(ctx context.Context, key, ctype, sum string, size int64, src source) error {
	r, err := src()
	if err != nil {
		return err
	}
	_, err = p.store.Put(ctx, key, r, size, ctype)
	r.Close()
	if err != nil {
		return err
	}
	rc, info, err := p.store.Get(ctx, key, nil)
	if err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(h, rc)
	if err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != size || got != sum {
		return fmt.Errorf("read back: %w: %d bytes sha256 %s, want %d bytes %s (stat size %d)", ErrChecksum, n, got[:12], size, sum[:12], info.Size)
	}
	return nil
}

// snapshotBuild is one build folder found in the store.
type snapshotBuild struct {
	id       string
	keys     []string
	complete bool // has its manifest
}

// deleteKeys deletes keys, manifests first, so that a half-deleted build
// is never taken for a complete one.
func (p *Publisher) deleteKeys(ctx context.Context, keys []string) error {
	slices.SortFunc(keys, func(a, b string) int {
		am, bm := strings.HasSuffix(a, "/"+ManifestName), strings.HasSuffix(b, "/"+ManifestName)
		switch {
		case am && !bm:
			return -1
		case bm && !am:
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		if err := p.store.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// prune deletes the snapshot dates beyond the newest cfg.Keep complete
// dates (those with a complete build), never the one just published nor
// the one latest names. A date without a complete build (runs that failed
// or crashed before their manifest) does not count towards cfg.Keep; it
// is deleted once it is older than the oldest kept snapshot.
//
// In the dates it keeps, it deletes the builds nobody needs any more:
// a complete build once the next newer complete build of its date is
// older than cfg.SupersededGrace, and a build without a manifest once it
// started longer than cfg.Timeout ago (no run lasts longer). The newest
// complete build of each date, the build latest names and the one just
// published are never deleted.
func (p *Publisher) prune(ctx context.Context, published, publishedBuild string) (dates, builds []string, err error) {
	keep := max(p.cfg.Keep, 1)
	objs, err := p.store.List(ctx, Prefix)
	if err != nil {
		return nil, nil, fmt.Errorf("prune: list: %w", err)
	}
	byDate := map[string]map[string]*snapshotBuild{}
	for _, o := range objs {
		d, b, name, ok := splitKey(o.Key)
		if !ok {
			continue
		}
		if byDate[d] == nil {
			byDate[d] = map[string]*snapshotBuild{}
		}
		sb := byDate[d][b]
		if sb == nil {
			sb = &snapshotBuild{id: b}
			byDate[d][b] = sb
		}
		sb.keys = append(sb.keys, o.Key)
		sb.complete = sb.complete || name == ManifestName
	}
	order := make([]string, 0, len(byDate))
	for d := range byDate {
		order = append(order, d)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(order)))
	var latest Pointer
	if ptr, err := ReadPointer(ctx, p.store); err == nil {
		latest = *ptr
	}
	now := p.Now().UTC()
	kept := 0
	for _, d := range order {
		complete := false
		for _, b := range byDate[d] {
			complete = complete || b.complete
		}
		keepDate := d == published || d == latest.SnapshotDate || kept < keep
		if keepDate && (complete || d == published || d == latest.SnapshotDate) {
			kept++
		}
		if keepDate {
			pruned, err := p.pruneBuilds(ctx, d, byDate[d], now, latest, published, publishedBuild)
			builds = append(builds, pruned...)
			if err != nil {
				return dates, builds, err
			}
			continue
		}
		var keys []string
		for _, b := range byDate[d] {
			keys = append(keys, b.keys...)
		}
		if err := p.deleteKeys(ctx, keys); err != nil {
			return dates, builds, fmt.Errorf("prune %s: %w", d, err)
		}
		p.log.Info("snapshot pruned", "date", d)
		dates = append(dates, d)
	}
	return dates, builds, nil
}

// pruneBuilds deletes the superseded and abandoned builds of a kept date.
func (p *Publisher) pruneBuilds(ctx context.Context, date string, builds map[string]*snapshotBuild, now time.Time, latest Pointer, published, publishedBuild string) ([]string, error) {
	ids := make([]string, 0, len(builds))
	for id := range builds {
		ids = append(ids, id)
	}
	slices.Sort(ids) // build ids sort by start time; the older layout's "" first
	newest := ""
	for _, id := range ids {
		if builds[id].complete {
			newest = id
		}
	}
	var pruned []string
	for i, id := range ids {
		b := builds[id]
		switch {
		case b.complete && id == newest,
			date == latest.SnapshotDate && id == latest.BuildID,
			date == published && id == publishedBuild:
			continue
		}
		if b.complete {
			// Superseded since the next complete build of the date started.
			var next string
			for _, n := range ids[i+1:] {
				if builds[n].complete {
					next = n
					break
				}
			}
			since, ok := BuildStart(next)
			if !ok || now.Sub(since) < p.cfg.SupersededGrace {
				continue
			}
		} else if started, ok := BuildStart(id); ok && now.Sub(started) < p.cfg.Timeout {
			continue // possibly a run still going
		}
		if err := p.deleteKeys(ctx, b.keys); err != nil {
			return pruned, fmt.Errorf("prune %s: %w", BuildDir(date, id), err)
		}
		name := date + "/" + id
		p.log.Info("snapshot build pruned", "date", date, "build", id, "complete", b.complete)
		pruned = append(pruned, name)
	}
	return pruned, nil
}

// BuildOptions selects what Build writes.
type BuildOptions struct {
	// Formats to write (default all).
	Formats []string
	// BuildTime is the MMDB build epoch.
	BuildTime time.Time
	// RowGroupRows per Parquet row group (default 65536).
	RowGroupRows int
	// ParquetCompression: zstd (default), snappy, gzip or none.
	ParquetCompression string
	// DeltaBase names the previous snapshot and DeltaSources its NDJSON
	// per audience: each audience with a source gets delta files
	// (ndjson-delta, and parquet-delta when Parquet is written). Nil: no
	// delta.
	DeltaBase    *DeltaBase
	DeltaSources map[ipmodel.Audience]DeltaSource
	// DeltaNote is why some audience has no source (into the manifest).
	DeltaNote string

	// unsorted writes the NDJSON in the state's order and no delta: the
	// build as it was before deltas (the benchmark's baseline).
	unsorted bool

	// sortBuf is the NDJSON sort buffer in bytes (0: sortBufBytes; tests
	// spill runs with a small one).
	sortBuf int

	// noMirror builds every audience's files on their own even when
	// they are the same (tests: the mirrors' reference).
	noMirror bool

	// newMMDB replaces the MMDB writer (tests and benchmarks: the
	// mmdbwriter reference); its trees live in memory, so Build then
	// writes the lower audiences' MMDBs in a second pass.
	newMMDB func(w io.Writer, dir string, buildTime time.Time) (formatWriter, error)
}

// hashFile counts and hashes what is written to a file.
type hashFile struct {
	f  *os.File
	bw *bufio.Writer
	h  hash.Hash
	n  int64
}

func (h *hashFile) Write(b []byte) (int, error) {
	n, err := h.bw.Write(b)
	h.h.Write(b[:n])
	h.n += int64(n)
	return n, err
}

func (h *hashFile) Close() error {
	if err := h.bw.Flush(); err != nil {
		h.f.Close()
		return err
	}
	return h.f.Close()
}

// item is a record and its network; an item without a valid network is
// no record but the point where the enterprise CSV stops being a copy of
// the pro CSV (a fork, mirror.go).
type item struct {
	rec ipmodel.Record
	pfx netip.Prefix
}

const batchSize = 256

// Build reads state (ranges, then hosts) once and streams
// every record through the writers of the selected formats in parallel,
// into files in
// dir: one build per audience (ipmodel.Audiences), each holding every
// record as that audience sees it (ipmodel.Record.For) and leaving out
// the records it sees nothing of. The pro and enterprise builds are
// written in every selected format; the free build, which no tier
// downloads (the dataset feed starts at pro) and the API serves lookups
// from, only as MMDB. It fills m's Hosts, Ranges and Skipped counts (of
// the complete build) and returns the files (name, key, format, size,
// rows, sha256, audience, tiers), audience by audience, each in Formats
// order, then each audience's delta files when o names a base for it
// (the NDJSON is written in key order, SortKey, and the delta computed
// while it is written: delta.go). Records whose address or network does
// not parse are skipped in every format. Each host gets the claims of the ranges around it as its
// audience sees them (rangeIndex, inheritClaims), in every format.
func Build(ctx context.Context, state ipmodel.State, dir string, o BuildOptions, m *Manifest) ([]File, error) {
	formats := o.Formats
	if len(formats) == 0 {
		formats = Formats
	}
	var outs []*buildOut
	closeAll := func() {
		for _, o := range outs {
			o.hf.f.Close()
			if nw, ok := o.w.(*ndjsonWriter); ok && nw.differ != nil {
				nw.differ.discard()
			}
		}
	}
	for _, aud := range ipmodel.Audiences {
		for _, f := range Formats {
			if !slices.Contains(formats, f) || (aud == ipmodel.AudienceFree && f != FormatMMDB) {
				continue
			}
			out, err := openOut(ctx, dir, o, formats, m, f, aud)
			if out != nil {
				outs = append(outs, out)
			}
			if err != nil {
				closeAll()
				return nil, err
			}
		}
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("no known format in %v", formats)
	}
	if !o.noMirror {
		pairMirrors(outs)
	}

	// One pass over the state writes every file: the MMDB writer's memory
	// does not grow with the data (mmdbtree.go). The in-memory reference
	// (o.newMMDB) writes the lower audiences' MMDBs in a second pass.
	inMemory := o.newMMDB != nil
	var first, second []*buildOut
	for _, o := range outs {
		if o.format == FormatMMDB && o.aud != ipmodel.AudienceEnterprise && inMemory {
			second = append(second, o)
		} else {
			first = append(first, o)
		}
	}
	for i, pass := range [][]*buildOut{first, second} {
		if len(pass) == 0 {
			continue
		}
		if err := buildPass(ctx, state, pass, m, i == 0); err != nil {
			closeAll()
			return nil, fmt.Errorf("build snapshot: %w", err)
		}
	}
	return builtFiles(outs, o, m)
}

// openOut creates file f of audience aud in dir and its format's writer.
// It returns the file (to close) even when opening the writer failed.
func openOut(ctx context.Context, dir string, o BuildOptions, formats []string, m *Manifest, f string, aud ipmodel.Audience) (*buildOut, error) {
	name := AudienceFileName(f, aud)
	fh, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	hf := &hashFile{f: fh, bw: bufio.NewWriterSize(fh, 1<<20), h: sha256.New()}
	// Writers get only Write: the Parquet writer would close an io.Closer.
	sink := struct{ io.Writer }{hf}
	var w formatWriter
	switch f {
	case FormatCSV:
		w, err = newCSVWriter(sink)
	case FormatNDJSON:
		no := ndjsonOptions{hdr: FileHeader{Kind: HeaderFull, SnapshotDate: m.SnapshotDate, BuildID: m.BuildID, Audience: aud.String()}, sortBuf: o.sortBuf}
		if !o.unsorted {
			no.sortDir = filepath.Join(dir, "sort-"+aud.String())
			err = os.MkdirAll(no.sortDir, 0o700)
		}
		if src, ok := o.DeltaSources[aud]; ok && err == nil && o.DeltaBase != nil && !o.unsorted {
			no.differ, err = newDiffer(ctx, src, o.DeltaBase, dir, slices.Contains(formats, FormatParquet), o.RowGroupRows, o.ParquetCompression)
		}
		w = newNDJSONWriter(sink, no)
	case FormatParquet:
		w, err = newParquetWriter(sink, dir, o.RowGroupRows, o.ParquetCompression)
	case FormatMMDB:
		// Each MMDB writer spools into a folder of its own.
		sub := filepath.Join(dir, "mmdb-"+aud.String())
		if err = os.MkdirAll(sub, 0o700); err == nil {
			if o.newMMDB != nil {
				w, err = o.newMMDB(sink, sub, o.BuildTime)
			} else {
				w, err = newMMDBWriter(sink, sub, o.BuildTime)
			}
		}
	}
	out := &buildOut{format: f, aud: aud, name: name, hf: hf, w: w, ch: make(chan []item, 8)}
	if err != nil {
		return out, fmt.Errorf("open %s writer: %w", name, err)
	}
	return out, nil
}

// builtFiles closes the written files and describes them, then the delta
// files the NDJSON writers made; it sets m's delta base and note.
func builtFiles(outs []*buildOut, o BuildOptions, m *Manifest) ([]File, error) {
	var files, deltas []File
	var notes []string
	if o.DeltaNote != "" {
		notes = append(notes, o.DeltaNote)
	}
	for _, out := range outs {
		if out.mirrored {
			if err := copyMirror(out); err != nil {
				return nil, fmt.Errorf("write %s: %w", out.name, err)
			}
		}
		if err := out.hf.Close(); err != nil {
			return nil, fmt.Errorf("write %s: %w", out.name, err)
		}
		f := File{
			Name: out.name, Key: Key(m.SnapshotDate, m.BuildID, out.name), Format: out.format, ContentType: ContentType(out.format),
			Size: out.hf.n, Rows: out.w.Rows(), SHA256: hex.EncodeToString(out.hf.h.Sum(nil)),
			Audience: out.aud.String(), Tiers: out.aud.Tiers(),
		}
		if out.mirrored {
			f.Rows = out.mirrorOf.w.Rows()
		}
		if nw, ok := out.w.(*ndjsonWriter); ok {
			f.ContentSHA256 = nw.ContentSHA256()
			if out.mirrored {
				f.ContentSHA256 = out.mirrorOf.w.(*ndjsonWriter).ContentSHA256()
			}
			if nw.differ != nil {
				if nw.deltaErr != nil {
					notes = append(notes, out.aud.String()+": no delta: "+nw.deltaErr.Error())
				}
				for _, d := range nw.deltaFiles {
					d.Key = Key(m.SnapshotDate, m.BuildID, d.Name)
					deltas = append(deltas, d)
				}
			}
		}
		files = append(files, f)
	}
	if len(deltas) > 0 {
		m.DeltaBase = o.DeltaBase
	}
	m.DeltaNote = strings.Join(notes, "; ")
	return append(files, deltas...), nil
}

// buildOut is one file a build writes: its format, audience, writer and
// the channel of record batches its goroutine drains.
type buildOut struct {
	format string
	aud    ipmodel.Audience
	name   string
	hf     *hashFile
	w      formatWriter
	ch     chan []item
	// mirrorOf is the pro file of the same format when this enterprise
	// file can be a copy of it (pairMirrors); mirrored is set (before ch
	// is closed) when the pass fed both the same records, and drain then
	// discards this writer's work for builtFiles to copy the pro file.
	mirrorOf *buildOut
	mirrored bool
	// fork is the hand-over between a pro CSV and its enterprise mirror
	// (both hold it), made at the first record with Views.
	fork *rowFork
}

// buildPass reads the state once (ranges, then hosts) and streams every
// record, as each audience sees it, through outs in parallel, closing
// them at the end; counting fills m's Hosts, Ranges and Skipped.
func buildPass(ctx context.Context, state ipmodel.State, outs []*buildOut, m *Manifest, counting bool) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, o := range outs {
		g.Go(o.drain)
	}
	g.Go(func() error {
		defer func() {
			for _, o := range outs {
				close(o.ch)
			}
		}()
		f := newFeeder(gctx, outs, m, counting)
		if err := f.run(state); err != nil {
			return err
		}
		for _, o := range outs {
			o.mirrored = o.mirrorOf != nil && !f.views && slices.Contains(outs, o.mirrorOf)
		}
		return nil
	})
	return g.Wait()
}

// drain writes the batches of o.ch to o's writer and closes it.
func (o *buildOut) drain() error {
	for b := range o.ch {
		for i := range b {
			var err error
			if !b[i].pfx.IsValid() {
				err = o.forkHere()
			} else {
				err = o.w.Write(&b[i].rec, b[i].pfx)
			}
			if err != nil {
				// Keep draining so that the producer never blocks (and
				// no writer waits on a fork this one will not make).
				o.failForks(b[i+1:], err)
				go func() {
					for b := range o.ch {
						o.failForks(b, err)
					}
				}()
				return fmt.Errorf("%s: %w", o.name, err)
			}
		}
	}
	if o.mirrored {
		o.w.(mirrorWriter).discard()
		return nil
	}
	if err := o.w.Close(); err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	return nil
}

// feeder turns the state's records into each audience's batches for the
// outs of one pass.
type feeder struct {
	ctx      context.Context
	outs     []*buildOut
	m        *Manifest
	counting bool
	// One batch per audience; a record every audience sees alike (no
	// Views) is the same item in each.
	batches [ipmodel.NumAudiences][]item
	active  [ipmodel.NumAudiences]bool // audiences with a file in this pass
	// rows: audiences with a row file (CSV, NDJSON, Parquet) in this
	// pass, the ones whose hosts take the ranges' claims from the index.
	rows [ipmodel.NumAudiences]bool
	// ranges holds the ranges' claims for the hosts inside (rangeIndex):
	// the row files need them; an MMDB merges a host with its ranges
	// itself, so a pass of MMDBs alone keeps no index (nil).
	ranges *rangeIndex
	// views: some record fed had Views (restricted knowledge), so the
	// audiences' files may differ (no mirrors).
	views bool
	// forkPair: the enterprise CSV and NDJSON take the pro ones' rows
	// until the first record with Views (a fork into both batches there).
	forkPair bool
}

func newFeeder(ctx context.Context, outs []*buildOut, m *Manifest, counting bool) *feeder {
	f := &feeder{ctx: ctx, outs: outs, m: m, counting: counting}
	for _, o := range outs {
		if o.fork != nil && o.mirrorOf != nil && slices.Contains(outs, o.mirrorOf) {
			f.forkPair = true
		}
		f.active[o.aud] = true
		if o.format != FormatMMDB {
			f.rows[o.aud] = true
			if f.ranges == nil {
				f.ranges = newRangeIndex()
			}
		}
	}
	for a := range f.batches {
		f.batches[a] = make([]item, 0, batchSize)
	}
	return f
}

// run feeds the ranges, then the hosts, and the last batches.
func (f *feeder) run(state ipmodel.State) error {
	if err := state.Ranges(f.ctx, func(r ipmodel.Record) error { return f.record(r, true, &f.m.Ranges) }); err != nil {
		return fmt.Errorf("read ranges: %w", err)
	}
	if err := state.Hosts(f.ctx, func(r ipmodel.Record) error { return f.record(r, false, &f.m.Hosts) }); err != nil {
		return fmt.Errorf("read hosts: %w", err)
	}
	for _, a := range ipmodel.Audiences {
		if err := f.flush(a); err != nil {
			return err
		}
	}
	return nil
}

// flush hands audience a's batch to its outs.
func (f *feeder) flush(a ipmodel.Audience) error {
	if len(f.batches[a]) == 0 {
		return nil
	}
	for _, o := range f.outs {
		if o.aud != a {
			continue
		}
		select {
		case o.ch <- f.batches[a]:
		case <-f.ctx.Done():
			return f.ctx.Err()
		}
	}
	f.batches[a] = make([]item, 0, batchSize)
	return nil
}

// record adds r, as each active audience sees it, to that audience's
// batch; a range's claims go into the index, a host takes those of the
// ranges around it. A record whose address or network does not parse is
// skipped (and counted).
func (f *feeder) record(r ipmodel.Record, isRange bool, count *int64) error {
	pfx, err := recordPrefix(&r, isRange)
	if err != nil {
		if f.counting {
			f.m.Skipped++
		}
		return nil
	}
	if f.counting {
		*count++
	}
	if r.Views != nil && !f.views {
		f.views = true
		if f.forkPair {
			for _, a := range []ipmodel.Audience{ipmodel.AudiencePro, ipmodel.AudienceEnterprise} {
				f.batches[a] = append(f.batches[a], item{})
			}
		}
	}
	var prev *ipmodel.Record
	ip := pfx.Addr().String()
	for _, a := range ipmodel.Audiences {
		if !f.active[a] {
			prev = nil // rangeIndex.add shares with the audience just before
			continue
		}
		v, ok := r.For(a)
		if !ok {
			prev = nil
			continue
		}
		rec := *v
		rec.Views = nil
		rec.IP = ip
		if isRange {
			rec.Network = pfx.String()
			if f.ranges != nil {
				f.ranges.add(pfx, a, &rec, v == prev)
			}
		} else {
			rec.Network = ""
			if f.rows[a] {
				// An audience with MMDBs alone gets the host as it is:
				// the MMDB merges it with the ranges around it itself.
				f.ranges.apply(&rec, pfx.Addr(), a)
			}
		}
		prev = v
		f.batches[a] = append(f.batches[a], item{rec: rec, pfx: pfx})
		if len(f.batches[a]) >= batchSize {
			if err := f.flush(a); err != nil {
				return err
			}
		}
	}
	return nil
}
