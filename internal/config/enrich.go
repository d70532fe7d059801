package config

import (
	"fmt"
	"net/url"
	"strings"
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
	// Shards is how many KV buckets the state is spread over by address
	// hash: 1 keeps it in Bucket itself, N > 1 in Bucket-0ofN ..
	// Bucket-(N-1)ofN (ShardBucket), each created with Bucket's declared
	// settings. Changing it on a state that holds data takes `netintel
	// state reshard --to N`.
	Shards int `yaml:"shards"`
	// ShardPlacement places the shard buckets' streams: shard i takes
	// entry i mod len (none: the declared bucket's placement, else the
	// server's choice).
	ShardPlacement []Placement `yaml:"shard_placement"`
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
	// EOL is netintel's own end-of-life table (YAML), for products
	// endoflife.date does not cover.
	EOL string `yaml:"eol"`
	// EndOfLife are endoflife.date release data, one file per product: the
	// repository's products/<name>.md, the API's /api/<name>.json (v0) or
	// /api/v1/products/<name>/ (v1); or folders of them.
	EndOfLife []string `yaml:"endoflife"`
	// EndOfLifeCPE maps an endoflife.date product name to the CPE products
	// (cpe:2.3:part:vendor:product) its cycles apply to, over the built-in
	// map (enrich.EndOfLifeCPE).
	EndOfLifeCPE map[string][]string `yaml:"endoflife_cpe"`
	// EUVD are ENISA EU Vulnerability Database files giving CVE -> EUVD id:
	// the /api/dump/cve-euvd-mapping CSV or /api/search, /api/enisaid and
	// /api/kev/dump JSON responses.
	EUVD []string `yaml:"euvd"`
	// JVN are JVN iPedia RSS 1.0 files with mod_sec (the jvndb RSS feeds,
	// MyJVN getVulnOverviewList) giving CVE -> JVNDB id.
	JVN []string `yaml:"jvn"`
	// NVDAPI reads the NVD CVE API 2.0 page by page; nil = off.
	NVDAPI *NVDAPI `yaml:"nvd_api"`
	// ASN are IP-to-ASN tables (iptoasn.com's ip2asn-v4.tsv, -v6.tsv or
	// -combined.tsv, plain or compressed): every published record is
	// attributed to the AS that announces its address.
	ASN []string `yaml:"asn"`
	// Schedule is when catalogs are reloaded and assets re-scored; "off" disables it.
	Schedule string `yaml:"schedule"`
	// FetchTimeout bounds one download.
	FetchTimeout time.Duration `yaml:"fetch_timeout"`
}

// NVDAPI configures the NVD CVE API 2.0 reader. Its records are loaded
// after the nvd files, and replace the records of the same CVE.
type NVDAPI struct {
	// URL is the API endpoint.
	URL string `yaml:"url"`
	// Query holds extra query parameters (cpeName, hasKev, ...).
	Query map[string]string `yaml:"query"`
	// ResultsPerPage is the page size, 1..2000.
	ResultsPerPage int `yaml:"results_per_page"`
	// APIKeyEnv names the environment variable holding the API key, sent
	// as the apiKey header; an unset or empty variable sends none.
	APIKeyEnv string `yaml:"api_key_env"`
	// Delay is the pause between requests; 0 = NVD's advice: 6s without
	// a key, 0.6s with one.
	Delay time.Duration `yaml:"delay"`
	// ModifiedWithin, when set, asks only for CVEs modified in this
	// window before the load (lastModStartDate/lastModEndDate), at most
	// 120 days: an incremental update over the yearly feeds.
	ModifiedWithin time.Duration `yaml:"modified_within"`
	// Retries is how many times a page is asked again after a 403, 429 or
	// 5xx answer or a network error.
	Retries int `yaml:"retries"`
}

// DefaultNVDAPI is the NVD API configuration a bare `nvd_api: {}` gets.
var DefaultNVDAPI = NVDAPI{
	URL: "https://services.nvd.nist.gov/rest/json/cves/2.0", ResultsPerPage: 2000,
	APIKeyEnv: "NVD_API_KEY", Retries: 3,
}

// UnmarshalYAML starts from DefaultNVDAPI.
func (n *NVDAPI) UnmarshalYAML(unmarshal func(any) error) error {
	*n = DefaultNVDAPI
	type plain NVDAPI
	return unmarshal((*plain)(n))
}

