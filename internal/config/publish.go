package config

import (
	"fmt"
	"slices"
	"time"
)

// PublishFormats are the snapshot formats publish.formats may list.
var PublishFormats = []string{"csv", "ndjson", "parquet", "mmdb"}

// Publish configures the daily snapshot (publish/, docs/config-publish.md).
// The schedule is schedules.snapshot.
type Publish struct {
	// Keep is how many snapshot dates stay in the object store; older
	// ones are deleted after a successful publish.
	Keep int `yaml:"keep"`
	// Formats are the files written, among csv, ndjson, parquet, mmdb.
	Formats []string `yaml:"formats"`
	// WorkDir holds the files while they are built; empty means
	// <data-dir>/tmp, or the system temp folder without a data dir.
	WorkDir string `yaml:"work_dir"`
	// ParquetRowGroupRows is the number of rows per Parquet row group.
	ParquetRowGroupRows int `yaml:"parquet_row_group_rows"`
	// ParquetCompression is zstd, snappy, gzip or none.
	ParquetCompression string `yaml:"parquet_compression"`
	// UploadAttempts is how many times a file is uploaded before the run
	// fails (a failed upload or a checksum mismatch on read-back).
	UploadAttempts int `yaml:"upload_attempts"`
	// RetryBackoff is the wait before the second attempt; it doubles.
	RetryBackoff time.Duration `yaml:"retry_backoff"`
	// Timeout bounds one whole run (build, upload, prune).
	Timeout time.Duration `yaml:"timeout"`
	// RunRetries is how many times a failed scheduled run is run again
	// before the next tick, after RunRetryWait, then twice that, ...
	RunRetries int `yaml:"run_retries"`
	// RunRetryWait is the wait before the first retry of a failed run.
	RunRetryWait time.Duration `yaml:"run_retry_wait"`
	// SupersededGrace is how long a build stays readable after a newer
	// complete build of the same date replaced it (API instances that have
	// not reloaded yet, download links already handed out).
	SupersededGrace time.Duration `yaml:"superseded_grace"`
	// Delta publishes, beside each audience's NDJSON and Parquet, the
	// rows changed since the previous snapshot (docs/snapshot.md).
	Delta bool `yaml:"delta"`
}

func defaultPublish() Publish {
	return Publish{
		Keep:                7,
		Formats:             slices.Clone(PublishFormats),
		ParquetRowGroupRows: 65536,
		ParquetCompression:  "zstd",
		UploadAttempts:      3,
		RetryBackoff:        time.Second,
		Timeout:             time.Hour,
		RunRetries:          3,
		RunRetryWait:        time.Minute,
		SupersededGrace:     24 * time.Hour,
		Delta:               true,
	}
}

func (c *Publish) validate(path string) []error {
	var errs []error
	add := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: %s", path, field, fmt.Sprintf(format, a...)))
	}
	if c.Keep < 1 {
		add("keep", "must be >= 1, got %d", c.Keep)
	}
	if len(c.Formats) == 0 {
		add("formats", "%v: list one or more of %v", errRequired, PublishFormats)
	}
	seen := map[string]bool{}
	for i, f := range c.Formats {
		if !slices.Contains(PublishFormats, f) {
			add(fmt.Sprintf("formats[%d]", i), "must be one of %v, got %q", PublishFormats, f)
		}
		if seen[f] {
			add(fmt.Sprintf("formats[%d]", i), "duplicate %q", f)
		}
		seen[f] = true
	}
	if c.ParquetRowGroupRows < 1024 || c.ParquetRowGroupRows > 16<<20 {
		add("parquet_row_group_rows", "must be 1024..16777216, got %d", c.ParquetRowGroupRows)
	}
	if !slices.Contains([]string{"zstd", "snappy", "gzip", "none"}, c.ParquetCompression) {
		add("parquet_compression", "must be zstd, snappy, gzip or none, got %q", c.ParquetCompression)
	}
	if c.UploadAttempts < 1 || c.UploadAttempts > 20 {
		add("upload_attempts", "must be 1..20, got %d", c.UploadAttempts)
	}
	if c.RetryBackoff < 0 {
		add("retry_backoff", "must be >= 0, got %s", c.RetryBackoff)
	}
	if c.Timeout <= 0 {
		add("timeout", "must be > 0, got %s", c.Timeout)
	}
	if c.RunRetries < 0 || c.RunRetries > 10 {
		add("run_retries", "must be 0..10, got %d", c.RunRetries)
	}
	if c.RunRetries > 0 && c.RunRetryWait < time.Second {
		add("run_retry_wait", "must be >= 1s when run_retries > 0, got %s", c.RunRetryWait)
	}
	if c.SupersededGrace < 0 {
		add("superseded_grace", "must be >= 0, got %s", c.SupersededGrace)
	}
	return errs
}
