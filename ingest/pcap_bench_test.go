package ingest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/netintel/netintel/internal/testutil"
)

// BenchmarkPcap reads real captures with the pcap adapter (reassembly,
// HTTP, TLS with the certificates parsed, banners, UDP payloads, flow
// inference, normalisation) and reports ns/packet; in the same run,
// baselines: the bare pcapgo read of the same bytes (ns/packet, the
// library's own cost, which the adapter cannot go below), and the Zeek
// adapter reading conn.log (ns/record, what a flow record costs in the
// other packet-derived format).
func BenchmarkPcap(b *testing.B) {
	testutil.Micro(b)
	for _, file := range []string{"anyconnect-vpn.pcap", "openvpn.pcap"} {
		data, err := os.ReadFile("testdata/pcap/" + file)
		if err != nil {
			b.Fatal(err)
		}
		packets := countPackets(b, data)
		b.Run(file+"/adapter", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := Pcap(bytes.NewReader(data), Options{}, func(int, Observation) error { return nil }, func(LineError) {}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*packets), "ns/packet")
		})
		b.Run(file+"/pcapgo-read", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				countPackets(b, data)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*packets), "ns/packet")
		})
	}
	conn, err := os.ReadFile("testdata/zeek-conn.log")
	if err != nil {
		b.Fatal(err)
	}
	records := 0
	_ = Zeek(bytes.NewReader(conn), Options{Skipped: func(int, string) { records++ }}, func(int, Observation) error { records++; return nil }, func(LineError) { records++ })
	b.Run("zeek-conn", func(b *testing.B) {
		b.SetBytes(int64(len(conn)))
		for b.Loop() {
			_ = Zeek(bytes.NewReader(conn), Options{}, func(int, Observation) error { return nil }, func(LineError) {})
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*records), "ns/record")
	})
}

// countPackets reads every packet of a capture, doing nothing with it.
func countPackets(b *testing.B, data []byte) int {
	cr, err := openCapture(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for {
		_, _, _, err := cr.next()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
}
