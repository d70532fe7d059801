package probe

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/config"
)

// world is a loopback Internet: one HTTP server answering for every RDAP
// host name (behaviour chosen by the Host header), a WHOIS server
// (behaviour chosen by the queried TLD), an IANA WHOIS server, and a closed
// port for servers that refuse connections. The resolver table points every
// name at them.
type world struct {
	t       testing.TB
	http    *httptest.Server
	whois   net.Listener
	iana    net.Listener
	closed  string
	latency time.Duration

	mu sync.Mutex
	// rdapHosts maps an RDAP host name to its behaviour (see rdapBehave).
	rdapHosts map[string]string
	// whoisTLDs maps a TLD to how its WHOIS server answers nic.<tld>.
	whoisTLDs map[string]string
	// ianaWhois maps a TLD to the `whois:` line IANA gives ("" = none).
	ianaWhois map[string]string
	// ianaRegistry maps a TLD to its "Registration information" URL.
	ianaRegistry map[string]string

	requests     atomic.Int64
	pathHits     sync.Map // host+path -> *atomic.Int64
	whoisQueries sync.Map // query -> *atomic.Int64
}

func newWorld(t testing.TB) *world {
	t.Helper()
	w := &world{t: t, rdapHosts: map[string]string{}, whoisTLDs: map[string]string{}, ianaWhois: map[string]string{}, ianaRegistry: map[string]string{}}
	w.http = httptest.NewServer(http.HandlerFunc(w.serveRDAP))
	t.Cleanup(w.http.Close)
	w.whois = w.listen(w.serveWhois)
	w.iana = w.listen(w.serveIANA)
	// A port nothing listens on: connections are refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w.closed = l.Addr().String()
	l.Close()
	return w
}

func (w *world) listen(serve func(net.Conn)) net.Listener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		w.t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	w.t.Cleanup(func() { close(done); l.Close(); wg.Wait() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				// Hanging servers end when the test ends or the client gives up.
				go func() { <-done; c.Close() }()
				serve(c)
			}()
		}
	}()
	return l
}

// resolve is the probe.resolve table for this world.
func (w *world) resolve() map[string]string {
	return map[string]string{
		"*:80":                 w.http.Listener.Addr().String(),
		"*:43":                 w.whois.Addr().String(),
		"whois.iana.test:43":   w.iana.Addr().String(),
		"whois.refuse.test:43": w.closed,
		"rdap.refuse.test:80":  w.closed,
	}
}

// config returns a probe config for the world with short timeouts.
func (w *world) config() config.Probe {
	c := config.Default().Probe
	c.Resolve = w.resolve()
	c.WhoisDiscovery = "whois.iana.test:43"
	c.Stealth.Candidates = []string{"http://rdap.nic.<tld>/"}
	c.Stealth.Scheme = "http"
	// The world is closed: none of the built-in tables' real servers.
	c.WhoisFallback = ""
	c.Stealth.CandidatesFile = ""
	c.Timeout = 400 * time.Millisecond
	c.WhoisTimeout = 400 * time.Millisecond
	c.Retries = 1
	c.Backoff = 10 * time.Millisecond
	c.Rate = 0
	c.PerHost = 16
	c.Poll = 100 * time.Millisecond
	c.LockTTL = time.Second
	return c
}

func (w *world) hit(host, path string) int64 {
	v, _ := w.pathHits.LoadOrStore(host+path, new(atomic.Int64))
	return v.(*atomic.Int64).Load()
}

func (w *world) wait(ctx context.Context) {
	if w.latency > 0 {
		select {
		case <-time.After(w.latency):
		case <-ctx.Done():
		}
	}
}

const rdapJSON = "application/rdap+json"

func writeRDAP(rw http.ResponseWriter, status int, ctype string, v any) {
	rw.Header().Set("Content-Type", ctype)
	rw.WriteHeader(status)
	_ = json.NewEncoder(rw).Encode(v)
}

