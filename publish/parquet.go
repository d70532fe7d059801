package publish

import (
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/netintel/netintel/internal/buildinfo"
	"github.com/netintel/netintel/internal/ipmodel"
)

var _ formatWriter = (*parquetWriter)(nil)

func str(name string, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.BinaryTypes.String, Nullable: nullable}
}

func f64(name string, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64, Nullable: nullable}
}

// ts is a UTC timestamp column (seconds precision in the data, stored
// as microseconds: Parquet TIMESTAMP(MICROS, isAdjustedToUTC=true), what
// DuckDB and pandas read as a UTC timestamp). A
// value that is not RFC 3339 (never written by netintel) is null.
func ts(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true}
}

func strList(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.ListOf(arrow.BinaryTypes.String)}
}

var (
	cveType = arrow.StructOf(
		str("cve_id", false), str("detection_confidence", false), str("source", false),
		f64("severity_score", true), str("severity_rating", true), str("cvss_version", true),
		ts("kev_added_at"), f64("epss_score", true), f64("epss_percentile", true),
		str("euvd_id", true), str("jvn_id", true), str("matched_via", true),
	)
	cveSummaryType = arrow.StructOf(
		arrow.Field{Name: "total_count", Type: arrow.PrimitiveTypes.Int32},
		arrow.Field{Name: "kev_count", Type: arrow.PrimitiveTypes.Int32},
		f64("max_severity_score", true), str("max_severity_rating", true),
		str("eol_status", true), ts("last_computed_at"),
	)
	attributionType = arrow.StructOf(
		str("org_name", false), str("signal_source", false),
		f64("signal_confidence", false), ts("observed_at"),
	)
	assetType = arrow.StructOf(
		arrow.Field{Name: "port", Type: arrow.PrimitiveTypes.Int32},
		str("protocol_family", false), str("vendor", true), str("product", true),
		str("version_band", true), str("version_precision", true), str("exact_version", true),
		str("confidence_band", false), strList("evidence_sources"),
		ts("first_seen"), ts("last_seen"),
		arrow.Field{Name: "attributions", Type: arrow.ListOf(attributionType)},
		arrow.Field{Name: "cve_summary", Type: cveSummaryType, Nullable: true},
		arrow.Field{Name: "cves", Type: arrow.ListOf(cveType)},
	)
)

// nestedTimePaths are the Parquet column paths of the timestamp columns
// inside lists and structs, whose chunks may hold nulls alone.
var nestedTimePaths = []string{
	"assets.list.element.first_seen", "assets.list.element.last_seen",
	"assets.list.element.attributions.list.element.observed_at",
	"assets.list.element.cve_summary.last_computed_at",
	"assets.list.element.cves.list.element.kev_added_at",
	"attributions.list.element.observed_at",
}

// ParquetSchema is the Arrow schema of the Parquet file; its columns are
// Columns, with assets, attributions and CVE findings as nested lists of
// structs, and times as UTC timestamps.
var ParquetSchema = arrow.NewSchema([]arrow.Field{
	str("ip", false), str("network", true), strList("classifications"), str("provider", true),
	f64("confidence", false), ts("first_seen"), ts("last_seen"), strList("sources"),
	{Name: FlagAnonymous, Type: arrow.FixedWidthTypes.Boolean},
	{Name: FlagAnonymousVPN, Type: arrow.FixedWidthTypes.Boolean},
	{Name: FlagHostingProvider, Type: arrow.FixedWidthTypes.Boolean},
	{Name: FlagPublicProxy, Type: arrow.FixedWidthTypes.Boolean},
	{Name: FlagResidentialProxy, Type: arrow.FixedWidthTypes.Boolean},
	{Name: FlagTorExitNode, Type: arrow.FixedWidthTypes.Boolean},
	{Name: "assets", Type: arrow.ListOf(assetType)},
	{Name: "asn", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "attributions", Type: arrow.ListOf(attributionType)},
	str("country", true), str("region", true), str("city", true),
}, nil)

// parquetCodec maps a config name to a Parquet compression codec.
func parquetCodec(name string) (compress.Compression, error) {
	switch name {
	case "", "zstd":
		return compress.Codecs.Zstd, nil
	case "snappy":
		return compress.Codecs.Snappy, nil
	case "gzip":
		return compress.Codecs.Gzip, nil
	case "none":
		return compress.Codecs.Uncompressed, nil
	}
	return compress.Codecs.Uncompressed, fmt.Errorf("unknown parquet compression %q", name)
}

// parquetWriter writes the rows in the byte order of their ip column
// (what ORDER BY ip gives), so that the row groups' min/max statistics of
// ip never overlap and a reader skips every row group but one on
// ip = '...'. The build emits ranges, then hosts, each in the state's
// order: Write hands each record to a sortSpool (an external merge sort in
// a temp file of dir, memory bounded); Close appends the records in order
// to an Arrow record builder, writing one row group each time rowGroup
// rows are buffered.
type parquetWriter struct {
	fw       *pqarrow.FileWriter
	b        *array.RecordBuilder
	rowGroup int
	pending  int
	rows     int64
	sorted   *sortSpool
}

