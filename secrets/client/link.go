package client

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Kind says whether a link points at a text or a file secret.
type Kind string

// Link kinds, named after their path.
const (
	KindText Kind = "v"
	KindFile Kind = "f"
)

// Link is a parsed one-time link. RandomKey is secret: a Link must never
// be logged; String returns the full link for the user only.
type Link struct {
	Kind Kind
	// Origin is the API host, scheme://host[:port], no trailing slash.
	Origin    string
	RandomKey string
	ID        string
}

// String returns the link, https://host/v/#<randomKey><id>.
func (l Link) String() string {
	return l.Origin + "/" + string(l.Kind) + "/#" + l.RandomKey + l.ID
}

// Redacted returns the link with the key replaced, safe for logs.
func (l Link) Redacted() string {
	return l.Origin + "/" + string(l.Kind) + "/#…" + l.ID
}

func isAlphabet(s string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(Alphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

// ValidID reports whether id is 22 alphabet characters.
func ValidID(id string) bool { return len(id) == IDLen && isAlphabet(id) }

// ParseLink parses a text or file link. The fragment must be exactly 42
// alphabet characters (randomKey then id) and the origin must be https,
// or plain http on loopback. Every failure is ErrBrokenLink or
// ErrInsecureHost and never quotes the link (it holds the key).
func ParseLink(raw string) (Link, error) {
	raw = strings.TrimSpace(raw)
	base, frag, ok := strings.Cut(raw, "#")
	if !ok {
		return Link{}, fmt.Errorf("%w: no #key in the link", ErrBrokenLink)
	}
	if len(frag) != RandomKeyLen+IDLen || !isAlphabet(frag) {
		return Link{}, fmt.Errorf("%w: the part after # must be exactly %d letters, digits, - or _ (got %d characters)", ErrBrokenLink, RandomKeyLen+IDLen, len(frag))
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return Link{}, fmt.Errorf("%w: not an http(s) URL with a host", ErrBrokenLink)
	}
	var kind Kind
	switch strings.TrimSuffix(u.Path, "/") {
	case "/v":
		kind = KindText
	case "/f":
		kind = KindFile
	default:
		return Link{}, fmt.Errorf("%w: path must be /v/ or /f/", ErrBrokenLink)
	}
	origin, err := NormalizeHost(u.Scheme + "://" + u.Host)
	if err != nil {
		return Link{}, err
	}
	return Link{Kind: kind, Origin: origin, RandomKey: frag[:RandomKeyLen], ID: frag[RandomKeyLen:]}, nil
}

// NormalizeHost checks an API host and returns its origin
// (scheme://host[:port]). A bare host name means https. Plain http is
// allowed only for 127.0.0.1, localhost and ::1 (ErrInsecureHost otherwise).
func NormalizeHost(host string) (string, error) {
	host = strings.TrimSpace(host)
	if host == "" {
		return "", fmt.Errorf("%w: empty host", ErrInvalidOption)
	}
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return "", fmt.Errorf("%w: host must be scheme://name[:port]", ErrInvalidOption)
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "https":
	case "http":
		if !isLoopback(u.Hostname()) {
			return "", ErrInsecureHost
		}
	default:
		return "", ErrInsecureHost
	}
	return scheme + "://" + strings.ToLower(u.Host), nil
}

func isLoopback(h string) bool {
	switch strings.ToLower(h) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.Equal(net.IPv6loopback)
}
