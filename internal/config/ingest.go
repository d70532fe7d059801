package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/netintel/netintel/internal/schedule"
)

// IngestFormats are the feed formats `netintel ingest --format` and
// ingest.sources[].format accept.
var IngestFormats = []string{"tor-exits", "aws-ranges", "gcp-ranges", "cidr-list", "observations", "goflow2", "nfdump-csv"}

// IngestFormatHelp is a one-line description of each of IngestFormats,
// for `netintel ingest --help`.
var IngestFormatHelp = map[string]string{
	"tor-exits":    "Tor exit-addresses list",
	"aws-ranges":   "AWS ip-ranges.json",
	"gcp-ranges":   "Google Cloud cloud.json",
	"cidr-list":    "one IP or CIDR a line (needs --kind)",
	"observations": "NDJSON in netintel's own observation format",
	"goflow2":      "goflow2 JSON flow lines; protocol inferred per flow",
	"nfdump-csv":   "nfdump -o csv output (1.6 to 1.7.x); protocol inferred per flow",
}

// IngestKinds are the classifications a cidr-list source may claim.
var IngestKinds = []string{"vpn", "proxy", "tor", "relay", "hosting", "cdn", "residential_proxy"}

// Ingest configures the feed adapters. Its keys are described in
// pipeline.yaml and docs/config-ingest.md.
type Ingest struct {
	// Sources are the feeds fetched on their own cron schedule.
	Sources []IngestSource `yaml:"sources"`
	// FetchTimeout bounds one download of a feed URL.
	FetchTimeout time.Duration `yaml:"fetch_timeout"`
	// MaxLineBytes is the longest accepted line of a line-based feed.
	MaxLineBytes int `yaml:"max_line_bytes"`
	// MaxInFlight bounds unacknowledged asynchronous publishes.
	MaxInFlight int `yaml:"max_in_flight"`
}

// IngestSource is one scheduled feed.
type IngestSource struct {
	// Name identifies the source in job names and logs (letters, digits, - or _).
	Name string `yaml:"name"`
	// Format is one of IngestFormats.
	Format string `yaml:"format"`
	// URL (http or https) or Path (a local file): exactly one is set.
	URL  string `yaml:"url"`
	Path string `yaml:"path"`
	// Schedule is a cron expression; "" or "off" runs the source only by hand.
	Schedule string `yaml:"schedule"`
	// Kind is the classification a cidr-list claims (one of IngestKinds).
	Kind string `yaml:"kind"`
	// Provider is the provider name a cidr-list claims (e.g. Cloudflare).
	Provider string `yaml:"provider"`
	// Confidence (0..1) of the source's claims; 0 = the format's default.
	Confidence float64 `yaml:"confidence"`
}

func defaultIngest() Ingest {
	return Ingest{FetchTimeout: 2 * time.Minute, MaxLineBytes: 1 << 20, MaxInFlight: 1024}
}

func (c *Ingest) validate(path string) []error {
	var errs []error
	add := func(p, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", p, fmt.Sprintf(format, a...)))
	}
	if c.FetchTimeout <= 0 {
		add(path+".fetch_timeout", "must be > 0")
	}
	if c.MaxLineBytes < 1024 {
		add(path+".max_line_bytes", "must be >= 1024, got %d", c.MaxLineBytes)
	}
	if c.MaxInFlight < 1 || c.MaxInFlight > 2048 {
		add(path+".max_in_flight", "must be 1..2048, got %d", c.MaxInFlight)
	}
	names := map[string]bool{}
	for i, s := range c.Sources {
		p := fmt.Sprintf("%s.sources[%d]", path, i)
		if s.Name == "" || !nameRe.MatchString(s.Name) {
			add(p+".name", "must be letters, digits, - or _, got %q", s.Name)
		} else if names[s.Name] {
			add(p+".name", "duplicate source %q", s.Name)
		}
		names[s.Name] = true
		if !slices.Contains(IngestFormats, s.Format) {
			add(p+".format", "must be one of %s, got %q", strings.Join(IngestFormats, ", "), s.Format)
		}
		if (s.URL == "") == (s.Path == "") {
			add(p+".url", "set exactly one of url and path")
		}
		if s.Schedule != "" && s.Schedule != "off" {
			if _, err := schedule.Parse(s.Schedule); err != nil {
				add(p+".schedule", "bad cron expression %q: %v", s.Schedule, err)
			}
		}
		if s.Format == "cidr-list" && !slices.Contains(IngestKinds, s.Kind) {
			add(p+".kind", "cidr-list needs a kind: one of vpn, proxy, tor, relay, hosting, cdn, residential_proxy, got %q", s.Kind)
		}
		if s.Format != "cidr-list" && s.Kind != "" {
			add(p+".kind", "only a cidr-list takes a kind")
		}
		if s.Confidence < 0 || s.Confidence > 1 {
			add(p+".confidence", "must be 0..1, got %g", s.Confidence)
		}
	}
	return errs
}
