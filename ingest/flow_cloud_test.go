package ingest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/decompress"
	"github.com/netintel/netintel/internal/testutil"
)

// cloudRun is what an adapter made of one input: observations, the
// malformed records' lines and messages, the skipped records' lines by
// reason, and the warnings.
type cloudRun struct {
	obs     []Observation
	bad     []LineError
	skipped map[string][]int
	warned  []int
}

func runCloud(t *testing.T, ad Adapter, input string) cloudRun {
	t.Helper()
	c := cloudRun{skipped: map[string][]int{}}
	opt := Options{ObservedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Skipped: func(line int, reason string) { c.skipped[reason] = append(c.skipped[reason], line) },
		Warn:    func(line int, _ string) { c.warned = append(c.warned, line) }}
	r := runAdapter(t, ad, input, opt)
	c.obs, c.bad = r.obs, r.bad
	return c
}

func lines(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// TestCloudFlow_RealSamples reads each real sample (ingest/testdata/SOURCES.md,
// "Cloud flow logs") whole: which records are skipped and why, which are
// reported, by line. None of the published samples has a remote-access
// port (they are SSH, RDP, HTTP(S), NTP, Elasticsearch and Kibana
// flows), so every accepted flow is skipped as no protocol recognised,
// as InferFlow has it (TCP 443 stays unattributed by port alone).
func TestCloudFlow_RealSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file    string
		ad      Adapter
		skipped map[string][]int
		bad     map[int]string // line: a part of the message
	}{
		{"aws-default.log", AWSVPCFlow, map[string][]int{flowUnrecognised: {1, 5, 7}, flowRejected: {2, 6}, awsFlowNoData: {3}, awsFlowSkipData: {4}}, nil},
		{"aws-tcp-flags.log", AWSVPCFlow, map[string][]int{flowUnrecognised: lines(2, 9)}, nil},
		{"aws-transit-gateway.log", AWSVPCFlow, map[string][]int{flowUnrecognised: lines(2, 5)}, nil},
		{"aws-v5-traffic-path.log", AWSVPCFlow, map[string][]int{flowUnrecognised: {2, 3}}, nil},
		{"aws-s3-datadog.log", AWSVPCFlow, map[string][]int{flowUnrecognised: {2, 3}}, nil},
		// The NAT gateway example's format has addresses only: the header
		// is reported once, its records skipped.
		{"aws-nat-gateway.log", AWSVPCFlow, map[string][]int{awsFlowNoEndpoint: lines(2, 5)},
			map[int]string{1: "header: the format has no protocol"}},
		// The AWS CLI's own get-log-events example: its messages are no
		// flow records, each reported on its line, by its event.
		{"aws-cli-get-log-events.json", AWSVPCFlow, map[string][]int{},
			map[int]string{7: "events[0].message: 3 fields, the format has 14", 12: "events[1].message: 3 fields", 17: "events[2].message: 3 fields"}},
		{"gcp-vpc-flows.json", GCPVPCFlow, map[string][]int{flowUnrecognised: {2, 48, 105, 162, 209, 255}}, nil},
		{"gcp-vpc-flows.jsonl", GCPVPCFlow, map[string][]int{flowUnrecognised: lines(1, 6)}, nil},
		// Microsoft's version 1 example has, as its third record, a
		// whole {"records": [...]} document pasted in: reported, not read.
		{"azure-nsg-v1.json", AzureFlow, map[string][]int{flowRejected: {18, 55}, flowUnrecognised: {29, 30, 31, 32, 66, 67, 68}},
			map[int]string{76: "records[2]: not a flow log record"}},
		{"azure-nsg-v2.json", AzureFlow, map[string][]int{flowRejected: {18, 19, 20, 57, 58, 59, 60}, flowUnrecognised: {31, 32, 33, 34}}, nil},
		{"azure-vnet-v4.json", AzureFlow, map[string][]int{flowUnrecognised: lines(20, 29), flowRejected: {40, 41, 47, 48, 49, 50, 51, 52, 53}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			c := runCloud(t, tt.ad, readFile(t, "cloudflow/"+tt.file))
			if len(c.obs) != 0 {
				t.Errorf("observations %+v, want none", c.obs)
			}
			for reason, want := range tt.skipped {
				if got := c.skipped[reason]; !slices.Equal(got, want) {
					t.Errorf("skipped %q on lines %v, want %v", reason, got, want)
				}
			}
			for reason, got := range c.skipped {
				if _, ok := tt.skipped[reason]; !ok {
					t.Errorf("skipped %q on lines %v, want none", reason, got)
				}
			}
			if len(c.bad) != len(tt.bad) {
				t.Fatalf("malformed %v, want lines %v", c.bad, slices.Sorted(maps.Keys(tt.bad)))
			}
			for _, b := range c.bad {
				if want, ok := tt.bad[b.Line]; !ok || !strings.Contains(b.Err.Error(), want) {
					t.Errorf("malformed %v, want on line %d %q", b, b.Line, want)
				}
			}
		})
	}
}

