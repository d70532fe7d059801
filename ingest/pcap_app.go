package ingest

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// tcpObservations are what a TCP connection showed: a service observation
// of its server with the HTTP exchanges, the TLS handshake, the SSH
// identification or the first bytes; OpenVPN recognised by its packets;
// else what flow inference makes of its ports and counters.
func (st *pcapState) tcpObservations(c *pcapConn) []Observation {
	server := c.serverSide()
	s, cl := &c.dir[server], &c.dir[1-server]
	srv := c.end(server)
	var out []Observation
	switch {
	case httpMethodOf(cl.data) != "" || bytes.HasPrefix(s.data, []byte("HTTP/1.")):
		probes, host := httpProbes(cl, s)
		if len(probes) > 0 {
			o := st.service(c, srv, "tcp", probes...)
			if h := hostOf(host); h != "" {
				if _, err := netip.ParseAddr(h); err != nil {
					o.Hostnames = []string{h}
				}
			}
			out = append(out, o)
		}
	case isTLSStream(cl.data) || isTLSStream(s.data):
		if t, sni := tlsProbe(cl.data, s.data); t != nil {
			out = append(out, st.tlsService(c, srv, "tcp", "pcap:tls", t, sni))
		}
	default:
		if conf, ok := openvpnTCP(cl.data, s.data); ok {
			return append(out, st.openvpnTCPObservations(c, srv, conf, cl.data, s.data)...)
		}
		if conf, ok := openvpnTCP(s.data, cl.data); ok {
			// The ends were taken the wrong way round (no SYN seen).
			return append(out, st.openvpnTCPObservations(c, c.end(1-server), conf, s.data, cl.data)...)
		}
		// A banner is the first bytes: only where the connection's start
		// was seen (its SYN or SYN-ACK), or the bytes say what they are.
		if p, ok := bannerProbe(cl, s, c.firstData == 1-server); ok && (c.synFrom >= 0 || c.synAckFrom >= 0 || p.Name == "pcap:ssh") {
			o := st.service(c, srv, "tcp", p)
			// STARTTLS (SMTP, IMAP, POP3, FTP, LDAP, XMPP) or RDP's X.224
			// negotiation: the TLS handshake after the plain exchange.
			if sh := tlsAfter(s.data, tlsServerHello); sh != nil {
				if t, sni := tlsProbe(tlsAfter(cl.data, tlsClientHello), sh); t != nil {
					o.Service.Probes = append(o.Service.Probes, Probe{Name: "pcap:tls", TLS: t})
					if sni != "" {
						o.Hostnames = []string{sni}
					}
				}
			}
			out = append(out, o)
		}
	}
	var veto []string
	if cl.total+s.total > 0 {
		// The payload was read, and OpenVPN's was not in it.
		veto = []string{"openvpn"}
	}
	return append(out, st.flowObservations(c, veto)...)
}

// openvpnTCPObservations are an OpenVPN over TCP session's flow and the
// TLS handshake its control channel carries (openvpnTLS), each packet
// after its 2-byte length.
func (st *pcapState) openvpnTCPObservations(c *pcapConn, srv netip.AddrPort, conf float64, cli, ser []byte) []Observation {
	out := []Observation{st.payloadFlow(c, srv, "tcp", "openvpn", conf)}
	if t, sni := openvpnTLS(ovpnTCPPackets(cli, 0), ovpnTCPPackets(ser, 0)); t != nil {
		out = append(out, st.tlsService(c, srv, "tcp", "pcap:openvpn-tls", t, sni))
	}
	return out
}

