package ingest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// harEntry is one entry of an HTTP Archive (HAR 1.2) log, with the
// members browsers' DevTools (Chrome, Firefox, Safari), proxies (Burp,
// ZAP, Charles, mitmproxy, Fiddler) and clients (Insomnia) write.
// _securityDetails is Chrome's record of the TLS connection.
type harEntry struct {
	StartedDateTime string `json:"startedDateTime"`
	ServerIPAddress string `json:"serverIPAddress"`
	Request         *struct {
		Method      string     `json:"method"`
		URL         string     `json:"url"`
		HTTPVersion string     `json:"httpVersion"`
		Headers     []harNV    `json:"headers"`
		PostData    *harBodyIn `json:"postData"`
	} `json:"request"`
	Response *struct {
		Status      any        `json:"status"`
		StatusText  string     `json:"statusText"`
		HTTPVersion string     `json:"httpVersion"`
		Headers     []harNV    `json:"headers"`
		Content     *harBodyIn `json:"content"`
		Error       string     `json:"_error"`
	} `json:"response"`
	SecurityDetails *struct {
		Protocol    string   `json:"protocol"`
		Cipher      string   `json:"cipher"`
		SubjectName string   `json:"subjectName"`
		SANList     []string `json:"sanList"`
		Issuer      string   `json:"issuer"`
		ValidFrom   float64  `json:"validFrom"`
		ValidTo     float64  `json:"validTo"`
	} `json:"_securityDetails"`
}

