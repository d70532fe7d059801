package ingest

import (
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// niktoTarget is one host and port Nikto scanned, in any of its output
// forms: the address, the Server banner, the headers its findings
// quote, the certificate it reported and the findings themselves.
type niktoTarget struct {
	line     int
	ip, host string
	port     int
	ssl      bool
	banner   string
	at       time.Time
	tls      *TLS
	headers  Headers
	findings []string
}

// Nikto reads Nikto's output: -Format xml (nxmlversion 1.1 and 1.2, one
// or several <scandetails>), json (one host's object or an array of
// them), csv ("Nikto - v2..." then host, ip, port, reference, method,
// uri, message rows) and txt (what Nikto prints, and the -Format txt
// file). Each target (address and port) is one service: an HTTP probe of
// / whose response carries the Server banner (targetbanner, banner, the
// csv's first row, "+ Server:") and the headers the findings quote
// ("Retrieved x-powered-by header: PHP/5.5.9", "Uncommon header
// 'x-generator' found, with contents: Drupal 7"), the certificate Nikto
// reported (<ssl info issuers altnames ciphers>, "+ SSL Info:") as its
// TLS, and every finding (method, URI and message) in detected.info (by
// nikto). A target known by name only (-Format txt writes only "Target
// Host") is counted as skipped with a warning: netintel does not resolve
// names. Not read: the findings as verdicts (OSVDB ids and references are
// kept in their text only), the statistics.
func Nikto(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("nikto")
	br, first, err := peekFirstByte(r, "nikto")
	if err != nil {
		return err
	}
	out := func(t *niktoTarget) error {
		o, skip, err := t.observation(src, opt)
		if opt.settled(t.line, skip, err, bad) {
			if err == nil && strings.Contains(skip, "is a name") {
				opt.warn(t.line, fmt.Sprintf("target %q port %d: not read: %s", clipForError(t.host, 200), t.port, skip))
			}
			return nil
		}
		return emitChecked(t.line, o, emit, bad)
	}
	switch first {
	case '<':
		return niktoXML(br, bad, out)
	case '{', '[':
		return niktoJSON(br, bad, opt.skip, out)
	case 0:
		return nil
	}
	head, _ := br.Peek(4096)
	firstLine, _, _ := strings.Cut(strings.TrimLeft(string(head), "\ufeff \t\r\n"), "\n")
	if strings.HasPrefix(firstLine, `"`) {
		return niktoCSV(br, bad, out)
	}
	return niktoText(br, opt, bad, out)
}

func (t *niktoTarget) observation(src string, opt Options) (Observation, string, error) {
	var ip netip.Addr
	if a, err := netip.ParseAddr(strings.Trim(strings.TrimSpace(t.ip), "[]")); err == nil {
		ip = a.Unmap()
	} else if t.ip != "" {
		return Observation{}, "", fmt.Errorf("ip: not an IP address: %q", clipForError(t.ip, 200))
	} else if a, err := netip.ParseAddr(strings.Trim(strings.TrimSpace(t.host), "[]")); err == nil {
		ip = a.Unmap()
	}
	if !ip.IsValid() {
		if t.host == "" {
			return Observation{}, "", errors.New("target: no IP address")
		}
		return Observation{}, "nikto target whose host is a name (no target IP; netintel does not resolve names)", nil
	}
	if t.port == 0 {
		return Observation{}, "", errors.New("port: missing (no Target Port)")
	}
	if t.port < 1 || t.port > 65535 {
		return Observation{}, "", fmt.Errorf("port: must be 1..65535, got %d", t.port)
	}
	o := Observation{Type: TypeService, IP: ip.String(), Source: src, ObservedAt: opt.when(t.at)}
	name := hostNameOnly(t.host)
	if name != "" {
		o.Hostnames = []string{name}
	}
	s := &Service{Port: t.port, Transport: "tcp"}
	resp := &Response{}
	if b := strings.TrimSpace(t.banner); b != "" {
		resp.Headers = append(resp.Headers, Header{Name: "Server", Value: b})
	}
	resp.Headers = append(resp.Headers, t.headers...)
	p := Probe{Name: "nikto"}
	if t.tls != nil && !t.tls.empty() {
		p.TLS = t.tls
	}
	if len(resp.Headers) > 0 {
		p.Request = &Request{Method: "GET", Path: "/", Host: name}
		p.Response = resp
	}
	if p.Response != nil || p.TLS != nil {
		s.Probes = []Probe{p}
	}
	scheme := ""
	if t.ssl || p.TLS != nil {
		scheme = "https"
	}
	if len(t.findings) > 0 {
		s.Detected = &Detected{By: "nikto", Service: scheme, Info: strings.Join(t.findings, "; ")}
	}
	if len(s.Probes) == 0 && s.Detected == nil {
		return Observation{}, "nikto target with no banner, header, certificate or finding", nil
	}
	o.Service = s
	return o, "", nil
}

var (
	// niktoRetrieved: "Retrieved x-powered-by header: PHP/5.5.9", with
	// 2.5's "/: " before it and "." after it.
	niktoRetrieved = regexp.MustCompile(`^(?:/\S*:\s+)?Retrieved ([\w-]+) header: (.+)$`)
	// niktoUncommon: "Uncommon header 'x-generator' found, with contents: Drupal 7".
	niktoUncommon = regexp.MustCompile(`^(?:/\S*:\s+)?Uncommon header '([\w-]+)' found, with contents: (.+)$`)
)

// finding records one finding: its text in the findings, and the header
// it quotes in the response.
func (t *niktoTarget) finding(method, uri, msg, ref string) {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return
	}
	for _, re := range []*regexp.Regexp{niktoRetrieved, niktoUncommon} {
		if m := re.FindStringSubmatch(msg); m != nil {
			v := strings.TrimSpace(m[2])
			v = strings.TrimSpace(strings.TrimSuffix(v, ".")) // Nikto 2.5 ends its messages with a full stop
			t.headers = append(t.headers, Header{Name: canonicalHeader(m[1]), Value: v})
		}
	}
	var b strings.Builder
	if method != "" {
		b.WriteString(method + " ")
	}
	if uri != "" && !strings.HasPrefix(msg, uri+":") {
		b.WriteString(uri + ": ")
	}
	b.WriteString(msg)
	if ref = strings.TrimSpace(ref); ref != "" && ref != "0" && !strings.Contains(msg, ref) {
		b.WriteString(" (" + ref + ")")
	}
	t.findings = append(t.findings, b.String())
}

