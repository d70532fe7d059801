package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// nfdumpTextLayout is a block of nfdump's text output (`-o line`, `long`,
// `extended`, and `fmt:` layouts that keep line's first columns): what
// its header names after the destination, and whether it has a Duration.
type nfdumpTextLayout struct {
	duration bool
	after    []string // the column names after "Dst IP Addr:Port"
}

// nfdumpTextHeader reads a text output's header line ("Date first seen
// Duration Proto Src IP Addr:Port Dst IP Addr:Port Packets Bytes Flows"),
// or reports that the line is none.
func nfdumpTextHeader(line string) (*nfdumpTextLayout, bool) {
	if !strings.HasPrefix(line, "Date first seen") && !strings.HasPrefix(line, "Date flow start") {
		return nil, false
	}
	rest := strings.TrimSpace(line[len("Date first seen"):])
	l := &nfdumpTextLayout{}
	if r, ok := strings.CutPrefix(rest, "Duration"); ok {
		l.duration, rest = true, strings.TrimSpace(r)
	}
	r, ok := strings.CutPrefix(rest, "Proto")
	if !ok {
		return nil, false
	}
	f := strings.Fields(r)
	if len(f) < 6 || strings.Join(f[:6], " ") != "Src IP Addr:Port Dst IP Addr:Port" {
		return nil, false
	}
	l.after = f[6:]
	return l, true
}

