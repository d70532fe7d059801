package ingest

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// fofaDefaultFields are the field lists FOFA's answer rows are read in
// when the answer does not name its fields: the API's default
// (host,ip,port), GoFOFA's (ip,port), uncover's (ip,port,host) and the
// common additions of the protocol. A column's content decides which
// (an address, a port number, a host or URL, a protocol name).
var fofaDefaultFields = [][]string{
	{"ip"}, {"host"}, {"ip", "port"}, {"host", "ip", "port"}, {"ip", "port", "host"},
	{"ip", "port", "protocol"}, {"host", "ip", "port", "protocol"},
}

// fofaFieldName is what a FOFA field name looks like (a CSV header cell).
var fofaFieldName = regexp.MustCompile(`^[a-z][a-z0-9_.]*$`)

// fofaProtocol is what a protocol column holds ("https", "socks5").
var fofaProtocol = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// FOFA reads FOFA's answers and exports:
//
//   - the API's answer ({"error": false, "results": [[...], ...]}, one
//     document or JSON lines of them): the rows hold the requested
//     fields in order, which the answer does not repeat, so they are read
//     in the order of a "fields" member added to the answer ("ip,port,
//     title" or a list), else as one of fofaDefaultFields by their
//     content; an error answer is reported with its errmsg;
//   - JSON lines with named members (GoFOFA's -format json, FOFA's JSON
//     export), or an array of them;
//   - CSV with a header row of field names (fofa-py's --save, GoFOFA's
//     -headline, the site's export); CSV without one (GoFOFA's default
//     output) is read as one of fofaDefaultFields by its first row.
//
// Each record with an address is one service observation
// (docs/ingest-enrich.md says what is kept); a record of a host name
// only (no ip) is counted as skipped.
func FOFA(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("fofa")
	br := bufio.NewReaderSize(r, 64<<10)
	c, err := firstNonSpace(br)
	if err != nil {
		return fmt.Errorf("read fofa: %w", err)
	}
	record := func(n int, rec map[string]string) error {
		o, skip, err := fofaObservation(rec, src, opt)
		if skip != "" {
			opt.skip(n, skip)
			return nil
		}
		return emitBuilt(n, o, err, emit, bad)
	}
	if c != '{' && c != '[' {
		return fofaCSV(br, opt, bad, record)
	}
	return opt.jsonRecords(br, "fofa", bad, nil, func(n int, raw []byte) error {
		var m map[string]any
		if err := scanUnmarshal(raw, &m); err != nil || m == nil {
			if err == nil {
				err = errors.New("not an object")
			}
			bad(LineError{n, fmt.Errorf("json: %w", err)})
			return nil
		}
		_, isAnswer := m["results"]
		if e, ok := m["error"].(bool); ok && e || !isAnswer && m["errmsg"] != nil {
			bad(LineError{n, fmt.Errorf("fofa answer: error: %v", m["errmsg"])})
			return nil
		}
		if !isAnswer {
			rec := make(map[string]string, len(m))
			for k, v := range m {
				rec[strings.ToLower(k)] = fofaText(v)
			}
			return record(n, rec)
		}
		rows, ok := m["results"].([]any)
		if !ok {
			bad(LineError{n, errors.New("fofa answer: results: not a list")})
			return nil
		}
		var table [][]string
		for _, row := range rows {
			switch x := row.(type) {
			case []any:
				cells := make([]string, len(x))
				for i, v := range x {
					cells[i] = fofaText(v)
				}
				table = append(table, cells)
			default: // one field requested: each row is its value
				table = append(table, []string{fofaText(x)})
			}
		}
		fields, err := fofaAnswerFields(m["fields"], table)
		if err != nil {
			bad(LineError{n, err})
			return nil
		}
		for i, row := range table {
			if len(row) != len(fields) {
				bad(LineError{n, fmt.Errorf("fofa answer: results[%d]: %d values for %d fields (%s)", i, len(row), len(fields), strings.Join(fields, ","))})
				continue
			}
			rec := make(map[string]string, len(fields))
			for j, f := range fields {
				rec[f] = row[j]
			}
			if err := record(n, rec); err != nil {
				return err
			}
		}
		return nil
	})
}

// fofaText is a value of a record: a string as it is (a banner keeps its
// line ends), a number as text.
func fofaText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return anyText(v)
}