// TestAWSFlowLayout_Record holds the fields read from the real records
// of Amazon's examples: addresses (pkt-srcaddr/pkt-dstaddr before
// srcaddr/dstaddr), ports, protocol, counters (custom formats put bytes
// before packets), time (end, else none).
func TestAWSFlowLayout_Record(t *testing.T) {
	t.Parallel()
	at := func(s int64) time.Time { return time.Unix(s, 0).UTC() }
	tests := []struct {
		file string
		line int // 1-based line of the file
		want FlowRecord
		at   time.Time
	}{
		{"aws-default.log", 1, tcp("172.31.16.139", 20641, "172.31.16.21", 22, 20, 4249), at(1418530070)},
		{"aws-default.log", 5, FlowRecord{Src: netip.MustParseAddr("203.0.113.12"), Dst: netip.MustParseAddr("172.31.16.139"), IPProto: 1, Packets: 4, Bytes: 336}, at(1432917142)},
		{"aws-default.log", 7, tcp("2001:db8:1234:a100:8d6e:3477:df66:f105", 34892, "2001:db8:1234:a102:3304:8879:34cf:4071", 22, 54, 8855), at(1477913820)},
		{"aws-tcp-flags.log", 3, tcp("10.0.0.62", 5001, "52.213.180.42", 43416, 7, 376), at(1566848933)},
		{"aws-tcp-flags.log", 9, tcp("10.0.0.62", 5001, "52.213.180.42", 43638, 14, 967), at(1566933193)},
		{"aws-v5-traffic-path.log", 2, tcp("52.95.128.179", 80, "10.0.0.71", 34210, 14, 15044), at(1616729349)},
		{"aws-s3-datadog.log", 2, tcp("10.0.0.1", 443, "10.0.0.2", 49152, 10, 840), at(1620000060)},
		// The transit gateway's interface: srcaddr is its own address,
		// pkt-srcaddr the client's; the format has no times or counters.
		{"aws-transit-gateway.log", 4, tcp("10.20.33.164", 39812, "10.40.2.236", 80, 0, 0), time.Time{}},
		{"aws-transit-gateway.log", 5, tcp("10.40.2.236", 80, "10.20.33.164", 39812, 0, 0), time.Time{}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s:%d", tt.file, tt.line), func(t *testing.T) {
			t.Parallel()
			ls := strings.Split(readFile(t, "cloudflow/"+tt.file), "\n")
			layout := newAWSFlowLayout(awsFlowDefault)
			if hdr, _ := awsFlowHeader(strings.Fields(ls[0])); hdr {
				layout = newAWSFlowLayout(strings.Fields(ls[0]))
			}
			rec, at, skip, err := layout.record(strings.Fields(ls[tt.line-1]))
			if err != nil || skip != "" {
				t.Fatalf("err %v, skip %q", err, skip)
			}
			if rec != tt.want || !at.Equal(tt.at) {
				t.Errorf("got %+v at %v, want %+v at %v", rec, at, tt.want, tt.at)
			}
		})
	}
}

