package publish

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"

	"github.com/netintel/netintel/internal/ipmodel"
)

// formatWriter is one output format: records go in one at a time (never
// held), Close flushes the file.
type formatWriter interface {
	Write(r *ipmodel.Record, p netip.Prefix) error
	Close() error
	Rows() int64
}

var (
	_ formatWriter = (*csvWriter)(nil)
	_ formatWriter = (*ndjsonWriter)(nil)
	_ formatWriter = (*mmdbWriter)(nil)
)

// ListSeparator joins list columns (classifications, sources) in CSV.
const ListSeparator = ";"

// ndAsset is an asset as written in NDJSON and in the CSV assets column:
// ipmodel.Asset with cves always present (an empty list when none), so
// that the key set is the same on every asset.
type ndAsset struct {
	ipmodel.Asset
	Cves []ipmodel.CveFinding `json:"cves"`
}

// ndRecord is one NDJSON line: the columns of Columns in order.
type ndRecord struct {
	IP                 string    `json:"ip"`
	Network            *string   `json:"network"`
	Classifications    []string  `json:"classifications"`
	Provider           *string   `json:"provider"`
	Confidence         float64   `json:"confidence"`
	FirstSeen          string    `json:"first_seen"`
	LastSeen           string    `json:"last_seen"`
	Sources            []string  `json:"sources"`
	IsAnonymous        bool      `json:"is_anonymous"`
	IsAnonymousVPN     bool      `json:"is_anonymous_vpn"`
	IsHostingProvider  bool      `json:"is_hosting_provider"`
	IsPublicProxy      bool      `json:"is_public_proxy"`
	IsResidentialProxy bool      `json:"is_residential_proxy"`
	IsTorExitNode      bool      `json:"is_tor_exit_node"`
	Assets             []ndAsset `json:"assets"`
	// ASN is null when unknown.
	ASN          *uint32               `json:"asn"`
	Attributions []ipmodel.Attribution `json:"attributions"`
	Country      *string               `json:"country"`
	Region       *string               `json:"region"`
	City         *string               `json:"city"`
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func ndAssets(as []ipmodel.Asset) []ndAsset {
	out := make([]ndAsset, len(as))
	for i, a := range as {
		a.EvidenceSources = nonNil(a.EvidenceSources)
		a.Attributions = nonNil(a.Attributions)
		out[i] = ndAsset{Asset: a, Cves: nonNil(a.Cves)}
	}
	return out
}

func toND(r *ipmodel.Record) ndRecord {
	f := Flags(r)
	n := ndRecord{
		IP: r.IP, Classifications: nonNil(r.Classifications), Provider: r.Provider,
		Confidence: r.Confidence, FirstSeen: r.FirstSeen, LastSeen: r.LastSeen, Sources: nonNil(r.Sources),
		IsAnonymous: f[0], IsAnonymousVPN: f[1], IsHostingProvider: f[2], IsPublicProxy: f[3], IsResidentialProxy: f[4], IsTorExitNode: f[5],
		Assets: ndAssets(r.Assets), Attributions: nonNil(r.Attributions),
		Country: r.Country, Region: r.Region, City: r.City,
	}
	if r.ASN != 0 {
		asn := r.ASN
		n.ASN = &asn
	}
	if r.Network != "" {
		nw := r.Network
		n.Network = &nw
	}
	return n
}

// gzipFile is a buffered gzip stream over w.
type gzipFile struct {
	gz  *gzip.Writer
	buf *bufio.Writer
}

// newGzipFile starts a gzip stream; a non-empty header goes into the gzip
// header's comment (FileHeader).
func newGzipFile(w io.Writer, hdr FileHeader) *gzipFile {
	gz, _ := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if hdr.Kind != "" {
		gz.Comment = hdr.comment()
	}
	return &gzipFile{gz: gz, buf: bufio.NewWriterSize(gz, 256<<10)}
}

func (g *gzipFile) Close() error {
	if err := g.buf.Flush(); err != nil {
		return err
	}
	return g.gz.Close()
}

// ndjsonWriter writes gzip-compressed NDJSON, one record per line, in key
// order (SortKey): lines are sorted on disk (lineSorter) and written out
// at Close, which also computes the delta against the previous snapshot
// when there is one (differ). ContentSHA256 is the SHA-256 of the
// uncompressed lines.
type ndjsonWriter struct {
	z       *gzipFile
	line    []byte
	sorter  *lineSorter // nil: lines go out in the order written
	content hash.Hash
	rows    int64

	// The delta, when there is a base (Close fills deltaFiles or deltaErr).
	differ     *differ
	hdr        FileHeader
	deltaFiles []File
	deltaErr   error

	// tentative: an enterprise NDJSON paired with the pro NDJSON
	// (pairMirrors) takes no lines until the first record with Views (a
	// fork, mirror.go), nor any if none comes (it is then a copy).
	tentative bool
}

// ndjsonOptions configure an NDJSON writer.
type ndjsonOptions struct {
	// hdr goes into the gzip header.
	hdr FileHeader
	// sortDir is where sort runs are spilled; "" writes lines unsorted.
	sortDir string
	// sortBuf is the sort buffer in bytes (0 = sortBufBytes).
	sortBuf int
	// differ computes the delta (nil: none).
	differ *differ
}

func newNDJSONWriter(w io.Writer, o ndjsonOptions) *ndjsonWriter {
	n := &ndjsonWriter{z: newGzipFile(w, o.hdr), content: sha256.New(), differ: o.differ, hdr: o.hdr}
	if o.sortDir != "" {
		n.sorter = newLineSorter(o.sortDir, o.sortBuf)
	}
	return n
}

func (n *ndjsonWriter) Write(r *ipmodel.Record, p netip.Prefix) error {
	if n.tentative {
		return nil
	}
	var err error
	if n.line, err = appendNDJSON(n.line[:0], r); err != nil {
		return fmt.Errorf("write ndjson: %w", err)
	}
	n.rows++
	if n.sorter == nil {
		return n.out(n.line, true)
	}
	return n.sorter.add(MakeSortKey(p, r.Network != ""), n.line)
}

// out writes one line; addEOL appends its line end (else line has it).
func (n *ndjsonWriter) out(line []byte, addEOL bool) error {
	n.content.Write(line)
	if _, err := n.z.buf.Write(line); err != nil {
		return fmt.Errorf("write ndjson: %w", err)
	}
	if addEOL {
		eol := [1]byte{'\n'}
		n.content.Write(eol[:])
		return n.z.buf.WriteByte('\n')
	}
	return nil
}

func (n *ndjsonWriter) Close() error {
	if n.tentative {
		return errors.New("close ndjson: a mirror of the pro NDJSON has no lines of its own")
	}
	if n.sorter != nil {
		if n.differ != nil {
			n.differ.start()
		}
		err := n.sorter.each(func(k SortKey, line []byte) error {
			if n.differ != nil {
				n.differ.next(k, line)
			}
			return n.out(line, true)
		})
		if err != nil {
			if n.differ != nil {
				n.differ.discard()
			}
			return fmt.Errorf("close ndjson: %w", err)
		}
	}
	if err := n.z.Close(); err != nil {
		if n.differ != nil {
			n.differ.discard()
		}
		return fmt.Errorf("close ndjson: %w", err)
	}
	if n.differ != nil {
		hdr := n.hdr
		hdr.Kind = HeaderDelta
		hdr.ContentSHA256 = n.ContentSHA256()
		hdr.Base = &HeaderBase{SnapshotDate: n.differ.baseDate, BuildID: n.differ.baseBuild}
		n.deltaFiles, n.deltaErr = n.differ.finish(hdr)
	}
	return nil
}

// ContentSHA256 is the SHA-256 of the lines written (after Close).
func (n *ndjsonWriter) ContentSHA256() string { return hex.EncodeToString(n.content.Sum(nil)) }

func (n *ndjsonWriter) Rows() int64 { return n.rows }

// csvWriter writes gzip-compressed RFC 4180 CSV with a header row. Lists
// of strings are joined with ListSeparator; assets and attributions are
// JSON arrays (the same objects as in NDJSON); a null is an empty field;
// booleans are true or false. Rows are appended to a byte buffer
// (appendCSVField quotes as encoding/csv's Writer with UseCRLF does), not
// built as strings.
type csvWriter struct {
	z    *gzipFile
	row  []byte
	tmp  []byte
	rows int64

	// crc and size of the uncompressed bytes written (the gzip trailer's),
	// handed to an enterprise CSV that forks from this one (rowFork).
	crc  uint32
	size int64
	// tentative: an enterprise CSV paired with the pro CSV (pairMirrors)
	// takes no rows until the first record with Views (a fork), nor any if
	// none comes (it is then a copy of the pro CSV).
	tentative bool
	// cont is the rest of the gzip stream after a fork.
	cont *csvCont
}

func newCSVWriter(w io.Writer) (*csvWriter, error) {
	z := newGzipFile(w, FileHeader{})
	c := &csvWriter{z: z}
	for i, col := range Columns {
		if i > 0 {
			c.row = append(c.row, ',')
		}
		c.row = appendCSVField(c.row, col)
	}
	c.row = append(c.row, '\r', '\n')
	c.crc, c.size = crc32.ChecksumIEEE(c.row), int64(len(c.row))
	if _, err := z.buf.Write(c.row); err != nil {
		return nil, fmt.Errorf("write csv header: %w", err)
	}
	return c, nil
}

func (c *csvWriter) Write(r *ipmodel.Record, _ netip.Prefix) error {
	if c.tentative {
		return nil
	}
	f := Flags(r)
	b := appendCSVField(c.row[:0], r.IP)
	b = append(b, ',')
	b = appendCSVField(b, r.Network)
	b = append(b, ',')
	b = appendCSVList(b, r.Classifications)
	b = append(b, ',')
	b = appendCSVField(b, deref(r.Provider))
	b = append(b, ',')
	b = strconv.AppendFloat(b, r.Confidence, 'f', -1, 64)
	b = append(b, ',')
	b = appendCSVField(b, r.FirstSeen)
	b = append(b, ',')
	b = appendCSVField(b, r.LastSeen)
	b = append(b, ',')
	b = appendCSVList(b, r.Sources)
	for i := range f {
		b = append(b, ',')
		b = strconv.AppendBool(b, f[i])
	}
	b = append(b, ',')
	ok := recordFloatsOK(r)
	var err error
	if ok {
		c.tmp = appendJSONAssets(c.tmp[:0], r.Assets)
	} else if c.tmp, err = appendStdJSON(c.tmp[:0], ndAssets(r.Assets)); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	b = appendCSVField(b, c.tmp)
	b = append(b, ',')
	if r.ASN != 0 {
		b = strconv.AppendUint(b, uint64(r.ASN), 10)
	}
	b = append(b, ',')
	if ok {
		c.tmp = appendJSONAttributions(c.tmp[:0], r.Attributions)
	} else if c.tmp, err = appendStdJSON(c.tmp[:0], nonNil(r.Attributions)); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	b = appendCSVField(b, c.tmp)
	for _, p := range [3]*string{r.Country, r.Region, r.City} {
		b = append(b, ',')
		b = appendCSVField(b, deref(p))
	}
	b = append(b, '\r', '\n')
	c.row = b
	c.crc = crc32.Update(c.crc, crc32.IEEETable, b)
	c.size += int64(len(b))
	out := c.z.buf
	if c.cont != nil {
		out = c.cont.buf
	}
	if _, err := out.Write(b); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	c.rows++
	return nil
}

// appendCSVList appends ss joined by ListSeparator as one field.
func appendCSVList(b []byte, ss []string) []byte {
	switch len(ss) {
	case 0:
		return b
	case 1:
		return appendCSVField(b, ss[0])
	}
	return appendCSVField(b, strings.Join(ss, ListSeparator))
}

// appendCSVField appends one field as encoding/csv's Writer (comma ",",
// UseCRLF) writes it: quoted when it holds a comma, a quote, CR or LF,
// starts with a space, or is \. ; quotes doubled, a line end as CRLF.
func appendCSVField[T string | []byte](b []byte, field T) []byte {
	if !csvNeedsQuotes(field) {
		return append(b, field...)
	}
	b = append(b, '"')
	for i := 0; i < len(field); i++ {
		switch c := field[i]; c {
		case '"':
			b = append(b, '"', '"')
		case '\r':
			// A lone CR is dropped, as encoding/csv does with UseCRLF.
		case '\n':
			b = append(b, '\r', '\n')
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

func csvNeedsQuotes[T string | []byte](field T) bool {
	if len(field) == 0 {
		return false
	}
	if string(field) == `\.` {
		return true
	}
	for i := 0; i < len(field); i++ {
		if c := field[i]; c == '\n' || c == '\r' || c == '"' || c == ',' {
			return true
		}
	}
	if field[0] < utf8.RuneSelf {
		return unicode.IsSpace(rune(field[0]))
	}
	r, _ := utf8.DecodeRuneInString(string(field[:min(len(field), utf8.UTFMax)]))
	return unicode.IsSpace(r)
}

// deref is *p, or "" (a CSV null) for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (c *csvWriter) Close() error {
	if c.tentative {
		return errors.New("close csv: a mirror of the pro CSV has no rows of its own")
	}
	if c.cont != nil {
		return c.cont.close(c.crc, c.size)
	}
	if err := c.z.Close(); err != nil {
		return fmt.Errorf("close csv: %w", err)
	}
	return nil
}

func (c *csvWriter) Rows() int64 { return c.rows }
