package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// nucleiResult is one result of ProjectDiscovery nuclei (its
// output.ResultEvent): a line of -jsonl (-json before v3), or an element
// of -json-export's array. nuclei v2.6.0 (2022-02) renamed templateID,
// matcher_name, extractor_name, matched and extracted_results to
// template-id, matcher-name, extractor-name, matched-at and
// extracted-results; v3.2 (2024-03) added port, scheme and url; v2.0 to
// v2.2 (2020) named the template's id template, with its info members
// (name, severity) at the top level and no ip. Every spelling is read.
type nucleiResult struct {
	TemplateID    string      `json:"template-id"`
	OldTemplateID string      `json:"templateID"`
	Template      string      `json:"template"`
	Info          *nucleiInfo `json:"info"`

	MatcherName      string   `json:"matcher-name"`
	OldMatcherName   string   `json:"matcher_name"`
	ExtractorName    string   `json:"extractor-name"`
	OldExtractorName string   `json:"extractor_name"`
	Extracted        []string `json:"extracted-results"`
	OldExtracted     []string `json:"extracted_results"`
	MatchedAt        string   `json:"matched-at"`
	OldMatched       string   `json:"matched"`
	MatcherStatus    *bool    `json:"matcher-status"`

	Type      string `json:"type"`
	Host      string `json:"host"`
	Port      any    `json:"port"`
	Scheme    string `json:"scheme"`
	URL       string `json:"url"`
	IP        string `json:"ip"`
	Timestamp string `json:"timestamp"`
	Request   string `json:"request"`
	Response  string `json:"response"`
	CURL      string `json:"curl-command"`

	// nuclei v2.0 to v2.2 (2020) wrote the template's id as template and
	// its info members at the top level.
	Name     string `json:"name"`
	Severity string `json:"severity"`
	Tags     any    `json:"tags"`
}

// nucleiInfo is the template's info block as nuclei copies it into each
// result. tags and author are a list, or one comma-separated string.
type nucleiInfo struct {
	Name           string         `json:"name"`
	Tags           any            `json:"tags"`
	Severity       string         `json:"severity"`
	Metadata       map[string]any `json:"metadata"`
	Classification *struct {
		CPE   string `json:"cpe"`
		CVEID any    `json:"cve-id"`
	} `json:"classification"`
}

// Nuclei reads ProjectDiscovery nuclei's results: -jsonl lines (-json
// before v3, -jsonl-export), -json-export's JSON array, or the plain text
// nuclei prints and writes with -o ("[template-id:matcher] [http] [info]
// https://192.0.2.1/path ["extracted"]", with or without colour codes and
// time stamps; each line is told by its first character, so JSON and text
// lines may be mixed). Each result of an HTTP, network (tcp), javascript
// or SSL template is one service observation: the raw response and
// request as probes (JSON only; the text has none), the template as
// detected (by nuclei), its one extracted result as the detected version
// when it carries one. Results of DNS, file, code, whois, websocket and
// workflow templates name no service of the address and are counted as
// skipped, as are text results whose target has no port (a javascript
// template's bare address) and nuclei's banner and log lines
// (docs/ingest-enrich.md says what is kept).
func Nuclei(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("nuclei")
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(512)
	if t := bytes.TrimLeft(head, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '[' {
		if u := bytes.TrimLeft(t[1:], " \t\r\n"); len(u) == 0 || u[0] == '{' || u[0] == ']' {
			return nucleiArray(br, src, opt, emit, bad)
		}
	}
	return opt.nonBlankLines(br, "nuclei", bad, func(n int, line []byte) error {
		if t := bytes.TrimPrefix(line, []byte("\ufeff")); len(t) > 0 && t[0] == '{' {
			return nucleiRecord(n, t, src, opt, emit, bad)
		}
		x, skip, err := nucleiTextLine(string(line))
		if opt.settled(n, skip, err, bad) || x.TemplateID == "" {
			return nil
		}
		return nucleiResultRecord(n, &x, true, src, opt, emit, bad)
	})
}

// nucleiArray reads -json-export's array (one line, as nuclei writes it,
// or pretty-printed): a malformed element is reported with its line and
// its place in the array; a syntax error ends the array there.
func nucleiArray(r io.Reader, src string, opt Options, emit Emit, bad func(LineError)) error {
	data, err := readJSONFeed(r, "nuclei")
	if err != nil {
		return err
	}
	lineAt := lineCounter(data, 1)
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		bad(LineError{1, fmt.Errorf("json: %w", err)})
		return nil
	}
	for i := 1; dec.More(); i++ {
		start := dec.InputOffset()
		for start < int64(len(data)) && strings.ContainsRune(" \t\r\n,", rune(data[start])) {
			start++
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			bad(LineError{lineAt(start), fmt.Errorf("element %d: json: %w", i, err)})
			return nil
		}
		line := lineAt(start)
		if err := nucleiRecord(line, raw, src, opt, emit, func(le LineError) {
			bad(LineError{le.Line, fmt.Errorf("element %d: %w", i, le.Err)})
		}); err != nil {
			return err
		}
	}
	return nil
}

