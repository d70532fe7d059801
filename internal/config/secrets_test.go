package config

import (
	"strings"
	"testing"
	"time"
)

func TestSecrets_Validate(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // each must appear; none means valid
	}{
		{"defaults", "", nil},
		{"rates off", "secrets:\n  text_rate: {per_minute: 0, burst: 0}\n", nil},
		{"bad bucket", "secrets:\n  bucket: \"a b\"\n", []string{"secrets.bucket: must be letters"}},
		{"same buckets", "secrets:\n  bucket: x\n  uploads_bucket: x\n", []string{"secrets.uploads_bucket: must differ"}},
		{"prefix", "secrets:\n  blob_prefix: /abs\n", []string{"secrets.blob_prefix: must be a relative prefix ending in /"}},
		{"burst", "secrets:\n  read_rate: {per_minute: 10, burst: 0}\n", []string{"secrets.read_rate.burst: must be >= 1"}},
		{"negative rate", "secrets:\n  file_rate: {per_minute: -1, burst: 1}\n", []string{"secrets.file_rate.per_minute: must be >= 0"}},
		{"durations", "secrets:\n  upload_idle: 0s\n  upload_memory: 10ms\n  finish_stale: 0s\n  sweep_interval: -1s\n  sweep_grace: 0s\n",
			[]string{"secrets.upload_idle:", "secrets.upload_memory:", "secrets.finish_stale:", "secrets.sweep_interval:", "secrets.sweep_grace:"}},
		{"unknown key", "secrets:\n  upload_idl: 1h\n", []string{"secrets.upload_idl (line 2): unknown key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.yaml), "t.yml")
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if cfg.Secrets.UploadIdle != time.Hour || cfg.Secrets.TextRate.Burst == 0 && tt.name == "defaults" {
					t.Fatalf("defaults lost: %+v", cfg.Secrets)
				}
				return
			}
			if err == nil {
				t.Fatal("Parse accepted a bad secrets section")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}
