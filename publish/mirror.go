package publish

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"

	"github.com/netintel/netintel/internal/ipmodel"
)

// A record without Views is the same for every audience, so when no
// record of the state has any (no restricted knowledge), the enterprise
// build's rows are the pro build's rows: its Parquet file is the pro
// file byte for byte and its NDJSON the pro file's gzip stream under its
// own header, and its CSV the pro CSV; the pro and enterprise MMDBs are
// the free MMDB. The enterprise writers of those formats then do no more
// than take the records (they cannot know before the state's last
// record), and instead of sorting and encoding them again at Close their
// files are copied from the pro ones (docs/snapshot.md, "Work shared
// between audiences").

// mirrorWriter is a writer whose Close work a mirror skips.
type mirrorWriter interface {
	// discard drops what the writer holds (temp files) without writing.
	discard()
}

var (
	_ mirrorWriter = (*ndjsonWriter)(nil)
	_ mirrorWriter = (*parquetWriter)(nil)
	_ mirrorWriter = (*mmdbWriter)(nil)
	_ mirrorWriter = (*csvWriter)(nil)
)

// pairMirrors sets mirrorOf on the pro and enterprise MMDBs (the free
// MMDB) and on the enterprise CSV, Parquet and sorted NDJSON files that
// have a pro file of the same format; an NDJSON file with a delta to
// compute (its own base) is never a mirror.
func pairMirrors(outs []*buildOut) {
	var freeMMDB *buildOut
	for _, o := range outs {
		if _, ok := o.w.(*mmdbWriter); ok && o.aud == ipmodel.AudienceFree {
			freeMMDB = o
		}
	}
	for _, o := range outs {
		if _, ok := o.w.(*mmdbWriter); ok && o.aud != ipmodel.AudienceFree && freeMMDB != nil {
			// The free MMDB's hosts come without the ranges' claims
			// applied (the MMDB merges them itself): the same MMDB as
			// the pro and enterprise ones when no record has Views.
			o.mirrorOf = freeMMDB
			continue
		}
		if o.aud != ipmodel.AudienceEnterprise {
			continue
		}
		switch w := o.w.(type) {
		case *ndjsonWriter:
			if w.sorter == nil || w.differ != nil {
				continue
			}
		case *parquetWriter, *mmdbWriter:
		case *csvWriter:
		default:
			continue
		}
		for _, p := range outs {
			if p.aud == ipmodel.AudiencePro && p.format == o.format {
				o.mirrorOf = p
			}
		}
		if o.mirrorOf == nil {
			continue
		}
		switch w := o.w.(type) {
		case *csvWriter:
			w.tentative = true
			o.fork = &rowFork{done: make(chan struct{})}
			o.mirrorOf.fork = o.fork
		case *ndjsonWriter:
			w.tentative = true
			o.fork = &rowFork{done: make(chan struct{}), dir: w.sorter.dir}
			o.mirrorOf.fork = o.fork
		}
	}
}

func (n *ndjsonWriter) discard() {
	if n.sorter != nil {
		n.sorter.cleanup()
	}
}

func (p *parquetWriter) discard() {
	p.sorted.Close()
	p.b.Release()
}

func (m *mmdbWriter) discard() {
	m.sorter.remove()
	m.vals.Close()
	os.Remove(m.vals.Name())
}

// gzipHeader is the gzip header newGzipFile writes for hdr.
func gzipHeader(hdr FileHeader) []byte {
	var b bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&b, gzip.DefaultCompression)
	if hdr.Kind != "" {
		gz.Comment = hdr.comment()
	}
	gz.Write(nil) // the header alone
	return b.Bytes()
}

