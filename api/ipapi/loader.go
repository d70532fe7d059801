package ipapi

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/nats-io/nats.go"
	"github.com/oschwald/maxminddb-golang/v2"

	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/publish"
)

// mmdbIndex answers lookups from the snapshot's MMDB, held in memory: r
// walks the search tree (and decodes records for batch and the public
// lookup), data is the data section the lookup renders from in place.
type mmdbIndex struct {
	r    *maxminddb.Reader
	data mmdbData
	// owner holds the map r and data read (nil for bytes on the heap):
	// every method that reads them keeps it alive to its end (mapping).
	owner *mapping
}

var _ Index = mmdbIndex{}

// ipv4Compatible is ::/96, where an IPv6 MMDB keeps the IPv4 tree: an
// IPv6 address there (the deprecated IPv4-compatible form ::a.b.c.d) is not
// the IPv4 address, so it is not looked up. Only IPv4-mapped addresses
// (::ffff:0:0/96) are answered as IPv4, by Unmap.
var ipv4Compatible = netip.MustParsePrefix("::/96")

// find looks addr up in the tree: an IPv4-mapped address as its IPv4, and
// nothing for another address of ::/96 (see ipv4Compatible).
func (m mmdbIndex) find(addr netip.Addr) (maxminddb.Result, bool, error) {
	addr = addr.Unmap()
	if addr.Is6() && ipv4Compatible.Contains(addr) {
		return maxminddb.Result{}, false, nil
	}
	res := m.r.Lookup(addr)
	if err := res.Err(); err != nil {
		return res, false, fmt.Errorf("mmdb lookup %s: %w", addr, err)
	}
	return res, res.Found(), nil
}

func (m mmdbIndex) Lookup(addr netip.Addr, cves bool) (*ipmodel.Record, bool, error) {
	defer runtime.KeepAlive(m.owner)
	res, found, err := m.find(addr)
	if err != nil || !found {
		return nil, false, err
	}
	var rec ipmodel.Record
	if cves {
		if err := decodeFull(res, &rec); err != nil {
			return nil, false, fmt.Errorf("mmdb decode %s: %w", addr, err)
		}
	} else {
		// CVE lists are most of a record's bytes: skip decoding them.
		var light lightRecord
		if err := res.Decode(&light); err != nil {
			return nil, false, fmt.Errorf("mmdb decode %s: %w", addr, err)
		}
		if light.Classifications == nil {
			light.Classifications = light.LegacyClassifications
		}
		rec = ipmodel.Record{Network: light.Network, Classifications: light.Classifications, Provider: light.Provider,
			Confidence: light.Confidence, FirstSeen: light.FirstSeen, LastSeen: light.LastSeen, Sources: light.Sources,
			Assets: make([]ipmodel.Asset, len(light.Assets)), ASN: light.ASN, Attributions: light.Attributions,
			Country: light.Country, Region: light.Region, City: light.City}
		for i := range light.Assets {
			rec.Assets[i] = ipmodel.Asset(light.Assets[i])
		}
	}
	rec.IP = addr.Unmap().String()
	return &rec, true, nil
}

// lightAsset is ipmodel.Asset with the same fields, its CVE list not
// decoded; lightRecord is ipmodel.Record with light assets.
type lightAsset struct {
	Port             int                   `maxminddb:"port"`
	ProtocolFamily   string                `maxminddb:"protocol_family"`
	Vendor           *string               `maxminddb:"vendor"`
	Product          *string               `maxminddb:"product"`
	VersionBand      *string               `maxminddb:"version_band"`
	VersionPrecision *string               `maxminddb:"version_precision"`
	ExactVersion     *string               `maxminddb:"exact_version"`
	ConfidenceBand   string                `maxminddb:"confidence_band"`
	EvidenceSources  []string              `maxminddb:"evidence_sources"`
	FirstSeen        string                `maxminddb:"first_seen"`
	LastSeen         string                `maxminddb:"last_seen"`
	Attributions     []ipmodel.Attribution `maxminddb:"attributions"`
	CveSummary       *ipmodel.CveSummary   `maxminddb:"cve_summary"`
	Cves             []ipmodel.CveFinding  `maxminddb:"-"`
}