// firstNonSpace peeks at the first byte of r that is not white space (a
// byte-order mark passed over); 0 for an empty input.
func firstNonSpace(br *bufio.Reader) (byte, error) {
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte{0xEF, 0xBB, 0xBF}) {
		_, _ = br.Discard(3)
	}
	for i := 1; ; i++ {
		b, err := br.Peek(i)
		if len(b) < i {
			if errors.Is(err, io.EOF) || errors.Is(err, bufio.ErrBufferFull) {
				return 0, nil
			}
			return 0, err
		}
		if c := b[i-1]; c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return c, nil
		}
	}
}

// fofaAnswerFields are the names of an answer's columns: its "fields"
// member, or one of fofaDefaultFields its rows' content fits.
func fofaAnswerFields(given any, table [][]string) ([]string, error) {
	var fields []string
	switch x := given.(type) {
	case string:
		for _, f := range strings.Split(x, ",") {
			fields = append(fields, strings.ToLower(strings.TrimSpace(f)))
		}
	case []any:
		for _, f := range x {
			s, _ := f.(string)
			fields = append(fields, strings.ToLower(strings.TrimSpace(s)))
		}
	case nil:
		if len(table) == 0 {
			return nil, nil
		}
		if f := fofaInfer(table); f != nil {
			return f, nil
		}
		return nil, fmt.Errorf("fofa answer: rows of %d values and no \"fields\": add the request's fields to the answer (\"fields\": \"ip,port,title\")", len(table[0]))
	default:
		return nil, errors.New(`fofa answer: "fields": want "ip,port,..." or a list of names`)
	}
	if i := slices.Index(fields, ""); i >= 0 {
		return nil, fmt.Errorf("fofa answer: \"fields\": field %d has no name", i+1)
	}
	return fields, nil
}

// fofaInfer names the columns of rows that fit one of fofaDefaultFields
// by their content; nil when none fits.
func fofaInfer(rows [][]string) []string {
	for _, want := range fofaDefaultFields {
		fits := true
		for _, row := range rows {
			if len(row) != len(want) {
				fits = false
				break
			}
			for i, f := range want {
				if !fofaFits(f, row[i]) {
					fits = false
				}
			}
		}
		if fits {
			return want
		}
	}
	return nil
}

// fofaFits says whether v looks like a value of the default field f.
func fofaFits(f, v string) bool {
	switch f {
	case "ip":
		_, err := netip.ParseAddr(v)
		return err == nil
	case "port":
		p, err := strconv.Atoi(v)
		return err == nil && p > 0 && p < 65536
	case "protocol":
		return fofaProtocol.MatchString(v)
	case "host":
		return v != "" && !strings.ContainsAny(v, " \t,") && (strings.Contains(v, ".") || strings.Contains(v, ":"))
	}
	return false
}

// fofaCSV reads a FOFA CSV: its header row names the columns; without
// one, the first row's content must fit one of fofaDefaultFields.
func fofaCSV(r io.Reader, opt Options, bad func(LineError), record func(int, map[string]string) error) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = false
	var fields []string
	for {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				bad(LineError{pe.StartLine, fmt.Errorf("csv: %w", pe.Err)})
				continue
			}
			return fmt.Errorf("read fofa: %w", err)
		}
		line, _ := cr.FieldPos(0)
		if len(row) == 1 && strings.TrimSpace(row[0]) == "" {
			continue
		}
		if fields == nil {
			if fofaHeader(row) {
				for _, f := range row {
					fields = append(fields, strings.ToLower(strings.TrimSpace(f)))
				}
				continue
			}
			if fields = fofaInfer([][]string{row}); fields == nil {
				return fmt.Errorf("read fofa: line %d: no header row (ip,port,host,...) and the columns are not ip,port (or host,ip,port, ...)", line)
			}
		}
		if len(row) != len(fields) {
			bad(LineError{line, fmt.Errorf("csv: %d values for %d columns (%s)", len(row), len(fields), strings.Join(fields, ","))})
			continue
		}
		rec := make(map[string]string, len(fields))
		for i, f := range fields {
			rec[f] = row[i]
		}
		if err := record(line, rec); err != nil {
			return err
		}
	}
}

