package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// shadowserverMaxRecordLines is how many lines one CSV record may span
// (a quoted value with line breaks); past it the record is reported and
// reading resumes at the next line.
const shadowserverMaxRecordLines = 64

// shadowserverHeaders are the HTTP response columns of the scan reports
// (scan_http, scan6_http, scan_http_vulnerable, and the HTTP answer of
// scan_ssl, whose columns differ a little), as the header each one holds,
// in the order a server usually sends them.
var shadowserverHeaders = []struct{ name, header string }{
	{"server", "Server"}, {"server_type", "Server"},
	{"http_date", "Date"},
	{"content_type", "Content-Type"},
	{"content_length", "Content-Length"},
	{"transfer_encoding", "Transfer-Encoding"},
	{"connection", "Connection"}, {"http_connection", "Connection"},
	{"www_authenticate", "WWW-Authenticate"},
	{"set_cookie", "Set-Cookie"},
}

// shadowserverInfo are the columns that describe what Shadowserver saw
// without being the service's own bytes: kept in detected.info as
// "column: value" (the special and vulnerable-appliance reports' findings).
var shadowserverInfo = []string{"device_type", "tag", "sysname", "servername", "server_name", "url", "detail", "build_date", "status", "method", "public_source", "bluekeep_vulnerable", "cve20190708_vulnerable", "rdp_protocol"}

// shadowserverLayout is the column index of each name of a report's
// header row.
type shadowserverLayout struct {
	col   map[string]int
	width int
	line  int    // the header row's line
	raw   []byte // the header row as read
}

// get is the first non-empty value of the named columns in rec.
func (l *shadowserverLayout) get(rec []string, names ...string) string {
	for _, n := range names {
		if i, ok := l.col[n]; ok && i < len(rec) {
			if v := strings.TrimSpace(rec[i]); v != "" {
				return v
			}
		}
	}
	return ""
}

func (l *shadowserverLayout) has(name string) bool {
	_, ok := l.col[name]
	return ok
}

