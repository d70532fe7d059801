// Command flowgen sends the flows of ingest/testdata/SOURCES.md as
// NetFlow v5 (IPv4) and NetFlow v9 (IPv6) packets to a collector, so that
// goflow2 and nfcapd/nfdump write their own output of known flows:
//
//	go run ./ingest/testdata/flowgen 127.0.0.1:2055
//
// It lives under testdata so that go build ./... and go test ./... leave it out.
package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"
)

type flow struct {
	src, dst         string
	sport, dport     uint16
	proto            uint8
	packets, octets  uint32
	startSec, endSec uint32 // seconds after base
}

// base is the export time; flows end up to a minute before it.
var base = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

var flows = []flow{
	{"192.0.2.10", "198.51.100.20", 43512, 51820, 17, 1, 176, 1, 1},        // WireGuard handshake initiation
	{"198.51.100.20", "192.0.2.10", 51820, 43512, 17, 1, 120, 1, 1},        // WireGuard handshake response
	{"192.0.2.10", "198.51.100.20", 43512, 51820, 17, 12, 14916, 2, 40},    // WireGuard initiation + 11 data messages
	{"192.0.2.11", "203.0.113.30", 50123, 38211, 17, 3, 528, 3, 13},        // three WireGuard initiations, no known port
	{"192.0.2.12", "198.51.100.21", 40000, 51820, 17, 4, 250, 4, 6},        // port 51820, sizes not WireGuard's
	{"192.0.2.13", "203.0.113.40", 0, 0, 50, 20, 2800, 5, 50},              // ESP
	{"192.0.2.13", "203.0.113.40", 500, 500, 17, 2, 760, 5, 5},             // IKE
	{"192.0.2.14", "203.0.113.41", 4500, 4500, 17, 30, 4200, 6, 55},        // IPsec NAT-T
	{"192.0.2.15", "198.51.100.50", 51515, 1194, 17, 1, 70, 7, 7},          // OpenVPN hard reset (tls-auth, SHA1)
	{"192.0.2.15", "198.51.100.50", 51515, 1194, 17, 40, 41000, 8, 58},     // OpenVPN data
	{"192.0.2.16", "198.51.100.51", 49200, 1194, 6, 25, 9000, 9, 40},       // OpenVPN over TCP
	{"192.0.2.17", "203.0.113.60", 1701, 1701, 17, 10, 1500, 10, 30},       // L2TP
	{"192.0.2.18", "203.0.113.61", 49300, 1723, 6, 8, 900, 11, 20},         // PPTP control
	{"192.0.2.18", "203.0.113.61", 0, 0, 47, 50, 20000, 11, 59},            // GRE: skipped (GRE carries many tunnels, not only PPTP)
	{"192.0.2.19", "198.51.100.70", 49400, 9001, 6, 30, 30000, 12, 59},     // TCP 9001: skipped (no rule: apps use it, Tor relays 443 too)
	{"192.0.2.20", "198.51.100.80", 49500, 443, 6, 10, 5000, 13, 14},       // HTTPS
	{"198.51.100.53", "192.0.2.21", 53, 53000, 17, 1, 176, 14, 14},         // a DNS answer of 176 bytes
	{"192.0.2.22", "198.51.100.81", 50000, 443, 17, 1, 176, 15, 15},        // a QUIC packet of 176 bytes
	{"192.0.2.23", "203.0.113.90", 40001, 40002, 6, 1, 176, 16, 16},        // a TCP packet of 176 bytes
	{"192.0.2.24", "198.51.100.82", 51820, 53, 17, 1, 60, 17, 17},          // a DNS query from source port 51820
	{"192.0.2.25", "198.51.100.83", 0, 0x0800, 1, 4, 336, 18, 21},          // ICMP echo
	{"2001:db8:1::10", "2001:db8:2::20", 43600, 51820, 17, 1, 196, 19, 19}, // WireGuard initiation over IPv6
	{"2001:db8:2::21", "2001:db8:1::11", 39000, 45000, 17, 1, 140, 20, 20}, // WireGuard response over IPv6, no known port
	{"2001:db8:1::12", "2001:db8:2::22", 50001, 443, 6, 10, 6000, 21, 30},  // HTTPS over IPv6
}

