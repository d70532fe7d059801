package probe

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Resolver maps host names to dial addresses: an override table of host or
// host:port patterns (path.Match globs), used in tests to point names such
// as rdap.nic.<tld> at loopback servers. Names without an override are
// dialled as they are.
type Resolver struct {
	exact    map[string]string
	patterns []pattern
	dialer   net.Dialer
}

type pattern struct{ glob, to string }

// NewResolver builds a resolver from the probe.resolve table.
func NewResolver(table map[string]string) *Resolver {
	r := &Resolver{exact: map[string]string{}}
	for k, v := range table {
		k = strings.ToLower(k)
		if strings.ContainsAny(k, "*?[") {
			r.patterns = append(r.patterns, pattern{k, v})
		} else {
			r.exact[k] = v
		}
	}
	// Longer patterns are more specific: try them first, deterministically.
	sort.Slice(r.patterns, func(i, j int) bool {
		if len(r.patterns[i].glob) != len(r.patterns[j].glob) {
			return len(r.patterns[i].glob) > len(r.patterns[j].glob)
		}
		return r.patterns[i].glob < r.patterns[j].glob
	})
	return r
}

// Map returns the address to dial for addr (host:port).
func (r *Resolver) Map(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	host = strings.ToLower(host)
	to, ok := r.lookup(net.JoinHostPort(host, port))
	if !ok {
		to, ok = r.lookup(host)
	}
	if !ok {
		return addr
	}
	if _, _, err := net.SplitHostPort(to); err == nil {
		return to
	}
	return net.JoinHostPort(to, port)
}

func (r *Resolver) lookup(key string) (string, bool) {
	if v, ok := r.exact[key]; ok {
		return v, true
	}
	for _, p := range r.patterns {
		if ok, _ := path.Match(p.glob, key); ok {
			return p.to, true
		}
	}
	return "", false
}

// DialContext dials addr after mapping it.
func (r *Resolver) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return r.dialer.DialContext(ctx, network, r.Map(addr))
}

// Limiter bounds requests: at most perHost in flight to one host name and
// a global rate (0 = unlimited). One Limiter serves a whole process.
type Limiter struct {
	perHost int
	rate    *rate.Limiter

	mu    sync.Mutex
	hosts map[string]*hostSem
}

type hostSem struct {
	ch   chan struct{}
	refs int
}

// NewLimiter returns a limiter; rps <= 0 means no global rate.
func NewLimiter(perHost int, rps float64) *Limiter {
	l := &Limiter{perHost: max(perHost, 1), hosts: map[string]*hostSem{}}
	if rps > 0 {
		l.rate = rate.NewLimiter(rate.Limit(rps), max(1, int(rps)))
	}
	return l
}

// Acquire waits for a slot for host and a rate token; call the returned
// release when the request is done.
func (l *Limiter) Acquire(ctx context.Context, host string) (func(), error) {
	host = strings.ToLower(host)
	l.mu.Lock()
	s, ok := l.hosts[host]
	if !ok {
		s = &hostSem{ch: make(chan struct{}, l.perHost)}
		l.hosts[host] = s
	}
	s.refs++
	l.mu.Unlock()
	done := func() {
		l.mu.Lock()
		s.refs--
		if s.refs == 0 {
			delete(l.hosts, host)
		}
		l.mu.Unlock()
	}
	select {
	case s.ch <- struct{}{}:
	case <-ctx.Done():
		done()
		return nil, ctx.Err()
	}
	if l.rate != nil {
		if err := l.rate.Wait(ctx); err != nil {
			<-s.ch
			done()
			return nil, fmt.Errorf("rate limit: %w", err)
		}
	}
	return func() { <-s.ch; done() }, nil
}

// newHTTPClient returns the client for RDAP queries and input downloads:
// the resolver's dialer, a bounded number of redirects, no cookies.
func newHTTPClient(res *Resolver, timeout time.Duration, maxRedirects int, insecure bool) *http.Client {
	tr := &http.Transport{
		DialContext:           res.DialContext,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       30 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	if insecure {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // tests only, documented
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			if len(via) > 0 {
				req.Header.Set("User-Agent", via[0].Header.Get("User-Agent"))
			}
			return nil
		},
	}
}
