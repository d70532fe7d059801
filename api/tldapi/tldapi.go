// Package tldapi serves the TLD RDAP/WHOIS status API: GET /api/status,
// /api/results, /download/json, /download/csv, /download/summary, the
// history (/api/history/{tld}, /api/changes) and the body of /health. It answers from the shared state only (the tldprogress
// bucket and the object store), so every instance gives the same answer.
package tldapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/netintel/netintel/api"
	"github.com/netintel/netintel/internal/httpx"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/probe"
)

// State is what the API reads of the checker (implemented by *probe.Service).
type State interface {
	// Progress returns the live progress (idle before the first run).
	Progress(ctx context.Context) (probe.Progress, error)
	// Published returns the latest publish record; ok is false before the first.
	Published(ctx context.Context) (probe.Published, bool, error)
}

var _ State = (*probe.Service)(nil)

// Options configure the handlers.
type Options struct {
	// Prefix is the object store folder of the results (probe.prefix).
	Prefix string
	// RatePerMinute is the per-client limit (100 in the spec).
	RatePerMinute int
	// TrustProxy takes the client address from X-Forwarded-For.
	TrustProxy bool
	// HistoryRuns is how many runs the probe keeps (probe.history_runs):
	// the history routes cache that many parsed runs.
	HistoryRuns int
	// Limiters makes the per-client limiter: shared by every API copy when
	// it is gateway.AddrLimiters; nil keeps it in this process.
	Limiters httpx.AddrLimiters
}

// Handler serves the TLD status endpoints.
type Handler struct {
	state State
	store objstore.Store
	opt   Options
	lim   httpx.AddrLimiter
	log   *slog.Logger
	now   func() time.Time
	cache *runCache
}

// New returns the handlers over state and store.
func New(state State, store objstore.Store, opt Options, log *slog.Logger) *Handler {
	if opt.RatePerMinute <= 0 {
		opt.RatePerMinute = 100
	}
	if opt.Limiters == nil {
		opt.Limiters = httpx.LocalLimiters
	}
	return &Handler{state: state, store: store, opt: opt, lim: opt.Limiters("tld", float64(opt.RatePerMinute), opt.RatePerMinute),
		log: log.With("stage", "tldapi"), now: time.Now, cache: &runCache{max: max(opt.HistoryRuns, 30) + 2}}
}

// Status is the spec's Status (GET /api/status).
type Status struct {
	WebServer             string       `json:"web_server"`
	TLDCheckerInitialized bool         `json:"tld_checker_initialized"`
	TLDCheckStatus        string       `json:"tld_check_status"`
	ResultsAvailable      int          `json:"results_available"`
	LastUpdate            string       `json:"last_update"`
	Progress              ProgressBody `json:"progress"`
}

// ProgressBody is the spec's progress object.
type ProgressBody struct {
	Status        string `json:"status"`
	CurrentStep   string `json:"current_step"`
	TotalTLDs     int    `json:"total_tlds"`
	ProcessedTLDs int    `json:"processed_tlds"`
	LastUpdate    int64  `json:"last_update"`
}

// TimeFormat is the spec's `YYYY-MM-DD HH:MM:SS` (UTC).
const TimeFormat = "2006-01-02 15:04:05"

// Mount adds the routes to mux.
func (h *Handler) Mount(mux *http.ServeMux) {
	mux.Handle("GET /api/status", h.limit(httpx.Handle(h.log, h.status)))
	mux.Handle("GET /api/results", h.limit(h.results))
	mux.Handle("GET /download/json", h.limit(h.download(probe.LatestJSON, "tld_status_results.json", "application/json")))
	mux.Handle("GET /download/csv", h.limit(h.download(probe.LatestCSV, "tld_status_results.csv", "text/csv; charset=utf-8")))
	mux.Handle("GET /download/summary", h.limit(h.download(probe.LatestSummary, "tld_status_summary.json", "application/json")))
	mux.Handle("GET /api/history/{tld}", h.limit(httpx.Handle(h.log, h.history)))
	mux.Handle("GET /api/changes", h.limit(httpx.Handle(h.log, h.changes)))
	mux.Handle("/api/history/{tld}", httpx.MethodNotAllowed("GET, HEAD"))
	// Any other method: 405 with Allow and the JSON error body (ServeMux
	// alone would answer in plain text).
	for _, p := range []string{"/api/status", "/api/results", "/download/json", "/download/csv", "/download/summary", "/api/changes"} {
		mux.Handle(p, httpx.MethodNotAllowed("GET, HEAD"))
	}
	// Any other path under /api/ or /download/: 404 in the same shape.
	mux.HandleFunc("/api/", notFound)
	mux.HandleFunc("/download/", notFound)
}

func notFound(w http.ResponseWriter, _ *http.Request) {
	// Generic: under `netintel run` every product shares the listener, so
	// this also answers a mistyped /api/ path of another product.
	httpx.Write(w, errNotFound)
}

