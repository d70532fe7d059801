package ingest

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/netintel/netintel/internal/ipmodel"
)

// Pcap reads a packet capture, pcap or pcapng (told apart by the file's
// magic; gzip'd too), and emits what the packets show of each server
// (docs/ingest-enrich.md, "Packet captures"): per TCP connection its HTTP
// exchanges, TLS handshake (certificate for TLS 1.2 and older), SSH
// identification or first bytes as probes of a service observation; per
// UDP flow the IKE responder's vendor IDs and SNMP's sysDescr as banner
// probes; WireGuard and OpenVPN recognised by their packets on any port,
// and the other remote-access protocols by flow inference, as flow
// observations. The number a record is reported with is the packet's, as
// Wireshark numbers them (the first packet of the connection for what a
// connection showed).
func Pcap(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	cr, err := openCapture(r)
	if err != nil {
		return err
	}
	st := newPcapState(opt, emit, bad)
	for {
		data, ci, lt, err := cr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		st.n++
		if err != nil {
			// A capture cut short (tcpdump killed) or damaged: what was
			// read before goes in.
			bad(LineError{st.n, fmt.Errorf("pcap: capture cut or damaged at packet %d, the packets before it are read: %w", st.n, err)})
			break
		}
		if err := st.packet(data, ci, lt); err != nil {
			return err
		}
	}
	if err := st.finish(); err != nil {
		return err
	}
	if st.decoded == 0 && st.unknownLink != nil {
		return st.unknownLink
	}
	return nil
}

// captureReader yields a capture's packets with their link types.
type captureReader interface {
	next() ([]byte, gopacket.CaptureInfo, layers.LinkType, error)
}

type pcapReader struct{ r *pcapgo.Reader }

func (p pcapReader) next() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	d, ci, err := p.r.ZeroCopyReadPacketData()
	return d, ci, p.r.LinkType(), err
}

type ngReader struct{ r *pcapgo.NgReader }

func (p ngReader) next() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	d, ci, err := p.r.ZeroCopyReadPacketData()
	lt := p.r.LinkType()
	if len(ci.AncillaryData) > 0 {
		if l, ok := ci.AncillaryData[0].(layers.LinkType); ok {
			lt = l
		}
	}
	return d, ci, lt, err
}

// openCapture tells pcap from pcapng by the magic number (after gzip's,
// when the file is compressed).
func openCapture(r io.Reader) (captureReader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(4)
	if len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("pcap: gzip: %w", err)
		}
		br = bufio.NewReaderSize(zr, 64<<10)
		magic, err = br.Peek(4)
		if err != nil && len(magic) < 4 {
			return nil, fmt.Errorf("pcap: gzip'd file too short for a capture header (%d bytes)", len(magic))
		}
	} else if err != nil {
		return nil, fmt.Errorf("pcap: file too short for a capture header (%d bytes)", len(magic))
	}
	switch binary.LittleEndian.Uint32(magic) {
	case 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1:
		var in io.Reader = br
		if hdr, err := br.Peek(24); err == nil {
			// libpcap reads any version 2.x; pcapgo only 2.4 (2.2 and
			// 2.3 files have the same layout, and writers put other
			// minors in): read as 2.4.
			order := binary.ByteOrder(binary.LittleEndian)
			if magic[0] == 0xa1 {
				order = binary.BigEndian
			}
			if order.Uint16(hdr[4:6]) == 2 && order.Uint16(hdr[6:8]) != 4 {
				fixed := bytes.Clone(hdr)
				order.PutUint16(fixed[6:8], 4)
				_, _ = br.Discard(24)
				in = io.MultiReader(bytes.NewReader(fixed), br)
			}
		}
		pr, err := pcapgo.NewReader(in)
		if err != nil {
			return nil, fmt.Errorf("pcap: file header: %w", err)
		}
		if !pcapLinkRead(pr.LinkType()) {
			return nil, unknownLinkError(pr.LinkType())
		}
		return pcapReader{pr}, nil
	case 0xa1b2cd34, 0x34cdb2a1:
		// Alexey Kuznetzov's modified pcap, which libpcap reads: made the
		// standard layout and read as such.
		order := binary.ByteOrder(binary.LittleEndian)
		if magic[0] == 0xa1 {
			order = binary.BigEndian
		}
		hdr := make([]byte, 24)
		if _, err := io.ReadFull(br, hdr); err != nil {
			return nil, fmt.Errorf("pcap: file too short for a capture header: %w", err)
		}
		order.PutUint32(hdr[0:4], 0xa1b2c3d4)
		return openCapture(io.MultiReader(bytes.NewReader(hdr), &modifiedPcap{r: br, order: order}))
	case 0x0a0d0d0a:
		nr, err := pcapgo.NewNgReader(br, pcapgo.NgReaderOptions{WantMixedLinkType: true, SkipUnknownVersion: true})
		if err != nil {
			return nil, fmt.Errorf("pcap: pcapng section header: %w", err)
		}
		return ngReader{nr}, nil
	}
	return nil, fmt.Errorf("pcap: not a pcap or pcapng capture: the file starts % x (pcap starts d4 c3 b2 a1 or a1 b2 c3 d4, the modified pcap 34 cd b2 a1, pcapng 0a 0d 0d 0a)", magic)
}

