package publish

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
)

// ErrWrongBase is returned by ApplyDelta when the base file is not the
// snapshot the delta is against.
var ErrWrongBase = errors.New("wrong base")

// ErrNotDelta is returned by ApplyDelta for a delta file that is not one
// (no netintel delta header).
var ErrNotDelta = errors.New("not a netintel delta file")

// ApplyDelta applies the delta NDJSON at deltaPath to the full NDJSON at
// basePath (both gzip, as published) and writes the new full NDJSON to
// outPath (gzip, with the new snapshot's header): the same lines, in the
// same order, as the new snapshot's NDJSON, checked against the SHA-256 of
// its lines that the delta carries. Both files are streamed; memory does
// not grow with their size.
//
// A base that is not the delta's base is refused before anything is
// written when its header names another snapshot (ErrWrongBase, naming
// both), and at the end otherwise (its lines' SHA-256 differs). On any
// error outPath is left as it was: the output is written to a temporary
// file beside it and renamed into place only once verified.
func ApplyDelta(basePath, deltaPath, outPath string) (FileHeader, error) {
	df, err := os.Open(deltaPath)
	if err != nil {
		return FileHeader{}, err
	}
	delta, err := newLineReader(df, false)
	if err != nil {
		return FileHeader{}, fmt.Errorf("delta %s: %w", deltaPath, err)
	}
	defer delta.close()
	dh, ok := ReadHeader(delta.zr)
	if !ok || dh.Kind != HeaderDelta || dh.Base == nil {
		return FileHeader{}, fmt.Errorf("%s: %w", deltaPath, ErrNotDelta)
	}
	bf, err := os.Open(basePath)
	if err != nil {
		return dh, err
	}
	base, err := newLineReader(bf, false)
	if err != nil {
		return dh, fmt.Errorf("base %s: %w", basePath, err)
	}
	defer base.close()
	bh, known := ReadHeader(base.zr)
	want := snapshotName(dh.Base.SnapshotDate, dh.Base.BuildID)
	if known {
		switch {
		case bh.Kind != HeaderFull:
			return dh, fmt.Errorf("%w: the delta is against the snapshot of %s, but the base file is a delta (of %s), not a full NDJSON file", ErrWrongBase, want, bh.Name())
		case bh.SnapshotDate != dh.Base.SnapshotDate || bh.BuildID != dh.Base.BuildID:
			return dh, fmt.Errorf("%w: the delta is against the snapshot of %s, but the base file is the snapshot of %s", ErrWrongBase, want, bh.Name())
		case bh.Audience != dh.Audience:
			return dh, fmt.Errorf("%w: the delta is for the %s build of %s, but the base file is the %s build of %s", ErrWrongBase, dh.Audience, dh.Name(), bh.Audience, bh.Name())
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(outPath), "."+filepath.Base(outPath)+".tmp-*")
	if err != nil {
		return dh, err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	z := newGzipFile(bw, FileHeader{Kind: HeaderFull, SnapshotDate: dh.SnapshotDate, BuildID: dh.BuildID, Audience: dh.Audience})
	content := sha256.New()
	out := func(line []byte) error {
		content.Write(line)
		content.Write([]byte{'\n'})
		z.buf.Write(line)
		return z.buf.WriteByte('\n')
	}
	misfit := func(format string, a ...any) error {
		if known {
			return fmt.Errorf("the base file says it is the snapshot of %s, but the delta does not fit it: %s", bh.Name(), fmt.Sprintf(format, a...))
		}
		return fmt.Errorf("%w: the delta is against the snapshot of %s, but the base file (no netintel header, date unknown) is not that snapshot: %s", ErrWrongBase, want, fmt.Sprintf(format, a...))
	}
	if err := mergeDelta(base, delta, out, misfit); err != nil {
		return dh, err
	}
	if got := hex.EncodeToString(base.content.Sum(nil)); got != dh.Base.ContentSHA256 {
		return dh, misfit("its lines' SHA-256 is %s, the delta's base has %s", got[:12], dh.Base.ContentSHA256[:min(12, len(dh.Base.ContentSHA256))])
	}
	if got := hex.EncodeToString(content.Sum(nil)); got != dh.ContentSHA256 {
		return dh, fmt.Errorf("the result's lines have SHA-256 %s, the snapshot of %s has %s: %w", got[:12], dh.Name(), dh.ContentSHA256[:min(12, len(dh.ContentSHA256))], ErrChecksum)
	}
	if err := z.Close(); err != nil {
		return dh, err
	}
	if err := bw.Flush(); err != nil {
		return dh, err
	}
	if err := tmp.Sync(); err != nil {
		return dh, err
	}
	if err := tmp.Close(); err != nil {
		return dh, err
	}
	if err := os.Rename(tmp.Name(), outPath); err != nil {
		os.Remove(tmp.Name())
		return dh, err
	}
	done = true
	if d, err := os.Open(filepath.Dir(outPath)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return dh, nil
}

// deltaKey returns the sort key of a delta line's key text.
func deltaKey(text string) (SortKey, error) {
	if strings.Contains(text, "/") {
		p, err := netip.ParsePrefix(text)
		if err != nil {
			return SortKey{}, fmt.Errorf("delta key %q: %w", text, err)
		}
		return MakeSortKey(p, true), nil
	}
	a, err := netip.ParseAddr(text)
	if err != nil {
		return SortKey{}, fmt.Errorf("delta key %q: %w", text, err)
	}
	return MakeSortKey(netip.PrefixFrom(a, a.BitLen()), false), nil
}

// mergeDelta streams base and delta (both in key order) into out.
func mergeDelta(base, delta *lineReader, out func([]byte) error, misfit func(string, ...any) error) error {
	bc := &baseCursor{r: base, misfit: misfit, first: true}
	dc := &deltaCursor{r: delta, first: true}
	if err := bc.next(); err != nil {
		return err
	}
	if err := dc.next(); err != nil {
		return err
	}
	for bc.ok || dc.ok {
		c := -1 // base first
		switch {
		case !bc.ok:
			c = 1
		case dc.ok:
			c = bytes.Compare(bc.key[:], dc.key[:])
		}
		dl := &dc.line
		switch {
		case c < 0:
			if err := out(bc.line); err != nil {
				return err
			}
			if err := bc.next(); err != nil {
				return err
			}
			continue
		case c > 0:
			if dl.Op != OpAdd {
				return misfit("%s of %s, which the base does not have", dl.Op, dl.Key)
			}
			if err := out(dl.Record); err != nil {
				return err
			}
		default:
			switch dl.Op {
			case OpAdd:
				return misfit("add of %s, which the base already has", dl.Key)
			case OpChange:
				if err := out(dl.Record); err != nil {
					return err
				}
			}
			if err := bc.next(); err != nil {
				return err
			}
		}
		if err := dc.next(); err != nil {
			return err
		}
	}
	return nil
}

// baseCursor reads the base NDJSON line by line with each row's key,
// holding the base to key order (misfit says it is not the base).
type baseCursor struct {
	r      *lineReader
	misfit func(string, ...any) error
	key    SortKey
	prev   SortKey
	line   []byte
	first  bool
	ok     bool // a line is held; false at the end
}

func (c *baseCursor) next() error {
	line, err := c.r.next()
	if errors.Is(err, io.EOF) {
		c.ok = false
		return nil
	}
	if err != nil {
		return fmt.Errorf("read base: %w", err)
	}
	key, text, err := KeyOfLine(line)
	if err != nil {
		return fmt.Errorf("read base: %w", err)
	}
	if !c.first && bytes.Compare(key[:], c.prev[:]) <= 0 {
		return c.misfit("its rows are not in key order at %s", text)
	}
	c.key, c.prev, c.first, c.line, c.ok = key, key, false, line, true
	return nil
}

// deltaCursor reads the delta line by line, checking each line's op,
// record and key order.
type deltaCursor struct {
	r     *lineReader
	line  deltaLine
	key   SortKey
	prev  SortKey
	first bool
	ok    bool // a line is held; false at the end
}

func (c *deltaCursor) next() error {
	line, err := c.r.next()
	if errors.Is(err, io.EOF) {
		c.ok = false
		return nil
	}
	if err != nil {
		return fmt.Errorf("read delta: %w", err)
	}
	c.line = deltaLine{}
	if err := json.Unmarshal(line, &c.line); err != nil {
		return fmt.Errorf("read delta: %w", err)
	}
	dl := &c.line
	if c.key, err = deltaKey(dl.Key); err != nil {
		return fmt.Errorf("read delta: %w", err)
	}
	switch {
	case dl.Op != OpAdd && dl.Op != OpChange && dl.Op != OpRemove:
		return fmt.Errorf("read delta: op %q at %s", dl.Op, dl.Key)
	case dl.Op != OpRemove && len(dl.Record) == 0:
		return fmt.Errorf("read delta: %s of %s has no record", dl.Op, dl.Key)
	case !c.first && bytes.Compare(c.key[:], c.prev[:]) <= 0:
		return fmt.Errorf("read delta: rows are not in key order at %s", dl.Key)
	}
	c.prev, c.first, c.ok = c.key, false, true
	return nil
}
