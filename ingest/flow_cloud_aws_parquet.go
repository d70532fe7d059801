package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// parquetMagic starts (and ends) every Parquet file.
var parquetMagic = []byte("PAR1")

// isParquet reports whether br starts with Parquet's magic number.
func isParquet(br *bufio.Reader) bool {
	b, _ := br.Peek(len(parquetMagic))
	return bytes.Equal(b, parquetMagic)
}

// awsFlowParquet reads VPC Flow Logs delivered to S3 as Parquet: one
// column per field of the flow log's format, named as the fields with
// underscores (srcaddr, pkt_srcaddr, log_status), a row a record. Rows
// are read in batches; a row is reported as its "line" (1 = the first
// row). A file the Parquet reader cannot open fails whole.
func awsFlowParquet(r io.Reader, src string, opt Options, emit Emit, bad func(LineError)) (err error) {
	data, err := readJSONFeed(r, "aws vpc flow logs parquet")
	if err != nil {
		return err
	}
	defer func() {
		// The Parquet reader panics on some damaged files: a damaged file
		// is an error, not a crash.
		if p := recover(); p != nil {
			err = fmt.Errorf("read aws vpc flow logs parquet: damaged file: %v", p)
		}
	}()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("read aws vpc flow logs parquet: %w", err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("read aws vpc flow logs parquet: %w", err)
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return fmt.Errorf("read aws vpc flow logs parquet: %w", err)
	}
	defer rr.Release()
	names := make([]string, 0, rr.Schema().NumFields())
	for _, f := range rr.Schema().Fields() {
		names = append(names, f.Name)
	}
	layout := newAWSFlowLayout(names)
	if layout.lacks != "" {
		return fmt.Errorf("read aws vpc flow logs parquet: the format has no %s: its records name no flow to infer", layout.lacks)
	}
	row := 0
	fields := make([]string, len(names))
	for rr.Next() {
		rec := rr.Record()
		for i := 0; i < int(rec.NumRows()); i++ {
			row++
			for c := range fields {
				col := rec.Column(c)
				if col.IsNull(i) {
					fields[c] = awsAbsent
				} else {
					fields[c] = col.ValueStr(i)
				}
			}
			if err := awsFlowEmit(row, fields, time.Time{}, layout, src, opt, emit, bad); err != nil {
				return err
			}
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read aws vpc flow logs parquet: row %d: %w", row+1, err)
	}
	return nil
}