// modifiedPcap passes the records of a modified pcap (magic a1b2cd34,
// from Alexey Kuznetzov's patched libpcap; libpcap and Wireshark read
// it) through in the standard layout: each record header carries 8
// bytes more (interface index, protocol, packet type, padding) after the
// standard 16, which are dropped.
type modifiedPcap struct {
	r     io.Reader
	order binary.ByteOrder
	head  []byte // the current record's standard header, not yet read
	left  int    // bytes of the current record's packet not yet read
	cut   bool   // the file ended inside a record header
}

func (m *modifiedPcap) Read(p []byte) (int, error) {
	if len(m.head) == 0 && m.left == 0 {
		if m.cut {
			return 0, io.ErrUnexpectedEOF
		}
		var h [24]byte
		n, err := io.ReadFull(m.r, h[:])
		switch {
		case n == 0:
			return 0, err
		case n < 24:
			// A cut record header: what there is, then the damage, for
			// pcapgo to report.
			m.head, m.cut = append(m.head[:0], h[:min(n, 16)]...), true
		default:
			m.head = append(m.head[:0], h[:16]...)
			m.left = int(m.order.Uint32(h[8:12]))
		}
	}
	if len(m.head) > 0 {
		n := copy(p, m.head)
		m.head = m.head[n:]
		return n, nil
	}
	if len(p) > m.left {
		p = p[:m.left]
	}
	n, err := m.r.Read(p)
	m.left -= n
	if err == io.EOF && m.left > 0 {
		err = io.ErrUnexpectedEOF // the file ends inside a packet
	}
	return n, err
}

// pcapLinkRead reports whether packets of link type lt are decoded.
func pcapLinkRead(lt layers.LinkType) bool {
	switch lt {
	case layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, layers.LinkTypeLinuxSLL2, layers.LinkTypeRaw,
		layers.LinkTypeIPv4, layers.LinkTypeIPv6, layers.LinkTypeNull, layers.LinkTypeLoop, 12 /* raw on OpenBSD */, 14,
		layers.LinkTypePPP, layers.LinkTypePPP_HDLC, linkTypeCiscoHDLC:
		return true
	}
	return false
}

func unknownLinkError(lt layers.LinkType) error {
	name := linkNames[lt]
	if name == "" {
		name = lt.String()
	}
	if name == "" || name == "UnknownLinkType" {
		name = "unknown"
	}
	return fmt.Errorf("pcap: link type %d (%s) is not read: netintel reads Ethernet (1), Linux cooked (113 SLL, 276 SLL2), raw IP (101, 228, 229), BSD loopback (0, 108), PPP (9, 50) and Cisco HDLC (104)", int(lt), name)
}

