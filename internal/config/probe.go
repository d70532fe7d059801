package config

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"strings"
	"time"
)

// Probe configures the TLD RDAP/WHOIS check and stealth RDAP discovery. Its
// keys are documented in pipeline.yaml and docs/config-probe.md.
type Probe struct {
	// TLDList is the IANA TLD list (tlds-alpha-by-domain.txt): an http(s) URL or a file path.
	TLDList string `yaml:"tld_list"`
	// RDAPBootstrap is the IANA RDAP bootstrap for domains (dns.json): an http(s) URL or a file path.
	RDAPBootstrap string `yaml:"rdap_bootstrap"`
	// WhoisDiscovery is the host:port asked for a TLD's `whois:` line
	// (whois.iana.org:43); "" uses only the fallback table.
	WhoisDiscovery string `yaml:"whois_discovery"`
	// WhoisFallback is a TSV table "tld<TAB>whois server" (URL or path) used
	// when discovery gives no answer; "" for none. The default,
	// "builtin:tld-whois.tsv", is the table built into the binary.
	WhoisFallback string `yaml:"whois_fallback"`
	// WhoisServers maps a TLD to its WHOIS server; it wins over both discovery and the table.
	WhoisServers map[string]string `yaml:"whois_servers"`
	// WhoisPort is the port WHOIS servers are queried on.
	WhoisPort int `yaml:"whois_port"`
	// Stealth configures the discovery of RDAP servers not in the bootstrap.
	Stealth Stealth `yaml:"stealth"`
	// Timeout bounds one RDAP request, redirects included.
	Timeout time.Duration `yaml:"timeout"`
	// WhoisTimeout bounds one WHOIS exchange (connect, query, answer).
	WhoisTimeout time.Duration `yaml:"whois_timeout"`
	// DeadTimeout bounds a request to a server that already timed out in
	// the same run (capped at Timeout and WhoisTimeout); such a request is
	// not retried and the server is not asked for /help.
	DeadTimeout time.Duration `yaml:"dead_timeout"`
	// Retries is how many times a transient failure (timeout, refused, 5xx, 429) is retried.
	Retries int `yaml:"retries"`
	// Backoff is the wait before the first retry; it doubles with each retry.
	Backoff time.Duration `yaml:"backoff"`
	// MaxRedirects is how many HTTP redirects an RDAP query may follow.
	MaxRedirects int `yaml:"max_redirects"`
	// Concurrency is how many TLDs one worker process checks at once.
	Concurrency int `yaml:"concurrency"`
	// PerHost caps requests in flight to one host name, per worker process.
	PerHost int `yaml:"per_host"`
	// Rate caps requests per second, per worker process; 0 = unlimited.
	Rate float64 `yaml:"rate"`
	// UserAgent is sent with every RDAP request.
	UserAgent string `yaml:"user_agent"`
	// Resolve overrides where a host name is dialled: keys are host or
	// host:port patterns (path.Match globs such as "rdap.nic.*"), values are
	// "ip" (keep the port) or "ip:port". Tests point every name at loopback.
	Resolve map[string]string `yaml:"resolve"`
	// InsecureSkipVerify disables TLS certificate checks (tests only).
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
	// MaxTLDs limits a run to the first N TLDs of the list; 0 = all.
	MaxTLDs int `yaml:"max_tlds"`
	// OnlyTLDs limits a run to these TLDs (empty = the whole list).
	OnlyTLDs []string `yaml:"only_tlds"`
	// Prefix is the object store folder results are published under.
	Prefix string `yaml:"prefix"`
	// LockTTL is how long the run lease lives without renewal: a crashed
	// coordinator's run is resumed by another instance after this long.
	LockTTL time.Duration `yaml:"lock_ttl"`
	// StallTimeout re-queues TLDs that have no result after this long without progress.
	StallTimeout time.Duration `yaml:"stall_timeout"`
	// RunTimeout ends a run as failed after this long.
	RunTimeout time.Duration `yaml:"run_timeout"`
	// Poll is how often a worker looks for a requested or orphaned run.
	Poll time.Duration `yaml:"poll"`
	// RunRetries is how many times a failed run (inputs unreachable, the
	// store down) is run again before the next tick, after RunRetryWait,
	// then twice that, ...; also the first check at start.
	RunRetries int `yaml:"run_retries"`
	// RunRetryWait is the wait before the first retry of a failed run.
	RunRetryWait time.Duration `yaml:"run_retry_wait"`
	// RatePerMinute is the API limit per client address (the spec says 100).
	RatePerMinute int `yaml:"rate_per_minute"`
	// HistoryRuns is how many runs' results stay in the object store
	// (prefix runs/<run>/) for /api/history and /api/changes.
	HistoryRuns int `yaml:"history_runs"`
}

