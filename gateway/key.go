// Package gateway holds the customer-facing gateway's logic: API keys (issue,
// hash, verify, revoke, rotate) in the NATS KV bucket apikeys with a watched
// in-memory copy, per-key rate limits and per-user monthly quotas shared by
// every instance through leases on the KV bucket usage (Budgets), and the
// client of the external validation service of Option B. The HTTP proxy
// that uses it is api/apigw.
package gateway

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// KeyPrefix starts every customer key: svc_vpn_<key-id>_<key-secret>.
const KeyPrefix = "svc_vpn_"

// Tiers lists the plan tiers from lowest to highest.
var Tiers = []string{"free", "starter", "pro", "scale", "business", "enterprise"}

// TierRank returns the position of tier in Tiers, or -1 when unknown.
func TierRank(tier string) int { return slices.Index(Tiers, tier) }

// ValidTier reports whether tier names one of Tiers.
func ValidTier(tier string) bool { return TierRank(tier) >= 0 }

const (
	idBytes     = 8  // 16 hex characters
	secretBytes = 32 // 52 base32 characters
)

var (
	userRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	tagRe  = regexp.MustCompile(`^[\x21-\x7e]{1,64}$`)
	b32    = base32.StdEncoding.WithPadding(base32.NoPadding)
)

// ValidUser reports whether u is a usable user id: 1 to 64 of A-Z a-z 0-9 _ -.
func ValidUser(u string) bool { return userRe.MatchString(u) }

// ValidKeyID reports whether id has the shape of a key id (16 hex characters).
func ValidKeyID(id string) bool {
	return len(id) == 2*idBytes && allOf(id, func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' })
}

// validSecret reports whether s has the shape of a key secret: 52 of a-z 2-7.
func validSecret(s string) bool {
	return len(s) == 52 && allOf(s, func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '2' && c <= '7' })
}

// allOf reports whether every byte of s passes ok (checked by hand: a
// regular expression costs a microsecond on every request).
func allOf(s string, ok func(byte) bool) bool {
	for i := range len(s) {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// ParseKey splits a customer key into its id and secret. It returns
// ErrMalformedKey for anything that is not svc_vpn_<16 hex>_<52 base32>.
func ParseKey(raw string) (id, secret string, err error) {
	rest, ok := strings.CutPrefix(raw, KeyPrefix)
	if !ok {
		return "", "", ErrMalformedKey
	}
	id, secret, ok = strings.Cut(rest, "_")
	if !ok || !ValidKeyID(id) || !validSecret(secret) {
		return "", "", ErrMalformedKey
	}
	return id, secret, nil
}

// newKey returns a fresh random id, secret and the whole key string.
func newKey() (id, secret, whole string, err error) {
	var ib [idBytes]byte
	var sb [secretBytes]byte
	if _, err := rand.Read(ib[:]); err != nil {
		return "", "", "", fmt.Errorf("random key id: %w", err)
	}
	if _, err := rand.Read(sb[:]); err != nil {
		return "", "", "", fmt.Errorf("random key secret: %w", err)
	}
	id = hex.EncodeToString(ib[:])
	secret = strings.ToLower(b32.EncodeToString(sb[:]))
	return id, secret, KeyPrefix + id + "_" + secret, nil
}

// HashAlg names the stored hash; a future change of scheme gets a new name.
const HashAlg = "hmac-sha256-v1"

// devHashKey is used when gateway.hash_key is empty (development only).
const devHashKey = "netintel-dev-gateway-hash-key"

// Hasher computes the keyed hash of key secrets. The secrets carry 256
// random bits, so a keyed fast hash is enough: without the hash key a
// stolen apikeys bucket gives nothing to test guesses against, and even
// with it a guess is hopeless; a slow hash would only add latency to every
// request.
type Hasher struct{ key []byte }

// NewHasher returns a hasher for the given key; empty uses the dev key.
func NewHasher(key string) *Hasher {
	if key == "" {
		key = devHashKey
	}
	return &Hasher{key: []byte(key)}
}

// Sum returns the hex HMAC-SHA256 of id and secret. Binding the id means a
// record copied to another id does not verify.
func (h *Hasher) Sum(id, secret string) string {
	m := hmac.New(sha256.New, h.key)
	m.Write([]byte(id))
	m.Write([]byte{0})
	m.Write([]byte(secret))
	return hex.EncodeToString(m.Sum(nil))
}

// Verify compares in constant time.
func (h *Hasher) Verify(id, secret, stored string) bool {
	return hmac.Equal([]byte(h.Sum(id, secret)), []byte(stored))
}

// KV buckets the gateway uses (declared in pipeline.yaml).
const (
	KeysBucket  = "apikeys"
	UsageBucket = "usage"
	// RateLimitsBucket holds the per-address token buckets of the public
	// APIs (AddrLimiter).
	RateLimitsBucket = "ratelimits"
)
