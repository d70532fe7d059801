package gateway

import (
	"strings"
	"testing"
)

func TestParseKey(t *testing.T) {
	_, _, good, err := newKey()
	if err != nil {
		t.Fatal(err)
	}
	id := good[len(KeyPrefix) : len(KeyPrefix)+16]
	secret := good[len(KeyPrefix)+17:]
	tests := []struct {
		name    string
		in      string
		wantErr bool
	}{
		{"fresh key", good, false},
		{"empty", "", true},
		{"no prefix", strings.TrimPrefix(good, KeyPrefix), true},
		{"other product prefix", "svc_tld_" + id + "_" + secret, true},
		{"uppercase secret", KeyPrefix + id + "_" + strings.ToUpper(secret), true},
		{"short id", KeyPrefix + id[:15] + "_" + secret, true},
		{"short secret", KeyPrefix + id + "_" + secret[:51], true},
		{"long secret", KeyPrefix + id + "_" + secret + "a", true},
		{"no secret", KeyPrefix + id, true},
		{"extra part", good + "_x", true},
		{"space inside", KeyPrefix + id + "_ " + secret[1:], true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gotID, gotSecret, err := ParseKey(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && (gotID != id || gotSecret != secret) {
				t.Fatalf("parsed %q %q, want %q %q", gotID, gotSecret, id, secret)
			}
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Fatalf("error carries the secret: %v", err)
			}
		})
	}
}

func TestNewKey_Unique(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id, secret, whole, err := newKey()
		if err != nil {
			t.Fatal(err)
		}
		if seen[id] {
			t.Fatalf("id %s drawn twice", id)
		}
		seen[id] = true
		if gid, gs, err := ParseKey(whole); err != nil || gid != id || gs != secret {
			t.Fatalf("own key does not parse: %v", err)
		}
	}
}

func TestHasher_Verify(t *testing.T) {
	h := NewHasher("k1")
	sum := h.Sum("0123456789abcdef", "secret")
	tests := []struct {
		name   string
		h      *Hasher
		id     string
		secret string
		want   bool
	}{
		{"same", h, "0123456789abcdef", "secret", true},
		{"other secret", h, "0123456789abcdef", "secreT", false},
		{"other id", h, "0123456789abcdee", "secret", false},
		{"other hash key", NewHasher("k2"), "0123456789abcdef", "secret", false},
		{"dev key differs", NewHasher(""), "0123456789abcdef", "secret", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.h.Verify(tc.id, tc.secret, sum); got != tc.want {
				t.Fatalf("Verify = %v, want %v", got, tc.want)
			}
		})
	}
	if strings.Contains(sum, "secret") {
		t.Fatal("hash contains the secret")
	}
}
