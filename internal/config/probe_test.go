package config

import (
	"strings"
	"testing"
)

func TestProbe_Validate(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // each must appear; nil = valid
	}{
		{"defaults", "", nil},
		{"loopback world", `probe:
  tld_list: testdata/tlds.txt
  whois_discovery: whois.iana.test:4343
  whois_servers: {ch: whois.nic.ch}
  resolve: {"rdap.nic.*": "127.0.0.1:8443", "*:43": "127.0.0.1"}
  stealth: {candidates: ["http://rdap.backend.test/<tld>/"], scheme: http, max_tlds: 100}
`, nil},
		{"every bad value at once", `probe:
  tld_list: ""
  whois_discovery: whois.iana.org
  whois_port: 0
  timeout: 0s
  retries: -1
  concurrency: 0
  per_host: 0
  rate: -1
  prefix: /abs
  rate_per_minute: 0
  history_runs: 0
  resolve: {"[": "127.0.0.1"}
  stealth: {candidates: ["ftp://x/<tld>"], scheme: gopher, max_tlds: -1}
`, []string{
			"probe.tld_list: required value missing",
			`probe.whois_discovery: must be host:port, got "whois.iana.org"`,
			"probe.whois_port: must be 1..65535, got 0",
			"probe.timeout: must be > 0",
			"probe.retries: must be 0..10, got -1",
			"probe.concurrency: must be 1..4096, got 0",
			"probe.per_host: must be >= 1",
			"probe.rate: must be >= 0",
			`probe.prefix: must be a relative folder ending in /, got "/abs"`,
			"probe.rate_per_minute: must be >= 1",
			"probe.history_runs: must be 1..1000, got 0",
			"probe.resolve.[: bad pattern",
			"probe.stealth.candidates[0]: must be an http(s) URL template",
			`probe.stealth.scheme: must be http or https, got "gopher"`,
			"probe.stealth.max_tlds: must be >= 0",
		}},
		{"unknown key", "probe:\n  stealth:\n    candidate: []\n", []string{"probe.stealth.candidate (line 3): unknown key"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.yaml), "p.yaml")
			if tc.want == nil {
				if err != nil {
					t.Fatalf("valid config refused: %v", err)
				}
				if cfg.Probe.UserAgent == "" || cfg.Probe.RatePerMinute != 100 || cfg.Probe.Concurrency < 1 || cfg.Probe.HistoryRuns != 30 {
					t.Errorf("defaults lost: %+v", cfg.Probe)
				}
				return
			}
			if err == nil {
				t.Fatal("bad config accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}
