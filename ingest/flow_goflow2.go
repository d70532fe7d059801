package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
)

// goflowRecord holds the members of a goflow2 JSON line that the
// inference reads. goflow2 v2's default formatter writes snake_case
// names (proto as a name such as "UDP", times in nanoseconds, or RFC 3339
// strings when a mapping renders them so); goflow (Cloudflare) and
// goflow2 before v2 write CamelCase (Proto as a number, times in seconds).
type goflowRecord struct {
	Type     string   `json:"type"`
	Received flexTime `json:"time_received_ns"`
	End      flexTime `json:"time_flow_end_ns"`
	Bytes    *int64   `json:"bytes"`
	Packets  *int64   `json:"packets"`
	SrcAddr  *string  `json:"src_addr"`
	DstAddr  *string  `json:"dst_addr"`
	Proto    *ipProto `json:"proto"`
	SrcPort  *int     `json:"src_port"`
	DstPort  *int     `json:"dst_port"`

	OldType     string   `json:"Type"`
	OldReceived flexTime `json:"TimeReceived"`
	OldEnd      flexTime `json:"TimeFlowEnd"`
	OldBytes    *int64   `json:"Bytes"`
	OldPackets  *int64   `json:"Packets"`
	OldSrcAddr  *string  `json:"SrcAddr"`
	OldDstAddr  *string  `json:"DstAddr"`
	OldProto    *ipProto `json:"Proto"`
	OldSrcPort  *int     `json:"SrcPort"`
	OldDstPort  *int     `json:"DstPort"`
}

// Goflow2 reads goflow2's JSON lines (-format=json, the default), one
// flow per line, and goflow's (Cloudflare) older CamelCase lines. Each
// flow's protocol is inferred (InferFlow); a flow with none is skipped
// and counted through opt.Skipped. observed_at is the flow's end, or the
// time the collector received it.
func Goflow2(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("goflow2")
	return opt.lines(r, "goflow2 flows", bad, func(n int, b []byte) error {
		line := bytes.TrimSpace(b)
		if len(line) == 0 || line[0] == '#' {
			return nil
		}
		var g goflowRecord
		if err := json.Unmarshal(line, &g); err != nil {
			bad(LineError{n, fmt.Errorf("json: %w", err)})
			return nil
		}
		rec, at, err := g.record()
		if err != nil {
			bad(LineError{n, err})
			return nil
		}
		return emitFlow(n, rec, at, src, opt, emit, bad)
	})
}

// record checks g and returns it as a FlowRecord with its time.
func (g *goflowRecord) record() (FlowRecord, time.Time, error) {
	unit := time.Nanosecond
	if g.SrcAddr == nil && g.OldSrcAddr != nil {
		unit = time.Second
		g.Type, g.Received, g.End = g.OldType, g.OldReceived, g.OldEnd
		g.Bytes, g.Packets, g.SrcAddr, g.DstAddr = g.OldBytes, g.OldPackets, g.OldSrcAddr, g.OldDstAddr
		g.Proto, g.SrcPort, g.DstPort = g.OldProto, g.OldSrcPort, g.OldDstPort
	}
	var rec FlowRecord
	switch {
	case g.SrcAddr == nil:
		return rec, time.Time{}, errors.New("src_addr: missing (not a goflow2 flow record)")
	case g.DstAddr == nil:
		return rec, time.Time{}, errors.New("dst_addr: missing")
	case g.Proto == nil:
		return rec, time.Time{}, errors.New("proto: missing")
	}
	var err error
	if rec.Src, err = flowAddr("src_addr", *g.SrcAddr); err != nil {
		return rec, time.Time{}, err
	}
	if rec.Dst, err = flowAddr("dst_addr", *g.DstAddr); err != nil {
		return rec, time.Time{}, err
	}
	rec.IPProto = int(*g.Proto)
	for _, p := range []struct {
		name string
		v    *int
		to   *int
	}{{"src_port", g.SrcPort, &rec.SrcPort}, {"dst_port", g.DstPort, &rec.DstPort}} {
		if p.v == nil {
			continue
		}
		if *p.v < 0 || *p.v > 65535 {
			return rec, time.Time{}, fmt.Errorf("%s: must be 0..65535, got %d", p.name, *p.v)
		}
		*p.to = *p.v
	}
	for _, c := range []struct {
		name string
		v    *int64
		to   *int64
	}{{"bytes", g.Bytes, &rec.Bytes}, {"packets", g.Packets, &rec.Packets}} {
		if c.v == nil {
			continue
		}
		if *c.v < 0 {
			return rec, time.Time{}, fmt.Errorf("%s: negative", c.name)
		}
		*c.to = *c.v
	}
	rec.L2 = strings.HasPrefix(strings.ToUpper(g.Type), "SFLOW")
	at := g.End.in(unit)
	if at.IsZero() {
		at = g.Received.in(unit)
	}
	if at.IsZero() {
		return rec, time.Time{}, errors.New("time_flow_end_ns, time_received_ns: neither set")
	}
	return rec, at, nil
}

