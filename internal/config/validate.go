package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/netintel/netintel/internal/schedule"
)

var nameRe = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// MaxDuplicates bounds a stream's message-id de-duplication window.
const MaxDuplicates = 24 * time.Hour

// cpeProductRe is a CPE 2.3 product prefix: cpe:2.3:part:vendor:product.
var cpeProductRe = regexp.MustCompile(`^cpe:2\.3:[aoh]:[^:]+:[^:]+$`)

// Validate reports every problem in c at once, one error per problem, each
// naming the field path, in a stable order (map-valued sections by key).
// It holds every rule a command checks before it starts, the rules across
// sections included, so that `netintel validate` refuses what `netintel
// run` would.
func (c *Config) Validate() error {
	var v validator
	c.validateNATS(&v)
	streams := c.validateStreams(&v)
	c.validateConsumers(&v, streams)
	c.validateKV(&v)
	c.validateObjectStore(&v)
	for _, name := range sortedKeys(c.Schedules) {
		if expr := c.Schedules[name]; expr != "off" {
			if _, err := schedule.Parse(expr); err != nil {
				v.add("schedules."+name, "bad cron expression %q: %v", expr, err)
			}
		}
	}
	c.validateAPI(&v)
	c.validateAcross(&v)
	v.errs = append(v.errs, c.Ingest.validate("ingest")...)
	v.errs = append(v.errs, c.Enrich.validate("enrich")...)
	v.errs = append(v.errs, c.Publish.validate("publish")...)
	v.errs = append(v.errs, c.Probe.validate("probe")...)
	v.errs = append(v.errs, c.Secrets.validate("secrets")...)
	v.errs = append(v.errs, c.Gateway.validate("gateway")...)
	v.errs = append(v.errs, c.Console.validate("console")...)
	return errors.Join(v.errs...)
}

// validator collects problems, each with its field path.
type validator struct{ errs []error }

func (v *validator) add(path, format string, a ...any) {
	v.errs = append(v.errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, a...)))
}

// sortedKeys returns m's keys in order, so that problems found in a map
// come out in the same order every time.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func (c *Config) validateNATS(v *validator) {
	if !c.NATS.Embedded.Enabled && len(c.NATS.URLs) == 0 {
		v.add("nats.urls", "%v: set nats.urls or enable nats.embedded", errRequired)
	}
	if c.NATS.Embedded.Port < 0 || c.NATS.Embedded.Port > 65535 {
		v.add("nats.embedded.port", "must be 0..65535, got %d", c.NATS.Embedded.Port)
	}
	for i, u := range c.NATS.URLs {
		if !strings.Contains(u, "://") {
			v.add(fmt.Sprintf("nats.urls[%d]", i), "must be a URL like nats://host:4222, got %q", u)
		}
	}
}

// validateStreams checks the declared streams and returns their names.
func (c *Config) validateStreams(v *validator) map[string]bool {
	streams := map[string]bool{}
	for i, s := range c.Streams {
		p := fmt.Sprintf("streams[%d]", i)
		if s.Name == "" || !nameRe.MatchString(s.Name) {
			v.add(p+".name", "must be letters, digits, - or _, got %q", s.Name)
		}
		if streams[s.Name] {
			v.add(p+".name", "duplicate stream %q", s.Name)
		}
		streams[s.Name] = true
		if len(s.Subjects) == 0 {
			v.add(p+".subjects", "%v", errRequired)
		}
		if s.Replicas < 0 || s.Replicas > 5 {
			v.add(p+".replicas", "must be 1..5, got %d", s.Replicas)
		}
		if !slices.Contains([]string{"", "file", "memory"}, s.Storage) {
			v.add(p+".storage", "must be file or memory, got %q", s.Storage)
		}
		if !slices.Contains([]string{"", "limits", "workqueue", "interest"}, s.Retention) {
			v.add(p+".retention", "must be limits, workqueue or interest, got %q", s.Retention)
		}
		// The server keeps every message id of the window in memory
		// (docs/ingest-enrich.md, "De-duplication memory"): the window
		// is what bounds it.
		if s.Duplicates < 0 || s.Duplicates > MaxDuplicates {
			v.add(p+".duplicates", "must be 0..%s (the server holds every message id of the window in memory; 0 = its default 2m), got %s", MaxDuplicates, s.Duplicates)
		} else if s.MaxAge > 0 && s.Duplicates > s.MaxAge {
			v.add(p+".duplicates", "%s is longer than max_age %s", s.Duplicates, s.MaxAge)
		} else if s.Name == EnrichStream && s.Duplicates > 0 && s.Duplicates < MinObservationDuplicates {
			v.add(p+".duplicates", "must be at least %s (ingest sends an unacknowledged observation again for up to 2m15s; a shorter window stores it twice), got %s", MinObservationDuplicates, s.Duplicates)
		}
	}
	return streams
}

func (c *Config) validateConsumers(v *validator, streams map[string]bool) {
	for i, k := range c.Consumers {
		p := fmt.Sprintf("consumers[%d]", i)
		if !streams[k.Stream] {
			v.add(p+".stream", "names no declared stream: %q", k.Stream)
		}
		if k.Name == "" || !nameRe.MatchString(k.Name) {
			v.add(p+".name", "must be letters, digits, - or _, got %q", k.Name)
		}
		if k.MaxDeliver < 0 {
			v.add(p+".max_deliver", "must be >= 0")
		}
		if k.Partitions < 0 || k.Partitions > 100 {
			v.add(p+".partitions", "must be 0..100, got %d", k.Partitions)
		}
		if k.Partitions > 0 && k.FilterSubject == "" {
			v.add(p+".filter_subject", "is required with partitions (the partitions filter it with one more token)")
		}
		// Ingest publishes each observation to the partition of its
		// address; a different layout would leave some unconsumed.
		if k.Stream == "OBSERVATIONS" && k.Name == "enrich" && (k.Partitions != ObservationPartitions || k.FilterSubject != "obs.*.*") {
			v.add(p, "the enrich consumer must have filter_subject \"obs.*.*\" and partitions %d (ingest publishes to obs.<type>.<source>.<00-%02d>), got %q and %d",
				ObservationPartitions, ObservationPartitions-1, k.FilterSubject, k.Partitions)
		}
	}
}

