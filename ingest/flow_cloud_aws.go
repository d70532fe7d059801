package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// awsFlowDefault are the fields of VPC Flow Logs' default format
// (version 2), in its order.
var awsFlowDefault = []string{"version", "account-id", "interface-id", "srcaddr", "dstaddr", "srcport", "dstport",
	"protocol", "packets", "bytes", "start", "end", "action", "log-status"}

// awsFlowFieldNames are the fields a custom format may name (versions 2
// to 8 of the Amazon VPC user guide's "Available fields"): a line all of
// whose words are among them is a header line.
var awsFlowFieldNames = map[string]bool{
	"version": true, "account-id": true, "interface-id": true, "srcaddr": true, "dstaddr": true, "srcport": true,
	"dstport": true, "protocol": true, "packets": true, "bytes": true, "start": true, "end": true, "action": true,
	"log-status": true, "vpc-id": true, "subnet-id": true, "instance-id": true, "tcp-flags": true, "type": true,
	"pkt-srcaddr": true, "pkt-dstaddr": true, "region": true, "az-id": true, "sublocation-type": true,
	"sublocation-id": true, "pkt-src-aws-service": true, "pkt-dst-aws-service": true, "flow-direction": true,
	"traffic-path": true, "ecs-cluster-arn": true, "ecs-cluster-name": true, "ecs-container-instance-arn": true,
	"ecs-container-instance-id": true, "ecs-container-id": true, "ecs-second-container-id": true,
	"ecs-service-name": true, "ecs-task-definition-arn": true, "ecs-task-arn": true, "ecs-task-id": true,
	"reject-reason": true, "resource-id": true, "encryption-status": true,
}

// Reasons a cloud flow log record is read and not stored (Options.Skipped).
const (
	flowRejected      = "flow rejected or denied by the cloud's rules (no session)"
	awsFlowNoData     = "aws-vpc-flow NODATA record (no traffic in the interval)"
	awsFlowSkipData   = "aws-vpc-flow SKIPDATA record (flows not captured in the interval)"
	awsFlowNoEndpoint = "aws-vpc-flow format without addresses or protocol"
)

// awsFlowLayout is where each field the inference reads sits in a
// record of one format; -1 when the format does not have it.
type awsFlowLayout struct {
	n                                          int
	src, dst, pktSrc, pktDst, srcPort, dstPort int
	proto, packets, bytes, start, end          int
	action, status                             int
	// lacks names what the format lacks for a flow to be inferred.
	lacks string
}

// newAWSFlowLayout reads a format's field names (hyphens or the
// underscores of Athena, Parquet and JSON copies).
func newAWSFlowLayout(names []string) *awsFlowLayout {
	l := &awsFlowLayout{n: len(names)}
	idx := map[string]*int{"srcaddr": &l.src, "dstaddr": &l.dst, "pkt-srcaddr": &l.pktSrc, "pkt-dstaddr": &l.pktDst,
		"srcport": &l.srcPort, "dstport": &l.dstPort, "protocol": &l.proto, "packets": &l.packets, "bytes": &l.bytes,
		"start": &l.start, "end": &l.end, "action": &l.action, "log-status": &l.status}
	for _, p := range idx {
		*p = -1
	}
	for i, name := range names {
		if p, ok := idx[awsFlowFieldName(name)]; ok && *p < 0 {
			*p = i
		}
	}
	l.lacks = l.missing()
	return l
}

func awsFlowFieldName(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-")
}

// awsFlowHeader reports whether fields are a header line (S3 delivery's
// first line: the format's field names), and which of them are no field
// VPC Flow Logs has.
func awsFlowHeader(fields []string) (header bool, unknown []string) {
	if len(fields) == 0 || !awsFlowFieldNames[awsFlowFieldName(fields[0])] {
		return false, nil
	}
	for _, f := range fields {
		if !awsFlowFieldNames[awsFlowFieldName(f)] {
			unknown = append(unknown, f)
		}
	}
	return true, unknown
}

// missing names what the format lacks for a flow to be inferred.
func (l *awsFlowLayout) missing() string {
	var m []string
	if l.src < 0 && l.pktSrc < 0 {
		m = append(m, "srcaddr")
	}
	if l.dst < 0 && l.pktDst < 0 {
		m = append(m, "dstaddr")
	}
	if l.proto < 0 {
		m = append(m, "protocol")
	}
	return strings.Join(m, ", ")
}

// awsAbsent is what VPC Flow Logs writes for a field without a value.
const awsAbsent = "-"

