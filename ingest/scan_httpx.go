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

// httpxRecord is one line of ProjectDiscovery httpx's -json output. The
// names changed in httpx v1.2.5 (2022-08-31, "JSON field update"):
// before it they were hyphenated (status-code, content-length,
// response-body, favicon-mmh3, technologies), and before v1.2.0 the body
// and header hashes were top-level members (body-sha256); both spellings
// are read.
type httpxRecord struct {
	Timestamp string          `json:"timestamp"`
	URL       string          `json:"url"`
	Input     string          `json:"input"`
	Host      string          `json:"host"`
	HostIP    string          `json:"host_ip"`
	Port      json.RawMessage `json:"port"`
	Scheme    string          `json:"scheme"`
	Method    string          `json:"method"`
	Path      string          `json:"path"`
	Title     string          `json:"title"`
	WebServer string          `json:"webserver"`
	Location  string          `json:"location"`
	FinalURL  string          `json:"final_url"`
	Failed    bool            `json:"failed"`
	Error     string          `json:"error"`

	StatusCode    *int    `json:"status_code"`
	OldStatusCode *int    `json:"status-code"`
	ContentType   string  `json:"content_type"`
	OldContentTyp string  `json:"content-type"`
	ContentLength *int64  `json:"content_length"`
	OldContentLen *int64  `json:"content-length"`
	Body          *string `json:"body"`
	OldBody       *string `json:"response-body"`
	// Header is a map of lower-case names with underscores (v1.2.5 on,
	// -irh or -irr), or the raw header block (v1.2.0 to v1.2.4).
	Header    json.RawMessage `json:"header"`
	RawHeader string          `json:"raw_header"`
	OldHeader string          `json:"response-header"`
	Request   string          `json:"request"`

	Favicon     string `json:"favicon"`
	OldFavicon  string `json:"favicon-mmh3"`
	FaviconPath string `json:"favicon_path"`
	FaviconURL  string `json:"favicon_url"`
	FaviconMD5  string `json:"favicon_md5"`

	Hash       map[string]any `json:"hash"`
	Hashes     map[string]any `json:"hashes"`
	BodySHA256 string         `json:"body-sha256"`

	Tech    []string `json:"tech"`
	OldTech []string `json:"technologies"`
	CPE     []struct {
		CPE string `json:"cpe"`
	} `json:"cpe"`
	CDN     bool   `json:"cdn"`
	CDNName string `json:"cdn_name"`
	OldCDN  string `json:"cdn-name"`
	CDNType string `json:"cdn_type"`

	Jarm     string        `json:"jarm"`
	JarmHash string        `json:"jarm_hash"`
	TLS      *tlsxResponse `json:"tls"`
	// OldTLS is -tls-grab before v1.2.5: projectdiscovery/cryptoutil's
	// TLSData (names as lists, no validity or serial).
	OldTLS *struct {
		Version     string   `json:"tls_version"`
		ServerName  string   `json:"extension_server_name"`
		DNSNames    []string `json:"dns_names"`
		CommonName  []string `json:"common_name"`
		Org         []string `json:"organization"`
		IssuerCN    []string `json:"issuer_common_name"`
		IssuerOrg   []string `json:"issuer_organization"`
		Fingerprint string   `json:"fingerprint_sha256"`
	} `json:"tls-grab"`

	ASN *struct {
		Number  string `json:"as_number"`
		Name    string `json:"as_name"`
		Country string `json:"as_country"`
	} `json:"asn"`

	Chain []struct {
		Request    string `json:"request"`
		Response   string `json:"response"`
		StatusCode int    `json:"status_code"`
		Location   string `json:"location"`
		RequestURL string `json:"request-url"`
	} `json:"chain"`

	// finalRaw is the last response of the chain, read when the line has
	// no raw_header of its own.
	finalRaw []byte
}

