package ingest

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// testsslFinding is one finding of testssl.sh's file output: a line of
// --csvfile, an element of --jsonfile's array (with "ip" as "NAME/IP"
// and the port), or an element of a section of --jsonfile-pretty's
// scanResult (without them: the scan result names its target).
type testsslFinding struct {
	ID       string `json:"id"`
	IP       string `json:"ip"`
	Port     any    `json:"port"`
	Severity string `json:"severity"`
	Finding  string `json:"finding"`
	CVE      string `json:"cve"`
	CWE      string `json:"cwe"`
	Hint     string `json:"hint"`
	// start is the run's start as the terminal output's "Start" line
	// gives it (the files carry theirs in startTime).
	start time.Time
}

// testsslTarget is a service testssl.sh tested and its findings, in the
// order read.
type testsslTarget struct {
	line     int
	name, ip string
	port     int
	rdns     string
	start    time.Time
	findings []testsslFinding
}

// testsslSections are the finding arrays of a --jsonfile-pretty scan
// result in the order testssl.sh writes them (its fileout_json_section;
// 3.0 named fs pfs). Arrays of other names are read after them.
var testsslSections = []string{"pretest", "singleCipher", "protocols", "grease", "ciphers", "serverPreferences", "fs", "pfs",
	"serverDefaults", "headerResponse", "vulnerabilities", "cipherTests", "browserSimulations", "rating"}

// TestSSL reads testssl.sh's file output: --jsonfile (an array of
// findings, each naming "NAME/IP" and the port), --jsonfile-pretty (the
// scan's header and a scanResult per address and port, its findings by
// section) and --csvfile (the same findings as CSV). The findings of one
// address and port are one service: its certificate (the `cert` finding's
// PEM read whole, else cert_commonName, cert_subjectAltName,
// cert_serialNumber, cert_fingerprintSHA256, cert_notBefore/After,
// cert_caIssuers), one TLS probe per certificate (`<cert#N>` suffixes);
// the negotiated protocol and cipher; the HTTP answer testssl.sh read
// (HTTP_status_code, banner_server as Server, banner_application's
// headers, the F5 cookies it decoded) on the first. docs/ingest-enrich.md
// says what is kept.
func TestSSL(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("testssl")
	br, first, err := peekFirstByte(r, "testssl")
	if err != nil {
		return err
	}
	var order []string
	targets := map[string]*testsslTarget{}
	target := func(line int, name, ip string, port int) *testsslTarget {
		key := ip + " " + strconv.Itoa(port)
		t, ok := targets[key]
		if !ok {
			t = &testsslTarget{line: line, name: name, ip: ip, port: port}
			targets[key] = t
			order = append(order, key)
		}
		return t
	}
	unnamed := map[string]bool{}
	// flat adds a finding that names its target ("NAME/IP", port).
	flat := func(n int, f testsslFinding) {
		host, ipText, _ := strings.Cut(strings.TrimSpace(f.IP), "/")
		if f.ID == "" || f.IP == "" && f.Port == nil {
			bad(LineError{n, errors.New(`not a testssl.sh finding: want "id", "ip" ("NAME/IP") and "port"`)})
			return
		}
		ip, name := auditHost(ipText)
		if ip == "" {
			ip, name = auditHost(host)
		}
		if name == "" {
			name = host
		}
		if ip == "" {
			// One reason per target, on its first finding.
			if !unnamed[f.IP] {
				unnamed[f.IP] = true
				opt.skip(n, fmt.Sprintf("testssl.sh findings from line %d on: %s", n, noAddress("testssl.sh", firstNonEmpty(host, f.IP))))
			}
			return
		}
		port, err := auditPort(f.Port)
		if err != nil {
			bad(LineError{n, fmt.Errorf("testssl.sh finding %s: %w", f.ID, err)})
			return
		}
		t := target(n, name, ip, port)
		if t.start.IsZero() {
			t.start = f.start
		}
		t.findings = append(t.findings, f)
	}
	var start time.Time
	switch first {
	case '[', '{':
		err = auditJSON(br, "testssl", []string{"scanResult"}, bad, func(key string, raw json.RawMessage) {
			if key == "startTime" {
				s, _ := jsonText(raw)
				start = unixTime(s)
			}
		}, func(n int, rec json.RawMessage) error {
			var probe struct {
				TargetHost *string `json:"targetHost"`
			}
			if err := scanUnmarshal(rec, &probe); err != nil {
				bad(LineError{n, fmt.Errorf("json: %w", err)})
				return nil
			}
			if probe.TargetHost == nil {
				var f testsslFinding
				if err := scanUnmarshal(rec, &f); err != nil {
					bad(LineError{n, fmt.Errorf("testssl.sh finding: %w", err)})
					return nil
				}
				flat(n, f)
				return nil
			}
			testsslPretty(n, rec, start, opt, bad, target)
			return nil
		})
	case 0:
		return nil
	default:
		// The terminal output names its target on a "Start ... -->> IP:PORT"
		// line near its top; anything else is the CSV file.
		if head, _ := br.Peek(16 << 10); bytes.Contains(head, []byte("-->> ")) {
			err = opt.testsslText(br, bad, flat)
		} else {
			err = testsslCSV(br, bad, flat)
		}
	}
	if err != nil {
		return err
	}
	for _, k := range order {
		t := targets[k]
		o, err := t.observation(src, opt)
		if errors.Is(err, errTestsslNoScan) || errors.Is(err, errTestsslNothing) {
			opt.skip(t.line, err.Error())
			continue
		}
		if err := emitBuilt(t.line, o, err, emit, bad); err != nil {
			return err
		}
	}
	return nil
}

