package config

import (
	"fmt"
	"time"
)

// Secrets configures the one-time secret service (spec/one-time-secrets.md).
// The spec's fixed limits (body sizes, 4 MiB slices, 1..25 slices, views
// 1..10, expiry up to 30 days) are not configurable: clients depend on them.
// Its keys are described in docs/config-secrets.md.
type Secrets struct {
	// Bucket is the KV bucket holding one record per secret (per-key TTL).
	Bucket string `yaml:"bucket"`
	// UploadsBucket is the KV bucket holding chunked upload state (per-key TTL).
	UploadsBucket string `yaml:"uploads_bucket"`
	// BlobPrefix is the object store key prefix for file ciphertext, large
	// text ciphertext and upload slices.
	BlobPrefix string `yaml:"blob_prefix"`
	// InlineMax is the largest text ciphertext kept inside the KV record;
	// larger ones go to the object store. Capped by the NATS max payload.
	InlineMax int `yaml:"inline_max"`
	// TextRate limits saveSecret per client address.
	TextRate Rate `yaml:"text_rate"`
	// FileRate limits saveFile requests (each slice counts) per client address.
	FileRate Rate `yaml:"file_rate"`
	// ReadRate limits get, getFile and secretStatus per client address.
	ReadRate Rate `yaml:"read_rate"`
	// OpenUploadsPerClient caps the saveFile requests in progress from one
	// client address (429 beyond); 0 = no cap.
	OpenUploadsPerClient int `yaml:"open_uploads_per_client"`
	// OpenUploads caps the saveFile requests in progress in all (503
	// beyond); 0 = no cap.
	OpenUploads int `yaml:"open_uploads"`
	// MinBodyRate is the slowest, in bytes per second, that a saveSecret or
	// saveFile body may arrive; slower bodies are cut off (408). 0 = off.
	MinBodyRate int `yaml:"min_body_rate"`
	// BodyRateWindow is the credit a body starts with and the longest it
	// may fall behind MinBodyRate (or pause).
	BodyRateWindow time.Duration `yaml:"body_rate_window"`
	// UploadIdle discards a chunked upload this long after its last slice.
	UploadIdle time.Duration `yaml:"upload_idle"`
	// UploadMemory is how long a completed upload id answers with its newId.
	UploadMemory time.Duration `yaml:"upload_memory"`
	// FinishStale is how long a request may take to assemble a completed
	// upload before another request may take the job over.
	FinishStale time.Duration `yaml:"finish_stale"`
	// SweepInterval is how often the secrets-sweeper worker removes expired
	// records and orphaned blobs; 0 disables the worker.
	SweepInterval time.Duration `yaml:"sweep_interval"`
	// SweepGrace keeps a blob without a record at least this long (a save
	// writes its blob before its record).
	SweepGrace time.Duration `yaml:"sweep_grace"`
}

// Rate is a per-client token bucket.
type Rate struct {
	// PerMinute is the sustained rate; 0 disables the limit.
	PerMinute float64 `yaml:"per_minute"`
	// Burst is how many requests may come at once.
	Burst int `yaml:"burst"`
}

func defaultSecrets() Secrets {
	return Secrets{
		Bucket:               "secrets",
		UploadsBucket:        "uploads",
		BlobPrefix:           "secrets/",
		InlineMax:            256 << 10,
		TextRate:             Rate{PerMinute: 45, Burst: 10},
		FileRate:             Rate{PerMinute: 120, Burst: 30},
		ReadRate:             Rate{PerMinute: 60, Burst: 15},
		OpenUploadsPerClient: 4,
		OpenUploads:          64,
		MinBodyRate:          4096,
		BodyRateWindow:       20 * time.Second,
		UploadIdle:           time.Hour,
		UploadMemory:         time.Hour,
		FinishStale:          2 * time.Minute,
		SweepInterval:        time.Minute,
		SweepGrace:           10 * time.Minute,
	}
}

func (c *Secrets) validate(path string) []error {
	var errs []error
	add := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: %s", path, field, fmt.Sprintf(format, a...)))
	}
	if c.Bucket == "" || !nameRe.MatchString(c.Bucket) {
		add("bucket", "must be letters, digits, - or _, got %q", c.Bucket)
	}
	if c.UploadsBucket == "" || !nameRe.MatchString(c.UploadsBucket) {
		add("uploads_bucket", "must be letters, digits, - or _, got %q", c.UploadsBucket)
	}
	if c.Bucket != "" && c.Bucket == c.UploadsBucket {
		add("uploads_bucket", "must differ from bucket %q", c.Bucket)
	}
	if c.BlobPrefix == "" || c.BlobPrefix[len(c.BlobPrefix)-1] != '/' || c.BlobPrefix[0] == '/' {
		add("blob_prefix", "must be a relative prefix ending in /, got %q", c.BlobPrefix)
	}
	if c.InlineMax < 0 {
		add("inline_max", "must be >= 0, got %d", c.InlineMax)
	}
	for _, nr := range []struct {
		name string
		r    Rate
	}{{"text_rate", c.TextRate}, {"file_rate", c.FileRate}, {"read_rate", c.ReadRate}} {
		name, r := nr.name, nr.r
		if r.PerMinute < 0 {
			add(name+".per_minute", "must be >= 0, got %g", r.PerMinute)
		}
		if r.PerMinute > 0 && r.Burst < 1 {
			add(name+".burst", "must be >= 1 when per_minute is set, got %d", r.Burst)
		}
	}
	if c.OpenUploadsPerClient < 0 {
		add("open_uploads_per_client", "must be >= 0 (0 = no cap), got %d", c.OpenUploadsPerClient)
	}
	if c.OpenUploads < 0 {
		add("open_uploads", "must be >= 0 (0 = no cap), got %d", c.OpenUploads)
	}
	if c.OpenUploads > 0 && c.OpenUploadsPerClient > c.OpenUploads {
		add("open_uploads_per_client", "must be <= open_uploads (%d), got %d", c.OpenUploads, c.OpenUploadsPerClient)
	}
	if c.MinBodyRate < 0 {
		add("min_body_rate", "must be >= 0 (0 = off), got %d", c.MinBodyRate)
	}
	if c.MinBodyRate > 0 && c.BodyRateWindow < time.Second {
		add("body_rate_window", "must be >= 1s when min_body_rate is set, got %s", c.BodyRateWindow)
	}
	if c.UploadIdle < time.Second {
		add("upload_idle", "must be >= 1s, got %s", c.UploadIdle)
	}
	if c.UploadMemory < time.Second {
		add("upload_memory", "must be >= 1s, got %s", c.UploadMemory)
	}
	if c.FinishStale < time.Second {
		add("finish_stale", "must be >= 1s, got %s", c.FinishStale)
	}
	if c.SweepInterval < 0 {
		add("sweep_interval", "must be >= 0, got %s", c.SweepInterval)
	}
	if c.SweepGrace < time.Second {
		add("sweep_grace", "must be >= 1s, got %s", c.SweepGrace)
	}
	return errs
}
