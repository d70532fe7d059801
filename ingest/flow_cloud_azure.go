package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// azureFlowRecord holds the members of one record of an Azure flow log
// file (PT1H.json) that the inference reads: a network security group
// flow log (properties.Version 1 or 2) or a virtual network flow log
// (flowLogVersion 4).
type azureFlowRecord struct {
	Time       string `json:"time"`
	Properties *struct {
		Version int `json:"Version"`
		Flows   []struct {
			Rule  string `json:"rule"`
			Flows []struct {
				FlowTuples []string `json:"flowTuples"`
			} `json:"flows"`
		} `json:"flows"`
	} `json:"properties"`
	FlowLogVersion int `json:"flowLogVersion"`
	FlowRecords    *struct {
		Flows []struct {
			FlowGroups []struct {
				Rule       string   `json:"rule"`
				FlowTuples []string `json:"flowTuples"`
			} `json:"flowGroups"`
		} `json:"flows"`
	} `json:"flowRecords"`
}

// AzureFlow reads Azure Network Watcher flow logs as they are written to
// the storage account (PT1H.json: {"records": [...]}, or the records as
// an array or JSON lines): NSG flow logs version 1 (flow tuples
// "ts,src,dst,sport,dport,T|U,I|O,A|D") and 2 (with the flow state B|C|E
// and the packets and bytes of each direction), and virtual network flow
// logs (flowLogVersion 4: "ts_ms,src,dst,sport,dport,protocol,I|O,
// B|C|E|D,encryption,packets,bytes,packets,bytes"). Each flow tuple is a
// flow whose protocol is inferred (InferFlow) from the source's
// direction, then the destination's; denied tuples are skipped. A tuple
// is reported on its own line.
func AzureFlow(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("azure-flow")
	data, err := readJSONFeed(r, "azure flow logs")
	if err != nil {
		return err
	}
	find := jsonStringFinder{data: data}
	return jsonValues(data, bad, func(n int, v json.RawMessage, _ bool) error {
		if t := bytes.TrimSpace(v); len(t) > 0 && t[0] == '{' {
			var doc struct {
				Records []json.RawMessage `json:"records"`
			}
			if json.Unmarshal(v, &doc) == nil && doc.Records != nil {
				for i, rec := range doc.Records {
					if err := azureFlowRecordEmit(&find, n, fmt.Sprintf("records[%d]", i), rec, src, opt, emit, bad); err != nil {
						return err
					}
				}
				return nil
			}
		}
		return azureFlowRecordEmit(&find, n, "record", v, src, opt, emit, bad)
	})
}

// azureFlowRecordEmit reads one record (where names it in reports of the
// record as a whole, on the line it starts on, else n) and emits each of
// its flow tuples.
func azureFlowRecordEmit(find *jsonStringFinder, n int, where string, v json.RawMessage, src string, opt Options, emit Emit, bad func(LineError)) error {
	n = find.at(v, n)
	var rec azureFlowRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		bad(LineError{n, fmt.Errorf("%s: not an Azure flow log record: %w", where, err)})
		return nil
	}
	var tuples []string
	vnet := false
	switch {
	case rec.FlowRecords != nil:
		vnet = true
		for _, f := range rec.FlowRecords.Flows {
			for _, g := range f.FlowGroups {
				tuples = append(tuples, g.FlowTuples...)
			}
		}
	case rec.Properties != nil:
		for _, f := range rec.Properties.Flows {
			for _, m := range f.Flows {
				tuples = append(tuples, m.FlowTuples...)
			}
		}
	default:
		bad(LineError{n, fmt.Errorf("%s: not a flow log record (neither properties.flows, NSG flow logs, nor flowRecords, virtual network flow logs)", where)})
		return nil
	}
	for _, t := range tuples {
		line := find.line(t, n)
		recs, at, skip, err := azureFlowTuple(t, vnet)
		if opt.settled(line, skip, err, bad) {
			continue
		}
		if err := emitFlowFirst(line, recs, at, src, opt, emit, bad); err != nil {
			return err
		}
	}
	return nil
}