// bannerProbe is the first bytes the server sent (its SSH identification
// line alone), with what the client sent before them.
func bannerProbe(cl, s *tcpDir, clientFirst bool) (Probe, bool) {
	recv := s.firstTurn()
	if len(recv) == 0 {
		return Probe{}, false
	}
	if bytes.HasPrefix(recv, []byte("SSH-")) {
		line, _, _ := bytes.Cut(recv, []byte("\n"))
		if len(line) > 255 {
			line = line[:255]
		}
		return Probe{Name: "pcap:ssh", Banner: &Banner{Received: BytesBody(append(line, '\n'))}}, true
	}
	if telnetOptionsOnly(recv) {
		// A telnet server's first turn is option negotiation; its login
		// text (a prompt, a banner naming the device) follows the
		// client's answer: the server's bytes across the exchange.
		recv = s.data
	}
	cut := s.truncated && len(recv) == len(s.data)
	full := int64(len(recv))
	if cut {
		full = s.total // the direction's bytes, as far as they were counted
	}
	b := &Banner{Received: pcapBody(recv, full, cut)}
	// What the client said first, when it spoke first.
	if sent := cl.firstTurn(); clientFirst && len(sent) > 0 {
		b.Sent = pcapBody(sent, int64(len(sent)), false)
	}
	return Probe{Name: "pcap:banner", Banner: b}, true
}

// telnetOptionsOnly reports whether b is nothing but telnet commands
// (RFC 854: IAC DO/DONT/WILL/WONT option, IAC SB ... IAC SE, IAC and one
// command byte).
func telnetOptionsOnly(b []byte) bool {
	if len(b) < 2 || b[0] != 0xff {
		return false
	}
	for i := 0; i < len(b); {
		if b[i] != 0xff || i+1 >= len(b) {
			return false
		}
		switch cmd := b[i+1]; {
		case cmd >= 251 && cmd <= 254: // WILL, WONT, DO, DONT
			i += 3
		case cmd == 250: // SB ... IAC SE
			end := bytes.Index(b[i+2:], []byte{0xff, 240})
			if end < 0 {
				return false
			}
			i += 2 + end + 2
		default:
			i += 2
		}
	}
	return true
}

// pcapBody is a body of b: whole (with its SHA-256), or the first part of
// one of full bytes (0 when unknown); nil when there is none.
func pcapBody(b []byte, full int64, truncated bool) *Body {
	if len(b) == 0 && !truncated {
		return nil
	}
	if !truncated {
		return BytesBody(b)
	}
	body := BytesBody(b)
	body.SHA256, body.Truncated, body.Length = "", true, full
	if full < int64(len(b)) {
		body.Length = 0
	}
	return body
}

// httpMethods are the request methods an HTTP client stream may start with.
var httpMethods = []string{"GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT", "TRACE", "PROPFIND", "RPC_IN_DATA", "RPC_OUT_DATA"}

// httpMethodOf returns the method b starts with ("GET "), "" none.
func httpMethodOf(b []byte) string {
	for _, m := range httpMethods {
		if len(b) > len(m) && b[len(m)] == ' ' && string(b[:len(m)]) == m {
			return m
		}
	}
	return ""
}

// httpMessage is one HTTP/1.x message read from a stream.
type httpMessage struct {
	start   string
	headers []Header
	body    *Body
}

