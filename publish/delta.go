package publish

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/klauspost/compress/gzip"

	"github.com/netintel/netintel/internal/ipmodel"
)

// The delta of a snapshot lists, per audience, the rows that differ from
// the previous snapshot's (docs/snapshot.md, "Delta"): NDJSON lines
// {"op","key","record","changed"} and the same rows in Parquet. It is
// computed while the sorted NDJSON is written: the new rows come out of
// the sort in key order and the base's NDJSON, already in key order, is
// streamed from the object store beside them, so neither day is held in
// memory.

// Delta operations.
const (
	OpAdd    = "add"
	OpChange = "change"
	OpRemove = "remove"
)

// Header kinds (FileHeader.Kind).
const (
	HeaderFull  = "ipintel"
	HeaderDelta = "ipintel-delta"
)

// FileHeader is the JSON in the gzip header comment (RFC 1952 FCOMMENT) of
// an NDJSON file, full or delta, so that a file alone says which snapshot
// it is: `netintel dataset apply` reads it to refuse a wrong base.
// Readers of the lines never see it.
type FileHeader struct {
	// Kind is HeaderFull or HeaderDelta.
	Kind         string `json:"netintel"`
	SnapshotDate string `json:"snapshot_date"`
	BuildID      string `json:"build_id,omitempty"`
	Audience     string `json:"audience"`
	// Base is the snapshot a delta is against (delta only).
	Base *HeaderBase `json:"base,omitempty"`
	// ContentSHA256 is, in a delta, the SHA-256 of the full NDJSON's
	// uncompressed lines that applying it gives.
	ContentSHA256 string `json:"content_sha256,omitempty"`
}

// HeaderBase names a delta's base snapshot and the SHA-256 of its full
// NDJSON's uncompressed lines.
type HeaderBase struct {
	SnapshotDate  string `json:"snapshot_date"`
	BuildID       string `json:"build_id,omitempty"`
	ContentSHA256 string `json:"content_sha256"`
}

// Name is "DATE" or "DATE (build ID)", for messages.
func (h *FileHeader) Name() string { return snapshotName(h.SnapshotDate, h.BuildID) }

func snapshotName(date, build string) string {
	if build == "" {
		return date
	}
	return date + " (build " + build + ")"
}

// ReadHeader reads the FileHeader of a gzip NDJSON stream; ok is false
// when the header has none (a file recompressed by another tool, or
// published before headers).
func ReadHeader(zr *gzip.Reader) (FileHeader, bool) {
	var h FileHeader
	if zr.Comment == "" || json.Unmarshal([]byte(zr.Comment), &h) != nil || (h.Kind != HeaderFull && h.Kind != HeaderDelta) {
		return FileHeader{}, false
	}
	return h, true
}

func (h FileHeader) comment() string {
	b, _ := json.Marshal(h)
	return string(b)
}

// DeltaBase names the snapshot a build's delta files are against
// (manifest delta_base).
type DeltaBase struct {
	SnapshotDate string `json:"snapshot_date"`
	BuildID      string `json:"build_id,omitempty"`
	// Manifest is the base's manifest key.
	Manifest string `json:"manifest"`
	// GapDays is the number of days between the base and this snapshot
	// that have no snapshot (0: the day before, or the same day).
	GapDays int `json:"gap_days"`
}

// DeltaSource is the previous snapshot's NDJSON of one audience: its
// manifest entry (size and SHA-256 are checked as it is read) and how to
// open it.
type DeltaSource struct {
	File File
	Open func(ctx context.Context) (io.ReadCloser, error)
}

// deltaLine is one NDJSON line of a delta.
type deltaLine struct {
	Op      string          `json:"op"`
	Key     string          `json:"key"`
	Record  json.RawMessage `json:"record,omitempty"`
	Changed []string        `json:"changed,omitempty"`
}

var errBaseOrder = errors.New("base rows are not in key order (a snapshot published before deltas)")

// lineReader reads the lines of a gzip NDJSON stream, hashing the
// compressed bytes (checked against the manifest) and the lines.
type lineReader struct {
	rc      io.ReadCloser
	zr      *gzip.Reader
	br      *bufio.Reader
	raw     hash.Hash // of the compressed bytes (nil: not hashed)
	n       int64
	content hash.Hash // of the uncompressed lines
	long    []byte
}

type countHash struct {
	r io.Reader
	h hash.Hash
	n *int64
}

func (c countHash) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.h != nil {
		c.h.Write(p[:n])
	}
	*c.n += int64(n)
	return n, err
}

