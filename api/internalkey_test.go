package api

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEnsureInternalKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if k, err := ReadInternalKey(dir); err != nil || k != "" {
		t.Fatalf("ReadInternalKey before: %q %v", k, err)
	}
	k1, err := EnsureInternalKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(k1) != 64 {
		t.Fatalf("key of %d characters, want 64 hex", len(k1))
	}
	fi, err := os.Stat(filepath.Join(dir, InternalKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	// A restart on the same folder reuses it; another folder has its own.
	if k2, err := EnsureInternalKey(dir); err != nil || k2 != k1 {
		t.Fatalf("second call: %v, same key %v", err, k2 == k1)
	}
	if k, err := ReadInternalKey(dir); err != nil || k != k1 {
		t.Fatalf("ReadInternalKey: same key %v, %v", k == k1, err)
	}
	other, err := EnsureInternalKey(t.TempDir())
	if err != nil || other == k1 {
		t.Fatalf("other folder: %v, same key %v", err, other == k1)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
}
