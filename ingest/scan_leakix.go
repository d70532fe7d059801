package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// jsonRecords reads the records of a scanner's JSON output, whichever way
// it was saved: JSON lines (read a line at a time), or documents read
// whole (up to maxJSONFeed: one pretty-printed document, several one
// after the other, or an array), through jsonWalk. each gets every
// object with the line it starts on; a top-level array is unwrapped, and
// so is an object with any of the members wrappers names (an API
// answer's "results"): their arrays hold the records, element by
// element, so a cut file keeps those before the cut. A document that
// does not parse is reported and reading resumes at the next line that
// starts one.
func (o Options) jsonRecords(r io.Reader, what string, bad func(LineError), wrappers []string, each func(line int, rec []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	first, err := readFirstLine(br, o.maxLine())
	if err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	r = io.MultiReader(bytes.NewReader(first), br)
	walk := jsonWalk{what: what, wrappers: wrappers}
	rec := func(line int, rec json.RawMessage, _ bool) error { return each(line, rec) }
	// (a byte-order mark before the first line does not make JSON lines a
	// document: jsonWalk drops it)
	if t := bytes.TrimSpace(bytes.TrimPrefix(first, []byte("\ufeff"))); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return o.nonBlankLines(r, what, bad, func(n int, line []byte) error {
			if line[0] == '{' && !slices.ContainsFunc(wrappers, func(k string) bool { return bytes.Contains(line, []byte(`"`+k+`"`)) }) {
				return each(n, line) // a record a line: no wrapper to look for
			}
			return walk.walk(line, n, bad, rec)
		})
	}
	data, err := readJSONFeed(r, what)
	if err != nil {
		return err
	}
	walk.resync = true
	return walk.walk(data, 1, bad, rec)
}

