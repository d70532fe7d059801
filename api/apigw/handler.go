// Package gateway is the HTTP side of the customer gateway: it serves the
// customer paths under /api/v1/vpn/, authenticates the key (Option A:
// Authorization: Bearer; Option B: ?apiKey= with an external validation
// service), applies tier, rate limit and quota, and forwards to the backend
// with X-Internal-Key, X-Tier, X-User-Id and X-Quota-Used. The logic lives in
// package github.com/netintel/netintel/gateway; docs/gateway.md is the contract.
package apigw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	gw "github.com/netintel/netintel/gateway"
	"github.com/netintel/netintel/internal/httpx"
	"github.com/netintel/netintel/internal/telemetry"
)

// Internal headers the backend trusts. Customer copies are dropped.
const (
	HeaderInternalKey = "X-Internal-Key"
	HeaderTier        = "X-Tier"
	HeaderUserID      = "X-User-Id"
	HeaderQuotaUsed   = "X-Quota-Used"
)

var internalHeaders = []string{HeaderInternalKey, HeaderTier, HeaderUserID, HeaderQuotaUsed}

// MaxBatch is the most addresses a batch may hold (spec section 8).
const MaxBatch = 100

// Options configure a Handler.
type Options struct {
	Keys  *gw.Keys
	Usage *gw.Usage
	// Validator enables Option B (?apiKey=); nil disables it.
	Validator *gw.Validator
	// Backend is the base URL requests are forwarded to.
	Backend *url.URL
	// BackendHandler, when set, serves the backend in this process: the
	// gateway calls it directly, with the request it would have forwarded,
	// and Backend, Transport and BackendTimeout are not used.
	BackendHandler http.Handler
	// Transport reaches the backend; nil is an http.Transport with
	// BackendTimeout as its response header timeout.
	Transport      http.RoundTripper
	BackendTimeout time.Duration
	// InternalKey is sent as X-Internal-Key.
	InternalKey string
	// Limits returns a tier's limits.
	Limits func(tier string) gw.Limits
	// MaxBodyBytes caps request bodies (default 1 MiB).
	MaxBodyBytes int64
	// StateTimeout bounds the NATS work of one request (a key read on a
	// cache miss, the usage compare-and-set); past it the request fails
	// closed with 503. Default 2s.
	StateTimeout time.Duration
	// TrustProxy keeps the X-Forwarded-For chain a load balancer in front
	// of the gateway sent (api.trust_proxy_headers); else it is replaced.
	TrustProxy bool
	Log        *slog.Logger
	// Registerer receives the gateway metrics; nil skips them.
	Registerer prometheus.Registerer
	// OpenAPIServers returns the base URLs the customer OpenAPI document
	// at /openapi.json names (from the configuration); nil names "/".
	OpenAPIServers func() Servers
}

// Handler serves the customer paths.
type Handler struct {
	o       Options
	log     *slog.Logger
	proxy   *httputil.ReverseProxy
	results *prometheus.CounterVec
	own     *http.ServeMux // the customer paths alone, for ServeHTTP
	// fwdA and fwdB count forwarded requests (looked up once, not per request).
	fwdA, fwdB prometheus.Counter
}

func (h *Handler) forwarded(option string) prometheus.Counter {
	if option == "b" {
		return h.fwdB
	}
	return h.fwdA
}

// route is one customer path and where it goes.
type route struct {
	pattern string
	method  string
	// backend maps the request to the backend path.
	backend func(r *http.Request) string
	// minTier returns the lowest tier allowed, "" for any.
	minTier func(r *http.Request) string
	batch   bool
}