// TestAWSVPCFlow_Gzip reads an S3 delivery's .log.gz as Ingest does
// (internal/decompress before the adapter): the header line, then the
// records.
func TestAWSVPCFlow_Gzip(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := io.WriteString(zw, readFile(t, "cloudflow/aws-s3-datadog.log")); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	dr, err := decompress.Reader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dr.Close() })
	plain, err := io.ReadAll(dr)
	if err != nil {
		t.Fatal(err)
	}
	c := runCloud(t, AWSVPCFlow, string(plain))
	if got := c.skipped[flowUnrecognised]; len(c.bad) != 0 || !slices.Equal(got, []int{2, 3}) {
		t.Errorf("bad %v, unrecognised on %v", c.bad, got)
	}
}

// TestCloudFlow_Emitted runs a flow with a remote-access port through
// each adapter end to end. No published sample has one, so these are
// real records of the samples with the port (and protocol) changed:
// constructed, and said so.
func TestCloudFlow_Emitted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, input string
		ad          Adapter
		ip          string
		flow        Flow
		at          string
	}{
		{"aws default record, UDP 4500", "2 123456789010 eni-1235b8ca123456789 172.31.16.139 172.31.16.21 4500 4500 17 20 4249 1418530010 1418530070 ACCEPT OK\n",
			AWSVPCFlow, "172.31.16.21", Flow{Port: 4500, Transport: "udp", Protocol: "ipsec", Basis: "port", Confidence: 0.5, Packets: 20, Bytes: 4249}, "2014-12-14T04:07:50Z"},
		{"aws behind a NAT gateway: the pkt-dstaddr is named", "version srcaddr dstaddr pkt-srcaddr pkt-dstaddr srcport dstport protocol packets bytes start end action log-status\n" +
			"3 10.0.1.5 10.0.0.220 10.0.1.5 203.0.113.5 43512 51820 17 1 176 1566848875 1566848933 ACCEPT OK\n",
			AWSVPCFlow, "203.0.113.5", Flow{Port: 51820, Transport: "udp", Protocol: "wireguard", Basis: "port+size", Confidence: 0.85, Packets: 1, Bytes: 176}, "2019-08-26T19:48:53Z"},
		{"aws CloudWatch Logs export to S3: the event's time first", "2019-08-26T19:49:00.000Z 2 123456789010 eni-1235b8ca123456789 10.0.1.5 203.0.113.5 43512 1194 17 1 70 1566848875 1566848933 ACCEPT OK\n",
			AWSVPCFlow, "203.0.113.5", Flow{Port: 1194, Transport: "udp", Protocol: "openvpn", Basis: "port+size", Confidence: 0.85, Packets: 1, Bytes: 70}, "2019-08-26T19:48:53Z"},
		{"aws filter-log-events answer", "{\n  \"events\": [\n    {\"logStreamName\": \"eni-1235b8ca123456789-all\", \"timestamp\": 1433190184356,\n     \"message\": \"2 123456789010 eni-1235b8ca123456789 - - - - - - - 1431280876 1431280934 - NODATA\"},\n" +
			"    {\"timestamp\": 1433190184356, \"message\": \"2 123456789010 eni-1235b8ca123456789 198.51.100.7 172.31.16.21 500 500 17 2 760 1418530010 1418530070 ACCEPT OK\"}\n  ]\n}\n",
			AWSVPCFlow, "172.31.16.21", Flow{Port: 500, Transport: "udp", Protocol: "ikev2", Basis: "port", Confidence: 0.5, Packets: 2, Bytes: 760}, "2014-12-14T04:07:50Z"},
		{"gcp entry, UDP 51820", `{"insertId":"ut8lbrffooxyw","jsonPayload":{"bytes_sent":"176","connection":{"dest_ip":"203.0.113.12","dest_port":51820,"protocol":17,"src_ip":"10.87.40.76","src_port":33478},"end_time":"2019-06-14T03:45:37.301953198Z","packets_sent":"1","reporter":"SRC","start_time":"2019-06-14T03:45:37.186193305Z"},"logName":"projects/my-sample-project/logs/compute.googleapis.com%2Fvpc_flows","timestamp":"2019-06-14T03:50:10.845445834Z"}` + "\n",
			GCPVPCFlow, "203.0.113.12", Flow{Port: 51820, Transport: "udp", Protocol: "wireguard", Basis: "port+size", Confidence: 0.85, Packets: 1, Bytes: 176}, "2019-06-14T03:45:37Z"},
		{"azure NSG v2 tuple, IKE on UDP 500", `{"records":[{"time":"2018-11-13T12:00:35.3899262Z","properties":{"Version":2,"flows":[{"rule":"UserRule_ike","flows":[{"mac":"000D3AF87856","flowTuples":["1542110379,10.5.16.4,203.0.113.117,500,500,U,O,A,E,2,760,2,600"]}]}]}}]}`,
			AzureFlow, "203.0.113.117", Flow{Port: 500, Transport: "udp", Protocol: "ikev2", Basis: "port", Confidence: 0.5, Packets: 2, Bytes: 760}, "2018-11-13T11:59:39Z"},
		{"azure VNet v4 tuple, the reply of a WireGuard server", `{"records":[{"flowLogVersion":4,"flowRecords":{"flows":[{"flowGroups":[{"rule":"r","flowTuples":["1663146003606,10.0.0.6,52.239.184.180,23956,51820,17,O,E,NX,0,0,1,120"]}]}]}}]}`,
			AzureFlow, "52.239.184.180", Flow{Port: 51820, Transport: "udp", Protocol: "wireguard", Basis: "port", Confidence: 0.5}, "2022-09-14T09:00:03Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := runCloud(t, tt.ad, tt.input)
			if len(c.bad) != 0 || len(c.obs) != 1 {
				t.Fatalf("bad %v, %d observations (skipped %v)", c.bad, len(c.obs), c.skipped)
			}
			o := c.obs[0]
			if o.IP != tt.ip || *o.Flow != tt.flow || o.ObservedAt != tt.at || o.Type != TypeFlow {
				t.Errorf("got %s %+v at %s, want %s %+v at %s", o.IP, *o.Flow, o.ObservedAt, tt.ip, tt.flow, tt.at)
			}
		})
	}
}