// testsslPretty reads one scanResult element of --jsonfile-pretty.
func testsslPretty(n int, rec json.RawMessage, start time.Time, opt Options, bad func(LineError), target func(int, string, string, int) *testsslTarget) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(rec, &m); err != nil {
		bad(LineError{n, fmt.Errorf("testssl.sh scanResult: %w", err)})
		return
	}
	text := func(k string) string { s, _ := jsonText(m[k]); return s }
	host := text("targetHost")
	ip, name := auditHost(text("ip"))
	if ip == "" {
		ip, name = auditHost(host)
	}
	if name == "" {
		name = host
	}
	if ip == "" {
		opt.skip(n, "testssl.sh scanResult: "+noAddress("testssl.sh", firstNonEmpty(text("ip"), host)))
		return
	}
	port, err := scanPort(text("port"))
	if err != nil {
		bad(LineError{n, fmt.Errorf("testssl.sh scanResult: %w", err)})
		return
	}
	t := target(n, name, ip, port)
	t.rdns, t.start = text("rDNS"), start
	if s := text("service"); s != "" {
		t.findings = append(t.findings, testsslFinding{ID: "service", Finding: s})
	}
	sections := slices.Clone(testsslSections)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if raw := bytes.TrimSpace(m[k]); len(raw) > 0 && raw[0] == '[' && !slices.Contains(sections, k) {
			sections = append(sections, k)
		}
	}
	for _, sec := range sections {
		raw, ok := m[sec]
		if !ok {
			continue
		}
		var fs []testsslFinding
		if err := scanUnmarshal(raw, &fs); err != nil {
			bad(LineError{n, fmt.Errorf("testssl.sh scanResult %s: %w", sec, err)})
			return
		}
		t.findings = append(t.findings, fs...)
	}
}

// testsslCSV reads --csvfile: a header line naming the columns (id,
// fqdn/ip, port, severity, finding, cve, cwe, and hint with --hints),
// then a finding a line.
func testsslCSV(r io.Reader, bad func(LineError), flat func(int, testsslFinding)) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	var col map[string]int
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				bad(LineError{pe.StartLine, fmt.Errorf("testssl.sh csv: %w", pe.Err)})
				continue
			}
			return fmt.Errorf("read testssl: %w", err)
		}
		line, _ := cr.FieldPos(0)
		if col == nil {
			col = map[string]int{}
			for i, h := range rec {
				col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
			}
			_, okID := col["id"]
			_, okIP := col["fqdn/ip"]
			if !okID || !okIP {
				bad(LineError{line, errors.New(`testssl.sh csv: not testssl.sh's header: want "id","fqdn/ip","port","severity","finding"`)})
				return nil
			}
			continue
		}
		get := func(k string) string {
			if i, ok := col[k]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		if len(rec) < len(col)-2 { // cve, cwe and hint may be missing
			bad(LineError{line, fmt.Errorf("testssl.sh csv: %d fields, want %d", len(rec), len(col))})
			continue
		}
		flat(line, testsslFinding{ID: get("id"), IP: get("fqdn/ip"), Port: get("port"), Severity: get("severity"), Finding: get("finding"), CVE: get("cve"), CWE: get("cwe")})
	}
}

