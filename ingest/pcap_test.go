package ingest

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// testPkt is one packet of a capture a test writes.
type testPkt struct {
	src, dst           string
	sport, dport       uint16
	seq                uint32
	syn, ack, fin, rst bool
	udp                bool
	payload            []byte
}

// frame serialises p as an Ethernet frame (IPv4 or IPv6 by the address).
func (p testPkt) frame(t testing.TB) []byte {
	t.Helper()
	src, dst := net.ParseIP(p.src), net.ParseIP(p.dst)
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	var ip gopacket.NetworkLayer
	var ipl gopacket.SerializableLayer
	proto := layers.IPProtocolTCP
	if p.udp {
		proto = layers.IPProtocolUDP
	}
	if src.To4() != nil {
		v4 := &layers.IPv4{Version: 4, TTL: 64, Protocol: proto, SrcIP: src.To4(), DstIP: dst.To4()}
		ip, ipl = v4, v4
	} else {
		eth.EthernetType = layers.EthernetTypeIPv6
		v6 := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: proto, SrcIP: src, DstIP: dst}
		ip, ipl = v6, v6
	}
	var tl gopacket.SerializableLayer
	if p.udp {
		u := &layers.UDP{SrcPort: layers.UDPPort(p.sport), DstPort: layers.UDPPort(p.dport)}
		_ = u.SetNetworkLayerForChecksum(ip)
		tl = u
	} else {
		tc := &layers.TCP{SrcPort: layers.TCPPort(p.sport), DstPort: layers.TCPPort(p.dport), Seq: p.seq, SYN: p.syn, ACK: p.ack, FIN: p.fin, RST: p.rst, Window: 65535}
		_ = tc.SetNetworkLayerForChecksum(ip)
		tl = tc
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ipl, tl, gopacket.Payload(p.payload)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeCapture writes pkts as a pcap file, a second apart, each cut at snap.
func writeCapture(t testing.TB, snap int, pkts []testPkt) []byte {
	t.Helper()
	var out bytes.Buffer
	w := pcapgo.NewWriter(&out)
	if err := w.WriteFileHeader(uint32(max(snap, 65535)), layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	for i, p := range pkts {
		f := p.frame(t)
		ci := gopacket.CaptureInfo{Timestamp: at.Add(time.Duration(i) * time.Second), Length: len(f), CaptureLength: min(len(f), snap)}
		if err := w.WritePacket(ci, f[:ci.CaptureLength]); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

// tcpSession is a client's connection to a server: the handshake, then
// the payloads each way (client first), each in one segment, then FINs.
func tcpSession(cli, srv string, cport, sport uint16, exchanges ...string) []testPkt {
	cs, ss := uint32(1000), uint32(5000)
	pk := []testPkt{
		{src: cli, dst: srv, sport: cport, dport: sport, seq: cs, syn: true},
		{src: srv, dst: cli, sport: sport, dport: cport, seq: ss, syn: true, ack: true},
	}
	cs++
	ss++
	for i, e := range exchanges {
		if i%2 == 0 {
			pk = append(pk, testPkt{src: cli, dst: srv, sport: cport, dport: sport, seq: cs, ack: true, payload: []byte(e)})
			cs += uint32(len(e))
		} else {
			pk = append(pk, testPkt{src: srv, dst: cli, sport: sport, dport: cport, seq: ss, ack: true, payload: []byte(e)})
			ss += uint32(len(e))
		}
	}
	return append(pk, testPkt{src: cli, dst: srv, sport: cport, dport: sport, seq: cs, ack: true, fin: true},
		testPkt{src: srv, dst: cli, sport: sport, dport: cport, seq: ss, ack: true, fin: true})
}

// runPcap reads data with the pcap adapter: the observations, the
// malformed records reported, the warnings and the fatal error.
func runPcap(t testing.TB, data []byte) (obs []Observation, bad []LineError, warns []string, err error) {
	t.Helper()
	opt := Options{Warn: func(_ int, m string) { warns = append(warns, m) }}
	err = Pcap(bytes.NewReader(data), opt, func(_ int, o Observation) error {
		obs = append(obs, o)
		return nil
	}, func(e LineError) { bad = append(bad, e) })
	return obs, bad, warns, err
}

// TestTCPDir_Add: a direction's bytes come out in sequence order whatever
// order and repeats the segments arrive in; a gap never filled, the
// limit and a cut packet stop it, flagged truncated.
func TestTCPDir_Add(t *testing.T) {
	type seg struct {
		seq  uint32
		data string
		real int // 0 = len(data)
	}
	tests := []struct {
		name      string
		limit     int
		segs      []seg
		want      string
		truncated bool
	}{
		{"in order", 0, []seg{{100, "GET ", 0}, {104, "/ HTTP/1.1\r\n", 0}}, "GET / HTTP/1.1\r\n", false},
		{"out of order", 0, []seg{{100, "GET ", 0}, {111, "1.1\r\n", 0}, {104, "/ HTTP/", 0}}, "GET / HTTP/1.1\r\n", false},
		{"retransmitted", 0, []seg{{100, "GET ", 0}, {100, "GET ", 0}, {104, "/ HTTP/1.1", 0}, {104, "/ HTTP/1.1", 0}}, "GET / HTTP/1.1", false},
		{"overlapping", 0, []seg{{100, "GET /a", 0}, {103, " /a HTTP", 0}}, "GET /a HTTP", false},
		{"sequence wraps", 0, []seg{{0xfffffffe, "GET ", 0}, {2, "/x", 0}}, "GET /x", false},
		{"limit", 8, []seg{{1, "SSH-2.0-OpenSSH", 0}}, "SSH-2.0-", true},
		{"cut by the snap length", 0, []seg{{1, "SSH-2.0", 20}, {21, "more", 0}}, "SSH-2.0", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tcpDir{limit: tt.limit}
			for _, s := range tt.segs {
				real := s.real
				if real == 0 {
					real = len(s.data)
				}
				d.add(s.seq, []byte(s.data), real)
			}
			if string(d.data) != tt.want || d.truncated != tt.truncated {
				t.Errorf("data %q truncated %v, want %q %v", d.data, d.truncated, tt.want, tt.truncated)
			}
		})
	}
	t.Run("gap never filled", func(t *testing.T) {
		d := tcpDir{}
		d.add(1, []byte("GET "), 4)
		for i := range pcapMaxPending + 1 {
			d.add(uint32(100+10*i), []byte("xxxxx"), 5)
		}
		if string(d.data) != "GET " || !d.truncated || len(d.pending) != 0 {
			t.Errorf("data %q truncated %v pending %d", d.data, d.truncated, len(d.pending))
		}
	})
	t.Run("TLS stops after the handshake", func(t *testing.T) {
		d := tcpDir{}
		hs := []byte{22, 3, 3, 0, 2, 1, 2}
		d.add(1, hs, len(hs))
		app := []byte{23, 3, 3, 0, 3, 9, 9, 9}
		d.add(uint32(1+len(hs)), app, len(app))
		d.add(uint32(1+len(hs)+len(app)), app, len(app))
		if len(d.data) != len(hs)+len(app) || !d.stopped || d.truncated {
			t.Errorf("kept %d bytes, stopped %v truncated %v", len(d.data), d.stopped, d.truncated)
		}
	})
}

// TestPcap_HTTP reads HTTP exchanges of one connection: a HEAD, a chunked
// gzip'd answer (kept as on the wire), a 100 Continue, repeated
// Set-Cookie, a POST with a body;
// a request left unanswered shows nothing of the server and is not kept.
func TestPcap_HTTP(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("<html><title>Login</title></html>"))
	_ = zw.Close()
	chunked := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\n" +
		strings.ToUpper(hexLen(gz.Len()/2)) + "\r\n" + gz.String()[:gz.Len()/2] + "\r\n" +
		hexLen(gz.Len()-gz.Len()/2) + "\r\n" + gz.String()[gz.Len()/2:] + "\r\n0\r\n\r\n"
	cap := writeCapture(t, 65535, tcpSession("192.0.2.10", "198.51.100.1", 40000, 8080,
		"HEAD /a HTTP/1.1\r\nHost: vpn.example.com\r\n\r\nGET /b HTTP/1.1\r\nHost: vpn.example.com\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nServer: x\r\n\r\n"+chunked,
		"POST /c HTTP/1.1\r\nHost: vpn.example.com\r\nAuthorization: Basic dTpw\r\nContent-Length: 5\r\n\r\nu=abcGET /d HTTP/1.1\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 302 Found\r\nLocation: /e\r\nContent-Length: 0\r\n\r\n"))
	obs, bad, _, err := runPcap(t, cap)
	if err != nil || len(bad) > 0 {
		t.Fatal(err, bad)
	}
	if len(obs) != 1 || obs[0].Service == nil {
		t.Fatalf("%d observations, want one service: %+v", len(obs), obs)
	}
	o := obs[0]
	if o.IP != "198.51.100.1" || o.Service.Port != 8080 || o.Service.Transport != "tcp" || strings.Join(o.Hostnames, ",") != "vpn.example.com" {
		t.Errorf("service %s:%d/%s hostnames %v", o.IP, o.Service.Port, o.Service.Transport, o.Hostnames)
	}
	ps := o.Service.Probes
	if len(ps) != 3 {
		t.Fatalf("%d probes, want 3: %+v", len(ps), ps)
	}
	type want struct {
		method, path string
		status       int
		body         string
		reqBody      string
	}
	// Bodies are kept as on the wire: the chunked framing and the gzip'd bytes.
	// A request keeps no credentials: the POST's form body (read to its
	// Content-Length, so its 302 is its answer) and its Authorization are
	// dropped, its other headers kept.
	wire := chunked[strings.Index(chunked, "\r\n\r\n")+4:]
	if h := ps[2].Request.Headers; len(h) != 2 || h[0].Name != "Host" || h[1].Name != "Content-Length" {
		t.Errorf("POST's headers %+v, want Host and Content-Length (no Authorization)", h)
	}
	for i, w := range []want{{"HEAD", "/a", 200, "", ""}, {"GET", "/b", 200, wire, ""}, {"POST", "/c", 302, "", ""}} {
		p := ps[i]
		status := 0
		if p.Response != nil {
			status = p.Response.Status
		}
		if p.Request == nil || p.Request.Method != w.method || p.Request.Path != w.path || status != w.status ||
			p.Response != nil && p.Response.Body.Text() != w.body || p.Request.Body.Text() != w.reqBody {
			t.Errorf("probe %d: %+v %+v, want %+v", i, p.Request, p.Response, w)
		}
	}
	var cookies []string
	for _, h := range ps[1].Response.Headers {
		if h.Name == "Set-Cookie" {
			cookies = append(cookies, h.Value)
		}
	}
	if b := ps[1].Response.Body; strings.Join(cookies, ";") != "a=1;b=2" || b.SHA256 == "" || b.Truncated || b.Length != int64(len(wire)) {
		t.Errorf("cookies %q, body %+v", cookies, b)
	}
}

func hexLen(n int) string { return strconv.FormatInt(int64(n), 16) }

// TestPcap_BadInput: what is not a capture, or a capture cut, damaged or
// of a link type not read, gets a clear error or a reported record,
// never a crash; what was read before the damage goes in.
func TestPcap_BadInput(t *testing.T) {
	ssh := writeCapture(t, 65535, tcpSession("192.0.2.10", "198.51.100.1", 40000, 22, "", "SSH-2.0-OpenSSH_9.6\r\n"))
	// a file header and one record claiming 300 MB
	huge := append(bytes.Clone(ssh[:24]), make([]byte, 16)...)
	binary.LittleEndian.PutUint32(huge[24+8:], 300<<20)
	binary.LittleEndian.PutUint32(huge[24+12:], 300<<20)
	huge = append(huge, ssh[24:]...)
	user0 := bytes.Clone(ssh)
	binary.LittleEndian.PutUint32(user0[20:], 147)
	tests := []struct {
		name      string
		data      []byte
		fatal     string // the error's words, "" none
		bad       string // a reported record's words, "" none
		wantSSH   bool   // the SSH banner still read
		wantWarns string
	}{
		{"empty", nil, "too short for a capture header", "", false, ""},
		{"bad magic", []byte("GET / HTTP/1.1\r\n\r\n"), "not a pcap or pcapng capture: the file starts 47 45 54 20", "", false, ""},
		{"cut in its file header", ssh[:12], "file header", "", false, ""},
		{"cut in a packet", ssh[:len(ssh)-30], "", "capture cut or damaged at packet", true, ""},
		{"huge packet", huge, "", "capture cut or damaged at packet 1", false, ""},
		{"unknown link type", user0, "link type 147 (", "", false, ""},
		{"bad gzip", []byte{0x1f, 0x8b, 8, 0, 1, 2}, "gzip", "", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, bad, warns, err := runPcap(t, tt.data)
			if tt.fatal == "" && err != nil || tt.fatal != "" && (err == nil || !strings.Contains(err.Error(), tt.fatal)) {
				t.Errorf("error %v, want %q", err, tt.fatal)
			}
			joined := ""
			for _, b := range bad {
				joined += b.Error() + "\n"
			}
			if tt.bad == "" && joined != "" || tt.bad != "" && !strings.Contains(joined, tt.bad) {
				t.Errorf("reported %q, want %q", joined, tt.bad)
			}
			gotSSH := len(obs) == 1 && obs[0].Service != nil && obs[0].Service.Probes[0].Banner.Received.Text() == "SSH-2.0-OpenSSH_9.6\r\n"
			if gotSSH != tt.wantSSH {
				t.Errorf("SSH banner read %v, want %v (%+v)", gotSSH, tt.wantSSH, obs)
			}
			_ = warns
		})
	}
	t.Run("pcap 2.2", func(t *testing.T) {
		old := bytes.Clone(ssh)
		binary.LittleEndian.PutUint16(old[6:], 2)
		obs, _, _, err := runPcap(t, old)
		if err != nil || len(obs) != 1 {
			t.Errorf("%v, %d observations", err, len(obs))
		}
	})
	t.Run("gzip'd", func(t *testing.T) {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		_, _ = zw.Write(ssh)
		_ = zw.Close()
		obs, _, _, err := runPcap(t, z.Bytes())
		if err != nil || len(obs) != 1 {
			t.Errorf("%v, %d observations", err, len(obs))
		}
	})
	t.Run("snap length", func(t *testing.T) {
		body := strings.Repeat("x", 400)
		cut := writeCapture(t, 200, tcpSession("192.0.2.10", "198.51.100.1", 40000, 80, "GET / HTTP/1.1\r\n\r\n",
			"HTTP/1.1 200 OK\r\nServer: cut\r\nContent-Length: 400\r\n\r\n"+body))
		obs, bad, warns, err := runPcap(t, cut)
		if err != nil || len(bad) > 0 || len(obs) != 1 {
			t.Fatalf("%v %v %d", err, bad, len(obs))
		}
		r := obs[0].Service.Probes[0].Response
		if r == nil || r.Status != 200 || r.Body == nil || !r.Body.Truncated || r.Body.SHA256 != "" || r.Body.Length != 400 {
			t.Errorf("response %+v body %+v", r, r.Body)
		}
		if len(warns) != 1 || !strings.Contains(warns[0], "snap length") {
			t.Errorf("warnings %q", warns)
		}
	})
}

// TestPcap_Bounds: connections left open are let go as the capture's
// time passes and when too many bytes are kept, so the reader's memory
// does not grow with the capture.
func TestPcap_Bounds(t *testing.T) {
	st := newPcapState(Options{}, func(int, Observation) error { return nil }, func(LineError) {})
	at := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	payload := bytes.Repeat([]byte("HTTP/1.1 200 OK\r\n"), 80) // an HTTP stream: kept up to pcapMaxKept
	maxConns, maxKept := 0, 0
	// 20,000 connections, one a second, each sending and never closing.
	for i := range 20000 {
		p := pkt{src: netip.MustParseAddrPort("198.51.100.1:80"), dst: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 40000),
			proto: ipProtoTCP, seq: 1, ack: true, payload: payload, realPayloadLen: len(payload), ipLen: 40 + len(payload)}
		st.n++
		if err := st.trackAndGC(&p, at.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
		maxConns = max(maxConns, len(st.conns))
	}
	if maxConns > 4096+int(pcapIdle/time.Second)+1 {
		t.Errorf("%d connections followed at once", maxConns)
	}
	if err := st.finish(); err != nil || st.kept != 0 || len(st.conns) != 0 {
		t.Errorf("after the end: %v, %d bytes kept, %d connections", err, st.kept, len(st.conns))
	}
	// 100 connections within a second each sending 1 MiB: the budget.
	st = newPcapState(Options{}, func(int, Observation) error { return nil }, func(LineError) {})
	seg := append([]byte("HTTP/1.1 200 OK\r\n"), bytes.Repeat([]byte("x"), 16<<10)...)
	for c := range 100 {
		seq := uint32(1)
		for range (1 << 20) / len(seg) {
			p := pkt{src: netip.MustParseAddrPort("198.51.100.1:80"), dst: netip.AddrPortFrom(netip.MustParseAddr("10.0.0.2"), uint16(2000+c)), proto: ipProtoTCP,
				seq: seq, ack: true, payload: seg, realPayloadLen: len(seg), ipLen: 40 + len(seg)}
			seq += uint32(len(seg))
			st.n++
			if err := st.trackAndGC(&p, at); err != nil {
				t.Fatal(err)
			}
			maxKept = max(maxKept, st.kept)
		}
	}
	if maxKept > pcapBudget+len(seg) {
		t.Errorf("%d bytes kept at once, budget %d", maxKept, pcapBudget)
	}
	if err := st.finish(); err != nil || st.kept != 0 {
		t.Errorf("after the end: %v, %d bytes kept", err, st.kept)
	}
	// UDP flows' handshake bytes count too, and are given back.
	data, err := os.ReadFile("testdata/pcap/wireguard.pcap")
	if err != nil {
		t.Fatal(err)
	}
	cr, err := openCapture(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	st = newPcapState(Options{}, func(int, Observation) error { return nil }, func(LineError) {})
	grew := false
	for {
		d, ci, lt, err := cr.next()
		if err != nil {
			break
		}
		st.n++
		if err := st.packet(d, ci, lt); err != nil {
			t.Fatal(err)
		}
		grew = grew || st.kept > 0
	}
	if err := st.finish(); err != nil || !grew || st.kept != 0 {
		t.Errorf("UDP: %v, counted %v, %d bytes kept after the end", err, grew, st.kept)
	}
}

// trackAndGC is what packet does after decoding.
func (st *pcapState) trackAndGC(p *pkt, at time.Time) error {
	st.now = at
	if err := st.track(p, at); err != nil {
		return err
	}
	if st.n-st.lastGC >= 4096 || len(st.conns) > pcapMaxConns || st.kept > pcapBudget {
		st.lastGC = st.n
		return st.evict()
	}
	return nil
}

// TestPcap_Emit: an emit error stops the reader and is returned.
func TestPcap_Emit(t *testing.T) {
	data, err := os.ReadFile("testdata/pcap/ssh.pcap")
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	err = Pcap(bytes.NewReader(data), Options{}, func(int, Observation) error { return stop }, func(LineError) {})
	if !errors.Is(err, stop) {
		t.Errorf("error %v, want the emit's", err)
	}
}

// TestDecodeLink reads one TCP packet under each link type the reader
// takes (and IPv6 with an extension header, VLAN tags): the same ends
// and payload each time; a link type not read is an error naming it.
func TestDecodeLink(t *testing.T) {
	v4 := testPkt{src: "192.0.2.1", dst: "198.51.100.2", sport: 40000, dport: 443, seq: 7, ack: true, payload: []byte("hello")}.frame(t)
	ip4 := v4[14:]
	v6 := testPkt{src: "2001:db8::1", dst: "2001:db8::2", sport: 40000, dport: 443, seq: 7, ack: true, payload: []byte("hello")}.frame(t)
	ip6 := v6[14:]
	// IPv6 with a hop-by-hop header (8 bytes) before TCP.
	hbh := append(bytes.Clone(ip6[:40]), append([]byte{6, 0, 1, 4, 0, 0, 0, 0}, ip6[40:]...)...)
	hbh[6] = 0
	binary.BigEndian.PutUint16(hbh[4:6], uint16(len(hbh)-40))
	be32 := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	sll := func(proto uint16, ip []byte) []byte {
		h := make([]byte, 16)
		binary.BigEndian.PutUint16(h[14:], proto)
		return append(h, ip...)
	}
	sll2 := func(proto uint16, ip []byte) []byte {
		h := make([]byte, 20)
		binary.BigEndian.PutUint16(h[0:], proto)
		return append(h, ip...)
	}
	vlan := append(append(bytes.Clone(v4[:12]), 0x88, 0xa8, 0, 10, 0x81, 0x00, 0, 20, 0x08, 0x00), ip4...)
	tests := []struct {
		name string
		lt   layers.LinkType
		data []byte
		src  string
	}{
		{"ethernet", layers.LinkTypeEthernet, v4, "192.0.2.1:40000"},
		{"ethernet ipv6", layers.LinkTypeEthernet, v6, "[2001:db8::1]:40000"},
		{"802.1ad and 802.1Q", layers.LinkTypeEthernet, vlan, "192.0.2.1:40000"},
		{"linux cooked", layers.LinkTypeLinuxSLL, sll(0x0800, ip4), "192.0.2.1:40000"},
		{"linux cooked v2", layers.LinkTypeLinuxSLL2, sll2(0x86dd, ip6), "[2001:db8::1]:40000"},
		{"raw ipv4", layers.LinkTypeRaw, ip4, "192.0.2.1:40000"},
		{"raw ipv6, hop-by-hop", layers.LinkTypeIPv6, hbh, "[2001:db8::1]:40000"},
		{"bsd null", layers.LinkTypeNull, append(le32(2), ip4...), "192.0.2.1:40000"},
		{"bsd null ipv6", layers.LinkTypeNull, append(le32(30), ip6...), "[2001:db8::1]:40000"},
		{"openbsd loop", layers.LinkTypeLoop, append(be32(24), ip6...), "[2001:db8::1]:40000"},
		{"ppp", layers.LinkTypePPP, append([]byte{0xff, 0x03, 0x00, 0x21}, ip4...), "192.0.2.1:40000"},
		{"ppp ipv6, no address and control", layers.LinkTypePPP, append([]byte{0x00, 0x57}, ip6...), "[2001:db8::1]:40000"},
		{"pppoe over 802.1Q", layers.LinkTypeEthernet, append(append(bytes.Clone(v4[:12]), 0x81, 0x00, 0, 121, 0x88, 0x64, 0x11, 0, 0x21, 0x75, 0x01, 0x3e, 0x00, 0x57), ip6...), "[2001:db8::1]:40000"},
		{"cisco hdlc", linkTypeCiscoHDLC, append([]byte{0x0f, 0x00, 0x08, 0x00}, ip4...), "192.0.2.1:40000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p pkt
			ok, err := decodeLink(tt.data, tt.lt, &p)
			if !ok || err != nil || p.src.String() != tt.src || p.dst.Port() != 443 || p.seq != 7 || string(p.payload) != "hello" || p.cut {
				t.Errorf("ok %v err %v: %v -> %v seq %d payload %q cut %v", ok, err, p.src, p.dst, p.seq, p.payload, p.cut)
			}
		})
	}
	if _, err := decodeLink(v4, 105, new(pkt)); err == nil || !strings.Contains(err.Error(), "link type 105 (") {
		t.Errorf("802.11: %v", err)
	}
	t.Run("pcapng of a link type not read", func(t *testing.T) {
		var out bytes.Buffer
		w, err := pcapgo.NewNgWriter(&out, 147)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: time.Unix(1, 0), CaptureLength: len(v4), Length: len(v4)}, v4); err != nil {
			t.Fatal(err)
		}
		_ = w.Flush()
		_, bad, _, err := runPcap(t, out.Bytes())
		if err == nil || !strings.Contains(err.Error(), "link type 147") || len(bad) != 1 {
			t.Errorf("error %v, reported %v", err, bad)
		}
	})
}