// TestGCPLogEntry_Record holds the fields read from the real entries:
// connection, bytes_sent and packets_sent (int64 as strings), end_time.
func TestGCPLogEntry_Record(t *testing.T) {
	t.Parallel()
	want := []struct {
		rec FlowRecord
		at  string
	}{
		{tcp("10.87.40.76", 5601, "203.0.113.12", 33478, 7, 1776), "2019-06-14T03:45:37.301953198Z"},
		{tcp("198.51.100.248", 9200, "10.87.40.76", 33970, 68, 173663), "2019-06-14T03:49:51.821302149Z"},
		{tcp("10.139.99.242", 9200, "203.0.113.134", 33576, 78, 155707), "2019-06-14T03:49:51.821143836Z"},
		{tcp("10.139.99.242", 22, "192.0.2.23", 59679, 1, 0), "2019-06-14T03:40:46.031032701Z"},
		{tcp("10.87.40.76", 5601, "192.0.2.117", 50646, 7, 1784), "2019-06-14T03:40:37.048196137Z"},
		{tcp("192.0.2.117", 50646, "10.87.40.76", 5601, 7, 1464), "2019-06-14T03:40:37.048196137Z"},
	}
	for i, line := range strings.Split(strings.TrimSpace(readFile(t, "cloudflow/gcp-vpc-flows.jsonl")), "\n") {
		var e gcpLogEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		rec, at, err := e.record()
		if err != nil {
			t.Fatalf("entry %d: %v", i+1, err)
		}
		if rec != want[i].rec || at.Format(time.RFC3339Nano) != want[i].at {
			t.Errorf("entry %d: got %+v at %s, want %+v at %s", i+1, rec, at.Format(time.RFC3339Nano), want[i].rec, want[i].at)
		}
	}
}