// Shadowserver reads Shadowserver's network reports as network owners and
// CERTs receive them: CSV with a header row naming the columns, one file
// per report (several files put one after the other are read, each header
// row starting a block). The report is known by its columns, not its file
// name; each row with an address and a port is one service observation:
//
//   - the HTTP answer (scan_http, scan6_http, scan_http_vulnerable, and
//     the columns of scan_ssl that hold it: http, http_code, http_reason
//     and the header columns server, content_type, connection,
//     www_authenticate, set_cookie, content_length, transfer_encoding,
//     http_date) is a probe GET / with those headers;
//   - the certificate and handshake (scan_ssl, scan6_ssl, the SSL
//     POODLE/FREAK reports, scan_rdp: handshake, cipher_suite, subject_*
//     and issuer_* names, cert_serial_number, sha256_fingerprint,
//     validity, self_signed, jarm) is a TLS probe, on the HTTP probe
//     when the row has both;
//   - banner (telnet, ftp, vnc...), serverid_raw (ssh), sysdesc (snmp),
//     dns_version (the DNS open resolvers' version.bind answer), and the
//     IKE vendor IDs are banner probes, as the report writes them;
//   - device_vendor, device_model, device_version (Shadowserver's device
//     identification), the vnc report's product, the vulnerable-appliance
//     reports' version, and the descriptive columns (device_type, tag,
//     sysname, servername, detail...) are detected (by shadowserver);
//   - hostname (the reverse DNS name) is the observation's host name;
//     timestamp ("2026-11-20 10:00:00", UTC; the Reports API's
//     "2024-01-04 00:43:10Z") its time.
//
// The Reports API's answer (reports/query: a JSON array of objects whose
// members are the CSV's columns, numbers as JSON numbers) and JSON lines
// of such objects are read too, each object as a row of the same columns.
//
// asn, geo, region, city, naics, sic and sector are not kept: Shadowserver
// names no organisation to claim and netintel reads location from the
// operators' geofeeds. A row without an address or a port (the special
// reports of compromised hosts, the event reports' src_ip) is skipped
// with the reason.
func Shadowserver(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("shadowserver")
	br := bufio.NewReaderSize(r, 64<<10)
	if shadowserverIsJSON(br) {
		return shadowserverJSON(br, src, opt, emit, bad)
	}
	r = br
	var layout *shadowserverLayout
	badHeader := 0     // the line of a header that names no address: its rows are skipped
	var pending []byte // the record read so far (inRecord)
	inRecord := false
	start, count := 0, 0
	var fields []string
	record := func(n int, text []byte, err *csvError) error {
		if err != nil && bytes.Contains(text, []byte(`\"`)) {
			// Some exports escape a quote inside a quoted value with a
			// backslash (scan_http_vulnerable's www_authenticate): read
			// \" as the quote it stands for.
			if f, open, err2 := splitCSV(fields[:0], bytes.ReplaceAll(text, []byte(`\"`), []byte(`""`))); err2 == nil && !open {
				fields, err = f, nil
				if opt.Warn != nil {
					opt.Warn(n, `csv: quotes escaped with a backslash (\") read as quotes`)
				}
			}
		}
		if err != nil {
			bad(LineError{n + err.line, fmt.Errorf("csv: at character %d: %s", err.char, err.msg)})
			return nil
		}
		if (layout == nil && badHeader == 0) || shadowserverIsHeader(fields) {
			if layout != nil && bytes.Equal(text, layout.raw) {
				// The same report again (daily files put together).
				layout.line = n
				return nil
			}
			l, err := shadowserverHeader(n, fields)
			if err != nil {
				bad(LineError{n, err})
				layout, badHeader = nil, n
				return nil
			}
			l.raw = append([]byte(nil), text...)
			layout, badHeader = l, 0
			return nil
		}
		if layout == nil {
			opt.skip(n, fmt.Sprintf("the header of line %d names no ip column", badHeader))
			return nil
		}
		return shadowserverRow(n, layout, fields, src, opt, emit, bad)
	}
	err := opt.lines(r, "shadowserver report", bad, func(n int, line []byte) error {
		if !inRecord {
			if n == 1 {
				line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
			}
			if len(bytes.TrimSpace(line)) == 0 {
				return nil
			}
			start, count, inRecord = n, 0, true
			pending = pending[:0]
		} else {
			pending = append(pending, '\n')
		}
		pending = append(pending, line...)
		count++
		f, open, cerr := splitCSV(fields[:0], pending)
		fields = f
		if open {
			// A quoted value goes on to the next line.
			if count < shadowserverMaxRecordLines && len(pending) <= opt.maxLine() {
				return nil
			}
			bad(LineError{start, fmt.Errorf("csv: a quoted value is not closed within %d lines", count)})
			inRecord = false
			return nil
		}
		inRecord = false
		return record(start, pending, cerr)
	})
	if err != nil {
		return err
	}
	if inRecord {
		bad(LineError{start, errors.New("csv: the input ends inside a quoted value")})
	}
	return nil
}

// csvError is a CSV syntax error: its line within the record (0 for
// the first), its character within that line (from 1) and what is wrong.
type csvError struct {
	line, char int
	msg        string
}

// splitCSV splits one CSV record (RFC 4180: values may be quoted, a
// quote inside a quoted value doubled, a quoted value may span lines)
// into dst. open says text ends inside a quoted value: the record goes
// on on the next line. The values are copies.
func splitCSV(dst []string, text []byte) (fields []string, open bool, err *csvError) {
	fail := func(pos int, msg string) *csvError {
		nl := bytes.LastIndexByte(text[:pos], '\n')
		return &csvError{line: bytes.Count(text[:pos], []byte{'\n'}), char: pos - nl, msg: msg}
	}
	i := 0
	for {
		if i < len(text) && text[i] == '"' {
			// A quoted value: up to the quote that is not doubled.
			var v []byte
			j := i + 1
			for {
				k := bytes.IndexByte(text[j:], '"')
				if k < 0 {
					return dst, true, nil
				}
				if v == nil && (j+k+1 >= len(text) || text[j+k+1] != '"') {
					// No doubled quote: the value is the text between.
					dst = append(dst, string(text[j:j+k]))
					j += k + 1
					break
				}
				v = append(v, text[j:j+k]...)
				j += k + 1
				if j < len(text) && text[j] == '"' {
					v = append(v, '"')
					j++
					continue
				}
				dst = append(dst, string(v))
				break
			}
			if j == len(text) {
				return dst, false, nil
			}
			if text[j] != ',' {
				return dst, false, fail(j, `extraneous or missing " in quoted-field`)
			}
			i = j + 1
			continue
		}
		end := bytes.IndexByte(text[i:], ',')
		if end < 0 {
			end = len(text)
		} else {
			end += i
		}
		if q := bytes.IndexByte(text[i:end], '"'); q >= 0 {
			return dst, false, fail(i+q, `bare " in non-quoted-field`)
		}
		dst = append(dst, string(text[i:end]))
		if end == len(text) {
			return dst, false, nil
		}
		i = end + 1
	}
}