// Routes is the customer → backend path map (docs/gateway.md).
var routes = []route{
	// The single-address classification (with the address's assets).
	{pattern: "/api/v1/vpn/ip/{ip}", method: http.MethodGet,
		backend: func(r *http.Request) string { return "/api/v1/ip/" + url.PathEscape(r.PathValue("ip")) }},
	// The asset lookup (spec's LookupResult; 404 without assets).
	{pattern: "/api/v1/vpn/shadow_vpn/lookup/{ip}", method: http.MethodGet,
		backend: func(r *http.Request) string { return "/api/v1/shadow_vpn/lookup/" + url.PathEscape(r.PathValue("ip")) }},
	{pattern: "/api/v1/vpn/ip/batch", method: http.MethodPost, batch: true,
		backend: func(*http.Request) string { return "/api/v1/ip/batch" }},
	{pattern: "/api/v1/vpn/batch", method: http.MethodPost, batch: true,
		backend: func(*http.Request) string { return "/api/v1/ip/batch" }},
	{pattern: "/api/v1/vpn/export/csv", method: http.MethodGet,
		backend: func(*http.Request) string { return "/api/v1/export/csv" },
		minTier: func(*http.Request) string { return "pro" }},
	{pattern: "/api/v1/vpn/export/dataset", method: http.MethodGet,
		backend: func(*http.Request) string { return "/api/v1/export/dataset" },
		minTier: datasetTier},
	{pattern: "/api/v1/vpn/export/dataset/{rest...}", method: http.MethodGet,
		backend: func(r *http.Request) string { return "/api/v1/export/dataset/" + escapeRest(r.PathValue("rest")) },
		minTier: datasetTier},
}

func escapeRest(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// datasetTier: MMDB and Parquet downloads need business (spec 1.4); the
// backend gates the rest of the dataset feed from X-Tier.
func datasetTier(r *http.Request) string {
	p := strings.ToLower(r.PathValue("rest") + " " + r.URL.Query().Get("format"))
	if strings.Contains(p, "mmdb") || strings.Contains(p, "parquet") {
		return "business"
	}
	return ""
}

// New returns a gateway handler.
func New(o Options) *Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.BackendTimeout <= 0 {
		o.BackendTimeout = 60 * time.Second
	}
	if o.StateTimeout <= 0 {
		o.StateTimeout = 2 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{o: o, log: o.Log.With("stage", "gateway")}
	tr := o.Transport
	if tr == nil {
		tr = &http.Transport{
			Proxy:                 nil,
			MaxIdleConns:          512,
			MaxIdleConnsPerHost:   256,
			IdleConnTimeout:       90 * time.Second,
			ResponseHeaderTimeout: o.BackendTimeout,
		}
	}
	h.proxy = &httputil.ReverseProxy{
		Rewrite:        h.rewrite,
		Transport:      tr,
		FlushInterval:  100 * time.Millisecond,
		ModifyResponse: h.modifyResponse,
		ErrorHandler:   h.proxyError,
	}
	h.results = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "netintel_gateway_requests_total",
		Help: "Gateway requests by outcome (forwarded, unauthorized, forbidden, rate_limited, quota_exceeded, ...) and option (a, b).",
	}, []string{"outcome", "option"})
	h.results = telemetry.MustRegister(o.Registerer, h.results)
	telemetry.Zero(h.results, []string{"forwarded", "unauthorized", "forbidden", "rate_limited", "quota_exceeded", "no_credits",
		"unavailable", "backend_error", "bad_request", "not_found"}, []string{"a", "b"})
	h.fwdA, h.fwdB = h.results.WithLabelValues("forwarded", "a"), h.results.WithLabelValues("forwarded", "b")
	h.own = http.NewServeMux()
	h.Mount(h.own)
	return h
}

// Mount registers the customer paths on mux.
func (h *Handler) Mount(mux *http.ServeMux) {
	for _, rt := range routes {
		mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) { h.serve(rt, w, r) })
	}
	mux.HandleFunc("GET "+PathOpenAPI, httpx.Handle(h.log, openAPIHandler(h.o.OpenAPIServers)))
	mux.Handle(PathOpenAPI, httpx.MethodNotAllowed("GET, HEAD"))
	mux.HandleFunc("/api/v1/vpn/", func(w http.ResponseWriter, r *http.Request) {
		h.refuse(w, r, "", errNoPath)
	})
}

// ServeHTTP serves the customer paths on their own (tests, benchmarks).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.own.ServeHTTP(w, r) }

// setBackendHeaders strips the customer's credentials and any internal
// header the request brought, and sets the ones the backend trusts: the
// internal key, the key's tier and user, the credits used.
func (h *Handler) setBackendHeaders(hd http.Header, f *forward) {
	hd.Del("Authorization")
	hd.Del("Cookie")
	for _, k := range internalHeaders {
		hd.Del(k)
	}
	hd.Set(HeaderInternalKey, h.o.InternalKey)
	hd.Set(HeaderTier, f.rec.Tier)
	hd.Set(HeaderUserID, f.rec.User)
	hd.Set(HeaderQuotaUsed, strconv.FormatInt(f.charge.Used, 10))
}

