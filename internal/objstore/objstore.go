// Package objstore is the object store where netintel publishes files: a
// local folder for the single-process default, or any S3-compatible store
// through minio-go. Both backends pass one conformance suite (objstoretest).
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/netintel/netintel/internal/config"
)

// ErrNotFound is returned by Get and Stat for a key that does not exist.
var ErrNotFound = errors.New("object not found")

// ErrNotSupported is returned by PresignGet on a backend without presigning.
var ErrNotSupported = errors.New("not supported by this object store")

// Info describes a stored object.
type Info struct {
	Key         string
	Size        int64
	ETag        string // quoted is never included; callers add quotes for HTTP
	ModTime     time.Time
	ContentType string
}

// Range is an inclusive byte range; End < 0 means to the end of the object.
type Range struct {
	Start, End int64
}

// Store is the object store contract.
type Store interface {
	// Put stores r under key, replacing any object there. size is the
	// length of r, or -1 when unknown (streamed as multipart on S3). A
	// reader never sees a partly written object.
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (Info, error)
	// Get opens key, optionally a byte range of it. ErrNotFound if absent.
	Get(ctx context.Context, key string, rng *Range) (io.ReadCloser, Info, error)
	// Stat describes key. ErrNotFound if absent.
	Stat(ctx context.Context, key string) (Info, error)
	// List returns the objects whose keys start with prefix, sorted by key.
	List(ctx context.Context, prefix string) ([]Info, error)
	// Delete removes key. Deleting an absent key is not an error.
	Delete(ctx context.Context, key string) error
	// PresignGet returns a time-limited download URL, or ErrNotSupported.
	PresignGet(ctx context.Context, key string, ttl time.Duration, filename string) (string, error)
	// Ping checks that the store is reachable and usable.
	Ping(ctx context.Context) error
}

// Open returns the store that cfg selects. dataDir roots a folder store
// whose dir is not set.
func Open(ctx context.Context, cfg config.ObjectStore, dataDir string) (Store, error) {
	switch cfg.Type {
	case "file", "":
		dir := cfg.File.Dir
		if dir == "" {
			if dataDir == "" {
				return nil, errors.New("object_store.file.dir: required when no --data-dir is given")
			}
			dir = dataDir + "/objects"
		}
		return NewFolder(dir)
	case "s3":
		return NewS3(ctx, cfg.S3)
	}
	return nil, fmt.Errorf("object_store.type: unknown %q", cfg.Type)
}