// shadowserverIsHeader says a row is a header row (a report appended to
// another one starts with its own).
func shadowserverIsHeader(fields []string) bool {
	return len(fields) > 1 && strings.EqualFold(strings.TrimSpace(fields[0]), "timestamp")
}

// shadowserverHeader reads a header row: the column names, lower case;
// it must name the address ("ip").
func shadowserverHeader(line int, fields []string) (*shadowserverLayout, error) {
	l := &shadowserverLayout{col: map[string]int{}, width: len(fields), line: line}
	for i, f := range fields {
		name := strings.ToLower(strings.TrimSpace(f))
		if _, dup := l.col[name]; !dup && name != "" {
			l.col[name] = i
		}
	}
	if !l.has("ip") {
		first := ""
		if len(fields) > 0 {
			first = strings.TrimSpace(fields[0])
		}
		if l.has("src_ip") {
			return nil, errors.New(`header: no "ip" column: an event report (src_ip, dst_ip: the hosts a sinkhole or honeypot saw connect) lists no service`)
		}
		return nil, fmt.Errorf(`header: no "ip" column: not a Shadowserver report header (first column %q)`, first)
	}
	return l, nil
}

// shadowserverRow turns one row into a service observation.
func shadowserverRow(n int, l *shadowserverLayout, rec []string, src string, opt Options, emit Emit, bad func(LineError)) error {
	if len(rec) > l.width {
		bad(LineError{n, fmt.Errorf("%d columns, the header (line %d) has %d", len(rec), l.line, l.width)})
		return nil
	}
	if len(rec) < l.width && opt.Warn != nil {
		// A report whose header gained a column its rows do not have yet
		// (scan_rdp's jarm): the missing last columns read as empty.
		opt.Warn(n, fmt.Sprintf("%d columns, the header (line %d) has %d: the last %d read as empty", len(rec), l.line, l.width, l.width-len(rec)))
	}
	ipText := l.get(rec, "ip")
	if ipText == "" {
		opt.skip(n, "no address (column ip is empty)")
		return nil
	}
	a, err := netip.ParseAddr(ipText)
	if err != nil {
		bad(LineError{n, fmt.Errorf("column ip: not an IP address: %q", ipText)})
		return nil
	}
	portText := l.get(rec, "port")
	if portText == "" {
		opt.skip(n, "no port (column port is empty or missing): not a service")
		return nil
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		bad(LineError{n, fmt.Errorf("column port: must be 1..65535, got %q", portText)})
		return nil
	}
	var at time.Time
	if ts := l.get(rec, "timestamp"); ts != "" {
		at = scanTime(ts)
		if at.IsZero() {
			bad(LineError{n, fmt.Errorf(`column timestamp: %q is not a time ("2006-01-02 15:04:05", UTC, or "2006-01-02 15:04:05Z")`, ts)})
			return nil
		}
	}
	transport := strings.ToLower(l.get(rec, "protocol"))
	switch transport {
	case "tcp", "udp":
	case "http", "https":
		// the application's name where the transport goes (some API
		// answers' scan_ssl and scan_ics rows): HTTP runs over TCP
		if opt.Warn != nil {
			opt.Warn(n, fmt.Sprintf("column protocol: %q read as tcp", transport))
		}
		transport = "tcp"
	case "":
		transport = "tcp"
		switch port {
		case 53, 123, 161, 162, 500, 1900, 4500, 5353, 51820:
			if !l.has("handshake") && !l.has("http_code") {
				transport = "udp"
			}
		}
	default:
		bad(LineError{n, fmt.Errorf("column protocol: %q is not tcp or udp", transport)})
		return nil
	}
	o := Observation{Type: TypeService, IP: a.Unmap().String(), Source: src, ObservedAt: opt.when(at),
		Hostnames: hostNames(l.get(rec, "hostname")),
		Service:   &Service{Port: port, Transport: transport, Probes: l.probes(rec), Detected: l.detected(rec)}}
	return emitChecked(n, o, emit, bad)
}

