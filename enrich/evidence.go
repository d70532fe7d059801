package enrich

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/netintel/netintel/ingest"
)

// evidence is the view of one service or flow observation that rule
// conditions and version extractors read. What several rules read of a
// probe (its decoded body, its title, its cookies) is worked out once,
// the first time a rule asks.
type evidence struct {
	svc    *ingest.Service
	flow   *ingest.Flow
	probes []probeView
	// found marks the rule index's literals present (ruleindex.go).
	found []bool
	// memo keeps the answers of the named conditions evaluated so far,
	// by memoCond id (cond.go).
	memo []uint8
	// extra holds probes derived from the observation's own (a sysDescr
	// value out of a walk's rendering: derived.go), viewed after them.
	extra []ingest.Probe
	// detected is the scanner's identification the rules read: the
	// observation's, else one read from a scanner's report in a banner
	// (reportDetected), held in derivedDetected.
	detected        *ingest.Detected
	derivedDetected ingest.Detected
}

// probeView is one probe with its derived values.
type probeView struct {
	p *ingest.Probe

	body, title, banner, sent string // decoded on first use
	headers                   string // the header block, on first use
	done                      derived
	cookies                   []cookie
}

// derived says which of a probeView's values are worked out.
type derived uint8

const (
	doneBody derived = 1 << iota
	doneTitle
	doneBanner
	doneSent
	doneCookies
	doneHeaders
)

type cookie struct{ name, value string }

// evidencePool keeps evidence views and their probe slices between
// observations: a worker fingerprints every service it applies.
var evidencePool = sync.Pool{New: func() any { return new(evidence) }}

// newEvidence returns a view of svc or flow; release gives it back.
func newEvidence(svc *ingest.Service, flow *ingest.Flow) *evidence {
	e := evidencePool.Get().(*evidence)
	e.svc, e.flow = svc, flow
	if svc != nil && len(svc.Probes) > 0 {
		if cap(e.probes) < len(svc.Probes) {
			e.probes = make([]probeView, len(svc.Probes))
		}
		e.probes = e.probes[:len(svc.Probes)]
		for i := range svc.Probes {
			e.probes[i] = probeView{p: &svc.Probes[i], cookies: e.probes[i].cookies[:0]}
		}
		e.addSysDescrProbes()
	}
	if svc != nil {
		e.detected = svc.Detected
		switch {
		case e.detected == nil:
			if e.reportDetected() {
				e.detected = &e.derivedDetected
			}
		case e.detected.Version == "" && e.detected.Product != "":
			// a scanner's report that names the product on its own and
			// the version in its text (Nessus's "Installed version : ...")
			if v := e.reportVersionOf(); v != "" {
				e.derivedDetected = *e.detected
				e.derivedDetected.Version = v
				e.detected = &e.derivedDetected
			}
		}
	}
	return e
}

// release returns e to the pool; e is not used after.
func (e *evidence) release() {
	for i := range e.probes {
		e.probes[i] = probeView{cookies: e.probes[i].cookies[:0]}
	}
	clear(e.extra)
	e.svc, e.flow, e.probes, e.found, e.memo, e.extra = nil, nil, e.probes[:0], e.found[:0], e.memo[:0], e.extra[:0]
	e.detected, e.derivedDetected = nil, ingest.Detected{}
	evidencePool.Put(e)
}

func (v *probeView) method() string {
	if q := v.p.Request; q != nil {
		if q.Method == "" {
			return "GET"
		}
		return q.Method
	}
	if v.p.Response != nil {
		return "GET"
	}
	return ""
}

func (v *probeView) path() string {
	if q := v.p.Request; q != nil {
		if q.Path == "" {
			return "/"
		}
		return q.Path
	}
	if v.p.Response != nil {
		return "/"
	}
	return ""
}

