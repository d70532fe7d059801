package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/netintel/netintel/internal/config"
)

// Checker runs the checks of one TLD. It is safe for concurrent use; one
// Checker (and so one Limiter) serves a whole process.
type Checker struct {
	cfg    config.Probe
	res    *Resolver
	client *http.Client
	lim    *Limiter
	log    *slog.Logger
	// sleep waits between retries (replaced in tests).
	sleep func(ctx context.Context, d time.Duration) error
	m     *metrics
	dead  timedOut
}

// timedOut remembers the servers (host:port) that timed out during the
// current run. Many TLDs share a back-end server: once it hangs, the
// others of the run ask it once more with dead_timeout, not retried, and
// never for /help. A server that answers is forgotten.
type timedOut struct {
	mu    sync.Mutex
	run   string
	hosts map[string]bool
}

func (d *timedOut) has(run, host string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.run == run && d.hosts[host]
}

func (d *timedOut) set(run, host string, dead bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.run != run || d.hosts == nil {
		if !dead {
			return
		}
		// A new run starts afresh; so does the first timeout of a check
		// made outside any run (run "", the zero value's).
		d.run, d.hosts = run, map[string]bool{}
	}
	if dead {
		d.hosts[host] = true
	} else {
		delete(d.hosts, host)
	}
}

// runKey carries the run id of the work item being checked in its context.
type runKey struct{}

func runOf(ctx context.Context) string {
	s, _ := ctx.Value(runKey{}).(string)
	return s
}

// errTimeout is a server that did not answer in time. It is not retried,
// and the server is remembered as timed out for the rest of the run.
var errTimeout = errors.New("timed out")

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)
}

// within is timeout, or dead_timeout (when shorter) for a server that
// already timed out in this run.
func (c *Checker) within(ctx context.Context, host string, timeout time.Duration) time.Duration {
	if c.dead.has(runOf(ctx), host) && c.cfg.DeadTimeout > 0 {
		return min(timeout, c.cfg.DeadTimeout)
	}
	return timeout
}

