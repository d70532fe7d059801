package ingest

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func udp(src string, sp int, dst string, dp int, packets, bytes int64) FlowRecord {
	return FlowRecord{Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr(dst), SrcPort: sp, DstPort: dp,
		IPProto: ipProtoUDP, Packets: packets, Bytes: bytes}
}

func tcp(src string, sp int, dst string, dp int, packets, bytes int64) FlowRecord {
	r := udp(src, sp, dst, dp, packets, bytes)
	r.IPProto = ipProtoTCP
	return r
}

func TestInferFlow(t *testing.T) {
	t.Parallel()
	const c, s = "192.0.2.10", "198.51.100.20"
	const c6, s6 = "2001:db8:1::10", "2001:db8:2::20"
	l2 := func(r FlowRecord) FlowRecord { r.L2 = true; return r }
	proto := func(p int, packets, bytes int64) FlowRecord {
		return FlowRecord{Src: netip.MustParseAddr(c), Dst: netip.MustParseAddr(s), IPProto: p, Packets: packets, Bytes: bytes}
	}
	type want struct {
		server, protocol, transport, basis string
		port                               int
		conf                               float64
	}
	tests := []struct {
		name string
		in   FlowRecord
		want *want // nil: no protocol
	}{
		{"ESP", proto(50, 20, 2800), &want{s, "ipsec", "udp", "ip_protocol", 500, 0.9}},
		{"GRE is no protocol: real captures carried Aruba, ERSPAN, GRE-in-GRE, not PPTP", proto(47, 50, 20000), nil},
		{"IKE", udp(c, 500, s, 500, 2, 760), &want{s, "ikev2", "udp", "port", 500, 0.5}},
		{"NAT-T", udp(c, 4500, s, 4500, 30, 4200), &want{s, "ipsec", "udp", "port", 4500, 0.5}},
		{"WireGuard initiation, IPv4: 148+8+20", udp(c, 43512, s, 51820, 1, 176), &want{s, "wireguard", "udp", "port+size", 51820, 0.85}},
		{"WireGuard response from the server port", udp(s, 51820, c, 43512, 1, 120), &want{s, "wireguard", "udp", "port+size", 51820, 0.85}},
		{"WireGuard session: initiation and 11 data messages", udp(c, 43512, s, 51820, 12, 12*28+148+11*1312), &want{s, "wireguard", "udp", "port+size", 51820, 0.85}},
		{"WireGuard keepalives", udp(c, 43512, s, 51820, 5, 5*(32+28)), &want{s, "wireguard", "udp", "port+size", 51820, 0.85}},
		{"WireGuard initiation, IPv6: 148+8+40", udp(c6, 43600, s6, 51820, 1, 196), &want{s6, "wireguard", "udp", "port+size", 51820, 0.85}},
		{"51820 without counters is port alone", udp(c, 43512, s, 51820, 0, 0), &want{s, "wireguard", "udp", "port", 51820, 0.5}},
		{"51820, a packet not a multiple of 4", udp(c, 40000, s, 51820, 4, 250), nil},
		{"51820, packets shorter than 32", udp(c, 40000, s, 51820, 3, 3*(20+28)), nil},
		{"WireGuard initiations on unknown ports", udp(c, 50123, s, 38211, 3, 3*176), &want{s, "wireguard", "udp", "size", 38211, 0.7}},
		{"WireGuard response on unknown ports: the source serves", udp(s6, 39000, c6, 45000, 1, 140), &want{s6, "wireguard", "udp", "size", 39000, 0.7}},
		{"WireGuard initiation in an sFlow frame (FCS)", l2(udp(c, 50123, s, 38211, 1, 176+18)), &want{s, "wireguard", "udp", "size", 38211, 0.7}},
		{"WireGuard initiation in an sFlow frame (VLAN, FCS)", l2(udp(c, 43512, s, 51820, 1, 176+22)), &want{s, "wireguard", "udp", "port+size", 51820, 0.85}},
		{"148 bytes of UDP payload counted as an IP packet is not 148 of IP", udp(c, 50123, s, 38211, 1, 148), nil},
		{"an initiation followed by data on unknown ports is not judged", udp(c, 50123, s, 38211, 12, 14916), nil},
		{"too many repeats for a handshake", udp(c, 50123, s, 38211, 40, 40*176), nil},
		{"OpenVPN client reset with tls-auth SHA1: 42+28", udp(c, 51515, s, 1194, 1, 70), &want{s, "openvpn", "udp", "port+size", 1194, 0.85}},
		{"OpenVPN client reset, no tls-auth, retried", udp(c, 51515, s, 1194, 2, 2*42), &want{s, "openvpn", "udp", "port+size", 1194, 0.85}},
		{"OpenVPN server reset reply", udp(s, 1194, c, 51515, 1, 26+28), &want{s, "openvpn", "udp", "port+size", 1194, 0.85}},
		{"OpenVPN data is port alone", udp(c, 51515, s, 1194, 40, 41000), &want{s, "openvpn", "udp", "port", 1194, 0.5}},
		{"OpenVPN over TCP", tcp(c, 49200, s, 1194, 25, 9000), &want{s, "openvpn", "tcp", "port", 1194, 0.5}},
		{"L2TP", udp(c, 1701, s, 1701, 10, 1500), &want{s, "l2tp", "udp", "port", 1701, 0.5}},
		{"PPTP control", tcp(c, 49300, s, 1723, 8, 900), &want{s, "pptp", "tcp", "port", 1723, 0.5}},
		{"TCP 9001 is no protocol: real captures had web apps and raft there, Tor on 443", tcp(c, 49400, s, 9001, 30, 30000), nil},
		{"a SYN to 1723 alone is a probe, no server", tcp(c, 36050, s, 1723, 1, 44), nil},
		{"a SYN and its retry to 1194", tcp(c, 36050, s, 1194, 2, 120), nil},
		{"a SYN-ACK from 1723 alone", tcp(s, 1723, c, 36050, 1, 44), nil},
		{"a SYN counted as a frame (Suricata, sFlow) is a probe too", l2(tcp(c, 49300, s, 1723, 1, 78)), nil},
		{"a sampled sFlow frame carrying data is judged by port", l2(tcp(c, 49300, s, 1723, 1, 220)), &want{s, "pptp", "tcp", "port", 1723, 0.5}},
		{"PPTP control, 3 packets", tcp(c, 49300, s, 1723, 3, 3*52), &want{s, "pptp", "tcp", "port", 1723, 0.5}},
		{"two WireGuard responses alone on unknown ports (RTCP had this)", udp(s, 39000, c, 45000, 2, 2*120), nil},
		{"HTTPS on 443", tcp(c, 49500, s, 443, 10, 5000), nil},
		{"TCP 443 is not SSTP without more", tcp(c, 49500, s, 443, 1, 176), nil},
		{"a DNS answer of 176 bytes", udp(s, 53, c, 53000, 1, 176), nil},
		{"a QUIC packet of 176 bytes", udp(c, 50000, s, 443, 1, 176), nil},
		{"a 176-byte TCP packet", tcp(c, 40001, s, 40002, 1, 176), nil},
		{"a 148-byte flow on TCP 51820", tcp(c, 40001, s, 51820, 1, 176), nil},
		{"STUN 3478 is not judged by size", udp(c, 50000, s, 3478, 1, 176), nil},
		{"a DNS query from source port 51820", udp(c, 51820, s, 53, 1, 60), nil},
		{"a query from source port 1194 to HTTPS", tcp(c, 1194, s, 443, 10, 2000), nil},
		{"ICMP", proto(1, 4, 336), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := InferFlow(tt.in)
			if tt.want == nil {
				if ok {
					t.Fatalf("got %s %+v, want no protocol", m.Server, m.Flow)
				}
				return
			}
			w := tt.want
			if !ok {
				t.Fatalf("no protocol, want %s", w.protocol)
			}
			f := m.Flow
			if m.Server.String() != w.server || f.Protocol != w.protocol || f.Transport != w.transport || f.Basis != w.basis ||
				f.Port != w.port || f.Confidence != w.conf || f.Packets != tt.in.Packets || f.Bytes != tt.in.Bytes {
				t.Fatalf("got %s %+v, want %+v", m.Server, f, *w)
			}
			if (tt.in.IPProto == 50 || tt.in.IPProto == 47) != (f.IPProtocol == tt.in.IPProto) {
				t.Fatalf("ip_protocol %d for IP protocol %d", f.IPProtocol, tt.in.IPProto)
			}
		})
	}
}

