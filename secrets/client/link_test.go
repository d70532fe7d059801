package client

import (
	"errors"
	"strings"
	"testing"
)

func TestParseLink(t *testing.T) {
	const frag = "K7bQ2mXp9vRt4nLw8zYcAbCdEfGhIjKlMnOpQrStUv"
	tests := []struct {
		name    string
		in      string
		want    Link
		wantErr error
	}{
		{"text", "https://1time.io/v/#" + frag, Link{KindText, "https://1time.io", frag[:20], frag[20:]}, nil},
		{"file", "https://1time.io/f/#" + frag, Link{KindFile, "https://1time.io", frag[:20], frag[20:]}, nil},
		{"no trailing slash", "https://1time.io/v#" + frag, Link{KindText, "https://1time.io", frag[:20], frag[20:]}, nil},
		{"port and spaces", "  https://Secrets.Example:8443/f/#" + frag + "\n", Link{KindFile, "https://secrets.example:8443", frag[:20], frag[20:]}, nil},
		{"loopback http", "http://127.0.0.1:8080/v/#" + frag, Link{KindText, "http://127.0.0.1:8080", frag[:20], frag[20:]}, nil},
		{"localhost http", "http://localhost/v/#" + frag, Link{KindText, "http://localhost", frag[:20], frag[20:]}, nil},
		{"ipv6 loopback", "http://[::1]:80/v/#" + frag, Link{KindText, "http://[::1]:80", frag[:20], frag[20:]}, nil},
		{"plain http remote", "http://1time.io/v/#" + frag, Link{}, ErrInsecureHost},
		{"ftp", "ftp://1time.io/v/#" + frag, Link{}, ErrInsecureHost},
		{"41 chars", "https://1time.io/v/#" + frag[1:], Link{}, ErrBrokenLink},
		{"43 chars", "https://1time.io/v/#" + frag + "A", Link{}, ErrBrokenLink},
		{"bad char", "https://1time.io/v/#" + strings.Replace(frag, "K", "+", 1), Link{}, ErrBrokenLink},
		{"padding", "https://1time.io/v/#" + frag[:41] + "=", Link{}, ErrBrokenLink},
		{"percent-encoded", "https://1time.io/v/#%4B" + frag[1:], Link{}, ErrBrokenLink},
		{"no fragment", "https://1time.io/v/", Link{}, ErrBrokenLink},
		{"empty", "", Link{}, ErrBrokenLink},
		{"wrong path", "https://1time.io/x/#" + frag, Link{}, ErrBrokenLink},
		{"no host", "/v/#" + frag, Link{}, ErrBrokenLink},
		{"query", "https://1time.io/v/?a=1#" + frag, Link{}, ErrBrokenLink},
		{"userinfo", "https://u:p@1time.io/v/#" + frag, Link{}, ErrBrokenLink},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseLink(tc.in)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), frag[:20]) {
				t.Fatal("error quotes the key")
			}
		})
	}
}

func TestNormalizeHost(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  error
	}{
		{"1time.io", "https://1time.io", nil},
		{"https://1time.io/", "https://1time.io", nil},
		{"HTTPS://1Time.IO:443", "https://1time.io:443", nil},
		{"http://127.0.0.1:9", "http://127.0.0.1:9", nil},
		{"http://[::1]:9", "http://[::1]:9", nil},
		{"http://example.com", "", ErrInsecureHost},
		{"http://127.0.0.2", "", ErrInsecureHost},
		{"https://x/api", "", ErrInvalidOption},
		{"", "", ErrInvalidOption},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := NormalizeHost(tc.in)
			if !errors.Is(err, tc.wantErr) || got != tc.want {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestLink_Redacted(t *testing.T) {
	l := Link{KindText, "https://h", "K7bQ2mXp9vRt4nLw8zYc", "AbCdEfGhIjKlMnOpQrStUv"}
	if r := l.Redacted(); strings.Contains(r, l.RandomKey) || !strings.Contains(r, l.ID) {
		t.Fatalf("Redacted() = %q", r)
	}
}
