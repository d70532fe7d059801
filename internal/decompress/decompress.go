// Package decompress reads gzip, bzip2 and zstd input transparently. The
// compression is recognised by the stream's first bytes (its magic
// number), never by a file name or a Content-Type, so a feed published
// as .json that a mirror serves gzipped, or an EPSS .csv.gz saved
// without its suffix, is read the same way.
package decompress

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// Magic numbers of the formats Reader recognises.
var (
	magicGzip  = []byte{0x1f, 0x8b}
	magicBzip2 = []byte("BZh")
	magicZstd  = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// ErrTruncated is wrapped by a read error of a compressed stream that
// ends before its end-of-stream marker (a partial download, a cut file).
var ErrTruncated = errors.New("compressed input truncated")

// maxWindow bounds the memory a zstd frame may ask for (128 MiB, the
// zstd command's default limit without --long).
const maxWindow = 128 << 20

// Reader returns r's content, decompressed when r starts with a gzip,
// bzip2 or zstd magic number, else as it is. Concatenated gzip members
// are read as one stream. A compressed stream that ends early reads as
// everything before the damage, then an error wrapping ErrTruncated
// that names the format. Close releases the decoder; it does not close
// r. The error is a read error of r's first bytes or a bad header.
func Reader(r io.Reader) (io.ReadCloser, error) {
	br := bufio.NewReaderSize(r, 64*1024)
	head, err := br.Peek(4)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read input: %w", err)
	}
	switch {
	case bytes.HasPrefix(head, magicGzip):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", truncated(err))
		}
		return &reader{r: zr, name: "gzip", close: zr.Close}, nil
	case bytes.HasPrefix(head, magicBzip2):
		return &reader{r: bzip2.NewReader(br), name: "bzip2"}, nil
	case bytes.HasPrefix(head, magicZstd):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxWindow))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return &reader{r: zr, name: "zstd", close: func() error { zr.Close(); return nil }}, nil
	}
	return io.NopCloser(br), nil
}

// reader names the format in its read errors and marks truncation.
type reader struct {
	r     io.Reader
	name  string
	close func() error
}

func (d *reader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("%s: %w", d.name, truncated(err))
	}
	return n, err
}

func (d *reader) Close() error {
	if d.close == nil {
		return nil
	}
	return d.close()
}

// truncated marks an unexpected end of the compressed stream.
func truncated(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %w", ErrTruncated, err)
	}
	return err
}
