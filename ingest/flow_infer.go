package ingest

import (
	"net/netip"
	"slices"
)

// IP protocol numbers the flow inference reads.
const (
	ipProtoTCP = 6
	ipProtoUDP = 17
	ipProtoGRE = 47 // read, named by no rule (docs: GRE carries many tunnels)
	ipProtoESP = 50
)

// FlowRecord is one unidirectional flow as a NetFlow/IPFIX/sFlow
// collector reports it: the adapters of flow formats fill it, InferFlow
// reads it.
type FlowRecord struct {
	Src, Dst         netip.Addr
	SrcPort, DstPort int
	// IPProto is the IP protocol number (6 TCP, 17 UDP, 47 GRE, 50 ESP).
	IPProto int
	// Packets and Bytes are the flow's counters; 0 when the record has none.
	// Bytes count from the IP header on (NetFlow dOctets, IPFIX
	// octetDeltaCount), unless L2 is set.
	Packets, Bytes int64
	// L2 says Bytes count whole Ethernet frames (header, maybe a VLAN tag,
	// FCS), as sFlow's sampled frame length does.
	L2 bool
}

// FlowMatch is what InferFlow recognised in a flow record.
type FlowMatch struct {
	// Server is the address that offers the protocol (the observation's IP).
	Server netip.Addr
	// Flow is the observation's flow member: Port is the server's port.
	Flow Flow
}

// Confidence of each basis of an inferred protocol (docs/ingest-enrich.md
// "Protocol inference"). A row of flowRules may set a lower one.
const (
	confIPProtocol = 0.9
	confPortSize   = 0.85
	confSize       = 0.7
	confPort       = 0.5
)

// sizeCheck is what a rule's packet-size test says of a flow.
type sizeCheck int

const (
	sizeUnknown  sizeCheck = iota // no counters, or the test does not apply
	sizeMatch                     // the sizes are the protocol's
	sizeMismatch                  // the sizes cannot be the protocol's
)

// flowRule is one row of the inference table.
type flowRule struct {
	protocol string
	ipProto  int
	// port is the server's port; 0 for rules on the IP protocol alone.
	port int
	// fileTransport and filePort are where a portless protocol (ESP)
	// is filed in the asset list: the port of its control channel.
	fileTransport string
	filePort      int
	// conf is the confidence of the rule's own basis (port or
	// ip_protocol); 0 = the basis's default.
	conf float64
	// size, when set, tests the payload sizes: a match raises the basis to
	// port+size; a mismatch vetoes the rule when strict.
	size   func(p payloads, toServer bool) sizeCheck
	strict bool
}

// flowRules is the inference table, tried in order. docs/ingest-enrich.md
// shows it; keep the two in step.
var flowRules = []flowRule{
	{protocol: "ipsec", ipProto: ipProtoESP, fileTransport: "udp", filePort: 500},
	{protocol: "ikev2", ipProto: ipProtoUDP, port: 500},
	{protocol: "ipsec", ipProto: ipProtoUDP, port: 4500},
	{protocol: "wireguard", ipProto: ipProtoUDP, port: 51820, size: wireguardFits, strict: true},
	// Tailscale's default port: WireGuard and Tailscale's own discovery
	// messages on one socket, so sizes that are not WireGuard's do not veto.
	{protocol: "wireguard", ipProto: ipProtoUDP, port: 41641, size: wireguardFits},
	{protocol: "openvpn", ipProto: ipProtoUDP, port: 1194, size: openvpnReset},
	{protocol: "openvpn", ipProto: ipProtoTCP, port: 1194},
	{protocol: "l2tp", ipProto: ipProtoUDP, port: 1701},
	{protocol: "pptp", ipProto: ipProtoTCP, port: 1723},
}

// notWireGuard are registered UDP ports of protocols whose packets can
// have a WireGuard handshake's size; a flow on one is not judged by size.
// The second line are other tunnels (GTP-C, GTP-U, Teredo, GRE-in-UDP,
// VXLAN, VXLAN-GPE, AYIYA, Geneve): real captures of each had flows of
// one 148- or 92-byte packet.
var notWireGuard = []int{1812, 1813, 1900, 3478, 3479, 3702, 5004, 5005, 5060, 5061, 5349, 5353, 5355, 19302,
	2123, 2152, 3544, 4754, 4789, 4790, 5072, 6081}

