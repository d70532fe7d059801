package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netintel/netintel/internal/testutil"
)

func TestEnsureDevKey(t *testing.T) {
	n := startNATS(t)
	kv, _ := kvPair(t, n)
	k := NewKeys(kv, NewHasher("x"), testutil.Logger(t))
	path := filepath.Join(t.TempDir(), "data", "dev-api-key")
	first, err := EnsureDevKey(t.Context(), k, path)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := k.Authenticate(t.Context(), first)
	if err != nil || rec.User != DevUser || rec.Tier != DevTier {
		t.Fatalf("dev key: %+v %v", rec, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	again, err := EnsureDevKey(t.Context(), k, path)
	if err != nil || again != first {
		t.Fatalf("second call gave another key (%v)", err)
	}
	tests := []struct {
		name  string
		spoil func()
	}{
		{"revoked", func() { _, _ = k.Revoke(t.Context(), rec.ID) }},
		{"file garbage", func() { _ = os.WriteFile(path, []byte("not a key\n"), 0o600) }},
		{"file missing", func() { _ = os.Remove(path) }},
	}
	prev := first
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.spoil()
			got, err := EnsureDevKey(t.Context(), k, path)
			if err != nil || got == prev || !strings.HasPrefix(got, KeyPrefix) {
				t.Fatalf("after %s: %v, same key %v", tc.name, err, got == prev)
			}
			if _, err := k.Authenticate(t.Context(), got); err != nil {
				t.Fatal(err)
			}
			prev = got
		})
	}
}
