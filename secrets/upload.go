package secrets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Slice is one request of a chunked upload: ?u=&i=&n= and its fields.
type Slice struct {
	// Upload is the client's upload id (22 alphabet characters).
	Upload string
	// Index is 0..Count-1; Count is 1..MaxSlices.
	Index, Count int
	// Params are the save fields, normalized strictly.
	Params Params
}

// Upload states.
const (
	upOpen      = ""
	upFinishing = "finishing"
	upDone      = "done"
)

// upload is the state of one chunked upload in the uploads bucket.
type upload struct {
	Gen      string   `json:"g"` // generation: names this upload's slice blobs
	Scheme   int      `json:"v"`
	Hash     string   `json:"h"`
	Duration int      `json:"d"`
	Views    int      `json:"w"`
	N        int      `json:"n"`
	Sums     []string `json:"s"`  // SHA-256 hex per slice, "" while missing
	LastSize int64    `json:"ls"` // size of the last slice
	Last     int64    `json:"l"`  // Unix ms of the last slice received
	State    string   `json:"st,omitempty"`
	FinishAt int64    `json:"fa,omitempty"`
	NewID    string   `json:"id,omitempty"`
	DoneAt   int64    `json:"da,omitempty"`
}

func (u *upload) sameFields(sl Slice) bool {
	p := sl.Params
	return u.Scheme == p.Scheme && u.Hash == p.TokenHash && u.Duration == p.Duration && u.Views == p.Views && u.N == sl.Count
}

func (u *upload) complete() bool {
	for _, s := range u.Sums {
		if s == "" {
			return false
		}
	}
	return true
}

func (s *Service) sliceKey(upload, gen string, i int, sum string) string {
	return s.opt.BlobPrefix + "u/" + upload + "/" + gen + "/" + strconv.Itoa(i) + "-" + sum[:32]
}

// CheckSlice validates the query part of a slice and its size.
func CheckSlice(sl Slice, size int) error {
	switch {
	case !ValidID(sl.Upload):
		return fmt.Errorf("%w: u must be %d alphabet characters", ErrInvalid, IDLen)
	case sl.Count < 1 || sl.Count > MaxSlices:
		return fmt.Errorf("%w: n must be 1..%d", ErrInvalid, MaxSlices)
	case sl.Index < 0 || sl.Index >= sl.Count:
		return fmt.Errorf("%w: i must be 0..n-1", ErrInvalid)
	case sl.Index < sl.Count-1 && size != SliceSize:
		return fmt.Errorf("%w: every slice but the last must be %d bytes", ErrInvalid, SliceSize)
	case size < 1 || size > SliceSize:
		return fmt.Errorf("%w: the last slice must be 1..%d bytes", ErrInvalid, SliceSize)
	}
	return nil
}

// SliceData is the bytes of one slice, spooled to an unlinked temporary
// file while they arrive (so a slow client pins a file descriptor, not
// memory), with their size and SHA-256. Close releases it.
type SliceData struct {
	f    *os.File
	size int64
	sum  string
}

// Size is the number of bytes spooled.
func (d *SliceData) Size() int64 { return d.size }

// Close removes the spooled bytes.
func (d *SliceData) Close() error {
	if d == nil || d.f == nil {
		return nil
	}
	err := d.f.Close()
	d.f = nil
	return err
}

// reader reads the spooled bytes from the start (ReaderAt: any number at once).
func (d *SliceData) reader() *io.SectionReader { return io.NewSectionReader(d.f, 0, d.size) }