// readHTTPMessage reads one message from b: the head, and the body its
// headers delimit (bodyless: a request without a length, a response to
// HEAD, 1xx, 204, 304). rest is what follows; more is false when nothing
// can follow (a body until the end, or a message cut).
func readHTTPMessage(b []byte, truncated, request, bodyless bool) (m httpMessage, rest []byte, more bool) {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	sep := 4
	if e := bytes.Index(b, []byte("\n\n")); e >= 0 && (end < 0 || e < end) {
		end, sep = e, 2
	}
	head := b
	if end >= 0 {
		head, rest = b[:end], b[end+sep:]
	}
	line, hs, _ := cutLine(head)
	m.start = latin1(line)
	for len(hs) > 0 {
		var l []byte
		l, hs, _ = cutLine(hs)
		if len(l) > 0 && (l[0] == ' ' || l[0] == '\t') && len(m.headers) > 0 {
			m.headers[len(m.headers)-1].Value += " " + strings.TrimSpace(latin1(l))
			continue
		}
		if h, ok := headerLine(l); ok {
			m.headers = append(m.headers, h)
		}
	}
	if end < 0 {
		return m, nil, false // the head was cut
	}
	get := func(name string) string {
		for _, h := range m.headers {
			if strings.EqualFold(h.Name, name) {
				return h.Value
			}
		}
		return ""
	}
	// The body is kept as it came on the wire: a chunked transfer's
	// framing and a gzip or deflate coding stay (the rules read it as the
	// browser does, and a gzip header's time is a version's tell).
	switch {
	case bodyless:
		more = true
	case strings.Contains(strings.ToLower(get("Transfer-Encoding")), "chunked"):
		n, complete := chunkedLength(rest)
		if !complete {
			m.body = pcapBody(rest, 0, true)
			return m, nil, false
		}
		m.body, rest, more = pcapBody(rest[:n], int64(n), false), rest[n:], true
	case get("Content-Length") != "":
		n, err := strconv.ParseInt(strings.TrimSpace(get("Content-Length")), 10, 64)
		if err != nil || n < 0 {
			m.body = pcapBody(rest, 0, truncated)
			return m, nil, false
		}
		if int64(len(rest)) < n {
			m.body = pcapBody(rest, n, true)
			return m, nil, false
		}
		m.body, rest, more = pcapBody(rest[:n], n, false), rest[n:], true
	case request:
		more = true
	default:
		// A response delimited by the connection's close.
		m.body, rest = pcapBody(rest, int64(len(rest)), truncated), nil
	}
	return m, rest, more
}

// chunkedLength is how many bytes of b a chunked body takes, its last
// chunk and trailers included; complete is false when b ends first.
func chunkedLength(b []byte) (n int, complete bool) {
	for {
		line, r, ok := cutLine(b[n:])
		if !ok {
			return len(b), false
		}
		sz, _, _ := strings.Cut(string(line), ";")
		size, err := strconv.ParseInt(strings.TrimSpace(sz), 16, 64)
		if err != nil || size < 0 || size > int64(len(b)) {
			return len(b), false
		}
		n = len(b) - len(r)
		if size == 0 {
			// Trailers up to the blank line.
			for {
				l, r2, ok := cutLine(b[n:])
				if !ok {
					return len(b), false
				}
				n = len(b) - len(r2)
				if len(l) == 0 {
					return n, true
				}
			}
		}
		if int64(len(b)-n) < size {
			return len(b), false
		}
		n += int(size)
		if _, r2, ok := cutLine(b[n:]); ok {
			n = len(b) - len(r2)
		}
	}
}

// httpProbes pairs the requests of a connection with its responses, one
// probe each; host is the first request's Host.
func httpProbes(cl, s *tcpDir) (probes []Probe, host string) {
	var reqs []*Request
	for b := cl.data; len(b) > 0 && len(reqs) < MaxProbes; {
		method := httpMethodOf(b)
		if method == "" {
			break
		}
		m, rest, more := readHTTPMessage(b, cl.truncated, true, false)
		parts := strings.Fields(m.start)
		q := &Request{Method: method, Headers: m.headers, Body: m.body}
		if len(parts) >= 2 {
			q.Path = parts[1]
		}
		for _, h := range m.headers {
			if strings.EqualFold(h.Name, "Host") {
				q.Host = h.Value
				break
			}
		}
		if host == "" {
			host = q.Host
		}
		// the client's credentials (Authorization, Cookie, a login form's
		// body) are the user's, not the server's evidence
		withoutCredentials(q)
		reqs = append(reqs, q)
		if !more || method == "CONNECT" {
			break
		}
		b = rest
	}
	i := 0
	for b := s.data; len(b) > 0 && len(probes) < MaxProbes; {
		if !bytes.HasPrefix(b, []byte("HTTP/")) {
			break
		}
		var q *Request
		if i < len(reqs) {
			q = reqs[i]
		}
		head, _, _ := cutLine(b)
		proto, status, reason, ok := parseStatusLine(latin1(head))
		if !ok {
			break
		}
		bodyless := status < 200 || status == 204 || status == 304 || q != nil && (q.Method == "HEAD" || q.Method == "CONNECT" && status < 300)
		m, rest, more := readHTTPMessage(b, s.truncated, false, bodyless)
		if status < 200 && status != 101 {
			b = rest // an interim answer (100 Continue)
			if !more && rest == nil {
				break
			}
			continue
		}
		probes = append(probes, Probe{Name: "pcap:http", Request: q,
			Response: &Response{Status: status, Reason: reason, Protocol: proto, Headers: m.headers, Body: m.body}})
		i++
		if !more || status == 101 || q != nil && q.Method == "CONNECT" {
			break
		}
		b = rest
	}
	// Requests left without an answer (the capture or the server ended)
	// show nothing of the server: not kept.
	return probes, host
}