// Failures answered the same wherever they happen.
var (
	// errBackendRefused is the 502 of a backend that refused the gateway
	// (its internal key): a gateway's misconfiguration, never the customer's.
	errBackendRefused = &httpx.Error{Status: http.StatusBadGateway, Code: "backend_unavailable", Message: "the backend refused the gateway; nothing was charged"}
	errBackendDown    = &httpx.Error{Status: http.StatusBadGateway, Code: "backend_unavailable", Message: "the backend did not answer; nothing was charged"}
	errNoPath         = &httpx.Error{Status: http.StatusNotFound, Code: "not_found", Message: "no such gateway path; see docs/gateway.md"}
	errBadScheme      = unauthorized("malformed_key", "Authorization must be: Bearer svc_vpn_<key-id>_<key-secret>")
	errMissingKey     = unauthorized("missing_key", "send Authorization: Bearer <API key>")
	errMalformedKey   = unauthorized("malformed_key", "API keys look like svc_vpn_<key-id>_<key-secret>")
	errRevokedKey     = unauthorized("revoked_key", "this API key was revoked")
	errExpiredKey     = unauthorized("expired_key", "this API key was rotated and its overlap ended; use the new key")
	errUnknownKey     = unauthorized("invalid_key", "unknown API key")
	errKeysDown       = unavailable("unavailable", "the gateway cannot check keys right now; retry later")
	errUsageDown      = unavailable("unavailable", "the gateway cannot count usage right now; nothing was charged, retry later")
	errValidationDown = unavailable("validation_unavailable", "the key validation service did not answer; nothing was charged, retry later")
	errNoCredits      = &httpx.Error{Status: http.StatusPaymentRequired, Code: "no_credits", Message: "the subscription has not enough credits for this request"}
	errInactive       = &httpx.Error{Status: http.StatusForbidden, Code: "subscription_inactive", Message: "the subscription is not active"}
	errBadBody        = &httpx.Error{Status: http.StatusBadRequest, Code: "bad_body", Message: "could not read the request body"}
)

func unauthorized(code, msg string) *httpx.Error {
	return &httpx.Error{Status: http.StatusUnauthorized, Code: code, Message: msg}
}

// unavailable is a 503 of a state the gateway could not reach: the
// customer may retry in 5 seconds.
func unavailable(code, msg string) *httpx.Error {
	return &httpx.Error{Status: http.StatusServiceUnavailable, Code: code, Message: msg, RetryAfter: "5"}
}

// outcome is the metrics label of a refused request, from its answer.
func outcome(e *httpx.Error) string {
	switch e.Status {
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusPaymentRequired:
		return "no_credits"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusTooManyRequests:
		return e.Code // rate_limited or quota_exceeded
	case http.StatusBadGateway:
		return "backend_error"
	case http.StatusServiceUnavailable:
		return "unavailable"
	}
	return "bad_request" // 400, 405, 413
}

