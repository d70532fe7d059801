package gateway

import "errors"

// Sentinel errors. None of them carries a key secret.
var (
	// ErrMalformedKey: the string is not svc_vpn_<key-id>_<key-secret>.
	ErrMalformedKey = errors.New("malformed api key")
	// ErrUnknownKey: no such key id, or the secret does not match.
	ErrUnknownKey = errors.New("unknown api key")
	// ErrRevokedKey: the key was revoked.
	ErrRevokedKey = errors.New("revoked api key")
	// ErrExpiredKey: the key's rotation overlap ended.
	ErrExpiredKey = errors.New("expired api key")
	// ErrNotFound: no key with that id (CLI operations).
	ErrNotFound = errors.New("key not found")
	// ErrRateLimited: the key used up its requests in this window.
	ErrRateLimited = errors.New("rate limit exceeded")
	// ErrQuotaExceeded: the user's monthly credits are used up.
	ErrQuotaExceeded = errors.New("monthly quota exceeded")
	// ErrUnavailable: shared state (NATS) could not be reached; requests fail closed.
	ErrUnavailable = errors.New("gateway state unavailable")
	// ErrInvalidInput: a bad user, tier or tag given to Create.
	ErrInvalidInput = errors.New("invalid input")
)