// record reads one record's fields. skip is set (and the error nil) for
// a record that is read and not stored: NODATA, SKIPDATA, REJECT.
func (l *awsFlowLayout) record(f []string) (rec FlowRecord, at time.Time, skip string, err error) {
	if len(f) != l.n {
		return rec, at, "", fmt.Errorf("%d fields, the format has %d (a custom format is read by its header line: the field names, as S3 delivery writes them first)", len(f), l.n)
	}
	get := func(i int) string {
		if i < 0 {
			return awsAbsent
		}
		return f[i]
	}
	switch strings.ToUpper(get(l.status)) {
	case "NODATA":
		return rec, at, awsFlowNoData, nil
	case "SKIPDATA":
		return rec, at, awsFlowSkipData, nil
	}
	if strings.EqualFold(get(l.action), "REJECT") {
		return rec, at, flowRejected, nil
	}
	// pkt-srcaddr/pkt-dstaddr are the packet's own addresses: on a NAT or
	// transit gateway's interface srcaddr/dstaddr are the gateway's, the
	// pkt-* fields the real peers (docs/ingest-enrich.md, "Cloud flow logs").
	for _, a := range []struct {
		pkt, plain int
		pktName    string
		plainName  string
		src        bool
	}{{l.pktSrc, l.src, "pkt-srcaddr", "srcaddr", true}, {l.pktDst, l.dst, "pkt-dstaddr", "dstaddr", false}} {
		name, v := a.pktName, get(a.pkt)
		if v == awsAbsent {
			name, v = a.plainName, get(a.plain)
		}
		if v == awsAbsent {
			return rec, at, "", fmt.Errorf("%s: no address (\"-\")", a.plainName)
		}
		addr, err := flowAddr(name, v)
		if err != nil {
			return rec, at, "", err
		}
		if a.src {
			rec.Src = addr
		} else {
			rec.Dst = addr
		}
	}
	p := get(l.proto)
	if p == awsAbsent {
		return rec, at, "", errors.New("protocol: no value (\"-\")")
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 255 {
		return rec, at, "", fmt.Errorf("protocol: not 0..255: %q", clipForError(p, 40))
	}
	rec.IPProto = n
	if n == ipProtoTCP || n == ipProtoUDP {
		for _, pt := range []struct {
			name string
			i    int
			to   *int
		}{{"srcport", l.srcPort, &rec.SrcPort}, {"dstport", l.dstPort, &rec.DstPort}} {
			v := get(pt.i)
			if v == awsAbsent {
				continue
			}
			x, err := strconv.Atoi(v)
			if err != nil || x < 0 || x > 65535 {
				return rec, at, "", fmt.Errorf("%s: not 0..65535: %q", pt.name, clipForError(v, 40))
			}
			*pt.to = x
		}
	}
	for _, c := range []struct {
		name string
		i    int
		to   *int64
	}{{"packets", l.packets, &rec.Packets}, {"bytes", l.bytes, &rec.Bytes}} {
		v := get(c.i)
		if v == awsAbsent {
			continue
		}
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil || x < 0 {
			return rec, at, "", fmt.Errorf("%s: not a count: %q", c.name, clipForError(v, 40))
		}
		*c.to = x
	}
	for _, t := range []struct {
		name string
		i    int
	}{{"end", l.end}, {"start", l.start}} {
		v := get(t.i)
		if v == awsAbsent {
			continue
		}
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil || x <= 0 || x > 1e11 {
			return rec, at, "", fmt.Errorf("%s: not seconds since 1970: %q", t.name, clipForError(v, 40))
		}
		return rec, time.Unix(x, 0).UTC(), "", nil
	}
	return rec, at, "", nil
}

// AWSVPCFlow reads Amazon VPC Flow Logs: the text records of the default
// format (version 2) and of custom formats, whose field names the header
// line of an S3-delivered file gives (.log.gz files are decompressed by
// Ingest); lines of a CloudWatch Logs export to S3 (each record after its
// event's RFC 3339 time); and CloudWatch Logs' JSON (`aws logs
// filter-log-events` / `get-log-events` output, its events' message
// members, and subscription payloads' logEvents), whose messages are
// read in the default format; and S3's Parquet delivery (columns named
// as the fields, with underscores). NODATA, SKIPDATA and REJECT records are
// skipped with their reason; pkt-srcaddr/pkt-dstaddr are preferred to
// srcaddr/dstaddr. Each flow's protocol is inferred (InferFlow),
// observed at its end (else start; else the event's time, else
// opt.ObservedAt).
func AWSVPCFlow(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("aws-vpc-flow")
	br := bufio.NewReaderSize(r, 64*1024)
	if isParquet(br) {
		return awsFlowParquet(br, src, opt, emit, bad)
	}
	if isJSONList(br) {
		return awsFlowJSON(br, src, opt, emit, bad)
	}
	layout := newAWSFlowLayout(awsFlowDefault)
	return opt.lines(br, "aws vpc flow logs", bad, func(n int, b []byte) error {
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return nil
		}
		if hdr, unknown := awsFlowHeader(f); hdr {
			layout = newAWSFlowLayout(f)
			if len(unknown) > 0 {
				opt.warn(n, fmt.Sprintf("header: fields VPC Flow Logs does not have, not read: %s", strings.Join(unknown, ", ")))
			}
			if layout.lacks != "" {
				bad(LineError{n, fmt.Errorf("header: the format has no %s: its records name no flow to infer", layout.lacks)})
			}
			return nil
		}
		return awsFlowEmit(n, f, time.Time{}, layout, src, opt, emit, bad)
	})
}

