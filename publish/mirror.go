package publish

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"

	"github.com/netintel/netintel/internal/ipmodel"
)

// A record without Views is the same for every audience, so when no
// record of the state has any (no restricted knowledge), the enterprise
// build's rows are the pro build's rows: its Parquet file is the pro
// file byte for byte and its NDJSON the pro file's gzip stream under its
// own header; its MMDB is the pro MMDB. The enterprise writers of those formats then do no more
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
)

// pairMirrors sets mirrorOf on the enterprise MMDB, Parquet and sorted
// NDJSON files that have a pro file of the same format; an NDJSON file with a
// delta to compute (its own base) is never a mirror.
func pairMirrors(outs []*buildOut) {
	for _, o := range outs {
		if o.aud != ipmodel.AudienceEnterprise {
			continue
		}
		switch w := o.w.(type) {
		case *ndjsonWriter:
			if w.sorter == nil || w.differ != nil {
				continue
			}
		case *parquetWriter, *mmdbWriter:
		default:
			continue
		}
		for _, p := range outs {
			if p.aud == ipmodel.AudiencePro && p.format == o.format {
				o.mirrorOf = p
			}
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
