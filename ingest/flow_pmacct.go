package ingest

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Pmacct reads the flows pmacct's print plugin writes (nfacctd, sfacctd,
// pmacctd, uacctd): `print_output: json` (one object a line, or an
// array), `csv` and `formatted` (a header row naming the columns:
// SRC_IP, DST_IP, SRC_PORT, DST_PORT, PROTOCOL, TIMESTAMP_START,
// TIMESTAMP_END, PACKETS, BYTES, read by name as nfdump's csv is). The
// aggregation must keep the addresses and the protocol (src_host,
// dst_host, proto; ports and counters where the protocol inference needs
// them). Times are read as UTC (set timestamps_utc: true). Each flow's
// protocol is inferred (InferFlow); observed at its end.
func Pmacct(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	opt.Source = opt.source("pmacct")
	br := bufio.NewReaderSize(r, 64*1024)
	if !isJSONList(br) {
		return NfdumpCSV(br, opt, emit, bad)
	}
	data, err := readJSONFeed(br, "pmacct json")
	if err != nil {
		return err
	}
	return jsonValues(data, bad, func(n int, v json.RawMessage, _ bool) error {
		var rec struct {
			EventType string          `json:"event_type"`
			Src       string          `json:"ip_src"`
			Dst       string          `json:"ip_dst"`
			SrcPort   int             `json:"port_src"`
			DstPort   int             `json:"port_dst"`
			Proto     json.RawMessage `json:"ip_proto"`
			Start     string          `json:"timestamp_start"`
			End       string          `json:"timestamp_end"`
			Packets   int64           `json:"packets"`
			Bytes     int64           `json:"bytes"`
		}
		if err := json.Unmarshal(v, &rec); err != nil {
			bad(LineError{n, fmt.Errorf("not a pmacct record: %w", err)})
			return nil
		}
		if rec.Src == "" && rec.Dst == "" {
			opt.skip(n, "pmacct "+cmp.Or(rec.EventType, "record")+" without addresses")
			return nil
		}
		f := FlowRecord{Packets: rec.Packets, Bytes: rec.Bytes}
		var err error
		if f.Src, err = flowAddr("ip_src", rec.Src); err != nil {
			bad(LineError{n, err})
			return nil
		}
		if f.Dst, err = flowAddr("ip_dst", rec.Dst); err != nil {
			bad(LineError{n, err})
			return nil
		}
		if f.IPProto, err = parseIPProto(strings.Trim(string(rec.Proto), `"`)); err != nil {
			bad(LineError{n, fmt.Errorf("ip_proto: %w", err)})
			return nil
		}
		if f.IPProto == ipProtoTCP || f.IPProto == ipProtoUDP {
			f.SrcPort, f.DstPort = rec.SrcPort, rec.DstPort
		}
		at, err := nfdumpTime(cmp.Or(rec.End, rec.Start))
		if err != nil {
			bad(LineError{n, err})
			return nil
		}
		return emitFlow(n, f, at, opt.Source, opt, emit, bad)
	})
}