// Failures answered the same wherever they happen.
var (
	errNotFound  = &httpx.Error{Status: http.StatusNotFound, Code: "not_found", Message: "no such path"}
	errNoResults = &httpx.Error{Status: http.StatusNotFound, Code: "no_results", Message: "no TLD check has been published yet; see /api/status"}
	errStateDown = &httpx.Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "TLD status store is not reachable; try again shortly"}
	errNoStore   = errors.New("no object store in this role")
)

// Health is the /health body: the spec's Health shape. status is "healthy",
// or "degraded" when the shared state cannot be read (the process still
// answers, so it stays a liveness check).
func (h *Handler) Health() any {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	body := api.HealthBody{Status: "healthy", Timestamp: h.now().Unix()}
	pub, _, err := h.state.Published(ctx)
	if err != nil {
		body.Status = "degraded"
		return body
	}
	body.StealthCount = pub.StealthCount
	return body
}

func (h *Handler) limit(next http.HandlerFunc) http.Handler {
	return httpx.RateLimit{Limiter: h.lim, TrustProxy: h.opt.TrustProxy, Log: h.log,
		Down: "the rate limit cannot be checked right now; retry later",
		Exceeded: func(after string) string {
			return "rate limit of " + strconv.Itoa(h.opt.RatePerMinute) + " requests per minute exceeded; retry after " + after + "s"
		}}.Wrap(next)
}

// unavailable logs a failure to read the shared state and returns the 503
// that answers it.
func (h *Handler) unavailable(what string, err error) error {
	h.log.Warn("tld state unavailable", "what", what, "err", err)
	return errStateDown
}

func (h *Handler) status(w http.ResponseWriter, r *http.Request) error {
	p, err := h.state.Progress(r.Context())
	if err != nil {
		return h.unavailable("progress", err)
	}
	pub, ok, err := h.state.Published(r.Context())
	if err != nil {
		return h.unavailable("published", err)
	}
	// Initialized once any check was attempted (the record exists), or results exist.
	st := Status{WebServer: "running", TLDCheckerInitialized: p.Status != probe.StatusIdle || ok, TLDCheckStatus: p.Status,
		LastUpdate: time.Unix(0, 0).UTC().Format(TimeFormat),
		Progress:   ProgressBody{Status: p.Status, CurrentStep: p.CurrentStep, TotalTLDs: p.TotalTLDs, ProcessedTLDs: p.ProcessedTLDs, LastUpdate: p.LastUpdate}}
	if ok {
		st.ResultsAvailable = pub.ResultsAvailable
		st.LastUpdate = time.Unix(pub.LastUpdate, 0).UTC().Format(TimeFormat)
	}
	httpx.WriteJSON(w, http.StatusOK, st)
	return nil
}

// results answers the latest results.json; before the first publish, an
// empty Results document (no results, last_update 0). It streams the
// stored file, so it stays a plain handler.
func (h *Handler) results(w http.ResponseWriter, r *http.Request) {
	rc, info, err := h.open(r.Context(), probe.LatestJSON)
	if errors.Is(err, objstore.ErrNotFound) {
		httpx.WriteJSON(w, http.StatusOK, probe.Results{Results: []probe.Result{}})
		return
	}
	if err != nil {
		httpx.Fail(h.log, w, r, h.unavailable("results", err))
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.FormatInt(info.Size, 10))
	w.Header().Set("Last-Modified", info.ModTime.UTC().Format(http.TimeFormat))
	if _, err := io.Copy(w, rc); err != nil {
		h.log.Debug("write results", "err", err)
	}
}

// open opens the published file name.
func (h *Handler) open(ctx context.Context, name string) (io.ReadCloser, objstore.Info, error) {
	if h.store == nil {
		return nil, objstore.Info{}, errNoStore
	}
	return h.store.Get(ctx, h.opt.Prefix+name, nil)
}

// download serves a published file as an attachment; 404 with a JSON error
// before the first publish. It streams, so it stays a plain handler.
func (h *Handler) download(name, filename, ctype string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rc, info, err := h.open(r.Context(), name)
		if errors.Is(err, objstore.ErrNotFound) {
			err = errNoResults
		} else if err != nil {
			err = h.unavailable(name, err)
		}
		if err != nil {
			httpx.Fail(h.log, w, r, err)
			return
		}
		defer rc.Close()
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Content-Length", strconv.FormatInt(info.Size, 10))
		w.Header().Set("Content-Disposition", `attachment; filename="`+filename+`"`)
		w.Header().Set("Last-Modified", info.ModTime.UTC().Format(http.TimeFormat))
		if _, err := io.Copy(w, rc); err != nil {
			h.log.Debug("write download", "file", name, "err", err)
		}
	}
}