// nfdumpTextSummary tells the lines nfdump prints after a text block.
func nfdumpTextSummary(line string) bool {
	for _, p := range []string{"Summary:", "Time window:", "Total flows processed:", "Sys:", "No matching flows"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// record reads one line of a text block: date, time, [duration,] proto,
// source, "->", destination, then the header's columns, where a count may
// be scaled ("12.3 M": nfdump's default without -N).
func (l *nfdumpTextLayout) record(line string) (FlowRecord, time.Time, error) {
	var rec FlowRecord
	f := strings.Fields(line)
	need := 6
	if l.duration {
		need++
	}
	if len(f) < need {
		return rec, time.Time{}, fmt.Errorf("%d columns: want date, time,%s proto, source -> destination", len(f), map[bool]string{true: " duration,"}[l.duration])
	}
	start, err := nfdumpTime(f[0] + " " + f[1])
	if err != nil {
		return rec, time.Time{}, err
	}
	i := 2
	var dur time.Duration
	if l.duration {
		if dur, err = nfdumpDuration(f[i]); err != nil {
			return rec, time.Time{}, err
		}
		i++
	}
	if rec.IPProto, err = parseIPProto(f[i]); err != nil {
		return rec, time.Time{}, err
	}
	if f[i+2] != "->" {
		return rec, time.Time{}, fmt.Errorf("want SOURCE -> DESTINATION, got %q %q %q", f[i+1], f[i+2], f[i+3])
	}
	var sp, dp string
	if rec.Src, sp, err = nfdumpAddrPort("source", f[i+1]); err != nil {
		return rec, time.Time{}, err
	}
	if rec.Dst, dp, err = nfdumpAddrPort("destination", f[i+3]); err != nil {
		return rec, time.Time{}, err
	}
	if rec.IPProto == ipProtoTCP || rec.IPProto == ipProtoUDP {
		for _, p := range []struct {
			s  string
			to *int
		}{{sp, &rec.SrcPort}, {dp, &rec.DstPort}} {
			v, err := strconv.Atoi(p.s)
			if err != nil || v < 0 || v > 65535 {
				return rec, time.Time{}, fmt.Errorf("port %q: not 0..65535", p.s)
			}
			*p.to = v
		}
	}
	vals := f[i+4:]
	for _, name := range l.after {
		if len(vals) == 0 {
			break
		}
		v := vals[0]
		vals = vals[1:]
		scale := 1.0
		if len(vals) > 0 {
			if m, ok := map[string]float64{"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}[vals[0]]; ok {
				scale, vals = m, vals[1:]
			}
		}
		var to *int64
		switch name {
		case "Packets":
			to = &rec.Packets
		case "Bytes":
			to = &rec.Bytes
		default:
			continue
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 0 {
			return rec, time.Time{}, fmt.Errorf("%s %q: not a count", strings.ToLower(name), v)
		}
		*to = int64(x * scale)
	}
	return rec, start.Add(dur), nil
}

// nfdumpDuration reads 1.7's "HH:MM:SS.mmm" (with "Nd " days before it
// on long flows) or 1.6's seconds.
func nfdumpDuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("duration %q: want HH:MM:SS.mmm or seconds", s)
	if !strings.Contains(s, ":") {
		sec, err := strconv.ParseFloat(s, 64)
		if err != nil || sec < 0 || sec > 1e9 {
			return 0, bad
		}
		return time.Duration(sec * float64(time.Second)), nil
	}
	p := strings.Split(s, ":")
	if len(p) != 3 {
		return 0, bad
	}
	h, err1 := strconv.Atoi(p[0])
	m, err2 := strconv.Atoi(p[1])
	sec, err3 := strconv.ParseFloat(p[2], 64)
	if err1 != nil || err2 != nil || err3 != nil || h < 0 || m < 0 || sec < 0 {
		return 0, bad
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec*float64(time.Second)), nil
}

// nfdumpAddrPort splits nfdump's "192.0.2.1:443" or "2001:db8::1.443"
// (IPv6 with a dot before the port). An address nfdump shortened to fit
// its column ("2001:db8:1..::12") cannot be read: run nfdump with -6.
func nfdumpAddrPort(what, s string) (a netip.Addr, port string, err error) {
	host := s
	if strings.Count(s, ":") >= 2 { // IPv6: the port follows the last dot
		if i := strings.LastIndexByte(s, '.'); i > 0 && !strings.Contains(s[i:], ":") {
			host, port = s[:i], s[i+1:]
		}
		if strings.Contains(host, "..") {
			return a, "", fmt.Errorf("%s %q: nfdump shortened the IPv6 address; run it with -6 (or -o csv)", what, s)
		}
	} else if i := strings.LastIndexByte(s, ':'); i > 0 {
		host, port = s[:i], s[i+1:]
	}
	a, err = flowAddr(what+" address", host)
	return a, port, err
}

// nfdumpJSONRecord is one record of `nfdump -o json` (1.7: an array of
// objects; `-o json-log`, one object a line).
type nfdumpJSONRecord struct {
	Type      string `json:"type"`
	First     string `json:"first"`
	Last      string `json:"last"`
	InPackets int64  `json:"in_packets"`
	InBytes   int64  `json:"in_bytes"`
	Proto     int    `json:"proto"`
	SrcPort   int    `json:"src_port"`
	DstPort   int    `json:"dst_port"`
	Src4      string `json:"src4_addr"`
	Dst4      string `json:"dst4_addr"`
	Src6      string `json:"src6_addr"`
	Dst6      string `json:"dst6_addr"`
}

// nfdumpJSON reads nfdump's JSON output. Times are local without a zone,
// read as UTC like the other outputs (run nfdump with TZ=UTC).
func nfdumpJSON(data []byte, src string, opt Options, emit Emit, bad func(LineError)) error {
	return jsonValues(data, bad, func(n int, v json.RawMessage, _ bool) error {
		var r nfdumpJSONRecord
		if err := json.Unmarshal(v, &r); err != nil {
			bad(LineError{n, fmt.Errorf("not an nfdump JSON record: %w", err)})
			return nil
		}
		if r.Type != "" && r.Type != "FLOW" {
			if opt.Skipped != nil {
				opt.Skipped(n, "nfdump record type "+r.Type)
			}
			return nil
		}
		rec := FlowRecord{IPProto: r.Proto, Packets: r.InPackets, Bytes: r.InBytes}
		var err error
		if rec.Src, err = flowAddr("src_addr", firstNonEmpty(r.Src4, r.Src6)); err != nil {
			bad(LineError{n, err})
			return nil
		}
		if rec.Dst, err = flowAddr("dst_addr", firstNonEmpty(r.Dst4, r.Dst6)); err != nil {
			bad(LineError{n, err})
			return nil
		}
		if rec.IPProto == ipProtoTCP || rec.IPProto == ipProtoUDP {
			rec.SrcPort, rec.DstPort = r.SrcPort, r.DstPort
		}
		at, err := nfdumpJSONTime(firstNonEmpty(r.Last, r.First))
		if err != nil {
			bad(LineError{n, err})
			return nil
		}
		return emitFlow(n, rec, at, src, opt, emit, bad)
	})
}

// nfdumpJSONTime reads "2026-11-20T09:59:01.000" (as UTC).
func nfdumpJSONTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, errors.New("no time: first and last are empty")
	}
	t, err := time.Parse("2006-01-02T15:04:05.999", s)
	if err != nil {
		return nfdumpTime(strings.Replace(s, "T", " ", 1))
	}
	return t, nil
}