func nucleiRecord(n int, data []byte, src string, opt Options, emit Emit, bad func(LineError)) error {
	var x nucleiResult
	if err := scanUnmarshal(data, &x); err != nil {
		bad(LineError{n, fmt.Errorf("json: %w", err)})
		return nil
	}
	return nucleiResultRecord(n, &x, false, src, opt, emit, bad)
}

// nucleiResultRecord turns one result, read from JSON or from a text line
// (text), into its observation.
func nucleiResultRecord(n int, x *nucleiResult, text bool, src string, opt Options, emit Emit, bad func(LineError)) error {
	id := firstNonEmpty(x.TemplateID, x.OldTemplateID)
	if id == "" && x.Info == nil && x.Severity != "" && !strings.ContainsAny(x.Template, "/.") {
		id = x.Template // nuclei v2.0 to v2.2
		x.Info = &nucleiInfo{Name: x.Name, Severity: x.Severity, Tags: x.Tags}
	}
	if id == "" || x.Info == nil {
		bad(LineError{n, errors.New(`not a nuclei result: want "template-id" and "info"`)})
		return nil
	}
	if x.MatcherStatus != nil && !*x.MatcherStatus {
		opt.skip(n, "nuclei template did not match (matcher-status false)")
		return nil
	}
	typ := strings.ToLower(x.Type)
	switch typ {
	case "http", "headless", "tcp", "network", "javascript", "ssl":
	case "":
		bad(LineError{n, errors.New(`type: missing (the template's protocol)`)})
		return nil
	default:
		opt.skip(n, "nuclei "+typ+" result (no service of the address)")
		return nil
	}
	if text {
		if _, err := netip.ParseAddr(strings.Trim(hostOf(x.MatchedAt), "[]")); err != nil {
			opt.skip(n, "nuclei text result whose target is a name (the text carries no ip; netintel does not resolve names)")
			opt.warn(n, fmt.Sprintf("%s result on %q: not read: the target is a name and nuclei's text carries no ip", id, clipForError(x.MatchedAt, 200)))
			return nil
		}
	}
	o, err := x.observation(id, typ, src, opt)
	if text && errors.Is(err, errNucleiNoPort) {
		opt.skip(n, "nuclei text result without a port (nuclei printed the bare address)")
		return nil
	}
	return emitBuilt(n, o, err, emit, bad)
}

// errNucleiNoPort is a result that names no port.
var errNucleiNoPort = errors.New("port: missing (no port, and none in host or matched-at)")

