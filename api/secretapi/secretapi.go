// Package secretapi is the HTTP API of the one-time secret service,
// byte for byte as spec/one-time-secrets.md defines it: POST /api/saveSecret,
// /api/saveFile (single request or chunked), /api/get, /api/getFile,
// /api/secretStatus and /api/ss. The rules of storage and view counting
// live in package secrets; this package parses, limits and answers.
package secretapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/httpx"
	"github.com/netintel/netintel/internal/telemetry"
	"github.com/netintel/netintel/secrets"
)

// Body limits of the spec (section 8), enforced while reading.
const (
	// MaxTextBody caps a saveSecret request body.
	MaxTextBody = 25 << 20
	// MaxUploadBody caps a saveFile request body (single or one slice).
	MaxUploadBody = 100 << 20
	// MaxReadBody caps a get or getFile request body.
	MaxReadBody = 1 << 10
	// MaxStatusBody caps a secretStatus request body.
	MaxStatusBody = 8 << 10
	// MaxStatusIDs is the most ids secretStatus answers for.
	MaxStatusIDs = 128
	// maxField caps one multipart text field.
	maxField = 1 << 10
)

// APIVersion is reported by /api/ss.
const APIVersion = 1

// Options configure the handlers.
type Options struct {
	// TextRate, FileRate and ReadRate are per-client limits; a zero
	// PerMinute disables one.
	TextRate, FileRate, ReadRate config.Rate
	// OpenUploadsPerClient and OpenUploads cap the saveFile requests in
	// progress per client address (429 beyond) and in all (503 beyond);
	// 0 = no cap.
	OpenUploadsPerClient, OpenUploads int
	// MinBodyRate (bytes per second) is the slowest a saveSecret or
	// saveFile body may arrive, with BodyRateWindow of credit (the first
	// bytes may take that long, a pause may last that long); a body
	// that falls behind is cut off with 408. 0 = no minimum.
	MinBodyRate    int
	BodyRateWindow time.Duration
	// TrustProxy takes the client address from X-Forwarded-For.
	TrustProxy bool
	// Registerer, when set, receives netintel_secrets_requests_total
	// (by endpoint and outcome: the spec's status, "method", "rate_limited",
	// "too_many_open", "too_slow" or "unavailable").
	Registerer prometheus.Registerer
	// Limiters makes the per-client rate limiters: shared by every API
	// copy when it is gateway.AddrLimiters; nil keeps them in this process.
	Limiters httpx.AddrLimiters
}

// OptionsFrom builds Options from the config.
func OptionsFrom(c *config.Config) Options {
	return Options{TextRate: c.Secrets.TextRate, FileRate: c.Secrets.FileRate, ReadRate: c.Secrets.ReadRate,
		OpenUploadsPerClient: c.Secrets.OpenUploadsPerClient, OpenUploads: c.Secrets.OpenUploads,
		MinBodyRate: c.Secrets.MinBodyRate, BodyRateWindow: c.Secrets.BodyRateWindow,
		TrustProxy: c.API.TrustProxyHeaders}
}

// Handler serves the API on a Service.
type Handler struct {
	svc              *secrets.Service
	log              *slog.Logger
	text, file, read httpx.AddrLimiter
	open             *openUploads
	minRate          int
	rateWindow       time.Duration
	trustProxy       bool
	outcomes         *prometheus.CounterVec
}

// New returns the handlers.
func New(svc *secrets.Service, opt Options, log *slog.Logger) *Handler {
	limiters := opt.Limiters
	if limiters == nil {
		limiters = httpx.LocalLimiters
	}
	lim := func(scope string, r config.Rate) httpx.AddrLimiter {
		if r.PerMinute <= 0 {
			return nil
		}
		return limiters(scope, r.PerMinute, r.Burst)
	}
	h := &Handler{svc: svc, log: log.With("stage", "secretapi"), text: lim("secret-text", opt.TextRate), file: lim("secret-file", opt.FileRate),
		read: lim("secret-read", opt.ReadRate), trustProxy: opt.TrustProxy, minRate: opt.MinBodyRate, rateWindow: opt.BodyRateWindow}
	if opt.OpenUploadsPerClient > 0 || opt.OpenUploads > 0 {
		h.open = newOpenUploads(opt.OpenUploadsPerClient, opt.OpenUploads)
	}
	if opt.Registerer != nil {
		h.outcomes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netintel_secrets_requests_total",
			Help: "One-time secret API requests by endpoint and outcome."}, []string{"endpoint", "outcome"})
		h.outcomes = telemetry.MustRegister(opt.Registerer, h.outcomes)
		telemetry.Zero(h.outcomes, []string{"saveSecret", "saveFile", "get", "getFile", "secretStatus", "ss"}, []string{"ok", "error"})
	}
	return h
}

