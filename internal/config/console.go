package config

import (
	"fmt"
	"regexp"
	"slices"
	"time"
)

// consoleTagRe is a gateway key tag (gateway.tagRe).
var consoleTagRe = regexp.MustCompile(`^[\x21-\x7e]{1,64}$`)

// Console configures the operator web console at /console/ (docs/console.md).
type Console struct {
	// Enabled mounts the console; false leaves /console/ to the 404 of
	// the listener.
	Enabled bool `yaml:"enabled"`
	// Allow says who may open it: "loopback" (clients on this machine,
	// with api.trust_proxy_headers the address the proxy saw) and/or
	// "keys" (anyone presenting an active gateway key that carries
	// KeyTag). Default [loopback].
	Allow []string `yaml:"allow"`
	// KeyTag is the tag that makes a gateway key an operator key
	// (`netintel keys create --user ops --tier enterprise --tag operator`).
	KeyTag string `yaml:"key_tag"`
	// SampleInterval is how often the pipeline charts are sampled.
	SampleInterval time.Duration `yaml:"sample_interval"`
	// Samples is how many samples the charts keep (the window is
	// Samples x SampleInterval).
	Samples int `yaml:"samples"`
}

// ConsoleAllow lists the values console.allow takes.
var ConsoleAllow = []string{"loopback", "keys"}

func defaultConsole() Console {
	return Console{Enabled: true, Allow: []string{"loopback"}, KeyTag: "operator", SampleInterval: 5 * time.Second, Samples: 120}
}

func (c *Console) validate(path string) []error {
	var errs []error
	add := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: %s", path, field, fmt.Sprintf(format, a...)))
	}
	if c.Enabled && len(c.Allow) == 0 {
		add("allow", "empty: nobody could open the console; list loopback and/or keys, or set enabled: false")
	}
	for i, a := range c.Allow {
		if !slices.Contains(ConsoleAllow, a) {
			add(fmt.Sprintf("allow[%d]", i), "must be loopback or keys, got %q", a)
		}
	}
	if slices.Contains(c.Allow, "keys") && !consoleTagRe.MatchString(c.KeyTag) {
		add("key_tag", "must be 1 to 64 printable characters without spaces when allow has keys, got %q", c.KeyTag)
	}
	if c.SampleInterval < 100*time.Millisecond {
		add("sample_interval", "must be at least 100ms, got %s", c.SampleInterval)
	}
	if c.Samples < 2 || c.Samples > 10000 {
		add("samples", "must be between 2 and 10000, got %d", c.Samples)
	}
	return errs
}