// pathMatches reports whether the probe's path is want, with or without
// its query string.
func (v *probeView) pathMatches(want string) bool {
	p := v.path()
	if p == want {
		return true
	}
	if i := strings.IndexByte(p, '?'); i >= 0 && strings.IndexByte(want, '?') < 0 {
		return p[:i] == want
	}
	return false
}

func (v *probeView) bodyText() string {
	if v.done&doneBody == 0 {
		v.done |= doneBody
		if r := v.p.Response; r != nil {
			v.body = decodedBody(r, r.Body.Text())
		}
	}
	return v.body
}

// decodedBody is the body as the browser would read it, where a capture
// kept the bytes on the wire: a chunked transfer's chunks joined
// (Transfer-Encoding: chunked, the text starting with a chunk size
// line), a gzip or zlib content coding undone (Content-Encoding: gzip,
// x-gzip, deflate, and the data starting with its magic). What a cut
// capture holds is decoded as far as it goes; a body that does not
// decode is read as it is. The stored body is never changed (the gzip
// header's time, 10-fortinet's table key, is read from it).
func decodedBody(r *ingest.Response, body string) string {
	if len(body) < 4 || len(r.Headers) == 0 {
		return body
	}
	var chunked bool
	var coding string
	for _, h := range r.Headers {
		switch {
		case strings.EqualFold(h.Name, "Transfer-Encoding"):
			chunked = strings.Contains(strings.ToLower(h.Value), "chunked")
		case strings.EqualFold(h.Name, "Content-Encoding"):
			coding = strings.ToLower(strings.TrimSpace(h.Value))
		}
	}
	if chunked {
		if b, ok := dechunk(body); ok {
			body = b
		}
	}
	var zr io.Reader
	switch {
	case (coding == "gzip" || coding == "x-gzip") && strings.HasPrefix(body, "\x1f\x8b"):
		g, err := gzip.NewReader(strings.NewReader(body))
		if err != nil {
			return body
		}
		zr = g
	case coding == "deflate" && body[0] == 0x78:
		z, err := zlib.NewReader(strings.NewReader(body))
		if err != nil {
			return body
		}
		zr = z
	default:
		return body
	}
	out, _ := io.ReadAll(io.LimitReader(zr, ingest.MaxBodyBytes)) // a cut stream: what came before the cut
	if len(out) == 0 {
		return body
	}
	return string(out)
}

// dechunk joins the chunks of a chunked transfer ("1f4\r\n<data>\r\n...0\r\n");
// a body cut inside a chunk keeps what it has. false when body does not
// start with a chunk size line.
func dechunk(body string) (string, bool) {
	var b strings.Builder
	rest := body
	for first := true; rest != ""; first = false {
		line, after, ok := strings.Cut(rest, "\n")
		size, _, _ := strings.Cut(strings.TrimRight(line, "\r"), ";")
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if !ok || err != nil || n < 0 || len(size) > 16 {
			if first {
				return "", false
			}
			break
		}
		if n == 0 {
			break
		}
		if int64(len(after)) < n {
			b.WriteString(after)
			break
		}
		b.WriteString(after[:n])
		rest = strings.TrimPrefix(strings.TrimPrefix(after[n:], "\r"), "\n")
	}
	return b.String(), true
}

func (v *probeView) bannerText() string {
	if v.done&doneBanner == 0 {
		v.done |= doneBanner
		if b := v.p.Banner; b != nil {
			v.banner = b.Received.Text()
		}
	}
	return v.banner
}

func (v *probeView) sentText() string {
	if v.done&doneSent == 0 {
		v.done |= doneSent
		if b := v.p.Banner; b != nil {
			v.sent = b.Sent.Text()
		}
	}
	return v.sent
}

// titleText is the scanner's title, or the body's first <title>.
func (v *probeView) titleText() string {
	if v.done&doneTitle == 0 {
		v.done |= doneTitle
		if r := v.p.Response; r != nil {
			v.title = r.Title
			if v.title == "" {
				v.title = htmlTitle(v.bodyText())
			}
		}
	}
	return v.title
}

