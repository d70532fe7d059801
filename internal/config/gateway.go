package config

import (
	"fmt"
	"net/url"
	"time"
)

// Gateway configures the customer-facing gateway: where it forwards, how key
// secrets are hashed, per-tier limits and the optional external validation
// service of Option B. Every key is described in docs/config-gateway.md.
type Gateway struct {
	// BackendURL is the base URL of the IP intelligence backend, e.g.
	// http://10.0.0.5:8080. Empty means: under `netintel run` the backend
	// handlers of the same process (called in-process); otherwise
	// http://<api.listeners.ip or api.listen> (0.0.0.0 and :: become loopback).
	BackendURL string `yaml:"backend_url"`
	// HashKey is the HMAC-SHA256 key (a pepper) for stored key secrets. The
	// CLI (`netintel keys`) and every gateway instance must share it;
	// changing it invalidates every issued key. Empty uses a built-in dev key
	// and logs a warning.
	HashKey string `yaml:"hash_key"`
	// BackendTimeout bounds the wait for the backend's response headers
	// (bodies such as exports may stream for longer).
	BackendTimeout time.Duration `yaml:"backend_timeout"`
	// MaxBodyBytes caps a request body (the batch endpoint); larger is 413.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// LastUsedInterval is how often each instance writes keys' last-used
	// times to the apikeys bucket.
	LastUsedInterval time.Duration `yaml:"last_used_interval"`
	// StateTimeout bounds the NATS work of one request (a key read on a
	// cache miss, a new lease of the rate window or the monthly credits);
	// past it the request fails closed with 503.
	StateTimeout time.Duration `yaml:"state_timeout"`
	// Lease sizes the blocks each copy takes from the shared counters
	// (per-key rate windows, per-user monthly credits, and the per-address
	// limits of the public APIs); docs/gateway.md gives the bound.
	Lease GatewayLease `yaml:"lease"`
	// Tiers holds the rate limit and monthly quota of each tier.
	Tiers GatewayTiers `yaml:"tiers"`
	// OptionB is the external validation service that enables ?apiKey=.
	OptionB GatewayOptionB `yaml:"option_b"`
}

// GatewayLease sizes the leases of the shared counters.
type GatewayLease struct {
	// Fraction is the largest lease as a fraction of the limit (0 < f <= 0.1).
	Fraction float64 `yaml:"fraction"`
	// Max is the largest lease in units, whatever the limit.
	Max int64 `yaml:"max"`
	// Idle is how long a lease may go unused before its unspent units are
	// given back to the shared counter.
	Idle time.Duration `yaml:"idle"`
	// TokenTTL is how long tokens leased from a per-address token bucket
	// stay usable (unspent ones are then dropped).
	TokenTTL time.Duration `yaml:"token_ttl"`
}

// GatewayTiers is the limits of each of the six tiers.
type GatewayTiers struct {
	Free       TierLimits `yaml:"free"`
	Starter    TierLimits `yaml:"starter"`
	Pro        TierLimits `yaml:"pro"`
	Scale      TierLimits `yaml:"scale"`
	Business   TierLimits `yaml:"business"`
	Enterprise TierLimits `yaml:"enterprise"`
}

// ByName returns the limits of a tier by its name.
func (t GatewayTiers) ByName(name string) (TierLimits, bool) {
	switch name {
	case "free":
		return t.Free, true
	case "starter":
		return t.Starter, true
	case "pro":
		return t.Pro, true
	case "scale":
		return t.Scale, true
	case "business":
		return t.Business, true
	case "enterprise":
		return t.Enterprise, true
	}
	return TierLimits{}, false
}

// TierLimits is one tier's limits.
type TierLimits struct {
	// RatePerMinute is requests per key per fixed one-minute window.
	RatePerMinute int `yaml:"rate_per_minute"`
	// MonthlyQuota is credits per user per calendar month (UTC); 0 = unlimited.
	MonthlyQuota int64 `yaml:"monthly_quota"`
}

