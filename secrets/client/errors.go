package client

import "errors"

// Errors a caller can branch on with errors.Is. None of them carries a key,
// a passphrase, a secret or a full link.
var (
	// ErrBrokenLink: the link is not https://host/v/#… or /f/#… with a
	// fragment of exactly 42 alphabet characters. Nothing was sent.
	ErrBrokenLink = errors.New("broken link")
	// ErrWrongKey: the host answered `wrong key`; the passphrase is missing
	// or wrong. No view was used.
	ErrWrongKey = errors.New("wrong key")
	// ErrNoMessage: the host answered `no message`: already read, expired
	// or never existed.
	ErrNoMessage = errors.New("no message")
	// ErrRateLimited: the host answered 429.
	ErrRateLimited = errors.New("rate limited")
	// ErrServer: the host answered `error` or an unexpected status.
	ErrServer = errors.New("server error")
	// ErrInsecureHost: plain http to a host that is not loopback, or a
	// scheme other than http and https.
	ErrInsecureHost = errors.New("insecure host: https only (plain http only for 127.0.0.1, localhost, ::1)")
	// ErrUnsupportedHost: the host's /api/ss does not list save scheme 3.
	ErrUnsupportedHost = errors.New("host does not support save scheme 3 (too old)")
	// ErrInvalidOption: views, expiry or a size is out of range. Nothing
	// was sent.
	ErrInvalidOption = errors.New("invalid option")
	// ErrDecrypt: the data did not decrypt with the key (damaged, or
	// encrypted under another key).
	ErrDecrypt = errors.New("cannot decrypt")
)
