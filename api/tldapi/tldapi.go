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
	mux.Handle("GET /api/status", h.limit(h.status))
	mux.Handle("GET /api/results", h.limit(h.results))
	mux.Handle("GET /download/json", h.limit(h.download(probe.LatestJSON, "tld_status_results.json", "application/json")))
	mux.Handle("GET /download/csv", h.limit(h.download(probe.LatestCSV, "tld_status_results.csv", "text/csv; charset=utf-8")))
	mux.Handle("GET /download/summary", h.limit(h.download(probe.LatestSummary, "tld_status_summary.json", "application/json")))
	mux.Handle("GET /api/history/{tld}", h.limit(h.history))
	mux.Handle("GET /api/changes", h.limit(h.changes))
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
	httpx.WriteError(w, http.StatusNotFound, "not_found", "no such path")
}

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
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		ok, wait, err := h.lim.Take(ctx, httpx.ClientIP(r, h.opt.TrustProxy))
		cancel()
		if err != nil {
			h.log.Warn("rate limit unavailable", "err", err)
			w.Header().Set("Retry-After", "5")
			httpx.WriteError(w, http.StatusServiceUnavailable, "unavailable", "the rate limit cannot be checked right now; retry later")
			return
		}
		if !ok {
			w.Header().Set("Retry-After", httpx.RetryAfter(wait))
			httpx.WriteError(w, http.StatusTooManyRequests, "rate_limited",
				"rate limit of "+strconv.Itoa(h.opt.RatePerMinute)+" requests per minute exceeded; retry after "+httpx.RetryAfter(wait)+"s")
			return
		}
		next(w, r)
	})
}

func (h *Handler) unavailable(w http.ResponseWriter, what string, err error) {
	h.log.Warn("tld state unavailable", "what", what, "err", err)
	httpx.WriteError(w, http.StatusServiceUnavailable, "unavailable", "TLD status store is not reachable; try again shortly")
}

func (h *Handler) status(w http.ResponseWriter, r *http.Request) {
	p, err := h.state.Progress(r.Context())
	if err != nil {
		h.unavailable(w, "progress", err)
		return
	}
	pub, ok, err := h.state.Published(r.Context())
	if err != nil {
		h.unavailable(w, "published", err)
		return
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
}

// results answers the latest results.json; before the first publish, an
// empty Results document (no results, last_update 0).
func (h *Handler) results(w http.ResponseWriter, r *http.Request) {
	if h.store == nil {
		h.unavailable(w, "results", errors.New("no object store in this role"))
		return
	}
	rc, info, err := h.store.Get(r.Context(), h.opt.Prefix+probe.LatestJSON, nil)
	if errors.Is(err, objstore.ErrNotFound) {
		httpx.WriteJSON(w, http.StatusOK, probe.Results{Results: []probe.Result{}})
		return
	}
	if err != nil {
		h.unavailable(w, "results", err)
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

// download serves a published file as an attachment; 404 with a JSON error
// before the first publish.
func (h *Handler) download(name, filename, ctype string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if h.store == nil {
			h.unavailable(w, name, errors.New("no object store in this role"))
			return
		}
		rc, info, err := h.store.Get(r.Context(), h.opt.Prefix+name, nil)
		if errors.Is(err, objstore.ErrNotFound) {
			httpx.WriteError(w, http.StatusNotFound, "no_results", "no TLD check has been published yet; see /api/status")
			return
		}
		if err != nil {
			h.unavailable(w, name, err)
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
