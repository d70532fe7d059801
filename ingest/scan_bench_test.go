package ingest

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"strconv"
	"testing"
	"time"
)

// scanBenchBytes is the size each scanner benchmark decodes
// (NETINTEL_BENCH_SCAN_MB overrides, in MB).
func scanBenchBytes(b *testing.B) int {
	if s := os.Getenv("NETINTEL_BENCH_SCAN_MB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("NETINTEL_BENCH_SCAN_MB=%q", s)
		}
		return n << 20
	}
	return 16 << 20
}

// scanBenchInput repeats a sample's records until the input is size
// bytes: JSON lines as they are, masscan's -oJ inside one "[ ]", nmap's
// hosts inside one <nmaprun>, ONYPHE's API answer as export lines.
func scanBenchInput(b *testing.B, format, file string, size int) []byte {
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		b.Fatal(err)
	}
	var head, body, tail []byte
	switch format {
	case "nmap-xml":
		i, j := bytes.Index(data, []byte("<host")), bytes.LastIndex(data, []byte("</host>"))+len("</host>")
		head, body, tail = data[:i], append(data[i:j:j], '\n'), data[j:]
	case "masscan":
		lines := bytes.Split(bytes.TrimSpace(data), []byte{'\n'})
		head, tail = []byte("[\n"), []byte("]\n")
		for _, l := range lines {
			if bytes.HasPrefix(l, []byte(`{   "ip"`)) {
				body = append(append(body, bytes.TrimSuffix(l, []byte{','})...), "\n,\n"...)
			}
		}
	case "onyphe":
		// The export's form: one document a line.
		var answer struct{ Results []json.RawMessage }
		if err := json.Unmarshal(data, &answer); err != nil {
			b.Fatal(err)
		}
		for _, r := range answer.Results {
			var c bytes.Buffer
			if err := json.Compact(&c, r); err != nil {
				b.Fatal(err)
			}
			body = append(append(body, c.Bytes()...), '\n')
		}
	default:
		body = data
	}
	out := append([]byte{}, head...)
	for len(out) < size {
		out = append(out, body...)
	}
	if format == "masscan" {
		out = bytes.TrimSuffix(out, []byte(",\n"))
	}
	return append(out, tail...)
}

// plainCSV is the baseline of the CSV formats: encoding/csv of every
// record into a map of its header's names to the values, without
// mapping anything (a record whose first value is "timestamp" is a
// header).
func plainCSV(data []byte) (records int, err error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	var header []string
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return records, nil
		}
		if err != nil {
			return records, err
		}
		if len(rec) > 0 && rec[0] == "timestamp" {
			header = rec
			continue
		}
		m := make(map[string]string, len(header))
		for i, v := range rec {
			if i < len(header) {
				m[header[i]] = v
			}
		}
		records++
	}
}

// xmlNode is any XML element, for the plain decode nmap-xml is measured
// against.
type xmlNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Text     string     `xml:",chardata"`
	Children []xmlNode  `xml:",any"`
}

// plainDecode is the baseline: encoding/json of every line into
// map[string]any (masscan: its record lines), or encoding/xml of every
// <host> into generic elements, without mapping anything.
func plainDecode(format string, data []byte) (records int, err error) {
	if format == "shadowserver" {
		return plainCSV(data)
	}
	if format == "nmap-xml" {
		dec := xml.NewDecoder(bytes.NewReader(data))
		for {
			tok, err := dec.Token()
			if errors.Is(err, io.EOF) {
				return records, nil
			}
			if err != nil {
				return records, err
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "host" {
				var n xmlNode
				if err := dec.DecodeElement(&n, &se); err != nil {
					return records, err
				}
				records++
			}
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			return records, err
		}
		records++
	}
	return records, sc.Err()
}

// BenchmarkScanAdapters measures each scanner adapter's decode rate (MB/s
// of the tool's own output, every observation normalized and handed to a
// no-op emit) against a plain encoding/json decode of the same lines into
// map[string]any (encoding/xml of the same hosts into generic elements
// for nmap-xml), timed just before and just after it in the same run; the
// ratio is to the mean of the two (target >= 0.5). A system benchmark: it
// sizes its own input (16 MB, NETINTEL_BENCH_SCAN_MB) and runs once.
func BenchmarkScanAdapters(b *testing.B) {
	cases := []struct{ format, file string }{
		{"zgrab2", "zgrab2.jsonl"},
		{"masscan", "masscan-constructed.json"},
		{"nmap-xml", "nmap-scripts.xml"},
		{"shodan", "shodan.jsonl"},
		{"sonar-http", "sonar-http.jsonl"},
		{"nuclei", "nuclei.jsonl"},
		{"tlsx", "tlsx.jsonl"},
		{"leakix", "leakix-ip4scout.jsonl"},
		{"onyphe", "onyphe-api-v1.json"},
		{"shadowserver", "shadowserver-scan_ssl.csv"},
	}
	size := scanBenchBytes(b)
	for _, c := range cases {
		b.Run(c.format, func(b *testing.B) {
			data := scanBenchInput(b, c.format, c.file, size)
			mb := float64(len(data)) / 1e6
			plain := func() float64 {
				start := time.Now()
				if _, err := plainDecode(c.format, data); err != nil {
					b.Fatal(err)
				}
				return mb / time.Since(start).Seconds()
			}
			var rate, base float64
			for i := 0; i < b.N; i++ {
				before := plain()
				start := time.Now()
				obs, bad := 0, 0
				err := Adapters()[c.format](bytes.NewReader(data), Options{ObservedAt: time.Now()},
					func(int, Observation) error { obs++; return nil }, func(LineError) { bad++ })
				if err != nil || bad != 0 || obs == 0 {
					b.Fatalf("adapter: %v, %d observations, %d malformed", err, obs, bad)
				}
				rate = mb / time.Since(start).Seconds()
				after := plain()
				base = (before + after) / 2
				b.Logf("%s: %.1f MB, %d observations; plain before %.1f MB/s, after %.1f; adapter %.1f MB/s, ratio %.2f", c.format, mb, obs, before, after, rate, rate/base)
			}
			b.ReportMetric(rate, "MB/s")
			b.ReportMetric(base, "plain_MB/s")
			b.ReportMetric(rate/base, "ratio_to_plain")
		})
	}
}