// flexTime is a goflow2 time: a count since 1970 (nanoseconds, seconds
// in goflow's CamelCase members), or an RFC 3339 string.
type flexTime struct {
	n int64
	t time.Time
}

// UnmarshalJSON reads a number or an RFC 3339 string.
func (f *flexTime) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return fmt.Errorf("time %q: not RFC 3339", s)
		}
		f.t = t
		return nil
	}
	if string(b) == "null" {
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("time %s: not a count since 1970", b)
	}
	f.n = n
	return nil
}

// in returns the time, a count read in unit; zero when unset or 0.
func (f flexTime) in(unit time.Duration) time.Time {
	switch {
	case !f.t.IsZero():
		return f.t
	case f.n == 0:
		return time.Time{}
	case unit == time.Second:
		return time.Unix(f.n, 0).UTC()
	default:
		return time.Unix(0, f.n).UTC()
	}
}

// ipProto is an IP protocol given as a number or a name (goflow2 writes
// IANA keywords such as "TCP", "UDP", "ESP", "GRE"; nfdump its own short
// names). A name it does not know is protocol 255, which no rule reads.
type ipProto int

// UnmarshalJSON reads a number or a name.
func (p *ipProto) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := parseIPProto(s)
		*p = ipProto(v)
		return err
	}
	n, err := strconv.Atoi(string(b))
	if err != nil || n < 0 || n > 255 {
		return fmt.Errorf("proto %s: not 0..255", b)
	}
	*p = ipProto(n)
	return nil
}

// ipProtoNames are the protocol names the inference reads (upper case).
var ipProtoNames = map[string]int{"TCP": ipProtoTCP, "UDP": ipProtoUDP, "GRE": ipProtoGRE, "ESP": ipProtoESP,
	"ICMP": 1, "ICMP6": 58, "IPV6-ICMP": 58, "AH": 51, "SCTP": 132}

func parseIPProto(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("proto: empty")
	}
	if s[0] >= '0' && s[0] <= '9' {
		n, err := strconv.Atoi(s)
		if err != nil || n > 255 {
			return 0, fmt.Errorf("proto %q: not 0..255", s)
		}
		return n, nil
	}
	if n, ok := ipProtoNames[strings.ToUpper(s)]; ok {
		return n, nil
	}
	return 255, nil
}

// flowAddr parses a flow's address; the unspecified address (what an
// exporter sends for a field it does not fill) is an error.
func flowAddr(field, s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return a, fmt.Errorf("%s: not an IP address: %q", field, s)
	}
	a = a.Unmap()
	if a.IsUnspecified() {
		return a, fmt.Errorf("%s: unspecified address %s", field, a)
	}
	return a, nil
}

// emitFlow infers the protocol of rec and emits its observation, or
// tells opt.Skipped. opt.Confidence, when set, caps the inferred confidence.
func emitFlow(line int, rec FlowRecord, at time.Time, src string, opt Options, emit Emit, bad func(LineError)) error {
	return emitFlowFirst(line, []FlowRecord{rec}, at, src, opt, emit, bad)
}

// emitFlowFirst emits the observation of the first of recs (readings of
// one flow: each direction of a bidirectional record, with and without
// link-layer headers) in which InferFlow recognises a protocol, or tells
// opt.Skipped that none has one.
func emitFlowFirst(line int, recs []FlowRecord, at time.Time, src string, opt Options, emit Emit, bad func(LineError)) error {
	var m FlowMatch
	ok := false
	for _, rec := range recs {
		if m, ok = InferFlow(rec); ok {
			break
		}
	}
	if !ok {
		opt.skip(line, flowUnrecognised)
		return nil
	}
	m.Flow.Confidence = opt.capConfidence(m.Flow.Confidence)
	o := Observation{Type: TypeFlow, IP: m.Server.String(), Source: src, ObservedAt: ipmodel.FormatTime(at), Flow: &m.Flow}
	return emitChecked(line, o, emit, bad)
}