// NewChecker returns a checker for cfg.
func NewChecker(cfg config.Probe, log *slog.Logger) *Checker {
	res := NewResolver(cfg.Resolve)
	return &Checker{
		cfg:    cfg,
		res:    res,
		client: newHTTPClient(res, cfg.Timeout, cfg.MaxRedirects, cfg.InsecureSkipVerify),
		lim:    NewLimiter(cfg.PerHost, cfg.Rate),
		log:    log.With("stage", "probe-check"),
		sleep:  sleepCtx,
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// errTransient marks a failure worth retrying (timeout, refused, 5xx, 429).
var errTransient = errors.New("transient")

// errNotRDAP is an answer that is not RDAP (wrong status, type or body).
var errNotRDAP = errors.New("not an RDAP answer")

// retry runs f up to 1+Retries times while it fails with errTransient,
// waiting Backoff, 2*Backoff, ... between attempts. A timeout is not
// retried: a server that hangs would cost the whole timeout again.
func (c *Checker) retry(ctx context.Context, f func() error) error {
	wait := c.cfg.Backoff
	var err error
	for attempt := 0; ; attempt++ {
		err = f()
		if err == nil || !errors.Is(err, errTransient) || errors.Is(err, errTimeout) || attempt >= c.cfg.Retries || ctx.Err() != nil {
			return err
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return err
		}
		wait *= 2
	}
}

// rdapDoc is the part of an RDAP answer the checks read.
type rdapDoc struct {
	Conformance     []string `json:"rdapConformance"`
	ObjectClassName string   `json:"objectClassName"`
	LDHName         string   `json:"ldhName"`
	ErrorCode       int      `json:"errorCode"`
}

// maxRDAPBody bounds an RDAP answer read.
const maxRDAPBody = 1 << 20

// rdapGet fetches u and applies the RDAP rule: status 200 (or 404 when
// allow404), a JSON content type (application/rdap+json or
// application/json), a JSON object body with a non-empty rdapConformance
// array. It returns the HTTP status and the decoded document.
func (c *Checker) rdapGet(ctx context.Context, u string, allow404 bool) (int, *rdapDoc, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: bad url: %w", errNotRDAP, err)
	}
	var status int
	var doc *rdapDoc
	err = c.retry(ctx, func() error {
		err := c.rdapOnce(ctx, pu, u, allow404, &status, &doc)
		c.m.request("rdap", err)
		return err
	})
	if err != nil {
		return status, nil, err
	}
	return status, doc, nil
}

func (c *Checker) rdapOnce(ctx context.Context, pu *url.URL, u string, allow404 bool, statusOut *int, docOut **rdapDoc) error {
	release, err := c.lim.Acquire(ctx, pu.Hostname())
	if err != nil {
		return err
	}
	defer release()
	host, run := strings.ToLower(pu.Host), runOf(ctx)
	rctx, cancel := context.WithTimeout(ctx, c.within(ctx, host, c.cfg.Timeout))
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%w: %w", errNotRDAP, err)
	}
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	req.Header.Set("Accept", "application/rdap+json, application/json;q=0.9")
	resp, err := c.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && strings.Contains(ue.Err.Error(), "redirects") {
			return fmt.Errorf("%w: %w", errNotRDAP, err)
		}
		if isTimeout(err) && ctx.Err() == nil {
			c.dead.set(run, host, true)
			return fmt.Errorf("%w: %w: %w", errTransient, errTimeout, err)
		}
		return fmt.Errorf("%w: %w", errTransient, err)
	}
	defer resp.Body.Close()
	status := resp.StatusCode
	*statusOut = status
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRDAPBody))
	if err != nil {
		if isTimeout(err) && ctx.Err() == nil {
			c.dead.set(run, host, true)
			return fmt.Errorf("%w: %w: read body: %w", errTransient, errTimeout, err)
		}
		return fmt.Errorf("%w: read body: %w", errTransient, err)
	}
	c.dead.set(run, host, false) // it answered
	switch {
	case status >= 500 || status == http.StatusTooManyRequests:
		return fmt.Errorf("%w: status %d", errTransient, status)
	case status == http.StatusOK, status == http.StatusNotFound && allow404:
	default:
		return fmt.Errorf("%w: status %d", errNotRDAP, status)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/rdap+json" && mt != "application/json" {
		return fmt.Errorf("%w: content type %q", errNotRDAP, mt)
	}
	var d rdapDoc
	if err := json.Unmarshal(body, &d); err != nil {
		return fmt.Errorf("%w: body: %w", errNotRDAP, err)
	}
	if len(d.Conformance) == 0 {
		return fmt.Errorf("%w: no rdapConformance", errNotRDAP)
	}
	*docOut = &d
	return nil
}

// RDAPWorks applies the working rule to one base URL: GET
// <base>domain/nic.<tld> answers RDAP with 200 or an RDAP-shaped 404 (an
// unknown name still proves a working server), or else GET <base>help
// answers RDAP with 200. A server that timed out on the first query is
// not asked for help.
func (c *Checker) RDAPWorks(ctx context.Context, tld, base string) bool {
	_, _, err := c.rdapGet(ctx, base+"domain/nic."+tld, true)
	if err == nil {
		return true
	}
	c.log.Debug("rdap domain query failed", "tld", tld, "url", base, "err", err)
	if errors.Is(err, errTimeout) {
		return false
	}
	_, _, err = c.rdapGet(ctx, base+"help", false)
	if err != nil {
		c.log.Debug("rdap help query failed", "tld", tld, "url", base, "err", err)
	}
	return err == nil
}

// StealthWorks applies the stricter stealth rule to a candidate base URL:
// GET <base>domain/nic.<tld> must answer 200 with RDAP JSON describing a
// domain object named nic.<tld>. A 404, even RDAP-shaped, does not count:
// a back-end host answers 404 for TLDs it does not serve.
func (c *Checker) StealthWorks(ctx context.Context, tld, base string) bool {
	status, doc, err := c.rdapGet(ctx, base+"domain/nic."+tld, false)
	if err != nil || status != http.StatusOK {
		return false
	}
	return strings.EqualFold(doc.ObjectClassName, "domain") &&
		strings.EqualFold(strings.TrimSuffix(doc.LDHName, "."), "nic."+tld)
}

