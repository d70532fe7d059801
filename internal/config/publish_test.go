package config

import (
	"errors"
	"strings"
	"testing"
)

func TestPublish_Validate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Publish)
		want []string
	}{
		{"defaults", func(*Publish) {}, nil},
		{"keep zero", func(p *Publish) { p.Keep = 0 }, []string{"publish.keep: must be >= 1"}},
		{"unknown format", func(p *Publish) { p.Formats = []string{"csv", "xlsx"} }, []string{"publish.formats[1]: must be one of"}},
		{"duplicate format", func(p *Publish) { p.Formats = []string{"mmdb", "mmdb"} }, []string{"publish.formats[1]: duplicate"}},
		{"no formats", func(p *Publish) { p.Formats = nil }, []string{"publish.formats: required"}},
		{"everything wrong", func(p *Publish) {
			p.ParquetRowGroupRows = 10
			p.ParquetCompression = "lz4"
			p.UploadAttempts = 0
			p.RetryBackoff = -1
			p.Timeout = 0
		}, []string{"publish.parquet_row_group_rows", "publish.parquet_compression", "publish.upload_attempts", "publish.retry_backoff", "publish.timeout"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := defaultPublish()
			tc.edit(&p)
			errs := p.validate("publish")
			if len(errs) != len(tc.want) {
				t.Fatalf("errors = %v, want %d", errs, len(tc.want))
			}
			if len(errs) == 0 {
				return
			}
			msg := errors.Join(errs...).Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("errors %q lack %q", msg, w)
				}
			}
		})
	}
}

func TestPublish_Load(t *testing.T) {
	c, err := Load("../../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Publish.Keep != 7 || len(c.Publish.Formats) != 4 || c.Publish.ParquetCompression != "zstd" {
		t.Fatalf("publish = %+v", c.Publish)
	}
}