// newLineReader reads rc; rawHash also hashes the compressed bytes (not
// needed when the lines' hash is known: the gzip CRC-32 and that check
// every byte).
func newLineReader(rc io.ReadCloser, rawHash bool) (*lineReader, error) {
	lr := &lineReader{rc: rc, content: sha256.New()}
	if rawHash {
		lr.raw = sha256.New()
	}
	zr, err := gzip.NewReader(bufio.NewReaderSize(countHash{rc, lr.raw, &lr.n}, 256<<10))
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("gzip: %w", err)
	}
	lr.zr = zr
	lr.br = bufio.NewReaderSize(zr, 1<<20)
	return lr, nil
}

// next returns the next line without its line end (valid until the next
// call), or io.EOF.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		l.long = append(l.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = l.br.ReadSlice('\n')
			l.long = append(l.long, line...)
		}
		line = l.long
	}
	if err != nil {
		if errors.Is(err, io.EOF) && len(line) > 0 {
			return nil, fmt.Errorf("last line has no line end")
		}
		return nil, err
	}
	l.content.Write(line)
	return line[:len(line)-1], nil
}

func (l *lineReader) close() { l.rc.Close() }

// keyedLine is a base row and its key.
type keyedLine struct {
	key  SortKey
	text string
	line []byte
}

// differ compares the new rows (in key order) with the base's and writes
// the delta: NDJSON lines to a spool file (the gzip header needs the
// content hashes known only at the end), Parquet rows straight to their
// file.
type differ struct {
	ctx       context.Context
	src       DeltaSource
	baseDate  string
	baseBuild string
	dir       string // the work folder: spool and delta files
	base      *lineReader
	cur       keyedLine
	have      bool
	err       error
	spoolF    *os.File
	spool     *bufio.Writer
	enc       *json.Encoder
	pq        *deltaParquetWriter
	pqFile    *hashFile
	rows      int64
	counts    [3]int64 // add, change, remove
	colsA     map[string]json.RawMessage
	colsB     map[string]json.RawMessage
}

func newDiffer(ctx context.Context, src DeltaSource, base *DeltaBase, dir string, pq bool, rowGroup int, codec string) (*differ, error) {
	d := &differ{ctx: ctx, src: src, baseDate: base.SnapshotDate, baseBuild: base.BuildID, dir: dir}
	f, err := os.Create(filepath.Join(dir, "delta-spool-"+src.File.Name))
	if err != nil {
		return nil, fmt.Errorf("delta: %w", err)
	}
	d.spoolF, d.spool = f, bufio.NewWriterSize(f, 256<<10)
	d.enc = json.NewEncoder(d.spool)
	d.enc.SetEscapeHTML(false)
	if pq {
		name := deltaName(FormatParquetDelta, src.File)
		fh, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("delta: %w", err)
		}
		d.pqFile = &hashFile{f: fh, bw: bufio.NewWriterSize(fh, 1<<20), h: sha256.New()}
		if d.pq, err = newDeltaParquetWriter(struct{ io.Writer }{d.pqFile}, rowGroup, codec); err != nil {
			fh.Close()
			f.Close()
			return nil, err
		}
	}
	return d, nil
}

// start opens the base: only when the merge begins, so that no object
// store response sits idle while the state is read.
func (d *differ) start() {
	rc, err := d.src.Open(d.ctx)
	if err != nil {
		d.fail(fmt.Errorf("open base %s: %w", d.src.File.Key, err))
		return
	}
	if d.base, err = newLineReader(rc, d.src.File.ContentSHA256 == ""); err != nil {
		d.fail(fmt.Errorf("read base %s: %w", d.src.File.Key, err))
		return
	}
	d.advance()
}

// deltaName is the file name of a delta format for the audience of the
// full file f (ipintel-delta.ndjson.gz, ipintel-delta-pro.parquet).
func deltaName(format string, f File) string {
	a, ok := ipmodel.ParseAudience(f.Audience)
	if !ok {
		a = ipmodel.AudienceEnterprise
	}
	return AudienceFileName(format, a)
}

func (d *differ) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// advance reads the next base row.
func (d *differ) advance() {
	line, err := d.base.next()
	if errors.Is(err, io.EOF) {
		d.have = false
		return
	}
	if err != nil {
		d.fail(fmt.Errorf("read base %s: %w", d.src.File.Key, err))
		return
	}
	k, text, err := KeyOfLine(line)
	if err != nil {
		d.fail(fmt.Errorf("read base %s: %w", d.src.File.Key, err))
		return
	}
	if d.have && bytes.Compare(k[:], d.cur.key[:]) <= 0 {
		d.fail(fmt.Errorf("base %s: %w", d.src.File.Key, errBaseOrder))
		return
	}
	d.cur = keyedLine{key: k, text: text, line: line}
	d.have = true
}

