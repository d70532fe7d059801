package ingest

import (
	"encoding/json"
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

// zapInstance is one instance of a ZAP alert: the message that showed
// it. Only the "plus" reports (Traditional XML Report with Requests and
// Responses, traditional-xml-plus; its JSON twin, traditional-json-plus)
// carry the request and response; the plain reports have the URI and
// the evidence string alone.
type zapInstance struct {
	URI            string `xml:"uri" json:"uri"`
	Method         string `xml:"method" json:"method"`
	RequestHeader  string `xml:"requestheader" json:"request-header"`
	ResponseHeader string `xml:"responseheader" json:"response-header"`
	ResponseBody   string `xml:"responsebody" json:"response-body"`
}

// zapSite is one <site> (JSON: site[]) of a ZAP report.
type zapSite struct {
	Name   string `xml:"name,attr" json:"@name"`
	Host   string `xml:"host,attr" json:"@host"`
	Port   string `xml:"port,attr" json:"@port"`
	SSL    string `xml:"ssl,attr" json:"@ssl"`
	Alerts []struct {
		Instances []zapInstance `xml:"instances>instance" json:"instances"`
	} `xml:"alerts>alertitem" json:"alerts"`
}

// ZAP reads OWASP ZAP's reports that carry the exchanges: the
// Traditional XML Report with Requests and Responses (<OWASPZAPReport>
// with <requestheader>, <responseheader>, <responsebody> per instance)
// and the Traditional JSON Report with Requests and Responses. Each
// instance's response (status line and headers in order, body) is an
// HTTP probe of the site, with its request (method, path, headers
// without the client's credentials, no body); an exchange shown by
// several alerts is kept once. ZAP records no address: a site whose host
// is a name is counted as skipped with a warning (netintel does not
// resolve names; export the session as HAR, whose entries carry
// serverIPAddress, or scan the address). The plain reports (no
// exchanges: the alert's evidence string alone) have nothing of the
// server's answer to keep; their instances are counted as skipped.
// Not read: the alerts themselves (ZAP's verdicts), param, attack,
// evidence, otherinfo.
func ZAP(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("zap")
	br, first, err := peekFirstByte(r, "zap")
	if err != nil {
		return err
	}
	g := newServiceGroups()
	switch first {
	case '<':
		err = zapXML(br, opt, g, bad)
	case '{':
		err = zapJSON(br, opt, g, bad)
	case 0:
		return nil
	default:
		bad(LineError{1, errNotZAP})
		return nil
	}
	if err != nil {
		return err
	}
	return g.emit(src, opt, emit, bad)
}

var errNotZAP = errors.New("not a ZAP report: want <OWASPZAPReport> (traditional-xml-plus) or its JSON (traditional-json-plus)")

func zapXML(r io.Reader, opt Options, g *serviceGroups, bad func(LineError)) error {
	var at time.Time
	sawRoot := false
	err := xmlReport(r, "zap", bad, func(dec *xml.Decoder, se *xml.StartElement, path []string, line int) (bool, error) {
		switch {
		case len(path) == 0:
			if se.Name.Local != "OWASPZAPReport" {
				return false, errNotZAP
			}
			sawRoot = true
			for _, a := range se.Attr {
				if a.Name.Local == "created" || (a.Name.Local == "generated" && at.IsZero()) {
					if t := zapTime(a.Value); !t.IsZero() {
						at = t
					}
				}
			}
		case se.Name.Local == "site":
			var s zapSite
			if err := dec.DecodeElement(&s, se); err != nil {
				l, _ := dec.InputPos()
				bad(LineError{l, fmt.Errorf("site: %w", err)})
				return true, errStop
			}
			s.read(line, at, opt, g, bad)
			return true, nil
		}
		return false, nil
	})
	return endXMLReport(err, sawRoot, errNotZAP, bad, errNotZAP)
}

func zapJSON(r io.Reader, opt Options, g *serviceGroups, bad func(LineError)) error {
	data, err := readJSONFeed(r, "zap")
	if err != nil {
		return err
	}
	return jsonValues(data, bad, func(n int, v json.RawMessage, _ bool) error {
		var rep struct {
			Program   string    `json:"@programName"`
			Generated string    `json:"@generated"`
			Created   string    `json:"created"`
			Site      []zapSite `json:"site"`
		}
		if err := scanUnmarshal(v, &rep); err != nil {
			bad(LineError{n, fmt.Errorf("json: %w", err)})
			return nil
		}
		if rep.Site == nil && rep.Program == "" {
			bad(LineError{n, errNotZAP})
			return nil
		}
		at := zapTime(rep.Created)
		if at.IsZero() {
			at = zapTime(rep.Generated)
		}
		for i := range rep.Site {
			rep.Site[i].read(n, at, opt, g, bad)
		}
		return nil
	})
}

// zapTime reads the report's created (RFC 3339, ZAP 2.15 on) or
// generated time ("Wed, 22 Oct 2025 17:09:39", the ZAP host's local time,
// read as UTC; a localised one is not read).
func zapTime(s string) time.Time {
	if t := scanTime(s); !t.IsZero() {
		return t
	}
	t, err := time.Parse("Mon, 2 Jan 2006 15:04:05", strings.TrimSpace(s))
	if err != nil {
		return time.Time{}
	}
	return t
}

func (s *zapSite) read(line int, at time.Time, opt Options, g *serviceGroups, bad func(LineError)) {
	name := fmt.Sprintf("site %q", clipForError(s.Name, 200))
	var exchanges, plain int
	for _, a := range s.Alerts {
		for _, in := range a.Instances {
			if strings.TrimSpace(in.ResponseHeader) == "" {
				plain++
			} else {
				exchanges++
			}
		}
	}
	for range plain {
		opt.skip(line, "zap: alert instance without its response (a plain report; the -plus reports and HAR carry the exchange)")
	}
	if exchanges == 0 {
		return
	}
	host := strings.Trim(strings.TrimSpace(s.Host), "[]")
	ip, err := netip.ParseAddr(host)
	if err != nil {
		for range exchanges {
			opt.skip(line, "zap: exchange with a site known by name only (ZAP records no address; netintel does not resolve names)")
		}
		opt.warn(line, name+": not read: the host is a name and ZAP's report carries no address (export HAR for serverIPAddress)")
		return
	}
	port, err := strconv.Atoi(strings.TrimSpace(s.Port))
	if err != nil || port < 1 || port > 65535 {
		bad(LineError{line, fmt.Errorf("%s: port: must be 1..65535, got %q", name, clipForError(s.Port, 200))})
		return
	}
	seen := map[string]bool{}
	var probes []Probe
	for k, a := range s.Alerts {
		for j, in := range a.Instances {
			if strings.TrimSpace(in.ResponseHeader) == "" {
				continue
			}
			key := in.Method + " " + in.URI + "\n" + in.ResponseHeader + in.ResponseBody
			if seen[key] {
				continue
			}
			seen[key] = true
			resp, ok := parseHTTPResponse([]byte(dedent(in.ResponseHeader)))
			if !ok {
				bad(LineError{line, fmt.Errorf("%s: alert %d instance %d: responseheader: not an HTTP status line and headers", name, k+1, j+1)})
				continue
			}
			resp.Body = nil
			if in.ResponseBody != "" {
				resp.Body = BytesBody([]byte(in.ResponseBody))
			}
			q, ok := parseHTTPRequest([]byte(dedent(in.RequestHeader)))
			if !ok {
				q = &Request{Method: strings.ToUpper(in.Method), Path: pathOf(in.URI)}
			}
			withoutCredentials(q)
			if u, err := url.Parse(in.URI); err == nil && q.Host == "" {
				q.Host = hostNameOnly(u.Hostname())
			}
			probes = append(probes, Probe{Request: q, Response: resp})
		}
	}
	if len(probes) > 0 {
		g.add(line, ip.Unmap().String(), port, nil, at, probes, nil)
	}
}

// dedent removes the indentation a re-indented report puts before each
// header line, and the blank lines before the first.
func dedent(s string) string {
	lines := strings.Split(strings.TrimLeft(s, " \t\r\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, " \t")
	}
	return strings.Join(lines, "\n")
}