// HTTPX reads ProjectDiscovery httpx's JSON lines (`httpx -json`, with or
// without -irh, -irr, -irrb, -tls-grab, -favicon, -jarm, -td, -asn,
// -hash), or the plain text it prints ("https://192.0.2.1 [200] [Title]
// [tech]", read as far as its columns are unambiguous: scan_httpx_text.go;
// each line is told by its first character). Each line is one service
// observation on the probed address and port (docs/ingest-enrich.md says
// what is kept).
func HTTPX(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("httpx")
	return opt.nonBlankLines(r, "httpx", bad, func(n int, line []byte) error {
		if t := bytes.TrimPrefix(line, []byte("\ufeff")); len(t) == 0 || t[0] != '{' {
			// the plain text httpx prints (scan_httpx_text.go)
			o, skip, err := httpxTextLine(string(t), src, opt)
			if opt.settled(n, skip, err, bad) {
				if err == nil && strings.Contains(skip, "is a name") {
					opt.warn(n, fmt.Sprintf("%q: not read: %s", clipForError(strings.Fields(string(t))[0], 200), skip))
				}
				return nil
			}
			return emitChecked(n, o, emit, bad)
		}
		var h httpxRecord
		if err := scanUnmarshal(line, &h); err != nil {
			bad(LineError{n, fmt.Errorf("json: %w", err)})
			return nil
		}
		if h.URL == "" && h.Input == "" && h.Host == "" {
			bad(LineError{n, errors.New(`not an httpx result: want "url", "input" or "host"`)})
			return nil
		}
		if h.Failed {
			opt.skip(n, "httpx probe failed")
			return nil
		}
		o, err := h.observation(src, opt)
		return emitBuilt(n, o, err, emit, bad)
	})
}

func (h *httpxRecord) observation(src string, opt Options) (Observation, error) {
	u, _ := url.Parse(h.URL)
	scheme := strings.ToLower(h.Scheme)
	if scheme == "" && u != nil {
		scheme = strings.ToLower(u.Scheme)
	}
	ip, err := h.address(u)
	if err != nil {
		return Observation{}, err
	}
	port, err := h.port(u, scheme)
	if err != nil {
		return Observation{}, err
	}
	o := Observation{Type: TypeService, IP: ip, Source: src, ObservedAt: opt.when(scanTime(h.Timestamp))}
	host := ""
	if u != nil {
		host = u.Hostname()
	}
	if host == "" {
		host = hostOf(h.Input)
	}
	if _, err := netip.ParseAddr(host); err != nil && host != "" {
		o.Hostnames = []string{host}
	} else {
		host = ""
	}
	s := &Service{Port: port, Transport: "tcp", Probes: h.probes(u, host)}
	if len(s.Probes) == 0 {
		return Observation{}, errors.New("no status, headers, body or certificate to keep")
	}
	s.Detected = h.detected(scheme)
	o.Service = s
	if a := h.ASN; a != nil {
		o.Claims = opt.scanClaim("httpx", a.Name, a.Number)
	}
	return o, nil
}

// address is the IP httpx connected to: host_ip (httpx v1.3 on, where
// host is the name), else host when it is an address.
func (h *httpxRecord) address(u *url.URL) (string, error) {
	for _, s := range []string{h.HostIP, h.Host} {
		if a, err := netip.ParseAddr(strings.Trim(strings.TrimSpace(s), "[]")); err == nil {
			return a.Unmap().String(), nil
		}
	}
	if u != nil {
		if a, err := netip.ParseAddr(u.Hostname()); err == nil {
			return a.Unmap().String(), nil
		}
	}
	return "", fmt.Errorf("host: not an IP address: %q (and no host_ip)", h.Host)
}

// port reads the port member ("443", or a number), else the URL's port,
// else the scheme's default.
func (h *httpxRecord) port(u *url.URL, scheme string) (int, error) {
	p := strings.Trim(strings.TrimSpace(string(h.Port)), `"`)
	if p == "" && u != nil {
		p = u.Port()
	}
	if p == "" {
		switch scheme {
		case "https":
			return 443, nil
		case "http":
			return 80, nil
		}
		return 0, errors.New("port: missing")
	}
	v, err := strconv.Atoi(p)
	if err != nil || v < 1 || v > 65535 {
		return 0, fmt.Errorf("port: must be 1..65535, got %q", p)
	}
	return v, nil
}

// hostOf returns the host of an httpx input ("example.com:443",
// "http://example.com:80").
func hostOf(in string) string {
	in = strings.TrimSpace(in)
	if i := strings.Index(in, "://"); i >= 0 {
		in = in[i+3:]
	}
	if i := strings.IndexAny(in, "/?#"); i >= 0 {
		in = in[:i]
	}
	if h, _, err := netSplitHostPort(in); err == nil {
		return h
	}
	return strings.Trim(in, "[]")
}

