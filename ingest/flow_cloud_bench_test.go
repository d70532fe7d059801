package ingest

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
)

// cloudBenchInput repeats a real sample's records to n records: the
// header line (AWS) first, JSON lines (Google), or one PT1H.json
// document holding the tuples (Azure).
func cloudBenchInput(b *testing.B, format string, n int) []byte {
	b.Helper()
	read := func(name string) []byte {
		raw, err := os.ReadFile("testdata/cloudflow/" + name)
		if err != nil {
			b.Fatal(err)
		}
		return raw
	}
	var out bytes.Buffer
	switch format {
	case "aws-vpc-flow":
		ls := bytes.Split(bytes.TrimSpace(read("aws-tcp-flags.log")), []byte{'\n'})
		out.Write(ls[0])
		out.WriteByte('\n')
		for i := range n {
			out.Write(ls[1+i%(len(ls)-1)])
			out.WriteByte('\n')
		}
	case "gcp-vpc-flow":
		ls := bytes.Split(bytes.TrimSpace(read("gcp-vpc-flows.jsonl")), []byte{'\n'})
		for i := range n {
			out.Write(ls[i%len(ls)])
			out.WriteByte('\n')
		}
	case "azure-flow":
		var doc struct {
			Records []azureFlowRecord `json:"records"`
		}
		if err := json.Unmarshal(read("azure-vnet-v4.json"), &doc); err != nil {
			b.Fatal(err)
		}
		var tuples []string
		for _, f := range doc.Records[0].FlowRecords.Flows {
			for _, g := range f.FlowGroups {
				tuples = append(tuples, g.FlowTuples...)
			}
		}
		all := make([]string, n)
		for i := range all {
			all[i] = tuples[i%len(tuples)]
		}
		enc, err := json.MarshalIndent(map[string]any{"records": []any{map[string]any{"flowLogVersion": 4, "flowRecords": map[string]any{
			"flows": []any{map[string]any{"flowGroups": []any{map[string]any{"rule": "r", "flowTuples": all}}}}}}}}, "", "  ")
		if err != nil {
			b.Fatal(err)
		}
		out.Write(enc)
	}
	return out.Bytes()
}

// BenchmarkCloudFlowAdapters reads 100,000 records of each cloud flow log
// format (copies of the real samples: every record read, inferred and
// skipped, as the samples name no remote-access port, or denied) and, in
// the same run, the baseline: the same bytes split into fields with
// bytes.Fields and the counters parsed (AWS), decoded with plain
// encoding/json into a struct of the members read (Google), or the
// document decoded and each tuple split at its commas (Azure). The two
// alternate three times, the fastest of each counts. It reports records
// per second and the adapter's time over the baseline's.
func BenchmarkCloudFlowAdapters(b *testing.B) {
	const n, rounds = 100_000, 3
	type gcpPlain struct {
		LogName     string `json:"logName"`
		Timestamp   string `json:"timestamp"`
		JSONPayload struct {
			Connection struct {
				SrcIP    string `json:"src_ip"`
				DestIP   string `json:"dest_ip"`
				SrcPort  int    `json:"src_port"`
				DestPort int    `json:"dest_port"`
				Protocol int    `json:"protocol"`
			} `json:"connection"`
			BytesSent   string `json:"bytes_sent"`
			PacketsSent string `json:"packets_sent"`
			StartTime   string `json:"start_time"`
			EndTime     string `json:"end_time"`
		} `json:"jsonPayload"`
	}
	formats := []struct {
		name     string
		ad       Adapter
		baseline func(data []byte) int
	}{
		{"aws-vpc-flow", AWSVPCFlow, func(data []byte) int {
			recs := -1 // the header
			for line := range bytes.Lines(data) {
				for _, f := range bytes.Fields(line)[14:17] {
					_, _ = strconv.ParseInt(string(f), 10, 64)
				}
				recs++
			}
			return recs
		}},
		{"gcp-vpc-flow", GCPVPCFlow, func(data []byte) int {
			recs := 0
			for line := range bytes.Lines(data) {
				var g gcpPlain
				if err := json.Unmarshal(line, &g); err != nil {
					b.Fatal(err)
				}
				recs++
			}
			return recs
		}},
		{"azure-flow", AzureFlow, func(data []byte) int {
			var doc struct {
				Records []azureFlowRecord `json:"records"`
			}
			if err := json.Unmarshal(data, &doc); err != nil {
				b.Fatal(err)
			}
			recs := 0
			for _, f := range doc.Records[0].FlowRecords.Flows {
				for _, g := range f.FlowGroups {
					for _, t := range g.FlowTuples {
						recs += len(strings.Split(t, ",")) / 13
					}
				}
			}
			return recs
		}},
	}
	for _, f := range formats {
		data := cloudBenchInput(b, f.name, n)
		b.Run(f.name, func(b *testing.B) { benchAgainst(b, f.name, n, rounds, data, f.ad, f.baseline, true) })
	}
}
