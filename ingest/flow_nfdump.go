package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// nfdumpColumns maps each column this adapter reads to its names in the
// three csv layouts nfdump writes: 1.6 and 1.7 up to 1.7.4 (`ts,te,td,sa,
// da,sp,dp,pr,...,ipkt,ibyt,...`), 1.7.5 on (`firstSeen,duration,proto,
// srcAddr,srcPort,dstAddr,dstPort,packets,bytes,flows`, and `csv:%fmt`
// layouts), and csv-fast (`cnt,af,firstSeen,lastSeen,proto,...`).
var nfdumpColumns = map[string]int{
	"ts": nfStart, "firstSeen": nfStart,
	"te": nfEnd, "lastSeen": nfEnd,
	"td": nfDuration, "duration": nfDuration,
	"sa": nfSrc, "srcAddr": nfSrc,
	"da": nfDst, "dstAddr": nfDst,
	"sp": nfSrcPort, "srcPort": nfSrcPort,
	"dp": nfDstPort, "dstPort": nfDstPort,
	"pr": nfProto, "proto": nfProto,
	"ipkt": nfPackets, "pkt": nfPackets, "packets": nfPackets, "inPackets": nfPackets,
	"ibyt": nfBytes, "byt": nfBytes, "bytes": nfBytes, "inBytes": nfBytes,
	// pmacct's print plugin (csv and formatted outputs)
	"SRC_IP": nfSrc, "DST_IP": nfDst, "SRC_PORT": nfSrcPort, "DST_PORT": nfDstPort, "PROTOCOL": nfProto,
	"TIMESTAMP_START": nfStart, "TIMESTAMP_END": nfEnd, "PACKETS": nfPackets, "BYTES": nfBytes,
}

const (
	nfStart = iota
	nfEnd
	nfDuration
	nfSrc
	nfDst
	nfSrcPort
	nfDstPort
	nfProto
	nfPackets
	nfBytes
	nfColumns
)

// nfdumpLayout is the column index of each field in the current block; -1
// when the block has no such column.
type nfdumpLayout [nfColumns]int

// NfdumpCSV reads nfdump's output: `-o csv` (or csv-fast): one or more
// blocks, each a header line naming the columns and its records, then
// nfdump's Summary block, which is not read; the text outputs `-o line`,
// `long`, `extended` (a "Date first seen ... Src IP Addr:Port Dst IP
// Addr:Port ..." header, then one flow a line, then the summary lines);
// and `-o json` (an array of records, or one a line). Columns are found by name, so every
// nfdump version's layout reads. nfdump prints times in the local time
// zone without saying which: run it with TZ=UTC, as times are read as
// UTC. Each flow's protocol is inferred (InferFlow); a flow with none is
// skipped and counted through opt.Skipped. observed_at is the flow's end.
func NfdumpCSV(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("nfdump")
	br := bufio.NewReaderSize(r, 64*1024)
	if isJSONList(br) {
		data, err := readJSONFeed(br, "nfdump json")
		if err != nil {
			return err
		}
		return nfdumpJSON(data, src, opt, emit, bad)
	}
	var layout *nfdumpLayout
	var text *nfdumpTextLayout
	var width int
	summary, spaced := false, false
	var fields [][]byte
	return opt.lines(br, "nfdump output", bad, func(n int, b []byte) error {
		line := bytes.TrimSpace(b)
		switch {
		case len(line) == 0:
			// A blank line ends a block; the next line is a header.
			layout, text, summary = nil, nil, false
			return nil
		case summary || string(line) == "Summary" || string(line) == "No matching flows" || line[0] == '#':
			summary = summary || string(line) == "Summary"
			return nil
		case text != nil:
			if nfdumpTextSummary(string(line)) {
				return nil
			}
			rec, at, err := text.record(string(line))
			if err != nil {
				bad(LineError{n, err})
				return nil
			}
			return emitFlow(n, rec, at, src, opt, emit, bad)
		case layout == nil:
			if t, ok := nfdumpTextHeader(string(line)); ok {
				text = t
				return nil
			}
		}
		if layout == nil {
			// pmacct's formatted output is a table of columns padded with
			// spaces, not commas.
			spaced = !bytes.ContainsRune(line, ',')
		}
		if spaced {
			fields = append(fields[:0], bytes.Fields(line)...)
		} else {
			fields = splitComma(fields[:0], line)
		}
		if spaced && layout != nil {
			// A time is two of the spaced fields: "2026-11-20 09:59:01.000000".
			fields = nfdumpJoinSpacedTimes(fields)
		}
		if layout == nil {
			l, err := nfdumpHeader(fields)
			if err != nil {
				bad(LineError{n, err})
				return nil
			}
			layout, width = &l, len(fields)
			return nil
		}
		if len(fields) != width {
			bad(LineError{n, fmt.Errorf("%d columns, the header has %d", len(fields), width)})
			return nil
		}
		rec, at, err := layout.record(fields)
		if err != nil {
			bad(LineError{n, err})
			return nil
		}
		return emitFlow(n, rec, at, src, opt, emit, bad)
	})
}