// TLS handshake message types read.
const (
	tlsClientHello = 1
	tlsServerHello = 2
	tlsCertificate = 11
)

// tlsHandshake returns the handshake messages of a stream's leading
// handshake records, joined (a message may span records).
func tlsHandshake(b []byte) []byte {
	hs := make([]byte, 0, len(b))
	for len(b) >= 5 && b[0] == 22 {
		n := int(binary.BigEndian.Uint16(b[3:5]))
		if len(b) < 5+n {
			hs = append(hs, b[5:]...)
			break
		}
		hs = append(hs, b[5:5+n]...)
		b = b[5+n:]
	}
	return hs
}

// tlsAfter is where a TLS handshake starts after a plain exchange in b
// (past its first byte): the first handshake record whose first message
// is of type msg and fits in it; nil when there is none.
func tlsAfter(b []byte, msg byte) []byte {
	for i := 1; i+9 <= len(b); i++ {
		j := bytes.IndexByte(b[i:], 22)
		if j < 0 {
			return nil
		}
		i += j
		if i+9 > len(b) {
			return nil
		}
		rec := int(binary.BigEndian.Uint16(b[i+3 : i+5]))
		hs := int(b[i+6])<<16 | int(b[i+7])<<8 | int(b[i+8])
		if b[i+1] == 3 && b[i+2] <= 4 && b[i+5] == msg && rec >= 4 && rec <= 1<<14+2048 && hs >= 34 && (hs+4 <= rec || msg == tlsServerHello && hs+4 > rec && hs < 1<<16) {
			return b[i:]
		}
	}
	return nil
}

// tlsMessages calls f with each whole handshake message of hs.
func tlsMessages(hs []byte, f func(typ byte, body []byte)) {
	for len(hs) >= 4 {
		n := int(hs[1])<<16 | int(hs[2])<<8 | int(hs[3])
		if len(hs) < 4+n {
			return
		}
		f(hs[0], hs[4:4+n])
		hs = hs[4+n:]
	}
}

// tlsVersionName names a TLS protocol version as the probes do.
func tlsVersionName(v uint16) string {
	switch v {
	case 0x0300:
		return "SSLv3"
	case 0x0301:
		return "TLSv1.0"
	case 0x0302:
		return "TLSv1.1"
	case 0x0303:
		return "TLSv1.2"
	case 0x0304:
		return "TLSv1.3"
	case 0xfeff:
		return "DTLSv1.0"
	case 0xfefd:
		return "DTLSv1.2"
	case 0xfefc:
		return "DTLSv1.3"
	case 0x0100:
		// DTLS before RFC 4347's number (OpenSSL's DTLS1_BAD_VER), which
		// Cisco's AnyConnect DTLS still speaks, as ocserv does for it.
		return "DTLSv0.9"
	}
	return fmt.Sprintf("0x%04x", v)
}

