package config

import (
	"strings"
	"testing"
)

func TestGateway_Validate(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string // "" = valid
	}{
		{"defaults", "", ""},
		{"partial tier keeps the other default", "gateway:\n  tiers:\n    pro: {rate_per_minute: 200}\n", ""},
		{"backend url without scheme", "gateway:\n  backend_url: 127.0.0.1:8080\n", "gateway.backend_url: must be an http(s) URL"},
		{"zero rate", "gateway:\n  tiers:\n    free: {rate_per_minute: 0}\n", "gateway.tiers.free.rate_per_minute: must be > 0"},
		{"negative quota", "gateway:\n  tiers:\n    scale: {monthly_quota: -1}\n", "gateway.tiers.scale.monthly_quota: must be >= 0"},
		{"unknown tier", "gateway:\n  tiers:\n    gold: {rate_per_minute: 1}\n", "gateway.tiers.gold"},
		{"option b url", "gateway:\n  option_b: {url: \"ftp://x\"}\n", "gateway.option_b.url: must be an http(s) URL"},
		{"option b retries", "gateway:\n  option_b: {retries: 9}\n", "gateway.option_b.retries: must be 0..5"},
		{"timeouts", "gateway:\n  backend_timeout: 0s\n  option_b: {timeout: 0s}\n", "gateway.backend_timeout: must be > 0"},
		{"state timeout", "gateway:\n  state_timeout: 0s\n", "gateway.state_timeout: must be > 0"},
		{"lease fraction", "gateway:\n  lease: {fraction: 0.5}\n", "gateway.lease.fraction: must be > 0 and <= 0.1, got 0.5"},
		{"lease max", "gateway:\n  lease: {max: 0}\n", "gateway.lease.max: must be >= 1"},
		{"lease idle", "gateway:\n  lease: {idle: 0s}\n", "gateway.lease.idle: must be > 0"},
		{"lease token ttl", "gateway:\n  lease: {token_ttl: 0s}\n", "gateway.lease.token_ttl: must be > 0"},
		{"partial lease keeps the other defaults", "gateway:\n  lease: {max: 50}\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.yaml), "p.yaml")
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if cfg.Gateway.Tiers.Free.MonthlyQuota != 10000 || cfg.Gateway.Tiers.Enterprise.RatePerMinute != 10000 {
					t.Fatalf("defaults lost: %+v", cfg.Gateway.Tiers)
				}
				if l := cfg.Gateway.Lease; l.Fraction != 0.01 || l.Idle.Seconds() != 2 || cfg.Gateway.StateTimeout.Seconds() != 2 || (l.Max != 1000 && l.Max != 50) {
					t.Fatalf("lease defaults lost: %+v", l)
				}
				if strings.Contains(tc.yaml, "pro:") && (cfg.Gateway.Tiers.Pro.RatePerMinute != 200 || cfg.Gateway.Tiers.Pro.MonthlyQuota != 10_000_000) {
					t.Fatalf("partial tier: %+v", cfg.Gateway.Tiers.Pro)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}