// Stealth configures stealth RDAP discovery.
type Stealth struct {
	// Enabled turns discovery on.
	Enabled bool `yaml:"enabled"`
	// Candidates are base URL templates tried for every TLD; "<tld>" is replaced by the TLD.
	Candidates []string `yaml:"candidates"`
	// CandidatesFile is a JSON file (URL or path) in the shape of
	// supplemental-cctld-rdap.json: {"ccTldRdapServers": [{"tld", "rdapServer"}]};
	// "" for none. The default, "builtin:supplemental-cctld-rdap.json", is
	// the file built into the binary.
	CandidatesFile string `yaml:"candidates_file"`
	// Derive adds hosts derived from the TLD's WHOIS and registry names
	// (whois.X -> rdap.X, www.X -> rdap.X).
	Derive bool `yaml:"derive"`
	// Scheme is used for derived hosts (https, or http in tests).
	Scheme string `yaml:"scheme"`
	// MaxTLDs limits discovery to the first N TLDs of a run; 0 = unlimited.
	MaxTLDs int `yaml:"max_tlds"`
}

// The probe inputs that ship inside the binary (probe/defaults/), named
// as the probe reads them; the defaults use them.
const (
	BuiltinWhoisFallback     = "builtin:tld-whois.tsv"
	BuiltinStealthCandidates = "builtin:supplemental-cctld-rdap.json"
)

func defaultProbe() Probe {
	return Probe{
		TLDList:        "https://data.iana.org/TLD/tlds-alpha-by-domain.txt",
		RDAPBootstrap:  "https://data.iana.org/rdap/dns.json",
		WhoisDiscovery: "whois.iana.org:43",
		WhoisFallback:  BuiltinWhoisFallback,
		WhoisPort:      43,
		Stealth: Stealth{
			Enabled:        true,
			CandidatesFile: BuiltinStealthCandidates,
			Candidates:     []string{"https://rdap.nic.<tld>/"},
			Derive:         true,
			Scheme:         "https",
		},
		Timeout:       10 * time.Second,
		WhoisTimeout:  10 * time.Second,
		DeadTimeout:   2 * time.Second,
		Retries:       2,
		Backoff:       time.Second,
		MaxRedirects:  3,
		Concurrency:   32,
		PerHost:       4,
		Rate:          50,
		UserAgent:     "netintel-tldprobe/1.0 (TLD RDAP/WHOIS status; +https://github.com/netintel/netintel)",
		Prefix:        "tld/",
		LockTTL:       time.Minute,
		StallTimeout:  10 * time.Minute,
		RunTimeout:    24 * time.Hour,
		Poll:          10 * time.Second,
		RunRetries:    5,
		RunRetryWait:  5 * time.Minute,
		RatePerMinute: 100,
		HistoryRuns:   30,
	}
}