// tlsProbe reads a TLS handshake: the client's SNI, the server's version,
// cipher and JA3S, and the leaf certificate the server sent (TLS 1.2 and
// older; TLS 1.3 encrypts it). nil when the server's hello is not there.
func tlsProbe(cli, srv []byte) (*TLS, string) {
	return tlsProbeMessages(tlsHandshake(cli), tlsHandshake(srv))
}

// tlsProbeMessages is tlsProbe of each end's handshake messages (TLS's
// framing: a stream's, or DTLS's joined from their fragments).
func tlsProbeMessages(cli, srv []byte) (*TLS, string) {
	var sni string
	tlsMessages(cli, func(typ byte, body []byte) {
		if typ == tlsClientHello && sni == "" {
			sni = clientHelloSNI(body)
		}
	})
	var t *TLS
	tlsMessages(srv, func(typ byte, body []byte) {
		switch typ {
		case tlsServerHello:
			if t == nil {
				t = serverHello(body)
			}
		case tlsCertificate:
			if t == nil || t.SHA256 != "" || len(body) < 6 {
				return
			}
			n := int(body[3])<<16 | int(body[4])<<8 | int(body[5])
			if der := body[6:]; n > 0 && len(der) >= n {
				if c, err := certTLS(der[:n]); err == nil {
					c.Version, c.Cipher, c.JA3S = t.Version, t.Cipher, t.JA3S
					t = c
				}
			}
		}
	})
	return t, strings.ToLower(sni)
}

// serverHello reads a ServerHello's version (supported_versions where it
// says 1.3), cipher and the JA3S fingerprint (Salesforce's: MD5 of the
// decimal version, cipher and extension types, "771,49199,65281-0-11").
func serverHello(b []byte) *TLS {
	if len(b) < 38 {
		return nil
	}
	legacy := binary.BigEndian.Uint16(b[0:2])
	off := 34
	off += 1 + int(b[off])
	if len(b) < off+3 {
		return nil
	}
	cipher := binary.BigEndian.Uint16(b[off : off+2])
	off += 3
	version := legacy
	var exts []string
	if len(b) >= off+2 {
		end := off + 2 + int(binary.BigEndian.Uint16(b[off:off+2]))
		off += 2
		for off+4 <= end && off+4 <= len(b) {
			typ := binary.BigEndian.Uint16(b[off : off+2])
			n := int(binary.BigEndian.Uint16(b[off+2 : off+4]))
			if typ == 43 && n == 2 && off+6 <= len(b) {
				version = binary.BigEndian.Uint16(b[off+4 : off+6])
			}
			exts = append(exts, strconv.Itoa(int(typ)))
			off += 4 + n
		}
	}
	sum := md5.Sum([]byte(fmt.Sprintf("%d,%d,%s", legacy, cipher, strings.Join(exts, "-"))))
	return &TLS{Version: tlsVersionName(version), Cipher: cipherName(uint64(cipher)), JA3S: hex.EncodeToString(sum[:])}
}

// clientHelloSNI returns the host name of a ClientHello's server_name.
func clientHelloSNI(b []byte) string {
	if len(b) < 35 {
		return ""
	}
	off := 34
	off += 1 + int(b[off])
	if len(b) < off+2 {
		return ""
	}
	off += 2 + int(binary.BigEndian.Uint16(b[off:off+2]))
	if len(b) < off+1 {
		return ""
	}
	off += 1 + int(b[off])
	if len(b) < off+2 {
		return ""
	}
	end := min(len(b), off+2+int(binary.BigEndian.Uint16(b[off:off+2])))
	off += 2
	for off+4 <= end {
		typ := binary.BigEndian.Uint16(b[off : off+2])
		n := int(binary.BigEndian.Uint16(b[off+2 : off+4]))
		off += 4
		if off+n > end {
			return ""
		}
		if typ == 0 && n >= 5 {
			e := b[off : off+n]
			l := int(binary.BigEndian.Uint16(e[3:5]))
			if e[2] == 0 && 5+l <= len(e) {
				return string(e[5 : 5+l])
			}
		}
		off += n
	}
	return ""
}