// niktoScan is one <scandetails> of Nikto's XML.
type niktoScan struct {
	TargetIP     string `xml:"targetip,attr"`
	TargetHost   string `xml:"targethostname,attr"`
	TargetPort   string `xml:"targetport,attr"`
	TargetBanner string `xml:"targetbanner,attr"`
	StartTime    string `xml:"starttime,attr"`
	SiteName     string `xml:"sitename,attr"`
	SSL          *struct {
		Ciphers  string `xml:"ciphers,attr"`
		Issuers  string `xml:"issuers,attr"`
		Info     string `xml:"info,attr"`
		Altnames string `xml:"altnames,attr"`
	} `xml:"ssl"`
	Items []struct {
		OSVDB       string `xml:"osvdbid,attr"`
		Method      string `xml:"method,attr"`
		Description string `xml:"description"`
		URI         string `xml:"uri"`
		References  string `xml:"references"`
	} `xml:"item"`
}

func niktoXML(r io.Reader, bad func(LineError), out func(*niktoTarget) error) error {
	sawRoot := false
	err := xmlReport(r, "nikto", bad, func(dec *xml.Decoder, se *xml.StartElement, path []string, line int) (bool, error) {
		switch {
		case len(path) == 0:
			if se.Name.Local != "niktoscan" {
				return false, errNotNikto
			}
			sawRoot = true
		case se.Name.Local == "scandetails":
			var sc niktoScan
			if err := dec.DecodeElement(&sc, se); err != nil {
				l, _ := dec.InputPos()
				bad(LineError{l, fmt.Errorf("scandetails: %w", err)})
				return true, errStop
			}
			t := &niktoTarget{line: line, ip: sc.TargetIP, host: sc.TargetHost, banner: sc.TargetBanner, at: scanTime(sc.StartTime),
				ssl: strings.HasPrefix(strings.ToLower(sc.SiteName), "https:")}
			p, err := strconv.Atoi(strings.TrimSpace(sc.TargetPort))
			if err != nil {
				bad(LineError{line, fmt.Errorf("scandetails: targetport: not a port: %q", clipForError(sc.TargetPort, 200))})
				return true, nil
			}
			t.port = p
			if s := sc.SSL; s != nil {
				t.ssl = true
				t.tls = niktoTLS(s.Info, s.Issuers, s.Altnames, s.Ciphers)
			}
			for _, it := range sc.Items {
				ref := ""
				if it.OSVDB != "" && it.OSVDB != "0" {
					ref = "OSVDB-" + it.OSVDB
				}
				t.finding(it.Method, strings.TrimSpace(it.URI), it.Description, ref)
			}
			return true, out(t)
		}
		return false, nil
	})
	return endXMLReport(err, sawRoot, errNotNikto, bad, errNotNikto)
}

var errNotNikto = errors.New("not a Nikto XML report: no <niktoscan> element")