// InferFlow decides which side of r is the server and which protocol it
// speaks, from the IP protocol, the ports and the packet sizes, by the
// table in docs/ingest-enrich.md. ok is false when no protocol is
// recognised: such a flow is skipped and counted, not stored.
func InferFlow(r FlowRecord) (m FlowMatch, ok bool) {
	p := r.payloads()
	for i := range flowRules {
		rule := &flowRules[i]
		if rule.ipProto != r.IPProto {
			continue
		}
		if rule.port == 0 {
			// No ports: a unidirectional record cannot tell the gateway
			// from its peer; the destination is named (both ends are,
			// when the exporter sees both directions).
			return FlowMatch{Server: r.Dst, Flow: Flow{Port: rule.filePort, Transport: rule.fileTransport,
				Protocol: rule.protocol, IPProtocol: r.IPProto, Basis: "ip_protocol", Confidence: confOr(rule.conf, confIPProtocol),
				Packets: r.Packets, Bytes: r.Bytes}}, true
		}
		var server netip.Addr
		var toServer bool
		switch {
		case r.DstPort == rule.port:
			server, toServer = r.Dst, true
			if wellKnownElsewhere(r.SrcPort, rule.port, r.IPProto) {
				continue
			}
		case r.SrcPort == rule.port:
			server = r.Src
			if wellKnownElsewhere(r.DstPort, rule.port, r.IPProto) {
				continue
			}
		default:
			continue
		}
		if probeOnly(r) {
			continue
		}
		basis, conf := "port", confOr(rule.conf, confPort)
		if rule.size != nil {
			switch rule.size(p, toServer) {
			case sizeMatch:
				basis, conf = "port+size", confPortSize
			case sizeMismatch:
				if rule.strict {
					continue
				}
			}
		}
		return FlowMatch{Server: server, Flow: Flow{Port: rule.port, Transport: transportName(r.IPProto),
			Protocol: rule.protocol, Basis: basis, Confidence: conf, Packets: r.Packets, Bytes: r.Bytes}}, true
	}
	return wireguardBySize(r, p)
}

// probeOnly reports whether a TCP record is a connection attempt or its
// answer alone: at most 2 packets of at most 60 bytes each (IP and TCP
// headers with options, no data: a SYN, a SYN-ACK or a RST, and its
// retry), 82 with an Ethernet header, VLAN tag and FCS. A port scan sends
// such flows to every port, so they show no server. In sampled sFlow a
// session's bare ACK looks the same; its other samples carry data.
func probeOnly(r FlowRecord) bool {
	limit := int64(60)
	if r.L2 {
		limit += 22
	}
	return r.IPProto == ipProtoTCP && r.Packets > 0 && r.Packets <= 2 && r.Bytes <= limit*r.Packets
}

// wellKnownElsewhere reports whether the other side's port marks that side
// as the server of another service: a port below 1024 that is no rule's,
// facing a rule's port of 1024 or above (an ephemeral port that happens
// to be a VPN port).
func wellKnownElsewhere(other, rulePort, ipProto int) bool {
	if other == 0 || other >= 1024 || rulePort < 1024 {
		return false
	}
	for _, r := range flowRules {
		if r.port == other && r.ipProto == ipProto {
			return false
		}
	}
	return true
}

// wireguardBySize recognises a WireGuard handshake on ports no rule
// names: every packet of the flow an initiation (the destination is the
// responder, so the server) or every packet a response (the source is).
func wireguardBySize(r FlowRecord, p payloads) (FlowMatch, bool) {
	if r.IPProto != ipProtoUDP || r.SrcPort < 1024 || r.DstPort < 1024 ||
		slices.Contains(notWireGuard, r.SrcPort) || slices.Contains(notWireGuard, r.DstPort) ||
		r.Packets < 1 || r.Packets > maxHandshakeRepeats {
		return FlowMatch{}, false
	}
	var server netip.Addr
	var port int
	switch {
	case p.each(wgInitiation):
		server, port = r.Dst, r.DstPort
	case r.Packets == 1 && p.each(wgResponse):
		// One response: a responder answers each initiation once, then
		// sends data; RTCP on random ports had two 92-byte packets.
		server, port = r.Src, r.SrcPort
	default:
		return FlowMatch{}, false
	}
	return FlowMatch{Server: server, Flow: Flow{Port: port, Transport: "udp", Protocol: "wireguard",
		Basis: "size", Confidence: confSize, Packets: r.Packets, Bytes: r.Bytes}}, true
}

