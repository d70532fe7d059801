package ingest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/decompress"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/telemetry"
)

// Publisher sends observations to JetStream asynchronously with
// bus.Publisher: at most maxInFlight unacknowledged at a time, each with
// its message id so the stream's duplicate window stores a repeated
// observation once, and a publish that fails or goes unacknowledged (a
// stream leader dying, a reconnect) sent again with the same message id
// until the stream stores it or RetryFor passes, so a failover loses
// nothing and doubles nothing. Its counters (Published, Duplicates,
// Resent) and limits (RetryFor, AckWait) are bus.Publisher's.
type Publisher struct {
	*bus.Publisher
}

// Metrics are the ingest counters on /metrics.
type Metrics struct {
	published  *prometheus.CounterVec
	duplicates *prometheus.CounterVec
	bad        *prometheus.CounterVec
	skipped    *prometheus.CounterVec
}

// NewMetrics registers the ingest counters on reg (nil = not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		published:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netintel_ingest_observations_total", Help: "Observations stored on the OBSERVATIONS stream, by format."}, []string{"format"}),
		duplicates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netintel_ingest_duplicates_total", Help: "Observations the stream already held (same message id), by format."}, []string{"format"}),
		bad:        prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netintel_ingest_malformed_total", Help: "Malformed feed records skipped, by format."}, []string{"format"}),
		skipped:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netintel_ingest_skipped_total", Help: "Well-formed records deliberately not stored (a zgrab2 module that failed, a flow with no protocol recognised), by format."}, []string{"format"}),
	}
	// Registered (or the process's existing copies taken), and every
	// format's series shown at 0 from start.
	for _, v := range []**prometheus.CounterVec{&m.published, &m.duplicates, &m.bad, &m.skipped} {
		*v = telemetry.MustRegister(reg, *v)
		telemetry.Zero(*v, config.IngestFormats)
	}
	return m
}

// NewPublisher returns a publisher; maxInFlight <= 0 means 1024, and it
// is capped at 2048.
func NewPublisher(js jetstream.JetStream, maxInFlight int) *Publisher {
	return &Publisher{bus.NewPublisher(js, maxInFlight)}
}

// Publish sends a normalized observation; the stream's acknowledgement is
// checked by a later Publish or by Flush.
func (p *Publisher) Publish(ctx context.Context, o *Observation) error {
	data, id, err := o.Encode()
	if err != nil {
		return err
	}
	return p.PublishRaw(ctx, o.Subject(), id, data)
}

// PublishRaw sends an already encoded observation with its message id
// ("" sends none, so the stream does not de-duplicate it).
func (p *Publisher) PublishRaw(ctx context.Context, subject, id string, data []byte) error {
	if err := p.Publisher.Publish(ctx, subject, id, data); err != nil {
		return fmt.Errorf("publish observations: %w", err)
	}
	return nil
}

// Flush waits until the stream has stored every pending observation,
// sending again (same message id) whatever failed or went unacknowledged.
func (p *Publisher) Flush(ctx context.Context) error {
	if err := p.Publisher.Flush(ctx); err != nil {
		return fmt.Errorf("publish observations: %w", err)
	}
	return nil
}

// Stats summarises one ingest run.
type Stats struct {
	Format     string
	Read       int // valid observations read
	Published  int // stored by the stream
	Duplicates int // already stored (same message id)
	Malformed  []LineError
	// Skipped counts the well-formed records not stored, by reason
	// (Options.Skipped): a zgrab2 module that failed, a closed port.
	Skipped map[string]int
	// Warnings are the records stored without something they had
	// (Options.Warn: an unknown member), the first maxReportedErrors.
	Warnings []LineError
	// LastSeq maps each subject published on to the highest stream
	// sequence of its observations (bus.Publisher.Last): enrichment has
	// applied the whole feed once every enrich consumer has acknowledged
	// that far (enrich.WaitApplied).
	LastSeq map[string]uint64
	// Bytes is how many bytes of the file or response were read.
	Bytes int64
}

func (s Stats) String() string {
	out := fmt.Sprintf("%s: %d observations read, %d stored, %d duplicates, %d malformed", s.Format, s.Read, s.Published, s.Duplicates, len(s.Malformed))
	if len(s.Skipped) > 0 {
		reasons := make([]string, 0, len(s.Skipped))
		n := 0
		for r, c := range s.Skipped {
			reasons = append(reasons, fmt.Sprintf("%s: %d", r, c))
			n += c
		}
		slices.Sort(reasons)
		out += fmt.Sprintf("; skipped %d records (%s)", n, strings.Join(reasons, "; "))
	}
	if len(s.Warnings) > 0 {
		out += fmt.Sprintf("; %d stored with a warning", len(s.Warnings))
	}
	return out
}