// niktoTLS is the certificate Nikto reported: subject and issuer in
// OpenSSL's one-line form, the SANs comma-separated, the cipher.
func niktoTLS(subject, issuer, altnames, cipher string) *TLS {
	t := &TLS{Cipher: strings.TrimSpace(cipher)}
	if s := strings.TrimSpace(subject); s != "" {
		t.Subject = ParseDN(s)
	}
	if s := strings.TrimSpace(issuer); s != "" {
		t.Issuer = ParseDN(s)
	}
	t.SANs = splitList(altnames)
	if t.empty() {
		return nil
	}
	return t
}

// niktoHost is one host's object of Nikto's JSON.
type niktoHost struct {
	Host   string `json:"host"`
	IP     string `json:"ip"`
	Port   any    `json:"port"`
	Banner string `json:"banner"`
	Vulns  []struct {
		ID         string `json:"id"`
		OSVDB      any    `json:"OSVDB"`
		Method     string `json:"method"`
		URL        string `json:"url"`
		Msg        string `json:"msg"`
		References string `json:"references"`
	} `json:"vulnerabilities"`
}

func niktoJSON(r io.Reader, bad func(LineError), skip func(int, string), out func(*niktoTarget) error) error {
	data, err := readJSONFeed(r, "nikto")
	if err != nil {
		return err
	}
	return jsonValues(data, bad, func(n int, v json.RawMessage, _ bool) error {
		var h niktoHost
		if err := scanUnmarshal(v, &h); err != nil {
			bad(LineError{n, fmt.Errorf("json: %w", err)})
			return nil
		}
		if h.IP == "" && h.Host == "" {
			// Nikto's record of a target it never reached: no address, and
			// its one finding the error ("ERROR: Cannot resolve hostname
			// ..."): counted as skipped with Nikto's words, as sslyze's and
			// testssl's could-not-connect records are
			if len(h.Vulns) > 0 && strings.HasPrefix(strings.TrimSpace(h.Vulns[0].Msg), "ERROR:") {
				skip(n, "nikto did not scan the target: "+clipForError(strings.TrimSpace(h.Vulns[0].Msg), 200))
				return nil
			}
			bad(LineError{n, errors.New(`not a Nikto host: want "ip" or "host"`)})
			return nil
		}
		port, err := scanPort(h.Port)
		if err != nil {
			bad(LineError{n, err})
			return nil
		}
		t := &niktoTarget{line: n, ip: h.IP, host: h.Host, port: port, banner: h.Banner}
		for _, x := range h.Vulns {
			ref := ""
			if s := strings.Join(stringsOf(x.OSVDB), ""); s != "" && s != "0" {
				ref = "OSVDB-" + s
			}
			t.finding(x.Method, strings.TrimSpace(x.URL), x.Msg, ref)
		}
		return out(t)
	})
}

func niktoCSV(r io.Reader, bad func(LineError), out func(*niktoTarget) error) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord, cr.LazyQuotes, cr.ReuseRecord = -1, true, true
	var order []string
	targets := map[string]*niktoTarget{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				bad(LineError{pe.Line, fmt.Errorf("csv: %w", pe.Err)})
				continue
			}
			return fmt.Errorf("read nikto: %w", err)
		}
		switch {
		case len(rec) == 1 && strings.HasPrefix(strings.TrimSpace(rec[0]), "Nikto"):
			continue // "Nikto - v2.1.6/2.1.5"
		case len(rec) == 1 && strings.TrimSpace(rec[0]) == "":
			continue
		case len(rec) < 7:
			bad(LineError{line, fmt.Errorf("want 7 columns (host, ip, port, reference, method, uri, message), got %d", len(rec))})
			continue
		case strings.EqualFold(strings.TrimSpace(rec[1]), "ip") || strings.EqualFold(strings.TrimSpace(rec[1]), "host ip"):
			continue // a header row
		}
		host, ip, portS, ref, method, uri, msg := rec[0], rec[1], rec[2], rec[3], rec[4], rec[5], rec[6]
		port, err := strconv.Atoi(strings.TrimSpace(portS))
		if err != nil || port < 1 || port > 65535 {
			bad(LineError{line, fmt.Errorf("port: must be 1..65535, got %q", clipForError(portS, 200))})
			continue
		}
		key := ip + "|" + host + "|" + strconv.Itoa(port)
		t, ok := targets[key]
		if !ok {
			t = &niktoTarget{line: line, ip: ip, host: host, port: port}
			targets[key] = t
			order = append(order, key)
		}
		if strings.TrimSpace(ref) == "" && strings.TrimSpace(method) == "" && strings.TrimSpace(uri) == "" {
			// the target's first row: its Server banner, or nothing
			if t.banner == "" {
				t.banner = strings.TrimSpace(msg)
			}
			continue
		}
		if strings.HasPrefix(ref, "OSVDB-0") && len(ref) == len("OSVDB-0") {
			ref = ""
		}
		if strings.HasPrefix(ref, "http") {
			ref = ""
		}
		t.finding(method, strings.TrimSpace(uri), msg, ref)
	}
	for _, k := range order {
		if err := out(targets[k]); err != nil {
			return err
		}
	}
	return nil
}