// copyMirror rewrites o's file as a copy of its mirrorOf's (closed)
// file; an NDJSON file keeps its own gzip header (its audience).
func copyMirror(o *buildOut) error {
	name := o.hf.f.Name()
	o.hf.f.Close()
	fh, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("mirror: %w", err)
	}
	o.hf = &hashFile{f: fh, bw: bufio.NewWriterSize(fh, 1<<20), h: sha256.New()}
	src, err := os.Open(o.mirrorOf.hf.f.Name())
	if err != nil {
		return fmt.Errorf("mirror: %w", err)
	}
	defer src.Close()
	r := bufio.NewReaderSize(src, 1<<20)
	if nw, ok := o.w.(*ndjsonWriter); ok {
		proHdr := gzipHeader(o.mirrorOf.w.(*ndjsonWriter).hdr)
		got := make([]byte, len(proHdr))
		if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got, proHdr) {
			return fmt.Errorf("mirror: %s does not start with its gzip header", o.mirrorOf.name)
		}
		if _, err := o.hf.Write(gzipHeader(nw.hdr)); err != nil {
			return fmt.Errorf("mirror: %w", err)
		}
	}
	if _, err := io.Copy(o.hf, r); err != nil {
		return fmt.Errorf("mirror: %w", err)
	}
	return nil
}

// The CSV is written as the records come (no sort), so its enterprise
// writer cannot wait for the end to learn whether it is a copy: it takes
// no rows (tentative) until the feeder meets the first record with Views.
// There the feeder puts a fork into both audiences' batches: the pro CSV
// writer, having written the rows before it, ends a deflate block (a
// sync flush, which any inflater reads through) and hands over its file's
// length, the CRC-32 and the size of its rows so far; the enterprise
// writer copies that much of the pro file and goes on with a deflate
// stream of its own from there (no back-references into the copied part)
// and the gzip trailer over all of its rows. Rows before the fork are
// encoded and compressed once.

// rowFork is the hand-over from the pro CSV to the enterprise CSV.
type rowFork struct {
	done   chan struct{} // closed by the pro writer once the rest is set
	path   string        // the pro CSV file
	offset int64         // its bytes up to the fork
	crc    uint32        // of the rows before the fork (and the header row)
	size   int64
	rows   int64
	err    error // the pro writer failed before the fork

	// NDJSON: the enterprise writer's sort folder, and there the pro
	// writer's sort runs up to the fork (hard links: each writer removes
	// its own).
	dir  string
	runs []string
}

// csvCont is the enterprise CSV's own deflate stream after a fork.
type csvCont struct {
	w   io.Writer
	fl  *flate.Writer
	buf *bufio.Writer
}

// forkPoint ends the pro CSV's deflate block at the fork (its bytes so far
// then decode on their own) and fills fk but for the file offset.
func (c *csvWriter) forkPoint(fk *rowFork) error {
	if err := c.z.buf.Flush(); err != nil {
		return fmt.Errorf("csv fork: %w", err)
	}
	if err := c.z.gz.Flush(); err != nil {
		return fmt.Errorf("csv fork: %w", err)
	}
	fk.crc, fk.size, fk.rows = c.crc, c.size, c.rows
	return nil
}

// forkFrom makes the enterprise CSV c (tentative so far) a copy of the
// first fk.offset bytes of the pro CSV and continues its stream.
func (c *csvWriter) forkFrom(fk *rowFork, w io.Writer) error {
	src, err := os.Open(fk.path)
	if err != nil {
		return fmt.Errorf("csv fork: %w", err)
	}
	defer src.Close()
	if _, err := io.Copy(w, io.LimitReader(bufio.NewReaderSize(src, 1<<20), fk.offset)); err != nil {
		return fmt.Errorf("csv fork: %w", err)
	}
	fl, _ := flate.NewWriter(w, gzip.DefaultCompression)
	c.cont = &csvCont{w: w, fl: fl, buf: bufio.NewWriterSize(fl, 256<<10)}
	c.crc, c.size, c.rows = fk.crc, fk.size, fk.rows
	c.tentative = false
	return nil
}

