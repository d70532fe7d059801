package publish

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/klauspost/compress/s2"
)

// The NDJSON files list their rows in key order (SortKey), so that two
// days' files can be compared by streaming both (the delta) and a delta
// applied to a base by streaming both (netintel dataset apply). The state
// comes in any order, so the NDJSON writer sorts its lines on disk: lines
// go into a memory buffer of sortBufBytes; a full buffer is sorted and
// written to a run file (s2-compressed) in the work folder; Close merges
// the runs (at most sortFanIn at a time, in several rounds beyond that).
// Memory stays at the buffer plus one block per run read, whatever the
// number of rows.

// keyLen is the length of a SortKey.
const keyLen = 19

// SortKey orders the rows of the NDJSON files: IPv4 before IPv6, then by
// address, then by prefix length (a wider range first), then a range
// before a host of the same address and length. So a range comes before
// the ranges and hosts inside it.
type SortKey [keyLen]byte

// MakeSortKey returns the key of a row: p is the range's network, or the
// host's address as a full-length prefix.
func MakeSortKey(p netip.Prefix, isRange bool) SortKey {
	var k SortKey
	a := p.Addr()
	if a.Is6() {
		k[0] = 1
	}
	b := a.As16()
	copy(k[1:17], b[:])
	k[17] = byte(p.Bits())
	if !isRange {
		k[18] = 1
	}
	return k
}

// KeyOfLine reads the key of an NDJSON row (its "ip" and "network"
// columns) and returns the sort key and the key text: the network for a
// range, the address for a host. The writer puts ip and network first, so
// the common case needs no JSON decoding.
func KeyOfLine(line []byte) (SortKey, string, error) {
	ip, network, ok := fastKey(line)
	if !ok {
		var v struct {
			IP      string  `json:"ip"`
			Network *string `json:"network"`
		}
		if err := json.Unmarshal(line, &v); err != nil {
			return SortKey{}, "", fmt.Errorf("row key: %w", err)
		}
		ip = v.IP
		if v.Network != nil {
			network = *v.Network
		}
	}
	if network != "" {
		p, err := netip.ParsePrefix(network)
		if err != nil {
			return SortKey{}, "", fmt.Errorf("row key: network %q: %w", network, err)
		}
		return MakeSortKey(p, true), network, nil
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return SortKey{}, "", fmt.Errorf("row key: ip %q: %w", ip, err)
	}
	return MakeSortKey(netip.PrefixFrom(a, a.BitLen()), false), ip, nil
}

// fastKey reads `{"ip":"X","network":null` or `{"ip":"X","network":"Y"`.
func fastKey(line []byte) (ip, network string, ok bool) {
	rest, found := bytes.CutPrefix(line, []byte(`{"ip":"`))
	if !found {
		return "", "", false
	}
	i := bytes.IndexByte(rest, '"')
	if i < 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return "", "", false
	}
	ip = string(rest[:i])
	rest, found = bytes.CutPrefix(rest[i+1:], []byte(`,"network":`))
	if !found {
		return "", "", false
	}
	if bytes.HasPrefix(rest, []byte("null")) {
		return ip, "", true
	}
	if len(rest) == 0 || rest[0] != '"' {
		return "", "", false
	}
	rest = rest[1:]
	i = bytes.IndexByte(rest, '"')
	if i < 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return "", "", false
	}
	return ip, string(rest[:i]), true
}

const (
	// sortBufBytes is the memory buffer of one sorting writer.
	sortBufBytes = 32 << 20
	// sortFanIn is how many runs one merge reads at once.
	sortFanIn = 64
	// runBlockBytes is the s2 block size of a run file.
	runBlockBytes = 128 << 10
)

type sortEnt struct {
	key SortKey
	off uint32
	n   uint32
}

// lineSorter sorts lines by key, spilling sorted runs to dir.
type lineSorter struct {
	dir   string
	limit int
	buf   []byte
	ents  []sortEnt
	runs  []string
	seq   int
}

func newLineSorter(dir string, limit int) *lineSorter {
	if limit <= 0 {
		limit = sortBufBytes
	}
	return &lineSorter{dir: dir, limit: limit}
}

// add copies line (without its line end) under key.
func (s *lineSorter) add(k SortKey, line []byte) error {
	if len(s.buf)+len(line) > s.limit && len(s.ents) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	if s.buf == nil {
		// The whole buffer at once: growing it by doubling would hold up
		// to twice the limit.
		s.buf = make([]byte, 0, max(s.limit, len(line)))
	}
	s.ents = append(s.ents, sortEnt{key: k, off: uint32(len(s.buf)), n: uint32(len(line))})
	s.buf = append(s.buf, line...)
	return nil
}

func (s *lineSorter) sortMem() {
	slices.SortFunc(s.ents, func(a, b sortEnt) int {
		if c := bytes.Compare(a.key[:], b.key[:]); c != 0 {
			return c
		}
		return bytes.Compare(s.buf[a.off:a.off+a.n], s.buf[b.off:b.off+b.n])
	})
}

