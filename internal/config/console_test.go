package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestConsole_Validate(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // each must appear; none means valid
	}{
		{"defaults", "", nil},
		{"keys", "console:\n  allow: [loopback, keys]\n  key_tag: ops\n", nil},
		{"off with nobody allowed", "console:\n  enabled: false\n  allow: []\n", nil},
		{"nobody allowed", "console:\n  allow: []\n", []string{"console.allow: empty: nobody could open the console"}},
		{"unknown allow", "console:\n  allow: [loopback, everyone]\n", []string{`console.allow[1]: must be loopback or keys, got "everyone"`}},
		{"empty tag", "console:\n  allow: [keys]\n  key_tag: \"\"\n", []string{"console.key_tag: must be 1 to 64 printable characters"}},
		{"sampling", "console:\n  sample_interval: 10ms\n  samples: 1\n", []string{"console.sample_interval: must be at least 100ms", "console.samples: must be between 2 and 10000"}},
		{"listener", "api:\n  listeners: {console: \"127.0.0.1:9000\"}\n", nil},
		{"unknown key", "console:\n  alow: [keys]\n", []string{"console.alow (line 2): unknown key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.yaml), "t.yml")
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if tt.name == "defaults" && (!cfg.Console.Enabled || !slices.Equal(cfg.Console.Allow, []string{"loopback"}) || cfg.Console.KeyTag != "operator" || cfg.Console.SampleInterval != 5*time.Second) {
					t.Fatalf("defaults lost: %+v", cfg.Console)
				}
				return
			}
			if err == nil {
				t.Fatal("Parse accepted a bad console section")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}
