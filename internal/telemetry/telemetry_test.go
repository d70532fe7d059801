package telemetry

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestNewLogger_FormatsAndSeconds(t *testing.T) {
	tests := []struct {
		format string
		want   string
	}{
		{"json", `"took":1.5`},
		{"text", "took=1.5"},
		{"", `"took":1.5`}, // not a terminal: JSON
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var b bytes.Buffer
			NewLogger(&b, "info", tt.format).Info("done", "took", 1500*time.Millisecond, "wait", 2*time.Minute)
			out := b.String()
			if !strings.Contains(out, tt.want) {
				t.Errorf("got %q, want it to contain %q", out, tt.want)
			}
			if strings.Contains(out, "1500000000") || strings.Contains(out, "2m0s") {
				t.Errorf("a duration not in seconds: %q", out)
			}
			if tt.format != "text" {
				var m map[string]any
				if err := json.Unmarshal(b.Bytes(), &m); err != nil || m["wait"] != 120.0 {
					t.Errorf("not a JSON line with wait=120: %q %v", out, err)
				}
			}
		})
	}
}