// TestPcap_MidStream: a connection whose start the capture missed gives
// no banner of whatever bytes it was in the middle of (an SSH
// identification line says what it is and still counts); a segment
// retransmitted after the connection closed starts nothing.
func TestPcap_MidStream(t *testing.T) {
	mid := []testPkt{
		{src: "198.51.100.1", dst: "192.0.2.10", sport: 8443, dport: 40000, seq: 900, ack: true, payload: []byte("\x8a\x01 middle of a download")},
		{src: "192.0.2.10", dst: "198.51.100.1", sport: 40000, dport: 8443, seq: 100, ack: true, payload: []byte("\x00\x01ack")},
		{src: "198.51.100.2", dst: "192.0.2.10", sport: 2222, dport: 40001, seq: 1, ack: true, payload: []byte("SSH-2.0-dropbear_2022.83\r\n")},
	}
	session := tcpSession("192.0.2.10", "198.51.100.3", 40002, 21, "", "220 FTP ready\r\n")
	late := session[2] // the server's greeting, again, after both FINs
	pkts := append(append(mid, session...), late)
	obs, bad, _, err := runPcap(t, writeCapture(t, 65535, pkts))
	if err != nil || len(bad) > 0 {
		t.Fatal(err, bad)
	}
	var got []string
	for _, o := range obs {
		got = append(got, o.IP+" "+o.Service.Probes[0].Name+" "+o.Service.Probes[0].Banner.Received.Text())
	}
	want := []string{"198.51.100.3 pcap:banner 220 FTP ready\r\n", "198.51.100.2 pcap:ssh SSH-2.0-dropbear_2022.83\r\n"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestPcap_WireGuard: a handshake is an answer naming the initiation's
// sender index, whatever the port and however long a provider's variant
// makes the messages, or a cookie reply; bytes that only start like
// WireGuard's, on its port, are not WireGuard.
func TestPcap_WireGuard(t *testing.T) {
	msg := func(typ byte, n int, idx []byte, at int) []byte {
		b := make([]byte, n)
		b[0] = typ
		for i := 8; i < n; i++ {
			b[i] = byte(i * 7)
		}
		copy(b[at:], idx)
		return b
	}
	idx := []byte{0xd8, 0x37, 0xd0, 0x30}
	other := []byte{1, 2, 3, 4}
	udp := func(cport, sport uint16, fromClient bool, payload []byte) testPkt {
		if fromClient {
			return testPkt{src: "192.0.2.10", dst: "198.51.100.7", sport: cport, dport: sport, udp: true, payload: payload}
		}
		return testPkt{src: "198.51.100.7", dst: "192.0.2.10", sport: sport, dport: cport, udp: true, payload: payload}
	}
	tests := []struct {
		name string
		pkts []testPkt
		want string // "protocol port confidence", "" none
	}{
		{"standard, port 5060", []testPkt{udp(40000, 5060, true, msg(1, 148, idx, 4)), udp(40000, 5060, false, msg(2, 92, idx, 8))}, "wireguard 5060 0.95"},
		{"a provider's longer messages", []testPkt{udp(40000, 51820, true, msg(1, 204, idx, 4)), udp(40000, 51820, false, msg(2, 100, idx, 8))}, "wireguard 51820 0.95"},
		{"cookie reply", []testPkt{udp(40000, 443, true, msg(1, 148, idx, 4)), udp(40000, 443, false, msg(3, 64, idx, 4))}, "wireguard 443 0.95"},
		// a long capture: six rekeyed sessions, six receiver indices each way
		{"handshake after many rekeyed sessions", wgRekeyed(udp, msg, idx), "wireguard 51000 0.95"},
		{"answer naming another index", []testPkt{udp(40000, 51821, true, msg(1, 148, idx, 4)), udp(40000, 51821, false, msg(2, 92, other, 8))}, ""},
		{"not WireGuard on its port", []testPkt{udp(40000, 51820, true, append([]byte{1, 0, 0, 0}, []byte("not a handshake, a longer text")...)),
			udp(40000, 51820, false, []byte{2, 0, 0, 0, 9})}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, bad, _, err := runPcap(t, writeCapture(t, 65535, tt.pkts))
			if err != nil || len(bad) > 0 {
				t.Fatal(err, bad)
			}
			got := ""
			for _, o := range obs {
				if o.Flow != nil {
					got = fmt.Sprintf("%s %d %v", o.Flow.Protocol, o.Flow.Port, o.Flow.Confidence)
				}
			}
			if got != tt.want {
				t.Errorf("flow %q, want %q (%+v)", got, tt.want, obs)
			}
		})
	}
}

// wgRekeyed is a long WireGuard capture between two ends: six sessions,
// each a handshake (the peers rekey every two minutes) and transport data
// under the session's own receiver indices, so more indices than a
// capture without its handshakes would be allowed.
func wgRekeyed(udp func(uint16, uint16, bool, []byte) testPkt, msg func(byte, int, []byte, int) []byte, idx []byte) []testPkt {
	var pkts []testPkt
	for i := range 6 {
		in, re := []byte{byte(i + 1), 0, 0, 0}, []byte{byte(i + 11), 0, 0, 0}
		if i == 0 {
			in = idx
		}
		pkts = append(pkts, udp(40000, 51000, true, msg(1, 148, in, 4)), udp(40000, 51000, false, msg(2, 92, in, 8)),
			udp(40000, 51000, true, msg(4, 96, re, 4)), udp(40000, 51000, false, msg(4, 96, in, 4)))
	}
	return pkts
}

// TestChunkedLength finds where a chunked body ends on the wire, its
// trailers included, or that the stream ended first.
func TestChunkedLength(t *testing.T) {
	tests := []struct {
		in       string
		n        int
		complete bool
	}{
		{"4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\n\r\nHTTP/1.1 200 OK", 30, true},
		{"4\r\nWiki\r\n0\r\nX-Trailer: 1\r\n\r\nnext", 28, true},
		{"4\nWiki\n0\n\nnext", 10, true},
		{"4\r\nWi", 5, false},
		{"zz\r\nWiki\r\n", 10, false},
		{"4\r\nWiki\r\n0\r\nX-Trailer", 21, false},
	}
	for _, tt := range tests {
		n, complete := chunkedLength([]byte(tt.in))
		if n != tt.n || complete != tt.complete {
			t.Errorf("%q: %d %v, want %d %v", tt.in, n, complete, tt.n, tt.complete)
		}
	}
}

// TestPcap_LongBanner: a server's first bytes past the kept limit are
// stored cut, flagged, with the length it sent.
func TestPcap_LongBanner(t *testing.T) {
	part := strings.Repeat("x", 35000)
	pkts := tcpSession("192.0.2.10", "198.51.100.1", 40000, 7777, "", part)
	// The server's second segment follows its first.
	second := pkts[3]
	second.seq += uint32(len(part))
	pkts = append(pkts[:4], append([]testPkt{second}, pkts[4:]...)...)
	pkts[len(pkts)-1].seq += uint32(len(part))
	obs, bad, _, err := runPcap(t, writeCapture(t, 65535, pkts))
	if err != nil || len(bad) > 0 || len(obs) != 1 {
		t.Fatal(err, bad, len(obs))
	}
	r := obs[0].Service.Probes[0].Banner.Received
	if !r.Truncated || r.Length != 70000 || r.SHA256 != "" || len(r.Bytes()) != pcapMaxBanner {
		t.Errorf("received: truncated %v length %d sha256 %q, %d bytes kept", r.Truncated, r.Length, r.SHA256, len(r.Bytes()))
	}
}

// TestPcap_UnansweredUDPProbe: a scanner's IKE or OpenVPN probe that no
// one answered (the port closed or filtered) makes no VPN endpoint of its
// target; the same probe answered does.
func TestPcap_UnansweredUDPProbe(t *testing.T) {
	ike := func(initiator bool) []byte {
		b := make([]byte, 28)
		copy(b, []byte{1, 2, 3, 4, 5, 6, 7, 8}) // initiator SPI
		if !initiator {
			copy(b[8:], []byte{9, 10, 11, 12, 13, 14, 15, 16})
		}
		b[17], b[18] = 0x10, 2 // IKEv1, identity protection
		binary.BigEndian.PutUint32(b[24:], 28)
		return b
	}
	probe := func(dport uint16, payload []byte) testPkt {
		return testPkt{src: "192.0.2.10", dst: "198.51.100.7", sport: 40000, dport: dport, udp: true, payload: payload}
	}
	answer := func(sport uint16, payload []byte) testPkt {
		return testPkt{src: "198.51.100.7", dst: "192.0.2.10", sport: sport, dport: 40000, udp: true, payload: payload}
	}
	tests := []struct {
		name string
		pkts []testPkt
		want string
	}{
		{"IKE probe, no answer", []testPkt{probe(500, ike(true)), probe(500, ike(true))}, ""},
		{"IKE probe answered", []testPkt{probe(500, ike(true)), answer(500, ike(false))}, "ikev2 500"},
		{"NAT-T port, no answer", []testPkt{probe(4500, []byte{0xff})}, ""},
		{"L2TP port, no answer", []testPkt{probe(1701, []byte{0xc8, 2, 0, 12})}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var skipped []string
			opt := Options{Skipped: func(_ int, r string) { skipped = append(skipped, r) }}
			var got []string
			err := Pcap(bytes.NewReader(writeCapture(t, 65535, tt.pkts)), opt, func(_ int, o Observation) error {
				if o.Flow != nil {
					got = append(got, fmt.Sprintf("%s %d", o.Flow.Protocol, o.Flow.Port))
				}
				return nil
			}, func(e LineError) { t.Errorf("malformed: %v", e) })
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, ",") != tt.want {
				t.Errorf("flows %q, want %q", got, tt.want)
			}
			if tt.want == "" && !slices.Contains(skipped, pcapUnanswered) {
				t.Errorf("skipped %q, want %q", skipped, pcapUnanswered)
			}
		})
	}
}

