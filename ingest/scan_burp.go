package ingest

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// burpHost is Burp's <host ip="192.0.2.1">name</host>: in saved items
// the host name, in an issue report the origin ("https://vpn.example:8443").
type burpHost struct {
	IP   string `xml:"ip,attr"`
	Name string `xml:",chardata"`
}

// burpMessage is a raw request or response, base64 when the attribute
// says so (Burp's default; "Base64-encode requests and responses").
type burpMessage struct {
	Base64 string `xml:"base64,attr"`
	Data   string `xml:",chardata"`
}

// burpItem is one <item> of Burp's "Save items" XML (Proxy history,
// Target site map, Logger, Repeater).
type burpItem struct {
	Time     string      `xml:"time"`
	URL      string      `xml:"url"`
	Host     burpHost    `xml:"host"`
	Port     string      `xml:"port"`
	Protocol string      `xml:"protocol"`
	Request  burpMessage `xml:"request"`
	Response burpMessage `xml:"response"`
}

// burpIssue is one <issue> of Burp's scanner issue report XML ("Report
// selected issues", XML): its origin and the request/response pairs that
// show it.
type burpIssue struct {
	Name     string   `xml:"name"`
	Host     burpHost `xml:"host"`
	Path     string   `xml:"path"`
	Exchange []struct {
		Request  burpMessage `xml:"request"`
		Response burpMessage `xml:"response"`
	} `xml:"requestresponse"`
}

// Burp reads Burp Suite's XML: "Save items" (<items burpVersion><item>
// with url, host ip, port, protocol and the raw request and response) and
// the scanner's issue report (<issues><issue> with host ip and the
// <requestresponse> pairs that show each issue). Each raw exchange is an
// HTTP probe of the address Burp connected to (host's ip attribute, else
// the host when it is an IP literal; a host known by name only is counted
// as skipped with a warning: netintel does not resolve names): the
// request's method, path, query and headers without the client's
// credentials (Cookie, Authorization, ...; no body), and the response's
// status, reason, headers in order and body. Items and pairs of one
// address and port are one service. An item without a response (Burp
// saved a request that got none) is counted as skipped. Not read: the
// issues' names, details and remediation (the scanner's verdicts, not the
// server's answers), Burp's comments and highlights.
func Burp(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("burp")
	g := newServiceGroups()
	var exported time.Time
	root := ""
	items := 0
	err := xmlReport(&nulReplacer{r: r}, "burp", bad, func(dec *xml.Decoder, se *xml.StartElement, path []string, line int) (bool, error) {
		if len(path) == 0 {
			root = se.Name.Local
			if root != "items" && root != "issues" {
				return false, errNotBurp
			}
			for _, a := range se.Attr {
				if a.Name.Local == "exportTime" {
					exported = burpTime(a.Value)
				}
			}
			return false, nil
		}
		switch {
		case root == "items" && se.Name.Local == "item" && len(path) == 1:
			items++
			var it burpItem
			if err := dec.DecodeElement(&it, se); err != nil {
				l, _ := dec.InputPos()
				bad(LineError{l, fmt.Errorf("item %d: %w", items, err)})
				return true, errStop
			}
			it.read(line, items, opt, exported, g, bad)
			return true, nil
		case root == "issues" && se.Name.Local == "issue" && len(path) == 1:
			items++
			var is burpIssue
			if err := dec.DecodeElement(&is, se); err != nil {
				l, _ := dec.InputPos()
				bad(LineError{l, fmt.Errorf("issue %d: %w", items, err)})
				return true, errStop
			}
			is.read(line, items, opt, exported, g, bad)
			return true, nil
		}
		return false, nil
	})
	switch {
	case errors.Is(err, errNotBurp):
		bad(LineError{1, err})
		return nil
	case errors.Is(err, errStop):
	case err != nil:
		return err
	case root == "":
		bad(LineError{1, errNotBurp})
		return nil
	}
	return g.emit(src, opt, emit, bad)
}

var errNotBurp = errors.New("not a Burp Suite XML file: want <items> (Save items) or <issues> (issue report)")

// burpTime reads Burp's time stamps ("Sat Sep 30 20:11:32 IST 2023"); a
// zone abbreviation Go does not know is read as UTC.
func burpTime(s string) time.Time {
	t, err := time.Parse("Mon Jan _2 15:04:05 MST 2006", strings.Join(strings.Fields(s), " "))
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// bytes returns the message's bytes: base64-decoded when Burp encoded it.
func (m burpMessage) bytes() ([]byte, error) {
	if !strings.EqualFold(strings.TrimSpace(m.Base64), "true") {
		return []byte(m.Data), nil
	}
	d, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(m.Data), ""))
	if err != nil {
		return nil, errors.New("not base64 (base64=\"true\")")
	}
	return d, nil
}

// burpProbe builds the probe of one raw exchange; ok is false when the
// response is empty (no probe). An exchange whose response is not HTTP is
// kept as a banner.
func burpProbe(req, resp burpMessage, host string) (p Probe, ok bool, err error) {
	rb, err := resp.bytes()
	if err != nil {
		return p, false, fmt.Errorf("response: %w", err)
	}
	qb, err := req.bytes()
	if err != nil {
		return p, false, fmt.Errorf("request: %w", err)
	}
	if len(bytes.TrimSpace(rb)) == 0 {
		return p, false, nil
	}
	if q, ok := parseHTTPRequest(qb); ok {
		withoutCredentials(q)
		if q.Host == "" {
			q.Host = host
		}
		p.Request = q
	}
	if r, ok := parseHTTPResponse(rb); ok {
		p.Response = r
	} else {
		p.Banner = &Banner{Received: BytesBody(rb)}
	}
	return p, true, nil
}

