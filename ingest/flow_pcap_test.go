package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// pcapFlow is one flow of the nfdump csv that softflowd and nfcapd wrote
// from a real capture (ingest/testdata/flowpcap, SOURCES.md), with what
// InferFlow made of it.
type pcapFlow struct {
	file string
	rec  FlowRecord
	got  string // protocol inferred, "" none
	want string // the capture's truth, "" none
}

// pcapTruth says which protocol a flow of a positive capture carries: the
// capture's VPN flows (by IP protocol or port); any other flow in it
// (ICMP, DNS) carries none. Negative captures (file names neg-*) carry
// none at all.
func pcapTruth(file string, r FlowRecord) string {
	ports := func(p int) bool { return r.SrcPort == p || r.DstPort == p }
	switch {
	case strings.HasPrefix(file, "pos-wg-wireguard"):
		if r.IPProto == ipProtoUDP && ports(51194) {
			return "wireguard"
		}
	case strings.HasPrefix(file, "pos-wg-tailscale"):
		if r.IPProto == ipProtoUDP && ports(41641) {
			return "wireguard"
		}
	case strings.HasPrefix(file, "pos-ovpn-"):
		if ports(1194) || ports(1198) {
			return "openvpn"
		}
	case strings.HasPrefix(file, "pos-ike-"):
		if r.IPProto == ipProtoUDP && ports(500) {
			return "ikev2"
		}
	case strings.HasPrefix(file, "pos-ipsec-"):
		if r.IPProto == ipProtoESP {
			return "ipsec"
		}
	case strings.HasPrefix(file, "pos-pptp-"):
		if r.IPProto == ipProtoGRE || ports(1723) {
			return "pptp"
		}
	case strings.HasPrefix(file, "vpn-n-"):
		return ndpiTruth(file, r, ports)
	}
	return ""
}

// ndpiTruth is pcapTruth of nDPI's VPN captures (vpn-n-*), which mix the
// VPN's flows with the host's other traffic. "?" marks a flow that is
// neither scored nor a negative: a VPN no rule names (SoftEther, tinc,
// AnyConnect), or one whose protocol the capture does not say
// (ProtonVPN on 443, TunnelBear's TLS).
func ndpiTruth(file string, r FlowRecord, ports func(int) bool) string {
	other := ports(53) || ports(67) || ports(137) || ports(138) || ports(546) || ports(5353) || ports(17500) ||
		r.IPProto != ipProtoTCP && r.IPProto != ipProtoUDP && r.IPProto != ipProtoESP
	switch strings.TrimPrefix(file, "vpn-n-") {
	case "esp", "ipsec_isakmp_esp", "ah":
		switch {
		case r.IPProto == ipProtoESP || r.IPProto == ipProtoUDP && ports(4500):
			return "ipsec"
		case r.IPProto == ipProtoUDP && ports(500):
			return "ikev2"
		}
	case "mullvad_wireguard", "wireguard":
		if r.IPProto == ipProtoUDP {
			return "wireguard"
		}
	case "tunnelbear":
		if r.IPProto == ipProtoUDP && ports(51820) {
			return "wireguard"
		}
		if !other {
			return "?"
		}
	case "openvpn", "443-opvn", "openvpn_nohmac", "openvpn_nohmac_tcp", "openvpn_obfuscated", "openvpn-tlscrypt":
		if !other {
			return "openvpn"
		}
	case "pptp":
		if ports(1723) {
			return "pptp"
		}
	case "tor":
		if r.IPProto == ipProtoTCP && ports(443) {
			return "tor"
		}
	default: // gre, softether, tinc, anyconnect-vpn, protonvpn
		if !other {
			return "?"
		}
	}
	return ""
}