// Mount adds the six endpoints to mux. Every method is routed here so that
// a method other than POST answers 405 with Allow: POST and a JSON body.
func (h *Handler) Mount(mux *http.ServeMux) {
	mux.Handle("/api/saveSecret", h.endpoint("saveSecret", h.text, saveError, h.saveSecret))
	mux.Handle("/api/saveFile", h.endpoint("saveFile", h.file, plainError, h.saveFile))
	mux.Handle("/api/get", h.endpoint("get", h.read, plainError, h.get))
	mux.Handle("/api/getFile", h.endpoint("getFile", h.read, plainError, h.getFile))
	mux.Handle("/api/secretStatus", h.endpoint("secretStatus", h.read, plainError, h.secretStatus))
	mux.Handle("/api/ss", h.endpoint("ss", nil, plainError, h.ss))
}

// statusBody is every JSON answer of the API; fields are left out when unset.
type statusBody struct {
	Status         string `json:"status"`
	NewID          string `json:"newId,omitempty"`
	CryptedMessage string `json:"cryptedMessage,omitempty"`
	ViewsLeft      *int   `json:"viewsLeft,omitempty"`
	ExpiresIn      *int64 `json:"expiresIn,omitempty"`
}

// Status values of the spec.
const (
	stOK        = "ok"
	stError     = "error"
	stWrongKey  = "wrong key"
	stNoMessage = "no message"
	stRetry     = "retry"
)

func saveError(w http.ResponseWriter, code int) {
	writeJSON(w, code, statusBody{Status: stError, NewID: "0"})
}

func plainError(w http.ResponseWriter, code int) {
	writeJSON(w, code, statusBody{Status: stError})
}

// setOutcome overrides the outcome label of the answer written to w.
func setOutcome(w http.ResponseWriter, outcome string) {
	if ow, ok := w.(*outcomeWriter); ok {
		ow.outcome = outcome
	}
}

// slowBody answers a body cut off under the minimum rate: 408, and the
// connection is closed (the rest of the body is not read).
func slowBody(w http.ResponseWriter, fail func(http.ResponseWriter, int)) {
	w.Header().Set("Connection", "close")
	fail(w, http.StatusRequestTimeout)
	setOutcome(w, "too_slow")
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	if ow, ok := w.(*outcomeWriter); ok {
		if sb, ok := v.(statusBody); ok {
			ow.outcome = sb.Status
		}
	}
	httpx.WriteJSON(w, code, v)
}

// outcomeWriter remembers the status field of the JSON answer for the
// outcome metric.
type outcomeWriter struct {
	http.ResponseWriter
	outcome string
}

// ReadFrom keeps the underlying writer's fast path (sendfile) for files.
func (o *outcomeWriter) ReadFrom(r io.Reader) (int64, error) { return io.Copy(o.ResponseWriter, r) }

// Unwrap lets http.ResponseController reach the underlying writer.
func (o *outcomeWriter) Unwrap() http.ResponseWriter { return o.ResponseWriter }

// endpoint applies what every endpoint shares: POST only, no caching, the
// per-client rate limit.
func (h *Handler) endpoint(name string, lim httpx.AddrLimiter, fail func(http.ResponseWriter, int), next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		outcome := ""
		defer func() {
			if h.outcomes != nil {
				h.outcomes.WithLabelValues(name, outcome).Inc()
			}
		}()
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			fail(w, http.StatusMethodNotAllowed)
			outcome = "method"
			return
		}
		if lim != nil {
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			ok, wait, err := lim.Take(ctx, httpx.ClientIP(r, h.trustProxy))
			cancel()
			if err != nil {
				h.log.Warn("rate limit unavailable", "endpoint", name, "err", err)
				w.Header().Set("Retry-After", "5")
				fail(w, http.StatusServiceUnavailable)
				outcome = "unavailable"
				return
			}
			if !ok {
				w.Header().Set("Retry-After", httpx.RetryAfter(wait))
				fail(w, http.StatusTooManyRequests)
				outcome = "rate_limited"
				return
			}
		}
		ow := &outcomeWriter{ResponseWriter: w}
		next(ow, r)
		outcome = ow.outcome
		if outcome == "" {
			outcome = stOK // file download, status, capabilities
		}
	})
}

// tooLarge reports whether err came from a body over its limit.
func tooLarge(err error) bool {
	var mb *http.MaxBytesError
	return errors.As(err, &mb)
}

func (h *Handler) ss(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"apiVersion":  APIVersion,
		"saveSchemes": []int{secrets.SchemeV0, secrets.SchemeV3},
		"chunkSize":   secrets.SliceSize,
		"maxChunks":   secrets.MaxSlices,
		"maxViews":    secrets.MaxViews,
		"maxDuration": secrets.MaxDuration,
		"maxUpload":   MaxUploadBody,
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
