package ingest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Observations written as JSON documents go in as JSON lines do: an
// array, objects printed over several lines, and the accuracy harness's
// capture files (whose observation is read, the rest left to the harness).
func TestNDJSON_Documents(t *testing.T) {
	t.Parallel()
	obs := func(ip string) string {
		return `{"ip":"` + ip + `","source":"s","observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"probes":[{"response":{"status":200,"headers":{"Server":"x"}}}]}}`
	}
	pretty := "{\n  \"ip\": \"192.0.2.3\",\n  \"source\": \"s\",\n  \"observed_at\": \"2026-11-20T10:00:00Z\",\n  \"signal\": {\"kind\": \"tor_exit\"}\n}\n"
	capture, err := os.ReadFile(filepath.Join("..", "testdata", "fingerprints", "fortinet-fortigate-sslvpn", "aa1-fortios-4-0-mr2-fortigate-620b-get-system-status-cli-reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, in string
		ips      []string
		bad      []int
	}{
		{"an array", "[\n" + obs("192.0.2.1") + ",\n" + obs("192.0.2.2") + "\n]\n", []string{"192.0.2.1", "192.0.2.2"}, nil},
		{"objects printed over lines, one after another", pretty + pretty, []string{"192.0.2.3", "192.0.2.3"}, nil},
		{"a capture file", string(capture), []string{"192.0.2.55"}, nil},
		{"an array with a bad member", "[\n" + obs("192.0.2.1") + ",\n" + obs("192.0.2.300") + "\n]\n", []string{"192.0.2.1"}, []int{3}},
		{"JSON lines still", obs("192.0.2.1") + "\n" + obs("192.0.2.2") + "\n", []string{"192.0.2.1", "192.0.2.2"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runAdapter(t, NDJSON, tt.in, Options{})
			var ips []string
			for _, o := range r.obs {
				ips = append(ips, o.IP)
			}
			if !slices.Equal(ips, tt.ips) || !slices.Equal(badLines(r.bad), tt.bad) {
				t.Errorf("ips %v bad %v; want %v, lines %v", ips, r.bad, tt.ips, tt.bad)
			}
		})
	}
}