// probes are the HTTP answer, the handshake and the banners of a row.
func (l *shadowserverLayout) probes(rec []string) []Probe {
	var probes []Probe
	t := l.tls(rec)
	if resp := l.response(rec); resp != nil {
		probes = append(probes, Probe{Name: "shadowserver:http", Request: &Request{Method: "GET", Path: "/"}, Response: resp, TLS: t})
	} else if t != nil {
		name := "shadowserver:ssl"
		if l.has("rdp_protocol") {
			name = "shadowserver:rdp"
		}
		probes = append(probes, Probe{Name: name, TLS: t})
	}
	for _, b := range []struct{ col, name string }{
		{"serverid_raw", "shadowserver:ssh"},
		{"banner", "shadowserver:banner"},
		{"sysdesc", "shadowserver:snmp"},
		{"dns_version", "shadowserver:dns_version"},
	} {
		if v := l.get(rec, b.col); v != "" {
			probes = append(probes, Probe{Name: b.name, Banner: &Banner{Received: TextBody(v)}})
		}
	}
	if v := l.get(rec, "vendor_ids", "vendor_id"); v != "" {
		ids := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' || r == '|' || r == ' ' })
		probes = append(probes, Probe{Name: "shadowserver:isakmp", Banner: &Banner{Received: TextBody("vendor_ids: " + strings.Join(ids, " "))}})
	}
	return probes
}

// response is the HTTP answer of a row, nil when it has none.
func (l *shadowserverLayout) response(rec []string) *Response {
	resp := &Response{Protocol: l.get(rec, "http", "http_response_type"), Reason: l.get(rec, "http_reason")}
	if code := l.get(rec, "http_code"); code != "" {
		if s, err := strconv.Atoi(code); err == nil && s > 0 && s <= 999 {
			resp.Status = s
		}
	}
	seen := map[string]bool{}
	for _, h := range shadowserverHeaders {
		if v := l.get(rec, h.name); v != "" && !seen[h.header] {
			seen[h.header] = true
			resp.Headers = append(resp.Headers, Header{Name: h.header, Value: v})
		}
	}
	if resp.Status == 0 && len(resp.Headers) == 0 {
		return nil
	}
	if !strings.HasPrefix(strings.ToUpper(resp.Protocol), "HTTP/") {
		resp.Protocol = ""
	}
	return resp
}

// tls is the certificate and handshake of a row, nil when it has none.
func (l *shadowserverLayout) tls(rec []string) *TLS {
	t := &TLS{Cipher: l.get(rec, "cipher_suite"), JARM: l.get(rec, "jarm")}
	if hs := l.get(rec, "handshake"); hs != "" {
		t.Version = hs
	}
	t.Subject = l.dn(rec, "subject_")
	t.Issuer = l.dn(rec, "issuer_")
	if sn := l.get(rec, "cert_serial_number"); sn != "" {
		t.Serial = colonHexSerial(sn)
		if strings.HasPrefix(t.Serial, "-") {
			t.Serial = "-" + strings.TrimLeft(t.Serial[1:], "0")
		}
	}
	if fp := strings.ToLower(strings.ReplaceAll(l.get(rec, "sha256_fingerprint"), ":", "")); isHex(fp, 64) {
		t.SHA256 = fp
	}
	t.NotBefore = shadowserverTime(l.get(rec, "cert_issue_date", "cert_valid_from"))
	t.NotAfter = shadowserverTime(l.get(rec, "cert_expiration_date", "cert_valid_to"))
	t.SelfSigned = strings.EqualFold(l.get(rec, "self_signed"), "Y")
	if t.empty() {
		return nil
	}
	return t
}

// shadowserverTime is a certificate date as RFC 3339 ("" when it is not
// one).
func shadowserverTime(s string) string {
	at := scanTime(s)
	if at.IsZero() {
		return ""
	}
	return at.UTC().Format(time.RFC3339)
}

// dn reads a certificate name from its columns (prefix "subject_" or
// "issuer_").
func (l *shadowserverLayout) dn(rec []string, prefix string) *DN {
	g := func(name string) string { return l.get(rec, prefix+name) }
	d := &DN{CN: g("common_name"), C: g("country"), ST: g("state_or_province_name"), L: g("locality_name"), Email: g("email_address")}
	if v := g("organization_name"); v != "" {
		d.O = []string{v}
	}
	if v := g("organization_unit_name"); v != "" {
		d.OU = []string{v}
	}
	d.DN = d.Join(",", false)
	if d.DN == "" && d.Email == "" {
		return nil
	}
	return d
}