// errTestsslNoScan marks a target testssl.sh could not scan, and
// errTestsslNothing one whose findings (a run of some checks only: -U,
// -P) say nothing of the service that evidence keeps; both are counted
// as skipped.
var (
	errTestsslNoScan  = errors.New("testssl.sh could not scan the target")
	errTestsslNothing = errors.New("testssl.sh target")
)

var (
	// testsslCertN is the suffix of a finding of the Nth certificate.
	testsslCertN = regexp.MustCompile(`^(.+?)\s*<cert#(\d+)>$`)
	// testsslIssuer is cert_caIssuers: "CN (O from C)" or "CN (O)".
	testsslIssuer = regexp.MustCompile(`^(.*?)\s*\((.*?)(?:\s+from\s+([A-Za-z]{2}))?\)$`)
	// testsslStatus is HTTP_status_code: "200 OK ('/')".
	testsslStatus = regexp.MustCompile(`^(\d{3})\s*(.*?)\s*(?:\('([^']*)'\))?$`)
	// testsslF5 is the F5 BIG-IP persistence cookie testssl.sh decoded.
	testsslF5 = regexp.MustCompile(`F5 cookie (\S+) (\S+) is`)
	// testsslF5Enc is an encrypted one (its value not given).
	testsslF5Enc = regexp.MustCompile(`encrypted F5 cookie named (\S+)`)
)

func (t *testsslTarget) observation(src string, opt Options) (Observation, error) {
	certs := map[int]*TLS{}
	pems := map[int]*TLS{}
	var certOrder []int
	cert := func(n int) *TLS {
		c, ok := certs[n]
		if !ok {
			c = &TLS{}
			certs[n] = c
			certOrder = append(certOrder, n)
		}
		return c
	}
	var version, cipher, service, problem string
	var resp *Response
	path := "/"
	response := func() *Response {
		if resp == nil {
			resp = &Response{}
		}
		return resp
	}
	for _, f := range t.findings {
		id, n := f.ID, 1
		if m := testsslCertN.FindStringSubmatch(id); m != nil {
			id = m[1]
			n, _ = strconv.Atoi(m[2])
		}
		v := strings.TrimSpace(f.Finding)
		field := func(err error) error { return fmt.Errorf("testssl.sh finding %s: %w", f.ID, err) }
		switch id {
		case "scanProblem":
			if strings.EqualFold(f.Severity, "FATAL") {
				problem = v
			}
		case "service":
			service = v
		case "cert":
			c, ok, err := certFromPEM(v)
			if err != nil {
				return Observation{}, field(err)
			}
			if ok && c != nil {
				cert(n)
				pems[n] = c
			}
		case "cert_commonName":
			if v != "" && !strings.HasPrefix(v, "No ") {
				c := cert(n)
				if c.Subject == nil {
					c.Subject = &DN{}
				}
				c.Subject.CN = v
			}
		case "cert_subjectAltName":
			if v != "" && !strings.Contains(v, "SAN") && !strings.HasPrefix(v, "--") {
				cert(n).SANs = sanList(v, " ")
			}
		case "cert_serialNumber":
			s, err := serialText(v, false)
			if err != nil {
				return Observation{}, field(err)
			}
			cert(n).Serial = s
		case "cert_fingerprintSHA256":
			h, err := hexFingerprint(v)
			if err != nil {
				return Observation{}, field(err)
			}
			cert(n).SHA256 = h
		case "cert_notBefore", "cert_notAfter":
			// "2019-05-18 20:28", in UTC since testssl.sh 3.1 (3.0 wrote
			// the scanning host's local time; the PEM's dates are kept
			// when the certificate itself is there).
			tm, err := time.Parse("2006-01-02 15:04", v)
			if err != nil {
				return Observation{}, field(fmt.Errorf("not a date (YYYY-MM-DD HH:MM): %q", v))
			}
			if id == "cert_notBefore" {
				cert(n).NotBefore = tm.UTC().Format(time.RFC3339)
			} else {
				cert(n).NotAfter = tm.UTC().Format(time.RFC3339)
			}
		case "cert_caIssuers":
			c := cert(n)
			switch m := testsslIssuer.FindStringSubmatch(v); {
			case v == "selfsigned":
				c.SelfSigned = true
			case m != nil:
				c.Issuer = &DN{CN: m[1], C: strings.ToUpper(m[3])}
				if m[2] != "" {
					c.Issuer.O = []string{m[2]}
				}
			case v != "":
				c.Issuer = &DN{CN: v}
			}
		case "protocol_negotiated":
			version = tlsVersionText(strings.TrimPrefix(v, "Default protocol "))
		case "cipher_negotiated":
			cipher, _, _ = strings.Cut(v, ",")
			cipher = strings.TrimSpace(cipher)
		case "HTTP_status_code":
			if m := testsslStatus.FindStringSubmatch(v); m != nil {
				r := response()
				r.Status, _ = strconv.Atoi(m[1])
				r.Reason = m[2]
				if m[3] != "" {
					path = m[3]
				}
			}
		case "banner_server":
			if v != "" && !strings.HasPrefix(v, "No Server banner") && v != "Server banner is empty" && !strings.HasPrefix(v, "IIS6_openssl_mismatch") {
				response().Headers = append(response().Headers, Header{Name: "Server", Value: v})
			}
		case "banner_application":
			if v != "" && v != "No application banner found" {
				for _, h := range testsslHeaders(v) {
					response().Headers = append(response().Headers, h)
				}
			}
		case "cookie_bigip_f5":
			if m := testsslF5.FindStringSubmatch(v); m != nil {
				response().Headers = append(response().Headers, Header{Name: "Set-Cookie", Value: m[1] + "=" + m[2]})
			} else if m := testsslF5Enc.FindStringSubmatch(v); m != nil {
				response().Headers = append(response().Headers, Header{Name: "Set-Cookie", Value: m[1] + "="})
			}
		}
	}
	var probes []Probe
	for i, n := range certOrder {
		c := fillTLS(pems[n], certs[n])
		if i == 0 {
			c.Version, c.Cipher = version, cipher
		}
		if !c.empty() {
			probes = append(probes, Probe{Name: "testssl", TLS: c})
		}
	}
	if len(probes) == 0 && (version != "" || cipher != "") {
		probes = append(probes, Probe{Name: "testssl", TLS: &TLS{Version: version, Cipher: cipher}})
	}
	if resp != nil {
		if len(probes) == 0 {
			probes = append(probes, Probe{Name: "testssl"})
		}
		probes[0].Request = &Request{Method: "GET", Path: path}
		probes[0].Response = resp
	}
	if len(probes) == 0 {
		if problem != "" {
			return Observation{}, fmt.Errorf("%w: %s", errTestsslNoScan, problem)
		}
		return Observation{}, fmt.Errorf("%w: its findings have no certificate, protocol, cipher or HTTP answer to keep", errTestsslNothing)
	}
	s := &Service{Port: t.port, Transport: "tcp", Probes: probes}
	if service != "" && !strings.Contains(service, " ") {
		s.Detected = &Detected{By: "testssl", Service: strings.ToLower(service)}
	}
	o := Observation{Type: TypeService, IP: t.ip, Source: src, ObservedAt: opt.when(t.start), Service: s}
	// rDNS: "--" for none, else the names, space-separated.
	o.Hostnames = auditNames(append([]string{t.name}, strings.Fields(strings.ReplaceAll(t.rdns, "--", ""))...)...)
	return o, nil
}