// close ends the stream after a fork: the last deflate block, then the
// gzip trailer (CRC-32 and size of all the rows).
func (k *csvCont) close(crc uint32, size int64) error {
	if err := k.buf.Flush(); err != nil {
		return fmt.Errorf("close csv: %w", err)
	}
	if err := k.fl.Close(); err != nil {
		return fmt.Errorf("close csv: %w", err)
	}
	var t [8]byte
	binary.LittleEndian.PutUint32(t[:4], crc)
	binary.LittleEndian.PutUint32(t[4:], uint32(size))
	if _, err := k.w.Write(t[:]); err != nil {
		return fmt.Errorf("close csv: %w", err)
	}
	return nil
}

// forkHere handles a fork marker in o's batches: the pro CSV paired with
// an enterprise CSV hands over (forkPoint), that enterprise CSV takes it
// over (forkFrom); every other writer ignores it.
func (o *buildOut) forkHere() error {
	fk := o.fork
	if fk == nil {
		return nil
	}
	if n, ok := o.w.(*ndjsonWriter); ok {
		return o.forkNDJSON(n, fk)
	}
	c, ok := o.w.(*csvWriter)
	if !ok {
		return nil
	}
	switch {
	case o.aud == ipmodel.AudiencePro:
		defer close(fk.done)
		if fk.err = c.forkPoint(fk); fk.err != nil {
			return fk.err
		}
		if fk.err = o.hf.bw.Flush(); fk.err != nil {
			return fmt.Errorf("csv fork: %w", fk.err)
		}
		fk.path, fk.offset = o.hf.f.Name(), o.hf.n
		return nil
	case o.mirrorOf != nil:
		<-fk.done
		if fk.err != nil {
			return fmt.Errorf("csv fork: the pro CSV failed: %w", fk.err)
		}
		return c.forkFrom(fk, struct{ io.Writer }{o.hf})
	}
	return nil
}

// failForks releases the enterprise CSV waiting on a fork this (pro CSV)
// writer will not make, after err.
func (o *buildOut) failForks(b []item, err error) {
	if o.aud != ipmodel.AudiencePro || o.fork == nil {
		return
	}
	for i := range b {
		if !b[i].pfx.IsValid() {
			o.fork.err = err
			close(o.fork.done)
		}
	}
}

// discard: a CSV mirror holds nothing (it took no rows).
func (c *csvWriter) discard() {}

// The enterprise NDJSON, like the CSV, takes no lines until the first
// record with Views. At the fork the pro writer spills its sort buffer
// as a run and links its runs into the enterprise writer's sort folder;
// the enterprise writer sorts them with its own lines from there.

// forkNDJSON hands the pro NDJSON's lines so far to the enterprise NDJSON
// (pro side), or takes them (enterprise side).
func (o *buildOut) forkNDJSON(n *ndjsonWriter, fk *rowFork) error {
	if o.aud == ipmodel.AudiencePro {
		defer close(fk.done)
		fk.err = n.forkRuns(fk)
		return fk.err
	}
	<-fk.done
	if fk.err != nil {
		return fmt.Errorf("ndjson fork: the pro NDJSON failed: %w", fk.err)
	}
	n.sorter.runs = append(fk.runs, n.sorter.runs...)
	n.rows = fk.rows
	n.tentative = false
	return nil
}

// forkRuns spills n's sort buffer and links every run into fk.dir.
func (n *ndjsonWriter) forkRuns(fk *rowFork) error {
	s := n.sorter
	if len(s.ents) > 0 {
		if err := s.spill(); err != nil {
			return fmt.Errorf("ndjson fork: %w", err)
		}
	}
	for i, r := range s.runs {
		name := filepath.Join(fk.dir, "fork-run-"+strconv.Itoa(i))
		if err := os.Link(r, name); err != nil {
			return fmt.Errorf("ndjson fork: %w", err)
		}
		fk.runs = append(fk.runs, name)
	}
	fk.rows = n.rows
	return nil
}
