package api

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// InternalKeyFile is the file in the data folder that holds the internal
// key `netintel run` generated for it.
const InternalKeyFile = "internal-key"

// ReadInternalKey returns the internal key generated for the data folder
// dir, or "" when it has none.
func ReadInternalKey(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, InternalKeyFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read internal key: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// EnsureInternalKey returns the internal key of the data folder dir,
// creating a random one (256 bits, hex) in dir/internal-key with mode 0600
// when there is none, so a restart on the same folder reuses it and every
// folder has its own.
func EnsureInternalKey(dir string) (string, error) {
	if k, err := ReadInternalKey(dir); err != nil || k != "" {
		return k, err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate internal key: %w", err)
	}
	key := hex.EncodeToString(b[:])
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", fmt.Errorf("internal key dir: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-internal-key-*")
	if err != nil {
		return "", fmt.Errorf("write internal key: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600; Chmod states it against any umask.
	_, err = tmp.WriteString(key + "\n")
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, InternalKeyFile))
	}
	if err != nil {
		return "", fmt.Errorf("write internal key: %w", err)
	}
	return key, nil
}