// niktoGMT reads the zone Nikto prints after a time: "(GMT1)", "(GMT-5)".
var niktoGMT = regexp.MustCompile(`\(GMT([+-]?\d{1,2})?\)`)

// niktoTextTime reads "2021-06-14 09:07:03 (GMT1)" (the local time and
// its offset from UTC in hours).
func niktoTextTime(s string) time.Time {
	s = strings.TrimSpace(s)
	if len(s) < 19 {
		return time.Time{}
	}
	t, err := time.Parse("2006-01-02 15:04:05", s[:19])
	if err != nil {
		return time.Time{}
	}
	if m := niktoGMT.FindStringSubmatch(s); m != nil && m[1] != "" {
		if h, err := strconv.Atoi(m[1]); err == nil && h >= -14 && h <= 14 {
			t = t.Add(-time.Duration(h) * time.Hour)
		}
	}
	return t
}

// niktoStats are the txt lines that report on the scan, not the server.
var niktoStats = regexp.MustCompile(`^(\d+ (requests|items checked): .* reported on remote host|\d+ host\(s\) tested|End Time:|ERROR: |Scan terminated:)`)

func niktoText(r io.Reader, opt Options, bad func(LineError), out func(*niktoTarget) error) error {
	var t *niktoTarget
	inSSL := false
	flush := func() error {
		if t == nil {
			return nil
		}
		cur := t
		t = nil
		return out(cur)
	}
	err := opt.lines(r, "nikto", bad, func(n int, b []byte) error {
		raw := strings.TrimRight(string(b), " \t")
		line := strings.TrimSpace(raw)
		if inSSL && line != "" && (raw[0] == ' ' || raw[0] == '\t') && t != nil {
			k, v, _ := strings.Cut(line, ":")
			t.sslField(strings.TrimSpace(k), strings.TrimSpace(v))
			return nil
		}
		inSSL = false
		switch {
		case line == "", strings.HasPrefix(line, "---"), strings.HasPrefix(line, "- Nikto"), strings.HasPrefix(line, "- ***"):
			return nil
		case !strings.HasPrefix(line, "+"):
			bad(LineError{n, fmt.Errorf("not a Nikto line: want \"+ \" or \"- \" at its start, got %q", clipForError(line, 200))})
			return nil
		}
		body := strings.TrimSpace(line[1:])
		key, val, hasKey := strings.Cut(body, ":")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if hasKey {
			switch key {
			case "Target IP", "Target Host":
				if err := flush(); err != nil {
					return err
				}
				t = &niktoTarget{line: n}
				if key == "Target IP" {
					t.ip = val
				} else {
					t.host = val
				}
				return nil
			case "Target Hostname":
				if t != nil {
					t.host = val
				}
				return nil
			case "Target Port":
				if t == nil {
					bad(LineError{n, errors.New(`"+ Target Port" before "+ Target IP"`)})
					return nil
				}
				p, err := strconv.Atoi(val)
				if err != nil {
					bad(LineError{n, fmt.Errorf(`"+ Target Port": not a port: %q`, clipForError(val, 200))})
					return nil
				}
				t.port = p
				return nil
			case "Start Time":
				if t != nil {
					t.at = niktoTextTime(val)
				}
				return nil
			case "SSL Info":
				if t != nil {
					t.ssl, inSSL = true, true
					k, v, _ := strings.Cut(val, ":")
					t.sslField(strings.TrimSpace(k), strings.TrimSpace(v))
				}
				return nil
			case "Server":
				if t != nil && !strings.EqualFold(val, "No banner retrieved") {
					t.banner = val
				}
				return nil
			case "Platform", "Message", "Virtual Host":
				if t != nil {
					t.findings = append(t.findings, body)
				}
				return nil
			}
		}
		if niktoStats.MatchString(body) {
			return nil
		}
		if t == nil {
			bad(LineError{n, fmt.Errorf("finding before \"+ Target IP\": %q", clipForError(body, 200))})
			return nil
		}
		// -Format txt writes the method first ("+ GET The anti-clickjacking ...").
		method := ""
		if m, rest, ok := strings.Cut(body, " "); ok && httpxMethod.MatchString(m) {
			method, body = m, rest
		}
		t.finding(method, "", body, "")
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// sslField reads one field of the txt's SSL Info block.
func (t *niktoTarget) sslField(k, v string) {
	if t.tls == nil {
		t.tls = &TLS{}
	}
	switch k {
	case "Subject":
		t.tls.Subject = ParseDN(v)
	case "Issuer":
		t.tls.Issuer = ParseDN(v)
	case "Ciphers", "Cipher":
		t.tls.Cipher = v
	case "Altnames":
		t.tls.SANs = splitList(v)
	}
}