// htmlTitle returns the text of the first <title> element of an HTML
// page, trimmed, or "".
func htmlTitle(body string) string {
	i := indexFold(body, "<title")
	if i < 0 {
		return ""
	}
	rest := body[i+len("<title"):]
	gt := strings.IndexByte(rest, '>')
	if gt < 0 || (gt > 0 && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\n') {
		return ""
	}
	rest = rest[gt+1:]
	end := indexFold(rest, "</title")
	if end < 0 {
		end = min(len(rest), 512)
	}
	return strings.Join(strings.Fields(rest[:end]), " ")
}

func (v *probeView) cookieList() []cookie {
	if v.done&doneCookies == 0 {
		v.done |= doneCookies
		if r := v.p.Response; r != nil {
			for _, h := range r.Headers {
				if !strings.EqualFold(h.Name, "Set-Cookie") {
					continue
				}
				pair, _, _ := strings.Cut(h.Value, ";")
				name, value, _ := strings.Cut(pair, "=")
				v.cookies = append(v.cookies, cookie{strings.TrimSpace(name), strings.TrimSpace(value)})
			}
		}
	}
	return v.cookies
}

// eachHeader calls fn with each value of header name in hs until fn says true.
func eachHeader(hs []ingest.Header, name string, fn func(string) bool) bool {
	for i := range hs {
		if strings.EqualFold(hs[i].Name, name) && fn(hs[i].Value) {
			return true
		}
	}
	return false
}

// dnString is the whole name: the scanner's, or one made of the attributes.
func dnString(d *ingest.DN) string {
	if d == nil {
		return ""
	}
	if d.DN != "" {
		return d.DN
	}
	return d.Join(", ", true)
}

func eachDNAttr(d *ingest.DN, attr string, fn func(string) bool) bool {
	if d == nil {
		return false
	}
	one := func(s string) bool { return s != "" && fn(s) }
	switch attr {
	case "":
		// the whole DN, then each attribute on its own
		if one(dnString(d)) {
			return true
		}
		for _, a := range []string{"cn", "o", "ou", "c", "st", "l", "email"} {
			if eachDNAttr(d, a, fn) {
				return true
			}
		}
	case "cn":
		return one(d.CN)
	case "o":
		for _, s := range d.O {
			if one(s) {
				return true
			}
		}
	case "ou":
		for _, s := range d.OU {
			if one(s) {
				return true
			}
		}
	case "c":
		return one(d.C)
	case "st":
		return one(d.ST)
	case "l":
		return one(d.L)
	case "email":
		return one(d.Email)
	}
	return false
}

// gzipMTime reads the modification time in the header of gzip data
// (RFC 1952), as RFC 3339, or "".
func gzipMTime(data string) string {
	zr, err := gzip.NewReader(bytes.NewReader([]byte(data)))
	if err != nil || zr.ModTime.IsZero() {
		return ""
	}
	return zr.ModTime.UTC().Format(time.RFC3339)
}

func itoa(n int) string { return strconv.Itoa(n) }

// headerBlock is the response's headers as one block of "Name: value"
// lines (CRLF-separated, in order), the text nuclei's header part reads.
func (v *probeView) headerBlock() string {
	if v.done&doneHeaders == 0 {
		v.done |= doneHeaders
		if r := v.p.Response; r != nil {
			var b strings.Builder
			for _, h := range r.Headers {
				b.WriteString(h.Name)
				b.WriteString(": ")
				b.WriteString(h.Value)
				b.WriteString("\r\n")
			}
			v.headers = b.String()
		}
	}
	return v.headers
}

// literalSet returns the view's set of n literal marks, all false.
func (e *evidence) literalSet(n int) []bool {
	if cap(e.found) < n {
		e.found = make([]bool, n)
	}
	e.found = e.found[:n]
	clear(e.found)
	return e.found
}
