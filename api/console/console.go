// Package console is the operator web console at /console/: IP lookup,
// snapshot history, TLD status and the pipeline, as pages served from
// files embedded in the binary (nothing is loaded from another host) and
// the JSON routes under /console/api/ those pages call. Who may open it
// is configured (console.allow): clients on this machine, and/or holders
// of an operator key (a gateway key carrying console.key_tag).
package console

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	gw "github.com/netintel/netintel/gateway"
	"github.com/netintel/netintel/internal/httpx"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/probe"
)

//go:embed assets
var assets embed.FS

// Prefix is where the console is mounted.
const Prefix = "/console/"

// CookieName is the cookie that carries an operator key in a browser.
const CookieName = "netintel_console"

// AccessHeader says on every console answer how the client was let in:
// "loopback" or "key" (the page then offers to sign out).
const AccessHeader = "X-Console-Access"

// Access values (console.allow).
const (
	AllowLoopback = "loopback"
	AllowKeys     = "keys"
)

// Authenticator checks a whole gateway key (implemented by *gateway.Keys).
type Authenticator interface {
	// Authenticate returns the key's record, or an error when the key is
	// malformed, unknown, revoked or expired, or NATS cannot be reached.
	Authenticate(ctx context.Context, raw string) (*gw.Record, error)
}

// TLDState is what the console reads of the TLD checker (implemented by
// *probe.Service).
type TLDState interface {
	// Progress returns the live progress (idle before the first run).
	Progress(ctx context.Context) (probe.Progress, error)
	// Published returns the latest publish record; ok is false before the first.
	Published(ctx context.Context) (probe.Published, bool, error)
}

// RunSummary is one TLD check run as the coverage chart shows it.
type RunSummary struct {
	// Run is the run id; Date is when it finished (RFC 3339, UTC).
	Run  string `json:"run"`
	Date string `json:"date"`
	// Total is the TLDs checked; RDAP those with a working RDAP server
	// (bootstrap-listed), WHOIS those with a WHOIS server that answered,
	// Stealth those with an RDAP server the bootstrap does not list.
	Total   int `json:"total"`
	RDAP    int `json:"rdap"`
	WHOIS   int `json:"whois"`
	Stealth int `json:"stealth"`
}

// TLDHistory gives the coverage of past TLD check runs.
type TLDHistory interface {
	// Runs returns up to limit runs, oldest first. No run yet is an
	// empty list, not an error.
	Runs(ctx context.Context, limit int) ([]RunSummary, error)
}

// RecordSource gives the snapshot record that covers an address (host and
// range merged), with every data class, for what the IP API's answer
// leaves out (ASN, the record's own claims, sources). ok is false when
// the snapshot does not know the address or none is loaded here.
type RecordSource func(addr netip.Addr) (rec *ipmodel.Record, snapshot string, ok bool, err error)

// Job is a scheduled job of this process's configuration.
type Job struct {
	Name string `json:"name"`
	Spec string `json:"spec"`
	// Next is the job's next tick (zero when unknown).
	Next time.Time `json:"next"`
}

// Options configure the console.
type Options struct {
	// Allow lists AllowLoopback and/or AllowKeys.
	Allow []string
	// Keys checks operator keys (needed when Allow has AllowKeys).
	Keys Authenticator
	// KeyTag is the tag an operator key carries.
	KeyTag string
	// TrustProxy takes the client address from X-Forwarded-For (one
	// trusted proxy), as every other route does.
	TrustProxy bool

	// IPClient reaches the IP API backend (in process or over HTTP) at
	// IPBase with InternalKey.
	IPClient    *http.Client
	IPBase      string
	InternalKey string
	// Records adds the ASN and record claims to a lookup; may be nil.
	Records RecordSource
	// Examples lists a few addresses the loaded snapshot knows, offered
	// on the lookup page; may be nil.
	Examples func(ctx context.Context) []string

	// Store holds the snapshots and the TLD results.
	Store objstore.Store
	// TLD is the checker's state; TLDPrefix the results' folder
	// (probe.prefix); History the coverage over runs.
	TLD       TLDState
	TLDPrefix string
	History   TLDHistory

	// JS reaches streams, consumers and the job status bucket.
	JS jetstream.JetStream
	// Streams are the stream names to show (the configured ones).
	Streams []string
	// Jobs lists the scheduled jobs; JobStatus is schedule.StatusBucket.
	Jobs      func() []Job
	JobStatus jetstream.KeyValue
	// Sampler keeps the pipeline's recent rates; may be nil.
	Sampler *Sampler

	Log *slog.Logger
}

