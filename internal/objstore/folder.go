package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Folder is an object store in a local directory. Keys map to paths; writes
// go to a temp file that is synced and renamed into place.
type Folder struct {
	dir string
}

var _ Store = (*Folder)(nil)

// TempGrace is how long a Put's temp file (.tmp-*) may go unmodified
// before the folder store takes it for the leftover of a process that
// died mid-write and removes it. A live Put writes its temp file as the
// bytes arrive; an hour without one byte is no live upload.
const TempGrace = time.Hour

// NewFolder creates dir if needed and returns a store rooted there. It
// removes the temp files that writers which died mid-Put left anywhere in
// dir, once they are older than TempGrace (List sweeps those it passes
// the same way, for a store that stays open).
func NewFolder(dir string) (*Folder, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create object dir: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	f := &Folder{dir: abs}
	if _, err := f.List(context.Background(), ""); err != nil {
		return nil, fmt.Errorf("sweep object dir: %w", err)
	}
	return f, nil
}

// sweepTemp removes a temp file not modified for TempGrace, and the
// folders that leaves empty.
func (f *Folder) sweepTemp(p string, d fs.DirEntry) {
	st, err := d.Info()
	if err != nil || time.Since(st.ModTime()) < TempGrace {
		return
	}
	if os.Remove(p) == nil {
		f.removeEmptyParents(p)
	}
}

// removeEmptyParents removes the folders above p that are empty, up to
// the store's root.
func (f *Folder) removeEmptyParents(p string) {
	for d := filepath.Dir(p); d != f.dir && strings.HasPrefix(d, f.dir); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break
		}
	}
}

func (f *Folder) path(key string) (string, error) {
	if key == "" || strings.HasPrefix(key, "/") || strings.Contains(key, "\\") {
		return "", fmt.Errorf("invalid key %q", key)
	}
	for _, part := range strings.Split(key, "/") {
		if part == "" || part == "." || part == ".." || strings.HasPrefix(part, ".tmp-") {
			return "", fmt.Errorf("invalid key %q", key)
		}
	}
	return filepath.Join(f.dir, filepath.FromSlash(key)), nil
}

// Put writes r to a temp file beside the target, syncs it, renames it
// into place and syncs the folder.
func (f *Folder) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (Info, error) {
	p, err := f.path(key)
	if err != nil {
		return Info{}, err
	}
	tmp, err := createTemp(filepath.Dir(p))
	if err != nil {
		return Info{}, fmt.Errorf("put %s: %w", key, err)
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, ctxReader{ctx, r})
	if err == nil && size >= 0 && n != size {
		err = fmt.Errorf("short body: got %d of %d bytes", n, size)
	}
	if err == nil {
		err = tmp.Sync()
	}
	// The object is described from the file written, before it takes the
	// key (a rename keeps size and time): a Delete of the key right after
	// the rename must not turn a Put that succeeded into an error.
	var st fs.FileInfo
	if err == nil {
		st, err = tmp.Stat()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err == nil {
		// The rename is durable only once the folder's entry is on disk:
		// without this, a power cut after Put returned could leave the
		// old object (or none) under the key.
		err = syncDir(filepath.Dir(p))
	}
	if err != nil {
		return Info{}, fmt.Errorf("put %s: %w", key, err)
	}
	return f.info(key, st), nil
}

// syncDir flushes dir's entries (a rename into it) to disk. A folder a
// racing Delete already pruned (it removes the folders it leaves empty)
// has nothing left to make durable: that is not an error, as the Put
// itself succeeded.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sync folder: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync folder: %w", err)
	}
	return nil
}

// createTemp creates a temporary file in dir, creating dir first. A
// Delete prunes folders it leaves empty, so dir can vanish between the
// two; it is then created again.
func createTemp(dir string) (*os.File, error) {
	for attempt := 0; ; attempt++ {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, err
		}
		tmp, err := os.CreateTemp(dir, ".tmp-*")
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt == 100 {
			return tmp, err
		}
		// A racing Delete pruned the folder between the two calls: let
		// it finish and make the folder again (a loaded machine lost
		// this race ten times running).
		runtime.Gosched()
	}
}

// Get opens the file, seeking to the range start.
func (f *Folder) Get(ctx context.Context, key string, rng *Range) (io.ReadCloser, Info, error) {
	info, err := f.Stat(ctx, key)
	if err != nil {
		return nil, Info{}, err
	}
	p, _ := f.path(key)
	fh, err := os.Open(p)
	if err != nil {
		return nil, Info{}, mapErr(key, err)
	}
	if rng == nil {
		return fh, info, nil
	}
	end := rng.End
	if end < 0 || end >= info.Size {
		end = info.Size - 1
	}
	if rng.Start < 0 || rng.Start > end {
		fh.Close()
		return nil, Info{}, fmt.Errorf("get %s: invalid range %d-%d", key, rng.Start, rng.End)
	}
	if _, err := fh.Seek(rng.Start, io.SeekStart); err != nil {
		fh.Close()
		return nil, Info{}, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(fh, end-rng.Start+1), fh}, info, nil
}

// Stat describes the file. The ETag is derived from size and modification
// time, which change with every Put.
func (f *Folder) Stat(_ context.Context, key string) (Info, error) {
	p, err := f.path(key)
	if err != nil {
		return Info{}, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return Info{}, mapErr(key, err)
	}
	if st.IsDir() {
		return Info{}, fmt.Errorf("stat %s: %w", key, ErrNotFound)
	}
	return f.info(key, st), nil
}

func (f *Folder) info(key string, st fs.FileInfo) Info {
	ct := mime.TypeByExtension(filepath.Ext(key))
	if ct == "" {
		ct = "application/octet-stream"
	}
	return Info{
		Key:         key,
		Size:        st.Size(),
		ETag:        strconv.FormatInt(st.Size(), 16) + "-" + strconv.FormatInt(st.ModTime().UnixNano(), 16),
		ModTime:     st.ModTime().UTC(),
		ContentType: ct,
	}
}

// List walks the folder for keys under prefix. Temp files of Puts are
// never listed; those it passes that are older than TempGrace are removed.
func (f *Folder) List(ctx context.Context, prefix string) ([]Info, error) {
	var out []Info
	err := filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel, _ := filepath.Rel(f.dir, p)
		key := filepath.ToSlash(rel)
		if d.IsDir() {
			if key != "." && !strings.HasPrefix(key+"/", prefix) && !strings.HasPrefix(prefix, key+"/") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), ".tmp-") {
			f.sweepTemp(p, d)
			return nil
		}
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return nil // removed while walking
		}
		out = append(out, f.info(key, st))
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, err
}

// Delete removes the file and any folders it leaves empty.
func (f *Folder) Delete(_ context.Context, key string) error {
	p, err := f.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	f.removeEmptyParents(p)
	return nil
}

// PresignGet is not supported by a folder: the API streams it instead.
func (f *Folder) PresignGet(context.Context, string, time.Duration, string) (string, error) {
	return "", ErrNotSupported
}

// Ping checks that the folder exists and is writable.
func (f *Folder) Ping(context.Context) error {
	tmp, err := os.CreateTemp(f.dir, ".tmp-ping-*")
	if err != nil {
		return fmt.Errorf("object folder %s not writable: %w", f.dir, err)
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}

func mapErr(key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	return fmt.Errorf("%s: %w", key, err)
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