// azureTupleFields names the fields of a flow tuple, for reports.
var azureTupleFields = []string{"time", "source address", "destination address", "source port", "destination port",
	"protocol", "direction", "decision", "flow state", "packets sent", "bytes sent", "packets received", "bytes received"}

// azureVNetTupleFields are a virtual network flow log tuple's.
var azureVNetTupleFields = []string{"time", "source address", "destination address", "source port", "destination port",
	"protocol", "direction", "flow state", "encryption", "packets sent", "bytes sent", "packets received", "bytes received"}

// azureFlowTuple reads one flow tuple: the flow in the source's
// direction and in the destination's (with each direction's counters,
// where the tuple has them), and its time. skip is set for a denied flow.
func azureFlowTuple(t string, vnet bool) (recs []FlowRecord, at time.Time, skip string, err error) {
	f := strings.Split(t, ",")
	names := azureTupleFields
	if vnet {
		names = azureVNetTupleFields
	}
	fail := func(i int, msg string) error {
		return fmt.Errorf("flow tuple %q: %s: %s", clipForError(t, 120), names[i], msg)
	}
	switch {
	case vnet && len(f) != 13:
		return nil, at, "", fmt.Errorf("flow tuple %q: %d fields, want 13 (virtual network flow logs version 4)", clipForError(t, 120), len(f))
	case !vnet && len(f) != 8 && len(f) != 13:
		return nil, at, "", fmt.Errorf("flow tuple %q: %d fields, want 8 (NSG flow logs version 1) or 13 (version 2)", clipForError(t, 120), len(f))
	}
	denied := strings.TrimSpace(f[7]) == "D" // NSG: the decision; virtual network: the state
	if denied {
		return nil, at, flowRejected, nil
	}
	ts, perr := strconv.ParseInt(strings.TrimSpace(f[0]), 10, 64)
	if perr != nil || ts <= 0 {
		return nil, at, "", fail(0, "not a time since 1970")
	}
	if vnet {
		at = time.UnixMilli(ts).UTC()
	} else {
		at = time.Unix(ts, 0).UTC()
	}
	var fwd FlowRecord
	if fwd.Src, err = flowAddr(names[1], f[1]); err != nil {
		return nil, at, "", fail(1, "not an IP address")
	}
	if fwd.Dst, err = flowAddr(names[2], f[2]); err != nil {
		return nil, at, "", fail(2, "not an IP address")
	}
	p := strings.TrimSpace(f[5])
	switch {
	case vnet:
		n, perr := strconv.Atoi(p)
		if perr != nil || n < 0 || n > 255 {
			return nil, at, "", fail(5, "not 0..255")
		}
		fwd.IPProto = n
	case p == "T":
		fwd.IPProto = ipProtoTCP
	case p == "U":
		fwd.IPProto = ipProtoUDP
	default:
		return nil, at, "", fail(5, "not T or U")
	}
	if fwd.IPProto == ipProtoTCP || fwd.IPProto == ipProtoUDP {
		for _, i := range []int{3, 4} {
			x, perr := strconv.Atoi(strings.TrimSpace(f[i]))
			if perr != nil || x < 0 || x > 65535 {
				return nil, at, "", fail(i, "not 0..65535")
			}
			if i == 3 {
				fwd.SrcPort = x
			} else {
				fwd.DstPort = x
			}
		}
	}
	rev := FlowRecord{Src: fwd.Dst, Dst: fwd.Src, SrcPort: fwd.DstPort, DstPort: fwd.SrcPort, IPProto: fwd.IPProto}
	if len(f) == 13 {
		for i, to := range []*int64{9: &fwd.Packets, 10: &fwd.Bytes, 11: &rev.Packets, 12: &rev.Bytes} {
			if to == nil {
				continue
			}
			s := strings.TrimSpace(f[i])
			if s == "" {
				continue // the B (begin) state has no counters
			}
			x, perr := strconv.ParseInt(s, 10, 64)
			if perr != nil || x < 0 {
				return nil, at, "", fail(i, "not a count")
			}
			*to = x
		}
	}
	return []FlowRecord{fwd, rev}, at, "", nil
}