// TestAzureFlowTuple holds the fields read from the real tuples of each
// version: the source's direction and the destination's, each with its
// own counters (none in version 1 and in a B tuple).
func TestAzureFlowTuple(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tuple    string
		vnet     bool
		fwd, rev FlowRecord
		at       time.Time
	}{
		{"1487282370,192.0.2.17,10.1.0.4,61771,3389,T,I,A", false,
			tcp("192.0.2.17", 61771, "10.1.0.4", 3389, 0, 0), tcp("10.1.0.4", 3389, "192.0.2.17", 61771, 0, 0), time.Unix(1487282370, 0)},
		{"1542110379,10.5.16.4,203.0.113.115,44931,443,T,O,A,C,30,16978,24,14008", false,
			tcp("10.5.16.4", 44931, "203.0.113.115", 443, 30, 16978), tcp("203.0.113.115", 443, "10.5.16.4", 44931, 24, 14008), time.Unix(1542110379, 0)},
		{"1542110377,10.5.16.4,203.0.113.118,59831,443,T,O,A,B,,,,", false,
			tcp("10.5.16.4", 59831, "203.0.113.118", 443, 0, 0), tcp("203.0.113.118", 443, "10.5.16.4", 59831, 0, 0), time.Unix(1542110377, 0)},
		{"1663146022793,10.0.0.6,104.16.218.84,36776,443,6,O,E,NX,22,2217,33,32466", true,
			tcp("10.0.0.6", 36776, "104.16.218.84", 443, 22, 2217), tcp("104.16.218.84", 443, "10.0.0.6", 36776, 33, 32466), time.UnixMilli(1663146022793)},
	}
	for _, tt := range tests {
		recs, at, skip, err := azureFlowTuple(tt.tuple, tt.vnet)
		if err != nil || skip != "" || len(recs) != 2 {
			t.Fatalf("%s: %v %q %v", tt.tuple, err, skip, recs)
		}
		if recs[0] != tt.fwd || recs[1] != tt.rev || !at.Equal(tt.at) {
			t.Errorf("%s: got %+v %+v at %v, want %+v %+v at %v", tt.tuple, recs[0], recs[1], at, tt.fwd, tt.rev, tt.at)
		}
	}
	// UDP and the denied tuples of the samples
	if recs, _, _, err := azureFlowTuple("1487282481,198.51.100.194,10.1.0.4,53,1732,U,I,D", false); recs != nil || err != nil {
		t.Errorf("a denied v1 tuple read: %v %v", recs, err)
	}
	if recs, _, skip, _ := azureFlowTuple("1542110402,192.0.2.190,10.5.16.4,28746,443,U,I,D,B,,,,", false); recs != nil || skip != flowRejected {
		t.Errorf("a denied v2 tuple: %v %q", recs, skip)
	}
	if recs, _, skip, _ := azureFlowTuple("1663145998065,101.33.218.153,10.0.0.6,55188,22,6,I,D,NX,0,0,0,0", true); recs != nil || skip != flowRejected {
		t.Errorf("a denied v4 tuple: %v %q", recs, skip)
	}
}

