package config

import (
	"strings"
	"testing"
	"time"
)

// TestValidate_ObservationDuplicates checks the OBSERVATIONS dedupe
// window: the default is DefaultObservationDuplicates, and a window that
// ingest's resends could outlast is refused naming the key, while other
// streams keep any window.
func TestValidate_ObservationDuplicates(t *testing.T) {
	if got := Default().Streams[0]; got.Name != EnrichStream || got.Duplicates != 10*time.Minute {
		t.Fatalf("default %s duplicates %s, want OBSERVATIONS 10m", got.Name, got.Duplicates)
	}
	for _, tc := range []struct {
		name   string
		stream string
		window time.Duration
		want   string // "" = valid
	}{
		{"default", EnrichStream, DefaultObservationDuplicates, ""},
		{"the old 2h", EnrichStream, 2 * time.Hour, ""},
		{"the minimum", EnrichStream, MinObservationDuplicates, ""},
		{"server default (unset)", EnrichStream, 0, ""},
		{"shorter than a resend", EnrichStream, 2 * time.Minute, "streams[0].duplicates: must be at least 5m0s"},
		{"one second", EnrichStream, time.Second, "streams[0].duplicates: must be at least 5m0s"},
		{"another stream", "TLDWORK", time.Minute, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default()
			for i := range cfg.Streams {
				if cfg.Streams[i].Name == tc.stream {
					cfg.Streams[i].Duplicates = tc.window
				}
			}
			err := cfg.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.want != "" && err == nil:
				t.Fatal("Validate accepted the window")
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}