// burpAddress is the address Burp connected to: the ip attribute, else
// the host when it is an IP literal; the zero Addr when neither is.
func burpAddress(h burpHost, hostname string) (netip.Addr, error) {
	if s := strings.TrimSpace(h.IP); s != "" {
		a, err := netip.ParseAddr(strings.Trim(s, "[]"))
		if err != nil {
			return a, fmt.Errorf("host ip: not an IP address: %q", clipForError(s, 200))
		}
		return a.Unmap().WithZone(""), nil
	}
	if a, err := netip.ParseAddr(strings.Trim(hostname, "[]")); err == nil {
		return a.Unmap().WithZone(""), nil
	}
	return netip.Addr{}, nil
}

func (it *burpItem) read(line, i int, opt Options, exported time.Time, g *serviceGroups, bad func(LineError)) {
	name := fmt.Sprintf("item %d (%s)", i, clipForError(strings.TrimSpace(it.URL), 200))
	hostname := strings.TrimSpace(it.Host.Name)
	ip, err := burpAddress(it.Host, hostname)
	if err != nil {
		bad(LineError{line, fmt.Errorf("%s: %w", name, err)})
		return
	}
	if !ip.IsValid() {
		opt.skip(line, "burp: item whose server is known by name only (no host ip; netintel does not resolve names)")
		opt.warn(line, name+": not read: no host ip and the host is a name (netintel does not resolve names)")
		return
	}
	port, err := strconv.Atoi(strings.TrimSpace(it.Port))
	if err != nil || port < 1 || port > 65535 {
		u, uerr := url.Parse(strings.TrimSpace(it.URL))
		if uerr != nil || u.Host == "" {
			bad(LineError{line, fmt.Errorf("%s: port: must be 1..65535, got %q (and no port in url)", name, clipForError(it.Port, 200))})
			return
		}
		if port, err = harPort(u, strings.ToLower(u.Scheme)); err != nil {
			bad(LineError{line, fmt.Errorf("%s: url: %w", name, err)})
			return
		}
	}
	p, ok, err := burpProbe(it.Request, it.Response, hostNameOnly(hostname))
	if err != nil {
		bad(LineError{line, fmt.Errorf("%s: %w", name, err)})
		return
	}
	if !ok {
		opt.skip(line, "burp: item without a response")
		return
	}
	at := burpTime(it.Time)
	if at.IsZero() {
		at = exported
	}
	g.add(line, ip.String(), port, hostNames(hostname), at, []Probe{p}, nil)
}

func (is *burpIssue) read(line, i int, opt Options, exported time.Time, g *serviceGroups, bad func(LineError)) {
	name := fmt.Sprintf("issue %d (%s at %s%s)", i, clipForError(strings.TrimSpace(is.Name), 200), clipForError(strings.TrimSpace(is.Host.Name), 200), clipForError(strings.TrimSpace(is.Path), 200))
	u, err := url.Parse(strings.TrimSpace(is.Host.Name))
	if err != nil || u.Host == "" {
		bad(LineError{line, fmt.Errorf("%s: host: not an origin (scheme://host[:port]): %q", name, clipForError(is.Host.Name, 200))})
		return
	}
	ip, err := burpAddress(is.Host, u.Hostname())
	if err != nil {
		bad(LineError{line, fmt.Errorf("%s: %w", name, err)})
		return
	}
	if !ip.IsValid() {
		opt.skip(line, "burp: issue whose server is known by name only (no host ip; netintel does not resolve names)")
		opt.warn(line, name+": not read: no host ip and the host is a name (netintel does not resolve names)")
		return
	}
	port, err := harPort(u, strings.ToLower(u.Scheme))
	if err != nil {
		bad(LineError{line, fmt.Errorf("%s: host: %w", name, err)})
		return
	}
	var probes []Probe
	for k, x := range is.Exchange {
		p, ok, err := burpProbe(x.Request, x.Response, hostNameOnly(u.Hostname()))
		if err != nil {
			bad(LineError{line, fmt.Errorf("%s: requestresponse %d: %w", name, k+1, err)})
			return
		}
		if ok {
			probes = append(probes, p)
		}
	}
	if len(probes) == 0 {
		opt.skip(line, "burp: issue without a response")
		return
	}
	g.add(line, ip.String(), port, hostNames(u.Hostname()), exported, probes, nil)
}

// hostNameOnly is h when it is a name, "" when it is an address.
func hostNameOnly(h string) string {
	h = strings.TrimSpace(h)
	if _, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		return ""
	}
	return strings.ToLower(h)
}

// nulReplacer reads a Burp export with each NUL byte as U+FFFD. Burp keeps
// the NUL bytes of raw requests and responses in its XML ("Any NULL bytes
// in requests and responses are preserved within this output, even though
// this strictly breaks the XML syntax", its export's own comment) unless
// they are base64-encoded, and encoding/xml stops at the first one
// ("illegal character code U+0000"), losing every item after it. The
// replacement marks where a NUL was; lines are unchanged.
type nulReplacer struct {
	r    io.Reader
	buf  []byte
	pend []byte
	err  error
}

func (n *nulReplacer) Read(p []byte) (int, error) {
	if len(n.pend) == 0 {
		if n.err != nil {
			err := n.err
			n.err = nil
			return 0, err
		}
		if n.buf == nil {
			n.buf = make([]byte, 32<<10)
		}
		k, err := n.r.Read(n.buf)
		n.err = err
		if k == 0 {
			n.err = nil
			return 0, err
		}
		n.pend = n.buf[:k]
		if bytes.IndexByte(n.pend, 0) >= 0 {
			n.pend = bytes.ReplaceAll(n.pend, []byte{0}, []byte("\uFFFD"))
		}
	}
	c := copy(p, n.pend)
	n.pend = n.pend[c:]
	return c, nil
}