func netSplitHostPort(s string) (string, string, error) {
	u, err := url.Parse("//" + s)
	if err != nil || u.Port() == "" {
		return "", "", errors.New("no port")
	}
	return u.Hostname(), u.Port(), nil
}

// probes builds the redirect chain's probes, the main HTTP probe (with
// the TLS under it on HTTPS) and the favicon probe.
func (h *httpxRecord) probes(u *url.URL, host string) []Probe {
	b64 := h.base64Mode()
	var probes []Probe
	for _, c := range h.Chain {
		resp, ok := parseHTTPResponse(h.decode(c.Response, b64))
		if !ok {
			continue
		}
		p := Probe{Name: "redirect", Response: resp}
		if q, ok := parseHTTPRequest(h.decode(c.Request, b64)); ok {
			p.Request = q
		} else {
			p.Request = &Request{Method: "GET", Path: pathOf(c.RequestURL), Host: host}
		}
		probes = append(probes, p)
	}
	// With -fr the chain ends with the final response, which the line's
	// own members describe again: keep it once, as the main probe (its
	// raw headers when the line has none of its own).
	if n := len(h.Chain); n > 0 && len(probes) > 0 && probes[len(probes)-1].Response != nil {
		if h.rawHeader(b64) == "" {
			h.finalRaw = h.decode(h.Chain[n-1].Response, b64)
		}
		probes = probes[:len(probes)-1]
	}

	main := Probe{TLS: h.tls()}
	if q, ok := parseHTTPRequest(h.decode(h.Request, b64)); ok {
		main.Request = q
	} else {
		path := h.Path
		if h.FinalURL != "" {
			path = pathOf(h.FinalURL)
		} else if path == "" && u != nil {
			path = pathOf(h.URL)
		}
		main.Request = &Request{Method: h.Method, Path: path, Host: host}
		if main.Request.Method == "" {
			main.Request.Method = "GET"
		}
	}
	if main.Request.Host == "" {
		main.Request.Host = host
	}
	resp := h.response(b64)
	if resp != nil {
		main.Response = resp
	}
	if main.Response != nil || main.TLS != nil {
		probes = append(probes, main)
	}
	if fav := firstNonEmpty(h.Favicon, h.OldFavicon); fav != "" {
		if v, err := strconv.ParseInt(strings.TrimSpace(fav), 10, 64); err == nil && v >= -1<<31 && v < 1<<32 {
			m := int32(v)
			path := "/favicon.ico"
			if h.FaviconURL != "" {
				path = pathOf(h.FaviconURL)
			} else if h.FaviconPath != "" {
				path = pathOf(h.FaviconPath)
			}
			body := &Body{MMH3: &m}
			if md := strings.ToLower(strings.TrimSpace(h.FaviconMD5)); isHex(md, 32) {
				body.MD5 = md // httpx's favicon_md5 (v1.6 on), for Recog's favicon database
			}
			probes = append(probes, faviconProbe(path, host, body))
		}
	}
	return probes
}

// base64Mode says the line was written with -irrb: raw_header (or the
// request) is base64 of an HTTP message instead of the message.
func (h *httpxRecord) base64Mode() bool {
	for _, s := range []string{h.RawHeader, h.Request} {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if strings.HasPrefix(s, "HTTP/") || strings.Contains(s, " HTTP/") {
			return false
		}
		if d, err := base64.StdEncoding.DecodeString(s); err == nil {
			return bytes.HasPrefix(d, []byte("HTTP/")) || bytes.Contains(firstLine(d), []byte(" HTTP/"))
		}
		return false
	}
	return false
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

// decode returns s as bytes, from base64 when b64 is set.
func (h *httpxRecord) decode(s string, b64 bool) []byte {
	if b64 && s != "" {
		if d, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s)); err == nil {
			return d
		}
	}
	return []byte(s)
}

