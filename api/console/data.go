package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/internal/httpx"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/schedule"
	"github.com/netintel/netintel/probe"
	"github.com/netintel/netintel/publish"
)

// maxLookupBody bounds what the console reads of an IP API answer.
const maxLookupBody = 8 << 20

// maxSnapshots bounds the builds the history lists (newest first).
const maxSnapshots = 100

// IPResult is GET /console/api/ip/{ip}: the IP API's single-address
// answer as it is (tier enterprise, include=cves), and what the snapshot
// record adds to it.
type IPResult struct {
	Lookup json.RawMessage `json:"lookup"`
	Record *RecordExtras   `json:"record"`
}

// RecordExtras is what the console shows of the snapshot record beyond
// the IP API's answer.
type RecordExtras struct {
	Snapshot     string                `json:"snapshot_date"`
	Network      string                `json:"network,omitempty"`
	ASN          uint32                `json:"asn,omitempty"`
	Sources      []string              `json:"sources"`
	Attributions []ipmodel.Attribution `json:"attributions"`
	Confidence   float64               `json:"confidence"`
	FirstSeen    string                `json:"first_seen"`
	LastSeen     string                `json:"last_seen"`
}

func (h *Handler) ipLookup(w http.ResponseWriter, r *http.Request) error {
	raw := r.PathValue("ip")
	u := strings.TrimRight(h.opt.IPBase, "/") + "/api/v1/ip/" + url.PathEscape(raw) + "?include=cves"
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, u, nil)
	if err != nil {
		return &httpx.Error{Status: http.StatusBadRequest, Code: "invalid_ip", Message: "not an IPv4 or IPv6 address"}
	}
	req.Header.Set("X-Internal-Key", h.opt.InternalKey)
	req.Header.Set("X-Tier", "enterprise")
	resp, err := h.opt.IPClient.Do(req)
	if err != nil {
		h.log.Warn("ip api unreachable", "err", err)
		return &httpx.Error{Status: http.StatusBadGateway, Code: "unavailable", Message: "the IP API did not answer; see the log"}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxLookupBody))
	if err != nil {
		return &httpx.Error{Status: http.StatusBadGateway, Code: "unavailable", Message: "the IP API answer was cut off"}
	}
	if resp.StatusCode != http.StatusOK || !json.Valid(body) {
		// The IP API's own error body ({"error":{...}}), as it answered.
		w.Header().Set("Content-Type", "application/json")
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
		return nil
	}
	out := IPResult{Lookup: body}
	if addr, err := netip.ParseAddr(raw); err == nil && h.opt.Records != nil {
		if addr.Is4In6() {
			addr = addr.Unmap()
		}
		rec, snap, ok, err := h.opt.Records(addr)
		if err != nil {
			h.log.Warn("snapshot record", "err", err)
		}
		if ok && err == nil {
			out.Record = &RecordExtras{Snapshot: snap, Network: rec.Network, ASN: rec.ASN, Sources: nonNil(rec.Sources),
				Attributions: nonNil(rec.Attributions), Confidence: rec.Confidence, FirstSeen: rec.FirstSeen, LastSeen: rec.LastSeen}
		}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// Examples is GET /console/api/examples: addresses worth a lookup.
type Examples struct {
	Addresses []string `json:"addresses"`
}

func (h *Handler) examples(w http.ResponseWriter, r *http.Request) error {
	out := Examples{Addresses: []string{}}
	if h.opt.Examples != nil {
		out.Addresses = nonNil(h.opt.Examples(r.Context()))
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// SnapshotFile is one file of a build in the history.
type SnapshotFile struct {
	Name     string `json:"name"`
	Format   string `json:"format"`
	Audience string `json:"audience"`
	Size     int64  `json:"size"`
	Rows     int64  `json:"rows"`
	SHA256   string `json:"sha256"`
	URL      string `json:"url"`
}

// SnapshotBuild is one complete build in the history.
type SnapshotBuild struct {
	Date          string         `json:"snapshot_date"`
	BuildID       string         `json:"build_id"`
	BuildTime     string         `json:"build_time"`
	SchemaVersion string         `json:"schema_version"`
	Latest        bool           `json:"latest"`
	Hosts         int64          `json:"hosts"`
	Ranges        int64          `json:"ranges"`
	Size          int64          `json:"size"`
	Files         []SnapshotFile `json:"files"`
	SumsURL       string         `json:"sums_url"`
}

// Snapshots is GET /console/api/snapshots.
type Snapshots struct {
	Latest    *publish.Pointer `json:"latest"`
	Snapshots []SnapshotBuild  `json:"snapshots"`
}

// oldLayout stands for the build segment of a snapshot of the older
// layout (files in the date's folder) in download paths.
const oldLayout = "-"

func fileURL(date, build, name string) string {
	if build == "" {
		build = oldLayout
	}
	return Prefix + "api/snapshots/" + date + "/" + build + "/" + url.PathEscape(name)
}

func (h *Handler) snapshots(w http.ResponseWriter, r *http.Request) error {
	if h.opt.Store == nil {
		return errNoStore
	}
	out, err := ListSnapshots(r.Context(), h.opt.Store)
	if err != nil {
		h.log.Warn("snapshot history", "err", err)
		return errStoreDown
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// ListSnapshots reads every complete build's manifest (newest first, at
// most maxSnapshots) and the latest pointer.
func ListSnapshots(ctx context.Context, st objstore.Store) (*Snapshots, error) {
	out := &Snapshots{Snapshots: []SnapshotBuild{}}
	p, err := publish.ReadPointer(ctx, st)
	switch {
	case err == nil:
		out.Latest = p
	case errors.Is(err, publish.ErrNoSnapshot):
	default:
		return nil, err
	}
	objs, err := st.List(ctx, publish.Prefix)
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	var keys []string
	for _, o := range objs {
		if strings.HasSuffix(o.Key, "/"+publish.ManifestName) {
			keys = append(keys, o.Key)
		}
	}
	// Keys sort by date, then build id (its start time): newest last.
	sort.Sort(sort.Reverse(sort.StringSlice(keys)))
	if len(keys) > maxSnapshots {
		keys = keys[:maxSnapshots]
	}
	for _, k := range keys {
		m, err := publish.ReadManifest(ctx, st, k)
		if err != nil {
			if errors.Is(err, objstore.ErrNotFound) || errors.Is(err, publish.ErrInvalid) {
				continue // pruned meanwhile, or not a manifest this build reads
			}
			return nil, err
		}
		b := SnapshotBuild{Date: m.SnapshotDate, BuildID: m.BuildID, BuildTime: m.BuildTime, SchemaVersion: m.SchemaVersion,
			Hosts: m.Hosts, Ranges: m.Ranges, Latest: p != nil && p.Manifest == m.Key, Files: []SnapshotFile{},
			SumsURL: fileURL(m.SnapshotDate, m.BuildID, publish.SumsName)}
		for _, f := range m.Files {
			aud := f.Audience
			if aud == "" {
				aud = ipmodel.AudienceEnterprise.String()
			}
			b.Size += f.Size
			b.Files = append(b.Files, SnapshotFile{Name: f.Name, Format: f.Format, Audience: aud, Size: f.Size, Rows: f.Rows, SHA256: f.SHA256,
				URL: fileURL(m.SnapshotDate, m.BuildID, f.Name)})
		}
		out.Snapshots = append(out.Snapshots, b)
	}
	return out, nil
}

// snapshotFile streams one file of a build that has a manifest, or the
// build's SHA256SUMS rendered from it, with the manifest's SHA-256 as ETag.
// It streams, so it stays a plain handler: the failures before the first
// byte are answered by httpx.Fail.
func (h *Handler) snapshotFile(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	m, err := h.manifest(r)
	if err != nil {
		httpx.Fail(h.log, w, r, err)
		return
	}
	disp := `attachment; filename="` + name + `"`
	if name == publish.SumsName {
		var b strings.Builder
		for _, f := range m.Files {
			b.WriteString(f.SHA256 + "  " + f.Name + "\n")
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Disposition", disp)
		_, _ = io.WriteString(w, b.String())
		return
	}
	f, rc, err := h.openFile(r.Context(), m, name)
	if err != nil {
		httpx.Fail(h.log, w, r, err)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", f.ContentType)
	w.Header().Set("Content-Length", strconv.FormatInt(f.Size, 10))
	w.Header().Set("ETag", `"`+f.SHA256+`"`)
	w.Header().Set("Content-Disposition", disp)
	if _, err := io.Copy(w, rc); err != nil {
		h.log.Debug("write snapshot file", "key", f.Key, "err", err)
	}
}

// manifest reads the manifest of the build r names, or returns the
// failure to answer.
func (h *Handler) manifest(r *http.Request) (*publish.Manifest, error) {
	date, build := r.PathValue("date"), r.PathValue("build")
	if build == oldLayout {
		build = ""
	}
	if _, err := publish.ParseDate(date); err != nil || (build != "" && !publish.ValidBuildID(build)) {
		return nil, notFound("no such snapshot build")
	}
	if h.opt.Store == nil {
		return nil, errNoStore
	}
	m, err := publish.ReadManifest(r.Context(), h.opt.Store, publish.ManifestKey(date, build))
	if errors.Is(err, objstore.ErrNotFound) {
		return nil, notFound("no complete build " + date + "/" + build + " (pruned, or never finished)")
	}
	if err != nil {
		h.log.Warn("read manifest", "date", date, "build", build, "err", err)
		return nil, errStoreDown
	}
	return m, nil
}

// openFile opens the file name of the build of m, or returns the failure
// to answer.
func (h *Handler) openFile(ctx context.Context, m *publish.Manifest, name string) (publish.File, io.ReadCloser, error) {
	i := slices.IndexFunc(m.Files, func(f publish.File) bool { return f.Name == name })
	if i < 0 {
		return publish.File{}, nil, notFound("the build has no file " + strconv.Quote(name))
	}
	f := m.Files[i]
	rc, _, err := h.opt.Store.Get(ctx, f.Key, nil)
	if errors.Is(err, objstore.ErrNotFound) {
		return f, nil, notFound("the file was pruned")
	}
	if err != nil {
		h.log.Warn("open snapshot file", "key", f.Key, "err", err)
		return f, nil, errStoreDown
	}
	return f, rc, nil
}

// TLDStatus is GET /console/api/tld: the live progress, the latest
// publish and its results (null with ?results=false, for polls).
type TLDStatus struct {
	Progress  probe.Progress   `json:"progress"`
	Published *probe.Published `json:"published"`
	Results   []probe.Result   `json:"results"`
}

func (h *Handler) tld(w http.ResponseWriter, r *http.Request) error {
	if h.opt.TLD == nil {
		return unavailable("the TLD checker is not wired in this role")
	}
	out := TLDStatus{Results: []probe.Result{}}
	var err error
	if out.Progress, err = h.opt.TLD.Progress(r.Context()); err != nil {
		return h.tldUnavailable(err)
	}
	pub, ok, err := h.opt.TLD.Published(r.Context())
	if err != nil {
		return h.tldUnavailable(err)
	}
	if ok {
		out.Published = &pub
	}
	if r.URL.Query().Get("results") == "false" {
		out.Results = nil // a progress poll: the page has the results
	} else if h.opt.Store != nil {
		var res probe.Results
		err := readJSON(r.Context(), h.opt.Store, h.opt.TLDPrefix+probe.LatestJSON, 64<<20, &res)
		switch {
		case err == nil:
			out.Results = nonNil(res.Results)
		case errors.Is(err, objstore.ErrNotFound):
		default:
			return h.tldUnavailable(err)
		}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// tldUnavailable logs a failure to read the TLD state and returns the 503
// that answers it.
func (h *Handler) tldUnavailable(err error) error {
	h.log.Warn("tld state unavailable", "err", err)
	return errTLDDown
}

// maxRuns bounds the runs the coverage chart shows.
const maxRuns = 60

// TLDHistoryBody is GET /console/api/tld/history.
type TLDHistoryBody struct {
	Runs []RunSummary `json:"runs"`
}

func (h *Handler) tldHistory(w http.ResponseWriter, r *http.Request) error {
	var runs []RunSummary
	if h.opt.History != nil {
		var err error
		if runs, err = h.opt.History.Runs(r.Context(), maxRuns); err != nil {
			return h.tldUnavailable(err)
		}
	}
	httpx.WriteJSON(w, http.StatusOK, TLDHistoryBody{Runs: nonNil(runs)})
	return nil
}

// maxChanges bounds the changes the TLD view lists (the newest).
const maxChanges = 500

// TLDChanges is GET /console/api/tld/changes: what changed between the
// kept runs, as the history's /api/changes lists it, newest first (at most
// maxChanges); runs is how many runs were compared.
type TLDChanges struct {
	Runs    int            `json:"runs"`
	Changes []probe.Change `json:"changes"`
}

func (h *Handler) tldChanges(w http.ResponseWriter, r *http.Request) error {
	if h.opt.Store == nil {
		return errNoStore
	}
	ids, err := probe.HistoryRuns(r.Context(), h.opt.Store, h.opt.TLDPrefix)
	if err != nil {
		return h.tldUnavailable(err)
	}
	out := TLDChanges{Changes: []probe.Change{}}
	var prevID string
	var prev probe.Results
	for _, id := range ids {
		cur, err := probe.LoadRun(r.Context(), h.opt.Store, h.opt.TLDPrefix, id)
		switch {
		case errors.Is(err, objstore.ErrNotFound):
			continue // pruned since it was listed
		case err != nil:
			return h.tldUnavailable(err)
		case prevID != "":
			out.Changes = append(out.Changes, probe.Diff(prevID, prev, id, cur)...)
		}
		prevID, prev = id, cur
		out.Runs++
	}
	slices.Reverse(out.Changes)
	out.Changes = out.Changes[:min(len(out.Changes), maxChanges)]
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// StoreHistory is the TLDHistory of what the checker publishes today: the
// summary.json of each run under PREFIX/runs/<run>/ (the newest limit
// runs), or else the latest summary alone, one point.
type StoreHistory struct {
	Store  objstore.Store
	Prefix string
}

var _ TLDHistory = StoreHistory{}

// Runs implements TLDHistory.
func (s StoreHistory) Runs(ctx context.Context, limit int) ([]RunSummary, error) {
	objs, err := s.Store.List(ctx, s.Prefix+"runs/")
	if err != nil {
		return nil, fmt.Errorf("list tld runs: %w", err)
	}
	var keys []string
	for _, o := range objs {
		if strings.HasSuffix(o.Key, "/summary.json") {
			keys = append(keys, o.Key)
		}
	}
	slices.Sort(keys) // run ids start with their start time
	if len(keys) > limit {
		keys = keys[len(keys)-limit:]
	}
	if len(keys) == 0 {
		keys = []string{s.Prefix + probe.LatestSummary}
	}
	out := []RunSummary{}
	for _, k := range keys {
		var sum probe.Summary
		if err := readJSON(ctx, s.Store, k, 1<<20, &sum); err != nil {
			if errors.Is(err, objstore.ErrNotFound) {
				continue
			}
			return nil, err
		}
		out = append(out, SummaryPoint(sum))
	}
	return out, nil
}

// SummaryPoint turns a run's summary.json into a chart point.
func SummaryPoint(s probe.Summary) RunSummary {
	at := s.FinishedAt
	if at == 0 {
		at = s.GeneratedAt
	}
	return RunSummary{Run: s.RunID, Date: time.Unix(at, 0).UTC().Format(time.RFC3339), Total: s.TotalTLDs,
		RDAP: s.RDAPWorking, WHOIS: s.WhoisAvailable, Stealth: s.StealthFound}
}

func readJSON(ctx context.Context, st objstore.Store, key string, limit int64, v any) error {
	rc, _, err := st.Get(ctx, key, nil)
	if err != nil {
		return err
	}
	defer rc.Close()
	if err := json.NewDecoder(io.LimitReader(rc, limit)).Decode(v); err != nil {
		return fmt.Errorf("decode %s: %w", key, err)
	}
	return nil
}

// StreamInfo is one stream in the pipeline view.
type StreamInfo struct {
	Name      string   `json:"name"`
	Subjects  []string `json:"subjects"`
	Messages  uint64   `json:"messages"`
	Bytes     uint64   `json:"bytes"`
	LastSeq   uint64   `json:"last_seq"`
	Consumers int      `json:"consumers"`
}

// ConsumerLag is one consumer's backlog.
type ConsumerLag struct {
	Stream      string     `json:"stream"`
	Name        string     `json:"name"`
	NumPending  uint64     `json:"num_pending"`
	AckPending  int        `json:"num_ack_pending"`
	Redelivered int        `json:"num_redelivered"`
	Waiting     int        `json:"num_waiting"`
	Delivered   uint64     `json:"delivered_stream_seq"`
	AckFloor    uint64     `json:"ack_floor_stream_seq"`
	LastActive  *time.Time `json:"last_active,omitempty"`
}

// DeadLetter is one recent dead-lettered message (its data left out).
type DeadLetter struct {
	Seq        uint64    `json:"seq"`
	Time       time.Time `json:"time"`
	Subject    string    `json:"subject"`
	Original   string    `json:"original_subject"`
	Error      string    `json:"error"`
	Deliveries string    `json:"deliveries"`
}

// DeadLetters counts the dead-letter stream and shows its newest messages.
type DeadLetters struct {
	Stream string       `json:"stream"`
	Count  uint64       `json:"count"`
	Total  uint64       `json:"total"`
	Recent []DeadLetter `json:"recent"`
}

// JobInfo is a scheduled job with its last outcome.
type JobInfo struct {
	Name string     `json:"name"`
	Spec string     `json:"spec"`
	Next *time.Time `json:"next,omitempty"`
	schedule.Status
}

// Pipeline is GET /console/api/pipeline.
type Pipeline struct {
	Streams         []StreamInfo  `json:"streams"`
	Consumers       []ConsumerLag `json:"consumers"`
	DeadLetters     *DeadLetters  `json:"dead_letters"`
	Jobs            []JobInfo     `json:"jobs"`
	Rates           []Point       `json:"rates"`
	IntervalSeconds float64       `json:"interval_seconds"`
}

// recentDead is how many dead letters the pipeline view lists.
const recentDead = 10

func (h *Handler) pipeline(w http.ResponseWriter, r *http.Request) error {
	if h.opt.JS == nil {
		return unavailable("no NATS connection in this role")
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	out := Pipeline{Streams: []StreamInfo{}, Consumers: []ConsumerLag{}, Jobs: []JobInfo{}, Rates: []Point{}}
	for _, name := range h.opt.Streams {
		st, err := h.opt.JS.Stream(ctx, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			return h.natsUnavailable(err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			return h.natsUnavailable(err)
		}
		out.Streams = append(out.Streams, StreamInfo{Name: name, Subjects: info.Config.Subjects, Messages: info.State.Msgs, Bytes: info.State.Bytes,
			LastSeq: info.State.LastSeq, Consumers: info.State.Consumers})
		lister := st.ListConsumers(ctx)
		for ci := range lister.Info() {
			c := ConsumerLag{Stream: name, Name: ci.Name, NumPending: ci.NumPending, AckPending: ci.NumAckPending, Redelivered: ci.NumRedelivered,
				Waiting: ci.NumWaiting, Delivered: ci.Delivered.Stream, AckFloor: ci.AckFloor.Stream}
			if ci.Delivered.Last != nil {
				t := ci.Delivered.Last.UTC()
				c.LastActive = &t
			}
			out.Consumers = append(out.Consumers, c)
		}
		if err := lister.Err(); err != nil {
			return h.natsUnavailable(err)
		}
		if slices.Contains(info.Config.Subjects, "dlq.>") {
			out.DeadLetters = deadLetters(ctx, st, name, info)
		}
	}
	sort.Slice(out.Consumers, func(i, j int) bool {
		a, b := out.Consumers[i], out.Consumers[j]
		return a.Stream < b.Stream || (a.Stream == b.Stream && a.Name < b.Name)
	})
	jobs, err := h.jobs(ctx)
	if err != nil {
		return h.natsUnavailable(err)
	}
	out.Jobs = jobs
	if h.opt.Sampler != nil {
		out.Rates = h.opt.Sampler.Points()
		out.IntervalSeconds = h.opt.Sampler.interval.Seconds()
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// natsUnavailable logs a failure to read the pipeline state and returns
// the 503 that answers it.
func (h *Handler) natsUnavailable(err error) error {
	h.log.Warn("pipeline state unavailable", "err", err)
	return errNATSDown
}

// deadLetters reads the newest messages of the dead-letter stream; a
// message that cannot be read (deleted meanwhile) is skipped.
func deadLetters(ctx context.Context, st jetstream.Stream, name string, info *jetstream.StreamInfo) *DeadLetters {
	d := &DeadLetters{Stream: name, Count: info.State.Msgs, Total: info.State.LastSeq, Recent: []DeadLetter{}}
	// Deleted messages leave gaps: look at no more than 10 times as many.
	tries := 0
	for seq := info.State.LastSeq; seq >= info.State.FirstSeq && seq > 0 && len(d.Recent) < recentDead && tries < 10*recentDead; seq-- {
		tries++
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			continue
		}
		e := m.Header.Get(enrich.ErrorHeader)
		if len(e) > 300 {
			e = e[:300] + "..."
		}
		d.Recent = append(d.Recent, DeadLetter{Seq: m.Sequence, Time: m.Time.UTC(), Subject: m.Subject, Original: m.Header.Get(enrich.SubjectHeader),
			Error: e, Deliveries: m.Header.Get(enrich.DeliveriesHeader)})
	}
	return d
}

// jobs lists this configuration's scheduled jobs with their recorded
// outcome, and any other job a status was recorded for.
func (h *Handler) jobs(ctx context.Context) ([]JobInfo, error) {
	st := map[string]schedule.Status{}
	if h.opt.JobStatus != nil {
		var err error
		if st, err = schedule.ReadStatuses(ctx, h.opt.JobStatus); err != nil {
			return nil, err
		}
	}
	out := []JobInfo{}
	seen := map[string]bool{}
	if h.opt.Jobs != nil {
		for _, j := range h.opt.Jobs() {
			ji := JobInfo{Name: j.Name, Spec: j.Spec, Status: st[j.Name]}
			ji.Status.Job = j.Name
			if !j.Next.IsZero() {
				n := j.Next.UTC()
				ji.Next = &n
			}
			out = append(out, ji)
			seen[j.Name] = true
		}
	}
	for name, s := range st {
		if !seen[name] {
			out = append(out, JobInfo{Name: name, Status: s})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
