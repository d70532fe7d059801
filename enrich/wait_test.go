package enrich

import "testing"

func TestSubjectMatches(t *testing.T) {
	tests := []struct {
		filter, subject string
		want            bool
	}{
		{"obs.*.*", "obs.service.shodan", true},
		{"obs.*.*", "obs.service.shodan.01", false},
		{"obs.*.*.01", "obs.service.shodan.01", true},
		{"obs.*.*.01", "obs.service.shodan.02", false},
		{"obs.>", "obs.a.b.c", true},
		{"obs.>", "obs", false},
		{"", "anything", true},
		{"obs.a", "obs.a.b", false},
	}
	for _, tt := range tests {
		if got := subjectMatches(tt.filter, tt.subject); got != tt.want {
			t.Errorf("subjectMatches(%q, %q) = %v, want %v", tt.filter, tt.subject, got, tt.want)
		}
	}
}