// splitComma splits line at commas into dst (nfdump quotes nothing: it
// writes ';' for a comma inside a value).
func splitComma(dst [][]byte, line []byte) [][]byte {
	for {
		i := bytes.IndexByte(line, ',')
		if i < 0 {
			return append(dst, line)
		}
		dst = append(dst, line[:i])
		line = line[i+1:]
	}
}

// nfdumpHeader reads a header line: it must name both addresses, the
// protocol and a start or end time.
func nfdumpHeader(fields [][]byte) (nfdumpLayout, error) {
	var l nfdumpLayout
	for i := range l {
		l[i] = -1
	}
	for i, f := range fields {
		if c, ok := nfdumpColumns[string(bytes.TrimSpace(f))]; ok && l[c] < 0 {
			l[c] = i
		}
	}
	if l[nfSrc] < 0 || l[nfDst] < 0 || l[nfProto] < 0 || (l[nfStart] < 0 && l[nfEnd] < 0) {
		return l, errors.New("not an nfdump csv header: want columns naming source and destination address, protocol and a time (ts,te,sa,da,pr,... or firstSeen,duration,proto,srcAddr,...)")
	}
	return l, nil
}

// record reads one csv record by the block's layout.
func (l *nfdumpLayout) record(f [][]byte) (FlowRecord, time.Time, error) {
	var rec FlowRecord
	col := func(c int) string {
		if l[c] < 0 {
			return ""
		}
		return string(bytes.TrimSpace(f[l[c]]))
	}
	var err error
	if rec.Src, err = flowAddr("source address", col(nfSrc)); err != nil {
		return rec, time.Time{}, err
	}
	if rec.Dst, err = flowAddr("destination address", col(nfDst)); err != nil {
		return rec, time.Time{}, err
	}
	if rec.IPProto, err = parseIPProto(col(nfProto)); err != nil {
		return rec, time.Time{}, err
	}
	if rec.IPProto == ipProtoTCP || rec.IPProto == ipProtoUDP {
		// Other protocols have no ports (ICMP's dstPort is "type.code").
		for _, p := range []struct {
			c  int
			to *int
		}{{nfSrcPort, &rec.SrcPort}, {nfDstPort, &rec.DstPort}} {
			s := col(p.c)
			if s == "" {
				continue
			}
			v, err := strconv.Atoi(s)
			if err != nil || v < 0 || v > 65535 {
				return rec, time.Time{}, fmt.Errorf("port %q: not 0..65535", s)
			}
			*p.to = v
		}
	}
	for _, c := range []struct {
		c  int
		to *int64
	}{{nfPackets, &rec.Packets}, {nfBytes, &rec.Bytes}} {
		s := col(c.c)
		if s == "" {
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return rec, time.Time{}, fmt.Errorf("count %q: not a whole number", s)
		}
		*c.to = v
	}
	at, err := nfdumpTime(col(nfEnd))
	if err != nil {
		return rec, time.Time{}, err
	}
	if at.IsZero() {
		start, err := nfdumpTime(col(nfStart))
		if err != nil {
			return rec, time.Time{}, err
		}
		if d := col(nfDuration); d != "" && !start.IsZero() {
			sec, err := strconv.ParseFloat(d, 64)
			if err != nil || sec < 0 || sec > 1e9 {
				return rec, time.Time{}, fmt.Errorf("duration %q: not seconds", d)
			}
			start = start.Add(time.Duration(sec * float64(time.Second)))
		}
		at = start
	}
	if at.IsZero() {
		return rec, time.Time{}, errors.New("no time: first and last seen are empty or zero")
	}
	return rec, at, nil
}

// nfdumpTime reads "2006-01-02 15:04:05" with optional milliseconds (read
// as UTC), or csv-fast's milliseconds since 1970. nfdump writes
// "0000-00-00 00:00:00.000" for no time: that, and "", are the zero time.
func nfdumpTime(s string) (time.Time, error) {
	if s == "" || strings.HasPrefix(s, "0000-00-00") || s == "0" {
		return time.Time{}, nil
	}
	if !strings.ContainsRune(s, '-') {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ms < 0 {
			return time.Time{}, fmt.Errorf("time %q: not a date or milliseconds", s)
		}
		return time.UnixMilli(ms).UTC(), nil
	}
	t, err := time.Parse("2006-01-02 15:04:05.999", s)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q: want YYYY-MM-DD hh:mm:ss[.mmm]", s)
	}
	return t, nil
}

// nfdumpJoinSpacedTimes joins the date and time of a spaced table's time
// columns back into one field each (pmacct's formatted output prints
// "2026-11-20 09:59:01.000000" in one column).
func nfdumpJoinSpacedTimes(f [][]byte) [][]byte {
	out := make([][]byte, 0, len(f))
	for i := 0; i < len(f); i++ {
		if i+1 < len(f) && len(f[i]) == 10 && f[i][4] == '-' && bytes.IndexByte(f[i+1], ':') == 2 {
			out = append(out, append(append(append([]byte{}, f[i]...), ' '), f[i+1]...))
			i++
			continue
		}
		out = append(out, f[i])
	}
	return out
}
