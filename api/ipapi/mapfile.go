package ipapi

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapping owns read-only memory maps of files in the snapshot cache folder
// (an MMDB, or the columns of an export table). The files are unlinked as
// soon as they are created, so the maps are the only thing that holds
// their disk blocks: nothing is left behind by a crash, and the space
// returns when the maps go.
//
// The maps are released by a cleanup that runs once the mapping is
// unreachable: the Index or Table that reads them holds the mapping, and
// every method that reads mapped bytes keeps its receiver alive to its end
// (runtime.KeepAlive), so a request that started on a snapshot finishes on
// it even after a swap, and the old maps go after its last request. No
// pointer into mapped memory may outlive that method (results are copied).
type mapping struct {
	regions [][]byte
}

// newMapping returns a mapping of regions, unmapped by a cleanup once the
// mapping is unreachable.
func newMapping(regions ...[]byte) *mapping {
	m := &mapping{regions: regions}
	runtime.AddCleanup(m, unmapAll, regions)
	return m
}

func unmapAll(regions [][]byte) {
	for _, r := range regions {
		if len(r) > 0 {
			_ = unix.Munmap(r)
		}
	}
}

// mapFile maps the first size bytes of f read-only; size 0 gives nil.
func mapFile(f *os.File, size int64) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	if size < 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("map %d bytes: size out of range", size)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map %d bytes: %w", size, err)
	}
	return b, nil
}

// cacheFile creates an unlinked file in dir: it lives as long as an open
// descriptor or a map of it.
func cacheFile(dir, pattern string) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("snapshot cache: %w", err)
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, fmt.Errorf("snapshot cache: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("snapshot cache: %w", err)
	}
	return f, nil
}

// errCacheFile reports a cached file whose bytes are not the published
// ones (cut short or changed on the local disk after download).
var errCacheFile = errors.New("cached file differs from the manifest (size or SHA-256)")

// mapVerified maps f, which must hold exactly size bytes whose SHA-256 is
// sum (hex): the bytes served are the bytes checked.
func mapVerified(f *os.File, size int64, sum string) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("snapshot cache: %w", err)
	}
	if st.Size() != size {
		return nil, fmt.Errorf("snapshot cache: %d bytes, want %d: %w", st.Size(), size, errCacheFile)
	}
	b, err := mapFile(f, size)
	if err != nil {
		return nil, fmt.Errorf("snapshot cache: %w", err)
	}
	h := sha256.Sum256(b)
	if hex.EncodeToString(h[:]) != sum {
		_ = unix.Munmap(b)
		return nil, fmt.Errorf("snapshot cache: %w", errCacheFile)
	}
	return b, nil
}

// asSlice views a mapped region as n values of type T (native byte order,
// as columnWriter writes them). Regions start page aligned.
func asSlice[T uint8 | uint16 | int64 | uint64 | float64](b []byte) []T {
	var zero T
	n := len(b) / int(unsafe.Sizeof(zero))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}