func (c *Probe) validate(p string) []error {
	var errs []error
	add := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: %s", p, field, fmt.Sprintf(format, a...)))
	}
	if strings.TrimSpace(c.TLDList) == "" {
		add("tld_list", "%v", errRequired)
	}
	if strings.TrimSpace(c.RDAPBootstrap) == "" {
		add("rdap_bootstrap", "%v", errRequired)
	}
	if c.WhoisDiscovery != "" {
		if _, _, err := net.SplitHostPort(c.WhoisDiscovery); err != nil {
			add("whois_discovery", "must be host:port, got %q", c.WhoisDiscovery)
		}
	}
	for _, f := range []struct{ field, v string }{{"whois_fallback", c.WhoisFallback}, {"stealth.candidates_file", c.Stealth.CandidatesFile}} {
		if name, ok := strings.CutPrefix(f.v, "builtin:"); ok && f.v != BuiltinWhoisFallback && f.v != BuiltinStealthCandidates {
			add(f.field, "no built-in input %q (have %s, %s)", name, BuiltinWhoisFallback, BuiltinStealthCandidates)
		}
	}
	if c.WhoisPort < 1 || c.WhoisPort > 65535 {
		add("whois_port", "must be 1..65535, got %d", c.WhoisPort)
	}
	for _, tld := range sortedKeys(c.WhoisServers) {
		if strings.TrimSpace(c.WhoisServers[tld]) == "" {
			add("whois_servers."+tld, "%v", errRequired)
		}
	}
	c.Stealth.validate(add)
	positive := []struct {
		name string
		d    time.Duration
	}{{"timeout", c.Timeout}, {"whois_timeout", c.WhoisTimeout}, {"dead_timeout", c.DeadTimeout}, {"lock_ttl", c.LockTTL}, {"stall_timeout", c.StallTimeout}, {"run_timeout", c.RunTimeout}, {"poll", c.Poll}}
	for _, f := range positive {
		if f.d <= 0 {
			add(f.name, "must be > 0, got %s", f.d)
		}
	}
	if c.Backoff < 0 {
		add("backoff", "must be >= 0, got %s", c.Backoff)
	}
	if c.Retries < 0 || c.Retries > 10 {
		add("retries", "must be 0..10, got %d", c.Retries)
	}
	if c.MaxRedirects < 0 || c.MaxRedirects > 10 {
		add("max_redirects", "must be 0..10, got %d", c.MaxRedirects)
	}
	if c.Concurrency < 1 || c.Concurrency > 4096 {
		add("concurrency", "must be 1..4096, got %d", c.Concurrency)
	}
	if c.PerHost < 1 {
		add("per_host", "must be >= 1, got %d", c.PerHost)
	}
	if c.Rate < 0 {
		add("rate", "must be >= 0 (0 = unlimited), got %g", c.Rate)
	}
	if strings.TrimSpace(c.UserAgent) == "" {
		add("user_agent", "%v", errRequired)
	}
	validateResolve(c.Resolve, add)
	if c.MaxTLDs < 0 {
		add("max_tlds", "must be >= 0, got %d", c.MaxTLDs)
	}
	if c.Prefix == "" || strings.HasPrefix(c.Prefix, "/") || !strings.HasSuffix(c.Prefix, "/") {
		add("prefix", "must be a relative folder ending in /, got %q", c.Prefix)
	}
	if c.RunRetries < 0 || c.RunRetries > 10 {
		add("run_retries", "must be 0..10, got %d", c.RunRetries)
	}
	if c.RunRetries > 0 && c.RunRetryWait < time.Second {
		add("run_retry_wait", "must be >= 1s when run_retries > 0, got %s", c.RunRetryWait)
	}
	if c.RatePerMinute < 1 {
		add("rate_per_minute", "must be >= 1, got %d", c.RatePerMinute)
	}
	if c.HistoryRuns < 1 || c.HistoryRuns > 1000 {
		add("history_runs", "must be 1..1000, got %d", c.HistoryRuns)
	}
	return errs
}

// validate checks the stealth RDAP discovery settings; add reports a
// problem with its field under probe.
func (c *Stealth) validate(add func(field, format string, a ...any)) {
	for i, t := range c.Candidates {
		u, err := url.Parse(strings.ReplaceAll(t, "<tld>", "example"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add(fmt.Sprintf("stealth.candidates[%d]", i), "must be an http(s) URL template like https://rdap.example/<tld>/, got %q", t)
		}
	}
	if c.Scheme != "http" && c.Scheme != "https" {
		add("stealth.scheme", "must be http or https, got %q", c.Scheme)
	}
	if c.MaxTLDs < 0 {
		add("stealth.max_tlds", "must be >= 0, got %d", c.MaxTLDs)
	}
}

// validateResolve checks probe.resolve: host:port patterns mapped to an
// ip or ip:port.
func validateResolve(resolve map[string]string, add func(field, format string, a ...any)) {
	for _, k := range sortedKeys(resolve) {
		v := resolve[k]
		if _, err := path.Match(k, "x"); err != nil {
			add("resolve."+k, "bad pattern: %v", err)
		}
		host := v
		if h, _, err := net.SplitHostPort(v); err == nil {
			host = h
		}
		if host == "" {
			add("resolve."+k, "must be ip or ip:port, got %q", v)
		}
	}
}
