package secrets

import "errors"

// Sentinel errors of the secret store. The HTTP layer maps each to the
// spec's status; anything else is a server error.
var (
	// ErrNoMessage means the secret was read, expired or never existed.
	ErrNoMessage = errors.New("no message")
	// ErrWrongKey means the presented readToken does not match; no view was used.
	ErrWrongKey = errors.New("wrong key")
	// ErrRetry means contention: nothing was used or changed, retrying is safe.
	ErrRetry = errors.New("contention, retry")
	// ErrInvalid means the request breaks a rule of the spec (bad field,
	// differing slice fields, different bytes for a slice).
	ErrInvalid = errors.New("invalid request")
)