type lightRecord struct {
	Network         string   `maxminddb:"network"`
	Classifications []string `maxminddb:"classifications"`
	// LegacyClassifications is the key of MMDBs published before the
	// files shared one field name ("classification").
	LegacyClassifications []string              `maxminddb:"classification"`
	Provider              *string               `maxminddb:"provider"`
	Confidence            float64               `maxminddb:"confidence"`
	FirstSeen             string                `maxminddb:"first_seen"`
	LastSeen              string                `maxminddb:"last_seen"`
	Sources               []string              `maxminddb:"sources"`
	Assets                []lightAsset          `maxminddb:"assets"`
	ASN                   uint32                `maxminddb:"asn"`
	Attributions          []ipmodel.Attribution `maxminddb:"attributions"`
	Country               *string               `maxminddb:"country"`
	Region                *string               `maxminddb:"region"`
	City                  *string               `maxminddb:"city"`
}

// metadataMarker starts an MMDB's metadata section, which follows the
// data section.
var metadataMarker = []byte("\xab\xcd\xefMaxMind.com")

// OpenMMDB returns an Index over an MMDB file's bytes, which must not change
// while the index is in use.
func OpenMMDB(b []byte) (Index, error) { return openMMDB(b, nil) }

// openMMDB is OpenMMDB over bytes that owner holds (nil: the heap).
func openMMDB(b []byte, owner *mapping) (mmdbIndex, error) {
	r, err := maxminddb.OpenBytes(b)
	if err != nil {
		return mmdbIndex{}, fmt.Errorf("open mmdb: %w", err)
	}
	// The data section sits between the search tree and its 16-byte
	// separator, and the metadata marker (as maxminddb.OpenBytes finds
	// them, which has checked that this range is valid).
	start := r.Metadata.NodeCount*(r.Metadata.RecordSize/4) + 16
	end := bytes.LastIndex(b, metadataMarker)
	if end < 0 || start > uint(end) {
		return mmdbIndex{}, errors.New("open mmdb: no data section")
	}
	return mmdbIndex{r: r, data: mmdbData(b[start:end]), owner: owner}, nil
}

// ErrNoSnapshot means nothing has been published yet.
var ErrNoSnapshot = publish.ErrNoSnapshot

// Load reads the latest published snapshot from st into unlinked files of
// the system temp folder (LoadManifestDir). It returns ErrNoSnapshot when
// nothing was published.
func Load(ctx context.Context, st objstore.Store) (*Snapshot, error) {
	m, err := publish.Latest(ctx, st)
	if err != nil {
		return nil, err
	}
	return LoadManifest(ctx, st, m)
}

// LoadManifest is LoadManifestDir into the system temp folder.
func LoadManifest(ctx context.Context, st objstore.Store, m *publish.Manifest) (*Snapshot, error) {
	return loader{}.load(ctx, st, m)
}

// LoadManifestDir loads the snapshot m describes into the cache folder dir
// ("" = the system temp folder): each audience's build
// (ipmodel.Audiences), its MMDB for lookups, downloaded into dir, checked
// against the manifest's size and SHA-256 and memory-mapped, and, for the
// audiences that export CSV (pro and enterprise), the export table built
// from its NDJSON (checked the same way while it streams) into mapped
// column files of dir. The files are unlinked at once: their maps hold
// them until the last request on the snapshot ends (mapping). A snapshot
// without an audience's MMDB (one published before audiences) is refused,
// so no tier is ever served another's data. Builds with the same bytes (a
// snapshot without restricted data) are loaded once; distinct ones in
// parallel. It returns once the export tables are built too (the service's
// loader swaps a snapshot in before, Service.Watch).
func LoadManifestDir(ctx context.Context, st objstore.Store, m *publish.Manifest, dir string) (*Snapshot, error) {
	return loader{dir: dir}.load(ctx, st, m)
}