// rawHeader is the response's status line and headers as httpx wrote
// them: raw_header, the raw header string of v1.2.0 to v1.2.4 (header),
// or response-header before.
func (h *httpxRecord) rawHeader(b64 bool) string {
	if h.RawHeader != "" {
		return string(h.decode(h.RawHeader, b64))
	}
	if len(h.Header) > 0 && h.Header[0] == '"' {
		var s string
		if json.Unmarshal(h.Header, &s) == nil {
			return s
		}
	}
	return h.OldHeader
}

// response builds the main response: the raw headers in order when the
// line has them, else the header map (sorted by name; repeats arrive
// joined by ", "), else the Server, Content-Type and Location httpx
// reports; the body, title and status.
func (h *httpxRecord) response(b64 bool) *Response {
	var r *Response
	var rawBody *Body
	raw := []byte(h.rawHeader(b64))
	if len(raw) == 0 {
		raw = h.finalRaw
	}
	if len(raw) > 0 {
		if parsed, ok := parseHTTPResponse(raw); ok {
			rawBody = parsed.Body // only a chain's response carries one
			parsed.Body = nil
			r = parsed
		}
	}
	if r == nil && len(h.Header) > 0 && h.Header[0] == '{' {
		var m map[string]any
		if json.Unmarshal(h.Header, &m) == nil && len(m) > 0 {
			r = &Response{}
			names := make([]string, 0, len(m))
			for k := range m {
				names = append(names, k)
			}
			slices.Sort(names)
			for _, k := range names {
				for _, v := range headerValuesOf(m[k]) {
					r.Headers = append(r.Headers, Header{Name: canonicalHeader(k), Value: v})
				}
			}
		}
	}
	if r == nil {
		r = &Response{}
		for _, hv := range []struct{ name, value string }{{"Server", h.WebServer}, {"Content-Type", firstNonEmpty(h.ContentType, h.OldContentTyp)}, {"Location", h.Location}} {
			if hv.value != "" {
				r.Headers = append(r.Headers, Header{Name: hv.name, Value: hv.value})
			}
		}
	}
	status := h.StatusCode
	if status == nil {
		status = h.OldStatusCode
	}
	if status != nil && r.Status == 0 && *status > 0 {
		r.Status = *status
	}
	r.Title = h.Title
	if body := h.body(b64); body != nil {
		r.Body = body
	} else if rawBody != nil {
		r.Body = rawBody
	}
	if r.Status == 0 && len(r.Headers) == 0 && r.Body == nil && r.Title == "" {
		return nil
	}
	return r
}

// headerValuesOf reads one value of httpx's header map: a string, or a
// list of strings (some forks write lists).
func headerValuesOf(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case float64:
		return []string{strconv.FormatFloat(x, 'f', -1, 64)}
	}
	return nil
}

// body returns the response body with the sha256 httpx computed of the
// whole body and its length; a body httpx cut (-rstr) is flagged.
func (h *httpxRecord) body(b64 bool) *Body {
	text := h.Body
	if text == nil {
		text = h.OldBody
	}
	sum := h.BodySHA256
	for _, m := range []map[string]any{h.Hash, h.Hashes} {
		if s, ok := m["body_sha256"].(string); ok && sum == "" {
			sum = s
		}
	}
	length := h.ContentLength
	if length == nil {
		length = h.OldContentLen
	}
	if text == nil || *text == "" {
		if !isHex(strings.ToLower(sum), 64) {
			if text == nil && length != nil && *length > 0 {
				// httpx's default line: no body, no hash, but the
				// body's length (content_length) it read.
				return &Body{Truncated: true, Length: *length}
			}
			return nil
		}
		if strings.ToLower(sum) == emptySHA256 {
			return &Body{SHA256: emptySHA256} // an empty body
		}
		// No body in the line: its hash alone (Data empty, truncated).
		b := &Body{SHA256: strings.ToLower(sum), Truncated: true}
		if length != nil && *length > 0 {
			b.Length = *length
		} else if length != nil && *length == 0 {
			b.Truncated = false
		}
		return b
	}
	data := []byte(*text)
	if b64 {
		if d, err := base64.StdEncoding.DecodeString(*text); err == nil {
			data = d
		}
	}
	b := BytesBody(data)
	if isHex(strings.ToLower(sum), 64) && strings.ToLower(sum) != b.SHA256 {
		// httpx hashed the whole body; the line holds a cut one.
		b.SHA256, b.Truncated = strings.ToLower(sum), true
	}
	if length != nil && *length > b.Length {
		if !b.Truncated {
			b.SHA256 = "" // the hash of the cut part is not the body's
		}
		b.Length, b.Truncated = *length, true
	}
	return b
}

