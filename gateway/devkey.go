package gateway

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DevUser and DevTier are the owner and tier of the development key.
const (
	DevUser = "dev"
	DevTier = "enterprise"
)

// EnsureDevKey returns the whole development key (user "dev", tier
// "enterprise"), stored in KV like any key. Because only the hash is in KV,
// the whole key is kept in the file at path (mode 0600, in the data dir) so
// that a restart reuses it; when the file is missing, or its key no longer
// works (revoked, other hash key), a new key is issued and the file
// replaced. `netintel run` prints it once at start.
func EnsureDevKey(ctx context.Context, keys *Keys, path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		whole := strings.TrimSpace(string(b))
		if rec, err := keys.Authenticate(ctx, whole); err == nil && rec.User == DevUser && rec.Tier == DevTier {
			return whole, nil
		}
	}
	whole, _, err := keys.Create(ctx, DevUser, DevTier, []string{"dev"})
	if err != nil {
		return "", fmt.Errorf("create dev key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return "", fmt.Errorf("dev key dir: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(whole+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write dev key: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("write dev key: %w", err)
	}
	return whole, nil
}