// TestCloudFlow_BadInput: each malformed record is reported on its line
// with the field, and the records after it are still read.
func TestCloudFlow_BadInput(t *testing.T) {
	t.Parallel()
	const ok = "2 123456789010 eni-1235b8ca123456789 172.31.16.139 172.31.16.21 20641 22 6 20 4249 1418530010 1418530070 ACCEPT OK"
	tests := []struct {
		name  string
		ad    Adapter
		input string
		line  int
		want  string
	}{
		{"aws address", AWSVPCFlow, strings.Replace(ok, "172.31.16.139", "172.31.16.300", 1), 1, `srcaddr: not an IP address: "172.31.16.300"`},
		{"aws port", AWSVPCFlow, strings.Replace(ok, " 20641 ", " 70000 ", 1), 1, `srcport: not 0..65535: "70000"`},
		{"aws protocol", AWSVPCFlow, strings.Replace(ok, " 22 6 ", " 22 tcp ", 1), 1, `protocol: not 0..255: "tcp"`},
		{"aws protocol absent", AWSVPCFlow, strings.Replace(ok, " 22 6 ", " 22 - ", 1), 1, `protocol: no value`},
		{"aws counter", AWSVPCFlow, strings.Replace(ok, " 4249 ", " -1 ", 1), 1, `bytes: not a count: "-1"`},
		{"aws time", AWSVPCFlow, strings.Replace(ok, " 1418530070 ", " 2014-12-14 ", 1), 1, `end: not seconds since 1970`},
		{"aws fields", AWSVPCFlow, "version srcaddr dstaddr protocol\n" + ok, 2, "14 fields, the format has 4"},
		{"aws pkt-srcaddr named", AWSVPCFlow, "srcaddr dstaddr pkt-srcaddr protocol\n10.0.0.1 10.0.0.2 x 17", 2, `pkt-srcaddr: not an IP address: "x"`},
		{"aws event without message", AWSVPCFlow, `{"events":[{"timestamp":1}]}`, 1, "events[0].message: missing"},
		{"aws not cloudwatch", AWSVPCFlow, `{"records":[]}`, 1, "no events, logEvents or message"},
		{"gcp address", GCPVPCFlow, `{"jsonPayload":{"connection":{"src_ip":"10.0.0.1","dest_ip":"::g","protocol":6}},"timestamp":"2019-06-14T03:50:10Z"}`, 1, `jsonPayload.connection.dest_ip: not an IP address`},
		{"gcp bytes", GCPVPCFlow, `{"jsonPayload":{"connection":{"src_ip":"10.0.0.1","dest_ip":"10.0.0.2","protocol":6},"bytes_sent":"12a"},"timestamp":"2019-06-14T03:50:10Z"}`, 1, `jsonPayload.bytes_sent: not a count: "12a"`},
		{"gcp port", GCPVPCFlow, `{"jsonPayload":{"connection":{"src_ip":"10.0.0.1","dest_ip":"10.0.0.2","protocol":17,"dest_port":65536}},"timestamp":"2019-06-14T03:50:10Z"}`, 1, `jsonPayload.connection.dest_port: not 0..65535: 65536`},
		{"gcp protocol missing", GCPVPCFlow, `{"jsonPayload":{"connection":{"src_ip":"10.0.0.1","dest_ip":"10.0.0.2"}},"timestamp":"2019-06-14T03:50:10Z"}`, 1, `jsonPayload.connection.protocol: missing`},
		{"gcp time", GCPVPCFlow, `{"jsonPayload":{"connection":{"src_ip":"10.0.0.1","dest_ip":"10.0.0.2","protocol":6},"end_time":"yesterday"}}`, 1, `jsonPayload.end_time: not RFC 3339`},
		{"gcp not a flow", GCPVPCFlow, `{"logName":"projects/p/logs/compute.googleapis.com%2Fvpc_flows","jsonPayload":{}}`, 1, "jsonPayload.connection: missing"},
		{"azure fields", AzureFlow, `{"records":[{"properties":{"flows":[{"flows":[{"flowTuples":["1,2,3"]}]}]}}]}`, 1, `3 fields, want 8 (NSG flow logs version 1) or 13`},
		{"azure address", AzureFlow, `{"records":[{"properties":{"flows":[{"flows":[{"flowTuples":["1487282370,192.0.2.17,10.1.0.400,61771,3389,T,I,A"]}]}]}}]}`, 1, `destination address: not an IP address`},
		{"azure protocol", AzureFlow, `{"records":[{"properties":{"flows":[{"flows":[{"flowTuples":["1487282370,192.0.2.17,10.1.0.4,61771,3389,X,I,A"]}]}]}}]}`, 1, `protocol: not T or U`},
		{"azure port", AzureFlow, `{"records":[{"flowRecords":{"flows":[{"flowGroups":[{"flowTuples":["1663146022793,10.0.0.6,104.16.218.84,x,443,6,O,E,NX,22,2217,33,32466"]}]}]}}]}`, 1, `source port: not 0..65535`},
		{"azure counter", AzureFlow, `{"records":[{"flowRecords":{"flows":[{"flowGroups":[{"flowTuples":["1663146022793,10.0.0.6,104.16.218.84,1,443,6,O,E,NX,22,2217,-3,32466"]}]}]}}]}`, 1, `packets received: not a count`},
		{"azure time", AzureFlow, `{"records":[{"properties":{"flows":[{"flows":[{"flowTuples":["now,192.0.2.17,10.1.0.4,61771,3389,T,I,A"]}]}]}}]}`, 1, `time: not a time since 1970`},
		{"azure not a record", AzureFlow, `{"records":[{"time":"2018-11-13T12:00:35Z"}]}`, 1, `records[0]: not a flow log record`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := runCloud(t, tt.ad, tt.input+"\n")
			if len(c.bad) != 1 || c.bad[0].Line != tt.line || !strings.Contains(c.bad[0].Err.Error(), tt.want) {
				t.Fatalf("malformed %v, want line %d %q", c.bad, tt.line, tt.want)
			}
		})
	}
	// cut JSON: what came before the cut is read, the cut reported
	in := readFile(t, "cloudflow/gcp-vpc-flows.jsonl")
	c := runCloud(t, GCPVPCFlow, in[:len(in)-200])
	if got := c.skipped[flowUnrecognised]; !slices.Equal(got, lines(1, 5)) || len(c.bad) != 1 || c.bad[0].Line != 6 {
		t.Errorf("cut: unrecognised %v, malformed %v", got, c.bad)
	}
}

