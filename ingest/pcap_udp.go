package ingest

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"slices"
	"strings"
)

// Confidence of a protocol recognised in the packets themselves: a
// handshake answered as the protocol answers (WireGuard's response naming
// the initiation's index, OpenVPN's server reset acknowledging the
// client's session, an IKE exchange), and a weaker one for packets that
// have the protocol's layout but no such answer.
const (
	confPayload       = 0.95
	confPayloadLayout = 0.8
)

// udpFlow is what a UDP flow's packets showed, read packet by packet (no
// payload is kept but the few bytes a banner probe quotes).
type udpFlow struct {
	seen [2]int // packets with payload per end
	// first holds each end's first payload (up to 256 bytes).
	first [2][]byte

	// WireGuard: the last initiation each end sent, the answer.
	wgInit       [2][]byte
	wgAnswer     []byte
	wgServer     int // end that answered an initiation, -1 none
	wgData       [2]int
	wgRecv       [2][]uint32 // receiver indices of transport data, per end
	wgHandshakes int         // handshake messages seen (each may start a session)
	wgInvalid    bool

	ike      bool // an IKE message was read
	ikeInit  int  // the initiator's end, -1 unknown
	ikeVIDs  [2][]string
	snmp     string // sysDescr of a response
	snmpFrom int

	// DTLS: each end's handshake messages in the clear, reassembled from
	// their fragments (by message_seq), in TLS's framing.
	dtls [2]dtlsMessages

	// OpenVPN: each end's control packets (P_CONTROL_V1), kept when the
	// end's first packet was a hard reset, up to ovpnCtlBudget.
	ovpnCtl  [2][][]byte
	ovpnKept [2]int
}

// ovpnCtlBudget is the most of one end's OpenVPN control packets kept
// (the TLS handshake in them: a chain of certificates fits).
const ovpnCtlBudget = 64 << 10

// ovpnControlV1 is OpenVPN's control packet opcode.
const ovpnControlV1 = 4

// dtlsMessages are one end's DTLS handshake messages in the clear: the
// whole ones in TLS's framing (type, 3-byte length, body), which the TLS
// reading takes as a stream's, and the one being joined from fragments.
type dtlsMessages struct {
	done    []byte
	cur     []byte // the fragments of the message being joined
	curType byte
	curLen  int
	curSeq  int
	seen    map[[2]int]bool // message_seq and type of the messages done
	stopped bool            // past the handshake in the clear, or past the budget
}

// dtlsBudget is the most of one end's DTLS handshake kept (a chain of
// certificates fits).
const dtlsBudget = 64 << 10

// add reads the handshake records of a DTLS datagram (RFC 6347: a
// 13-byte record header, then messages whose 12-byte header says which
// part of which message the fragment is). A message's fragments are
// taken in order; a retransmitted message is taken once, and the reading
// stops at the first ChangeCipherSpec or application data record (what
// follows is encrypted).
func (d *dtlsMessages) add(b []byte) {
	for !d.stopped && len(b) >= 13 {
		if b[1] != 0xfe && (b[1] != 0x01 || b[2] != 0x00) { // DTLS 1.x, or Cisco's pre-standard 0x0100
			return
		}
		typ, n := b[0], int(binary.BigEndian.Uint16(b[11:13]))
		if len(b) < 13+n {
			return
		}
		rec := b[13 : 13+n]
		b = b[13+n:]
		if typ != 22 {
			d.stopped = typ == 20 || typ == 23
			continue
		}
		for len(rec) >= 12 {
			mt := rec[0]
			length := int(rec[1])<<16 | int(rec[2])<<8 | int(rec[3])
			seq := int(binary.BigEndian.Uint16(rec[4:6]))
			off := int(rec[6])<<16 | int(rec[7])<<8 | int(rec[8])
			flen := int(rec[9])<<16 | int(rec[10])<<8 | int(rec[11])
			if len(rec) < 12+flen {
				return
			}
			frag := rec[12 : 12+flen]
			rec = rec[12+flen:]
			if len(d.done)+4+length > dtlsBudget {
				d.stopped = true
				return
			}
			switch {
			case d.seen[[2]int{seq, int(mt)}] || off+flen > length:
				continue // a retransmission, or not a fragment of its message
			case off == 0 && (len(d.cur) == 0 || seq != d.curSeq):
				d.cur, d.curType, d.curLen, d.curSeq = d.cur[:0], mt, length, seq
			case seq != d.curSeq || mt != d.curType || off != len(d.cur):
				continue // out of order: the message is not joined
			}
			d.cur = append(d.cur, frag...)
			if len(d.cur) == d.curLen {
				if d.seen == nil {
					d.seen = map[[2]int]bool{}
				}
				d.seen[[2]int{seq, int(mt)}] = true
				d.done = append(d.done, mt, byte(length>>16), byte(length>>8), byte(length))
				d.done = append(d.done, d.cur...)
				d.cur = d.cur[:0]
			}
		}
	}
}