// next takes the next new row.
func (d *differ) next(k SortKey, line []byte) {
	for d.err == nil && d.have && bytes.Compare(d.cur.key[:], k[:]) < 0 {
		d.emit(OpRemove, d.cur.text, nil, nil)
		d.advance()
	}
	if d.err != nil {
		return
	}
	if d.have && d.cur.key == k {
		if !bytes.Equal(d.cur.line, line) {
			d.emit(OpChange, d.cur.text, line, d.changed(d.cur.line, line))
		}
		d.advance()
		return
	}
	_, text, err := KeyOfLine(line)
	if err != nil {
		d.fail(err)
		return
	}
	d.emit(OpAdd, text, line, nil)
}

// changed names the columns whose JSON differs, in column order.
func (d *differ) changed(a, b []byte) []string {
	clear(d.colsA)
	clear(d.colsB)
	if err := json.Unmarshal(a, &d.colsA); err != nil {
		d.fail(fmt.Errorf("base row: %w", err))
		return nil
	}
	if err := json.Unmarshal(b, &d.colsB); err != nil {
		d.fail(fmt.Errorf("new row: %w", err))
		return nil
	}
	var out []string
	for _, c := range Columns {
		if !bytes.Equal(d.colsA[c], d.colsB[c]) {
			out = append(out, c)
		}
	}
	return out
}

func (d *differ) emit(op, key string, line []byte, changed []string) {
	if d.err != nil {
		return
	}
	if err := d.enc.Encode(deltaLine{Op: op, Key: key, Record: line, Changed: changed}); err != nil {
		d.fail(fmt.Errorf("write delta: %w", err))
		return
	}
	switch op {
	case OpAdd:
		d.counts[0]++
	case OpChange:
		d.counts[1]++
	case OpRemove:
		d.counts[2]++
	}
	d.rows++
	if d.pq == nil {
		return
	}
	var rec *ipmodel.Record
	if line != nil {
		rec = new(ipmodel.Record)
		if err := json.Unmarshal(line, rec); err != nil {
			d.fail(fmt.Errorf("delta parquet: %w", err))
			return
		}
	}
	if err := d.pq.write(op, key, changed, rec); err != nil {
		d.fail(err)
	}
}

// finish drains the base (its remaining rows are removals), checks it
// against its manifest entry and writes the delta files into the work
// folder: the
// NDJSON with hdr (Base.ContentSHA256 filled in here) and the Parquet.
// It returns the files, or the reason there is no delta.
func (d *differ) finish(hdr FileHeader) ([]File, error) {
	dir := d.dir
	defer d.discard()
	if d.base == nil && d.err == nil {
		d.start() // no new rows: every base row is a removal
	}
	for d.err == nil && d.have {
		d.emit(OpRemove, d.cur.text, nil, nil)
		d.advance()
	}
	if d.err == nil {
		// Read to the end: the gzip trailer's CRC and the whole object's checksum.
		if _, err := io.Copy(io.Discard, d.base.zr); err != nil {
			d.fail(fmt.Errorf("read base %s: %w", d.src.File.Key, err))
		} else if d.base.n != d.src.File.Size || (d.base.raw != nil && hex.EncodeToString(d.base.raw.Sum(nil)) != d.src.File.SHA256) {
			d.fail(fmt.Errorf("base %s: %w (%d bytes, want %d)", d.src.File.Key, ErrChecksum, d.base.n, d.src.File.Size))
		} else if d.src.File.ContentSHA256 != "" && hex.EncodeToString(d.base.content.Sum(nil)) != d.src.File.ContentSHA256 {
			d.fail(fmt.Errorf("base %s: content %w", d.src.File.Key, ErrChecksum))
		}
	}
	if d.err == nil {
		d.fail(d.spool.Flush())
	}
	if d.err != nil {
		return nil, d.err
	}
	hdr.Base.ContentSHA256 = hex.EncodeToString(d.base.content.Sum(nil))
	name := deltaName(FormatNDJSONDelta, d.src.File)
	fh, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("delta: %w", err)
	}
	hf := &hashFile{f: fh, bw: bufio.NewWriterSize(fh, 1<<20), h: sha256.New()}
	z := newGzipFile(struct{ io.Writer }{hf}, hdr)
	content := sha256.New()
	if _, err := d.spoolF.Seek(0, io.SeekStart); err != nil {
		hf.Close()
		return nil, fmt.Errorf("delta: %w", err)
	}
	if _, err := io.Copy(io.MultiWriter(z.buf, content), bufio.NewReaderSize(d.spoolF, 256<<10)); err != nil {
		hf.Close()
		return nil, fmt.Errorf("delta: %w", err)
	}
	if err := z.Close(); err != nil {
		hf.Close()
		return nil, fmt.Errorf("delta: %w", err)
	}
	if err := hf.Close(); err != nil {
		return nil, fmt.Errorf("delta: %w", err)
	}
	a := d.src.File.Audience
	aud, _ := ipmodel.ParseAudience(a)
	files := []File{{Name: name, Format: FormatNDJSONDelta, ContentType: ContentType(FormatNDJSONDelta), Size: hf.n, Rows: d.rows,
		SHA256: hex.EncodeToString(hf.h.Sum(nil)), ContentSHA256: hex.EncodeToString(content.Sum(nil)), Audience: a, Tiers: aud.Tiers(),
		Ops: &DeltaOps{Add: d.counts[0], Change: d.counts[1], Remove: d.counts[2]}}}
	if d.pq != nil {
		err := d.pq.close()
		d.pq = nil
		if cerr := d.pqFile.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("delta parquet: %w", err)
		}
		files = append(files, File{Name: deltaName(FormatParquetDelta, d.src.File), Format: FormatParquetDelta, ContentType: ContentType(FormatParquetDelta),
			Size: d.pqFile.n, Rows: d.rows, SHA256: hex.EncodeToString(d.pqFile.h.Sum(nil)), Audience: a, Tiers: aud.Tiers(),
			Ops: &DeltaOps{Add: d.counts[0], Change: d.counts[1], Remove: d.counts[2]}})
	}
	if a == "" {
		for i := range files {
			files[i].Tiers = nil
		}
	}
	return files, nil
}