// Handler serves the console.
type Handler struct {
	opt Options
	log *slog.Logger
}

// New returns the console over opt.
func New(opt Options) *Handler {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.IPClient == nil {
		opt.IPClient = http.DefaultClient
	}
	return &Handler{opt: opt, log: opt.Log.With("stage", "console")}
}

// Mount adds the console's routes to mux.
func (h *Handler) Mount(mux *http.ServeMux) {
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	mux.Handle("GET /console/{$}", h.guard(h.page("index.html")))
	// The static files hold no data: the sign-in page needs them too.
	mux.Handle("GET /console/assets/{file}", h.network(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + r.PathValue("file")
		files.ServeHTTP(w, r2)
	})))
	mux.Handle("GET /console/login", h.network(h.page("login.html")))
	mux.Handle("POST /console/login", h.network(http.HandlerFunc(h.login)))
	mux.Handle("POST /console/logout", http.HandlerFunc(h.logout))
	mux.Handle("GET /console", http.RedirectHandler(Prefix, http.StatusMovedPermanently))

	api := func(pattern string, fn http.HandlerFunc) {
		mux.Handle("GET /console/api/"+pattern, h.guard(noStore(fn)))
	}
	handle := func(fn httpx.HandlerFunc) http.HandlerFunc { return httpx.Handle(h.log, fn) }
	api("ip/{ip}", handle(h.ipLookup))
	api("examples", handle(h.examples))
	api("snapshots", handle(h.snapshots))
	api("snapshots/{date}/{build}/{name}", h.snapshotFile)
	api("tld", handle(h.tld))
	api("tld/history", handle(h.tldHistory))
	api("tld/changes", handle(h.tldChanges))
	api("pipeline", handle(h.pipeline))
	// Anything else under /console/: the JSON 404 (behind the guard, so
	// it says nothing to those refused).
	mux.Handle("/console/", h.guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed.ServeHTTP(w, r)
			return
		}
		httpx.Write(w, notFound("no such path"))
	})))
}

// page serves one embedded HTML page with the console's security headers.
func (h *Handler) page(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			httpx.Write(w, &httpx.Error{Status: http.StatusInternalServerError, Code: "internal", Message: "page missing from the binary"})
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(b)
	})
}

func noStore(fn http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		fn(w, r)
	})
}

// securityHeaders are sent on every console answer: everything from this
// origin only, no framing, no referrer.
func securityHeaders(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
}

// Failures answered the same wherever they happen.
var (
	errForbiddenNetwork = forbidden("the console answers only clients on this machine (console.allow); see docs/console.md")
	errForbiddenKey     = forbidden("the console needs an operator key: sign in at /console/login or send Authorization: Bearer KEY (docs/console.md)")
	errNoStore          = unavailable("this role has no object store")
	errStoreDown        = unavailable("the object store is not reachable; try again shortly")
	errTLDDown          = unavailable("TLD status store is not reachable; try again shortly")
	errNATSDown         = unavailable("NATS is not reachable; try again shortly")
	methodNotAllowed    = httpx.MethodNotAllowed("GET, HEAD")
)

func forbidden(msg string) *httpx.Error {
	return &httpx.Error{Status: http.StatusForbidden, Code: "forbidden", Message: msg}
}

func notFound(msg string) *httpx.Error {
	return &httpx.Error{Status: http.StatusNotFound, Code: "not_found", Message: msg}
}

func unavailable(msg string) *httpx.Error {
	return &httpx.Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: msg}
}

