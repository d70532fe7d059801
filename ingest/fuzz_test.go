package ingest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzAdapters feeds arbitrary bytes to every feed adapter. No input may
// panic; every observation an adapter emits must be valid (Normalize
// leaves it as it is and it encodes), with a line number inside the input;
// every skipped record names a line inside the input.
func FuzzAdapters(f *testing.F) {
	for _, name := range []string{"aws-ip-ranges.json", "gcp-cloud.json", "exit-addresses", "observations.ndjson", "mullvad.txt", "cloudflare-ips-v6.txt",
		"goflow2-v2.2.6.ndjson", "goflow2-docs.ndjson", "nfdump-1.7.1.csv", "nfdump-1.7.8.csv", "nfdump-1.7.8-fast.csv"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 512 {
			b = b[:512]
		}
		f.Add(b)
	}
	f.Add([]byte("ExitNode X\nExitAddress 10.0.0.1 2026-11-01 00:00:00\n"))
	f.Add([]byte(`{"prefixes":[{"ip_prefix":"10.0.0.0/8","region":"x","service":"EC2"}]}`))
	f.Add([]byte("# c\n10.0.0.0/33\n::1\n\x00\n"))
	f.Add([]byte(`{"time_received_ns":"2026-11-20T10:00:00Z","bytes":176,"packets":1,"src_addr":"::ffff:192.0.2.1","dst_addr":"192.0.2.2","proto":50}` + "\n"))
	f.Add([]byte("ts,te,sa,da,pr,ipkt,ibyt\n1,2,192.0.2.1,192.0.2.2,GRE,1,1\n\nSummary\nx\n"))
	names := []string{"tor-exits", "aws-ranges", "gcp-ranges", "cidr-list", "observations", "goflow2", "nfdump-csv"}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte{'\n'}) + 1
		for _, name := range names {
			opt := Options{Kind: "vpn_exit", Provider: "fuzz", ObservedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), MaxLineBytes: 1 << 12,
				Skip: func(line int) {
					if line < 1 || line > lines {
						t.Fatalf("%s: skipped line %d of %d", name, line, lines)
					}
				}}
			emit := func(line int, o Observation) error {
				if line < 1 || line > lines {
					t.Fatalf("%s: observation on line %d of %d", name, line, lines)
				}
				before := o
				if err := o.Normalize(); err != nil {
					t.Fatalf("%s: emitted an invalid observation: %v", name, err)
				}
				if _, _, err := before.Encode(); err != nil {
					t.Fatalf("%s: emitted an observation that does not encode: %v", name, err)
				}
				return nil
			}
			bad := func(e LineError) {
				if e.Line < 0 || e.Line > lines {
					t.Fatalf("%s: error on line %d of %d: %v", name, e.Line, lines, e.Err)
				}
				if strings.TrimSpace(e.Error()) == "" {
					t.Fatalf("%s: empty error", name)
				}
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = Adapters()[name](bytes.NewReader(data), opt, emit, bad)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: no return within 10 s on %d bytes", name, len(data))
			}
		}
	})
}
