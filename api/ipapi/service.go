// Package ipapi is the IP intelligence backend API: the shadow VPN lookup,
// the 100-address batch, the row-capped CSV export, the daily dataset feed
// and the keyless /public/* evaluation endpoints, served from the latest
// published snapshot (docs/ip-api.md, ../shared/spec/ip-intelligence.md).
//
// The backend sits behind the gateway and trusts only X-Internal-Key (the
// shared secret, compared in constant time) and X-Tier; it never reads a
// customer key. Snapshots are loaded at start and replaced atomically when
// a new one is published, so requests in flight finish on the one they began.
package ipapi

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/netintel/netintel/internal/httpx"
	"github.com/netintel/netintel/internal/objstore"
)

// Public endpoint limits per client address (docs/ip-api.md).
const (
	DefaultPublicPerMinute = 10
	DefaultPublicBurst     = 5
)

// DefaultExportWait is Options.ExportWait's default.
const DefaultExportWait = 45 * time.Second

// Options configure a Service.
type Options struct {
	// InternalKey is the gateway's shared secret (api.internal_key). When
	// empty every protected route answers 401.
	InternalKey string
	// PublicURL prefixes download links (api.public_url); "" gives
	// root-relative links.
	PublicURL string
	// LinkPrefix is the customer path prefix of download links
	// (DefaultLinkPrefix when empty).
	LinkPrefix string
	// Store holds the snapshots; downloads stream from it.
	Store objstore.Store
	// CacheDir is the folder the loaded snapshots' MMDBs and export
	// tables are written to and memory-mapped from ("" = the system temp
	// folder; `netintel` passes <data-dir>/ipapi-cache). Its files are
	// unlinked as soon as they are created (LoadManifestDir).
	CacheDir string
	// ExportWait bounds how long a CSV export waits for the export table
	// of a snapshot swapped in before it was built, before answering 503
	// with Retry-After (DefaultExportWait when <= 0: under the gateway's
	// 60 s backend timeout, so the client gets the API's own error).
	ExportWait time.Duration
	// PresignTTL is the lifetime of presigned download links (S3 stores).
	PresignTTL time.Duration
	// TrustProxy takes public clients' addresses from X-Forwarded-For.
	TrustProxy bool
	// PublicPerMinute and PublicBurst limit /public/* per client address.
	PublicPerMinute float64
	PublicBurst     int
	// Limiters makes the per-address limiter of /public/*: shared by every
	// API copy when it is gateway.AddrLimiters; nil keeps it in this process.
	Limiters httpx.AddrLimiters
	Log      *slog.Logger
}

// Service serves the IP intelligence API from the current snapshot.
type Service struct {
	opts   Options
	log    *slog.Logger
	cur    current
	public httpx.AddrLimiter
	key    []byte
	// tamper and beforeTable are the loader's test hooks (loader).
	tamper      func(*os.File) error
	beforeTable func(context.Context) error
	// builds are the background export table builds (refresh).
	builds builds
}