// flowOutcome is what one flow of flowgen (testdata/flowgen) gives: the
// server address, protocol, port and basis, or "" for no protocol.
type flowOutcome struct{ ip, protocol, basis string }

// flowgenWant is the outcome of each flow flowgen sends, in its order.
var flowgenWant = []flowOutcome{
	{"198.51.100.20", "wireguard", "port+size"},
	{"198.51.100.20", "wireguard", "port+size"},
	{"198.51.100.20", "wireguard", "port+size"},
	{"203.0.113.30", "wireguard", "size"},
	{},
	{"203.0.113.40", "ipsec", "ip_protocol"},
	{"203.0.113.40", "ikev2", "port"},
	{"203.0.113.41", "ipsec", "port"},
	{"198.51.100.50", "openvpn", "port+size"},
	{"198.51.100.50", "openvpn", "port"},
	{"198.51.100.51", "openvpn", "port"},
	{"203.0.113.60", "l2tp", "port"},
	{"203.0.113.61", "pptp", "port"},
	{}, // GRE: skipped, GRE carries many tunnels
	{}, // TCP 9001: no rule
	{}, {}, {}, {}, {}, {},
	{"2001:db8:2::20", "wireguard", "port+size"},
	{"2001:db8:2::21", "wireguard", "size"},
	{},
}

