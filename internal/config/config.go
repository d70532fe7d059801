// Package config loads and validates pipeline.yaml, the one configuration file
// of netintel.
//
// Loading starts from Default(), decodes strictly (an unknown key is an error
// with its field path and line), expands ${VAR} and ${VAR:-default} from the
// environment in scalar values only (never in comments or keys), and then
// Validate reports every remaining problem at once, each on one line.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Config is the whole of pipeline.yaml.
type Config struct {
	// NATS is the connection to the backbone: an embedded server or external URLs.
	NATS NATS `yaml:"nats"`
	// Streams are the JetStream streams created idempotently at start.
	Streams []Stream `yaml:"streams"`
	// Consumers are the durable consumers created idempotently at start.
	Consumers []Consumer `yaml:"consumers"`
	// KV are the key-value buckets created idempotently at start.
	KV []KVBucket `yaml:"kv"`
	// ObjectStore is where published files live.
	ObjectStore ObjectStore `yaml:"object_store"`
	// Schedules maps a job name to its cron expression.
	Schedules map[string]string `yaml:"schedules"`
	// API is the HTTP side: listen addresses and the internal key.
	API API `yaml:"api"`
	// Ingest configures the feed adapters.
	Ingest Ingest `yaml:"ingest"`
	// Enrich configures the enrich workers and CVE catalogs.
	Enrich Enrich `yaml:"enrich"`
	// Publish configures the daily snapshot.
	Publish Publish `yaml:"publish"`
	// Probe configures the TLD RDAP/WHOIS check.
	Probe Probe `yaml:"probe"`
	// Secrets configures the one-time secret service.
	Secrets Secrets `yaml:"secrets"`
	// Gateway configures customer keys, tiers, rate limits and quotas.
	Gateway Gateway `yaml:"gateway"`
	// Console configures the operator web console at /console/.
	Console Console `yaml:"console"`
}

// NATS is the backbone connection.
type NATS struct {
	// Embedded runs a nats-server inside the process when enabled.
	Embedded Embedded `yaml:"embedded"`
	// URLs of an external NATS cluster; used when Embedded.Enabled is false.
	URLs []string `yaml:"urls"`
	// CredsFile is a NATS .creds file (JWT + nkey) for external servers.
	CredsFile string `yaml:"creds_file"`
	// User and Password authenticate against external servers.
	User     string `yaml:"user"`
	Password string `yaml:"password"`
	// Token authenticates against external servers.
	Token string `yaml:"token"`
	// ConnectTimeout bounds a single connection attempt.
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// ConnectWait is how long a role keeps retrying an unreachable NATS at start; 0 = forever.
	ConnectWait time.Duration `yaml:"connect_wait"`
}

// Embedded configures the in-process nats-server.
type Embedded struct {
	Enabled bool `yaml:"enabled"`
	// StoreDir holds JetStream data; empty means <data-dir>/nats.
	StoreDir string `yaml:"store_dir"`
	// Host to listen on for NATS clients.
	Host string `yaml:"host"`
	// Port for NATS clients; 0 picks any free port.
	Port int `yaml:"port"`
	// MaxMemory and MaxStore bound JetStream (bytes); 0 = server default.
	MaxMemory int64 `yaml:"max_memory"`
	MaxStore  int64 `yaml:"max_store"`
}

// Stream declares a JetStream stream.
type Stream struct {
	Name     string        `yaml:"name"`
	Subjects []string      `yaml:"subjects"`
	Replicas int           `yaml:"replicas"`
	Storage  string        `yaml:"storage"` // file or memory
	MaxAge   time.Duration `yaml:"max_age"`
	MaxBytes int64         `yaml:"max_bytes"`
	// Retention is limits, workqueue or interest.
	Retention string `yaml:"retention"`
	// Duplicates is the message-id deduplication window.
	Duplicates time.Duration `yaml:"duplicates"`
	// MaxMsgsPerSubject keeps the last N messages per subject; 0 = unlimited.
	MaxMsgsPerSubject int64 `yaml:"max_msgs_per_subject"`
	// Description is what `nats stream ls` shows; empty takes the
	// built-in one of a stream of that name (Descriptions).
	Description string `yaml:"description"`
}

// Consumer declares a durable pull consumer.
type Consumer struct {
	Stream        string        `yaml:"stream"`
	Name          string        `yaml:"name"`
	FilterSubject string        `yaml:"filter_subject"`
	AckWait       time.Duration `yaml:"ack_wait"`
	MaxDeliver    int           `yaml:"max_deliver"`
	MaxAckPending int           `yaml:"max_ack_pending"`
	Replicas      int           `yaml:"replicas"`
	// Partitions, when above 0, adds that many consumers NAME-00,
	// NAME-01, ... beside NAME, with the same settings, the i-th taking
	// the messages of FilterSubject with one more token, the partition
	// (PartitionSubject); NAME keeps the messages without one.
	Partitions int `yaml:"partitions"`
	// Description is what `nats consumer ls` shows; empty takes the
	// built-in one (Descriptions).
	Description string `yaml:"description"`
}

// ObservationPartitions is the number of partitions ingest spreads
// observations over by their address (obs.<type>.<source>.<00-03>), so
// that every observation of one address goes to the one enrich worker
// that holds the partition. It is part of the subject scheme, fixed.
// Each partition is a consumer, and the server writes every busy
// consumer's state file ten times a second: with 16 partitions those
// writes cost a sixth of the pipeline's rate in BenchmarkPipeline
// (docs/BENCHMARKS.md), so four, which also bounds the enrich processes
// that share the work at four.
const ObservationPartitions = 4