// readPcapFlows reads every nfdump csv of testdata/flowpcap through the
// nfdump adapter's parser and InferFlow.
func readPcapFlows(t *testing.T) []pcapFlow {
	t.Helper()
	files, err := filepath.Glob("testdata/flowpcap/*.csv")
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	var out []pcapFlow
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".csv")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var layout *nfdumpLayout
		width := 0
		for i, line := range strings.Split(string(data), "\n") {
			fields := splitComma(nil, []byte(strings.TrimSpace(line)))
			if line == "" || line == "Summary" || strings.HasPrefix(line, "flows,") {
				if line == "Summary" {
					break
				}
				continue
			}
			if layout == nil {
				l, err := nfdumpHeader(fields)
				if err != nil {
					t.Fatalf("%s:%d: %v", path, i+1, err)
				}
				layout, width = &l, len(fields)
				continue
			}
			if len(fields) != width {
				continue // "No matching flows"
			}
			rec, _, err := layout.record(fields)
			if err != nil {
				// The adapter reports such a line as malformed (DHCP's
				// 0.0.0.0 source, say); it is no flow to judge.
				t.Logf("%s:%d: %v", path, i+1, err)
				continue
			}
			f := pcapFlow{file: name, rec: rec, want: pcapTruth(name, rec)}
			if m, ok := InferFlow(rec); ok {
				f.got = m.Flow.Protocol
			}
			out = append(out, f)
		}
	}
	return out
}

// pcapTally counts, per true protocol, the flows attributed right, wrong
// and missed, and the flows without one that were attributed (false
// positives, by the protocol named).
func pcapTally(flows []pcapFlow) string {
	type row struct{ flows, right, wrong, missed int }
	rows := map[string]*row{}
	fp := map[string]int{}
	neg := 0
	var unscored []string
	for _, f := range flows {
		if f.want == "?" {
			if f.got != "" {
				unscored = append(unscored, f.file+" "+f.got)
			}
			continue
		}
		if f.want == "" {
			neg++
			if f.got != "" {
				fp[f.got]++
			}
			continue
		}
		r := rows[f.want]
		if r == nil {
			r = &row{}
			rows[f.want] = r
		}
		r.flows++
		switch f.got {
		case f.want:
			r.right++
		case "":
			r.missed++
		default:
			r.wrong++
		}
	}
	var b strings.Builder
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r := rows[k]
		fmt.Fprintf(&b, "%s: %d flows, %d right, %d wrong, %d missed\n", k, r.flows, r.right, r.wrong, r.missed)
	}
	fmt.Fprintf(&b, "negative flows: %d, attributed: %v\n", neg, fp)
	fmt.Fprintf(&b, "unscored VPN flows attributed: %v\n", unscored)
	return b.String()
}

// TestInferFlow_RealCaptures judges every flow softflowd exported (NetFlow
// v9, through nfcapd and nfdump 1.7.1 -o csv) from real captures: no flow
// of a negative capture is attributed, no flow gets a wrong protocol, and
// the per-protocol recall is the figure docs/ingest-enrich.md "On real
// captures" states.
func TestInferFlow_RealCaptures(t *testing.T) {
	t.Parallel()
	flows := readPcapFlows(t)
	tally := pcapTally(flows)
	t.Log("\n" + tally)
	for _, f := range flows {
		if f.got != "" && f.got != f.want && f.want != "?" || os.Getenv("FLOWPCAP_ALL") != "" && strings.HasPrefix(f.file, "vpn") {
			t.Errorf("%s: %v:%d > %v:%d proto %d, %d packets %d bytes: got %q, want %q",
				f.file, f.rec.Src, f.rec.SrcPort, f.rec.Dst, f.rec.DstPort, f.rec.IPProto, f.rec.Packets, f.rec.Bytes, f.got, f.want)
		}
	}
	want := `ikev2: 32 flows, 32 right, 0 wrong, 0 missed
ipsec: 41 flows, 41 right, 0 wrong, 0 missed
openvpn: 44 flows, 22 right, 0 wrong, 22 missed
pptp: 2 flows, 2 right, 0 wrong, 0 missed
tor: 15 flows, 0 right, 0 wrong, 15 missed
wireguard: 12 flows, 8 right, 0 wrong, 4 missed
negative flows: 5073, attributed: map[]
unscored VPN flows attributed: []
`
	if tally != want {
		t.Errorf("tally:\n%s\nwant:\n%s", tally, want)
	}
}