// TestFlowAdapters_RealSamples runs each adapter on what goflow2 v2.2.6,
// nfdump 1.7.1 and nfdump 1.7.8 wrote of flowgen's flows: every format
// must give the same observations, and count the same flows as skipped.
func TestFlowAdapters_RealSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file   string
		ad     Adapter
		src    string
		header int // lines before the first flow
	}{
		{"goflow2-v2.2.6.ndjson", Goflow2, "goflow2", 0},
		{"nfdump-1.7.1.csv", NfdumpCSV, "nfdump", 1},
		{"nfdump-1.7.8.csv", NfdumpCSV, "nfdump", 1},
		{"nfdump-1.7.8-fast.csv", NfdumpCSV, "nfdump", 1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got := map[int]flowOutcome{}
			var skipped []int
			var bad []LineError
			opt := Options{Skipped: func(line int, _ string) { skipped = append(skipped, line) }}
			err := tt.ad(strings.NewReader(readFile(t, tt.file)), opt, func(line int, o Observation) error {
				if o.Source != tt.src || !strings.HasPrefix(o.ObservedAt, "2026-11-20T09:59:") {
					t.Errorf("line %d: source %q observed_at %q", line, o.Source, o.ObservedAt)
				}
				got[line-tt.header-1] = flowOutcome{o.IP, o.Flow.Protocol, o.Flow.Basis}
				return nil
			}, func(le LineError) { bad = append(bad, le) })
			if err != nil || len(bad) > 0 {
				t.Fatalf("err %v, malformed %v", err, bad)
			}
			var wantSkipped []int
			for i, w := range flowgenWant {
				if w.ip == "" {
					wantSkipped = append(wantSkipped, i+tt.header+1)
					continue
				}
				if got[i] != w {
					t.Errorf("flow %d (line %d): got %+v, want %+v", i, i+tt.header+1, got[i], w)
				}
			}
			if len(got) != len(flowgenWant)-len(wantSkipped) || !slices.Equal(skipped, wantSkipped) {
				t.Errorf("%d observations, skipped lines %v; want %d, %v", len(got), skipped, len(flowgenWant)-len(wantSkipped), wantSkipped)
			}
		})
	}
}

// TestGoflow2_DocSamples reads goflow2's README example and lines quoted
// in its issues: none is a VPN flow; goflow2 v1's CamelCase line has
// unspecified addresses (the exporter's template left them out).
func TestGoflow2_DocSamples(t *testing.T) {
	t.Parallel()
	var skipped []int
	r := runAdapter(t, Goflow2, readFile(t, "goflow2-docs.ndjson"), Options{Skipped: func(l int, _ string) { skipped = append(skipped, l) }})
	if len(r.obs) != 0 || !slices.Equal(skipped, []int{1, 2}) || !slices.Equal(badLines(r.bad), []int{3}) ||
		!strings.Contains(r.bad[0].Error(), "unspecified address") {
		t.Fatalf("observations %v, skipped %v, malformed %v", r.obs, skipped, r.bad)
	}
}