// TestPcap_ModifiedFormat: a capture in the modified pcap layout (magic
// a1b2cd34, 8 more bytes a record header), as libpcap reads it, gives the
// observations the standard file gives; cut inside a record header, what
// came before still goes in.
func TestPcap_ModifiedFormat(t *testing.T) {
	std := writeCapture(t, 65535, tcpSession("192.0.2.10", "198.51.100.7", 40000, 80,
		"GET / HTTP/1.1\r\nHost: a\r\n\r\n", "HTTP/1.1 200 OK\r\nServer: x\r\nContent-Length: 2\r\n\r\nok"))
	mod := bytes.Clone(std[:24])
	binary.LittleEndian.PutUint32(mod, 0xa1b2cd34)
	last := 0
	for b := std[24:]; len(b) >= 16; {
		n := int(binary.LittleEndian.Uint32(b[8:12]))
		last = len(mod)
		mod = append(mod, b[:16]...)
		mod = append(mod, 2, 0, 0, 0, 0, 8, 0, 0) // ifindex 2, protocol, packet type, pad
		mod = append(mod, b[16:16+n]...)
		b = b[16+n:]
	}
	want, _, _, err := runPcap(t, std)
	if err != nil || len(want) == 0 {
		t.Fatalf("standard: %v, %d observations", err, len(want))
	}
	got, bad, _, err := runPcap(t, mod)
	if err != nil || len(bad) > 0 {
		t.Fatalf("modified: %v %v", err, bad)
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Errorf("modified pcap read as\n%s\nwant\n%s", g, w)
	}
	// Cut in the last record's header: the damage is reported, what came
	// before goes in.
	got, bad, _, err = runPcap(t, mod[:last+20])
	if err != nil || len(bad) != 1 || !strings.Contains(bad[0].Err.Error(), "capture cut or damaged") || len(got) != len(want) {
		t.Errorf("cut in a record header: %v %v, %d observations", err, bad, len(got))
	}
}