// New returns a service with no snapshot yet (data routes answer 503 until
// Swap or the loader provides one).
func New(opts Options) *Service {
	if opts.PublicPerMinute <= 0 {
		opts.PublicPerMinute = DefaultPublicPerMinute
	}
	if opts.PublicBurst <= 0 {
		opts.PublicBurst = DefaultPublicBurst
	}
	if opts.ExportWait <= 0 {
		opts.ExportWait = DefaultExportWait
	}
	if opts.PresignTTL <= 0 {
		opts.PresignTTL = 15 * time.Minute
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Limiters == nil {
		opts.Limiters = httpx.LocalLimiters
	}
	return &Service{
		opts: opts, log: opts.Log.With("stage", "ipapi"),
		public: opts.Limiters("public", opts.PublicPerMinute, opts.PublicBurst),
		key:    []byte(opts.InternalKey),
	}
}

// Swap makes snap the snapshot every new request reads.
func (s *Service) Swap(snap *Snapshot) { s.cur.store(snap) }

// Current returns the snapshot in use, or nil before the first one.
func (s *Service) Current() *Snapshot { return s.cur.load() }

// Backend paths (the gateway forwards /api/v1/vpn/... to them).
const (
	PathLookup   = "/api/v1/shadow_vpn/lookup/{ip}"
	PathBatch    = "/api/v1/ip/batch"
	PathIP       = "/api/v1/ip/{ip}"
	PathCSV      = "/api/v1/export/csv"
	PathDataset  = "/api/v1/export/dataset"
	PathDownload = "/api/v1/export/dataset/files/{date}/{name}"
	PathPublic   = "/public/v1/lookup/{ip}"
	PathPublicSn = "/public/v1/snapshot"
	PathOpenAPI  = "/internal/openapi.json"
)

// Mount adds every route to mux.
func (s *Service) Mount(mux *http.ServeMux) {
	mux.Handle("GET "+PathLookup, s.guard(s.json(s.lookup)))
	mux.Handle("POST "+PathBatch, s.guard(s.json(s.batch)))
	mux.Handle("GET "+PathIP, ipOrBatch(s.guard(s.json(s.ipLookup))))
	mux.Handle("GET "+PathCSV, withRowLimit(s.guard(s.exportCSV)))
	mux.Handle("GET "+PathDataset, s.guard(s.json(s.dataset)))
	mux.Handle("GET "+PathDownload, s.guard(s.download))
	mux.Handle("GET "+PathPublic, s.limited(httpx.Handle(s.log, s.publicLookup)))
	mux.Handle("GET "+PathPublicSn, s.limited(httpx.Handle(s.log, s.publicSnapshot)))
	mux.HandleFunc("GET "+PathOpenAPI, serveOpenAPI)
	// Any other method on these paths: 405 in the error shape, with Allow
	// (ServeMux alone would answer a plain-text 405).
	for _, p := range []string{PathLookup, PathCSV, PathDataset, PathDownload, PathPublic, PathPublicSn, PathOpenAPI} {
		mux.Handle(p, httpx.MethodNotAllowed("GET, HEAD"))
	}
	// /api/v1/ip/batch is POST and /api/v1/ip/{ip} GET: one pattern for
	// both paths' other methods (two would conflict in ServeMux).
	mux.Handle(PathIP, ipOrBatch(httpx.MethodNotAllowed("GET, HEAD")))
	// Any other path of the API: 404 in the error shape, not ServeMux's
	// plain text (the gateway forwards /api/v1/vpn/export/dataset/{rest...}
	// here whatever rest is).
	mux.Handle("/api/v1/", s.guard(s.json(func(http.ResponseWriter, *http.Request, Tier) error {
		// Reached by customers through the gateway's dataset catch-all:
		// name the routes as they call them.
		p := s.linkPrefix()
		return notFound("no such path; the routes are " + p + "/ip/{ip}, " + p + "/shadow_vpn/lookup/{ip}, " + p + "/ip/batch, " + p + "/export/csv and " + p + "/export/dataset (docs/ip-api.md)")
	})))
	mux.HandleFunc("/public/", notFoundPath)
}

// ipOrBatch sends a request whose {ip} is "batch" (the batch path, in any
// method but POST) to 405 naming POST, and any other to h.
func ipOrBatch(h http.Handler) http.Handler {
	batch := httpx.MethodNotAllowed(http.MethodPost)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("ip") == "batch" {
			batch.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func notFoundPath(w http.ResponseWriter, _ *http.Request) {
	httpx.Write(w, errNotFoundPath)
}

// tierHandler is a handler of a guarded route: it is passed the caller's
// tier. The streaming ones (CSV export, file download) are these.
type tierHandler func(http.ResponseWriter, *http.Request, Tier)

// json adapts a JSON handler of a guarded route, as httpx.Handle does: the
// failure it returns is answered by httpx.Fail.
func (s *Service) json(h func(http.ResponseWriter, *http.Request, Tier) error) tierHandler {
	return func(w http.ResponseWriter, r *http.Request, tier Tier) {
		if err := h(w, r, tier); err != nil {
			httpx.Fail(s.log, w, r, err)
		}
	}
}

// guard admits only requests carrying the gateway's X-Internal-Key and
// passes the tier from X-Tier. It never reads Authorization.
func (s *Service) guard(h tierHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("X-Internal-Key")
		if len(s.key) == 0 || subtle.ConstantTimeCompare([]byte(got), s.key) != 1 {
			httpx.Write(w, errUnauthorized)
			return
		}
		h(w, r, ParseTier(r.Header.Get("X-Tier")))
	})
}

// limited applies the per-client-address limit of the public endpoints.
func (s *Service) limited(h http.HandlerFunc) http.Handler {
	return httpx.RateLimit{Limiter: s.public, TrustProxy: s.opts.TrustProxy, Log: s.log,
		Down: "the public endpoint limit cannot be checked right now; retry later",
		Exceeded: func(string) string {
			return "public endpoint limit reached for this address; retry later or use an API key"
		}}.Wrap(h)
}

// snapshot returns the current snapshot, or the 503 of none yet.
func (s *Service) snapshot() (*Snapshot, error) {
	if snap := s.cur.load(); snap != nil {
		return snap, nil
	}
	return nil, errNoSnapshot
}

// withRowLimit sets X-Svc-Row-Limit (the applied cap) before anything else
// answers, so that every export response carries it, a 401 included.
func withRowLimit(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := query{v: r.URL.Query()}
		w.Header().Set("X-Svc-Row-Limit", strconv.Itoa(q.integer(paramLimit, 1, MaxRowLimit, DefaultRowLimit)))
		h.ServeHTTP(w, r)
	})
}