// loader loads snapshots into its cache folder.
type loader struct {
	dir string
	// tamper, when set (tests), changes each downloaded MMDB file before
	// it is checked and mapped, as a failing disk would.
	tamper func(*os.File) error
	// beforeTable, when set (tests), is called as each export table's
	// build begins; its error fails the build (a test holds builds there).
	beforeTable func(context.Context) error
}

// load is start and its table build, waited for: the snapshot with every
// export table built, or the first failure.
func (l loader) load(ctx context.Context, st objstore.Store, m *publish.Manifest) (*Snapshot, error) {
	snap, build, err := l.start(ctx, st, m)
	if err != nil {
		return nil, err
	}
	if err := build(ctx); err != nil {
		return nil, err
	}
	return snap, nil
}

// tableJob is one distinct export table to build: from its NDJSON file,
// or (nf nil) from the MMDB's networks.
type tableJob struct {
	t   *Table
	nf  *publish.File
	idx mmdbIndex
}

// start downloads, checks and maps the snapshot's distinct MMDBs (in
// parallel) and returns the snapshot, ready for lookups and batch, with
// its export tables pending (Table.Wait), and build, which builds them (in
// parallel) and returns their failures joined. Each pending table is
// finished when its own build ends, so an export waits for its table only;
// a table whose build fails (or whose ctx ends) keeps that error.
func (l loader) start(ctx context.Context, st objstore.Store, m *publish.Manifest) (*Snapshot, func(context.Context) error, error) {
	snap := &Snapshot{Manifest: fromPublish(m)}
	mmdbs := map[string]publish.File{} // by SHA-256
	for _, a := range ipmodel.Audiences {
		mf, ok := m.FileFor(publish.FormatMMDB, a)
		if !ok {
			return nil, nil, fmt.Errorf("snapshot %s: no mmdb file for audience %s (published before audiences? publish again)", m.SnapshotDate, a)
		}
		// The first audience's file of the same bytes is the one read.
		if _, dup := mmdbs[mf.SHA256]; !dup {
			mmdbs[mf.SHA256] = mf
		}
	}
	// Every distinct MMDB at once: the downloads wait on I/O and hashing.
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	indexes := map[string]mmdbIndex{} // by SHA-256 of the MMDB
	for sum, f := range mmdbs {
		wg.Go(func() {
			idx, err := l.mapMMDB(ctx, st, f)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("snapshot %s: %s: %w", m.SnapshotDate, f.Name, err))
				return
			}
			indexes[sum] = idx
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	jobs := map[string]*tableJob{} // by SHA-256 of the NDJSON (or MMDB)
	var order []*tableJob
	for _, a := range ipmodel.Audiences {
		mf, _ := m.FileFor(publish.FormatMMDB, a)
		idx := indexes[mf.SHA256]
		rows := &Table{} // the free audience exports nothing (CSV is pro+)
		if a >= ipmodel.AudiencePro {
			src, job := mf.SHA256, &tableJob{idx: idx}
			if nf, ok := m.FileFor(publish.FormatNDJSON, a); ok {
				src, job.nf = nf.SHA256, &nf
			}
			if jobs[src] == nil {
				job.t = pendingTable()
				jobs[src] = job
				order = append(order, job)
			}
			rows = jobs[src].t
		}
		snap.Views[a] = View{Index: idx, Rows: rows}
	}
	build := func(ctx context.Context) error {
		var mu sync.Mutex
		var wg sync.WaitGroup
		var errs []error
		for _, j := range order {
			wg.Go(func() {
				t, err := l.buildTable(ctx, st, j)
				if err != nil {
					err = fmt.Errorf("snapshot %s: %w", m.SnapshotDate, err)
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
				j.t.finish(t, err)
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	return snap, build, nil
}

// buildTable builds j's export table into mapped column files. A build
// whose ctx ends fails with ctx's cause.
func (l loader) buildTable(ctx context.Context, st objstore.Store, j *tableJob) (*Table, error) {
	if l.beforeTable != nil {
		if err := l.beforeTable(ctx); err != nil {
			return nil, err
		}
	}
	if j.nf != nil {
		t, err := l.loadTable(ctx, st, *j.nf)
		if err != nil && ctx.Err() != nil {
			err = fmt.Errorf("export table: %w", context.Cause(ctx))
		}
		return t, err
	}
	// No NDJSON: the table from the MMDB's networks.
	tb, err := newFileTableBuilder(l.dir)
	if err != nil {
		return nil, err
	}
	if err := tableFromMMDB(ctx, j.idx, tb); err != nil {
		tb.close()
		return nil, err
	}
	return tb.table()
}

// mapMMDB downloads f into an unlinked file of the cache folder, checks
// its size and SHA-256 on the mapped bytes (what is served is what was
// checked: a download cut short, or a file changed on the local disk, is
// refused) and opens the index over the map.
func (l loader) mapMMDB(ctx context.Context, st objstore.Store, f publish.File) (mmdbIndex, error) {
	file, err := cacheFile(l.dir, "mmdb-*.mmdb")
	if err != nil {
		return mmdbIndex{}, err
	}
	defer file.Close() // the map keeps the file
	rc, _, err := st.Get(ctx, f.Key, nil)
	if err != nil {
		return mmdbIndex{}, fmt.Errorf("read %s: %w", f.Key, err)
	}
	_, err = io.Copy(file, rc)
	rc.Close()
	if err != nil {
		return mmdbIndex{}, fmt.Errorf("download %s: %w", f.Key, err)
	}
	if l.tamper != nil {
		if err := l.tamper(file); err != nil {
			return mmdbIndex{}, err
		}
	}
	b, err := mapVerified(file, f.Size, f.SHA256)
	if errors.Is(err, errCacheFile) {
		err = fmt.Errorf("%w (%w)", publish.ErrChecksum, err)
	}
	if err != nil {
		return mmdbIndex{}, fmt.Errorf("download %s: %w", f.Key, err)
	}
	owner := newMapping(b)
	idx, err := openMMDB(b, owner)
	if err != nil {
		return mmdbIndex{}, err
	}
	return idx, nil
}

func fromPublish(m *publish.Manifest) Manifest {
	out := Manifest{SnapshotDate: m.SnapshotDate, BuildID: m.BuildID, Key: m.Key, SchemaVersion: m.SchemaVersion, BuildTime: m.BuildTime, Hosts: m.Hosts, Ranges: m.Ranges, SumsKey: m.SumsKey,
		DeltaBase: m.DeltaBase, DeltaNote: m.DeltaNote}
	for _, f := range m.Files {
		out.Files = append(out.Files, ManifestFile{Name: f.Name, Key: f.Key, Format: f.Format, ContentType: f.ContentType, Size: f.Size, Rows: f.Rows, SHA256: f.SHA256, Audience: f.Audience,
			ContentSHA256: f.ContentSHA256, Ops: f.Ops})
	}
	return out
}

// loadTable streams the gzipped NDJSON file into a mapped Table, hashing
// the compressed bytes as they arrive and refusing a mismatch at the end.
func (l loader) loadTable(ctx context.Context, st objstore.Store, f publish.File) (*Table, error) {
	tb, err := newFileTableBuilder(l.dir)
	if err != nil {
		return nil, err
	}
	if err := readTable(ctx, st, f, tb); err != nil {
		tb.close()
		return nil, err
	}
	return tb.table()
}

// readTable streams the gzipped NDJSON file f into sink, hashing the
// compressed bytes as they arrive and refusing a mismatch at the end.
func readTable(ctx context.Context, st objstore.Store, f publish.File, sink rowSink) error {
	rc, _, err := st.Get(ctx, f.Key, nil)
	if err != nil {
		return fmt.Errorf("read %s: %w", f.Key, err)
	}
	defer rc.Close()
	h := sha256.New()
	cnt := &countingReader{r: io.TeeReader(ctxReader{ctx, rc}, h)}
	zr, err := gzip.NewReader(cnt)
	if err == nil {
		err = readRows(zr, sink)
	}
	// Hash the rest too, as sha256sum would: a corrupt file is reported
	// as a checksum mismatch, whatever the decoder tripped on first.
	if _, cerr := io.Copy(io.Discard, cnt); cerr != nil {
		return fmt.Errorf("read %s: %w", f.Key, cerr)
	}
	if cnt.n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
		return fmt.Errorf("read %s: %w", f.Key, publish.ErrChecksum)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", f.Key, err)
	}
	return nil
}

// ctxReader reads r until ctx ends, then fails with ctx's cause: a table
// build stops when its snapshot is superseded.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.r.Read(p)
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// decodeFull decodes a whole MMDB record into rec, taking its
// classifications from the key "classification" of an MMDB published
// before every file named them "classifications".
func decodeFull(res maxminddb.Result, rec *ipmodel.Record) error {
	if err := res.Decode(rec); err != nil {
		return err
	}
	if rec.Classifications == nil {
		var legacy struct {
			C []string `maxminddb:"classification"`
		}
		if err := res.Decode(&legacy); err != nil {
			return err
		}
		rec.Classifications = legacy.C
	}
	return nil
}

// tableFromMMDB adds the export rows of the MMDB's networks to sink when a
// snapshot has no NDJSON file. Rows are then the MMDB's networks (a range
// that holds hosts appears split around them).
func tableFromMMDB(ctx context.Context, idx mmdbIndex, sink rowSink) error {
	defer runtime.KeepAlive(idx.owner)
	n := 0
	for res := range idx.r.Networks() {
		if n++; n&4095 == 0 && ctx.Err() != nil {
			return fmt.Errorf("export table: %w", context.Cause(ctx))
		}
		var rec ipmodel.Record
		if err := decodeFull(res, &rec); err != nil {
			return fmt.Errorf("mmdb networks: %w", err)
		}
		p := res.Prefix()
		if p.IsSingleIP() {
			rec.IP, rec.Network = p.Addr().String(), ""
		} else {
			rec.IP, rec.Network = p.Addr().String(), p.String()
		}
		sink.add(rec.IP, rec.Network, rec.Classifications, rec.Provider, rec.Confidence, rec.FirstSeen, rec.LastSeen, len(rec.Assets))
	}
	return nil
}

// Watch keeps the service on the latest snapshot until ctx ends: it loads
// it now, again on every events.snapshot.published message on nc (nil: no
// events), and checks snapshots/latest every poll as a fallback for a
// missed event. Loading happens beside the requests; the swap is atomic.
func (s *Service) Watch(ctx context.Context, nc *nats.Conn, poll time.Duration) error {
	if s.opts.Store == nil {
		return errors.New("ipapi watch: no object store")
	}
	if poll <= 0 {
		poll = time.Minute
	}
	kick := make(chan struct{}, 1)
	signal := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	if nc != nil {
		sub, err := nc.Subscribe(publish.EventSubject, func(*nats.Msg) { signal() })
		if err != nil {
			return fmt.Errorf("subscribe %s: %w", publish.EventSubject, err)
		}
		defer func() { _ = sub.Unsubscribe() }()
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	defer s.stopBuilds()
	for {
		s.refresh(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-kick:
		case <-t.C:
		}
	}
}

// errSuperseded is the cause a snapshot's export table build is stopped
// with when a newer snapshot is swapped in before it ended.
var errSuperseded = errors.New("a newer snapshot was loaded")

// builds tracks the export table builds of the snapshots Watch swapped in.
type builds struct {
	mu     sync.Mutex
	wg     sync.WaitGroup
	cancel context.CancelCauseFunc // the latest build's (nil: none)
}

// refresh loads the latest snapshot when it differs from the current one,
// or when the current one's export table failed to build (a retry): it
// swaps the snapshot in as soon as its MMDBs are mapped, stops the
// previous snapshot's table build if it still runs, and builds the new
// one's export tables in the background (docs/ip-api.md, snapshot load).
func (s *Service) refresh(ctx context.Context) {
	p, err := publish.ReadPointer(ctx, s.opts.Store)
	if errors.Is(err, publish.ErrNoSnapshot) {
		s.log.Debug("no snapshot published yet")
		return
	}
	if err != nil {
		s.log.Warn("read latest snapshot pointer", "err", err)
		return
	}
	if cur := s.cur.load(); cur != nil && cur.Manifest.Key == p.Manifest && cur.Manifest.BuildID == p.BuildID && cur.Manifest.BuildTime == p.BuildTime && !cur.exportFailed() {
		return
	}
	start := time.Now()
	m, err := publish.ReadManifest(ctx, s.opts.Store, p.Manifest)
	if err != nil {
		s.log.Error("read snapshot manifest", "manifest", p.Manifest, "err", err)
		return
	}
	l := loader{dir: s.opts.CacheDir, tamper: s.tamper, beforeTable: s.beforeTable}
	snap, build, err := l.start(ctx, s.opts.Store, m)
	if err != nil {
		s.log.Error("load snapshot", "date", p.SnapshotDate, "err", err)
		return
	}
	bctx, cancel := context.WithCancelCause(ctx)
	s.builds.mu.Lock()
	prev := s.builds.cancel
	s.builds.cancel = cancel
	s.builds.wg.Add(1)
	s.builds.mu.Unlock()
	s.Swap(snap)
	// After the swap: an export woken by the stop finds the new snapshot.
	if prev != nil {
		prev(errSuperseded)
	}
	// The old snapshot's maps go at the first collection that finds it
	// unreachable: run one now (the heap is small), so that one no request
	// holds returns its disk space at once.
	runtime.GC()
	s.log.Info("snapshot loaded", "date", snap.Manifest.SnapshotDate, "build", snap.Manifest.BuildID, "build_time", snap.Manifest.BuildTime, "took", time.Since(start).Round(time.Millisecond))
	go func() {
		defer s.builds.wg.Done()
		defer cancel(nil)
		if err := build(bctx); err != nil {
			if errors.Is(err, errSuperseded) || ctx.Err() != nil {
				s.log.Info("export table build stopped", "date", snap.Manifest.SnapshotDate, "err", err)
				return
			}
			s.log.Error("export table build failed: exports of this snapshot answer 503, lookups go on; retried at the next snapshot check", "date", snap.Manifest.SnapshotDate, "err", err)
			return
		}
		s.log.Info("export table built", "date", snap.Manifest.SnapshotDate, "rows", snap.Complete().Rows.Len(), "took", time.Since(start).Round(time.Millisecond))
	}()
}

// stopBuilds stops the running export table build and waits for every
// build to end.
func (s *Service) stopBuilds() {
	s.builds.mu.Lock()
	if s.builds.cancel != nil {
		s.builds.cancel(context.Canceled)
	}
	s.builds.mu.Unlock()
	s.builds.wg.Wait()
}

// row is the part of an NDJSON record the export table needs; decoding
// only this skips allocating attributions and CVEs.
type row struct {
	IP              string   `json:"ip"`
	Network         *string  `json:"network"`
	Classifications []string `json:"classifications"`
	Provider        *string  `json:"provider"`
	Confidence      float64  `json:"confidence"`
	FirstSeen       string   `json:"first_seen"`
	LastSeen        string   `json:"last_seen"`
	Assets          []struct {
		EvidenceSources []string `json:"evidence_sources"`
	} `json:"assets"`
}

// readRows adds every NDJSON record of r to tb.
func readRows(r io.Reader, tb rowSink) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	line := 0
	var x row
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		x = row{}
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			return fmt.Errorf("ndjson line %d: %w", line, err)
		}
		network := ""
		if x.Network != nil {
			network = *x.Network
		}
		tb.add(x.IP, network, x.Classifications, x.Provider, x.Confidence, x.FirstSeen, x.LastSeen, len(x.Assets))
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("ndjson line %d: %w", line+1, err)
	}
	return nil
}