// TestPcap_TelnetLoginText: a telnet server's first turn is option
// negotiation; the banner is its bytes across the exchange, so the login
// text that follows the client's answer is kept.
func TestPcap_TelnetLoginText(t *testing.T) {
	srvOpts := "\xff\xfb\x01\xff\xfb\x03\xff\xfd\x18\xff\xfd\x1f"
	cliOpts := "\xff\xfd\x01\xff\xfd\x03\xff\xfb\x18\xff\xfb\x1f"
	login := "\r\n\r\nUser Access Verification\r\n\r\nUsername: "
	obs, bad, _, err := runPcap(t, writeCapture(t, 65535, tcpSession("192.0.2.10", "198.51.100.1", 40000, 23, "", srvOpts, cliOpts, login)))
	if err != nil || len(bad) > 0 || len(obs) != 1 {
		t.Fatal(err, bad, len(obs))
	}
	b := obs[0].Service.Probes[0].Banner
	if got := string(b.Received.Bytes()); got != srvOpts+login {
		t.Errorf("received %q", got)
	}
	// a server that sends text first keeps its first turn alone
	obs, _, _, _ = runPcap(t, writeCapture(t, 65535, tcpSession("192.0.2.10", "198.51.100.1", 40001, 2323, "", "login: ", "admin\r\n", "Password: ")))
	if got := string(obs[0].Service.Probes[0].Banner.Received.Bytes()); got != "login: " {
		t.Errorf("text first: received %q", got)
	}
}
