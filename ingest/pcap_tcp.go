package ingest

import (
	"bytes"
	"net/netip"
	"time"
)

// pcapConn is one TCP connection or UDP flow (or another IP protocol's
// packets between two addresses) as the capture shows it.
type pcapConn struct {
	key pcapKey
	// line is the number of the connection's first packet.
	line        int
	first, last time.Time
	// firstFrom is the end (0 key.a, 1 key.b) that sent the first packet.
	firstFrom int
	// synFrom and synAckFrom are the ends that sent the SYN and the
	// SYN-ACK; -1 none seen.
	synFrom, synAckFrom int
	pkts, bytes         [2]int64
	dir                 [2]tcpDir
	rst                 bool
	// firstData is the end that sent the first payload; -1 none yet.
	firstData int
	udp       *udpFlow
	// skipped, when set, is why the connection showed nothing (else
	// pcapNothing).
	skipped string
}

func (c *pcapConn) closed() bool { return c.rst || c.dir[0].fin || c.dir[1].fin }

// end returns the address and port of end side.
func (c *pcapConn) end(side int) netip.AddrPort {
	if side == 0 {
		return c.key.a
	}
	return c.key.b
}

// serverSide says which end is the server: the one that answered a SYN
// with a SYN-ACK (or was sent the SYN); else the one on a port below
// 1024 facing one above; else the lower port; else the one the first
// packet went to.
func (c *pcapConn) serverSide() int {
	if c.synAckFrom >= 0 {
		return c.synAckFrom
	}
	if c.synFrom >= 0 {
		return 1 - c.synFrom
	}
	return c.portSide()
}

// udpServerSide is the server of a UDP flow whose packets did not say:
// the end on a port below 1024 facing one above, else the end the first
// packet went to.
func (c *pcapConn) udpServerSide() int {
	pa, pb := c.key.a.Port(), c.key.b.Port()
	switch {
	case pa < 1024 && pb >= 1024:
		return 0
	case pb < 1024 && pa >= 1024:
		return 1
	}
	return 1 - c.firstFrom
}

func (c *pcapConn) portSide() int {
	pa, pb := c.key.a.Port(), c.key.b.Port()
	switch {
	case pa == pb:
		return 1 - c.firstFrom
	case pa < pb:
		return 0
	}
	return 1
}

// tcpDir is one direction of a TCP connection, reassembled: the bytes in
// sequence order from the first seen, out-of-order segments held until
// the gap before them fills, retransmitted bytes taken once.
type tcpDir struct {
	started bool
	next    uint32 // the sequence number of the next byte expected
	data    []byte
	// limit is the most bytes kept, chosen by the direction's first bytes.
	limit int
	// total counts the bytes the direction carried in order.
	total int64
	// truncated: data holds less than the direction carried (the limit,
	// a gap never filled, a packet cut by the snap length).
	truncated bool
	// stopped: nothing more is appended (truncated, or all that is read
	// of it is there: a TLS handshake is over).
	stopped bool
	pending []tcpSeg
	fin     bool
	// turnEnd is the length of data when the other end first sent bytes
	// after this one had: the end of this direction's first turn.
	turnEnd int
	// tlsNext is the offset of the next TLS record header, in a direction
	// that starts with a TLS handshake record.
	tlsNext int
}

type tcpSeg struct {
	seq  uint32
	data []byte
	real int
}

func (d *tcpDir) size() int {
	n := len(d.data)
	for _, s := range d.pending {
		n += len(s.data)
	}
	return n
}

func (st *pcapState) tcp(c *pcapConn, side int, p *pkt) {
	d := &c.dir[side]
	if p.syn {
		if p.ack {
			c.synAckFrom = side
		} else {
			c.synFrom = side
		}
		if !d.started {
			d.started, d.next = true, p.seq+1
		}
	}
	if p.rst {
		c.rst = true
	}
	if len(p.payload) > 0 {
		if c.firstData < 0 {
			c.firstData = side
		}
		before := d.size()
		d.add(p.seq, p.payload, p.realPayloadLen)
		st.kept += d.size() - before
		if o := &c.dir[1-side]; len(o.data) > 0 && o.turnEnd == 0 {
			o.turnEnd = len(o.data)
		}
	}
	if p.fin {
		d.fin = true
	}
}