// TestAWSVPCFlow_Parquet reads a Parquet file in the columns of S3's
// Parquet delivery (the fields with underscores; Amazon Athena's table
// for it) holding the default-format examples: the same records read,
// skipped and mapped as from the text, each row its "line". The file was
// written by DuckDB from aws-default.log (SOURCES.md): no Parquet file
// delivered by AWS was found published. A damaged file fails whole,
// without a crash.
func TestAWSVPCFlow_Parquet(t *testing.T) {
	t.Parallel()
	text := runCloud(t, AWSVPCFlow, readFile(t, "cloudflow/aws-default.log"))
	pq := readFile(t, "cloudflow/aws-default-duckdb.parquet")
	got := runCloud(t, AWSVPCFlow, pq)
	if len(got.bad) != 0 || len(got.obs) != 0 || !maps.EqualFunc(got.skipped, text.skipped, slices.Equal[[]int]) {
		t.Errorf("parquet: bad %v, obs %d, skipped %v; want text's %v", got.bad, len(got.obs), got.skipped, text.skipped)
	}
	// the mapping: one flow with a remote-access port, through the same rows' layout
	layout := newAWSFlowLayout([]string{"version", "account_id", "interface_id", "srcaddr", "dstaddr", "srcport", "dstport", "protocol", "packets", "bytes", "start", "end", "action", "log_status"})
	if rec, at, skip, err := layout.record(strings.Fields("2 123456789010 eni-1235b8ca123456789 2001:db8:1234:a100:8d6e:3477:df66:f105 2001:db8:1234:a102:3304:8879:34cf:4071 34892 22 6 54 8855 1477913708 1477913820 ACCEPT OK")); err != nil || skip != "" ||
		rec != tcp("2001:db8:1234:a100:8d6e:3477:df66:f105", 34892, "2001:db8:1234:a102:3304:8879:34cf:4071", 22, 54, 8855) || at.Unix() != 1477913820 {
		t.Errorf("underscored names: %+v %v %q %v", rec, at, skip, err)
	}
	for _, cut := range []int{len(pq) / 2, len(pq) - 8, 8} {
		err := AWSVPCFlow(strings.NewReader(pq[:cut]), Options{}, func(int, Observation) error { return nil }, func(LineError) {})
		if err == nil || !strings.Contains(err.Error(), "parquet") {
			t.Errorf("cut at %d: %v, want a parquet error", cut, err)
		}
	}
}