// linkTypeCiscoHDLC is LINKTYPE_C_HDLC (gopacket has no name for it).
const linkTypeCiscoHDLC layers.LinkType = 104

// linkNames names the link types gopacket does not, that captures have.
var linkNames = map[layers.LinkType]string{105: "IEEE 802.11", 119: "802.11 Prism", 127: "802.11 radiotap", 143: "DOCSIS",
	147: "USER0", 148: "USER1", 149: "USER2", 150: "USER3", 192: "PPI", 195: "IEEE 802.15.4", 220: "USB Linux mmapped", 249: "Netlink"}

// Limits of the capture reader (docs/ingest-enrich.md, "Packet captures").
const (
	// pcapMaxKept is the most bytes of one direction of a TCP connection
	// kept for its HTTP exchanges and TLS handshake.
	pcapMaxKept = 1 << 20
	// pcapMaxBanner is the most of a direction kept for a banner or a
	// client's TLS hello (the most a probe keeps of it).
	pcapMaxBanner = MaxBodyBytes
	// pcapBudget is the most bytes of all connections kept at once: past
	// it the connections idle longest are read and let go.
	pcapBudget = 64 << 20
	// pcapMaxConns is the most connections and flows followed at once.
	pcapMaxConns = 1 << 16
	// pcapIdle is how long (capture time) a connection may be silent
	// before it is read and let go.
	pcapIdle = 2 * time.Minute
	// pcapMaxPending is the most out-of-order segments held per direction.
	pcapMaxPending = 64
	// pcapSeen is the most emitted observations remembered so that a
	// capture of many identical connections stores each once.
	pcapSeen = 1 << 14
)

// Reasons a connection or flow is counted as skipped (Options.Skipped).
const (
	pcapNothing  = "connection or flow with nothing recognised"
	pcapRepeated = "service as an earlier connection showed it"
	// A UDP flow one end of which sent nothing: a probe no one answered
	// (nmap's IKE or OpenVPN probe to a closed port draws an ICMP
	// unreachable, which is not the flow's) or a capture of one
	// direction. Nothing says a server of any protocol is there.
	pcapUnanswered = "udp flow never answered (a probe, or one direction captured)"
)

// pcapKey names a connection or flow by its ends, the smaller first.
type pcapKey struct {
	a, b  netip.AddrPort
	proto uint8
}

type pcapState struct {
	opt     Options
	src     string
	emit    Emit
	bad     func(LineError)
	n       int // packet number
	decoded int // packets decoded down to IP
	conns   map[pcapKey]*pcapConn
	// closed holds the TCP connections read and let go after their FINs
	// or RST, with when: their late packets (a retransmission, the last
	// ACK) start nothing.
	closed map[pcapKey]time.Time
	kept   int // bytes kept by all connections
	now    time.Time
	lastGC int
	seen   map[[32]byte]struct{}
	// unknownLink is the error of the first packet of a link type not read.
	unknownLink error
	linkSeen    map[layers.LinkType]bool
	snapWarned  bool
	fragWarned  bool
}

func newPcapState(opt Options, emit Emit, bad func(LineError)) *pcapState {
	return &pcapState{opt: opt, src: opt.source("pcap"), emit: emit, bad: bad, conns: map[pcapKey]*pcapConn{}, closed: map[pcapKey]time.Time{}, seen: map[[32]byte]struct{}{}}
}

// pkt is one decoded packet.
type pkt struct {
	src, dst netip.AddrPort
	proto    uint8
	ipLen    int // the IP packet's length as its header says
	payload  []byte
	// cut: the capture holds less of the payload than the packet had.
	cut bool
	// frag: an IP fragment (not reassembled, not read).
	frag           bool
	seq            uint32
	syn, ack, fin  bool
	rst            bool
	realPayloadLen int
}

