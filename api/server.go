// Package api is the HTTP layer: it mounts each product's handlers on a
// mux, adds /health, /ready and /metrics, and runs the listeners.
package api

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/netintel/netintel/internal/httpx"
	"github.com/netintel/netintel/internal/telemetry"
)

// Probes are the checks behind /health and /ready.
type Probes struct {
	// Ready returns nil when the process can serve (NATS connected,
	// streams present, object store reachable), else the reason.
	Ready func(ctx context.Context) error
	// Health returns the body of /health. The TLD product replaces the
	// default with the spec's Health shape.
	Health func() any
}

// HealthBody is the spec's Health shape (TLD status spec, GET /health).
type HealthBody struct {
	Status       string `json:"status"`
	Timestamp    int64  `json:"timestamp"`
	StealthCount int    `json:"stealth_count"`
}

// MountProbes adds /health, /ready and /metrics to mux.
func MountProbes(mux *http.ServeMux, p Probes, reg *prometheus.Registry) {
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		var body any = HealthBody{Status: "healthy", Timestamp: time.Now().Unix()}
		if p.Health != nil {
			body = p.Health()
		}
		httpx.WriteJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		if p.Ready != nil {
			if err := p.Ready(ctx); err != nil {
				httpx.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "reason": err.Error()})
				return
			}
		}
		httpx.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	// Any other method: 405 with Allow and a JSON error, not ServeMux's
	// plain text.
	for _, p := range []string{"/health", "/ready", "/metrics"} {
		mux.Handle(p, httpx.MethodNotAllowed("GET, HEAD"))
	}
}

// Metrics counts requests by route pattern and status.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics registers the HTTP metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netintel_http_requests_total", Help: "HTTP requests by route and status."}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "netintel_http_request_seconds", Help: "HTTP request latency by route.", Buckets: prometheus.ExponentialBuckets(0.0002, 3, 10)}, []string{"route"}),
	}
	m.requests = telemetry.MustRegister(reg, m.requests)
	m.duration = telemetry.MustRegister(reg, m.duration)
	return m
}

// Zero shows routes at 0 with code 200 before their first request.
func (m *Metrics) Zero(routes ...string) {
	for _, r := range routes {
		m.requests.WithLabelValues(RouteLabel(r), "200")
		m.duration.WithLabelValues(RouteLabel(r))
	}
}

// RouteLabel is the route label of a mux pattern: its path alone, without
// the method or host ("GET /api/v1/ip/{ip}" and "/api/v1/ip/{ip}" are both
// "/api/v1/ip/{ip}"), so that every route has one label style; "" (no
// pattern matched) is "unmatched". The method shows in the code label
// (405) where it matters.
func RouteLabel(pattern string) string {
	if pattern == "" {
		return "unmatched"
	}
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		pattern = strings.TrimLeft(pattern[i+1:], " \t")
	}
	if i := strings.IndexByte(pattern, '/'); i > 0 {
		pattern = pattern[i:] // a host pattern
	}
	return pattern
}

// Wrap records every request that h serves. The route label is the mux
// pattern's path (RouteLabel), never the raw path, which may hold an
// address or an id.
func (m *Metrics) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: 200}
		h.ServeHTTP(sw, r)
		route := RouteLabel(r.Pattern)
		m.requests.WithLabelValues(route, strconv.Itoa(sw.code)).Inc()
		m.duration.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.code, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and deadlines.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush passes flushes through for streamed responses.
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Listener is one HTTP server on one address.
type Listener struct {
	Addr    string
	Handler http.Handler
	// BodyIdleTimeout is how long a request body may send nothing before
	// the read fails and the connection is closed; 0 means
	// DefaultBodyIdleTimeout.
	BodyIdleTimeout time.Duration
}

// Serve runs every listener until ctx is cancelled, then shuts them down,
// letting in-flight requests finish within timeout. ready is called with
// each listener's configured address and the address it bound, once it
// listens (port 0 resolves here).
func Serve(ctx context.Context, log *slog.Logger, ls []Listener, timeout time.Duration, ready func(configured, bound string)) error {
	var servers []*http.Server
	errc := make(chan error, len(ls))
	for _, l := range ls {
		ln, err := net.Listen("tcp", l.Addr)
		if err != nil {
			for _, s := range servers {
				s.Close()
			}
			return err
		}
		idle := l.BodyIdleTimeout
		if idle <= 0 {
			idle = DefaultBodyIdleTimeout
		}
		srv := &http.Server{Handler: bodyIdleTimeout(l.Handler, idle), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
			BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
		servers = append(servers, srv)
		log.Info("http listening", "addr", ln.Addr().String())
		if ready != nil {
			ready(l.Addr, ln.Addr().String())
		}
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.Shutdown(sctx) }()
	}
	wg.Wait()
	return err
}

// DefaultBodyIdleTimeout is how long a request body may send nothing
// before the read fails and the connection is closed (Listener's
// BodyIdleTimeout when unset). A whole-request deadline would
// cut off large uploads on slow links; this only stops a client that sends
// headers and then trickles or stalls, which would otherwise hold a
// connection and a goroutine for as long as it likes.
const DefaultBodyIdleTimeout = 30 * time.Second

// bodyIdleTimeout gives every request with a body a read deadline of d that
// moves forward with each read that returns data and is cleared when the
// body has been read to its end (so that net/http's background read of a finished request
// never times out while a long response is written).
func bodyIdleTimeout(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(d)) == nil {
				r.Body = &idleBody{ReadCloser: r.Body, rc: rc, d: d}
			}
		}
		h.ServeHTTP(w, r)
	})
}

type idleBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	d    time.Duration
	done bool
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case b.done:
	case err == io.EOF:
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case err != nil:
		// Keep the deadline that failed: the server's drain of the rest
		// of the body then fails at once and the connection is closed.
		b.done = true
	case n > 0:
		_ = b.rc.SetReadDeadline(time.Now().Add(b.d))
	}
	return n, err
}

// Gate answers 503 until Open swaps in the real handler, so that a role
// waiting for NATS at start already says why on /ready (and /health is 200:
// the process is alive).
type Gate struct {
	h      atomic.Pointer[http.Handler]
	reason atomic.Pointer[string]
}

// NewGate returns a closed gate with the given reason.
func NewGate(reason string) *Gate {
	g := &Gate{}
	g.SetReason(reason)
	return g
}

// SetReason changes what /ready says while the gate is closed.
func (g *Gate) SetReason(s string) { g.reason.Store(&s) }

// Open sends every later request to h.
func (g *Gate) Open(h http.Handler) { g.h.Store(&h) }

// ServeHTTP implements http.Handler.
func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := g.h.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	if r.URL.Path == "/health" {
		httpx.WriteJSON(w, http.StatusOK, HealthBody{Status: "starting", Timestamp: time.Now().Unix()})
		return
	}
	httpx.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "reason": *g.reason.Load()})
}
