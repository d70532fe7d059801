package publish

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/netintel/netintel/internal/ipmodel"
)

// sortSpoolRun is how many bytes of spooled records a sortSpool sorts in
// memory before writing them out as one sorted run.
const sortSpoolRun = 32 << 20

// sortSpool sorts records by the byte order of their IP text with
// memory bounded by sortSpoolRun: an external merge sort. Add buffers
// records (spool.go's binary form) and writes each full buffer to a temp
// file as a sorted run; Each merges the runs, reading every run forward
// through its own small buffer. Records with equal IPs keep the order they
// were added in.
type sortSpool struct {
	// runBytes is the size of a run (sortSpoolRun; tests make it small).
	runBytes int
	f        *os.File
	w        *bufio.Writer
	off      int64
	runs     []int64 // end offset of each run written

	buf  []byte     // the current run: ip, then record, per entry
	keys []spoolKey // its entries
	enc  []byte
}

// spoolKey is one entry of the current run: where its ip and record are in buf.
type spoolKey struct {
	start  uint32
	ipLen  uint32
	recLen uint32
}

func newSortSpool(dir string) (*sortSpool, error) {
	f, err := os.CreateTemp(dir, "sort-spool-*")
	if err != nil {
		return nil, fmt.Errorf("sort spool: %w", err)
	}
	return &sortSpool{runBytes: sortSpoolRun, f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// Add spools r.
func (s *sortSpool) Add(r *ipmodel.Record) error {
	s.enc = appendRecord(s.enc[:0], r)
	start := len(s.buf)
	s.buf = append(s.buf, r.IP...)
	s.buf = append(s.buf, s.enc...)
	s.keys = append(s.keys, spoolKey{start: uint32(start), ipLen: uint32(len(r.IP)), recLen: uint32(len(s.enc))})
	if len(s.buf) >= s.runBytes {
		return s.flushRun()
	}
	return nil
}

func (s *sortSpool) ip(k spoolKey) []byte { return s.buf[k.start : k.start+k.ipLen] }

// flushRun sorts the current run and appends it to the file:
// uvarint(len ip) ip uvarint(len record) record, per entry.
func (s *sortSpool) flushRun() error {
	if len(s.keys) == 0 {
		return nil
	}
	slices.SortStableFunc(s.keys, func(a, b spoolKey) int { return bytes.Compare(s.ip(a), s.ip(b)) })
	var n [2 * binary.MaxVarintLen32]byte
	for _, k := range s.keys {
		h := binary.AppendUvarint(n[:0], uint64(k.ipLen))
		h = append(h, s.ip(k)...)
		h = binary.AppendUvarint(h, uint64(k.recLen))
		rec := s.buf[k.start+k.ipLen : k.start+k.ipLen+k.recLen]
		if _, err := s.w.Write(h); err != nil {
			return fmt.Errorf("sort spool: %w", err)
		}
		if _, err := s.w.Write(rec); err != nil {
			return fmt.Errorf("sort spool: %w", err)
		}
		s.off += int64(len(h) + len(rec))
	}
	s.runs = append(s.runs, s.off)
	s.buf, s.keys = s.buf[:0], s.keys[:0]
	return nil
}

// Each calls fn with every record in IP order.
func (s *sortSpool) Each(fn func(*ipmodel.Record) error) error {
	if err := s.flushRun(); err != nil {
		return err
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("sort spool: %w", err)
	}
	s.buf, s.keys = nil, nil // the run buffer is no longer needed
	h := make(runHeap, 0, len(s.runs))
	var start int64
	for i, end := range s.runs {
		c := &runCursor{r: bufio.NewReaderSize(io.NewSectionReader(s.f, start, end-start), 64<<10), run: i}
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, c)
		}
		start = end
	}
	heap.Init(&h)
	for len(h) > 0 {
		c := h[0]
		r, err := decodeRecord(c.rec)
		if err != nil {
			return fmt.Errorf("sort spool: %w", err)
		}
		if err := fn(&r); err != nil {
			return err
		}
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return nil
}

// Close removes the temp file.
func (s *sortSpool) Close() error {
	err := s.f.Close()
	if rerr := os.Remove(s.f.Name()); err == nil {
		err = rerr
	}
	return err
}

// runCursor reads one sorted run forward.
type runCursor struct {
	r   *bufio.Reader
	run int
	ip  []byte
	rec []byte
}

// next reads the run's next entry; false at its end.
func (c *runCursor) next() (bool, error) {
	n, err := binary.ReadUvarint(c.r)
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	if err == nil {
		c.ip = slices.Grow(c.ip[:0], int(n))[:n]
		_, err = io.ReadFull(c.r, c.ip)
	}
	if err == nil {
		n, err = binary.ReadUvarint(c.r)
	}
	if err == nil {
		c.rec = slices.Grow(c.rec[:0], int(n))[:n]
		_, err = io.ReadFull(c.r, c.rec)
	}
	if err != nil {
		return false, fmt.Errorf("sort spool: read run %d: %w", c.run, err)
	}
	return true, nil
}

// runHeap orders the runs' cursors by their current ip, then run (so
// equal ips keep the order they were added in).
type runHeap []*runCursor

func (h runHeap) Len() int { return len(h) }
func (h runHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].ip, h[j].ip); c != 0 {
		return c < 0
	}
	return cmp.Less(h[i].run, h[j].run)
}
func (h runHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)   { *h = append(*h, x.(*runCursor)) }
func (h *runHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}