const uptimeMs = 3600_000 // the exporter has been up an hour at base

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: flowgen HOST:PORT")
		os.Exit(2)
	}
	c, err := net.Dial("udp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer c.Close()
	var v4, v6 []flow
	for _, f := range flows {
		if netip.MustParseAddr(f.src).Is4() {
			v4 = append(v4, f)
		} else {
			v6 = append(v6, f)
		}
	}
	for _, p := range [][]byte{v5(v4), v9(v6)} {
		if _, err := c.Write(p); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// switched is a flow time as the exporter's uptime in milliseconds.
func switched(sec uint32) uint32 { return uptimeMs - 60_000 + sec*1000 }

func v5(fs []flow) []byte {
	b := make([]byte, 24, 24+48*len(fs))
	be := binary.BigEndian
	be.PutUint16(b[0:], 5)
	be.PutUint16(b[2:], uint16(len(fs)))
	be.PutUint32(b[4:], uptimeMs)
	be.PutUint32(b[8:], uint32(base.Unix()))
	be.PutUint32(b[16:], 1) // flow sequence
	for _, f := range fs {
		r := make([]byte, 48)
		s, d := netip.MustParseAddr(f.src).As4(), netip.MustParseAddr(f.dst).As4()
		copy(r[0:], s[:])
		copy(r[4:], d[:])
		be.PutUint16(r[12:], 1) // input
		be.PutUint16(r[14:], 2) // output
		be.PutUint32(r[16:], f.packets)
		be.PutUint32(r[20:], f.octets)
		be.PutUint32(r[24:], switched(f.startSec))
		be.PutUint32(r[28:], switched(f.endSec))
		be.PutUint16(r[32:], f.sport)
		be.PutUint16(r[34:], f.dport)
		if f.proto == 6 {
			r[37] = 0x1b // FIN SYN PSH ACK
		}
		r[38] = f.proto
		r[44], r[45] = 24, 24
		b = append(b, r...)
	}
	return b
}

// v9 sends one template (IPv6 addresses, ports, protocol, bytes,
// packets, first and last switched) and the flows as its data.
func v9(fs []flow) []byte {
	be := binary.BigEndian
	b := make([]byte, 20)
	be.PutUint16(b[0:], 9)
	be.PutUint16(b[2:], 2) // records: the template and the data flowset
	be.PutUint32(b[4:], uptimeMs)
	be.PutUint32(b[8:], uint32(base.Unix()))
	be.PutUint32(b[12:], 1) // sequence
	be.PutUint32(b[16:], 0) // source id
	fields := [][2]uint16{{27, 16}, {28, 16}, {7, 2}, {11, 2}, {4, 1}, {1, 4}, {2, 4}, {22, 4}, {21, 4}}
	t := []byte{0, 0, 0, 0, 1, 0, 0, byte(len(fields))} // flowset 0, length, template 256, field count
	for _, f := range fields {
		t = be.AppendUint16(t, f[0])
		t = be.AppendUint16(t, f[1])
	}
	be.PutUint16(t[2:], uint16(len(t)))
	b = append(b, t...)
	d := []byte{1, 0, 0, 0} // flowset 256, length
	for _, f := range fs {
		s, ds := netip.MustParseAddr(f.src).As16(), netip.MustParseAddr(f.dst).As16()
		d = append(d, s[:]...)
		d = append(d, ds[:]...)
		d = be.AppendUint16(d, f.sport)
		d = be.AppendUint16(d, f.dport)
		d = append(d, f.proto)
		d = be.AppendUint32(d, f.octets)
		d = be.AppendUint32(d, f.packets)
		d = be.AppendUint32(d, switched(f.startSec))
		d = be.AppendUint32(d, switched(f.endSec))
	}
	for len(d)%4 != 0 {
		d = append(d, 0)
	}
	be.PutUint16(d[2:], uint16(len(d)))
	return append(b, d...)
}