// refuse answers the failure err of a request made with option (a metrics
// label, empty before the credentials are read) and counts its outcome; a
// 401 names the Bearer scheme. Every refusal of the gateway goes through
// here.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, option string, err error) {
	var e *httpx.Error
	if errors.As(err, &e) {
		h.results.WithLabelValues(outcome(e), option).Inc()
		if e.Status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="netintel"`)
		}
	}
	httpx.Fail(h.log, w, r, err)
}

// forward is what the proxy needs of one authorised request.
type forward struct {
	path    string
	query   string
	rec     *gw.Record
	charge  gw.Charge
	credits int64
	option  string
	limits  gw.Limits
}

type ctxKey struct{}

// serve admits the request and forwards it to the backend, whose answer
// streams through: it stays a plain handler, every refusal answered by
// refuse.
func (h *Handler) serve(rt route, w http.ResponseWriter, r *http.Request) {
	f, option, err := h.admit(rt, w, r)
	if err != nil {
		h.refuse(w, r, option, err)
		return
	}
	if h.o.BackendHandler != nil {
		h.serveInProcess(w, r, f)
		return
	}
	h.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, f)))
}

// admit checks the request's method, path, key, tier, limits and (Option
// B) credits, and returns what forwarding it needs; or the failure to
// answer, with the credential option it was made with (empty before the
// credentials are read).
func (h *Handler) admit(rt route, w http.ResponseWriter, r *http.Request) (*forward, string, error) {
	if r.Method != rt.method && !(rt.method == http.MethodGet && r.Method == http.MethodHead) {
		allow := rt.method
		if allow == http.MethodGet {
			allow = "GET, HEAD" // HEAD is served wherever GET is
		}
		w.Header().Set("Allow", allow)
		return nil, "", &httpx.Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed", Message: "use " + allow}
	}
	// A value holding "." or ".." segments (sent as %2F) would reach the
	// backend as a path its mux cleans and redirects: not a gateway path.
	backendPath := rt.backend(r)
	if path.Clean(backendPath) != backendPath {
		return nil, "", errNoPath
	}
	// Credentials: Option A first; Option B only with a validation service.
	option, raw := "a", ""
	if a := r.Header.Get("Authorization"); a != "" {
		scheme, tok, _ := strings.Cut(strings.TrimSpace(a), " ")
		if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
			return nil, option, errBadScheme
		}
		raw = strings.TrimSpace(tok)
	} else if k := r.URL.Query().Get("apiKey"); k != "" && h.o.Validator != nil {
		option, raw = "b", k
	}
	if raw == "" {
		return nil, option, errMissingKey
	}
	sctx := withLazyDeadline(r.Context(), h.o.StateTimeout)
	defer sctx.release()
	rec, err := h.o.Keys.Authenticate(sctx, raw)
	if err != nil {
		if id, _, perr := gw.ParseKey(raw); perr == nil {
			h.log.Debug("key refused", "key_id", id, "reason", err.Error())
		}
		return nil, option, h.authError(err)
	}
	log := h.log
	if log.Enabled(r.Context(), slog.LevelDebug) {
		log = keyLog(log, rec)
		log.Debug("request", "route", rt.pattern, "option", option)
	}
	if need := minTier(rt, r); need != "" && gw.TierRank(rec.Tier) < gw.TierRank(need) {
		log.Debug("tier too low", "path", rt.pattern, "required_tier", need)
		return nil, option, &httpx.Error{Status: http.StatusForbidden, Code: "tier_required",
			Message: fmt.Sprintf("this endpoint needs tier %s or above; this key's tier is %s", need, rec.Tier), RequiredTier: need}
	}
	credits := int64(1)
	var body []byte
	if rt.batch {
		b, n, err := h.readBatch(w, r)
		if err != nil {
			return nil, option, err
		}
		body, credits = b, n
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	lim := h.o.Limits(rec.Tier)
	ch, err := h.o.Usage.Charge(sctx, rec.User, rec.ID, lim, credits, option == "a")
	if err != nil {
		return nil, option, h.limitError(w, keyLog(h.log, rec), err)
	}
	query := stripAPIKey(r.URL.RawQuery)
	if option == "b" {
		idem := gw.IdemRequest{KeyID: rec.ID, Customer: r.Header.Get("Idempotency-Key"),
			Method: r.Method, Path: backendPath, Query: query, Body: body, Credits: credits}
		if err := h.optionB(r, keyLog(h.log, rec), rec, ch, idem); err != nil {
			return nil, option, err
		}
	}
	return &forward{path: backendPath, query: query, rec: rec, charge: ch, credits: credits, option: option, limits: lim}, option, nil
}

// serveInProcess calls the in-process backend with the request the proxy
// would have sent (mapped path, query without apiKey, the internal headers,
// no customer credentials) and answers as modifyResponse would.
func (h *Handler) serveInProcess(w http.ResponseWriter, r *http.Request, f *forward) {
	// The request is this handler's to the end: a shallow copy with its own
	// URL, and the header map changed in place (no copy per request).
	out := new(http.Request)
	*out = *r
	u := *r.URL
	u.Path, u.RawPath = f.path, f.path
	if p, err := url.PathUnescape(f.path); err == nil {
		u.Path = p
	}
	if u.Path == u.RawPath {
		u.RawPath = ""
	}
	u.RawQuery = f.query
	out.URL = &u
	out.RequestURI = u.RequestURI()
	hd := out.Header
	h.setBackendHeaders(hd, f)
	if client, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		if prior := hd["X-Forwarded-For"]; h.o.TrustProxy && len(prior) > 0 {
			hd.Set("X-Forwarded-For", strings.Join(prior, ", ")+", "+client)
		} else {
			hd.Set("X-Forwarded-For", client)
		}
	}
	if r.TLS != nil {
		hd.Set("X-Forwarded-Proto", "https")
	} else {
		hd.Set("X-Forwarded-Proto", "http")
	}
	hd.Set("X-Forwarded-Host", r.Host)
	bw := &backendWriter{ResponseWriter: w, h: h, f: f}
	defer func() {
		if !bw.wrote {
			bw.WriteHeader(http.StatusOK)
		}
	}()
	h.o.BackendHandler.ServeHTTP(bw, out)
}

// backendWriter is the in-process backend's ResponseWriter: at the
// status it does what modifyResponse does for a proxied answer.
type backendWriter struct {
	http.ResponseWriter
	h       *Handler
	f       *forward
	wrote   bool
	swallow bool // the backend's body is replaced (401 → 502)
}

func (b *backendWriter) WriteHeader(code int) {
	if b.wrote {
		return
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		b.ResponseWriter.WriteHeader(code)
		return
	}
	b.wrote = true
	hd := b.ResponseWriter.Header()
	hd.Del(HeaderInternalKey)
	if code == http.StatusUnauthorized {
		b.swallow = true
		b.h.log.Error("backend refused the internal key: api.internal_key differs between gateway and backend")
		b.h.results.WithLabelValues("backend_error", b.f.option).Inc()
		for k := range hd {
			delete(hd, k)
		}
		b.h.refund(b.f.charge, b.f.credits)
		setLimitHeaders(hd, b.f.limits, b.f.charge)
		hd.Set("X-Quota-Used", strconv.FormatInt(max(0, b.f.charge.Used-b.f.credits), 10))
		httpx.Write(b.ResponseWriter, errBackendRefused)
		return
	}
	b.h.forwarded(b.f.option).Inc()
	setLimitHeaders(hd, b.f.limits, b.f.charge)
	if uncharged(code) {
		b.h.refund(b.f.charge, b.f.credits)
		hd.Set("X-Quota-Used", strconv.FormatInt(max(0, b.f.charge.Used-b.f.credits), 10))
	}
	b.ResponseWriter.WriteHeader(code)
}

func (b *backendWriter) Write(p []byte) (int, error) {
	if !b.wrote {
		b.WriteHeader(http.StatusOK)
	}
	if b.swallow {
		return len(p), nil
	}
	return b.ResponseWriter.Write(p)
}

// Flush passes a streaming backend's flushes on.
func (b *backendWriter) Flush() {
	if !b.wrote {
		b.WriteHeader(http.StatusOK)
	}
	if f, ok := b.ResponseWriter.(http.Flusher); ok && !b.swallow {
		f.Flush()
	}
}

// ReadFrom keeps the underlying writer's fast path (sendfile) for files.
func (b *backendWriter) ReadFrom(r io.Reader) (int64, error) {
	if !b.wrote {
		b.WriteHeader(http.StatusOK)
	}
	if b.swallow {
		return io.Copy(io.Discard, r)
	}
	return io.Copy(b.ResponseWriter, r)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (b *backendWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// uncharged reports whether a backend status costs no credit: an error
// (>= 400) other than 404 (an answer: no assets for the IP), and 304 (the
// customer's copy of a dataset file is current: nothing was sent).
func uncharged(code int) bool {
	return code == http.StatusNotModified || (code >= 400 && code != http.StatusNotFound)
}

// keyLog names the key, user and tier in log lines (built only where a
// line may be written: a logger per request costs allocations).
func keyLog(log *slog.Logger, rec *gw.Record) *slog.Logger {
	return log.With("key_id", rec.ID, "user", rec.User, "tier", rec.Tier)
}

func minTier(rt route, r *http.Request) string {
	if rt.minTier == nil {
		return ""
	}
	return rt.minTier(r)
}

// optionB checks and deducts credits with the validation service; it fails
// closed (503) when the service cannot answer. The deduction's idempotency
// key is bound to the request (gw.IdempotencyKey).
func (h *Handler) optionB(r *http.Request, log *slog.Logger, rec *gw.Record, ch gw.Charge, idem gw.IdemRequest) error {
	v := h.o.Validator
	credits := idem.Credits
	err := func() error {
		if _, err := v.Check(r.Context(), rec, credits); err != nil {
			return err
		}
		_, err := v.Deduct(r.Context(), rec, credits, gw.IdempotencyKey(idem))
		return err
	}()
	if err == nil {
		return nil
	}
	h.refund(ch, credits)
	switch {
	case errors.Is(err, gw.ErrNoCredits):
		return errNoCredits
	case errors.Is(err, gw.ErrSubscriptionInactive):
		return errInactive
	}
	log.Warn("validation service unavailable", "err", err)
	return errValidationDown
}

// readBatch reads a batch body and returns it with its credit count: the
// number of addresses when the body is a well-formed batch of 1..100, else
// 1 (the backend then answers 422 and the credit is refunded).
func (h *Handler) readBatch(w http.ResponseWriter, r *http.Request) ([]byte, int64, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.o.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, 0, &httpx.Error{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large", Message: fmt.Sprintf("request body above %d bytes", h.o.MaxBodyBytes)}
		}
		return nil, 0, errBadBody
	}
	// The backend reads the key "ips" exactly (a map, last duplicate wins);
	// count the same list. A struct field would also take "IPS" or "Ips",
	// so {"ips": [100 addresses], "IPS": ["x"]} was charged 1 credit.
	var obj map[string]json.RawMessage
	var ips []json.RawMessage
	if json.Unmarshal(body, &obj) == nil && json.Unmarshal(obj["ips"], &ips) == nil && len(ips) >= 1 && len(ips) <= MaxBatch {
		return body, int64(len(ips)), nil
	}
	return body, 1, nil
}

// authError is the answer to a key the store refused or could not check.
func (h *Handler) authError(err error) *httpx.Error {
	switch {
	case errors.Is(err, gw.ErrMalformedKey):
		return errMalformedKey
	case errors.Is(err, gw.ErrRevokedKey):
		return errRevokedKey
	case errors.Is(err, gw.ErrExpiredKey):
		return errExpiredKey
	case errors.Is(err, gw.ErrUnknownKey):
		return errUnknownKey
	}
	h.log.Warn("key lookup failed", "err", err)
	return errKeysDown
}

// limitError is the answer to a charge the usage counter refused (a rate
// limit or the quota, with their headers) or could not make.
func (h *Handler) limitError(w http.ResponseWriter, log *slog.Logger, err error) *httpx.Error {
	var le *gw.LimitError
	if !errors.As(err, &le) {
		log.Warn("usage counter unavailable", "err", err)
		return errUsageDown
	}
	log.Debug("limit reached", "reason", le.Error(), "retry_after", le.RetryAfter)
	after := httpx.RetryAfter(le.RetryAfter)
	if errors.Is(err, gw.ErrRateLimited) {
		w.Header().Set("X-RateLimit-Limit", strconv.FormatInt(le.Limit, 10))
		w.Header().Set("X-RateLimit-Remaining", "0")
		return &httpx.Error{Status: http.StatusTooManyRequests, Code: "rate_limited", RetryAfter: after,
			Message: fmt.Sprintf("rate limit of %d requests per minute for this key reached; retry after the Retry-After seconds", le.Limit)}
	}
	w.Header().Set("X-Quota-Limit", strconv.FormatInt(le.Limit, 10))
	w.Header().Set("X-Quota-Used", strconv.FormatInt(le.Used, 10))
	return &httpx.Error{Status: http.StatusTooManyRequests, Code: "quota_exceeded", RetryAfter: after,
		Message: fmt.Sprintf("monthly quota of %d credits used up (%d used); it renews on the 1st (UTC)", le.Limit, le.Used)}
}

// setLimitHeaders writes the limit headers, by their canonical names
// (http.Header.Set would canonicalise each on every request).
func setLimitHeaders(hd http.Header, lim gw.Limits, ch gw.Charge) {
	hd["X-Ratelimit-Limit"] = []string{strconv.Itoa(lim.RatePerMinute)}
	hd["X-Ratelimit-Remaining"] = []string{strconv.Itoa(ch.RateRemaining)}
	hd["X-Ratelimit-Reset"] = []string{strconv.FormatInt(ch.Reset.Unix(), 10)}
	hd["X-Quota-Used"] = []string{strconv.FormatInt(ch.Used, 10)}
	if lim.MonthlyQuota > 0 {
		hd["X-Quota-Limit"] = []string{strconv.FormatInt(lim.MonthlyQuota, 10)}
	} else {
		hd["X-Quota-Limit"] = []string{"unlimited"}
	}
}

// stripAPIKey drops apiKey from a raw query, keeping the rest byte for byte.
func stripAPIKey(raw string) string {
	if raw == "" || !strings.Contains(raw, "apiKey") {
		return raw
	}
	parts := strings.Split(raw, "&")
	out := parts[:0]
	for _, p := range parts {
		name, _, _ := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); err == nil && n == "apiKey" {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, "&")
}

// rewrite builds the backend request: mapped path, query without apiKey,
// the internal headers, and nothing of the customer's credentials.
func (h *Handler) rewrite(pr *httputil.ProxyRequest) {
	f := pr.In.Context().Value(ctxKey{}).(*forward)
	b := h.o.Backend
	pr.Out.URL.Scheme = b.Scheme
	pr.Out.URL.Host = b.Host
	// f.path is escaped already (a value's "/" and "%" stay escaped): it
	// is the raw path, and Path its decoded form, so it is not escaped twice.
	raw := strings.TrimRight(b.EscapedPath(), "/") + f.path
	if p, err := url.PathUnescape(raw); err == nil {
		pr.Out.URL.Path, pr.Out.URL.RawPath = p, raw
	} else {
		pr.Out.URL.Path, pr.Out.URL.RawPath = raw, ""
	}
	pr.Out.URL.RawQuery = f.query
	pr.Out.Host = b.Host
	hd := pr.Out.Header
	h.setBackendHeaders(hd, f)
	if h.o.TrustProxy {
		hd["X-Forwarded-For"] = pr.In.Header["X-Forwarded-For"]
	}
	pr.SetXForwarded()
}

// modifyResponse refunds the credits of a request the backend did not
// serve: any status >= 400 except 404 (an answer: no assets for the IP),
// and 304 (nothing sent: the customer's copy is current).
func (h *Handler) modifyResponse(resp *http.Response) error {
	f, _ := resp.Request.Context().Value(ctxKey{}).(*forward)
	if f == nil {
		return nil
	}
	resp.Header.Del(HeaderInternalKey)
	if resp.StatusCode == http.StatusUnauthorized {
		// The backend refused the gateway itself (X-Internal-Key): never the
		// customer's fault, so not a 401 the customer would misread.
		h.log.Error("backend refused the internal key: api.internal_key differs between gateway and backend")
		h.results.WithLabelValues("backend_error", f.option).Inc()
		_ = resp.Body.Close()
		b, _ := json.Marshal(httpx.ErrorBody{Error: errBackendRefused})
		resp.StatusCode, resp.Status = http.StatusBadGateway, "502 Bad Gateway"
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		resp.Header = http.Header{"Content-Type": {"application/json"}, "Content-Length": {strconv.Itoa(len(b))}}
		h.refund(f.charge, f.credits)
		setLimitHeaders(resp.Header, f.limits, f.charge)
		resp.Header.Set("X-Quota-Used", strconv.FormatInt(max(0, f.charge.Used-f.credits), 10))
		return nil
	}
	h.forwarded(f.option).Inc()
	setLimitHeaders(resp.Header, f.limits, f.charge)
	if uncharged(resp.StatusCode) {
		h.refund(f.charge, f.credits)
		resp.Header.Set("X-Quota-Used", strconv.FormatInt(max(0, f.charge.Used-f.credits), 10))
	}
	return nil
}

func (h *Handler) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	if f, _ := r.Context().Value(ctxKey{}).(*forward); f != nil {
		h.refund(f.charge, f.credits)
		setLimitHeaders(w.Header(), f.limits, f.charge)
		w.Header().Set("X-Quota-Used", strconv.FormatInt(max(0, f.charge.Used-f.credits), 10))
	}
	if errors.Is(err, context.Canceled) {
		return // the customer went away
	}
	h.log.Warn("backend unreachable", "err", err)
	h.refuse(w, r, "", errBackendDown)
}

func (h *Handler) refund(ch gw.Charge, credits int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := h.o.Usage.Refund(ctx, ch, credits); err != nil {
		h.log.Warn("refund credits", "err", err)
	}
}