func (s *lineSorter) newRun() (*os.File, string, error) {
	s.seq++
	name := filepath.Join(s.dir, "sort-run-"+strconv.Itoa(s.seq))
	f, err := os.Create(name)
	if err != nil {
		return nil, "", fmt.Errorf("sort: %w", err)
	}
	return f, name, nil
}

// spill writes the buffer, sorted, as a run.
func (s *lineSorter) spill() error {
	s.sortMem()
	f, name, err := s.newRun()
	if err != nil {
		return err
	}
	rw := newRunWriter(f)
	for _, e := range s.ents {
		if err := rw.write(e.key, s.buf[e.off:e.off+e.n]); err != nil {
			f.Close()
			return err
		}
	}
	if err := rw.close(); err != nil {
		return err
	}
	s.runs = append(s.runs, name)
	s.buf, s.ents = s.buf[:0], s.ents[:0]
	return nil
}

// each calls fn with every line in key order (line is valid until fn
// returns), then frees the buffer and removes the runs.
func (s *lineSorter) each(fn func(k SortKey, line []byte) error) error {
	defer s.cleanup()
	if len(s.runs) == 0 {
		s.sortMem()
		for _, e := range s.ents {
			if err := fn(e.key, s.buf[e.off:e.off+e.n]); err != nil {
				return err
			}
		}
		return nil
	}
	if len(s.ents) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	s.buf, s.ents = nil, nil
	for len(s.runs) > sortFanIn {
		f, name, err := s.newRun()
		if err != nil {
			return err
		}
		rw := newRunWriter(f)
		if err := mergeRuns(s.runs[:sortFanIn], rw.write); err != nil {
			f.Close()
			return err
		}
		if err := rw.close(); err != nil {
			return err
		}
		for _, r := range s.runs[:sortFanIn] {
			os.Remove(r)
		}
		s.runs = append(s.runs[sortFanIn:], name)
	}
	return mergeRuns(s.runs, fn)
}

func (s *lineSorter) cleanup() {
	for _, r := range s.runs {
		os.Remove(r)
	}
	s.runs, s.buf, s.ents = nil, nil, nil
}

// runWriter writes a run: per line its key, a uvarint length and the bytes.
type runWriter struct {
	f  *os.File
	z  *s2.Writer
	bw *bufio.Writer
	nb [binary.MaxVarintLen64]byte
}

func newRunWriter(f *os.File) *runWriter {
	// Small blocks: a merge holds a block (and its compressed form) per
	// run it reads, and it reads up to sortFanIn runs at once.
	z := s2.NewWriter(f, s2.WriterConcurrency(1), s2.WriterBlockSize(runBlockBytes))
	return &runWriter{f: f, z: z, bw: bufio.NewWriterSize(z, 256<<10)}
}

func (w *runWriter) write(k SortKey, line []byte) error {
	w.bw.Write(k[:])
	n := binary.PutUvarint(w.nb[:], uint64(len(line)))
	w.bw.Write(w.nb[:n])
	if _, err := w.bw.Write(line); err != nil {
		return fmt.Errorf("sort: write run: %w", err)
	}
	return nil
}

func (w *runWriter) close() error {
	err := w.bw.Flush()
	if err == nil {
		err = w.z.Close()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sort: write run: %w", err)
	}
	return nil
}

// runReader reads a run back.
type runReader struct {
	f    *os.File
	br   *bufio.Reader
	key  SortKey
	line []byte
}

func (r *runReader) next() (bool, error) {
	if _, err := io.ReadFull(r.br, r.key[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, fmt.Errorf("sort: read run: %w", err)
	}
	n, err := binary.ReadUvarint(r.br)
	if err != nil {
		return false, fmt.Errorf("sort: read run: %w", err)
	}
	r.line = slices.Grow(r.line[:0], int(n))[:n]
	if _, err := io.ReadFull(r.br, r.line); err != nil {
		return false, fmt.Errorf("sort: read run: %w", err)
	}
	return true, nil
}

type lineRunHeap []*runReader

func (h lineRunHeap) Len() int { return len(h) }
func (h lineRunHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].key[:], h[j].key[:]); c != 0 {
		return c < 0
	}
	return bytes.Compare(h[i].line, h[j].line) < 0
}
func (h lineRunHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *lineRunHeap) Push(x any)   { *h = append(*h, x.(*runReader)) }
func (h *lineRunHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// mergeRuns calls fn with the lines of the runs in key order.
func mergeRuns(runs []string, fn func(k SortKey, line []byte) error) error {
	var h lineRunHeap
	defer func() {
		for _, r := range h {
			r.f.Close()
		}
	}()
	for _, name := range runs {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("sort: %w", err)
		}
		r := &runReader{f: f, br: bufio.NewReaderSize(s2.NewReader(f), 64<<10)}
		ok, err := r.next()
		if err != nil {
			f.Close()
			return err
		}
		if !ok {
			f.Close()
			continue
		}
		h = append(h, r)
	}
	heap.Init(&h)
	for len(h) > 0 {
		r := h[0]
		if err := fn(r.key, r.line); err != nil {
			return err
		}
		ok, err := r.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			r.f.Close()
			heap.Pop(&h)
		}
	}
	return nil
}