// testsslHeaders reads banner_application: the header lines testssl.sh
// found, joined with ", " ("X-Powered-By: PHP/8.1, X-AspNet-Version:
// 4.0.30319"); a part without a header name continues the value before.
func testsslHeaders(v string) []Header {
	var out []Header
	for _, part := range strings.Split(v, ", ") {
		name, value, ok := strings.Cut(part, ":")
		if ok && name != "" && !strings.ContainsAny(name, " \t") {
			out = append(out, Header{Name: name, Value: strings.TrimSpace(value)})
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].Value += ", " + part
		}
	}
	return out
}

// testsslText reads what testssl.sh prints on a terminal (as it is pasted
// into issues and reports, colours or not): each "Start ... -->>
// IP:PORT (NAME) <<--" block's lines that carry the same facts as the
// file output's findings, passed on as those findings: the service, the
// negotiated protocol and cipher, each server certificate's serial,
// SHA-256 fingerprint, common name, SANs, issuer and validity, the HTTP
// status and the Server banner. A file with no "Start" line is refused.
func (o Options) testsslText(r io.Reader, bad func(LineError), flat func(int, testsslFinding)) error {
	var (
		target        string // "NAME/IP"
		port          string
		start         time.Time
		cert          string // " <cert#N>" inside a numbered certificate block
		last          string // the field of the last line, for continuation lines
		sawStart, any bool
	)
	err := o.lines(r, "testssl.sh output", bad, func(n int, b []byte) error {
		l := strings.TrimRight(ansiColour.ReplaceAllString(latin1(b), ""), " \t\r\n")
		if m := testsslStart.FindStringSubmatch(l); m != nil {
			sawStart, cert, last = true, "", ""
			// testssl.sh prints its host's clock time without a zone: taken
			// as UTC, as nmap-normal takes a zone abbreviation.
			start, _ = time.Parse(time.DateTime, m[1])
			ip, p := m[2], m[3]
			name := m[4]
			if name == "" {
				name = ip
			}
			target, port = name+"/"+strings.Trim(ip, "[]"), p
			return nil
		}
		if !sawStart || target == "" {
			return nil
		}
		if strings.HasPrefix(strings.TrimSpace(l), "Done ") && strings.Contains(l, "-->>") {
			target = ""
			return nil
		}
		if m := testsslCertBlock.FindStringSubmatch(l); m != nil {
			cert = " <cert#" + m[1] + ">"
			return nil
		}
		key, val := testsslField(l)
		if key == "" {
			// a continuation line: the second fingerprint
			if last == "Fingerprints" {
				if h, ok := strings.CutPrefix(strings.TrimSpace(l), "SHA256 "); ok {
					flat(n, testsslFinding{ID: "cert_fingerprintSHA256" + cert, IP: target, Port: port, Finding: strings.TrimSpace(h)})
				}
			}
			return nil
		}
		last = key
		add := func(id, v string) {
			any = true
			flat(n, testsslFinding{ID: id, IP: target, Port: port, Finding: v, start: start})
		}
		switch key {
		case "Service detected:":
			add("service", val)
		case "Negotiated protocol":
			add("protocol_negotiated", val)
		case "Negotiated cipher":
			add("cipher_negotiated", val)
		case "Serial":
			add("cert_serialNumber"+cert, strings.Fields(val)[0])
		case "Fingerprints":
			if h, ok := strings.CutPrefix(val, "SHA256 "); ok {
				add("cert_fingerprintSHA256"+cert, strings.TrimSpace(h))
			}
		case "Common Name (CN)":
			add("cert_commonName"+cert, strings.Fields(val)[0])
		case "subjectAltName (SAN)":
			if !strings.HasPrefix(val, "missing") && !strings.HasPrefix(val, "--") {
				add("cert_subjectAltName"+cert, val)
			}
		case "Issuer":
			if strings.HasPrefix(val, "self-signed") {
				val = "selfsigned"
			}
			add("cert_caIssuers"+cert, val)
		case "Certificate Validity (UTC)", "Certificate Validity (local)", "Certificate Validity":
			if m := testsslValidity.FindStringSubmatch(val); m != nil {
				add("cert_notBefore"+cert, m[1])
				add("cert_notAfter"+cert, m[2])
			}
		case "HTTP Status Code":
			add("HTTP_status_code", val)
		case "Server banner":
			if !strings.HasPrefix(val, "(no") && val != "--" {
				add("banner_server", val)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !sawStart {
		bad(LineError{1, errors.New(`not testssl.sh output: no findings file (JSON or CSV) and no "Start ... -->> IP:PORT (NAME) <<--" line`)})
	} else if !any {
		o.skip(1, "testssl.sh output: no finding this reader keeps")
	}
	return nil
}

var (
	// testsslStart: " Start 2026-11-27 23:55:36        -->> 127.0.0.1:10443 (127.0.0.1) <<--"
	testsslStart = regexp.MustCompile(`^\s*Start (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s+-->> (\[[0-9A-Fa-f:.]+\]|[^\s:]+):(\d+) \(([^)]*)\) <<--`)
	// testsslCertBlock: " Server Certificate #1" when a server has several.
	testsslCertBlock = regexp.MustCompile(`^\s*Server Certificate #(\d+)`)
	// testsslValidity: "4070 >= 60 days (2018-05-02 10:11 --> 2038-01-19 03:14)"
	testsslValidity = regexp.MustCompile(`\((\d{4}-\d\d-\d\d \d\d:\d\d) --> (\d{4}-\d\d-\d\d \d\d:\d\d)\)`)
)

// testsslField splits one of testssl.sh's " Label    value" lines at the
// run of spaces after its label; ("", "") for a continuation line (one
// that starts with a long run of spaces) or a line of another shape.
func testsslField(l string) (key, val string) {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 || t == "" {
		return "", ""
	}
	if i := strings.Index(t, "  "); i > 0 {
		return strings.TrimSpace(t[:i]), strings.TrimSpace(t[i:])
	}
	return "", ""
}