// TestInferFlow_RealCaptureFlows pins single flows of the real captures:
// what each rule makes of them, and the limits the docs state.
func TestInferFlow_RealCaptureFlows(t *testing.T) {
	t.Parallel()
	flows := readPcapFlows(t)
	tests := []struct {
		file             string
		from             string // the flow's source, "" any
		srcPort, dstPort int
		protocol, basis  string
		server           string // "" with a protocol: each flow's destination
	}{
		// Tailscale's default port, both ends 41641: WireGuard and disco
		// messages, so the sizes of one direction are not all WireGuard's.
		{"pos-wg-tailscale_linux", "18.196.71.179", 41641, 41641, "wireguard", "port", "192.168.88.3"},
		{"pos-wg-tailscale_linux", "192.168.88.3", 41641, 41641, "wireguard", "port+size", "18.196.71.179"},
		// A WireGuard session on 51194: 90 packets whose total is a
		// multiple of 4, as 42 of 124 negative UDP flows on high ports are.
		{"pos-wg-wireguard", "", 45965, 51194, "", "", ""},
		{"pos-wg-wireguard", "", 51194, 45965, "", "", ""},
		// OpenVPN on 1198 (a provider's port): no rule's port.
		{"pos-ovpn-openvpn", "", 50568, 1198, "", "", ""},
		{"pos-ovpn-openvpn_udp_hmac_256", "192.168.88.5", 61984, 1194, "openvpn", "port", "68.235.38.75"},
		{"pos-ovpn-openvpn_tcp_nontlsauth", "192.168.56.103", 39772, 1194, "openvpn", "port", "192.168.56.102"},
		{"pos-ike-sv-ikev1-main", "192.168.12.1", 500, 500, "ikev2", "port", "192.168.12.2"},
		// One 148-byte AYIYA reply and one 92-byte GTP-U packet: sizes
		// of WireGuard's handshake on other tunnels' registered ports.
		{"neg-z-tunnels_ayiya3", "", 5072, 53796, "", "", ""},
		{"neg-z-tunnels_gtp_gtp8_teredo", "", 2152, 2152, "", "", ""},
		// nDPI's captures: a SYN scan of 1723, a web app on 9001, two
		// 92-byte RTCP packets, Mullvad's WireGuard on SIP's port (a
		// limit), OpenVPN on TCP 443 (a limit), IKE and NAT-T.
		{"neg-n-synscan", "", 36050, 1723, "", "", ""},
		{"neg-n-log4j-webapp-exploit", "", 55408, 9001, "", "", ""},
		{"neg-n-rtcp_multiple_pkts_in_the_same_datagram", "", 31601, 25963, "", "", ""},
		{"vpn-n-mullvad_wireguard", "", 22595, 5060, "", "", ""},
		{"vpn-n-openvpn", "", 60140, 443, "", "", ""},
		{"vpn-n-wireguard", "10.9.0.1", 43462, 51820, "wireguard", "port+size", "10.9.0.2"},
		{"vpn-n-ipsec_isakmp_esp", "192.168.2.100", 14500, 4500, "ipsec", "port", ""},
		{"vpn-n-pptp", "", 41366, 1723, "pptp", "port", "191.101.61.1"},
		// GRE of an Aruba controller, of ERSPAN and of a plain tunnel.
		{"neg-z-tunnels_gre-aruba", "", 0, 0, "", "", ""},
		{"neg-z-tunnels_gre-erspan3-dot1q", "", 0, 0, "", "", ""},
		{"neg-z-tunnels_gre-sample", "", 0, 0, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d-%d", tt.file, tt.srcPort, tt.dstPort), func(t *testing.T) {
			n := 0
			for _, f := range flows {
				if f.file != tt.file || f.rec.SrcPort != tt.srcPort || f.rec.DstPort != tt.dstPort {
					continue
				}
				if tt.from != "" && f.rec.Src.String() != tt.from {
					continue
				}
				n++
				m, ok := InferFlow(f.rec)
				if tt.protocol == "" {
					if ok {
						t.Errorf("%v > %v: got %s (%s), want none", f.rec.Src, f.rec.Dst, m.Flow.Protocol, m.Flow.Basis)
					}
					continue
				}
				server := tt.server
				if server == "" {
					server = f.rec.Dst.String() // "": the flow's destination
				}
				if !ok || m.Flow.Protocol != tt.protocol || m.Flow.Basis != tt.basis || m.Server.String() != server {
					t.Errorf("%v > %v: got %v %+v, want %s %s server %s", f.rec.Src, f.rec.Dst, ok, m, tt.protocol, tt.basis, tt.server)
				}
			}
			if n == 0 {
				t.Fatal("no such flow in the capture")
			}
		})
	}
}