// maxWhois bounds a WHOIS answer read.
const maxWhois = 64 << 10

// whoisQuery sends query to server (host or host:port) on port 43 (or the
// configured port) and returns the answer, read until the server closes the
// connection or the timeout ends. A failure to connect or an empty answer
// is transient.
func (c *Checker) whoisQuery(ctx context.Context, server, query string) ([]byte, error) {
	addr := server
	if _, _, err := net.SplitHostPort(server); err != nil {
		addr = net.JoinHostPort(server, strconv.Itoa(c.cfg.WhoisPort))
	}
	host, _, _ := net.SplitHostPort(addr)
	var answer []byte
	err := c.retry(ctx, func() error {
		err := c.whoisOnce(ctx, host, addr, query, &answer)
		c.m.request("whois", err)
		return err
	})
	return answer, err
}

func (c *Checker) whoisOnce(ctx context.Context, host, addr, query string, answer *[]byte) error {
	release, err := c.lim.Acquire(ctx, host)
	if err != nil {
		return err
	}
	defer release()
	run := runOf(ctx)
	qctx, cancel := context.WithTimeout(ctx, c.within(ctx, addr, c.cfg.WhoisTimeout))
	defer cancel()
	conn, err := c.res.DialContext(qctx, "tcp", addr)
	if err != nil {
		if isTimeout(err) && ctx.Err() == nil {
			c.dead.set(run, addr, true)
			return fmt.Errorf("%w: %w: %w", errTransient, errTimeout, err)
		}
		return fmt.Errorf("%w: %w", errTransient, err)
	}
	defer conn.Close()
	deadline, _ := qctx.Deadline()
	_ = conn.SetDeadline(deadline)
	if _, err := io.WriteString(conn, query+"\r\n"); err != nil {
		return fmt.Errorf("%w: write: %w", errTransient, err)
	}
	b, err := io.ReadAll(io.LimitReader(conn, maxWhois))
	*answer = b
	if len(bytes.TrimSpace(b)) == 0 {
		if err == nil {
			err = errors.New("empty answer")
		}
		if isTimeout(err) && ctx.Err() == nil {
			c.dead.set(run, addr, true)
			return fmt.Errorf("%w: %w: %w", errTransient, errTimeout, err)
		}
		return fmt.Errorf("%w: %w", errTransient, err)
	}
	c.dead.set(run, addr, false)
	// Data then a timeout: the server kept the connection open after
	// answering; the answer stands.
	return nil
}

// whoisErrorPrefixes start answers that refuse the query rather than answer it.
var whoisErrorPrefixes = []string{"error", "access denied", "access refused", "refused", "query rate", "rate limit", "too many", "exceeded", "quota", "connection refused", "permission denied", "not authorised", "not authorized"}

// WhoisAnswerOK applies the WHOIS rule to an answer: non-empty; valid text
// (at least 90% of its runes printable or white space, with a letter); and
// its first line that is not a comment ("%" or "#") does not start with an
// error phrase ("error", "access denied", "rate limit", ...). "No match"
// answers count: the server answered.
func WhoisAnswerOK(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return false
	}
	runes, good, letters := 0, 0, 0
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		runes++
		switch {
		case r == utf8.RuneError && size == 1:
			// Latin-1 text is common in WHOIS: accept high bytes, not controls.
			if b[i] >= 0xa0 {
				good++
			}
		case unicode.IsPrint(r) || r == '\n' || r == '\r' || r == '\t':
			good++
			if unicode.IsLetter(r) {
				letters++
			}
		}
		i += size
	}
	if letters == 0 || good*10 < runes*9 {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		l := strings.ToLower(strings.TrimSpace(line))
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "%") || strings.HasPrefix(l, "#") {
			l = strings.TrimSpace(strings.TrimLeft(l, "%# "))
			if !slices.ContainsFunc(whoisErrorPrefixes, func(p string) bool { return strings.HasPrefix(l, p) }) {
				continue
			}
		}
		return !slices.ContainsFunc(whoisErrorPrefixes, func(p string) bool { return strings.HasPrefix(l, p) })
	}
	return true
}