// add takes a segment of the direction (b what the capture holds of its
// real bytes of payload).
func (d *tcpDir) add(seq uint32, b []byte, real int) {
	if !d.started {
		// The capture began after the handshake: the stream starts here.
		d.started, d.next = true, seq
	}
	if d.stopped {
		if int32(seq-d.next) >= 0 {
			d.total += int64(real)
			d.next = seq + uint32(real)
		}
		return
	}
	diff := int32(seq - d.next)
	if diff > 0 {
		if len(d.pending) >= pcapMaxPending {
			d.gap()
			return
		}
		d.pending = append(d.pending, tcpSeg{seq: seq, data: bytes.Clone(b), real: real})
		return
	}
	if !d.take(seq, b, real) {
		return
	}
	// Held segments the stream now reaches.
	for progress := true; progress && len(d.pending) > 0 && !d.stopped; {
		progress = false
		for i := 0; i < len(d.pending); i++ {
			s := d.pending[i]
			if int32(s.seq-d.next) > 0 {
				continue
			}
			d.pending = append(d.pending[:i], d.pending[i+1:]...)
			i--
			d.take(s.seq, s.data, s.real)
			progress = true
		}
	}
}

// take appends the part of a segment at or before next that is new;
// false when it had none.
func (d *tcpDir) take(seq uint32, b []byte, real int) bool {
	if over := int(d.next - seq); over > 0 {
		if over >= real {
			return false // a retransmission of bytes taken
		}
		real -= over
		if over >= len(b) {
			b = nil
		} else {
			b = b[over:]
		}
	}
	d.total += int64(real)
	d.next += uint32(real)
	if d.limit == 0 {
		d.limit = streamLimit(b)
	}
	if d.data == nil {
		d.data = make([]byte, 0, min(d.limit, max(4<<10, 2*len(b))))
	}
	room := d.limit - len(d.data)
	if len(b) > room {
		b = b[:room]
		d.truncated, d.stopped = true, true
	}
	d.data = append(d.data, b...)
	if len(b) < real && !d.stopped {
		// Cut by the snap length: what follows cannot join.
		d.truncated, d.stopped = true, true
	}
	d.walkTLS()
	return true
}

// gap gives up on a direction whose missing bytes never came.
func (d *tcpDir) gap() {
	d.truncated, d.stopped, d.pending = true, true, nil
}

// walkTLS stops keeping a direction that began with TLS handshake records
// at its first record of another type: all that is read (the hellos and
// the certificate) came before it.
func (d *tcpDir) walkTLS() {
	if !isTLSRecord(d.data) {
		return
	}
	for d.tlsNext+5 <= len(d.data) {
		if d.data[d.tlsNext] != 22 {
			d.stopped = true
			return
		}
		d.tlsNext += 5 + (int(d.data[d.tlsNext+3])<<8 | int(d.data[d.tlsNext+4]))
	}
}

// streamLimit is how much of a direction is kept, by its first bytes:
// all up to pcapMaxKept of an HTTP message or a TLS handshake, a banner's
// worth of anything else.
func streamLimit(b []byte) int {
	if isTLSRecord(b) || httpMethodOf(b) != "" || bytes.HasPrefix(b, []byte("HTTP/")) {
		return pcapMaxKept
	}
	return pcapMaxBanner
}

// isTLSRecord reports whether b starts with a TLS handshake record header.
func isTLSRecord(b []byte) bool {
	return len(b) >= 3 && b[0] == 22 && b[1] == 3 && b[2] <= 4
}

// isTLSStream reports whether b starts with a TLS record of any type
// (change cipher spec, alert, handshake, application data): a stream
// taken up after its handshake is TLS too, and no banner.
func isTLSStream(b []byte) bool {
	return len(b) >= 3 && b[0] >= 20 && b[0] <= 23 && b[1] == 3 && b[2] <= 4
}

// firstTurn is what the direction sent before the other end answered.
func (d *tcpDir) firstTurn() []byte {
	if d.turnEnd > 0 {
		return d.data[:d.turnEnd]
	}
	return d.data
}
