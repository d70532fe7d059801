package main

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/testutil"
)

// TestStartPprof checks NETINTEL_PPROF: off when empty, refused beyond
// loopback or malformed (the message names the variable), and on a
// loopback address it serves the heap profile.
func TestStartPprof(t *testing.T) {
	port, err := bus.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	loop := "127.0.0.1:" + strconv.Itoa(port)
	for _, tc := range []struct {
		name, addr, wantErr string
		serves              bool
	}{
		{"off", "", "", false},
		{"any address", "0.0.0.0:6060", "NETINTEL_PPROF: \"0.0.0.0:6060\" is not a loopback address", false},
		{"a public host", "example.org:6060", "is not a loopback address", false},
		{"no port", "127.0.0.1", "is not host:port", false},
		{"loopback", loop, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := startPprof(tc.addr, testutil.Logger(t))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("startPprof(%q) = %v, want an error containing %q", tc.addr, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("startPprof(%q): %v", tc.addr, err)
			}
			if !tc.serves {
				return
			}
			resp, err := http.Get("http://" + tc.addr + "/debug/pprof/heap?debug=1")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "# HeapInuse = ") {
				t.Fatalf("heap profile: %s\n%.200s", resp.Status, b)
			}
		})
	}
}