// udpSize is how many bytes a UDP flow keeps (counted in the reader's
// budget).
func (c *pcapConn) udpSize() int {
	u := c.udp
	if u == nil {
		return 0
	}
	n := len(u.first[0]) + len(u.first[1]) + len(u.wgInit[0]) + len(u.wgInit[1]) + len(u.wgAnswer) + len(u.snmp)
	for i, d := range u.dtls {
		n += len(d.done) + len(d.cur) + u.ovpnKept[i]
	}
	for _, vids := range u.ikeVIDs {
		for _, v := range vids {
			n += len(v)
		}
	}
	return n
}

func (c *pcapConn) udpPacket(side int, p *pkt) {
	u := c.udp
	if u == nil {
		u = &udpFlow{wgServer: -1, ikeInit: -1, snmpFrom: -1}
		c.udp = u
	}
	b := p.payload
	if len(b) == 0 {
		return
	}
	if u.seen[side] == 0 {
		u.first[side] = bytes.Clone(b[:min(len(b), 256)])
	}
	u.seen[side]++
	if !p.cut {
		u.wireguard(side, b)
	}
	sport, dport := p.src.Port(), p.dst.Port()
	switch {
	case sport == 500 || dport == 500:
		u.isakmp(side, b)
	case sport == 4500 || dport == 4500:
		// NAT traversal: IKE after four zero bytes (the non-ESP marker),
		// ESP otherwise.
		if len(b) > 4 && binary.BigEndian.Uint32(b) == 0 {
			u.isakmp(side, b[4:])
		}
	}
	if sport == 161 && u.snmp == "" {
		if d, ok := snmpSysDescr(b); ok {
			u.snmp, u.snmpFrom = d, side
		}
	}
	if len(b) >= 13 && b[0] >= 20 && b[0] <= 23 && !p.cut {
		u.dtls[side].add(b)
	}
	if op := u.first[side][0] >> 3; b[0]>>3 == ovpnControlV1 && !p.cut && (op == ovpnHardResetClientV2 || op == ovpnHardResetClientV3 || op == ovpnHardResetServerV2) &&
		u.ovpnKept[side]+len(b) <= ovpnCtlBudget {
		u.ovpnCtl[side] = append(u.ovpnCtl[side], bytes.Clone(b))
		u.ovpnKept[side] += len(b)
	}
}

// WireGuard message types and sizes (the protocol's whitepaper, section
// 5.4): a type byte, three reserved zero bytes, then fixed fields. Some
// providers' variants send longer handshake messages (TunnelBear's
// initiation is 204 bytes, its response 100): the handshake is told by
// the answer naming the initiation's sender index, so a handshake message
// may be longer than the protocol's, up to wgMaxHandshake.
func (u *udpFlow) wireguard(side int, b []byte) {
	if u.wgInvalid {
		return
	}
	if len(b) < 4 || b[1] != 0 || b[2] != 0 || b[3] != 0 {
		u.wgInvalid = true
		return
	}
	switch b[0] {
	case 1:
		if len(b) < wgInitiation || len(b) > wgMaxHandshake {
			u.wgInvalid = true
			return
		}
		u.wgInit[side] = bytes.Clone(b)
		u.wgHandshakes++
	case 2, 3:
		// A response, or a cookie reply (a responder under load): its
		// receiver index (at 8 in a response, 4 in a cookie reply) is the
		// initiation's sender index.
		at := 8
		if b[0] == 3 {
			at = 4
			if len(b) != wgCookie {
				u.wgInvalid = true
				return
			}
		} else if len(b) < wgResponse || len(b) > wgMaxHandshake {
			u.wgInvalid = true
			return
		}
		u.wgHandshakes++
		if in := u.wgInit[1-side]; in != nil && bytes.Equal(b[at:at+4], in[4:8]) && u.wgServer < 0 {
			u.wgServer, u.wgAnswer = side, bytes.Clone(b)
		}
	case 4:
		// Padded to a multiple of 16, but not past the MTU: any length
		// from the empty keepalive's 32 on.
		if len(b) < wgMinData {
			u.wgInvalid = true
			return
		}
		// One receiver index per session, a new one per handshake: a few
		// before the capture, and one more for each handshake it holds
		// (peers rekey every two minutes).
		if r := binary.LittleEndian.Uint32(b[4:8]); !slices.Contains(u.wgRecv[side], r) {
			if len(u.wgRecv[side]) >= 4+u.wgHandshakes {
				u.wgInvalid = true
				return
			}
			u.wgRecv[side] = append(u.wgRecv[side], r)
		}
		u.wgData[side]++
	default:
		u.wgInvalid = true
	}
}

