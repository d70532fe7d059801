package secrets

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// Spec limits (spec/one-time-secrets.md, section 8). They are part of the
// protocol, so they are constants, not configuration.
const (
	// IDLen is the length of a secret id and of a chunked upload id.
	IDLen = 22
	// MinDuration and MaxDuration bound a secret's lifetime in seconds.
	MinDuration = 1
	MaxDuration = 2592000
	// DefaultDuration replaces a missing or out-of-range duration on
	// saveSecret and single-request saveFile.
	DefaultDuration = 86400
	// MinViews and MaxViews bound a secret's views.
	MinViews = 1
	MaxViews = 10
	// SliceSize is the exact size of every chunked slice but the last.
	SliceSize = 4 << 20
	// MaxSlices is the most slices a chunked upload may have.
	MaxSlices = 25
	// SchemeV3 saves with readTokenHash; SchemeV0 (deprecated) with hashedKey.
	SchemeV3 = 3
	SchemeV0 = 0
)

// ValidID reports whether s is 22 characters of the base64url alphabet
// (A-Z a-z 0-9 - _), the shape of secret ids and upload ids.
func ValidID(s string) bool {
	if len(s) != IDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlpha(s[i]) {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// ValidHex64 reports whether s is 64 lowercase hex characters (a readToken
// or a readTokenHash).
func ValidHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// HashToken is the spec's readTokenHash: lowercase hex of SHA-256 over the
// 64-character readToken string.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// ValidTextCiphertext reports whether s has the spec's text wire shape:
// base64url(12-byte iv) "." base64url(ciphertext||16-byte tag), unpadded.
func ValidTextCiphertext(s string) bool {
	iv, ct, ok := strings.Cut(s, ".")
	if !ok || strings.Contains(ct, ".") {
		return false
	}
	ivb, err := base64.RawURLEncoding.Strict().DecodeString(iv)
	if err != nil || len(ivb) != 12 {
		return false
	}
	// Decoded length only; the bytes are opaque to the server.
	n, err := rawURLLen(ct)
	return err == nil && n >= 16
}

func rawURLLen(s string) (int, error) {
	for i := 0; i < len(s); i++ {
		if !isAlpha(s[i]) {
			return 0, fmt.Errorf("bad base64url character at %d", i)
		}
	}
	if len(s)%4 == 1 {
		return 0, fmt.Errorf("bad base64url length %d", len(s))
	}
	return base64.RawURLEncoding.DecodedLen(len(s)), nil
}

// NewID returns 22 base64url characters from 16 bytes of crypto/rand.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Params are the validated save fields shared by every save endpoint.
type Params struct {
	// Scheme is SchemeV3 or SchemeV0.
	Scheme int
	// TokenHash is the readTokenHash (scheme 3), or SHA-256 of the hashedKey
	// sent on a scheme 0 save: in both cases what a read's token must hash to.
	TokenHash string
	// Duration is the lifetime in seconds, MinDuration..MaxDuration.
	Duration int
	// Views is MinViews..MaxViews.
	Views int
}

// Raw are save fields as the client sent them; nil means absent.
type Raw struct {
	ReadTokenHash *string
	HashedKey     *string
	V             *int64
	Duration      *int64
	Views         *int64
}

// Normalize applies the scheme rules and, when strict is false, the spec's
// silent corrections (duration missing or out of range becomes 86400,
// views clamped to 1..10, missing views 1). When strict is true (chunked
// slices) a missing or out-of-range duration or an out-of-range views is
// ErrInvalid instead.
func (r Raw) Normalize(strict bool) (Params, error) {
	var p Params
	switch {
	case r.ReadTokenHash != nil && r.HashedKey == nil:
		if r.V == nil || *r.V != SchemeV3 || !ValidHex64(*r.ReadTokenHash) {
			return p, fmt.Errorf("%w: readTokenHash needs v 3 and 64 lowercase hex", ErrInvalid)
		}
		p.Scheme, p.TokenHash = SchemeV3, *r.ReadTokenHash
	case r.HashedKey != nil && r.ReadTokenHash == nil:
		if r.V != nil && *r.V != SchemeV0 || !ValidHex64(*r.HashedKey) {
			return p, fmt.Errorf("%w: hashedKey needs scheme 0 and 64 lowercase hex", ErrInvalid)
		}
		p.Scheme, p.TokenHash = SchemeV0, HashToken(*r.HashedKey)
	default:
		return p, fmt.Errorf("%w: exactly one of readTokenHash and hashedKey", ErrInvalid)
	}
	switch {
	case r.Duration != nil && *r.Duration >= MinDuration && *r.Duration <= MaxDuration:
		p.Duration = int(*r.Duration)
	case strict:
		return p, fmt.Errorf("%w: duration must be %d..%d", ErrInvalid, MinDuration, MaxDuration)
	default:
		p.Duration = DefaultDuration
	}
	switch {
	case r.Views == nil:
		p.Views = MinViews
	case *r.Views >= MinViews && *r.Views <= MaxViews:
		p.Views = int(*r.Views)
	case strict:
		return p, fmt.Errorf("%w: views must be %d..%d", ErrInvalid, MinViews, MaxViews)
	default:
		p.Views = int(min(max(*r.Views, MinViews), MaxViews))
	}
	return p, nil
}
