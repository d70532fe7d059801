package gateway

import (
	"context"
	"strings"
	"time"

	"github.com/netintel/netintel/internal/httpx"
)

// AddrLimiter is a per-address token bucket shared by every copy of an
// API through Budgets (one bucket per scope and address in the KV bucket
// ratelimits), so that the limit does not multiply with the copies. It
// implements httpx.AddrLimiter.
type AddrLimiter struct {
	b      *Budgets
	scope  string
	bucket Bucket
}

// AddrLimiters returns the factory of shared per-address limiters on b.
func AddrLimiters(b *Budgets) httpx.AddrLimiters {
	return func(scope string, perMinute float64, burst int) httpx.AddrLimiter {
		return &AddrLimiter{b: b, scope: kvSafe(scope), bucket: Bucket{PerSecond: perMinute / 60, Burst: int64(max(1, burst))}}
	}
}

// Take takes one request of addr's bucket.
func (a *AddrLimiter) Take(ctx context.Context, addr string) (bool, time.Duration, error) {
	return a.b.Allow(ctx, "a."+a.scope+"."+kvSafe(addr), a.bucket)
}

// kvSafe maps s to the characters a KV key may hold: an IPv6 address's
// colons (and a zone's %) become underscores, which no address contains.
func kvSafe(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}