// wgMaxHandshake is the longest handshake message taken.
const wgMaxHandshake = 512

// isakmp reads an ISAKMP (IKEv1, RFC 2408) or IKEv2 (RFC 7296) message:
// who initiated, and the vendor ID payloads the message carries in clear.
func (u *udpFlow) isakmp(side int, b []byte) {
	if len(b) < 28 {
		return
	}
	major := b[17] >> 4
	exch, flags := b[18], b[19]
	if int(binary.BigEndian.Uint32(b[24:28])) != len(b) || major < 1 || major > 2 {
		return
	}
	switch {
	case major == 1 && (exch < 1 || exch > 6 && exch < 32):
		return
	case major == 2 && (exch < 34 || exch > 43):
		return
	}
	u.ike = true
	zeroResp := binary.BigEndian.Uint64(b[8:16]) == 0
	switch {
	case major == 2 && flags&0x20 != 0:
		u.ikeInit = 1 - side // a response
	case major == 2 && flags&0x08 != 0, major == 1 && zeroResp:
		u.ikeInit = side
	}
	if major == 1 && flags&0x01 != 0 {
		return // encrypted after the header
	}
	next, off := b[16], 28
	for next != 0 && off+4 <= len(b) {
		n := int(binary.BigEndian.Uint16(b[off+2 : off+4]))
		if n < 4 || off+n > len(b) {
			return
		}
		switch next {
		case 13, 43: // vendor ID (IKEv1, IKEv2)
			if v := hex.EncodeToString(b[off+4 : off+n]); v != "" && !slices.Contains(u.ikeVIDs[side], v) && len(u.ikeVIDs[side]) < 32 {
				u.ikeVIDs[side] = append(u.ikeVIDs[side], v)
			}
		case 46: // IKEv2's encrypted payload: the rest is in it
			return
		}
		next, off = b[off], off+n
	}
}

// snmpSysDescr reads sysDescr (1.3.6.1.2.1.1.1.0) from an SNMPv1/v2c
// GetResponse.
func snmpSysDescr(b []byte) (string, bool) {
	msg, _, ok := berRead(b, 0x30)
	if !ok {
		return "", false
	}
	if _, msg, ok = berRead(msg, 0x02); !ok { // version
		return "", false
	}
	if _, msg, ok = berRead(msg, 0x04); !ok { // community
		return "", false
	}
	pdu, _, ok := berRead(msg, 0xa2) // GetResponse
	if !ok {
		return "", false
	}
	for range 3 { // request id, error status, error index
		if _, pdu, ok = berRead(pdu, 0x02); !ok {
			return "", false
		}
	}
	list, _, ok := berRead(pdu, 0x30)
	if !ok {
		return "", false
	}
	sysDescr := []byte{0x2b, 6, 1, 2, 1, 1, 1, 0}
	for len(list) > 0 {
		var vb []byte
		if vb, list, ok = berRead(list, 0x30); !ok {
			return "", false
		}
		oid, val, ok := berRead(vb, 0x06)
		if !ok || !bytes.Equal(oid, sysDescr) {
			continue
		}
		if s, _, ok := berRead(val, 0x04); ok && len(s) > 0 {
			return strings.TrimRight(latin1(s), "\x00"), true
		}
	}
	return "", false
}