// awsFlowEmit reads one text record (after a CloudWatch export's time,
// when it starts with one) and emits its flow.
func awsFlowEmit(n int, f []string, eventAt time.Time, layout *awsFlowLayout, src string, opt Options, emit Emit, bad func(LineError)) error {
	if len(f) == layout.n+1 {
		if t, err := time.Parse(time.RFC3339Nano, f[0]); err == nil {
			f, eventAt = f[1:], t.UTC()
		}
	}
	if layout.lacks != "" {
		opt.skip(n, awsFlowNoEndpoint)
		return nil
	}
	rec, at, skip, err := layout.record(f)
	if opt.settled(n, skip, err, bad) {
		return nil
	}
	if at.IsZero() {
		at = eventAt
	}
	if at.IsZero() {
		at = opt.ObservedAt
	}
	if at.IsZero() {
		at = time.Now().UTC()
	}
	return emitFlow(n, rec, at, src, opt, emit, bad)
}

// cwlEvent is one CloudWatch Logs event: get-log-events' and
// filter-log-events' events, a subscription payload's logEvents.
type cwlEvent struct {
	Timestamp *int64  `json:"timestamp"`
	Message   *string `json:"message"`
}

// awsFlowJSON reads CloudWatch Logs' JSON: documents (or lines) with an
// events or logEvents array, arrays of events, or events alone.
func awsFlowJSON(r io.Reader, src string, opt Options, emit Emit, bad func(LineError)) error {
	data, err := readJSONFeed(r, "cloudwatch logs events")
	if err != nil {
		return err
	}
	layout := newAWSFlowLayout(awsFlowDefault)
	find := jsonStringFinder{data: data}
	return jsonValues(data, bad, func(n int, v json.RawMessage, _ bool) error {
		var doc struct {
			Events    []cwlEvent `json:"events"`
			LogEvents []cwlEvent `json:"logEvents"`
			cwlEvent
		}
		if err := json.Unmarshal(v, &doc); err != nil {
			bad(LineError{n, fmt.Errorf("not a CloudWatch Logs event or answer: %w", err)})
			return nil
		}
		member, events := "events", doc.Events
		switch {
		case doc.LogEvents != nil:
			member, events = "logEvents", doc.LogEvents
		case doc.Events == nil && doc.Message != nil:
			member, events = "", []cwlEvent{doc.cwlEvent}
		case doc.Events == nil:
			bad(LineError{n, errors.New("not a CloudWatch Logs event or answer (no events, logEvents or message)")})
			return nil
		}
		for i, e := range events {
			where := fmt.Sprintf("%s[%d].message", member, i)
			if member == "" {
				where = "message"
			}
			if e.Message == nil {
				bad(LineError{n, fmt.Errorf("%s: missing", where)})
				continue
			}
			line := find.line(*e.Message, n)
			var at time.Time
			if e.Timestamp != nil && *e.Timestamp > 0 {
				at = time.UnixMilli(*e.Timestamp).UTC()
			}
			err := awsFlowEmit(line, strings.Fields(*e.Message), at, layout, src, opt, emit, func(le LineError) {
				bad(LineError{le.Line, fmt.Errorf("%s: %w", where, le.Err)})
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// jsonStringFinder finds the lines of a JSON document's strings, in the
// order they appear, for reports of the records they hold.
type jsonStringFinder struct {
	data []byte
	off  int
	ln   int // the line of data[off]
}

// line returns the line of the next occurrence of s as a JSON string at
// or after the last one found; def when it is not found as written
// (escaped differently).
func (f *jsonStringFinder) line(s string, def int) int {
	q, err := json.Marshal(s)
	if err != nil {
		return def
	}
	i := bytes.Index(f.data[f.off:], q)
	if i < 0 {
		return def
	}
	if f.ln == 0 {
		f.ln = 1
	}
	f.ln += bytes.Count(f.data[f.off:f.off+i], []byte{'\n'})
	at := f.ln
	f.ln += bytes.Count(q, []byte{'\n'})
	f.off += i + len(q)
	return at
}

// at returns the line on which b (bytes of the document, such as a
// record of an array) next starts, and moves the search there, so that
// the strings inside b are found after it; def when b is not found.
func (f *jsonStringFinder) at(b []byte, def int) int {
	i := bytes.Index(f.data[f.off:], b)
	if len(b) == 0 || i < 0 {
		return def
	}
	if f.ln == 0 {
		f.ln = 1
	}
	f.ln += bytes.Count(f.data[f.off:f.off+i], []byte{'\n'})
	f.off += i
	return f.ln
}
