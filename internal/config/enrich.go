package config

import (
	"fmt"
	"time"

	"github.com/netintel/netintel/internal/schedule"
)

// Enrich configures the enrich workers, the current-state bucket and the
// CVE catalogs. Its keys are described in pipeline.yaml and
// docs/config-ingest.md.
type Enrich struct {
	// Workers is the number of loops an `enrich` worker process runs on
	// each consumer it reads: the enrich consumer and each partition it
	// holds.
	Workers int `yaml:"workers"`
	// BatchSize is how many observations one loop fetches and stores at once.
	BatchSize int `yaml:"batch_size"`
	// MaxFailures dead-letters an observation after this many failed
	// deliveries (at most the enrich consumer's max_deliver).
	MaxFailures int `yaml:"max_failures"`
	// Bucket is the KV bucket of the current state (declared under kv).
	Bucket string `yaml:"bucket"`
	// CacheMB bounds, in MiB, the per-process cache of stored state
	// records (kept as stored, about 0.5 KiB an address); 0 disables it.
	CacheMB int `yaml:"cache_mb"`
	// RetentionDays ages out records and assets not seen for this many days.
	RetentionDays int `yaml:"retention_days"`
	// AgeSchedule is when the age-out sweep runs; "off" disables it.
	AgeSchedule string `yaml:"age_schedule"`
	// Rules is a fingerprint rules file; empty uses the built-in rules.
	Rules string `yaml:"rules"`
	// Catalog locates the CVE catalogs.
	Catalog Catalog `yaml:"catalog"`
}

// Catalog locates the CVE catalogs: each value is a local path or an
// http(s) URL. NVD entries may also be folders of CVE JSON files.
type Catalog struct {
	// NVD are NVD CVE API 2.0 JSON files (one record or an API response) or folders of them.
	NVD []string `yaml:"nvd"`
	// KEV is the CISA known exploited vulnerabilities catalog (JSON).
	KEV string `yaml:"kev"`
	// EPSS is the FIRST EPSS scores CSV (with its #model_version line).
	EPSS string `yaml:"epss"`
	// EOL is the end-of-life table (YAML).
	EOL string `yaml:"eol"`
	// ASN are IP-to-ASN tables (iptoasn.com's ip2asn-v4.tsv, -v6.tsv or
	// -combined.tsv, plain or compressed): every published record is
	// attributed to the AS that announces its address.
	ASN []string `yaml:"asn"`
	// Schedule is when catalogs are reloaded and assets re-scored; "off" disables it.
	Schedule string `yaml:"schedule"`
	// FetchTimeout bounds one download.
	FetchTimeout time.Duration `yaml:"fetch_timeout"`
}

func defaultEnrich() Enrich {
	return Enrich{
		Workers: 4, BatchSize: 256, MaxFailures: 5, Bucket: "ipstate", CacheMB: 256,
		RetentionDays: 30, AgeSchedule: "@every 1h",
		Catalog: Catalog{Schedule: "@every 24h", FetchTimeout: 2 * time.Minute},
	}
}

func (c *Enrich) validate(path string) []error {
	var errs []error
	add := func(p, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", p, fmt.Sprintf(format, a...)))
	}
	if c.Workers < 1 || c.Workers > 64 {
		add(path+".workers", "must be 1..64, got %d", c.Workers)
	}
	if c.BatchSize < 1 || c.BatchSize > 10000 {
		add(path+".batch_size", "must be 1..10000, got %d", c.BatchSize)
	}
	if c.MaxFailures < 1 {
		add(path+".max_failures", "must be >= 1, got %d", c.MaxFailures)
	}
	if c.Bucket == "" || !nameRe.MatchString(c.Bucket) {
		add(path+".bucket", "must be letters, digits, - or _, got %q", c.Bucket)
	}
	if c.CacheMB < 0 || c.CacheMB > 1<<20 {
		add(path+".cache_mb", "must be 0..1048576 (MiB), got %d", c.CacheMB)
	}
	if c.RetentionDays < 1 {
		add(path+".retention_days", "must be >= 1, got %d", c.RetentionDays)
	}
	for p, spec := range map[string]string{path + ".age_schedule": c.AgeSchedule, path + ".catalog.schedule": c.Catalog.Schedule} {
		if spec != "" && spec != "off" {
			if _, err := schedule.Parse(spec); err != nil {
				add(p, "bad cron expression %q: %v", spec, err)
			}
		}
	}
	if c.Catalog.FetchTimeout <= 0 {
		add(path+".catalog.fetch_timeout", "must be > 0")
	}
	return errs
}