// TestAWSVPCFlow_IngestFile puts S3 deliveries (.log.gz, as VPC Flow
// Logs names them) through IngestFile into a real nats-server: the real
// file's records counted as skipped; a record with a VPN port (the
// constructed one of TestCloudFlow_Emitted) stored.
func TestAWSVPCFlow_IngestFile(t *testing.T) {
	t.Parallel()
	n := testutil.StartNATS(t)
	n.Ensure(t)
	in := New(n.JS, testutil.Logger(t), nil, 16, time.Minute)
	dir := t.TempDir()
	write := func(name, content string) string {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = io.WriteString(zw, content)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	realFile := write("123456789012_vpcflowlogs_us-east-1_fl-abc123_20240101T0000Z_fe123456.log.gz", readFile(t, "cloudflow/aws-s3-datadog.log"))
	st, err := in.IngestFile(t.Context(), "aws-vpc-flow", realFile, Options{})
	if err != nil || st.Read != 0 || len(st.Malformed) != 0 || st.Skipped[flowUnrecognised] != 2 {
		t.Errorf("real file: %v %v", st, err)
	}
	vpn := write("123456789012_vpcflowlogs_us-east-1_fl-abc123_20190826T1945Z_fe123457.log.gz",
		"version srcaddr dstaddr pkt-srcaddr pkt-dstaddr srcport dstport protocol packets bytes start end action log-status\n"+
			"3 10.0.1.5 10.0.0.220 10.0.1.5 203.0.113.5 43512 51820 17 1 176 1566848875 1566848933 ACCEPT OK\n"+
			"3 10.0.1.5 10.0.0.220 10.0.1.5 203.0.113.5 43512 51820 17 1 176 1566848875 1566848933 REJECT OK\n")
	st, err = in.IngestFile(t.Context(), "aws-vpc-flow", vpn, Options{})
	if err != nil || st.Read != 1 || st.Published != 1 || st.Skipped[flowRejected] != 1 {
		t.Errorf("vpn file: %v %v", st, err)
	}
}

// TestAWSVPCFlow_Headers: files concatenated (zcat of several
// deliveries) change format at each header line; a name VPC Flow Logs
// does not have is warned of, its column passed over (the last header
// and its L2TP record are constructed).
func TestAWSVPCFlow_Headers(t *testing.T) {
	t.Parallel()
	in := readFile(t, "cloudflow/aws-s3-datadog.log") + "\n" + readFile(t, "cloudflow/aws-v5-traffic-path.log") +
		"srcaddr dstaddr srcport dstport protocol packets bytes end colour\n192.0.2.1 198.51.100.2 40000 1701 17 3 300 1620000060 blue\n"
	c := runCloud(t, AWSVPCFlow, in)
	if len(c.bad) != 0 || !slices.Equal(c.skipped[flowUnrecognised], []int{2, 3, 6, 7}) || !slices.Equal(c.warned, []int{8}) || len(c.obs) != 1 ||
		c.obs[0].IP != "198.51.100.2" || c.obs[0].Flow.Protocol != "l2tp" || c.obs[0].ObservedAt != "2021-05-03T00:01:00Z" {
		t.Errorf("bad %v skipped %v warned %v obs %+v", c.bad, c.skipped, c.warned, c.obs)
	}
}