// fofaHeader says whether row is a header of FOFA field names (it names
// ip, host or link).
func fofaHeader(row []string) bool {
	named := false
	for _, c := range row {
		c = strings.ToLower(strings.TrimSpace(c))
		if !fofaFieldName.MatchString(c) {
			return false
		}
		named = named || c == "ip" || c == "host" || c == "link"
	}
	return named
}

// fofaObservation builds the service of one FOFA record (its fields by
// name); skip is why a record was not stored (no address).
func fofaObservation(rec map[string]string, src string, opt Options) (o Observation, skip string, err error) {
	host := strings.TrimSpace(firstNonEmpty(rec["link"], rec["host"]))
	hostName, hostPort, path := fofaHostParts(host)
	ip := strings.TrimSpace(rec["ip"])
	if ip == "" && host == "" {
		return o, "", errors.New(`not a FOFA record: want "ip", "host" or "link"`)
	}
	if ip == "" {
		if _, err := netip.ParseAddr(hostName); err != nil {
			return o, "fofa record without an IP address (host " + strconv.Quote(host) + ")", nil
		}
		ip = hostName
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return o, "", fmt.Errorf("ip: not an IP address: %q", ip)
	}
	pv := any(nil)
	switch {
	case rec["port"] != "":
		pv = rec["port"]
	case hostPort != "":
		pv = hostPort
	}
	port, err := scanPort(pv)
	if err != nil {
		return o, "", err
	}
	transport := "tcp"
	if strings.EqualFold(rec["base_protocol"], "udp") {
		transport = "udp"
	}
	o = Observation{Type: TypeService, IP: a.Unmap().String(), Source: src, ObservedAt: opt.when(scanTime(rec["lastupdatetime"]))}
	o.Hostnames = hostNames(rec["domain"], hostName)
	probes, err := fofaProbes(rec, path)
	if err != nil {
		return o, "", err
	}
	o.Service = &Service{Port: port, Transport: transport, Probes: probes, Detected: fofaDetected(rec)}
	o.Claims = opt.scanClaim("fofa", firstNonEmpty(rec["as_organization"], rec["org"]), firstNonEmpty(rec["as_number"], rec["asn"]))
	return o, "", nil
}

// fofaHostParts splits FOFA's host or link ("1.1.1.1:1080",
// "https://a.example:8443/x", "a.example") into the host, its port and
// the URL's path ("/" when none).
func fofaHostParts(s string) (host, port, path string) {
	path = "/"
	rest := s
	if _, after, ok := strings.Cut(s, "://"); ok {
		rest = after
		if p := urlPort(s); p != nil {
			port, _ = p.(string)
		}
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		path, rest = pathOf(rest[i:]), rest[:i]
	}
	if strings.HasPrefix(rest, "[") {
		if i := strings.Index(rest, "]"); i > 0 {
			host = rest[1:i]
			if p, ok := strings.CutPrefix(rest[i+1:], ":"); ok {
				port = p
			}
			return host, port, path
		}
	}
	if strings.Count(rest, ":") == 1 {
		h, p, _ := strings.Cut(rest, ":")
		return h, p, path
	}
	return rest, port, path
}

