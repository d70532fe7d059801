package ingest

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Evidence of a service in format version 2 (docs/observation.md): a list
// of probes, each what one request or packet to the service showed, kept
// as the scanner recorded it. Version 1's http/tls/banner members are
// still read and turned into probes by Normalize.

// Limits of the evidence an observation keeps. A longer body, header or
// banner is cut at the limit and flagged as truncated, never refused: a
// scanner that recorded a 50 MB page still gets its observation stored.
const (
	// MaxBodyBytes is the most of a body (or banner) kept, in decoded bytes.
	MaxBodyBytes = 64 << 10
	// MaxHeaderBytes is the most of one header value kept.
	MaxHeaderBytes = 8 << 10
	// MaxHeaders is the most headers of one request or response kept.
	MaxHeaders = 256
	// MaxProbes is the most probes of one service kept.
	MaxProbes = 64
	// MaxFieldBytes is the most of any other text field kept (a path, a
	// certificate field, a title).
	MaxFieldBytes = 4 << 10
)

// Body encodings.
const (
	EncodingText   = ""       // Data is the text itself (valid UTF-8)
	EncodingBase64 = "base64" // Data is the bytes in standard base64
)

// Probe is what one request or packet to a service showed: an HTTP
// exchange, a TLS handshake, a raw banner, or several of these (an HTTPS
// request carries its handshake). Several probes of one port keep their
// own method, path, status and headers.
type Probe struct {
	// Name is the scanner's name for the probe (a zgrab2 module, an nmap
	// script, "favicon"); optional.
	Name     string    `json:"name,omitempty"`
	Request  *Request  `json:"request,omitempty"`
	Response *Response `json:"response,omitempty"`
	TLS      *TLS      `json:"tls,omitempty"`
	Banner   *Banner   `json:"banner,omitempty"`
}

// Header is one header line; a list of them keeps order and repeats.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// Truncated says Value was cut at MaxHeaderBytes.
	Truncated bool `json:"truncated,omitempty"`
}

// Request is the HTTP request a probe sent.
type Request struct {
	// Method is the HTTP method, upper case (GET when empty).
	Method string `json:"method,omitempty"`
	// Path is the request target: path and query ("/remote/login?lang=en").
	Path string `json:"path,omitempty"`
	// Host is the Host header or SNI name used, if any.
	Host    string  `json:"host,omitempty"`
	Headers Headers `json:"headers,omitempty"`
	Body    *Body   `json:"body,omitempty"`
}