type harNV struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// harBodyIn is a request's postData or a response's content: the text,
// base64 when encoding says so (content only, in HAR 1.2), and the full
// size of the body.
type harBodyIn struct {
	Size     *int64 `json:"size"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
	Encoding string `json:"encoding"`
}

// HAR reads an HTTP Archive (HAR 1.2): the log.entries of a DevTools
// "Save all as HAR", or of Burp's, ZAP's, Charles's, mitmproxy's or
// Fiddler's HAR export. Each entry is an HTTP probe of the server it
// reached: the request (method, path and query, headers in order without
// the client's credentials, no body: withoutCredentials),
// the response (status, reason, protocol, headers in order with repeated
// names kept, the body from content.text, base64 when content.encoding
// says so, its full size from content.size) and, where Chrome recorded it,
// the connection's TLS (_securityDetails: protocol, cipher, subject and
// issuer names, SANs, validity). The address is the entry's
// serverIPAddress, else the URL's host when it is an IP literal; an entry
// with neither is not read (netintel does not resolve names): it is
// counted as skipped with a warning that names it. The entries of one
// address and port are one service (its first MaxProbes probes), observed
// at its latest entry's startedDateTime. An entry without a response
// (status 0: blocked, failed, cancelled) is counted as skipped.
func HAR(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("har")
	data, err := readJSONFeed(r, "har")
	if err != nil {
		return err
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	g := newServiceGroups()
	if err := harEntries(data, bad, func(n, i int, raw json.RawMessage) {
		var e harEntry
		if err := scanUnmarshal(raw, &e); err != nil {
			bad(LineError{n, fmt.Errorf("entry %d: json: %w", i, err)})
			return
		}
		e.read(n, i, opt, g, bad)
	}); err != nil {
		return err
	}
	return g.emit(src, opt, emit, bad)
}

// harEntries walks the HAR document to log.entries and calls each with
// the line and place (from 1) of every entry. A document that is not a
// HAR log is one malformed record at line 1; a syntax error inside the
// entries ends them there (the entries before it are read).
func harEntries(data []byte, bad func(LineError), each func(line, i int, raw json.RawMessage)) error {
	lineAt := lineCounter(data, 1)
	dec := json.NewDecoder(bytes.NewReader(data))
	notHAR := errors.New(`not a HAR file: want {"log": {"entries": [...]}}`)
	// enter reads '{' and the members up to key, skipping the others.
	enter := func(key string) (bool, error) {
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return false, notHAR
		}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return false, err
			}
			if k, _ := kt.(string); k == key {
				return true, nil
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return false, err
			}
		}
		return false, nil
	}
	for _, key := range []string{"log", "entries"} {
		found, err := enter(key)
		if err != nil || !found {
			if err == nil {
				err = notHAR
			}
			bad(LineError{lineAt(dec.InputOffset()), fmt.Errorf("har: %w", err)})
			return nil
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		bad(LineError{lineAt(dec.InputOffset()), errors.New("har: log.entries: not an array")})
		return nil
	}
	for i := 1; dec.More(); i++ {
		start := int64(len(data) - len(bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n,")))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			bad(LineError{lineAt(start), fmt.Errorf("entry %d: json: %w", i, err)})
			return nil
		}
		each(lineAt(start), i, raw)
	}
	return nil
}

func (e *harEntry) read(n, i int, opt Options, g *serviceGroups, bad func(LineError)) {
	if e.Request == nil || e.Response == nil {
		bad(LineError{n, fmt.Errorf("entry %d: want request and response", i)})
		return
	}
	u, err := url.Parse(strings.TrimSpace(e.Request.URL))
	if err != nil || u.Host == "" {
		bad(LineError{n, fmt.Errorf("entry %d: request.url: not an absolute URL: %q", i, clipForError(e.Request.URL, 200))})
		return
	}
	name := fmt.Sprintf("entry %d (%s %s)", i, e.Request.Method, clipForError(e.Request.URL, 200))
	status, err := harStatus(e.Response.Status)
	if err != nil {
		bad(LineError{n, fmt.Errorf("%s: response.status: %w", name, err)})
		return
	}
	if status == 0 {
		opt.skip(n, "har: entry without a response (status 0: blocked, failed or cancelled)")
		return
	}
	ip, err := harAddress(e.ServerIPAddress, u.Hostname())
	if err != nil {
		bad(LineError{n, fmt.Errorf("%s: %w", name, err)})
		return
	}
	if !ip.IsValid() {
		opt.skip(n, "har: entry whose server is known by name only (no serverIPAddress; netintel does not resolve names)")
		opt.warn(n, name+": not read: no serverIPAddress and the URL's host is a name (netintel does not resolve names)")
		return
	}
	scheme := strings.ToLower(u.Scheme)
	port, err := harPort(u, scheme)
	if err != nil {
		bad(LineError{n, fmt.Errorf("%s: request.url: %w", name, err)})
		return
	}
	host := ""
	if _, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err != nil {
		host = strings.ToLower(u.Hostname())
	}
	q := &Request{Method: strings.ToUpper(strings.TrimSpace(e.Request.Method)), Path: pathOf(u.String()), Host: host, Headers: harHeaders(e.Request.Headers)}
	if q.Method == "" {
		q.Method = "GET"
	}
	withoutCredentials(q)
	resp := &Response{Status: status, Reason: e.Response.StatusText, Protocol: harProtocol(e.Response.HTTPVersion), Headers: harHeaders(e.Response.Headers)}
	if c := e.Response.Content; c != nil {
		b, err := c.body()
		if err != nil {
			bad(LineError{n, fmt.Errorf("%s: response.content: %w", name, err)})
			return
		}
		resp.Body = b
	}
	p := Probe{Request: q, Response: resp}
	if scheme == "https" || scheme == "wss" {
		p.TLS = e.tls()
	}
	g.add(n, ip.String(), port, hostNames(host), scanTime(e.StartedDateTime), []Probe{p}, nil)
}

// harStatus reads the status: a number (Fiddler and some tools write a
// string); absent is 0.
func harStatus(v any) (int, error) {
	var s string
	switch x := v.(type) {
	case nil:
		return 0, nil
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		s = strings.TrimSpace(x)
	default:
		return 0, fmt.Errorf("not a status code: %v", v)
	}
	st, err := strconv.Atoi(s)
	if err != nil || st < 0 || st > 999 {
		return 0, fmt.Errorf("not a status code: %q", clipForError(s, 200))
	}
	return st, nil
}

// harAddress is the entry's server address: serverIPAddress (Chrome
// writes IPv6 in brackets), else the URL's host when it is an address;
// the zero Addr when neither is one. A serverIPAddress that is neither
// empty nor an address is an error.
func harAddress(server, host string) (netip.Addr, error) {
	if s := strings.Trim(strings.TrimSpace(server), "[]"); s != "" {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("serverIPAddress: not an IP address: %q", clipForError(server, 200))
		}
		return a.Unmap().WithZone(""), nil
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return a.Unmap().WithZone(""), nil
	}
	return netip.Addr{}, nil
}

// harPort is the URL's port, else its scheme's default.
func harPort(u *url.URL, scheme string) (int, error) {
	if p := u.Port(); p != "" {
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 || v > 65535 {
			return 0, fmt.Errorf("port: must be 1..65535, got %q", p)
		}
		return v, nil
	}
	switch scheme {
	case "https", "wss":
		return 443, nil
	case "http", "ws":
		return 80, nil
	}
	return 0, fmt.Errorf("no port and scheme %q has no default", scheme)
}

// harHeaders keeps the headers in order, repeated names and all.
func harHeaders(hs []harNV) Headers {
	out := make(Headers, 0, len(hs))
	for _, h := range hs {
		if h.Name == "" {
			continue
		}
		out = append(out, Header{Name: h.Name, Value: h.Value})
	}
	return out
}

// harProtocol writes the entry's httpVersion as a status line does
// ("HTTP/1.1", "HTTP/2"; Chrome writes "h2" and "http/2.0").
func harProtocol(v string) string {
	v = strings.TrimSpace(v)
	switch strings.ToLower(v) {
	case "", "unknown":
		return ""
	case "h2", "http/2.0", "http/2":
		return "HTTP/2"
	case "h3", "http/3", "http/3.0":
		return "HTTP/3"
	}
	if strings.HasPrefix(strings.ToUpper(v), "HTTP/") {
		return strings.ToUpper(v)
	}
	return ""
}

// body reads the text (base64 when encoding says so) and the full size:
// a text shorter than size was cut by the tool (or left out: Firefox
// writes no text of a binary body), and is flagged truncated.
func (b *harBodyIn) body() (*Body, error) {
	var data []byte
	switch strings.ToLower(strings.TrimSpace(b.Encoding)) {
	case "":
		data = []byte(b.Text)
	case "base64":
		d, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b.Text))
		if err != nil {
			return nil, errors.New("text: not base64 (encoding is base64)")
		}
		data = d
	default:
		return nil, fmt.Errorf("encoding: want base64 or none, got %q", clipForError(b.Encoding, 200))
	}
	size := int64(-1)
	if b.Size != nil {
		size = *b.Size
	}
	if len(data) == 0 {
		if size > 0 {
			return &Body{Length: size, Truncated: true}, nil
		}
		return nil, nil
	}
	out := BytesBody(data)
	if size > int64(len(data)) {
		out.SHA256, out.Length, out.Truncated = "", size, true
	}
	return out, nil
}

// tls is Chrome's _securityDetails: the protocol ("TLS 1.3"), cipher,
// the leaf's subject and issuer common names, SANs and validity (Unix
// seconds).
func (e *harEntry) tls() *TLS {
	d := e.SecurityDetails
	if d == nil {
		return nil
	}
	t := &TLS{Version: tlsVersionText(d.Protocol), Cipher: d.Cipher, SANs: slices.Clone(d.SANList)}
	if d.SubjectName != "" {
		t.Subject = &DN{CN: d.SubjectName}
	}
	if d.Issuer != "" {
		t.Issuer = &DN{CN: d.Issuer}
	}
	if d.ValidFrom > 0 {
		t.NotBefore = time.Unix(int64(d.ValidFrom), 0).UTC().Format(time.RFC3339)
	}
	if d.ValidTo > 0 {
		t.NotAfter = time.Unix(int64(d.ValidTo), 0).UTC().Format(time.RFC3339)
	}
	if t.empty() {
		return nil
	}
	return t
}

// serviceGroups collects the probes that records read apart (a HAR's
// entries, Burp's items, a ZAP alert's instances, Nikto's findings) give
// of one address, port and transport into one service observation, in
// the order first seen: the enrich state keeps one fingerprint per
// service, so one observation per record would let the last record's
// evidence displace the others'.
type serviceGroups struct {
	order []string
	m     map[string]*serviceGroup
}

type serviceGroup struct {
	line  int
	o     Observation
	at    time.Time
	extra int // probes beyond MaxProbes, not kept
	info  []string
}

func newServiceGroups() *serviceGroups { return &serviceGroups{m: map[string]*serviceGroup{}} }

// add files probes (and what the scanner detected, merged into one
// Detected whose Info joins each record's) under ip and port; at is the
// record's time (the service is observed at the latest).
func (g *serviceGroups) add(line int, ip string, port int, names []string, at time.Time, probes []Probe, det *Detected) {
	key := ip + "|" + strconv.Itoa(port)
	s, ok := g.m[key]
	if !ok {
		s = &serviceGroup{line: line, o: Observation{Type: TypeService, IP: ip, Service: &Service{Port: port, Transport: "tcp"}}}
		g.m[key] = s
		g.order = append(g.order, key)
	}
	if at.After(s.at) {
		s.at = at
	}
	for _, n := range names {
		if !slices.Contains(s.o.Hostnames, n) && len(s.o.Hostnames) < MaxHostnames {
			s.o.Hostnames = append(s.o.Hostnames, n)
		}
	}
	for _, p := range probes {
		if len(s.o.Service.Probes) >= MaxProbes {
			s.extra++
			continue
		}
		s.o.Service.Probes = append(s.o.Service.Probes, p)
	}
	if det != nil {
		if s.o.Service.Detected == nil {
			d := *det
			d.Info = ""
			s.o.Service.Detected = &d
		}
		d := s.o.Service.Detected
		for _, c := range det.CPE {
			if !slices.Contains(d.CPE, c) {
				d.CPE = append(d.CPE, c)
			}
		}
		if d.Product == "" {
			d.Product, d.Version = det.Product, det.Version
		}
		if det.Info != "" && !slices.Contains(s.info, det.Info) {
			s.info = append(s.info, det.Info)
		}
	}
}

// emit writes the services in the order first seen.
func (g *serviceGroups) emit(src string, opt Options, emit Emit, bad func(LineError)) error {
	for _, k := range g.order {
		s := g.m[k]
		for range s.extra {
			opt.skip(s.line, fmt.Sprintf("probe beyond the %d kept of one service", MaxProbes))
		}
		s.o.Source = src
		s.o.ObservedAt = opt.when(s.at)
		if d := s.o.Service.Detected; d != nil {
			d.Info = strings.Join(s.info, "; ")
		}
		if len(s.o.Service.Probes) == 0 && s.o.Service.Detected == nil {
			continue
		}
		if err := emitChecked(s.line, s.o, emit, bad); err != nil {
			return err
		}
	}
	return nil
}