// emptySHA256 is the SHA-256 of no bytes.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// tls reads the tlsx response: the certificate's fields (or, with tlsx
// -cert, the certificate itself), the version, cipher, jarm and ja3s.
func (h *httpxRecord) tls() *TLS {
	x := h.TLS
	jarm := firstNonEmpty(h.JarmHash, h.Jarm)
	if x == nil && h.OldTLS != nil {
		o := h.OldTLS
		t := &TLS{Version: tlsVersionText(o.Version), SANs: o.DNSNames, SHA256: strings.ToLower(o.Fingerprint), JARM: jarm}
		if len(o.CommonName) > 0 || len(o.Org) > 0 {
			t.Subject = &DN{CN: first(o.CommonName), O: o.Org}
			t.Subject.DN = t.Subject.Join(",", false)
		}
		if len(o.IssuerCN) > 0 || len(o.IssuerOrg) > 0 {
			t.Issuer = &DN{CN: first(o.IssuerCN), O: o.IssuerOrg}
			t.Issuer.DN = t.Issuer.Join(",", false)
		}
		if !isHex(t.SHA256, 64) {
			t.SHA256 = ""
		}
		if t.empty() {
			return nil
		}
		return t
	}
	if x == nil {
		if jarm == "" {
			return nil
		}
		return &TLS{JARM: jarm}
	}
	t := x.evidence()
	if t == nil {
		t = &TLS{}
	}
	t.JARM = firstNonEmpty(jarm, x.JarmHash)
	if t.empty() {
		return nil
	}
	return t
}

// tlsxDN reads tlsx's distinguished name ("CN=x, O=y\, Inc, C=US") with
// its common name and organizations given apart.
func tlsxDN(dn, cn string, org []string) *DN {
	d := ParseDN(dn)
	if dn == "" {
		d = &DN{}
	}
	if cn != "" {
		d.CN = cn
	}
	if len(org) > 0 {
		d.O = org
	}
	return d
}

// rfc3339 rewrites a time stamp in RFC 3339 (UTC); "" when s is none.
func rfc3339(s string) string {
	t := scanTime(s)
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func (h *httpxRecord) detected(scheme string) *Detected {
	d := &Detected{By: "httpx", Service: scheme}
	var info []string
	if tech := append(slices.Clone(h.Tech), h.OldTech...); len(tech) > 0 {
		info = append(info, "tech: "+strings.Join(tech, ", "))
	}
	if cdn := firstNonEmpty(h.CDNName, h.OldCDN); cdn != "" {
		if h.CDNType != "" {
			cdn += " (" + h.CDNType + ")"
		}
		info = append(info, "cdn: "+cdn)
	}
	d.Info = strings.Join(info, "; ")
	for _, c := range h.CPE {
		if c.CPE != "" {
			d.CPE = append(d.CPE, c.CPE)
		}
	}
	return d
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// parseHTTPRequest reads a raw HTTP/1.x request as scanners record it:
// the request line and headers (the body, if any, is kept).
func parseHTTPRequest(raw []byte) (*Request, bool) {
	line, rest, _ := cutLine(raw)
	method, rest1, ok := strings.Cut(string(line), " ")
	if !ok || method == "" || len(method) > 32 || strings.ToUpper(method) != method {
		return nil, false
	}
	target, proto, ok := strings.Cut(rest1, " ")
	if !ok || !strings.HasPrefix(proto, "HTTP/") {
		return nil, false
	}
	q := &Request{Method: method, Path: pathOf(target)}
	for len(rest) > 0 {
		var l []byte
		var complete bool
		l, rest, complete = cutLine(rest)
		if len(l) == 0 {
			if complete && len(rest) > 0 {
				q.Body = BytesBody(rest)
			}
			break
		}
		hd, found := headerLine(l)
		if !found {
			continue
		}
		q.Headers = append(q.Headers, hd)
		if strings.EqualFold(hd.Name, "Host") && q.Host == "" {
			q.Host = hostOf(hd.Value)
		}
	}
	return q, true
}