// leakixEvent is one LeakIX l9format event (L9Event of
// github.com/LeakIX/l9format; its Python port adds ssh details and the
// ftp, smtp, telnet ... members). port is a string in l9format, a
// number in some exports: both are read.
type leakixEvent struct {
	EventType   string   `json:"event_type"`
	EventSource string   `json:"event_source"`
	IP          string   `json:"ip"`
	Host        string   `json:"host"`
	Reverse     string   `json:"reverse"`
	Port        any      `json:"port"`
	Transport   []string `json:"transport"`
	Protocol    string   `json:"protocol"`
	Summary     string   `json:"summary"`
	Time        string   `json:"time"`
	Tags        []string `json:"tags"`
	HTTP        *struct {
		Root    string            `json:"root"`
		URL     string            `json:"url"`
		Status  int               `json:"status"`
		Length  int64             `json:"length"`
		Header  map[string]string `json:"header"`
		Title   string            `json:"title"`
		Favicon string            `json:"favicon_hash"`
	} `json:"http"`
	SSL *struct {
		Detected    bool   `json:"detected"`
		Enabled     bool   `json:"enabled"`
		JARM        string `json:"jarm"`
		CypherSuite string `json:"cypher_suite"`
		Version     string `json:"version"`
		Certificate struct {
			CN          string   `json:"cn"`
			Domains     []string `json:"domain"`
			Fingerprint string   `json:"fingerprint"`
			IssuerName  string   `json:"issuer_name"`
			NotBefore   string   `json:"not_before"`
			NotAfter    string   `json:"not_after"`
		} `json:"certificate"`
	} `json:"ssl"`
	SSH *struct {
		Banner string `json:"banner"`
	} `json:"ssh"`
	FTP    *leakixBanner `json:"ftp"`
	SMTP   *leakixBanner `json:"smtp"`
	Telnet *leakixBanner `json:"telnet"`
	// Service's credentials are never read: they are a leak's secrets.
	Service *struct {
		Software struct {
			Name    string `json:"name"`
			Version string `json:"version"`
			OS      string `json:"os"`
			Modules []struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"modules"`
		} `json:"software"`
	} `json:"service"`
	Leak *struct {
		Type     string `json:"type"`
		Severity string `json:"severity"`
	} `json:"leak"`
	Network *struct {
		Organization string `json:"organization_name"`
		ASN          int64  `json:"asn"`
	} `json:"network"`
}

type leakixBanner struct {
	Banner string `json:"banner"`
}

// LeakIX reads LeakIX's l9format events: the leakix client's -j lines,
// a search answer's array, the host answer ({"Services": [...], "Leaks":
// [...]}), or one pretty-printed event. Each event with an address and a
// port is one service observation (docs/ingest-enrich.md says what is
// kept).
func LeakIX(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("leakix")
	wrappers := []string{"Services", "Leaks", "services", "leaks", "events"}
	return opt.jsonRecords(r, "leakix", bad, wrappers, func(n int, rec []byte) error {
		var e leakixEvent
		if err := scanUnmarshal(rec, &e); err != nil {
			bad(LineError{n, fmt.Errorf("json: %w", err)})
			return nil
		}
		if e.IP == "" || e.EventType == "" && e.EventSource == "" {
			bad(LineError{n, errors.New(`not a LeakIX event: want "ip", "port" and "event_type"`)})
			return nil
		}
		o, err := e.observation(src, opt)
		return emitBuilt(n, o, err, emit, bad)
	})
}

func (e *leakixEvent) observation(src string, opt Options) (Observation, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(e.IP))
	if err != nil {
		return Observation{}, fmt.Errorf("ip: not an IP address: %q", e.IP)
	}
	port, err := scanPort(e.Port)
	if err != nil {
		return Observation{}, err
	}
	o := Observation{Type: TypeService, IP: a.Unmap().String(), Source: src, ObservedAt: opt.when(zeroless(scanTime(e.Time)))}
	o.Hostnames = hostNames(e.Host, e.Reverse)
	transport := "tcp"
	if slices.Contains(e.Transport, "udp") {
		transport = "udp"
	}
	s := &Service{Port: port, Transport: transport, Probes: e.probes()}
	s.Detected = e.detected()
	o.Service = s
	if n := e.Network; n != nil {
		o.Claims = opt.scanClaim("leakix", n.Organization, strconv.FormatInt(n.ASN, 10))
	}
	return o, nil
}

// zeroless is t, or no time when t is Go's zero time as l9format writes
// it ("0001-01-01T00:00:00Z").
func zeroless(t time.Time) time.Time {
	if t.Year() <= 1 {
		return time.Time{}
	}
	return t
}

// isHTTP says the event is of a web service.
func (e *leakixEvent) isHTTP() bool {
	p := strings.ToLower(e.Protocol)
	return p == "http" || p == "https" || p == "web" || slices.Contains(e.Transport, "http") || e.HTTP != nil && e.HTTP.Status > 0
}

// probes: the HTTP exchange (the summary when it is the raw response,
// else the http member's status, headers and title) with the TLS under
// it; a banner (ssh, ftp, smtp, telnet, else the summary of a service
// that is not HTTP); the TLS alone on a service that is not HTTP.
func (e *leakixEvent) probes() []Probe {
	t := e.tls()
	var probes []Probe
	if e.isHTTP() {
		p := Probe{TLS: t}
		if resp, ok := parseHTTPResponse([]byte(e.Summary)); ok {
			p.Response = resp
		} else if h := e.HTTP; h != nil && (h.Status > 0 || len(h.Header) > 0 || h.Title != "") {
			p.Response = &Response{Status: h.Status, Title: h.Title, Headers: headersOfMap(h.Header)}
		}
		if p.Response != nil {
			path := "/"
			if e.HTTP != nil && e.HTTP.URL != "" {
				path = pathOf(e.HTTP.URL)
			}
			host := e.Host
			if _, err := netip.ParseAddr(host); err == nil {
				host = ""
			}
			p.Request = &Request{Method: "GET", Path: path, Host: host}
		}
		if p.Response != nil || p.TLS != nil {
			probes = append(probes, p)
		}
		return probes
	}
	banner := ""
	for _, b := range []*leakixBanner{e.FTP, e.SMTP, e.Telnet} {
		if b != nil && banner == "" {
			banner = b.Banner
		}
	}
	if e.SSH != nil && banner == "" {
		banner = e.SSH.Banner
	}
	if banner == "" {
		banner = e.Summary
	}
	if banner != "" {
		probes = append(probes, Probe{Name: "leakix:" + strings.ToLower(e.Protocol), Banner: &Banner{Received: BytesBody([]byte(banner))}})
	}
	if t != nil {
		probes = append(probes, Probe{TLS: t})
	}
	return probes
}

// tls reads the ssl member: version, cipher, jarm, and the certificate's
// common name, names, issuer name, SHA-256 fingerprint and validity.
func (e *leakixEvent) tls() *TLS {
	s := e.SSL
	if s == nil {
		return nil
	}
	c := s.Certificate
	t := &TLS{Version: s.Version, Cipher: s.CypherSuite, JARM: s.JARM, SANs: c.Domains}
	if c.CN != "" {
		t.Subject = &DN{CN: c.CN}
	}
	if c.IssuerName != "" {
		// l9format keeps the issuer's name alone: its common name.
		t.Issuer = &DN{CN: c.IssuerName}
	}
	if f := strings.ToLower(c.Fingerprint); isHex(f, 64) {
		t.SHA256 = f
	}
	if tm := zeroless(scanTime(c.NotBefore)); !tm.IsZero() {
		t.NotBefore = tm.UTC().Format(time.RFC3339)
	}
	if tm := zeroless(scanTime(c.NotAfter)); !tm.IsZero() {
		t.NotAfter = tm.UTC().Format(time.RFC3339)
	}
	if t.empty() {
		return nil
	}
	return t
}

// detected: the protocol, the software LeakIX identified (name, version,
// os and modules), the plugin that reported the event and its tags.
func (e *leakixEvent) detected() *Detected {
	d := &Detected{By: "leakix", Service: strings.ToLower(e.Protocol)}
	var info []string
	if sv := e.Service; sv != nil {
		d.Product, d.Version = sv.Software.Name, sv.Software.Version
		if sv.Software.OS != "" {
			info = append(info, "os: "+sv.Software.OS)
		}
		var mods []string
		for _, m := range sv.Software.Modules {
			mods = append(mods, strings.TrimSpace(m.Name+" "+m.Version))
		}
		if len(mods) > 0 {
			info = append(info, "modules: "+strings.Join(mods, ", "))
		}
	}
	if e.EventSource != "" {
		info = append(info, "plugin: "+e.EventSource)
	}
	if l := e.Leak; l != nil && l.Type != "" {
		info = append(info, "leak: "+strings.TrimSpace(l.Type+" "+l.Severity))
	}
	if len(e.Tags) > 0 {
		info = append(info, "tags: "+strings.Join(e.Tags, ","))
	}
	d.Info = strings.Join(info, "; ")
	if d.Service == "" && d.Product == "" && d.Info == "" {
		return nil
	}
	return d
}