// discard closes and removes the spool (and, after a failure, the
// Parquet file), and closes the base.
func (d *differ) discard() {
	dir := d.dir
	if d.base != nil {
		d.base.close()
	}
	if d.spoolF != nil {
		d.spoolF.Close()
		os.Remove(d.spoolF.Name())
		d.spoolF = nil
	}
	if d.pq != nil {
		_ = d.pq.close()
		d.pqFile.Close()
		os.Remove(filepath.Join(dir, deltaName(FormatParquetDelta, d.src.File)))
		d.pq = nil
	}
}

// DeltaOps counts a delta's rows by operation.
type DeltaOps struct {
	Add    int64 `json:"add"`
	Change int64 `json:"change"`
	Remove int64 `json:"remove"`
}

// DeltaParquetSchema is the Arrow schema of the delta Parquet: op, key,
// changed (null unless op is change) and record (the full row, with the
// columns of ParquetSchema; null for remove).
var DeltaParquetSchema = arrow.NewSchema([]arrow.Field{
	str("op", false), str("key", false),
	{Name: "changed", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "record", Type: arrow.StructOf(ParquetSchema.Fields()...), Nullable: true},
}, nil)

type deltaParquetWriter struct {
	fw      *pqarrow.FileWriter
	b       *array.RecordBuilder
	pending int
	group   int
}

func newDeltaParquetWriter(w io.Writer, rowGroup int, codec string) (*deltaParquetWriter, error) {
	c, err := parquetCodec(codec)
	if err != nil {
		return nil, err
	}
	if rowGroup <= 0 {
		rowGroup = 65536
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(c), parquet.WithMaxRowGroupLength(int64(rowGroup)),
		parquet.WithDictionaryDefault(true), parquet.WithCreatedBy("netintel"))
	fw, err := pqarrow.NewFileWriter(DeltaParquetSchema, w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, fmt.Errorf("new delta parquet writer: %w", err)
	}
	if err := fw.AppendKeyValueMetadata("netintel.schema_version", ipmodel.SchemaVersion); err != nil {
		return nil, fmt.Errorf("new delta parquet writer: %w", err)
	}
	return &deltaParquetWriter{fw: fw, b: array.NewRecordBuilder(memory.NewGoAllocator(), DeltaParquetSchema), group: rowGroup}, nil
}

func (p *deltaParquetWriter) write(op, key string, changed []string, r *ipmodel.Record) error {
	p.b.Field(0).(*array.StringBuilder).Append(op)
	p.b.Field(1).(*array.StringBuilder).Append(key)
	if op == OpChange {
		appendStrs(p.b.Field(2), changed)
	} else {
		p.b.Field(2).AppendNull()
	}
	sb := p.b.Field(3).(*array.StructBuilder)
	if r == nil {
		sb.AppendNull()
	} else {
		sb.Append(true)
		appendRecordFields(sb.FieldBuilder, r)
	}
	p.pending++
	if p.pending >= p.group {
		return p.flush()
	}
	return nil
}

func (p *deltaParquetWriter) flush() error {
	return flushRowGroup(p.fw, p.b, &p.pending, "delta parquet")
}

func (p *deltaParquetWriter) close() error {
	defer p.b.Release()
	if err := p.flush(); err != nil {
		return err
	}
	if err := p.fw.Close(); err != nil {
		return fmt.Errorf("close delta parquet: %w", err)
	}
	return nil
}