func (x *nucleiResult) observation(id, typ, src string, opt Options) (Observation, error) {
	matched := firstNonEmpty(x.MatchedAt, x.OldMatched)
	// host is a URL for HTTP templates ("https://example.com/health";
	// v3.2 on "example.com:443" with url and scheme apart), HOST:PORT for
	// the others.
	var hostURL *url.URL
	for _, s := range []string{x.URL, x.Host, matched} {
		if u, err := url.Parse(s); err == nil && u.Host != "" && u.Scheme != "" {
			hostURL = u
			break
		}
	}
	hostName := hostOf(x.Host)
	if hostName == "" && hostURL != nil {
		hostName = hostURL.Hostname()
	}
	ip, name, err := scanAddress(x.IP, hostName)
	if err != nil {
		return Observation{}, err
	}
	scheme := strings.ToLower(x.Scheme)
	if scheme == "" && hostURL != nil {
		scheme = strings.ToLower(hostURL.Scheme)
	}
	port, err := x.port(scheme, typ)
	if err != nil {
		return Observation{}, err
	}
	o := Observation{Type: TypeService, IP: ip, Source: src, ObservedAt: opt.when(scanTime(x.Timestamp))}
	if name != "" {
		o.Hostnames = []string{name}
	}
	s := &Service{Port: port, Transport: "tcp"}
	switch typ {
	case "http", "headless":
		if p, ok := x.httpProbe(matched, name); ok {
			s.Probes = []Probe{p}
		}
	case "ssl":
		if t := x.tls(id); t != nil {
			s.Probes = []Probe{{Name: "nuclei:" + id, TLS: t}}
		}
		scheme = "tls"
	default:
		if x.Response != "" || x.Request != "" {
			b := &Banner{}
			if x.Request != "" {
				b.Sent = BytesBody([]byte(x.Request))
			}
			if x.Response != "" {
				b.Received = BytesBody([]byte(x.Response))
			}
			s.Probes = []Probe{{Name: "nuclei:" + id, Banner: b}}
		}
		scheme = ""
	}
	s.Detected = x.detected(id, scheme)
	o.Service = s
	return o, nil
}

// port reads the port member (v3.2 on), else the port of host or url,
// else of matched-at, else the scheme's default (443 for SSL templates).
func (x *nucleiResult) port(scheme, typ string) (int, error) {
	if x.Port != nil && x.Port != "" {
		return scanPort(x.Port)
	}
	for _, s := range []string{x.Host, x.URL, firstNonEmpty(x.MatchedAt, x.OldMatched)} {
		if _, p, err := netSplitHostPort(hostPortOf(s)); err == nil {
			return scanPort(p)
		}
	}
	switch {
	case scheme == "https" || typ == "ssl":
		return 443, nil
	case scheme == "http":
		return 80, nil
	}
	return 0, errNucleiNoPort
}

// hostPortOf returns the HOST:PORT part of a URL or of HOST:PORT/PATH.
func hostPortOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	return s
}

// httpProbe builds the HTTP exchange: the raw request (method, path,
// headers in order, Host) and response (status line, headers in order,
// body); without the raw request (-omit-raw) it is read from
// curl-command, else it is a GET of matched-at's path. A result without a
// response makes no probe: a request alone is not the server's answer.
func (x *nucleiResult) httpProbe(matched, host string) (Probe, bool) {
	var p Probe
	if q, ok := parseHTTPRequest([]byte(x.Request)); ok {
		p.Request = q
	} else if q := curlRequest(x.CURL); q != nil {
		p.Request = q
	} else if matched != "" {
		p.Request = &Request{Method: "GET", Path: pathOf(matched)}
	}
	if p.Request != nil && p.Request.Host == "" {
		p.Request.Host = host
	}
	if resp, ok := parseHTTPResponse([]byte(x.Response)); ok {
		p.Response = resp
	}
	return p, p.Response != nil
}

// curlRequest reads the method and URL of nuclei's curl-command
// (curl -X 'GET', then -d, -H 'Accept: */*' ..., then the URL in
// single quotes), and its -H headers in order.
func curlRequest(cmd string) *Request {
	cmd = strings.TrimSpace(cmd)
	if !strings.HasPrefix(cmd, "curl ") {
		return nil
	}
	args := shellWords(cmd[5:])
	q := &Request{Method: "GET"}
	target := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case (a == "-X" || a == "--request") && i+1 < len(args):
			q.Method = strings.ToUpper(args[i+1])
			i++
		case (a == "-H" || a == "--header") && i+1 < len(args):
			if h, ok := headerLine([]byte(args[i+1])); ok {
				q.Headers = append(q.Headers, h)
			}
			i++
		case (a == "-d" || a == "--data" || a == "--data-binary" || a == "-b" || a == "-A" || a == "-u") && i+1 < len(args):
			i++
		case strings.HasPrefix(a, "-"):
		default:
			target = a
		}
	}
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return nil
	}
	q.Path = pathOf(target)
	q.Host = u.Hostname()
	return q
}

