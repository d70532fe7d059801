package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// gcpFlowOtherLog is the reason a Cloud Logging entry of another log
// than VPC Flow Logs' is skipped (an export of several logs).
const gcpFlowOtherLog = "gcp-vpc-flow log entry of another log (not vpc_flows)"

// gcpLogEntry holds the members of a Cloud Logging entry of VPC Flow
// Logs that the inference reads.
type gcpLogEntry struct {
	LogName     string          `json:"logName"`
	Timestamp   string          `json:"timestamp"`
	JSONPayload *gcpFlowPayload `json:"jsonPayload"`
}

type gcpFlowPayload struct {
	Connection *struct {
		SrcIP    string          `json:"src_ip"`
		DestIP   string          `json:"dest_ip"`
		SrcPort  json.RawMessage `json:"src_port"`
		DestPort json.RawMessage `json:"dest_port"`
		Protocol json.RawMessage `json:"protocol"`
	} `json:"connection"`
	BytesSent   json.RawMessage `json:"bytes_sent"`
	PacketsSent json.RawMessage `json:"packets_sent"`
	StartTime   string          `json:"start_time"`
	EndTime     string          `json:"end_time"`
}

// GCPVPCFlow reads Google Cloud VPC Flow Logs as Cloud Logging writes
// them: LogEntry objects (`gcloud logging read --format=json`'s array, a
// sink's JSON lines files in Cloud Storage, the Logging API's
// entries.list answer with its entries member) whose jsonPayload has
// connection {src_ip, src_port, dest_ip, dest_port, protocol},
// bytes_sent and packets_sent (int64 as JSON strings, or numbers),
// start_time and end_time. Each flow's protocol is inferred (InferFlow),
// observed at end_time (else start_time, else the entry's timestamp).
// Entries of other logs are skipped; entries of vpc_flows without a
// connection are reported.
func GCPVPCFlow(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("gcp-vpc-flow")
	data, err := readJSONFeed(r, "gcp vpc flow logs")
	if err != nil {
		return err
	}
	return jsonValues(data, bad, func(n int, v json.RawMessage, _ bool) error {
		// One decode tells an entries.list page from an entry, and reads the entry.
		var doc struct {
			Entries []json.RawMessage `json:"entries"`
			gcpLogEntry
		}
		if err := json.Unmarshal(v, &doc); err != nil {
			bad(LineError{n, fmt.Errorf("not a Cloud Logging entry: %w", err)})
			return nil
		}
		if doc.Entries == nil {
			return gcpFlowEntry(n, &doc.gcpLogEntry, src, opt, emit, bad)
		}
		for _, raw := range doc.Entries {
			var e gcpLogEntry
			if err := json.Unmarshal(raw, &e); err != nil {
				bad(LineError{n, fmt.Errorf("entries: not a Cloud Logging entry: %w", err)})
				continue
			}
			if err := gcpFlowEntry(n, &e, src, opt, emit, bad); err != nil {
				return err
			}
		}
		return nil
	})
}

// gcpFlowEntry reads one LogEntry, which starts on line n (an
// entries.list page's entries are reported on the page's line).
func gcpFlowEntry(n int, e *gcpLogEntry, src string, opt Options, emit Emit, bad func(LineError)) error {
	if e.JSONPayload == nil || e.JSONPayload.Connection == nil {
		if e.LogName != "" && !strings.Contains(e.LogName, "vpc_flows") {
			opt.skip(n, gcpFlowOtherLog)
			return nil
		}
		bad(LineError{n, errors.New("jsonPayload.connection: missing (not a VPC Flow Logs entry)")})
		return nil
	}
	rec, at, err := e.record()
	if err != nil {
		bad(LineError{n, err})
		return nil
	}
	return emitFlow(n, rec, at, src, opt, emit, bad)
}

// record checks the entry and returns its flow and time.
func (e *gcpLogEntry) record() (FlowRecord, time.Time, error) {
	var rec FlowRecord
	p := e.JSONPayload
	c := p.Connection
	var err error
	if rec.Src, err = flowAddr("jsonPayload.connection.src_ip", c.SrcIP); err != nil {
		return rec, time.Time{}, err
	}
	if rec.Dst, err = flowAddr("jsonPayload.connection.dest_ip", c.DestIP); err != nil {
		return rec, time.Time{}, err
	}
	proto, err := gcpInt(c.Protocol, "jsonPayload.connection.protocol", 255)
	if err != nil {
		return rec, time.Time{}, err
	}
	if len(c.Protocol) == 0 {
		return rec, time.Time{}, errors.New("jsonPayload.connection.protocol: missing")
	}
	rec.IPProto = int(proto)
	if rec.IPProto == ipProtoTCP || rec.IPProto == ipProtoUDP {
		for _, pt := range []struct {
			name string
			raw  json.RawMessage
			to   *int
		}{{"jsonPayload.connection.src_port", c.SrcPort, &rec.SrcPort}, {"jsonPayload.connection.dest_port", c.DestPort, &rec.DstPort}} {
			x, err := gcpInt(pt.raw, pt.name, 65535)
			if err != nil {
				return rec, time.Time{}, err
			}
			*pt.to = int(x)
		}
	}
	if rec.Bytes, err = gcpInt(p.BytesSent, "jsonPayload.bytes_sent", -1); err != nil {
		return rec, time.Time{}, err
	}
	if rec.Packets, err = gcpInt(p.PacketsSent, "jsonPayload.packets_sent", -1); err != nil {
		return rec, time.Time{}, err
	}
	for _, t := range []struct{ name, v string }{{"jsonPayload.end_time", p.EndTime}, {"jsonPayload.start_time", p.StartTime}, {"timestamp", e.Timestamp}} {
		if t.v == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, t.v)
		if err != nil {
			return rec, time.Time{}, fmt.Errorf("%s: not RFC 3339: %q", t.name, t.v)
		}
		return rec, at.UTC(), nil
	}
	return rec, time.Time{}, errors.New("jsonPayload.end_time, start_time, timestamp: none set")
}

// gcpInt reads an integer Cloud Logging writes as a JSON number or, for
// int64, a string; absent is 0. max < 0: no upper bound.
func gcpInt(raw json.RawMessage, name string, max int64) (int64, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return 0, nil
	}
	s = strings.Trim(s, `"`)
	x, err := strconv.ParseInt(s, 10, 64)
	if err != nil || x < 0 || (max >= 0 && x > max) {
		if max >= 0 {
			return 0, fmt.Errorf("%s: not 0..%d: %s", name, max, clipForError(string(raw), 40))
		}
		return 0, fmt.Errorf("%s: not a count: %s", name, clipForError(string(raw), 40))
	}
	return x, nil
}