// maxReportedErrors bounds the malformed lines kept in Stats.
const maxReportedErrors = 1000

// Ingester runs adapters against a source and publishes what they read.
type Ingester struct {
	js          jetstream.JetStream
	log         *slog.Logger
	metrics     *Metrics
	maxInFlight int
	timeout     time.Duration
	client      *http.Client
	// now is the clock a fetch's listed_at is read from (tests set it).
	now func() time.Time
	// out, when set, receives every observation as a JSON line instead
	// of the stream (NewDryRun).
	out io.Writer
}

// New returns an ingester publishing to js. reg may be nil.
func New(js jetstream.JetStream, log *slog.Logger, reg prometheus.Registerer, maxInFlight int, fetchTimeout time.Duration) *Ingester {
	if fetchTimeout <= 0 {
		fetchTimeout = 2 * time.Minute
	}
	return &Ingester{js: js, log: log.With("stage", "ingest"), metrics: NewMetrics(reg), maxInFlight: maxInFlight,
		timeout: fetchTimeout, client: &http.Client{Timeout: fetchTimeout}, now: time.Now}
}

// NewDryRun returns an ingester that publishes nothing: it writes every
// valid observation to w as one JSON line, as the stream would store it
// (what the observations format reads back). Stats.Published counts the
// lines written; nothing is de-duplicated.
func NewDryRun(w io.Writer, log *slog.Logger, fetchTimeout time.Duration) *Ingester {
	in := New(nil, log, nil, 0, fetchTimeout)
	in.out = w
	return in
}

// SetClock replaces the clock IngestFile reads a fetch's time (listed_at)
// from; for tests that run days of fake time.
func (in *Ingester) SetClock(now func() time.Time) { in.now = now }

// ErrUnknownFormat is returned for a format no adapter reads.
var ErrUnknownFormat = errors.New("unknown format")

// IngestFile reads the file or http(s) URL at location in format and
// publishes every valid observation. Malformed records are logged with
// their line number, counted and skipped. Unless opt sets them,
// observed_at of a feed without times is the file's modification time
// (or Last-Modified), and, for a list feed (config.IngestListFormats),
// listed_at is the time of this fetch. Scanner output, flow records and
// observation files say when they saw a thing; reading them again says
// nothing new, so they get no listed_at.
func (in *Ingester) IngestFile(ctx context.Context, format, location string, opt Options) (Stats, error) {
	rc, mod, size, err := in.open(ctx, location)
	if err != nil {
		return Stats{Format: format}, err
	}
	defer rc.Close()
	if opt.ObservedAt.IsZero() {
		opt.ObservedAt = mod
	}
	if opt.ListedAt.IsZero() && slices.Contains(config.IngestListFormats, format) {
		opt.ListedAt = in.now().Truncate(time.Second)
	}
	cr := &countingReader{r: rc, total: size, progress: opt.Progress}
	st, err := in.Ingest(ctx, format, cr, opt)
	st.Bytes = cr.n
	if opt.Progress != nil {
		opt.Progress(cr.n, size)
	}
	return st, err
}

