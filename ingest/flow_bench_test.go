package ingest

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"
	"time"
)

// flowBenchLines builds n lines of a flow format from a real sample's
// records, each copy with its own addresses, so the adapter does its whole
// work (parse, infer, normalize) on every line.
func flowBenchLines(b *testing.B, file string, header int, n int) []byte {
	b.Helper()
	raw, err := os.ReadFile("testdata/" + file)
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(raw), []byte{'\n'})
	var out bytes.Buffer
	for _, h := range lines[:header] {
		out.Write(h)
		out.WriteByte('\n')
	}
	recs := lines[header:]
	if i := bytes.Index(raw, []byte("\nSummary")); i >= 0 {
		recs = bytes.Split(bytes.TrimSpace(raw[:i]), []byte{'\n'})[header:]
	}
	for i := 0; i < n; i++ {
		l := recs[i%len(recs)]
		// 192.0.2.x -> 10.a.b.x: a distinct client per copy.
		l = bytes.ReplaceAll(l, []byte("192.0.2."), fmt.Appendf(nil, "10.%d.%d.", i/len(recs)/256%256, i/len(recs)%256))
		out.Write(l)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// BenchmarkFlowAdapters reads 100,000 flow records in each flow format
// (copies of the real goflow2 and nfdump samples) and, in the same run,
// decodes the same bytes with plain encoding/json into a struct of the
// same members, or encoding/csv into records: the baseline. The two
// alternate three times and the fastest of each counts, as the machine is
// shared. It reports records per second and the adapter's time over the
// baseline's.
func BenchmarkFlowAdapters(b *testing.B) {
	const n, rounds = 100_000, 3
	type goflowPlain struct {
		Type     string `json:"type"`
		Received int64  `json:"time_received_ns"`
		End      int64  `json:"time_flow_end_ns"`
		Bytes    int64  `json:"bytes"`
		Packets  int64  `json:"packets"`
		SrcAddr  string `json:"src_addr"`
		DstAddr  string `json:"dst_addr"`
		Proto    string `json:"proto"`
		SrcPort  int    `json:"src_port"`
		DstPort  int    `json:"dst_port"`
	}
	formats := []struct {
		name     string
		file     string
		header   int
		ad       Adapter
		baseline func(data []byte) int
	}{
		{"goflow2", "goflow2-v2.2.6.ndjson", 0, Goflow2, func(data []byte) int {
			recs := 0
			for line := range bytes.Lines(data) {
				var g goflowPlain
				if err := json.Unmarshal(line, &g); err != nil {
					b.Fatal(err)
				}
				recs++
			}
			return recs
		}},
		{"nfdump-csv-1.7.1", "nfdump-1.7.1.csv", 1, NfdumpCSV, csvBaseline(b)},
		{"nfdump-csv-1.7.8", "nfdump-1.7.8.csv", 1, NfdumpCSV, csvBaseline(b)},
	}
	for _, f := range formats {
		data := flowBenchLines(b, f.file, f.header, n)
		b.Run(f.name, func(b *testing.B) { benchAgainst(b, f.name, n, rounds, data, f.ad, f.baseline, false) })
	}
}

// csvBaseline decodes csv records with encoding/csv and turns the counters
// into numbers, stopping at nfdump's Summary line.
func csvBaseline(b *testing.B) func([]byte) int {
	return func(data []byte) int {
		r := csv.NewReader(bytes.NewReader(data))
		r.FieldsPerRecord = -1
		r.ReuseRecord = true
		recs := 0
		for {
			rec, err := r.Read()
			if err == io.EOF {
				return recs
			}
			if err != nil {
				b.Fatal(err)
			}
			if rec[0] == "Summary" {
				return recs
			}
			recs++
		}
	}
}

// benchAgainst times an adapter over data (n records) against a baseline
// decode of the same bytes, alternating the two rounds times and keeping
// the fastest of each (the machine is shared), and reports records per
// second and the adapter's time over the baseline's. Every record must be
// emitted or skipped, and the baseline must count at least n (exactly n
// when exact).
func benchAgainst(b *testing.B, name string, n, rounds int, data []byte, ad Adapter, baseline func([]byte) int, exact bool) {
	for range b.N {
		var base, took time.Duration
		var obs, skipped int
		for range rounds {
			start := time.Now()
			recs := baseline(data)
			if d := time.Since(start); base == 0 || d < base {
				base = d
			}
			start = time.Now()
			obs, skipped = 0, 0
			err := ad(bytes.NewReader(data), Options{Skipped: func(int, string) { skipped++ }},
				func(int, Observation) error { obs++; return nil },
				func(le LineError) { b.Fatalf("malformed: %v", le) })
			if d := time.Since(start); took == 0 || d < took {
				took = d
			}
			if err != nil || obs+skipped != n || recs < n || exact && recs != n {
				b.Fatalf("err %v; %d observations + %d skipped, baseline %d records; want %d", err, obs, skipped, recs, n)
			}
		}
		b.ReportMetric(float64(n)/took.Seconds(), "records/s")
		b.ReportMetric(float64(n)/base.Seconds(), "baseline-records/s")
		b.ReportMetric(took.Seconds()/base.Seconds(), "x-baseline")
		b.Logf("%s: %d records (%d observations, %d skipped) in %s, %.0f/s; baseline %s, %.0f/s; %.2fx baseline time",
			name, n, obs, skipped, took.Round(time.Millisecond), float64(n)/took.Seconds(),
			base.Round(time.Millisecond), float64(n)/base.Seconds(), took.Seconds()/base.Seconds())
	}
}
