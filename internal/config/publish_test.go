package config

import (
	"errors"
	"strings"
	"testing"
	"time"
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
		{"retries negative", func(p *Publish) { p.RunRetries = -1 }, []string{"publish.run_retries: must be 0..10, got -1"}},
		{"retries too many", func(p *Publish) { p.RunRetries = 11 }, []string{"publish.run_retries: must be 0..10, got 11"}},
		{"retry wait too short", func(p *Publish) { p.RunRetryWait = 0 }, []string{"publish.run_retry_wait: must be >= 1s when run_retries > 0, got 0s"}},
		{"no retries, no wait", func(p *Publish) { p.RunRetries, p.RunRetryWait = 0, 0 }, nil},
		{"negative superseded grace", func(p *Publish) { p.SupersededGrace = -time.Second }, []string{"publish.superseded_grace: must be >= 0, got -1s"}},
		{"superseded builds deleted at the next run", func(p *Publish) { p.SupersededGrace = 0 }, nil},
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
	if c.Publish.Keep != 7 || len(c.Publish.Formats) != 4 || c.Publish.ParquetCompression != "zstd" || c.Publish.RunRetries != 3 || c.Publish.RunRetryWait != time.Minute {
		t.Fatalf("publish = %+v", c.Publish)
	}
}