func newParquetWriter(w io.Writer, dir string, rowGroup int, codec string) (*parquetWriter, error) {
	c, err := parquetCodec(codec)
	if err != nil {
		return nil, err
	}
	if rowGroup <= 0 {
		rowGroup = 65536
	}
	opts := []parquet.WriterProperty{
		parquet.WithCompression(c),
		parquet.WithMaxRowGroupLength(int64(rowGroup)),
		parquet.WithDictionaryDefault(true),
		parquet.WithCreatedBy(buildinfo.CreatedBy()),
	}
	// No min/max statistics on the nested time columns: for a column
	// chunk of nulls alone (a row group whose assets have no CVE summary)
	// Arrow 17 writes out-of-range ones that DuckDB refuses to read back.
	// The record's first_seen and last_seen, never null, keep theirs.
	for _, p := range nestedTimePaths {
		opts = append(opts, parquet.WithStatsFor(p, false))
	}
	props := parquet.NewWriterProperties(opts...)
	fw, err := pqarrow.NewFileWriter(ParquetSchema, w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, fmt.Errorf("new parquet writer: %w", err)
	}
	if err := fw.AppendKeyValueMetadata("netintel.schema_version", ipmodel.SchemaVersion); err != nil {
		return nil, fmt.Errorf("new parquet writer: %w", err)
	}
	sorted, err := newSortSpool(dir)
	if err != nil {
		return nil, fmt.Errorf("new parquet writer: %w", err)
	}
	return &parquetWriter{fw: fw, b: array.NewRecordBuilder(memory.NewGoAllocator(), ParquetSchema), rowGroup: rowGroup,
		sorted: sorted}, nil
}

// appendTime appends an RFC 3339 time, or null for one that does not parse.
func appendTime(b array.Builder, s string) {
	tb := b.(*array.TimestampBuilder)
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		tb.AppendNull()
		return
	}
	tb.Append(arrow.Timestamp(t.UnixMicro()))
}

func appendOptTime(b array.Builder, p *string) {
	if p == nil {
		b.AppendNull()
		return
	}
	appendTime(b, *p)
}

func appendOptStr(b array.Builder, p *string) {
	sb := b.(*array.StringBuilder)
	if p == nil {
		sb.AppendNull()
	} else {
		sb.Append(*p)
	}
}

func appendOptF64(b array.Builder, p *float64) {
	fb := b.(*array.Float64Builder)
	if p == nil {
		fb.AppendNull()
	} else {
		fb.Append(*p)
	}
}

func appendStrs(b array.Builder, ss []string) {
	lb := b.(*array.ListBuilder)
	lb.Append(true)
	vb := lb.ValueBuilder().(*array.StringBuilder)
	for _, s := range ss {
		vb.Append(s)
	}
}

// Write spools r; rows are written in order by Close.
func (p *parquetWriter) Write(r *ipmodel.Record, _ netip.Prefix) error {
	if err := p.sorted.Add(r); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	p.rows++
	return nil
}

// append adds one row, writing a row group when rowGroup rows are buffered.
func (p *parquetWriter) append(r *ipmodel.Record) error {
	appendRecordFields(p.b.Field, r)
	p.pending++
	if p.pending >= p.rowGroup {
		return p.flush()
	}
	return nil
}

// appendRecordFields appends r to the builders of ParquetSchema's columns
// (field(i) is column i's): the rows of a RecordBuilder, or the fields of
// a StructBuilder of the same columns (the delta's record).
func appendRecordFields(field func(int) array.Builder, r *ipmodel.Record) {
	field(0).(*array.StringBuilder).Append(r.IP)
	if r.Network == "" {
		field(1).AppendNull()
	} else {
		field(1).(*array.StringBuilder).Append(r.Network)
	}
	appendStrs(field(2), r.Classifications)
	appendOptStr(field(3), r.Provider)
	field(4).(*array.Float64Builder).Append(r.Confidence)
	appendTime(field(5), r.FirstSeen)
	appendTime(field(6), r.LastSeen)
	appendStrs(field(7), r.Sources)
	for i, set := range Flags(r) {
		field(8 + i).(*array.BooleanBuilder).Append(set)
	}
	al := field(14).(*array.ListBuilder)
	al.Append(true)
	ab := al.ValueBuilder().(*array.StructBuilder)
	for i := range r.Assets {
		appendAsset(ab, &r.Assets[i])
	}
	if r.ASN == 0 {
		field(15).AppendNull()
	} else {
		field(15).(*array.Uint32Builder).Append(r.ASN)
	}
	appendAttributions(field(16).(*array.ListBuilder), r.Attributions)
	appendOptStr(field(17), r.Country)
	appendOptStr(field(18), r.Region)
	appendOptStr(field(19), r.City)
}