// SpoolSlice copies r, at most SliceSize bytes, into an unlinked temporary
// file in Options.SpoolDir, hashing it on the way. It
// holds no more than a copy buffer in memory. More than SliceSize bytes is
// ErrInvalid; an error of r (a body over its limit, a client too slow) is
// returned wrapped, so the caller can tell it apart.
func (s *Service) SpoolSlice(r io.Reader) (*SliceData, error) {
	f, err := os.CreateTemp(s.opt.SpoolDir, "netintel-slice-*")
	if err != nil {
		return nil, fmt.Errorf("spool slice: %w", err)
	}
	// Unlinked at once: nothing is left behind if the process dies.
	_ = os.Remove(f.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(r, SliceSize+1))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("spool slice: %w", err)
	}
	if n > SliceSize {
		f.Close()
		return nil, fmt.Errorf("%w: slice over %d bytes", ErrInvalid, SliceSize)
	}
	return &SliceData{f: f, size: n, sum: hex.EncodeToString(h.Sum(nil))}, nil
}

// SaveSlice records one slice of a chunked upload, whose bytes were
// spooled by SpoolSlice (the caller closes d). It returns the new id
// when this request completed the file (or the file was completed within
// UploadMemory), "" while slices are missing. ErrInvalid: the slice breaks
// a rule (differing fields, different bytes for an index). ErrRetry:
// another request is assembling the file.
func (s *Service) SaveSlice(ctx context.Context, sl Slice, d *SliceData) (string, error) {
	if err := CheckSlice(sl, int(d.size)); err != nil {
		return "", err
	}
	sum := d.sum
	stored := "" // the slice blob this request wrote
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return "", err
			}
		}
		raw, rev, live, err := s.up.load(ctx, sl.Upload)
		if err != nil {
			return "", err
		}
		now := s.now()
		nowMs := now.UnixMilli()
		var u, old upload
		fresh := !live
		if live {
			if err := json.Unmarshal(raw, &u); err != nil {
				return "", fmt.Errorf("decode upload record: %w", err)
			}
			switch {
			case u.State == upDone && nowMs < u.DoneAt+s.opt.UploadMemory.Milliseconds():
				if !u.sameFields(sl) || u.Sums[sl.Index] != sum {
					return "", fmt.Errorf("%w: slice differs from the completed upload", ErrInvalid)
				}
				return u.NewID, nil
			case u.State == upDone:
				fresh = true // remembered long enough: a new upload
			case nowMs >= max(u.Last, u.FinishAt)+s.opt.UploadIdle.Milliseconds():
				fresh, old = true, u // idle too long: discarded
			}
		}
		if fresh {
			u = upload{Gen: NewID()[:12], Scheme: sl.Params.Scheme, Hash: sl.Params.TokenHash, Duration: sl.Params.Duration,
				Views: sl.Params.Views, N: sl.Count, Sums: make([]string, sl.Count)}
		} else {
			if !u.sameFields(sl) {
				return "", fmt.Errorf("%w: slice fields differ from the upload's", ErrInvalid)
			}
			if u.Sums[sl.Index] != "" && u.Sums[sl.Index] != sum {
				return "", fmt.Errorf("%w: different bytes for slice %d", ErrInvalid, sl.Index)
			}
			if u.State == upFinishing && nowMs < u.FinishAt+s.opt.FinishStale.Milliseconds() {
				return "", ErrRetry
			}
		}
		if u.Sums[sl.Index] == "" {
			key := s.sliceKey(sl.Upload, u.Gen, sl.Index, sum)
			if stored != key {
				if _, err := s.blobs.Put(ctx, key, d.reader(), d.size, "application/octet-stream"); err != nil {
					return "", fmt.Errorf("store slice: %w", err)
				}
				stored = key
			}
			u.Sums[sl.Index] = sum
			if sl.Index == sl.Count-1 {
				u.LastSize = d.size
			}
		}
		u.Last = nowMs
		finish := u.complete()
		if finish {
			// Also taken over from a finisher that went stale.
			u.State, u.FinishAt = upFinishing, nowMs
		}
		rev, err = s.put(ctx, s.up, sl.Upload, u, rev, s.opt.UploadIdle+s.opt.FinishStale)
		if errors.Is(err, errConflict) {
			continue
		}
		if err != nil {
			return "", err
		}
		if old.Gen != "" {
			s.deleteSlices(ctx, sl.Upload, old)
		}
		if !finish {
			return "", nil
		}
		return s.finish(ctx, sl.Upload, u, rev)
	}
	return "", ErrRetry
}