// loopbackClient reports whether the request comes from this machine:
// the connection's peer is loopback and, with a trusted proxy, so is the
// client the proxy names. A proxy on this machine forwarding a remote
// client is not enough, nor is a remote client's forged X-Forwarded-For.
func (h *Handler) loopbackClient(r *http.Request) bool {
	loop := func(s string) bool {
		a, err := netip.ParseAddr(s)
		return err == nil && a.Unmap().IsLoopback()
	}
	return loop(httpx.ClientIP(r, false)) && loop(httpx.ClientIP(r, h.opt.TrustProxy))
}

func (h *Handler) allows(what string) bool { return slices.Contains(h.opt.Allow, what) }

// network lets through clients that may reach the console at all: from
// loopback when loopback is allowed, from anywhere when keys are (the
// sign-in page must be reachable to present one).
func (h *Handler) network(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w)
		if h.allows(AllowKeys) || (h.allows(AllowLoopback) && h.loopbackClient(r)) {
			next.ServeHTTP(w, r)
			return
		}
		httpx.Write(w, errForbiddenNetwork)
	})
}

// guard lets through a loopback client when loopback is allowed, and a
// request that carries an active operator key (Authorization: Bearer, or
// the sign-in cookie) when keys are; anyone else gets 403 with the
// standard error body.
func (h *Handler) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w)
		if h.allows(AllowLoopback) && h.loopbackClient(r) {
			w.Header().Set(AccessHeader, "loopback")
			next.ServeHTTP(w, r)
			return
		}
		if !h.allows(AllowKeys) {
			httpx.Write(w, errForbiddenNetwork)
			return
		}
		key := bearer(r)
		if key == "" {
			if c, err := r.Cookie(CookieName); err == nil {
				key = c.Value
			}
		}
		if key == "" {
			h.refuseKey(w, r, errForbiddenKey)
			return
		}
		if err := h.operator(r.Context(), key); err != nil {
			if errors.Is(err, gw.ErrUnavailable) {
				httpx.Write(w, unavailable("operator keys cannot be checked now (NATS unreachable); try again shortly"))
				return
			}
			h.refuseKey(w, r, forbidden("not an operator key: "+err.Error()))
			return
		}
		w.Header().Set(AccessHeader, "key")
		next.ServeHTTP(w, r)
	})
}

// refuseKey answers 403; a browser asking for the page is sent to the
// sign-in page instead.
func (h *Handler) refuseKey(w http.ResponseWriter, r *http.Request, e *httpx.Error) {
	if r.URL.Path == Prefix && strings.Contains(r.Header.Get("Accept"), "text/html") {
		http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
		return
	}
	httpx.Write(w, e)
}

// errNotOperator: an active key without the operator tag.
var errNotOperator = errors.New("the key does not carry the operator tag")

// operator checks that key is an active gateway key with the operator tag.
func (h *Handler) operator(ctx context.Context, key string) error {
	if h.opt.Keys == nil {
		return gw.ErrUnavailable
	}
	rec, err := h.opt.Keys.Authenticate(ctx, key)
	if err != nil {
		return err
	}
	if !slices.Contains(rec.Tags, h.opt.KeyTag) {
		return errNotOperator
	}
	return nil
}

func bearer(r *http.Request) string {
	v := r.Header.Get("Authorization")
	if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		return strings.TrimSpace(v[7:])
	}
	return ""
}

// login checks the posted key and keeps it in an HttpOnly cookie scoped to
// /console/ for 12 hours; the key is checked again on every request, so
// revoking it signs the browser out.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if !h.allows(AllowKeys) {
		httpx.Write(w, forbidden("sign-in with a key is off (console.allow has no keys)"))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	key := strings.TrimSpace(r.PostFormValue("key"))
	if err := h.operator(r.Context(), key); err != nil {
		if errors.Is(err, gw.ErrUnavailable) {
			httpx.Write(w, unavailable("operator keys cannot be checked now; try again shortly"))
			return
		}
		http.Redirect(w, r, Prefix+"login?failed=1", http.StatusSeeOther)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: key, Path: Prefix, MaxAge: 12 * 3600,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secureRequest(r, h.opt.TrustProxy)})
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: Prefix, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
}

// secureRequest: the browser reached us over TLS (directly, or through the
// trusted proxy), so the cookie may require it.
func secureRequest(r *http.Request, trustProxy bool) bool {
	return r.TLS != nil || (trustProxy && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"))
}