func appendAsset(ab *array.StructBuilder, a *ipmodel.Asset) {
	ab.Append(true)
	ab.FieldBuilder(0).(*array.Int32Builder).Append(int32(a.Port))
	ab.FieldBuilder(1).(*array.StringBuilder).Append(a.ProtocolFamily)
	appendOptStr(ab.FieldBuilder(2), a.Vendor)
	appendOptStr(ab.FieldBuilder(3), a.Product)
	appendOptStr(ab.FieldBuilder(4), a.VersionBand)
	appendOptStr(ab.FieldBuilder(5), a.VersionPrecision)
	appendOptStr(ab.FieldBuilder(6), a.ExactVersion)
	ab.FieldBuilder(7).(*array.StringBuilder).Append(a.ConfidenceBand)
	appendStrs(ab.FieldBuilder(8), a.EvidenceSources)
	appendTime(ab.FieldBuilder(9), a.FirstSeen)
	appendTime(ab.FieldBuilder(10), a.LastSeen)
	appendAttributions(ab.FieldBuilder(11).(*array.ListBuilder), a.Attributions)
	sb := ab.FieldBuilder(12).(*array.StructBuilder)
	if s := a.CveSummary; s == nil {
		sb.AppendNull()
	} else {
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(clampU32(s.TotalCount) & 0x7fffffff))
		sb.FieldBuilder(1).(*array.Int32Builder).Append(int32(clampU32(s.KevCount) & 0x7fffffff))
		appendOptF64(sb.FieldBuilder(2), s.MaxSeverityScore)
		appendOptStr(sb.FieldBuilder(3), s.MaxSeverityRating)
		appendOptStr(sb.FieldBuilder(4), s.EolStatus)
		appendOptTime(sb.FieldBuilder(5), s.LastComputedAt)
	}
	cl := ab.FieldBuilder(13).(*array.ListBuilder)
	cl.Append(true)
	cb := cl.ValueBuilder().(*array.StructBuilder)
	for i := range a.Cves {
		c := &a.Cves[i]
		cb.Append(true)
		cb.FieldBuilder(0).(*array.StringBuilder).Append(c.CveID)
		cb.FieldBuilder(1).(*array.StringBuilder).Append(c.DetectionConfidence)
		cb.FieldBuilder(2).(*array.StringBuilder).Append(c.Source)
		appendOptF64(cb.FieldBuilder(3), c.SeverityScore)
		appendOptStr(cb.FieldBuilder(4), c.SeverityRating)
		appendOptStr(cb.FieldBuilder(5), c.CvssVersion)
		appendOptTime(cb.FieldBuilder(6), c.KevAddedAt)
		appendOptF64(cb.FieldBuilder(7), c.EpssScore)
		appendOptF64(cb.FieldBuilder(8), c.EpssPercentile)
		appendOptStr(cb.FieldBuilder(9), c.EuvdID)
		appendOptStr(cb.FieldBuilder(10), c.JvnID)
		appendOptStr(cb.FieldBuilder(11), c.MatchedVia)
	}
}

// appendAttributions appends one list of attributions (empty for none).
func appendAttributions(atl *array.ListBuilder, as []ipmodel.Attribution) {
	atl.Append(true)
	atb := atl.ValueBuilder().(*array.StructBuilder)
	for _, at := range as {
		atb.Append(true)
		atb.FieldBuilder(0).(*array.StringBuilder).Append(at.OrgName)
		atb.FieldBuilder(1).(*array.StringBuilder).Append(at.SignalSource)
		atb.FieldBuilder(2).(*array.Float64Builder).Append(at.SignalConfidence)
		appendTime(atb.FieldBuilder(3), at.ObservedAt)
	}
}

// flush writes the buffered rows as one row group.
func (p *parquetWriter) flush() error {
	return flushRowGroup(p.fw, p.b, &p.pending, "parquet")
}

// flushRowGroup writes the *pending rows built in b to fw as one row group
// (nothing when there are none) and resets the count; what names the file
// in the error.
func flushRowGroup(fw *pqarrow.FileWriter, b *array.RecordBuilder, pending *int, what string) error {
	if *pending == 0 {
		return nil
	}
	rec := b.NewRecord()
	defer rec.Release()
	*pending = 0
	if err := fw.Write(rec); err != nil {
		return fmt.Errorf("write %s row group: %w", what, err)
	}
	return nil
}

func (p *parquetWriter) Close() error {
	defer p.b.Release()
	defer p.sorted.Close()
	if err := p.sorted.Each(p.append); err != nil {
		return err
	}
	if err := p.flush(); err != nil {
		return err
	}
	if err := p.fw.Close(); err != nil {
		return fmt.Errorf("close parquet: %w", err)
	}
	return nil
}

func (p *parquetWriter) Rows() int64 { return p.rows }
