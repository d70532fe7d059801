package publish

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"net/netip"
	"strconv"
	"strings"

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
	line    bytes.Buffer
	enc     *json.Encoder
	sorter  *lineSorter // nil: lines go out in the order written
	content hash.Hash
	rows    int64

	// The delta, when there is a base (Close fills deltaFiles or deltaErr).
	differ     *differ
	hdr        FileHeader
	deltaFiles []File
	deltaErr   error
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
	n.enc = json.NewEncoder(&n.line)
	n.enc.SetEscapeHTML(false)
	if o.sortDir != "" {
		n.sorter = newLineSorter(o.sortDir, o.sortBuf)
	}
	return n
}

func (n *ndjsonWriter) Write(r *ipmodel.Record, p netip.Prefix) error {
	n.line.Reset()
	if err := n.enc.Encode(toND(r)); err != nil {
		return fmt.Errorf("write ndjson: %w", err)
	}
	n.rows++
	if n.sorter == nil {
		return n.out(n.line.Bytes(), false)
	}
	b := n.line.Bytes()
	return n.sorter.add(MakeSortKey(p, r.Network != ""), b[:len(b)-1])
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
// booleans are true or false.
type csvWriter struct {
	z    *gzipFile
	cw   *csv.Writer
	row  []string
	sb   *strings.Builder
	enc  *json.Encoder
	rows int64
}

func newCSVWriter(w io.Writer) (*csvWriter, error) {
	z := newGzipFile(w, FileHeader{})
	cw := csv.NewWriter(z.buf)
	cw.UseCRLF = true // RFC 4180 line breaks
	if err := cw.Write(Columns); err != nil {
		return nil, fmt.Errorf("write csv header: %w", err)
	}
	sb := &strings.Builder{}
	enc := json.NewEncoder(sb)
	enc.SetEscapeHTML(false)
	return &csvWriter{z: z, cw: cw, row: make([]string, len(Columns)), sb: sb, enc: enc}, nil
}

func (c *csvWriter) Write(r *ipmodel.Record, _ netip.Prefix) error {
	f := Flags(r)
	row := c.row
	row[0] = r.IP
	row[1] = r.Network
	row[2] = strings.Join(r.Classifications, ListSeparator)
	row[3] = ""
	if r.Provider != nil {
		row[3] = *r.Provider
	}
	row[4] = strconv.FormatFloat(r.Confidence, 'f', -1, 64)
	row[5] = r.FirstSeen
	row[6] = r.LastSeen
	row[7] = strings.Join(r.Sources, ListSeparator)
	for i := range f {
		row[8+i] = strconv.FormatBool(f[i])
	}
	var err error
	if row[14], err = c.json(ndAssets(r.Assets)); err != nil {
		return err
	}
	row[15] = ""
	if r.ASN != 0 {
		row[15] = strconv.FormatUint(uint64(r.ASN), 10)
	}
	if row[16], err = c.json(nonNil(r.Attributions)); err != nil {
		return err
	}
	row[17], row[18], row[19] = deref(r.Country), deref(r.Region), deref(r.City)
	if err := c.cw.Write(row); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	c.rows++
	return nil
}

// json returns v as JSON, without the encoder's line end.
func (c *csvWriter) json(v any) (string, error) {
	c.sb.Reset()
	if err := c.enc.Encode(v); err != nil {
		return "", fmt.Errorf("write csv: %w", err)
	}
	return strings.TrimSuffix(c.sb.String(), "\n"), nil
}

// deref is *p, or "" (a CSV null) for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (c *csvWriter) Close() error {
	c.cw.Flush()
	if err := c.cw.Error(); err != nil {
		return fmt.Errorf("close csv: %w", err)
	}
	if err := c.z.Close(); err != nil {
		return fmt.Errorf("close csv: %w", err)
	}
	return nil
}

func (c *csvWriter) Rows() int64 { return c.rows }