func (st *pcapState) packet(data []byte, ci gopacket.CaptureInfo, lt layers.LinkType) error {
	var p pkt
	ok, err := decodeLink(data, lt, &p)
	if err != nil {
		if st.linkSeen == nil {
			st.linkSeen = map[layers.LinkType]bool{}
		}
		if !st.linkSeen[lt] {
			st.linkSeen[lt] = true
			st.bad(LineError{st.n, err})
			if st.unknownLink == nil {
				st.unknownLink = err
			}
		}
		return nil
	}
	if !ok {
		if p.frag && !st.fragWarned && st.opt.Warn != nil {
			st.fragWarned = true
			st.opt.Warn(st.n, "IP fragments are not reassembled: fragmented packets are not read")
		}
		return nil
	}
	st.decoded++
	if ci.Timestamp.After(st.now) {
		st.now = ci.Timestamp
	}
	if p.cut && !st.snapWarned && st.opt.Warn != nil {
		st.snapWarned = true
		st.opt.Warn(st.n, fmt.Sprintf("packet cut at %d of %d bytes (the capture's snap length): a stream's data is kept up to its first cut packet", ci.CaptureLength, ci.Length))
	}
	if err := st.track(&p, ci.Timestamp); err != nil {
		return err
	}
	if st.n-st.lastGC >= 4096 || len(st.conns) > pcapMaxConns || st.kept > pcapBudget {
		st.lastGC = st.n
		return st.evict()
	}
	return nil
}

// decodeLink decodes the link, IP and TCP/UDP headers of data into p.
// ok is false for packets that carry no IP (ARP, STP) or that are cut
// before their transport header; err names a link type not read.
func decodeLink(data []byte, lt layers.LinkType, p *pkt) (ok bool, err error) {
	var etype uint16
	switch lt {
	case layers.LinkTypeEthernet:
		if len(data) < 14 {
			return false, nil
		}
		etype, data = binary.BigEndian.Uint16(data[12:14]), data[14:]
	case layers.LinkTypeLinuxSLL:
		if len(data) < 16 {
			return false, nil
		}
		etype, data = binary.BigEndian.Uint16(data[14:16]), data[16:]
	case layers.LinkTypeLinuxSLL2:
		if len(data) < 20 {
			return false, nil
		}
		etype, data = binary.BigEndian.Uint16(data[0:2]), data[20:]
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		if len(data) < 4 {
			return false, nil
		}
		// The address family in the host's byte order (Null) or network
		// order (Loop): 2 is IPv4; 24, 28 and 30 are IPv6 on the BSDs.
		fam := binary.LittleEndian.Uint32(data[:4])
		if lt == layers.LinkTypeLoop || fam > 0xffff {
			fam = binary.BigEndian.Uint32(data[:4])
		}
		data = data[4:]
		switch fam {
		case 2:
			etype = 0x0800
		case 10, 24, 28, 30:
			etype = 0x86dd
		default:
			return false, nil
		}
	case layers.LinkTypePPP, layers.LinkTypePPP_HDLC:
		// PPP: an optional address and control byte (ff 03), then the
		// protocol: 0x0021 IPv4, 0x0057 IPv6.
		if len(data) >= 2 && data[0] == 0xff && data[1] == 0x03 {
			data = data[2:]
		}
		if len(data) < 2 {
			return false, nil
		}
		switch binary.BigEndian.Uint16(data) {
		case 0x0021:
			etype = 0x0800
		case 0x0057:
			etype = 0x86dd
		default:
			return false, nil
		}
		data = data[2:]
	case linkTypeCiscoHDLC:
		// Cisco HDLC: address, control, then an Ethernet type.
		if len(data) < 4 {
			return false, nil
		}
		etype, data = binary.BigEndian.Uint16(data[2:4]), data[4:]
	case layers.LinkTypeRaw, layers.LinkTypeIPv4, layers.LinkTypeIPv6, 12, 14:
		if len(data) == 0 {
			return false, nil
		}
		etype = 0x0800
		if data[0]>>4 == 6 {
			etype = 0x86dd
		}
	default:
		return false, unknownLinkError(lt)
	}
	// VLAN tags (802.1Q, 802.1ad, the old QinQ type) before the IP header.
	for etype == 0x8100 || etype == 0x88a8 || etype == 0x9100 {
		if len(data) < 4 {
			return false, nil
		}
		etype, data = binary.BigEndian.Uint16(data[2:4]), data[4:]
	}
	if etype == 0x8864 {
		// A PPPoE session (DSL lines): its 6-byte header, then PPP's
		// protocol.
		if len(data) < 8 {
			return false, nil
		}
		switch binary.BigEndian.Uint16(data[6:8]) {
		case 0x0021:
			etype = 0x0800
		case 0x0057:
			etype = 0x86dd
		default:
			return false, nil
		}
		data = data[8:]
	}
	switch etype {
	case 0x0800:
		return decodeIPv4(data, p), nil
	case 0x86dd:
		return decodeIPv6(data, p), nil
	}
	return false, nil
}