// finish assembles the slices into one blob, creates the secret and marks
// the upload done. Only the request that moved the upload to finishing
// (with revision rev) gets here.
func (s *Service) finish(ctx context.Context, uploadID string, u upload, rev uint64) (string, error) {
	// Finish even if the client hangs up: others are answered 503 until then.
	ctx = context.WithoutCancel(ctx)
	if s.opt.BeforeFinish != nil {
		s.opt.BeforeFinish(uploadID)
	}
	id := NewID()
	key := s.blobKey(id)
	size := int64(u.N-1)*SliceSize + u.LastSize
	r := &sliceReader{ctx: ctx, s: s, upload: uploadID, u: u}
	_, err := s.blobs.Put(ctx, key, r, size, "application/octet-stream")
	r.Close()
	if err != nil {
		_ = s.blobs.Delete(ctx, key)
		// Taken over (and maybe finished) by another request meanwhile?
		if _, cur, _, lerr := s.up.load(ctx, uploadID); lerr == nil && cur != rev {
			return "", ErrRetry
		}
		return "", fmt.Errorf("assemble upload: %w", err)
	}
	now := s.now()
	rec := record{Scheme: u.Scheme, Hash: u.Hash, Kind: File, Views: u.Views, Blob: key, Size: size,
		Exp: now.Add(time.Duration(u.Duration) * time.Second).UnixMilli()}
	if err := s.create(ctx, id, rec, time.Duration(u.Duration)*time.Second); err != nil {
		_ = s.blobs.Delete(ctx, key)
		return "", err
	}
	done := u
	done.State, done.NewID, done.DoneAt, done.FinishAt = upDone, id, now.UnixMilli(), 0
	if _, err := s.put(ctx, s.up, uploadID, done, rev, s.opt.UploadMemory); err != nil {
		// Another request took over a finish it thought stale: undo ours.
		if _, r2, live, lerr := s.kv.load(ctx, id); lerr == nil && live {
			_ = s.kv.purge(ctx, id, r2)
		}
		_ = s.blobs.Delete(ctx, key)
		if errors.Is(err, errConflict) {
			return "", ErrRetry
		}
		return "", err
	}
	s.deleteSlices(ctx, uploadID, u)
	return id, nil
}

func (s *Service) deleteSlices(ctx context.Context, uploadID string, u upload) {
	ctx = context.WithoutCancel(ctx)
	for i, sum := range u.Sums {
		if sum != "" {
			_ = s.blobs.Delete(ctx, s.sliceKey(uploadID, u.Gen, i, sum))
		}
	}
}

// sliceReader reads the slices of an upload one after another, opening
// each only when the previous one is done.
type sliceReader struct {
	ctx    context.Context
	s      *Service
	upload string
	u      upload
	i      int
	cur    io.ReadCloser
}

func (r *sliceReader) Read(p []byte) (int, error) {
	for {
		if r.cur == nil {
			if r.i >= len(r.u.Sums) {
				return 0, io.EOF
			}
			body, _, err := r.s.blobs.Get(r.ctx, r.s.sliceKey(r.upload, r.u.Gen, r.i, r.u.Sums[r.i]), nil)
			if err != nil {
				return 0, fmt.Errorf("open slice %d: %w", r.i, err)
			}
			r.cur = body
			r.i++
		}
		n, err := r.cur.Read(p)
		if errors.Is(err, io.EOF) {
			r.cur.Close()
			r.cur = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (r *sliceReader) Close() {
	if r.cur != nil {
		r.cur.Close()
		r.cur = nil
	}
}

// parseSliceKey splits "<upload>/<gen>/<i>-<sum>" (the part after the
// uploads prefix).
func parseSliceKey(rest string) (upload, gen string, ok bool) {
	parts := strings.Split(rest, "/")
	if len(parts) != 3 {
		return "", "", false
	}
	return parts[0], parts[1], true
}