func TestGoflow2_Forms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line, wantAt string
	}{
		{"v2 default", `{"type":"NETFLOW_V9","time_received_ns":1795168800000000000,"time_flow_end_ns":1795168741000000000,"bytes":176,"packets":1,"src_addr":"192.0.2.10","dst_addr":"198.51.100.20","proto":"UDP","src_port":43512,"dst_port":51820}`, "2026-11-20T09:59:01Z"},
		{"proto as a number, no end time", `{"type":"IPFIX","time_received_ns":1795168800000000000,"bytes":176,"packets":1,"src_addr":"192.0.2.10","dst_addr":"198.51.100.20","proto":17,"src_port":43512,"dst_port":51820}`, "2026-11-20T10:00:00Z"},
		{"times rendered as RFC 3339 (mapping datetimenano)", `{"type":"IPFIX","time_received_ns":"2026-11-20T10:00:00.5Z","bytes":176,"packets":1,"src_addr":"192.0.2.10","dst_addr":"198.51.100.20","proto":"UDP","src_port":43512,"dst_port":51820}`, "2026-11-20T10:00:00Z"},
		{"goflow (Cloudflare) CamelCase, seconds", `{"Type":"NETFLOW_V9","TimeReceived":1795168800,"TimeFlowEnd":1795168741,"Bytes":176,"Packets":1,"SrcAddr":"192.0.2.10","DstAddr":"198.51.100.20","Etype":2048,"Proto":17,"SrcPort":43512,"DstPort":51820}`, "2026-11-20T09:59:01Z"},
		{"IPv4-mapped address", `{"time_received_ns":1795168800000000000,"bytes":176,"packets":1,"src_addr":"::ffff:192.0.2.10","dst_addr":"::ffff:198.51.100.20","proto":"UDP","src_port":43512,"dst_port":51820}`, "2026-11-20T10:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runAdapter(t, Goflow2, tt.line+"\n", Options{})
			if len(r.obs) != 1 || len(r.bad) != 0 {
				t.Fatalf("observations %v, malformed %v", r.obs, r.bad)
			}
			o := r.obs[0]
			if o.IP != "198.51.100.20" || o.ObservedAt != tt.wantAt || o.Flow.Protocol != "wireguard" || o.Flow.Basis != "port+size" {
				t.Fatalf("got %+v %+v", o, *o.Flow)
			}
		})
	}
}

func TestGoflow2_Malformed(t *testing.T) {
	t.Parallel()
	good := `{"time_flow_end_ns":1795168741000000000,"bytes":176,"packets":1,"src_addr":"192.0.2.10","dst_addr":"198.51.100.20","proto":"UDP","src_port":43512,"dst_port":51820}`
	in := strings.Join([]string{
		good,
		`{"bytes":176`,
		`{"time_flow_end_ns":1,"dst_addr":"198.51.100.20","proto":"UDP"}`,
		strings.Replace(good, `"198.51.100.20"`, `"198.51.100.300"`, 1),
		strings.Replace(good, `"UDP"`, `300`, 1),
		strings.Replace(good, `51820}`, `70000}`, 1),
		strings.Replace(good, `"bytes":176`, `"bytes":-1`, 1),
		strings.Replace(good, `"time_flow_end_ns":1795168741000000000`, `"time_flow_end_ns":0`, 1),
		strings.Replace(good, `"time_flow_end_ns":1795168741000000000`, `"time_flow_end_ns":"yesterday"`, 1),
		"[1,2]",
		"",
		"# a comment",
		good,
	}, "\n")
	r := runAdapter(t, Goflow2, in, Options{})
	if len(r.obs) != 2 || !slices.Equal(badLines(r.bad), []int{2, 3, 4, 5, 6, 7, 8, 9, 10}) {
		t.Fatalf("%d observations, malformed %v", len(r.obs), r.bad)
	}
}