func decodeIPv4(d []byte, p *pkt) bool {
	if len(d) < 20 || d[0]>>4 != 4 {
		return false
	}
	hl := int(d[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(d[2:4]))
	if hl < 20 || len(d) < hl || total < hl {
		return false
	}
	if frag := binary.BigEndian.Uint16(d[6:8]); frag&0x3fff != 0 {
		p.frag = true // not reassembled
		return false
	}
	src, _ := netip.AddrFromSlice(d[12:16])
	dst, _ := netip.AddrFromSlice(d[16:20])
	body := d[hl:]
	real := total - hl
	if len(body) > real {
		body = body[:real] // Ethernet padding
	}
	return decodeTransport(src, dst, d[9], total, body, real, p)
}

func decodeIPv6(d []byte, p *pkt) bool {
	if len(d) < 40 || d[0]>>4 != 6 {
		return false
	}
	plen := int(binary.BigEndian.Uint16(d[4:6]))
	next := d[6]
	src, _ := netip.AddrFromSlice(d[8:24])
	dst, _ := netip.AddrFromSlice(d[24:40])
	body := d[40:]
	if len(body) > plen {
		body = body[:plen]
	}
	real := plen
	// Extension headers: hop-by-hop 0, routing 43, destination options
	// 60 (8-byte units after the first 8); a fragment 44 is not read.
	for next == 0 || next == 43 || next == 60 {
		if len(body) < 8 {
			return false
		}
		n := 8 + int(body[1])*8
		if len(body) < n {
			return false
		}
		next, body, real = body[0], body[n:], real-n
	}
	if next == 44 {
		p.frag = true
		return false
	}
	return decodeTransport(src, dst, next, plen+40, body, real, p)
}

// decodeTransport reads the TCP or UDP header of body (real is how long
// the packet's transport part was, body what the capture holds of it).
func decodeTransport(src, dst netip.Addr, proto uint8, ipLen int, body []byte, real int, p *pkt) bool {
	p.proto, p.ipLen = proto, ipLen
	switch proto {
	case ipProtoTCP:
		if len(body) < 20 {
			return false
		}
		off := int(body[12]>>4) * 4
		if off < 20 || len(body) < off {
			return false
		}
		p.src = netip.AddrPortFrom(src, binary.BigEndian.Uint16(body[0:2]))
		p.dst = netip.AddrPortFrom(dst, binary.BigEndian.Uint16(body[2:4]))
		p.seq = binary.BigEndian.Uint32(body[4:8])
		fl := body[13]
		p.fin, p.syn, p.rst, p.ack = fl&0x01 != 0, fl&0x02 != 0, fl&0x04 != 0, fl&0x10 != 0
		p.payload = body[off:]
		p.realPayloadLen = max(real-off, len(p.payload))
		p.cut = p.realPayloadLen > len(p.payload)
	case ipProtoUDP:
		if len(body) < 8 {
			return false
		}
		p.src = netip.AddrPortFrom(src, binary.BigEndian.Uint16(body[0:2]))
		p.dst = netip.AddrPortFrom(dst, binary.BigEndian.Uint16(body[2:4]))
		p.payload = body[8:]
		ulen := int(binary.BigEndian.Uint16(body[4:6]))
		p.realPayloadLen = max(ulen-8, len(p.payload))
		p.cut = p.realPayloadLen > len(p.payload)
	default:
		p.src, p.dst = netip.AddrPortFrom(src, 0), netip.AddrPortFrom(dst, 0)
	}
	return true
}

// keyOf returns the connection key of p and which end of it sent p.
func keyOf(p *pkt) (pcapKey, int) {
	if c := p.src.Addr().Compare(p.dst.Addr()); c < 0 || c == 0 && p.src.Port() <= p.dst.Port() {
		return pcapKey{p.src, p.dst, p.proto}, 0
	}
	return pcapKey{p.dst, p.src, p.proto}, 1
}

func (st *pcapState) track(p *pkt, at time.Time) error {
	k, side := keyOf(p)
	c := st.conns[k]
	if p.proto == ipProtoTCP {
		if c != nil && p.syn && !p.ack && c.closed() {
			// A new connection on the same ports.
			if err := st.finishConn(k, c); err != nil {
				return err
			}
			c = nil
		}
		if c == nil {
			if !p.syn && len(p.payload) == 0 {
				return nil // an ACK, FIN or RST of a connection not followed
			}
			if t, ok := st.closed[k]; ok && !p.syn && at.Sub(t) < pcapIdle {
				return nil // a late segment of a connection read
			}
			c = st.newConn(k, side, at)
		}
	} else if c == nil {
		c = st.newConn(k, side, at)
	}
	c.last = at
	c.pkts[side]++
	c.bytes[side] += int64(p.ipLen)
	switch p.proto {
	case ipProtoTCP:
		st.tcp(c, side, p)
		if c.rst || c.dir[0].fin && c.dir[1].fin {
			if len(st.closed) >= pcapMaxConns {
				clear(st.closed)
			}
			st.closed[k] = at
			return st.finishConn(k, c)
		}
	case ipProtoUDP:
		before := c.udpSize()
		c.udpPacket(side, p)
		st.kept += c.udpSize() - before
	}
	return nil
}

func (st *pcapState) newConn(k pcapKey, side int, at time.Time) *pcapConn {
	c := &pcapConn{key: k, first: at, line: st.n, firstFrom: side, synFrom: -1, synAckFrom: -1, firstData: -1}
	st.conns[k] = c
	return c
}

// evict reads and lets go of the connections idle for pcapIdle, then,
// while too many are followed or too much is kept, those idle longest.
func (st *pcapState) evict() error {
	for k, c := range st.conns {
		if st.now.Sub(c.last) > pcapIdle {
			if err := st.finishConn(k, c); err != nil {
				return err
			}
		}
	}
	if len(st.conns) <= pcapMaxConns*3/4 && st.kept <= pcapBudget*3/4 {
		return nil
	}
	all := make([]*pcapConn, 0, len(st.conns))
	for _, c := range st.conns {
		all = append(all, c)
	}
	slices.SortFunc(all, func(a, b *pcapConn) int { return a.last.Compare(b.last) })
	for _, c := range all {
		if len(st.conns) <= pcapMaxConns/2 && st.kept <= pcapBudget/2 {
			break
		}
		if err := st.finishConn(c.key, c); err != nil {
			return err
		}
	}
	return nil
}

func (st *pcapState) finish() error {
	all := make([]*pcapConn, 0, len(st.conns))
	for _, c := range st.conns {
		all = append(all, c)
	}
	// In the capture's order, so that the output does not depend on the map's.
	slices.SortFunc(all, func(a, b *pcapConn) int { return a.line - b.line })
	for _, c := range all {
		if err := st.finishConn(c.key, c); err != nil {
			return err
		}
	}
	return nil
}

// finishConn reads what connection c showed, emits it and lets it go.
func (st *pcapState) finishConn(k pcapKey, c *pcapConn) error {
	delete(st.conns, k)
	st.kept -= c.dir[0].size() + c.dir[1].size() + c.udpSize()
	var obs []Observation
	switch k.proto {
	case ipProtoTCP:
		obs = st.tcpObservations(c)
	case ipProtoUDP:
		obs = st.udpObservations(c)
	default:
		obs = st.flowObservations(c, nil)
	}
	if len(obs) == 0 {
		st.opt.skip(c.line, cmp.Or(c.skipped, pcapNothing))
	}
	for _, o := range obs {
		if o.Service != nil {
			// A capture of many like connections stores each once (its
			// first time).
			b, err := json.Marshal(o.Service)
			if err == nil {
				sum := sha256.Sum256(append(b, o.IP...))
				if _, dup := st.seen[sum]; dup {
					st.opt.skip(c.line, pcapRepeated)
					continue
				}
				if len(st.seen) >= pcapSeen {
					clear(st.seen)
				}
				st.seen[sum] = struct{}{}
			}
		}
		if err := emitChecked(c.line, o, st.emit, st.bad); err != nil {
			return err
		}
	}
	return nil
}

// tlsService is a service observation of the server end of c with the
// TLS handshake t read as probe name, the client's SNI its host name.
func (st *pcapState) tlsService(c *pcapConn, server netip.AddrPort, transport, name string, t *TLS, sni string) Observation {
	o := st.service(c, server, transport, Probe{Name: name, TLS: t})
	if sni != "" {
		o.Hostnames = []string{sni}
	}
	return o
}

// service returns a service observation of the server end of c.
func (st *pcapState) service(c *pcapConn, server netip.AddrPort, transport string, probes ...Probe) Observation {
	return Observation{Type: TypeService, IP: server.Addr().Unmap().String(), Source: st.src, ObservedAt: st.when(c),
		Service: &Service{Port: int(server.Port()), Transport: transport, Probes: probes}}
}

func (st *pcapState) when(c *pcapConn) string {
	if c.first.IsZero() || c.first.Unix() <= 0 {
		return st.opt.when(time.Time{})
	}
	return ipmodel.FormatTime(c.first)
}

// flowObservations are the flow inference's reading of c's counters
// (InferFlow, as for flow records), unless the packets showed that c
// is not the protocol its port suggests (veto names the protocols the
// payload was checked for and did not show).
func (st *pcapState) flowObservations(c *pcapConn, veto []string) []Observation {
	fwd := FlowRecord{Src: c.key.a.Addr(), Dst: c.key.b.Addr(), SrcPort: int(c.key.a.Port()), DstPort: int(c.key.b.Port()),
		IPProto: int(c.key.proto), Packets: c.pkts[0], Bytes: c.bytes[0]}
	rev := FlowRecord{Src: fwd.Dst, Dst: fwd.Src, SrcPort: fwd.DstPort, DstPort: fwd.SrcPort, IPProto: fwd.IPProto, Packets: c.pkts[1], Bytes: c.bytes[1]}
	recs := []FlowRecord{fwd, rev}
	if c.firstFrom == 1 {
		recs = []FlowRecord{rev, fwd}
	}
	for _, r := range recs {
		if r.Packets == 0 {
			continue
		}
		m, ok := InferFlow(r)
		if !ok || slices.Contains(veto, m.Flow.Protocol) {
			continue
		}
		m.Flow.Confidence = st.opt.capConfidence(m.Flow.Confidence)
		return []Observation{{Type: TypeFlow, IP: m.Server.Unmap().String(), Source: st.src, ObservedAt: st.when(c), Flow: &m.Flow}}
	}
	return nil
}

// payloadFlow is a flow observation of a protocol its packets showed
// (basis label, the reader named it, at conf).
func (st *pcapState) payloadFlow(c *pcapConn, server netip.AddrPort, transport, protocol string, conf float64) Observation {
	return Observation{Type: TypeFlow, IP: server.Addr().Unmap().String(), Source: st.src, ObservedAt: st.when(c),
		Flow: &Flow{Port: int(server.Port()), Transport: transport, Protocol: protocol, Confidence: st.opt.capConfidence(conf),
			Packets: c.pkts[0] + c.pkts[1], Bytes: c.bytes[0] + c.bytes[1]}}
}
