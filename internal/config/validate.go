package config

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"

	"github.com/netintel/netintel/internal/schedule"
)

var nameRe = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// cpeProductRe is a CPE 2.3 product prefix: cpe:2.3:part:vendor:product.
var cpeProductRe = regexp.MustCompile(`^cpe:2\.3:[aoh]:[^:]+:[^:]+$`)

// Validate reports every problem in c at once, one error per problem, each
// naming the field path.
func (c *Config) Validate() error {
	var errs []error
	add := func(path, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, a...)))
	}
	if !c.NATS.Embedded.Enabled && len(c.NATS.URLs) == 0 {
		add("nats.urls", "%v: set nats.urls or enable nats.embedded", errRequired)
	}
	if c.NATS.Embedded.Port < 0 || c.NATS.Embedded.Port > 65535 {
		add("nats.embedded.port", "must be 0..65535, got %d", c.NATS.Embedded.Port)
	}
	for i, u := range c.NATS.URLs {
		if !strings.Contains(u, "://") {
			add(fmt.Sprintf("nats.urls[%d]", i), "must be a URL like nats://host:4222, got %q", u)
		}
	}
	streams := map[string]bool{}
	for i, s := range c.Streams {
		p := fmt.Sprintf("streams[%d]", i)
		if s.Name == "" || !nameRe.MatchString(s.Name) {
			add(p+".name", "must be letters, digits, - or _, got %q", s.Name)
		}
		if streams[s.Name] {
			add(p+".name", "duplicate stream %q", s.Name)
		}
		streams[s.Name] = true
		if len(s.Subjects) == 0 {
			add(p+".subjects", "%v", errRequired)
		}
		if s.Replicas < 0 || s.Replicas > 5 {
			add(p+".replicas", "must be 1..5, got %d", s.Replicas)
		}
		if !slices.Contains([]string{"", "file", "memory"}, s.Storage) {
			add(p+".storage", "must be file or memory, got %q", s.Storage)
		}
		if !slices.Contains([]string{"", "limits", "workqueue", "interest"}, s.Retention) {
			add(p+".retention", "must be limits, workqueue or interest, got %q", s.Retention)
		}
	}
	for i, k := range c.Consumers {
		p := fmt.Sprintf("consumers[%d]", i)
		if !streams[k.Stream] {
			add(p+".stream", "names no declared stream: %q", k.Stream)
		}
		if k.Name == "" || !nameRe.MatchString(k.Name) {
			add(p+".name", "must be letters, digits, - or _, got %q", k.Name)
		}
		if k.MaxDeliver < 0 {
			add(p+".max_deliver", "must be >= 0")
		}
		if k.Partitions < 0 || k.Partitions > 100 {
			add(p+".partitions", "must be 0..100, got %d", k.Partitions)
		}
		if k.Partitions > 0 && k.FilterSubject == "" {
			add(p+".filter_subject", "is required with partitions (the partitions filter it with one more token)")
		}
		// Ingest publishes each observation to the partition of its
		// address; a different layout would leave some unconsumed.
		if k.Stream == "OBSERVATIONS" && k.Name == "enrich" && (k.Partitions != ObservationPartitions || k.FilterSubject != "obs.*.*") {
			add(p, "the enrich consumer must have filter_subject \"obs.*.*\" and partitions %d (ingest publishes to obs.<type>.<source>.<00-%02d>), got %q and %d",
				ObservationPartitions, ObservationPartitions-1, k.FilterSubject, k.Partitions)
		}
	}
	buckets := map[string]bool{}
	for i, k := range c.KV {
		p := fmt.Sprintf("kv[%d]", i)
		if k.Bucket == "" || !nameRe.MatchString(k.Bucket) {
			add(p+".bucket", "must be letters, digits, - or _, got %q", k.Bucket)
		}
		if buckets[k.Bucket] {
			add(p+".bucket", "duplicate bucket %q", k.Bucket)
		}
		buckets[k.Bucket] = true
		if k.Replicas < 0 || k.Replicas > 5 {
			add(p+".replicas", "must be 1..5, got %d", k.Replicas)
		}
		if k.History < 0 || k.History > 64 {
			add(p+".history", "must be 1..64, got %d", k.History)
		}
		// The enrich state is one record per key, read by walks that take
		// each key's last record; a walk whose consumer nats.go re-creates
		// resumes by sequence and would meet older records too.
		if k.Bucket == c.Enrich.Bucket && k.History > 1 {
			add(p+".history", "the enrich state bucket %q keeps one record per key: must be 1, got %d", k.Bucket, k.History)
		}
	}
	switch c.ObjectStore.Type {
	case "file":
	case "s3":
		s := c.ObjectStore.S3
		if s.Endpoint == "" {
			add("object_store.s3.endpoint", "%v", errRequired)
		} else if strings.Contains(s.Endpoint, "://") {
			add("object_store.s3.endpoint", "must be host:port without a scheme (use tls: true for https), got %q", s.Endpoint)
		}
		if s.Bucket == "" {
			add("object_store.s3.bucket", "%v", errRequired)
		}
		if s.AccessKey == "" {
			add("object_store.s3.access_key", "%v", errRequired)
		}
		if s.SecretKey == "" {
			add("object_store.s3.secret_key", "%v", errRequired)
		}
	default:
		add("object_store.type", "must be file or s3, got %q", c.ObjectStore.Type)
	}
	for name, expr := range c.Schedules {
		if expr == "off" {
			continue
		}
		if _, err := schedule.Parse(expr); err != nil {
			add("schedules."+name, "bad cron expression %q: %v", expr, err)
		}
	}
	if _, _, err := net.SplitHostPort(c.API.Listen); err != nil {
		add("api.listen", "must be host:port, got %q", c.API.Listen)
	}
	for k, v := range c.API.Listeners {
		if !slices.Contains(Products, k) {
			add("api.listeners."+k, "unknown product; use one of %s", strings.Join(Products, ", "))
		}
		if _, _, err := net.SplitHostPort(v); err != nil {
			add("api.listeners."+k, "must be host:port, got %q", v)
		}
	}
	errs = append(errs, c.Ingest.validate("ingest")...)
	errs = append(errs, c.Enrich.validate("enrich")...)
	errs = append(errs, c.Publish.validate("publish")...)
	errs = append(errs, c.Probe.validate("probe")...)
	errs = append(errs, c.Secrets.validate("secrets")...)
	errs = append(errs, c.Gateway.validate("gateway")...)
	errs = append(errs, c.Console.validate("console")...)
	return errors.Join(errs...)
}