// Check runs every check of one work item and returns its TLD result.
func (c *Checker) Check(ctx context.Context, w Work) Result {
	defer c.m.checked(time.Now())
	ctx = context.WithValue(ctx, runKey{}, w.RunID)
	r := Result{TLD: w.TLD, RDAPURLs: nonNil(w.RDAPURLs), StealthURLs: []string{}}
	r.RDAPSupported = len(w.RDAPURLs) > 0
	if r.RDAPSupported {
		r.RDAPWorking = ptr(false)
		for _, u := range w.RDAPURLs {
			if c.RDAPWorks(ctx, w.TLD, u) {
				r.RDAPWorking, r.WorkingURL = ptr(true), ptr(u)
				break
			}
		}
	}
	server, iana := c.whoisServer(ctx, w)
	if server != "" {
		r.WhoisServer = ptr(server)
		ans, err := c.whoisQuery(ctx, server, "nic."+w.TLD)
		ok := err == nil && WhoisAnswerOK(ans)
		if !ok {
			c.log.Debug("whois check failed", "tld", w.TLD, "server", server, "err", err)
		}
		r.WhoisAvailable = ptr(ok)
	}
	if w.Stealth {
		for _, cand := range c.candidates(w, server, iana.RegistryURL) {
			if ctx.Err() != nil {
				break
			}
			if c.StealthWorks(ctx, w.TLD, cand) {
				r.StealthURLs = append(r.StealthURLs, cand)
			}
		}
		r.StealthRDAP = len(r.StealthURLs) > 0
	}
	return r
}

// whoisServer finds the TLD's WHOIS server: the configured override, else
// the `whois:` line from the discovery server, else the fallback table.
func (c *Checker) whoisServer(ctx context.Context, w Work) (string, IANAWhois) {
	var iana IANAWhois
	if s := c.cfg.WhoisServers[w.TLD]; s != "" {
		return s, iana
	}
	if c.cfg.WhoisDiscovery != "" {
		ans, err := c.whoisQuery(ctx, c.cfg.WhoisDiscovery, w.TLD)
		if err == nil {
			iana = ParseIANAWhois(ans)
		} else {
			c.log.Debug("whois discovery failed", "tld", w.TLD, "err", err)
		}
	}
	if iana.Whois != "" {
		return iana.Whois, iana
	}
	return w.WhoisFallback, iana
}

// candidates lists the stealth base URLs to try for a TLD, without those
// the bootstrap lists (compared by host and path, ignoring the scheme).
func (c *Checker) candidates(w Work, whoisServer, registryURL string) []string {
	var out []string
	seen := map[string]bool{}
	for _, u := range w.RDAPURLs {
		seen[serverKey(u)] = true
	}
	add := func(u string) {
		if nu, ok := normalizeBase(u); ok && !seen[serverKey(nu)] {
			seen[serverKey(nu)] = true
			out = append(out, nu)
		}
	}
	for _, t := range c.cfg.Stealth.Candidates {
		add(strings.ReplaceAll(t, "<tld>", w.TLD))
	}
	for _, u := range w.Candidates {
		add(u)
	}
	if c.cfg.Stealth.Derive {
		if rest, ok := strings.CutPrefix(whoisServer, "whois."); ok && strings.Contains(rest, ".") {
			add(c.cfg.Stealth.Scheme + "://rdap." + rest + "/")
		}
		if u, err := url.Parse(registryURL); err == nil && u.Hostname() != "" {
			h := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
			if strings.Contains(h, ".") {
				add(c.cfg.Stealth.Scheme + "://rdap." + h + "/")
			}
		}
	}
	return out
}

// serverKey identifies an RDAP base URL regardless of scheme.
func serverKey(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return u
	}
	return strings.ToLower(pu.Host) + pu.Path
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