// berRead reads one BER element of tag from b: its content and what
// follows it.
func berRead(b []byte, tag byte) (content, rest []byte, ok bool) {
	if len(b) < 2 || b[0] != tag {
		return nil, nil, false
	}
	n, off := int(b[1]), 2
	if n&0x80 != 0 {
		k := n & 0x7f
		if k == 0 || k > 3 || len(b) < 2+k {
			return nil, nil, false
		}
		n = 0
		for _, x := range b[2 : 2+k] {
			n = n<<8 | int(x)
		}
		off += k
	}
	if len(b) < off+n {
		return nil, nil, false
	}
	return b[off : off+n], b[off+n:], true
}

// OpenVPN opcodes (the high five bits of the first byte; the low three
// are the key id), from OpenVPN's protocol notes (ssl_pkt.h).
const (
	ovpnHardResetClientV2 = 7
	ovpnHardResetServerV2 = 8
	ovpnHardResetClientV3 = 10
)

// openvpnHandshake recognises OpenVPN's first packets: the client's hard
// reset (key id 0, at least opcode, session id and packet id) answered by
// the server's, which acknowledges the client's session id (in clear
// unless tls-crypt wraps it: then the layout alone, at a lower
// confidence).
func openvpnHandshake(cli, srv []byte) (float64, bool) {
	if len(cli) < 14 || len(srv) < 14 || cli[0]&7 != 0 || srv[0]&7 != 0 {
		return 0, false
	}
	if op := cli[0] >> 3; op != ovpnHardResetClientV2 && op != ovpnHardResetClientV3 || srv[0]>>3 != ovpnHardResetServerV2 {
		return 0, false
	}
	if bytes.Contains(srv[9:], cli[1:9]) {
		return confPayload, true
	}
	return confPayloadLayout, true
}

// openvpnTLS reads the TLS handshake OpenVPN's control channel carries
// (the server's certificate among it): each end's P_CONTROL_V1 packets'
// payloads joined in their message packet id's order, a retransmission
// taken once. With tls-auth each packet carries an HMAC (16 to 64 bytes)
// and a replay id before its acknowledgements: the layouts are tried in
// turn, and the one whose payloads start a TLS handshake both ways is
// read. tls-crypt encrypts it all: nothing.
func openvpnTLS(cli, srv [][]byte) (*TLS, string) {
	for _, hmac := range []int{0, 20, 32, 16, 48, 64} {
		c, s := ovpnControlStream(cli, hmac), ovpnControlStream(srv, hmac)
		if isTLSStream(c) && isTLSStream(s) {
			return tlsProbe(c, s)
		}
	}
	return nil, ""
}

// ovpnControlStream joins the payloads of an end's control packets read
// with an HMAC of hmac bytes (0: none).
func ovpnControlStream(pkts [][]byte, hmac int) []byte {
	payloads := map[uint32][]byte{}
	for _, b := range pkts {
		if len(b) < 10 || b[0]>>3 != ovpnControlV1 {
			continue
		}
		off := 9
		if hmac > 0 {
			off += hmac + 8 // the HMAC, the replay packet id and time
		}
		if off >= len(b) {
			continue
		}
		n := int(b[off])
		off += 1 + 4*n
		if n > 0 {
			off += 8 // the peer's session id
		}
		if n > 8 || off+4 > len(b) {
			continue
		}
		id := binary.BigEndian.Uint32(b[off : off+4])
		if _, dup := payloads[id]; !dup {
			payloads[id] = b[off+4:]
		}
	}
	var out []byte
	for _, id := range slices.Sorted(maps.Keys(payloads)) {
		out = append(out, payloads[id]...)
	}
	return out
}

// ovpnTCPPackets splits an OpenVPN over TCP stream into its packets, each
// after its 2-byte length, up to the first that is empty or cut, at most
// limit of them (0: all).
func ovpnTCPPackets(b []byte, limit int) [][]byte {
	var pkts [][]byte
	for len(b) >= 2 && (limit == 0 || len(pkts) < limit) {
		n := int(binary.BigEndian.Uint16(b))
		if n == 0 || len(b) < 2+n {
			break
		}
		pkts = append(pkts, b[2:2+n])
		b = b[2+n:]
	}
	return pkts
}

// openvpnTCP is openvpnHandshake over TCP, of each end's first packet
// (14 to 1,600 bytes).
func openvpnTCP(cli, srv []byte) (float64, bool) {
	first := func(b []byte) []byte {
		if p := ovpnTCPPackets(b, 1); len(p) > 0 && len(p[0]) >= 14 && len(p[0]) <= 1600 {
			return p[0]
		}
		return nil
	}
	c, s := first(cli), first(srv)
	if c == nil || s == nil {
		return 0, false
	}
	return openvpnHandshake(c, s)
}