// PartitionToken is the subject token of partition p.
func PartitionToken(p int) string {
	const digits = "0123456789"
	return string([]byte{digits[p/10%10], digits[p%10]})
}

// PartitionConsumer is the name of partition p of consumer name.
func PartitionConsumer(name string, p int) string { return name + "-" + PartitionToken(p) }

// PartitionSubject is the filter subject of partition p of a consumer
// filtering filter.
func PartitionSubject(filter string, p int) string { return filter + "." + PartitionToken(p) }

// KVBucket declares a JetStream key-value bucket.
type KVBucket struct {
	Bucket   string        `yaml:"bucket"`
	Replicas int           `yaml:"replicas"`
	History  int           `yaml:"history"`
	TTL      time.Duration `yaml:"ttl"`
	Storage  string        `yaml:"storage"`
	// PerKeyTTL allows a TTL on single keys (needs nats-server 2.11+).
	PerKeyTTL bool `yaml:"per_key_ttl"`
	// Placement, when set, places the bucket's stream by cluster and
	// server tags.
	Placement *Placement `yaml:"placement"`
	// Description is what `nats kv ls` shows; empty takes the built-in
	// one (Descriptions).
	Description string `yaml:"description"`
}

// ObjectStore selects and configures the object store.
type ObjectStore struct {
	// Type is "file" (a local folder) or "s3".
	Type string `yaml:"type"`
	File File   `yaml:"file"`
	S3   S3     `yaml:"s3"`
}

// File is the folder object store.
type File struct {
	// Dir is the root folder; empty means <data-dir>/objects.
	Dir string `yaml:"dir"`
}

// S3 is an S3-compatible object store reached through minio-go.
type S3 struct {
	Endpoint  string `yaml:"endpoint"` // host:port, no scheme
	Bucket    string `yaml:"bucket"`
	Region    string `yaml:"region"`
	AccessKey string `yaml:"access_key"`
	SecretKey string `yaml:"secret_key"`
	// TLS uses https to the endpoint.
	TLS bool `yaml:"tls"`
	// CAFile trusts an extra CA for the endpoint's certificate.
	CAFile string `yaml:"ca_file"`
	// InsecureSkipVerify disables certificate checks (tests only).
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
	// PartSize is the multipart part size in bytes (default 16 MiB).
	PartSize uint64 `yaml:"part_size"`
	// PresignTTL is how long a presigned download link is valid.
	PresignTTL time.Duration `yaml:"presign_ttl"`
}

// API configures the HTTP listeners.
type API struct {
	// Listen is the address every product answers on unless split below.
	Listen string `yaml:"listen"`
	// Listeners optionally moves a product to its own address: keys ip, gateway, tld, secrets.
	Listeners map[string]string `yaml:"listeners"`
	// InternalKey is the shared secret the gateway sends as X-Internal-Key.
	InternalKey string `yaml:"internal_key"`
	// PublicURL is the externally visible base URL (for links in responses).
	PublicURL string `yaml:"public_url"`
	// ShutdownTimeout bounds the graceful stop of in-flight requests.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// TrustProxyHeaders takes the client address from X-Forwarded-For.
	TrustProxyHeaders bool `yaml:"trust_proxy_headers"`
}

// Products names the keys allowed in API.Listeners.
var Products = []string{"ip", "gateway", "tld", "secrets", "console"}

// Load reads, expands, decodes and validates the file at path.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err := Parse(b, path)
	if err != nil {
		return nil, err
	}
	cfg.resolveInputs(filepath.Dir(path))
	return cfg, nil
}

// Parse decodes and validates a config document; name is used in messages.
func Parse(b []byte, name string) (*Config, error) {
	cfg := Default()
	// Report every problem at once: unknown keys, type errors and invalid values.
	if err := errors.Join(decodeStrict(b, cfg), cfg.Validate()); err != nil {
		return nil, prefixErrors(name, err)
	}
	return cfg, nil
}

func prefixErrors(name string, err error) error {
	var lines []string
	for _, e := range unjoin(err) {
		lines = append(lines, name+": "+e.Error())
	}
	return &Error{Lines: lines}
}

// Error is every problem found in a config file, one per line.
type Error struct{ Lines []string }

func (e *Error) Error() string { return strings.Join(e.Lines, "\n") }

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unjoin(e)...)
		}
		return out
	}
	return []error{err}
}

// Replicas returns the stream, consumer or bucket replica count, at least 1.
func Replicas(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

// StreamByName finds a declared stream.
func (c *Config) StreamByName(name string) (Stream, bool) {
	for _, s := range c.Streams {
		if s.Name == name {
			return s, true
		}
	}
	return Stream{}, false
}

// KVByName finds a declared bucket.
func (c *Config) KVByName(name string) (KVBucket, bool) {
	for _, k := range c.KV {
		if k.Bucket == name {
			return k, true
		}
	}
	return KVBucket{}, false
}

// KVDecl returns bucket name as pipeline.yaml declares it, else as the
// defaults do, else a one-record bucket of that name: a bucket the system
// needs (apikeys, usage, ratelimits, jobstatus) is created as declared even
// from a file written before the bucket existed.
func (c *Config) KVDecl(name string) KVBucket {
	if k, ok := c.KVByName(name); ok {
		return k
	}
	if k, ok := Default().KVByName(name); ok {
		return k
	}
	return KVBucket{Bucket: name, Replicas: 1, History: 1}
}

// ListenFor returns the listen address of a product (ip, gateway, tld, secrets).
func (c *Config) ListenFor(product string) string {
	if a, ok := c.API.Listeners[product]; ok && a != "" {
		return a
	}
	return c.API.Listen
}

var errRequired = errors.New("required value missing")