// countingReader counts the bytes read through it and reports them.
type countingReader struct {
	r        io.Reader
	n, told  int64
	total    int64
	progress func(read, total int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.progress != nil && c.n-c.told >= 64<<10 {
		c.told = c.n
		c.progress(c.n, c.total)
	}
	return n, err
}

// Ingest reads r in format and publishes every valid observation. A
// gzip, bzip2 or zstd r is decompressed first (decompress.Reader): a
// truncated one publishes the records before the damage, then fails.
func (in *Ingester) Ingest(ctx context.Context, format string, r io.Reader, opt Options) (Stats, error) {
	st := Stats{Format: format}
	ad, ok := Adapters()[format]
	if !ok {
		return st, fmt.Errorf("%w %q: use one of %s", ErrUnknownFormat, format, strings.Join(config.IngestFormats, ", "))
	}
	userSkipped := opt.Skipped
	opt.Skipped = func(line int, reason string) {
		if st.Skipped == nil {
			st.Skipped = map[string]int{}
		}
		st.Skipped[reason]++
		if userSkipped != nil {
			userSkipped(line, reason)
		}
	}
	userWarn := opt.Warn
	opt.Warn = func(line int, msg string) {
		if len(st.Warnings) < maxReportedErrors {
			st.Warnings = append(st.Warnings, LineError{line, errors.New(msg)})
			in.log.Warn("record stored with a warning", "format", format, "line", line, "warning", msg)
		}
		if userWarn != nil {
			userWarn(line, msg)
		}
	}
	dr, err := decompress.Reader(r)
	if err != nil {
		return st, fmt.Errorf("read %s: %w", format, err)
	}
	defer dr.Close()
	r = dr
	var pub *Publisher
	var write *bufio.Writer
	if in.out != nil {
		write = bufio.NewWriterSize(in.out, 64<<10)
	} else {
		pub = NewPublisher(in.js, in.maxInFlight)
	}
	var listed string
	if !opt.ListedAt.IsZero() {
		listed = ipmodel.FormatTime(opt.ListedAt)
	}
	err = ad(r, opt, func(_ int, o Observation) error {
		st.Read++
		if o.ListedAt == "" {
			o.ListedAt = listed
		}
		if c := ipmodel.MoreRestricted(o.Class, opt.Class); c != ipmodel.DataStandard {
			o.Class = c
		}
		if write == nil {
			return pub.Publish(ctx, &o)
		}
		data, _, err := o.Encode()
		if err != nil {
			return err
		}
		st.Published++
		write.Write(data)
		return write.WriteByte('\n')
	}, func(le LineError) {
		in.metrics.bad.WithLabelValues(format).Inc()
		if len(st.Malformed) < maxReportedErrors {
			st.Malformed = append(st.Malformed, le)
			in.log.Warn("malformed record skipped", "format", format, "line", le.Line, "err", le.Err)
		}
	})
	var ferr error
	if write != nil {
		if ferr = write.Flush(); ferr != nil {
			ferr = fmt.Errorf("write observations: %w", ferr)
		}
	} else {
		ferr = pub.Flush(ctx)
		st.Published, st.Duplicates, st.LastSeq = pub.Published, pub.Duplicates, pub.Last
	}
	in.metrics.published.WithLabelValues(format).Add(float64(st.Published))
	in.metrics.duplicates.WithLabelValues(format).Add(float64(st.Duplicates))
	skipped := 0
	for _, n := range st.Skipped {
		skipped += n
	}
	in.metrics.skipped.WithLabelValues(format).Add(float64(skipped))
	if err := errors.Join(err, ferr); err != nil {
		return st, err
	}
	in.log.Info("ingested", "format", format, "read", st.Read, "stored", st.Published, "duplicates", st.Duplicates, "malformed", len(st.Malformed), "skipped", skipped)
	return st, nil
}

// open returns the content at location, its modification time (file
// mtime or Last-Modified), truncated to seconds, zero when unknown, and
// its size (-1 when unknown).
func (in *Ingester) open(ctx context.Context, location string) (io.ReadCloser, time.Time, int64, error) {
	if strings.HasPrefix(location, "http://") || strings.HasPrefix(location, "https://") {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, location, nil)
		if err != nil {
			return nil, time.Time{}, -1, fmt.Errorf("fetch %s: %w", location, err)
		}
		resp, err := in.client.Do(req)
		if err != nil {
			return nil, time.Time{}, -1, fmt.Errorf("fetch %s: %w", location, err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, time.Time{}, -1, fmt.Errorf("fetch %s: status %s", location, resp.Status)
		}
		mod, _ := http.ParseTime(resp.Header.Get("Last-Modified"))
		return resp.Body, mod, resp.ContentLength, nil
	}
	f, err := os.Open(location)
	if err != nil {
		return nil, time.Time{}, -1, fmt.Errorf("open feed: %w", err)
	}
	var mod time.Time
	size := int64(-1)
	if fi, err := f.Stat(); err == nil {
		mod = fi.ModTime().Truncate(time.Second)
		if fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	return f, mod, size, nil
}

// SourceOptions are the options a configured source is read with.
func SourceOptions(src config.IngestSource, cfg config.Ingest) Options {
	return Options{Source: strings.ToLower(src.Name), Kind: src.Kind, Provider: src.Provider, Confidence: src.Confidence, Class: src.Class, MaxLineBytes: cfg.MaxLineBytes}
}