// detected is Shadowserver's own identification of the service: the
// device it names, the product and version it read, and what the row
// says of it.
func (l *shadowserverLayout) detected(rec []string) *Detected {
	d := &Detected{By: "shadowserver", Service: shadowserverService(l, rec)}
	// the Ubiquiti discovery report names the device by modelfull /
	// modelshort (model_full / model_short in later layouts) and firmware
	vendor, model := l.get(rec, "device_vendor"), l.get(rec, "device_model", "modelfull", "model_full", "modelshort", "model_short")
	switch {
	case vendor != "" && model != "" && !strings.HasPrefix(strings.ToLower(model), strings.ToLower(vendor)):
		d.Product = vendor + " " + model
	case model != "":
		d.Product = model
	case vendor != "":
		d.Product = vendor
	default:
		d.Product = l.get(rec, "product")
	}
	d.Version = l.get(rec, "device_version", "firmware")
	if d.Version == "" && !l.has("sysdesc") && !l.has("dns_version") && !l.has("ipmi_version") && !l.has("stratum") {
		// scan_snmp's, scan_dns's, scan_ipmi's and scan_ntp's version is
		// the protocol's, not a product's.
		d.Version = l.get(rec, "version")
	}
	var info []string
	for _, c := range shadowserverInfo {
		if v := l.get(rec, c); v != "" {
			info = append(info, c+": "+v)
		}
	}
	d.Info = strings.Join(info, "; ")
	if d.Product == "" && d.Version == "" && d.Info == "" {
		return nil
	}
	return d
}

// shadowserverService names the report's kind of service by its columns,
// else by the first word of its tag ("ftp", "telnet-alt").
func shadowserverService(l *shadowserverLayout, rec []string) string {
	switch {
	case l.has("rdp_protocol"):
		return "rdp"
	case l.has("http_code") && !l.has("handshake"):
		return "http"
	case l.has("handshake") && !l.has("banner"):
		return "ssl"
	case l.has("serverid_raw"):
		return "ssh"
	case l.has("sysdesc"):
		return "snmp"
	case l.has("dns_version"):
		return "dns"
	case l.has("initiator_spi") || l.has("vendor_ids"):
		return "isakmp"
	}
	tag := l.get(rec, "tag")
	if i := strings.IndexAny(tag, ",;"); i >= 0 {
		tag = tag[:i]
	}
	return strings.TrimSpace(tag)
}

// shadowserverIsJSON says the input starts (after a UTF-8 BOM and
// white space) with "[" or "{": the Reports API's JSON, not a CSV report
// (whose first column name is a letter).
func shadowserverIsJSON(br *bufio.Reader) bool {
	for n := 1; n <= 64<<10; n++ {
		b, err := br.Peek(n)
		if len(b) < n {
			return false
		}
		rest := bytes.TrimLeft(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), " \t\r\n")
		if len(rest) > 0 {
			return rest[0] == '[' || rest[0] == '{'
		}
		if err != nil {
			return false
		}
	}
	return false
}

// shadowserverJSON reads the Reports API's answer: an array of objects
// (or objects one after the other, JSON lines), each a row whose member
// names are the CSV report's column names. A number is its decimal text,
// true and false are the reports' Y and N, null is empty, an object or
// array its JSON text.
func shadowserverJSON(r io.Reader, src string, opt Options, emit Emit, bad func(LineError)) error {
	data, err := readJSONFeed(r, "shadowserver")
	if err != nil {
		return err
	}
	return jsonWalk{what: "shadowserver", resync: true}.walk(data, 1, bad, func(n int, raw json.RawMessage, _ bool) error {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil || obj == nil {
			bad(LineError{n, errors.New("json: not an object of a report's columns")})
			return nil
		}
		l := &shadowserverLayout{col: map[string]int{}, line: n}
		var rec []string
		for k, v := range obj {
			name := strings.ToLower(strings.TrimSpace(k))
			if _, dup := l.col[name]; dup || name == "" {
				continue
			}
			l.col[name] = len(rec)
			rec = append(rec, shadowserverJSONValue(v))
		}
		l.width = len(rec)
		if !l.has("ip") {
			if l.has("src_ip") {
				opt.skip(n, `no "ip" member: an event report (src_ip, dst_ip: the hosts a sinkhole or honeypot saw connect) lists no service`)
				return nil
			}
			bad(LineError{n, errors.New(`no "ip" member: not a Shadowserver report row`)})
			return nil
		}
		return shadowserverRow(n, l, rec, src, opt, emit, bad)
	})
}

func shadowserverJSONValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "Y"
		}
		return "N"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