// rdapBehave answers as host's behaviour says. Behaviours: good (RDAP
// domain objects for any name), notfound (RDAP-shaped 404), helponly,
// broken (invalid JSON), slow (past the timeout), 5xx, redirect (to
// rdap.good.test), loop (redirects to itself), html (catch-all 200 HTML),
// norc (JSON without rdapConformance), rdap404 (RDAP 404 for everything).
func (w *world) serveRDAP(rw http.ResponseWriter, r *http.Request) {
	w.requests.Add(1)
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	v, _ := w.pathHits.LoadOrStore(host+r.URL.Path, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
	w.wait(r.Context())
	if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "netintel-tldprobe/") {
		http.Error(rw, "bad user agent "+ua, http.StatusForbidden)
		return
	}
	w.mu.Lock()
	b, ok := w.rdapHosts[host]
	w.mu.Unlock()
	if !ok {
		http.NotFound(rw, r)
		return
	}
	_, name, isDomain := strings.Cut(r.URL.Path, "/domain/")
	isHelp := strings.HasSuffix(r.URL.Path, "/help")
	conf := []string{"rdap_level_0"}
	switch b {
	case "good":
		switch {
		case isDomain:
			writeRDAP(rw, 200, rdapJSON, map[string]any{"rdapConformance": conf, "objectClassName": "domain", "ldhName": name})
		case isHelp:
			writeRDAP(rw, 200, rdapJSON, map[string]any{"rdapConformance": conf, "notices": []any{}})
		default:
			writeRDAP(rw, 404, rdapJSON, map[string]any{"rdapConformance": conf, "errorCode": 404})
		}
	case "notfound", "rdap404":
		writeRDAP(rw, 404, rdapJSON, map[string]any{"rdapConformance": conf, "errorCode": 404, "title": "Not Found"})
	case "helponly":
		if isHelp {
			writeRDAP(rw, 200, "application/json", map[string]any{"rdapConformance": conf})
			return
		}
		http.Error(rw, "bad request", http.StatusBadRequest)
	case "broken":
		rw.Header().Set("Content-Type", rdapJSON)
		_, _ = rw.Write([]byte(`{"rdapConformance": ["rdap_level_0"], "objectClassName": `))
	case "slow":
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
			return
		}
		writeRDAP(rw, 200, rdapJSON, map[string]any{"rdapConformance": conf})
	case "5xx":
		http.Error(rw, "unavailable", http.StatusServiceUnavailable)
	case "redirect":
		http.Redirect(rw, r, "http://rdap.good.test"+r.URL.Path, http.StatusFound)
	case "loop":
		http.Redirect(rw, r, "http://"+host+r.URL.Path, http.StatusFound)
	case "html":
		rw.Header().Set("Content-Type", "text/html")
		_, _ = rw.Write([]byte("<html><body>Welcome</body></html>"))
	case "norc":
		writeRDAP(rw, 200, "application/json", map[string]any{"objectClassName": "domain", "ldhName": name})
	default:
		http.Error(rw, "unknown behaviour", http.StatusInternalServerError)
	}
}

// serveWhois answers "nic.<tld>" queries by the TLD's behaviour: good,
// nomatch, hang, junk, denied, silent (closes without a word).
func (w *world) serveWhois(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	q, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return
	}
	q = strings.TrimSpace(q)
	v, _ := w.whoisQueries.LoadOrStore(q, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
	w.requests.Add(1)
	tld := q[strings.LastIndex(q, ".")+1:]
	w.mu.Lock()
	b := w.whoisTLDs[tld]
	w.mu.Unlock()
	w.wait(context.Background())
	switch b {
	case "good", "":
		fmt.Fprintf(c, "Domain Name: %s\r\nRegistry Domain ID: 1-%s\r\nRegistrar: Example Registrar\r\n", strings.ToUpper(q), tld)
	case "nomatch":
		fmt.Fprintf(c, "%% WHOIS server\r\nNo match for \"%s\".\r\n", q)
	case "hang":
		time.Sleep(3 * time.Second)
	case "junk":
		_, _ = c.Write([]byte{0x00, 0x01, 0xff, 0xfe, 0x02, 0x03, 0x1b, 0x7f, 0x00, 0x10, 0x11, 0x12})
	case "denied":
		fmt.Fprint(c, "Error: access denied, query rate exceeded\r\n")
	case "silent":
	}
}

// serveIANA answers like whois.iana.org for a TLD.
func (w *world) serveIANA(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	q, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return
	}
	w.requests.Add(1)
	w.wait(context.Background())
	tld := strings.ToLower(strings.TrimSpace(q))
	w.mu.Lock()
	server, ok := w.ianaWhois[tld]
	reg := w.ianaRegistry[tld]
	w.mu.Unlock()
	if !ok {
		server = "whois.nic." + tld
	}
	fmt.Fprintf(c, "%% IANA WHOIS server\n%% for more information on IANA, visit http://www.iana.org\n\ndomain:       %s\n\norganisation: Example Registry\n\nwhois:        %s\n\nstatus:       ACTIVE\nremarks:      Registration information: %s\n\ncreated:      2014-01-01\n", strings.ToUpper(tld), server, reg)
}