// udpObservations are what a UDP flow showed: WireGuard and OpenVPN by
// their handshakes, IKE with the responder's vendor IDs, SNMP's sysDescr;
// else what flow inference makes of the ports and counters.
//
// A flow one end of which sent nothing names a server only by what the
// other end's packets say of themselves (an IKE response, an SNMP
// response, a DTLS ServerHello): a request no one answered, an IKE
// initiation, or the counters alone name nothing (pcapUnanswered).
func (st *pcapState) udpObservations(c *pcapConn) []Observation {
	oneWay := c.pkts[0] == 0 || c.pkts[1] == 0
	u := c.udp
	if u == nil {
		if oneWay {
			c.skipped = pcapUnanswered
			return nil
		}
		return st.flowObservations(c, nil)
	}
	var out []Observation
	switch {
	case !u.wgInvalid && u.wgServer >= 0:
		srv := c.end(u.wgServer)
		out = append(out, st.payloadFlow(c, srv, "udp", "wireguard", confPayload),
			st.service(c, srv, "udp", Probe{Name: "pcap:wireguard", Banner: &Banner{Sent: BytesBody(u.wgInit[1-u.wgServer]), Received: BytesBody(u.wgAnswer)}}))
		return out
	case !u.wgInvalid && u.wgData[0] >= 2 && u.wgData[1] >= 2:
		// Transport data both ways, the handshake before the capture: the
		// server is the end on WireGuard's port, else the one the first
		// packet went to.
		srv := c.udpServerSide()
		if c.key.a.Port() == 51820 || c.key.a.Port() == 41641 {
			srv = 0
		} else if c.key.b.Port() == 51820 || c.key.b.Port() == 41641 {
			srv = 1
		}
		return append(out, st.payloadFlow(c, c.end(srv), "udp", "wireguard", confPayloadLayout))
	}
	cl := c.firstFrom
	if conf, ok := openvpnHandshake(u.first[cl], u.first[1-cl]); ok {
		srv := c.end(1 - cl)
		out = append(out, st.payloadFlow(c, srv, "udp", "openvpn", conf))
		if t, sni := openvpnTLS(u.ovpnCtl[cl], u.ovpnCtl[1-cl]); t != nil {
			out = append(out, st.tlsService(c, srv, "udp", "pcap:openvpn-tls", t, sni))
		}
		return out
	}
	if u.ike && !(oneWay && (u.ikeInit < 0 || u.seen[1-u.ikeInit] == 0)) {
		resp := c.udpServerSide()
		if u.ikeInit >= 0 {
			resp = 1 - u.ikeInit
		}
		srv := c.end(resp)
		protocol := "ikev2"
		if srv.Port() == 4500 {
			protocol = "ipsec"
		}
		out = append(out, st.payloadFlow(c, srv, "udp", protocol, confPayload))
		if vids := u.ikeVIDs[resp]; len(vids) > 0 {
			out = append(out, st.service(c, srv, "udp", Probe{Name: "pcap:isakmp", Banner: &Banner{Received: TextBody("vendor_ids: " + strings.Join(vids, " "))}}))
		}
		return out
	}
	if u.snmp != "" {
		out = append(out, st.service(c, c.end(u.snmpFrom), "udp", Probe{Name: "pcap:snmp", Banner: &Banner{Received: TextBody(validUTF8(u.snmp))}}))
	}
	// The server is the end whose messages hold a ServerHello (the probe
	// is nil for the other).
	for srv := range 2 {
		if t, sni := tlsProbeMessages(u.dtls[1-srv].done, u.dtls[srv].done); t != nil {
			out = append(out, st.tlsService(c, c.end(srv), "udp", "pcap:dtls", t, sni))
			break
		}
	}
	if oneWay {
		if len(out) == 0 {
			c.skipped = pcapUnanswered
		}
		return out
	}
	var veto []string
	if u.seen[0]+u.seen[1] > 0 {
		// The payload was read: WireGuard's, OpenVPN's and IKE's were not in it.
		veto = []string{"wireguard", "openvpn", "ikev2"}
	}
	return append(out, st.flowObservations(c, veto)...)
}