// WireGuard message sizes (UDP payload, bytes), from the protocol's
// whitepaper: handshake initiation 148, response 92, cookie reply 64,
// transport data 16 header + padded plaintext (a multiple of 16) + 16 tag.
const (
	wgInitiation = 148
	wgResponse   = 92
	wgCookie     = 64
	wgMinData    = 32
	// maxHandshakeRepeats bounds a flow of handshake messages alone: an
	// initiator retries every 5 s for 90 s.
	maxHandshakeRepeats = 20
)

// wireguardFits reports whether every packet of the flow can be a
// WireGuard message: each is a multiple of 4 bytes (148, 92, 64, 32+16k)
// and none is shorter than 32.
func wireguardFits(p payloads, _ bool) sizeCheck {
	if !p.known() {
		return sizeUnknown
	}
	for _, total := range p.totals {
		if total >= wgMinData*p.n && total%4 == 0 {
			return sizeMatch
		}
	}
	return sizeMismatch
}

// OpenVPN's first control packet (UDP payload, bytes), from the packet
// layout in OpenVPN's protocol notes: opcode/key id 1, session id 8,
// [HMAC, packet id 4, time 4 with tls-auth], ack count 1, [acked packet
// id 4 and the peer's session id 8 in the server's reply], packet id 4.
// Without tls-auth, with tls-auth HMAC-SHA1 (20), with HMAC-SHA256 (32).
var (
	openvpnClientReset = []int64{14, 42, 54}
	openvpnServerReset = []int64{26, 54, 66}
)

// openvpnReset matches a flow of hard-reset packets alone (the first
// packet and its retries); any other OpenVPN flow stays on port basis.
func openvpnReset(p payloads, toServer bool) sizeCheck {
	if !p.known() || p.n > 5 {
		return sizeUnknown
	}
	sizes := openvpnServerReset
	if toServer {
		sizes = openvpnClientReset
	}
	for _, s := range sizes {
		if p.each(s) {
			return sizeMatch
		}
	}
	return sizeUnknown
}

// payloads are a flow's UDP payload bytes in total, under each header
// overhead the record's byte count may include.
type payloads struct {
	n      int64
	totals []int64
}

func (p payloads) known() bool { return p.n > 0 && len(p.totals) > 0 }

// each reports whether every packet carried exactly size bytes of payload.
func (p payloads) each(size int64) bool {
	if !p.known() {
		return false
	}
	for _, t := range p.totals {
		if t == size*p.n {
			return true
		}
	}
	return false
}

// payloads subtracts the headers below the UDP payload from the flow's
// bytes: IPv4 20 or IPv6 40, UDP 8 and, for whole frames, Ethernet 14
// with or without a 4-byte FCS and a 4-byte VLAN tag.
func (r FlowRecord) payloads() payloads {
	if r.Packets <= 0 || r.Bytes <= 0 || r.IPProto != ipProtoUDP {
		return payloads{}
	}
	ip := int64(20)
	if r.Dst.Is6() && !r.Dst.Is4In6() {
		ip = 40
	}
	l2 := []int64{0}
	if r.L2 {
		l2 = []int64{14, 18, 22}
	}
	p := payloads{n: r.Packets}
	for _, l := range l2 {
		if t := r.Bytes - r.Packets*(ip+8+l); t >= 0 {
			p.totals = append(p.totals, t)
		}
	}
	return p
}

func transportName(ipProto int) string {
	if ipProto == ipProtoTCP {
		return "tcp"
	}
	return "udp"
}

func confOr(c, def float64) float64 {
	if c > 0 {
		return c
	}
	return def
}

// flowUnrecognised is the reason a flow record in which no protocol is
// recognised is skipped (Options.Skipped): well formed, not stored.
const flowUnrecognised = "flow with no protocol recognised"