func (c *Config) validateKV(v *validator) {
	buckets := map[string]bool{}
	for i, k := range c.KV {
		p := fmt.Sprintf("kv[%d]", i)
		if k.Bucket == "" || !nameRe.MatchString(k.Bucket) {
			v.add(p+".bucket", "must be letters, digits, - or _, got %q", k.Bucket)
		}
		if buckets[k.Bucket] {
			v.add(p+".bucket", "duplicate bucket %q", k.Bucket)
		}
		buckets[k.Bucket] = true
		if k.Replicas < 0 || k.Replicas > 5 {
			v.add(p+".replicas", "must be 1..5, got %d", k.Replicas)
		}
		if k.History < 0 || k.History > 64 {
			v.add(p+".history", "must be 1..64, got %d", k.History)
		}
		if pl := k.Placement; pl != nil && pl.Cluster == "" && len(pl.Tags) == 0 {
			v.add(p+".placement", "needs tags or a cluster")
		}
		// The enrich state is one record per key, read by walks that take
		// each key's last record; a walk whose consumer nats.go re-creates
		// resumes by sequence and would meet older records too.
		if k.Bucket == c.Enrich.Bucket && k.History > 1 {
			v.add(p+".history", "the enrich state bucket %q keeps one record per key: must be 1, got %d", k.Bucket, k.History)
		}
	}
}

func (c *Config) validateObjectStore(v *validator) {
	switch c.ObjectStore.Type {
	case "file":
	case "s3":
		s := c.ObjectStore.S3
		if s.Endpoint == "" {
			v.add("object_store.s3.endpoint", "%v", errRequired)
		} else if strings.Contains(s.Endpoint, "://") {
			v.add("object_store.s3.endpoint", "must be host:port without a scheme (use tls: true for https), got %q", s.Endpoint)
		}
		if s.Bucket == "" {
			v.add("object_store.s3.bucket", "%v", errRequired)
		}
		if s.AccessKey == "" {
			v.add("object_store.s3.access_key", "%v", errRequired)
		}
		if s.SecretKey == "" {
			v.add("object_store.s3.secret_key", "%v", errRequired)
		}
	default:
		v.add("object_store.type", "must be file or s3, got %q", c.ObjectStore.Type)
	}
}

func (c *Config) validateAPI(v *validator) {
	if _, _, err := net.SplitHostPort(c.API.Listen); err != nil {
		v.add("api.listen", "must be host:port, got %q", c.API.Listen)
	}
	for _, k := range sortedKeys(c.API.Listeners) {
		if !slices.Contains(Products, k) {
			v.add("api.listeners."+k, "unknown product; use one of %s", strings.Join(Products, ", "))
		}
		if _, _, err := net.SplitHostPort(c.API.Listeners[k]); err != nil {
			v.add("api.listeners."+k, "must be host:port, got %q", c.API.Listeners[k])
		}
	}
}

// DefaultObservationDuplicates is the OBSERVATIONS stream's message-id
// dedupe window when pipeline.yaml does not set one. The server keeps
// every id of the window in memory (about 100 bytes of heap each, twice
// that in RSS: docs/benchmarks/scale.md), so the window costs the ingest
// rate times its length: 10 minutes at 10,000 observations/s is 6 million
// ids, where the 2 hours before were 72 million. It covers ingest's
// resends with room to spare; a feed read again after the window is stored
// again, and applying it again leaves the state as it was.
const DefaultObservationDuplicates = 10 * time.Minute

// MinObservationDuplicates is the shortest dedupe window validation takes
// for OBSERVATIONS: ingest (bus.Publisher) sends an unacknowledged
// observation again for up to 2 minutes after a 15 s acknowledgement wait,
// and a window shorter than that span would store a resend twice.
const MinObservationDuplicates = 5 * time.Minute

// EnrichStream and EnrichConsumer name the stream and consumer the enrich
// worker reads (package enrich uses the same names).
const (
	EnrichStream   = "OBSERVATIONS"
	EnrichConsumer = "enrich"
)

// validateAcross checks the rules that tie one section to another: the
// enrich state bucket must be declared, and enrich.max_failures (the
// deliveries after which the worker dead-letters an observation) must not
// exceed the enrich consumer's max_deliver, or the server would drop the
// observation before the worker could dead-letter it.
func (c *Config) validateAcross(v *validator) {
	if c.Enrich.Bucket != "" && nameRe.MatchString(c.Enrich.Bucket) {
		if _, ok := c.KVByName(c.Enrich.Bucket); !ok {
			v.add("enrich.bucket", "names no declared kv bucket: %q", c.Enrich.Bucket)
		}
	}
	for _, k := range c.Consumers {
		if k.Stream == EnrichStream && k.Name == EnrichConsumer && k.MaxDeliver > 0 && c.Enrich.MaxFailures > k.MaxDeliver {
			v.add("enrich.max_failures", "%d is above the enrich consumer's max_deliver %d", c.Enrich.MaxFailures, k.MaxDeliver)
		}
	}
}