func TestNfdumpCSV_Layouts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		wantObs  int
		wantBad  []int
	}{
		{"1.6 blocks separated by a blank line, then Summary",
			"ts,te,td,sa,da,sp,dp,pr,flg,fwd,stos,ipkt,ibyt\n" +
				"2026-11-20 09:59:01,2026-11-20 09:59:01,0.000,192.0.2.10,198.51.100.20,43512,51820,UDP,........,0,0,1,176\n" +
				"\n" +
				"ts,te,td,sa,da,sp,dp,pr,flg,fwd,stos,ipkt,ibyt\n" +
				"2026-11-20 09:59:05,2026-11-20 09:59:50,45.000,192.0.2.13,203.0.113.40,0,0,ESP  ,........,0,0,20,2800\n" +
				"Summary\nflows,bytes,packets,avg_bps,avg_pps,avg_bpp\n2,2976,21,0,0,0\n", 2, nil},
		{"1.6 pads a protocol number", "ts,te,td,sa,da,sp,dp,pr,ipkt,ibyt\n2026-11-20 09:59:05,2026-11-20 09:59:50,45.000,192.0.2.13,203.0.113.40,0,0,50   ,20,2800\n", 1, nil},
		{"No matching flows", "No matching flows\nfirstSeen,duration,proto,srcAddr,srcPort,dstAddr,dstPort,packets,bytes,flows\n", 0, nil},
		{"csv:%fmt with other columns first", "proto,dstPort,dstAddr,srcAddr,srcPort,lastSeen\n17,51820,198.51.100.20,192.0.2.10,43512,2026-11-20 09:59:01.000\n", 1, nil},
		{"not an nfdump header", "a,b,c\n1,2,3\n", 0, []int{1, 2}},
		{"bad records",
			"firstSeen,duration,proto,srcAddr,srcPort,dstAddr,dstPort,packets,bytes,flows\n" +
				"2026-11-20 09:59:01.000,0.000,17,192.0.2.10,43512,198.51.100.20,51820,1,176\n" +
				"2026-11-20 09:59:01.000,0.000,17,192.0.2.10,43512,198.51.100.999,51820,1,176,1\n" +
				"2026-11-20 09:59:01.000,0.000,17,0.0.0.0,43512,198.51.100.20,51820,1,176,1\n" +
				"2026-11-20 09:59:01.000,0.000,17,192.0.2.10,43512,198.51.100.20,75000,1,176,1\n" +
				"2026-11-20 09:59:01.000,0.000,999,192.0.2.10,43512,198.51.100.20,51820,1,176,1\n" +
				"2026-11-20 09:59:01.000,0.000,17,192.0.2.10,43512,198.51.100.20,51820,one,176,1\n" +
				"20.11.2026 09:59:01,0.000,17,192.0.2.10,43512,198.51.100.20,51820,1,176,1\n" +
				"0000-00-00 00:00:00.000,0.000,17,192.0.2.10,43512,198.51.100.20,51820,1,176,1\n" +
				"2026-11-20 09:59:01.000,soon,17,192.0.2.10,43512,198.51.100.20,51820,1,176,1\n" +
				"2026-11-20 09:59:01.000,0.000,17,192.0.2.10,43512,198.51.100.20,51820,1,176,1\n", 1, []int{2, 3, 4, 5, 6, 7, 8, 9, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runAdapter(t, NfdumpCSV, tt.in, Options{})
			if len(r.obs) != tt.wantObs || !slices.Equal(badLines(r.bad), tt.wantBad) {
				t.Fatalf("%d observations %v, malformed %v; want %d, lines %v", len(r.obs), r.obs, r.bad, tt.wantObs, tt.wantBad)
			}
		})
	}
}

func TestNfdumpCSV_DurationGivesTheEnd(t *testing.T) {
	t.Parallel()
	r := runAdapter(t, NfdumpCSV, readFile(t, "nfdump-1.7.8.csv"), Options{Source: "edge-1", Confidence: 0.6})
	// The third flow: first seen 09:59:02, 38 s; confidence capped at 0.6.
	o := r.obs[2]
	if o.ObservedAt != "2026-11-20T09:59:40Z" || o.Source != "edge-1" || o.Flow.Confidence != 0.6 {
		t.Fatalf("got %+v %+v", o, *o.Flow)
	}
	if r.obs[11].Flow.Protocol != "pptp" || r.obs[11].Flow.Confidence != 0.5 { // PPTP control: below the cap already
		t.Fatalf("PPTP confidence %+v", *r.obs[11].Flow)
	}
}