func defaultEnrich() Enrich {
	return Enrich{
		Workers: 4, BatchSize: 256, MaxFailures: 5, Bucket: "ipstate", Shards: 1, CacheMB: 256,
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
	if c.Shards < 1 || c.Shards > MaxShards {
		add(path+".shards", "must be 1..%d, got %d (changing it on a state with data: netintel state reshard --to N)", MaxShards, c.Shards)
	}
	for i, pl := range c.ShardPlacement {
		if pl.Cluster == "" && len(pl.Tags) == 0 {
			add(fmt.Sprintf("%s.shard_placement[%d]", path, i), "needs tags or a cluster")
		}
		for j, tag := range pl.Tags {
			if strings.TrimSpace(tag) == "" {
				add(fmt.Sprintf("%s.shard_placement[%d].tags[%d]", path, i, j), "empty tag")
			}
		}
	}
	if c.CacheMB < 0 || c.CacheMB > 1<<20 {
		add(path+".cache_mb", "must be 0..1048576 (MiB), got %d", c.CacheMB)
	}
	if c.RetentionDays < 1 {
		add(path+".retention_days", "must be >= 1, got %d", c.RetentionDays)
	}
	for _, f := range []struct{ p, spec string }{{path + ".age_schedule", c.AgeSchedule}, {path + ".catalog.schedule", c.Catalog.Schedule}} {
		if p, spec := f.p, f.spec; spec != "" && spec != "off" {
			if _, err := schedule.Parse(spec); err != nil {
				add(p, "bad cron expression %q: %v", spec, err)
			}
		}
	}
	if c.Catalog.FetchTimeout <= 0 {
		add(path+".catalog.fetch_timeout", "must be > 0")
	}
	for _, name := range sortedKeys(c.Catalog.EndOfLifeCPE) {
		for i, cpe := range c.Catalog.EndOfLifeCPE[name] {
			if !cpeProductRe.MatchString(cpe) {
				add(fmt.Sprintf("%s.catalog.endoflife_cpe.%s[%d]", path, name, i), "want cpe:2.3:part:vendor:product, got %q", cpe)
			}
		}
	}
	if n := c.Catalog.NVDAPI; n != nil {
		p := path + ".catalog.nvd_api"
		if u, err := url.Parse(n.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add(p+".url", "want an http(s) URL, got %q", n.URL)
		}
		if n.ResultsPerPage < 1 || n.ResultsPerPage > 2000 {
			add(p+".results_per_page", "must be 1..2000, got %d", n.ResultsPerPage)
		}
		if n.Delay < 0 {
			add(p+".delay", "must be >= 0")
		}
		if n.ModifiedWithin < 0 || n.ModifiedWithin > 120*24*time.Hour {
			add(p+".modified_within", "must be 0..2880h (NVD allows 120 days), got %s", n.ModifiedWithin)
		}
		if n.Retries < 0 || n.Retries > 10 {
			add(p+".retries", "must be 0..10, got %d", n.Retries)
		}
	}
	return errs
}

// MaxShards bounds enrich.shards: every shard is a stream (and, under
// R3, three Raft groups' worth of server work).
const MaxShards = 64

// Placement places a stream on the nodes of a cluster: Cluster names the
// cluster, Tags the server tags (nats-server's server_tags) every node
// holding a replica must have.
type Placement struct {
	Cluster string   `yaml:"cluster"`
	Tags    []string `yaml:"tags"`
}

// ShardBucket is the bucket of shard i of n of the state bucket: bucket
// itself when n is 1, else bucket-<i>of<n> (ipstate-0of4 ..
// ipstate-3of4). The count in the name keeps two layouts of one state
// apart while `netintel state reshard` copies one into the other.
func ShardBucket(bucket string, i, n int) string {
	if n <= 1 {
		return bucket
	}
	return fmt.Sprintf("%s-%dof%d", bucket, i, n)
}

// StateMetaBucket is the bucket that records the state's layout (its
// shard count) and a reshard in progress.
func StateMetaBucket(bucket string) string { return bucket + "-meta" }

// StateShards returns the buckets of the enrich state spread over n
// shards, each with the declared state bucket's settings, and shard i
// placed by enrich.shard_placement[i mod len] when that is set.
func (c *Config) StateShards(n int) []KVBucket {
	decl := c.KVDecl(c.Enrich.Bucket)
	n = max(n, 1)
	out := make([]KVBucket, n)
	for i := range n {
		k := decl
		k.Bucket = ShardBucket(c.Enrich.Bucket, i, n)
		if n > 1 {
			k.Description = fmt.Sprintf("%s, shard %d of %d (by address hash)", KVDescription(decl), i, n)
		}
		if p := c.Enrich.ShardPlacement; len(p) > 0 {
			pl := p[i%len(p)]
			k.Placement = &pl
		}
		out[i] = k
	}
	return out
}