// Response is the HTTP response a probe got.
type Response struct {
	Status int    `json:"status,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Protocol is the response's protocol version ("HTTP/1.1").
	Protocol string  `json:"protocol,omitempty"`
	Headers  Headers `json:"headers,omitempty"`
	// Title is the page title as the scanner extracted it; when empty,
	// rules read it from the body's <title>.
	Title string `json:"title,omitempty"`
	Body  *Body  `json:"body,omitempty"`
}

// Body is a request or response body, or the bytes of a banner.
type Body struct {
	// Encoding is "" (Data is text) or "base64" (Data is the bytes in
	// standard base64, for bytes that are not UTF-8 text).
	Encoding string `json:"encoding,omitempty"`
	Data     string `json:"data,omitempty"`
	// Truncated says Data holds only the first part of the body: the
	// scanner cut it, or it was longer than MaxBodyBytes.
	Truncated bool `json:"truncated,omitempty"`
	// Length is the body's full length in bytes, where known.
	Length int64 `json:"length,omitempty"`
	// SHA256 is the hex SHA-256 of the full body, as the scanner gave it or
	// computed from Data when Data is the whole body.
	SHA256 string `json:"sha256,omitempty"`
	// MMH3 is the favicon-style hash (MurmurHash3 x86 32-bit, signed, of
	// the body's base64 with line breaks every 76 characters), as Shodan
	// and others publish it for favicons.
	MMH3 *int32 `json:"mmh3,omitempty"`
	// MD5 is the hex MD5 of the full body as a scanner published it
	// (Censys's favicon hashes, nmap's http-favicon for an icon it does
	// not know, Recog's favicon database); not computed by ingest.
	MD5 string `json:"md5,omitempty"`
}

// TLS is the handshake a probe saw: the server's leaf certificate and
// the fingerprints scanners compute of the handshake.
type TLS struct {
	// Version and Cipher as negotiated ("TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256").
	Version string `json:"version,omitempty"`
	Cipher  string `json:"cipher,omitempty"`
	Subject *DN    `json:"subject,omitempty"`
	Issuer  *DN    `json:"issuer,omitempty"`
	// SANs are the certificate's subject alternative names (DNS names and addresses).
	SANs   []string `json:"sans,omitempty"`
	Serial string   `json:"serial,omitempty"`
	// SHA256 is the hex SHA-256 fingerprint of the certificate (DER).
	SHA256 string `json:"sha256,omitempty"`
	// NotBefore and NotAfter are the validity dates, RFC 3339.
	NotBefore string `json:"not_before,omitempty"`
	NotAfter  string `json:"not_after,omitempty"`
	// SelfSigned says issuer and subject are the same certificate, where known.
	SelfSigned bool   `json:"self_signed,omitempty"`
	JARM       string `json:"jarm,omitempty"`
	JA3S       string `json:"ja3s,omitempty"`
	JA4S       string `json:"ja4s,omitempty"`
	// PEM is the server's certificate in PEM (the first of a chain is the
	// leaf), as `openssl s_client -showcerts` prints it. Normalize reads
	// it into the fields above that are empty and then drops it: the
	// fields are what rules read and what is stored.
	PEM string `json:"pem,omitempty"`
}

// DN is a distinguished name by its common attributes; DN keeps the whole
// name as the scanner wrote it.
type DN struct {
	CN string   `json:"cn,omitempty"`
	O  []string `json:"o,omitempty"`
	OU []string `json:"ou,omitempty"`
	C  string   `json:"c,omitempty"`
	ST string   `json:"st,omitempty"`
	L  string   `json:"l,omitempty"`
	// Email is the emailAddress attribute.
	Email string `json:"email,omitempty"`
	// DN is the whole name ("CN=FGT60F,O=Fortinet,C=US").
	DN string `json:"dn,omitempty"`
}

// Banner is a raw TCP or UDP exchange: the bytes sent (none for a service
// that speaks first) and the bytes that came back.
type Banner struct {
	Sent     *Body `json:"sent,omitempty"`
	Received *Body `json:"received,omitempty"`
}

// Detected is a scanner's own identification of the service (nmap -sV,
// Shodan's product and version); rules may read it, and it never
// overrides what a rule concludes.
type Detected struct {
	// By names the scanner ("nmap", "shodan", "masscan").
	By      string   `json:"by,omitempty"`
	Service string   `json:"service,omitempty"`
	Product string   `json:"product,omitempty"`
	Version string   `json:"version,omitempty"`
	Info    string   `json:"info,omitempty"`
	CPE     []string `json:"cpe,omitempty"`
}

// TextBody returns a text body of s.
func TextBody(s string) *Body { return &Body{Data: s} }

// readPEM fills the certificate fields left empty from t.PEM, then drops
// it.
func (t *TLS) readPEM() error {
	if t.PEM == "" {
		return nil
	}
	blk, _ := pem.Decode([]byte(t.PEM))
	if blk == nil || blk.Type != "CERTIFICATE" {
		return errors.New("no PEM CERTIFICATE block")
	}
	c, err := certTLS(blk.Bytes)
	if err != nil {
		return fmt.Errorf("certificate: %w", err)
	}
	if t.Subject == nil {
		t.Subject = c.Subject
	}
	if t.Issuer == nil {
		t.Issuer = c.Issuer
	}
	if len(t.SANs) == 0 {
		t.SANs = c.SANs
	}
	for _, f := range []struct {
		dst *string
		src string
	}{{&t.Serial, c.Serial}, {&t.SHA256, c.SHA256}, {&t.NotBefore, c.NotBefore}, {&t.NotAfter, c.NotAfter}} {
		if *f.dst == "" {
			*f.dst = f.src
		}
	}
	t.SelfSigned = t.SelfSigned || c.SelfSigned
	t.PEM = ""
	return nil
}

// httpFromBanner reads the HTTP exchange a raw banner holds (a scanner's
// raw capture, `curl -i` or `nc` output written as a banner): the response
// when the received bytes start with an HTTP status line, and the request
// from the sent bytes when the probe has none. The banner itself is kept as
// it was; rules then read the exchange's status, headers and body as for
// any HTTP probe. A banner cut short gives a body flagged truncated.
//
// Pasted text is read too: a `curl -i` paste whose first lines are the
// command (the response from its status line on), and `curl -v`'s
// exchange (the request's "> " lines, the response's "< " lines, then the
// body; curl's "* " notes left out).
func httpFromBanner(b *Banner, q *Request) (*Request, *Response) {
	if b.Received == nil {
		return q, nil
	}
	var r *Response
	ok := false
	if b.Received.Encoding == "" {
		var cq *Request
		cq, r, ok = exchangeFromText(b.Received.Data)
		if q == nil {
			q = cq
		}
	} else {
		r, ok = parseHTTPResponse(b.Received.Bytes())
	}
	if !ok {
		return q, nil
	}
	if r.Body != nil && b.Received.Truncated {
		r.Body.Truncated, r.Body.Length, r.Body.SHA256 = true, 0, ""
	}
	if q == nil && b.Sent != nil {
		if sent, ok := parseHTTPRequest(b.Sent.Bytes()); ok {
			q = sent
		}
	}
	return q, r
}

// BytesBody returns a body of b: text when b is valid UTF-8, base64
// otherwise, with its length and SHA-256 (b is taken as the whole body).
func BytesBody(b []byte) *Body {
	sum := sha256.Sum256(b)
	body := &Body{Length: int64(len(b)), SHA256: hex.EncodeToString(sum[:])}
	if utf8.Valid(b) {
		body.Data = string(b)
	} else {
		body.Encoding, body.Data = EncodingBase64, base64.StdEncoding.EncodeToString(b)
	}
	return body
}

// Bytes returns the body's bytes, decoding base64; a body whose base64
// does not decode gives its data as it is.
func (b *Body) Bytes() []byte {
	if b == nil {
		return nil
	}
	if b.Encoding == EncodingBase64 {
		if d, err := base64.StdEncoding.DecodeString(b.Data); err == nil {
			return d
		}
	}
	return []byte(b.Data)
}

// Text returns the body as a string of its bytes (not necessarily UTF-8).
func (b *Body) Text() string {
	if b == nil {
		return ""
	}
	if b.Encoding == EncodingBase64 {
		return string(b.Bytes())
	}
	return b.Data
}

// normalize checks the body's encoding and cuts it at MaxBodyBytes; field
// names the body in an error (a func, so that a valid body costs no name).
func (b *Body) normalize(field fieldPath) error {
	b.Encoding = strings.ToLower(b.Encoding)
	if b.Encoding == EncodingText && !utf8.ValidString(b.Data) {
		// Bytes that are not UTF-8 are kept exactly, as base64, rather
		// than turned into replacement characters by the JSON encoder.
		b.Encoding, b.Data = EncodingBase64, base64.StdEncoding.EncodeToString([]byte(b.Data))
	}
	switch b.Encoding {
	case EncodingText:
		if len(b.Data) > MaxBodyBytes {
			b.fillLength(len(b.Data))
			b.Data, b.Truncated = cutUTF8(b.Data, MaxBodyBytes), true
		}
	case EncodingBase64:
		raw, err := base64.StdEncoding.DecodeString(b.Data)
		if err != nil {
			raw, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(b.Data, "="))
		}
		if err != nil {
			return fmt.Errorf("%s.data: not base64", field)
		}
		if len(raw) > MaxBodyBytes {
			b.fillLength(len(raw))
			raw, b.Truncated = raw[:MaxBodyBytes], true
		}
		b.Data = base64.StdEncoding.EncodeToString(raw)
	default:
		return fmt.Errorf("%s.encoding: must be absent or base64, got %q", field, b.Encoding)
	}
	if b.Length < 0 {
		return fmt.Errorf("%s.length: must be 0 or more, got %d", field, b.Length)
	}
	if b.SHA256 != "" {
		b.SHA256 = strings.ToLower(b.SHA256)
		if !isHex(b.SHA256, 64) {
			return fmt.Errorf("%s.sha256: want 64 hex digits", field)
		}
	}
	if b.MD5 != "" {
		b.MD5 = strings.ToLower(b.MD5)
		if !isHex(b.MD5, 32) {
			return fmt.Errorf("%s.md5: want 32 hex digits", field)
		}
	}
	return nil
}

// fillLength records the full length of a body about to be cut, unless
// the scanner gave a larger one.
func (b *Body) fillLength(n int) {
	if b.Length < int64(n) {
		b.Length = int64(n)
	}
}

// cutUTF8 cuts s to at most n bytes without splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func isHex(s string, n int) bool {
	if n > 0 && len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func normalizeHeaders(hs []Header) []Header {
	if len(hs) > MaxHeaders {
		hs = hs[:MaxHeaders]
	}
	for i := range hs {
		h := &hs[i]
		h.Name = validUTF8(cutUTF8(strings.TrimSpace(h.Name), MaxFieldBytes))
		if len(h.Value) > MaxHeaderBytes {
			h.Value, h.Truncated = cutUTF8(h.Value, MaxHeaderBytes), true
		}
		h.Value = validUTF8(h.Value)
	}
	return hs
}

// cutField cuts a text field at MaxFieldBytes and replaces bytes that
// are not UTF-8 (which JSON cannot carry) with U+FFFD.
func cutField(s *string) {
	*s = validUTF8(cutUTF8(*s, MaxFieldBytes))
}

func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func (d *DN) normalize() {
	for _, s := range []*string{&d.CN, &d.C, &d.ST, &d.L, &d.Email, &d.DN} {
		cutField(s)
	}
	for i := range d.O {
		cutField(&d.O[i])
	}
	for i := range d.OU {
		cutField(&d.OU[i])
	}
}

// responsePseudoHeaders reads a pasted block's status line and HTTP/2's
// :status pseudo-header into r where r has no status, and returns hs
// without pseudo-headers (names beginning with ':' are not headers).
func responsePseudoHeaders(r *Response, hs []Header) []Header {
	if !slices.ContainsFunc(hs, isPseudo) {
		return hs
	}
	for _, h := range hs {
		switch {
		case r.Status != 0:
		case h.Name == startLine:
			if proto, status, reason, ok := parseStatusLine(h.Value); ok {
				r.Protocol, r.Status, r.Reason = cmp.Or(r.Protocol, proto), status, cmp.Or(r.Reason, reason)
			}
		case h.Name == ":status":
			if n, err := strconv.Atoi(h.Value); err == nil && n >= 100 && n <= 999 {
				r.Status, r.Protocol = n, cmp.Or(r.Protocol, "HTTP/2")
			}
		}
	}
	return slices.DeleteFunc(hs, isPseudo)
}

// requestPseudoHeaders reads a pasted block's request line and HTTP/2's
// :method, :path and :authority into q where q lacks them, and returns
// hs without pseudo-headers.
func requestPseudoHeaders(q *Request, hs []Header) []Header {
	if !slices.ContainsFunc(hs, isPseudo) {
		return hs
	}
	for _, h := range hs {
		switch h.Name {
		case startLine:
			if method, rest, ok := strings.Cut(h.Value, " "); ok {
				if target, _, ok := strings.Cut(rest, " "); ok {
					q.Method, q.Path = cmp.Or(q.Method, method), cmp.Or(q.Path, target)
				}
			}
		case ":method":
			q.Method = cmp.Or(q.Method, h.Value)
		case ":path":
			q.Path = cmp.Or(q.Path, h.Value)
		case ":authority":
			q.Host = cmp.Or(q.Host, h.Value)
		}
	}
	return slices.DeleteFunc(hs, isPseudo)
}

func isPseudo(h Header) bool { return strings.HasPrefix(h.Name, ":") }

// requestTarget writes a request's target in origin form ("/path?query"),
// as the rules read it: a target written as an absolute URL (the
// absolute-form of RFC 9112 3.2.2, and how people and tools that print
// URLs write what they requested: "https://vpn.example.com/remote/login")
// becomes its path and query, its host the Host when none is given; a
// path written without its leading slash ("remote/login") gets one; an
// empty target is "/". The asterisk-form ("*") and a CONNECT's
// authority-form are kept as they are.
func requestTarget(path, host string) (string, string) {
	path = strings.TrimSpace(path)
	if path == "" {
		return "/", host
	}
	if len(path) > 8 && (strings.EqualFold(path[:7], "http://") || strings.EqualFold(path[:8], "https://")) {
		rest := path[strings.Index(path, "//")+2:]
		authority, target := rest, "/"
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			authority, target = rest[:i], rest[i:]
			if target[0] != '/' {
				target = "/" + target
			}
		}
		if i := strings.IndexByte(target, '#'); i >= 0 {
			target = target[:i]
		}
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			authority = authority[at+1:] // never keep credentials written into the URL
		}
		if host == "" {
			host = authority
		}
		if target == "" {
			target = "/"
		}
		return target, host
	}
	if path[0] != '/' && path != "*" && !strings.Contains(path, " ") && !looksLikeAuthority(path) {
		return "/" + path, host
	}
	return path, host
}

// looksLikeAuthority says s is a CONNECT target, host:port.
func looksLikeAuthority(s string) bool {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || i == len(s)-1 || strings.ContainsAny(s, "/?") {
		return false
	}
	_, err := strconv.Atoi(s[i+1:])
	return err == nil
}

// fieldPath names a field of probe N in an error ("service.probes[2]"
// and rest), built only when an error is: a valid observation costs no
// names. A probe of -1 names rest alone.
type fieldPath struct {
	probe int
	rest  string
}

func (f fieldPath) String() string {
	if f.probe < 0 {
		return f.rest
	}
	return "service.probes[" + strconv.Itoa(f.probe) + "]" + f.rest
}

// normalizeProbes checks and cuts the probes of a service.
func (s *Service) normalizeProbes() error {
	if len(s.Probes) > MaxProbes {
		s.Probes = s.Probes[:MaxProbes]
	}
	for i := range s.Probes {
		p := &s.Probes[i]
		f := func(rest string) fieldPath { return fieldPath{i, rest} }
		cutField(&p.Name)
		if p.Request == nil && p.Response == nil && p.TLS == nil && p.Banner == nil {
			return fmt.Errorf("%s: needs a request, response, tls or banner", f(""))
		}
		if p.Response == nil && p.Banner != nil {
			p.Request, p.Response = httpFromBanner(p.Banner, p.Request)
		}
		if q := p.Request; q != nil {
			q.Headers = requestPseudoHeaders(q, q.Headers)
			q.Method = strings.ToUpper(strings.TrimSpace(q.Method))
			if q.Method == "" {
				q.Method = "GET"
			}
			if len(q.Method) > 32 || strings.ContainsAny(q.Method, " \t\r\n") {
				return fmt.Errorf("%s.request.method: not an HTTP method: %q", f(""), cutUTF8(q.Method, 40))
			}
			q.Path, q.Host = requestTarget(q.Path, q.Host)
			cutField(&q.Path)
			cutField(&q.Host)
			q.Headers = normalizeHeaders(q.Headers)
			if q.Body != nil {
				if err := q.Body.normalize(f(".request.body")); err != nil {
					return err
				}
			}
		}
		if r := p.Response; r != nil {
			if r.Status < 0 || r.Status > 999 {
				return fmt.Errorf("%s.response.status: must be 0..999, got %d", f(""), r.Status)
			}
			r.Headers = responsePseudoHeaders(r, r.Headers)
			cutField(&r.Reason)
			cutField(&r.Protocol)
			cutField(&r.Title)
			r.Headers = normalizeHeaders(r.Headers)
			if r.Body != nil {
				if err := r.Body.normalize(f(".response.body")); err != nil {
					return err
				}
			}
		}
		if t := p.TLS; t != nil {
			if err := t.readPEM(); err != nil {
				return fmt.Errorf("%s.tls.pem: %w", f(""), err)
			}
			for _, s := range []*string{&t.Version, &t.Cipher, &t.Serial, &t.NotBefore, &t.NotAfter, &t.JARM, &t.JA3S, &t.JA4S} {
				cutField(s)
			}
			t.SHA256 = strings.ToLower(strings.ReplaceAll(t.SHA256, ":", ""))
			if t.SHA256 != "" && !isHex(t.SHA256, 64) {
				return fmt.Errorf("%s.tls.sha256: want 64 hex digits", f(""))
			}
			if t.Subject != nil {
				t.Subject.normalize()
			}
			if t.Issuer != nil {
				t.Issuer.normalize()
			}
			if len(t.SANs) > MaxHeaders {
				t.SANs = t.SANs[:MaxHeaders]
			}
			for j := range t.SANs {
				cutField(&t.SANs[j])
			}
		}
		if b := p.Banner; b != nil {
			for _, part := range []struct {
				name string
				b    *Body
			}{{"sent", b.Sent}, {"received", b.Received}} {
				if part.b != nil {
					if err := part.b.normalize(f(".banner." + part.name)); err != nil {
						return err
					}
				}
			}
		}
	}
	if d := s.Detected; d != nil {
		for _, f := range []*string{&d.By, &d.Service, &d.Product, &d.Version, &d.Info} {
			cutField(f)
		}
	}
	return nil
}

// upgradeV1 turns version 1's http, tls and banner members into probes:
// the page of http (status, headers, cookies, title) as a GET of "/",
// each body snippet as a GET of its path, the favicon hash as a GET of
// /favicon.ico, the certificate as a TLS probe and the banner as a banner
// probe.
func (s *Service) upgradeV1() {
	if s.HTTP == nil && s.TLS == nil && s.Banner == "" {
		return
	}
	var probes []Probe
	var tls *TLS
	if t := s.TLS; t != nil {
		tls = &TLS{Serial: t.Serial}
		if t.Subject != "" {
			tls.Subject = ParseDN(t.Subject)
		}
		if t.Issuer != "" {
			tls.Issuer = ParseDN(t.Issuer)
		}
	}
	if h := s.HTTP; h != nil {
		root := Probe{Request: &Request{Method: "GET", Path: "/"}, Response: &Response{Status: h.Status, Title: h.Title}, TLS: tls}
		root.Response.Headers = headersOfMap(h.Headers)
		for _, c := range h.Cookies {
			root.Response.Headers = append(root.Response.Headers, Header{Name: "Set-Cookie", Value: c + "="})
		}
		if b, ok := h.Bodies["/"]; ok {
			root.Response.Body = TextBody(b)
			root.Response.Body.Truncated = true
		}
		probes = append(probes, root)
		paths := make([]string, 0, len(h.Bodies))
		for p := range h.Bodies {
			if p != "/" {
				paths = append(paths, p)
			}
		}
		slices.Sort(paths)
		for _, p := range paths {
			body := TextBody(h.Bodies[p])
			body.Truncated = true
			probes = append(probes, Probe{Request: &Request{Method: "GET", Path: p}, Response: &Response{Body: body}})
		}
		if h.FaviconHash != "" {
			if v, err := strconv.ParseInt(strings.TrimSpace(h.FaviconHash), 10, 64); err == nil && v >= -1<<31 && v < 1<<32 {
				m := int32(v)
				probes = append(probes, faviconProbe("/favicon.ico", "", &Body{MMH3: &m}))
			}
		}
	} else if tls != nil {
		probes = append(probes, Probe{TLS: tls})
	}
	if s.Banner != "" {
		probes = append(probes, Probe{Banner: &Banner{Received: TextBody(s.Banner)}})
	}
	s.Probes = append(probes, s.Probes...)
	s.HTTP, s.TLS, s.Banner = nil, nil, ""
}

// Join writes the name's attributes as CN=..,OU=..,O=..,L=..,ST=..,C=..
// (each OU and O in turn) joined by sep, with the emailAddress when email
// is set: a whole name for a scanner that gives only the attributes.
func (d *DN) Join(sep string, email bool) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	add("CN", d.CN)
	for _, o := range d.OU {
		add("OU", o)
	}
	for _, o := range d.O {
		add("O", o)
	}
	add("L", d.L)
	add("ST", d.ST)
	add("C", d.C)
	if email {
		add("emailAddress", d.Email)
	}
	return strings.Join(parts, sep)
}

// ParseDN reads a distinguished name as scanners print it, in RFC 4514
// order ("CN=x,O=y") or OpenSSL's ("/C=US/O=y/CN=x"), into its
// attributes; the whole string is kept in DN.
func ParseDN(s string) *DN {
	d := &DN{DN: s}
	var parts []string
	if strings.HasPrefix(s, "/") {
		parts = strings.Split(s[1:], "/")
	} else {
		for _, p := range splitDN(s) {
			parts = append(parts, splitSlashAttrs(p)...)
		}
	}
	for _, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch strings.ToUpper(k) {
		case "CN", "COMMONNAME":
			if d.CN == "" {
				d.CN = v
			}
		case "O", "ORGANIZATIONNAME":
			d.O = append(d.O, v)
		case "OU", "ORGANIZATIONALUNITNAME":
			d.OU = append(d.OU, v)
		case "C", "COUNTRYNAME":
			d.C = v
		case "ST", "S", "STATEORPROVINCENAME":
			d.ST = v
		case "L", "LOCALITYNAME":
			d.L = v
		case "EMAILADDRESS", "E", "EMAIL":
			d.Email = v
		}
	}
	return d
}

// joinedAttr finds "/<attribute>=" inside an RDN's value: OpenSSL's
// one-line form joins an attribute it has no short name for to the one
// before it (Suricata 4.x prints "CN=host/emailAddress=a@b").
var joinedAttr = regexp.MustCompile(`/(?i:emailAddress|CN|O|OU|C|ST|L|E)=`)

// splitSlashAttrs splits one RDN where joinedAttr finds another attribute
// joined to it.
func splitSlashAttrs(p string) []string {
	idx := joinedAttr.FindAllStringIndex(p, -1)
	if idx == nil {
		return []string{p}
	}
	out := make([]string, 0, len(idx)+1)
	from := 0
	for _, m := range idx {
		out = append(out, p[from:m[0]])
		from = m[0] + 1
	}
	return append(out, p[from:])
}

// splitDN splits an RFC 4514 name at its unescaped commas (and plus
// signs of multi-valued names).
func splitDN(s string) []string {
	var parts []string
	var cur strings.Builder
	esc, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			cur.WriteByte(c)
			esc = false
		case c == '\\':
			esc = true
		case c == '"':
			quoted = !quoted
		case (c == ',' || c == '+' || c == ';') && !quoted:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, cur.String())
}

// headersOfMap lists a map of one value per header name (version 1's
// headers, LeakIX's) in name order, as a map keeps none; an empty map is
// no headers.
func headersOfMap(m map[string]string) Headers {
	var out Headers
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, Header{Name: k, Value: m[k]})
	}
	return out
}

// faviconProbe is a favicon a scanner fetched, as the probe the adapters
// write: a GET of path on host (none when empty) answered with body, whose
// hashes are what the scanner published (mmh3, md5, sha256).
func faviconProbe(path, host string, body *Body) Probe {
	return Probe{Name: "favicon", Request: &Request{Method: "GET", Path: path, Host: host}, Response: &Response{Body: body}}
}

// exchangeFromText reads an HTTP response out of text as it is captured
// or pasted: raw (from its status line), `curl -v`'s exchange (with its
// request), or `curl -i` output under the command line that ran it.
func exchangeFromText(text string) (*Request, *Response, bool) {
	if r, ok := parseHTTPResponse([]byte(text)); ok {
		return nil, r, true
	}
	if q, r, ok := curlVerbose(text); ok {
		return q, r, true
	}
	if i := statusLineAt.FindStringIndex(text); i != nil && i[0] > 0 {
		r, ok := parseHTTPResponse([]byte(text[i[0]:]))
		return nil, r, ok
	}
	return nil, nil, false
}

// statusLineAt finds an HTTP status line at the start of a line.
var statusLineAt = regexp.MustCompile(`(?m)^HTTP/\d(?:\.\d)? \d{3}\b`)

// curlVerbose reads `curl -v`'s first exchange out of pasted text: the
// request from its "> " lines, the response from its "< " lines, and the
// body from the lines after the response's headers that curl does not
// mark ("* ", "{ [", "} ["). ok is false when the text holds no "< HTTP/"
// line.
func curlVerbose(text string) (*Request, *Response, bool) {
	if !strings.Contains(text, "< HTTP/") {
		return nil, nil, false
	}
	var req, resp, body strings.Builder
	inResp, afterHeaders := false, false
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "> ") || line == ">":
			if inResp {
				return finishCurl(req.String(), resp.String(), body.String())
			}
			req.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, ">"), " ") + "\r\n")
		case strings.HasPrefix(line, "< ") || line == "<":
			h := strings.TrimPrefix(strings.TrimPrefix(line, "<"), " ")
			if strings.HasPrefix(h, "HTTP/") && inResp && afterHeaders {
				return finishCurl(req.String(), resp.String(), body.String()) // a second response (-L)
			}
			inResp = true
			resp.WriteString(h + "\r\n")
			if h == "" {
				afterHeaders = true
			}
		case strings.HasPrefix(line, "* ") || strings.HasPrefix(line, "{ [") || strings.HasPrefix(line, "} ["):
		default:
			if inResp {
				afterHeaders = true
				body.WriteString(line + "\n")
			}
		}
	}
	return finishCurl(req.String(), resp.String(), body.String())
}

func finishCurl(req, resp, body string) (*Request, *Response, bool) {
	if !strings.HasSuffix(resp, "\r\n\r\n") {
		resp += "\r\n"
	}
	r, ok := parseHTTPResponse([]byte(resp + strings.TrimRight(body, "\n")))
	if !ok {
		return nil, nil, false
	}
	q, _ := parseHTTPRequest([]byte(req))
	return q, r, true
}