// GatewayOptionB configures the external validation endpoint of Option B.
type GatewayOptionB struct {
	// URL is the base URL of the validation service; it answers POST
	// <url>/check and POST <url>/deduct. Empty disables Option B: ?apiKey= is
	// then ignored.
	URL string `yaml:"url"`
	// Token is sent as "Authorization: Bearer <token>" to the service.
	Token string `yaml:"token"`
	// Timeout bounds one call to the service.
	Timeout time.Duration `yaml:"timeout"`
	// Retries is how many times a timed-out or 5xx call is repeated (with
	// the same idempotency key for deductions).
	Retries int `yaml:"retries"`
}

func defaultGateway() Gateway {
	return Gateway{
		BackendTimeout:   60 * time.Second,
		MaxBodyBytes:     1 << 20,
		LastUsedInterval: time.Minute,
		StateTimeout:     2 * time.Second,
		Lease:            GatewayLease{Fraction: 0.01, Max: 1000, Idle: 2 * time.Second, TokenTTL: time.Second},
		Tiers: GatewayTiers{
			Free:       TierLimits{RatePerMinute: 2, MonthlyQuota: 10_000},
			Starter:    TierLimits{RatePerMinute: 30, MonthlyQuota: 1_000_000},
			Pro:        TierLimits{RatePerMinute: 100, MonthlyQuota: 10_000_000},
			Scale:      TierLimits{RatePerMinute: 250, MonthlyQuota: 50_000_000},
			Business:   TierLimits{RatePerMinute: 500},
			Enterprise: TierLimits{RatePerMinute: 10_000},
		},
		OptionB: GatewayOptionB{Timeout: 2 * time.Second, Retries: 1},
	}
}

func (c *Gateway) validate(path string) []error {
	var errs []error
	add := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: %s", path, field, fmt.Sprintf(format, a...)))
	}
	if c.BackendURL != "" {
		if u, err := url.Parse(c.BackendURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("backend_url", "must be an http(s) URL like http://127.0.0.1:8080, got %q", c.BackendURL)
		}
	}
	if c.BackendTimeout <= 0 {
		add("backend_timeout", "must be > 0")
	}
	if c.MaxBodyBytes <= 0 {
		add("max_body_bytes", "must be > 0")
	}
	if c.LastUsedInterval <= 0 {
		add("last_used_interval", "must be > 0")
	}
	if c.StateTimeout <= 0 {
		add("state_timeout", "must be > 0")
	}
	if c.Lease.Fraction <= 0 || c.Lease.Fraction > 0.1 {
		add("lease.fraction", "must be > 0 and <= 0.1, got %g", c.Lease.Fraction)
	}
	if c.Lease.Max < 1 {
		add("lease.max", "must be >= 1, got %d", c.Lease.Max)
	}
	if c.Lease.Idle <= 0 {
		add("lease.idle", "must be > 0")
	}
	if c.Lease.TokenTTL <= 0 {
		add("lease.token_ttl", "must be > 0")
	}
	for _, name := range []string{"free", "starter", "pro", "scale", "business", "enterprise"} {
		t, _ := c.Tiers.ByName(name)
		if t.RatePerMinute <= 0 {
			add("tiers."+name+".rate_per_minute", "must be > 0, got %d", t.RatePerMinute)
		}
		if t.MonthlyQuota < 0 {
			add("tiers."+name+".monthly_quota", "must be >= 0 (0 = unlimited), got %d", t.MonthlyQuota)
		}
	}
	if c.OptionB.URL != "" {
		if u, err := url.Parse(c.OptionB.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("option_b.url", "must be an http(s) URL, got %q", c.OptionB.URL)
		}
	}
	if c.OptionB.Timeout <= 0 {
		add("option_b.timeout", "must be > 0")
	}
	if c.OptionB.Retries < 0 || c.OptionB.Retries > 5 {
		add("option_b.retries", "must be 0..5, got %d", c.OptionB.Retries)
	}
	return errs
}