// shellWords splits a command line as a POSIX shell would for the
// quoting curl-command uses: single quotes, double quotes, backslashes.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			if c == '"' {
				quote = 0
			} else if c == '\\' && i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// tls reads what the SSL templates that report certificate fields
// extracted (nuclei's output carries no handshake of SSL templates):
// ssl-dns-names the SANs, ssl-issuer the issuer's organizations,
// tls-version the version, self-signed-ssl a self-signed certificate.
func (x *nucleiResult) tls(id string) *TLS {
	ex := firstList(x.Extracted, x.OldExtracted)
	t := &TLS{}
	switch id {
	case "ssl-dns-names":
		t.SANs = ex
	case "ssl-issuer":
		if len(ex) > 0 {
			t.Issuer = &DN{O: ex}
		}
	case "tls-version":
		if len(ex) > 0 {
			t.Version = tlsVersionText(ex[0])
		}
	case "self-signed-ssl":
		t.SelfSigned = true
	}
	if t.empty() {
		return nil
	}
	return t
}

// detected is the template's identification: "nuclei:" and its id as
// product (the 70-detected rules name vendors by the ids of panel
// templates; the prefix keeps the rules that read nmap's and Shodan's
// product names from reading an id such as sonicwall-email-security-detect
// as one), the template's CPE, and its name, matcher, extracted results,
// tags and severity as info.
func (x *nucleiResult) detected(id, service string) *Detected {
	d := &Detected{By: "nuclei", Service: service, Product: "nuclei:" + id, Version: extractedVersion(firstList(x.Extracted, x.OldExtracted))}
	var info []string
	add := func(k, v string) {
		if v = strings.TrimSpace(v); v != "" {
			info = append(info, k+": "+v)
		}
	}
	add("name", x.Info.Name)
	add("matcher", firstNonEmpty(x.MatcherName, x.OldMatcherName))
	add("extractor", firstNonEmpty(x.ExtractorName, x.OldExtractorName))
	add("extracted", strings.Join(firstList(x.Extracted, x.OldExtracted), ", "))
	for _, k := range []string{"vendor", "product"} {
		if v, ok := x.Info.Metadata[k].(string); ok {
			add(k, v)
		}
	}
	add("tags", strings.Join(stringsOf(x.Info.Tags), ","))
	add("severity", x.Info.Severity)
	d.Info = strings.Join(info, "; ")
	// A vulnerability template's CPE names the product the flaw is in, not
	// what answered: its matchers test for the flaw (often loosely: a
	// CVE-2020-2034 template matched a CDN-fronted site, nuclei-templates
	// #535), so only other templates' CPEs identify the service.
	if c := x.Info.Classification; c != nil && !hasCVE(c.CVEID) {
		for _, cpe := range strings.Split(c.CPE, ",") {
			if cpe = strings.TrimSpace(cpe); strings.HasPrefix(cpe, "cpe:") {
				d.CPE = append(d.CPE, cpe)
			}
		}
	}
	return d
}

// hasCVE reports whether a template's classification names a CVE (one id
// or a list).
func hasCVE(v any) bool {
	return len(stringsOf(v)) > 0
}

// stringsOf reads nuclei's StringSlice: a list, or one comma-separated
// string.
func stringsOf(v any) []string {
	switch x := v.(type) {
	case string:
		var out []string
		for _, s := range strings.Split(x, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	case float64:
		return []string{strconv.FormatFloat(x, 'f', -1, 64)}
	}
	return nil
}