// fofaProbes: header (the raw response's status line and headers) with
// body and title as the answer to a GET of the link's path (status_code
// alone when there is no header), and the TLS of the certs_* fields under
// it; a title alone as an answer with that title; banner as a banner probe "fofa:<protocol>" (or the answer, when it
// is the HTTP response and there is no header); cert (FOFA's text of the
// certificate) as a banner probe "fofa:cert"; icon_hash as the favicon's
// mmh3.
func fofaProbes(rec map[string]string, path string) ([]Probe, error) {
	t, err := fofaTLS(rec)
	if err != nil {
		return nil, err
	}
	name := "fofa"
	if p := strings.ToLower(strings.TrimSpace(rec["protocol"])); p != "" {
		name += ":" + p
	}
	var probes []Probe
	resp, isHTTP := parseHTTPResponse([]byte(rec["header"]))
	banner := rec["banner"]
	if !isHTTP {
		if resp, isHTTP = parseHTTPResponse([]byte(banner)); isHTTP {
			banner = ""
		}
	}
	if !isHTTP && rec["status_code"] != "" {
		st, err := strconv.Atoi(strings.TrimSpace(rec["status_code"]))
		if err != nil || st < 100 || st > 999 {
			return nil, fmt.Errorf("status_code: not an HTTP status: %q", rec["status_code"])
		}
		resp, isHTTP = &Response{Status: st}, true
	}
	if !isHTTP && rec["title"] != "" {
		resp, isHTTP = &Response{}, true // the page's title, the answer not kept
	}
	if isHTTP {
		if b := rec["body"]; b != "" {
			resp.Body = TextBody(b)
		}
		resp.Title = rec["title"]
		probes = append(probes, Probe{Request: &Request{Method: "GET", Path: path}, Response: resp, TLS: t})
		t = nil
	} else if h := rec["header"]; h != "" {
		probes = append(probes, Probe{Name: "fofa:header", Banner: &Banner{Received: TextBody(h)}})
	}
	if banner != "" {
		probes = append(probes, Probe{Name: name, Banner: &Banner{Received: TextBody(banner)}})
	}
	if c := rec["cert"]; strings.TrimSpace(c) != "" {
		probes = append(probes, Probe{Name: "fofa:cert", Banner: &Banner{Received: TextBody(c)}})
	}
	if t != nil {
		probes = append(probes, Probe{TLS: t})
	}
	if h := strings.TrimSpace(rec["icon_hash"]); h != "" {
		v, err := strconv.ParseInt(h, 10, 64)
		if err != nil || v < -1<<31 || v >= 1<<32 {
			return nil, fmt.Errorf("icon_hash: not an mmh3 hash: %q", h)
		}
		m := int32(v)
		probes = append(probes, faviconProbe("/favicon.ico", "", &Body{MMH3: &m}))
	}
	return probes, nil
}

// fofaTLS reads the certs_* fields (subject and issuer common name and
// organization, the domains), the names cert's text gives where they do
// not (openssl's Subject: and Issuer: lines, a PEM block whole), jarm,
// tls_ja3s and tls_version.
func fofaTLS(rec map[string]string) (*TLS, error) {
	t := &TLS{Version: rec["tls_version"], JA3S: strings.ToLower(rec["tls_ja3s"])}
	if j := strings.ToLower(strings.TrimSpace(rec["jarm"])); j != "" {
		if !isHex(j, 62) {
			return nil, fmt.Errorf("jarm: not 62 hex digits: %q", rec["jarm"])
		}
		t.JARM = j
	}
	name := func(cn, org string) *DN {
		cn, org = strings.TrimSpace(cn), strings.TrimSpace(org)
		if cn == "" && org == "" {
			return nil
		}
		d := &DN{CN: cn}
		if org != "" {
			d.O = []string{org}
		}
		d.DN = d.Join(", ", false)
		return d
	}
	t.Subject = name(rec["certs_subject_cn"], rec["certs_subject_org"])
	t.Issuer = name(rec["certs_issuer_cn"], rec["certs_issuer_org"])
	if c := certTextTLS(rec["cert"]); c != nil {
		if t.Subject == nil {
			t.Subject = c.Subject
		}
		if t.Issuer == nil {
			t.Issuer = c.Issuer
		}
		if c.PEM != "" && t.Subject == c.Subject {
			t.PEM, t.Serial, t.SHA256, t.NotBefore, t.NotAfter, t.SANs, t.SelfSigned = c.PEM, c.Serial, c.SHA256, c.NotBefore, c.NotAfter, c.SANs, c.SelfSigned
		}
	}
	for _, d := range strings.Split(rec["certs_domains"], ",") {
		if d = strings.TrimSpace(d); d != "" {
			t.SANs = append(t.SANs, d)
		}
	}
	if t.empty() {
		return nil, nil
	}
	return t, nil
}

// fofaDetected: the protocol, product(s) and version FOFA identified;
// server, OS and the product category as info.
func fofaDetected(rec map[string]string) *Detected {
	d := &Detected{By: "fofa", Service: strings.ToLower(strings.TrimSpace(rec["protocol"])), Product: strings.TrimSpace(rec["product"]), Version: strings.TrimSpace(rec["version"])}
	if d.Service == "unknown" {
		d.Service = ""
	}
	var info []string
	for _, k := range []string{"server", "os", "product_category"} {
		if v := strings.TrimSpace(rec[k]); v != "" {
			info = append(info, k+": "+v)
		}
	}
	d.Info = strings.Join(info, "; ")
	if d.Service == "" && d.Product == "" && d.Info == "" {
		return nil
	}
	return d
}
