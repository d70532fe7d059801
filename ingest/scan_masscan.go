package ingest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Masscan reads masscan's -oJ and -oL output (the format is told by the
// first record), with or without --banners.
//
// -oJ is a JSON array written one object per line: "[" and "]" on lines
// of their own, the comma between records on a line of its own (masscan
// 1.0.6 and later) or after each record (before), and "{finished: 1}" as
// the last record (before 1.0.4); all of these are read. -oL has lines
// "open tcp 443 192.0.2.1 1700000000" and "banner tcp 80 192.0.2.1
// 1700000000 http <banner>", "#" lines being comments.
//
// Banners are unescaped as masscan escapes them (\u00XX in -oJ, \xHH in
// -oL). Records of one address, port and transport that follow each
// other make one observation (masscan writes a port's open line and its
// banners together when it reads them back with --readscan; a live scan
// may interleave them, and then each is its own observation), observed
// at the latest of their times. An open port without banners is a
// service with no probes; an "http" banner that reads as an HTTP response
// is a probe with that response, its "title" banner that response's title;
// "ssl" and "X509" banners are a TLS probe (the certificate read with
// crypto/x509; the version and cipher from the ssl banner, whose text is
// kept as the probe's banner); a certificate that does not parse (masscan
// cuts long banners) and every other banner are a banner probe named for
// masscan's service name. Ports of other protocols (icmp, sctp) and
// closed ports are counted through Options.Skipped.
func Masscan(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("masscan")
	var cur *masscanGroup
	flush := func() error {
		if cur == nil {
			return nil
		}
		g := cur
		cur = nil
		return emitChecked(g.line, g.observation(src, opt), emit, bad)
	}
	err := opt.lines(r, "masscan", bad, func(n int, b []byte) error {
		recs, ok, err := masscanRecords(b)
		if !ok {
			return nil
		}
		if errors.Is(err, errNmapXMLAsMasscan) {
			bad(LineError{n, err})
			return errStop // the rest is nmap's too
		}
		if err != nil {
			bad(LineError{n, err})
			return nil
		}
		for _, rec := range recs {
			if rec.transport != "tcp" && rec.transport != "udp" {
				opt.skip(n, "masscan: not a tcp or udp port ("+rec.transport+")")
				continue
			}
			if rec.status != "" && rec.status != "open" {
				opt.skip(n, "masscan: port "+rec.status)
				continue
			}
			if rec.port < 1 || rec.port > 65535 {
				bad(LineError{n, fmt.Errorf("port %d out of range", rec.port)})
				continue
			}
			if cur != nil && (cur.ip != rec.ip || cur.port != rec.port || cur.transport != rec.transport) {
				if err := flush(); err != nil {
					return err
				}
			}
			if cur == nil {
				cur = &masscanGroup{line: n, ip: rec.ip, port: rec.port, transport: rec.transport}
			}
			if rec.at.After(cur.at) {
				cur.at = rec.at
			}
			if rec.service != "" || rec.banner != nil {
				cur.banners = append(cur.banners, rec)
			}
		}
		return nil
	})
	if errors.Is(err, errStop) {
		return nil
	}
	if err != nil {
		return err
	}
	return flush()
}

// errNmapXMLAsMasscan stops a masscan read of nmap's XML at its root.
var errNmapXMLAsMasscan = errors.New("nmap's XML, not masscan's (<nmaprun> without scanner=\"masscan\"): use --format nmap-xml")

type masscanRecord struct {
	ip, transport, status, service string
	port                           int
	at                             time.Time
	banner                         []byte
}

// masscanRecords reads one line of -oJ or -oL; ok is false for a line
// that holds no record (framing, comments, blank).
func masscanRecords(b []byte) (recs []masscanRecord, ok bool, err error) {
	line := bytes.TrimSpace(b)
	line = bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimPrefix(line, []byte{','}), []byte{','}))
	switch {
	case len(line) == 0, line[0] == '#', string(line) == "[", string(line) == "]":
		return nil, false, nil
	case bytes.HasPrefix(line, []byte("{finished:")), bytes.HasPrefix(line, []byte(`{"finished":`)):
		return nil, false, nil
	case line[0] == '{':
		return masscanJSON(line)
	case bytes.HasPrefix(line, []byte("Timestamp: ")), bytes.HasPrefix(line, []byte("Host: ")):
		return masscanGrepable(string(line))
	case bytes.HasPrefix(line, []byte("<host ")), bytes.HasPrefix(line, []byte("<host>")):
		return masscanXMLHost(line)
	case bytes.HasPrefix(line, []byte("<nmaprun")) && !bytes.Contains(line, []byte(`scanner="masscan"`)):
		return nil, true, errNmapXMLAsMasscan
	case line[0] == '<':
		return nil, false, nil // the XML output's framing: <?xml, <nmaprun, <scaninfo, <runstats, ...
	}
	return masscanList(string(b))
}

// masscanGrepable reads a line of masscan's -oG output: a port's status,
// "Timestamp: T<TAB>Host: IP ()<TAB>Ports: PORT/STATE/PROTO//SERVICE//",
// or a banner, "Host: IP ()<TAB>Port: PORT<TAB>Service: S<TAB>Banner: B"
// (no time, no protocol: masscan's banners are TCP but for the UDP
// services it probes, DNS, SNMP, NetBIOS, NTP and memcached).
func masscanGrepable(line string) ([]masscanRecord, bool, error) {
	fields := map[string]string{}
	for _, f := range strings.Split(line, "\t") {
		if k, v, ok := strings.Cut(f, ": "); ok {
			fields[k] = v
		}
	}
	ip, _, _ := strings.Cut(fields["Host"], " ")
	if ip == "" {
		return nil, true, errors.New("masscan -oG: no Host")
	}
	if ports, ok := fields["Ports"]; ok {
		at := unixTime(fields["Timestamp"])
		if at.IsZero() {
			return nil, true, fmt.Errorf("masscan -oG: Timestamp %q: not Unix seconds", fields["Timestamp"])
		}
		f := strings.Split(ports, "/")
		if len(f) < 3 {
			return nil, true, fmt.Errorf("masscan -oG: Ports %q: want PORT/STATE/PROTO//SERVICE//", ports)
		}
		port, err := strconv.Atoi(f[0])
		if err != nil {
			return nil, true, fmt.Errorf("masscan -oG: port %q: not a number", f[0])
		}
		return []masscanRecord{{ip: ip, transport: strings.ToLower(f[2]), port: port, at: at, status: f[1]}}, true, nil
	}
	port, err := strconv.Atoi(fields["Port"])
	if err != nil {
		return nil, true, fmt.Errorf("masscan -oG: Port %q: not a number", fields["Port"])
	}
	svc := fields["Service"]
	transport := "tcp"
	switch strings.ToLower(svc) {
	case "dns", "snmp", "netbios", "ntp", "memcached":
		transport = "udp"
	}
	b := ""
	if i := strings.Index(line, "\tBanner: "); i >= 0 {
		b = line[i+len("\tBanner: "):]
	}
	return []masscanRecord{{ip: ip, transport: transport, port: port, service: svc, banner: unescapeHex(b)}}, true, nil
}

// masscanXMLHost reads one <host> element of masscan's -oX output, which
// writes each open port, and each banner, as a host element on a line of
// its own: <host endtime><address addr/><ports><port protocol portid>
// <state state/><service name banner/></port></ports></host>. The banner
// is escaped as in -oL (\xNN).
func masscanXMLHost(line []byte) ([]masscanRecord, bool, error) {
	var h struct {
		EndTime string `xml:"endtime,attr"`
		Address struct {
			Addr string `xml:"addr,attr"`
		} `xml:"address"`
		Ports []struct {
			Protocol string `xml:"protocol,attr"`
			PortID   string `xml:"portid,attr"`
			State    struct {
				State string `xml:"state,attr"`
			} `xml:"state"`
			Service *struct {
				Name   string `xml:"name,attr"`
				Banner string `xml:"banner,attr"`
			} `xml:"service"`
		} `xml:"ports>port"`
	}
	if err := xml.Unmarshal(line, &h); err != nil {
		return nil, true, fmt.Errorf("masscan -oX host: %w", err)
	}
	at := unixTime(h.EndTime)
	if at.IsZero() {
		return nil, true, fmt.Errorf("masscan -oX host: endtime %q: not Unix seconds", h.EndTime)
	}
	var recs []masscanRecord
	for _, p := range h.Ports {
		port, err := strconv.Atoi(p.PortID)
		if err != nil {
			return nil, true, fmt.Errorf("masscan -oX host: portid %q: not a number", p.PortID)
		}
		rec := masscanRecord{ip: h.Address.Addr, transport: strings.ToLower(p.Protocol), port: port, at: at, status: p.State.State}
		if p.Service != nil {
			rec.status, rec.service, rec.banner = "", p.Service.Name, unescapeHex(p.Service.Banner)
		}
		recs = append(recs, rec)
	}
	return recs, true, nil
}

func masscanJSON(line []byte) ([]masscanRecord, bool, error) {
	var j struct {
		IP        string          `json:"ip"`
		Timestamp json.RawMessage `json:"timestamp"`
		Ports     []struct {
			Port    int    `json:"port"`
			Proto   string `json:"proto"`
			Status  string `json:"status"`
			Service *struct {
				Name   string `json:"name"`
				Banner string `json:"banner"`
			} `json:"service"`
		} `json:"ports"`
	}
	if err := scanUnmarshal(line, &j); err != nil {
		return nil, true, fmt.Errorf("json: %w", err)
	}
	if j.IP == "" || len(j.Ports) == 0 {
		return nil, true, errors.New(`not a masscan record: want "ip" and "ports"`)
	}
	ts := strings.Trim(string(j.Timestamp), `"`)
	var out []masscanRecord
	for _, p := range j.Ports {
		rec := masscanRecord{ip: j.IP, transport: strings.ToLower(p.Proto), status: p.Status, port: p.Port, at: unixTime(ts)}
		if s := p.Service; s != nil {
			rec.service = s.Name
			b, ok := runesToBytes(s.Banner)
			if !ok {
				b = []byte(s.Banner)
			}
			rec.banner = b
		}
		out = append(out, rec)
	}
	return out, true, nil
}

func masscanList(line string) ([]masscanRecord, bool, error) {
	line = strings.TrimRight(line, "\r\n")
	f := strings.SplitN(line, " ", 7)
	if len(f) < 5 || (f[0] == "banner" && len(f) < 6) {
		return nil, true, errors.New("not a masscan -oL line: want STATE PROTO PORT IP TIME")
	}
	port, err := strconv.Atoi(f[2])
	if err != nil {
		return nil, true, fmt.Errorf("port %q: not a number", f[2])
	}
	at := unixTime(f[4])
	if at.IsZero() {
		return nil, true, fmt.Errorf("time %q: not Unix seconds", f[4])
	}
	rec := masscanRecord{ip: f[3], transport: strings.ToLower(f[1]), port: port, at: at}
	if f[0] == "banner" {
		rec.service = f[5]
		rec.banner = []byte{}
		if len(f) == 7 {
			rec.banner = unescapeHex(f[6])
		}
	} else {
		rec.status = f[0]
	}
	return []masscanRecord{rec}, true, nil
}

type masscanGroup struct {
	line      int
	ip        string
	port      int
	transport string
	at        time.Time
	banners   []masscanRecord
}

func (g *masscanGroup) observation(src string, opt Options) Observation {
	s := &Service{Port: g.port, Transport: g.transport}
	var titles []string
	var probes []Probe
	add := func(p Probe) { probes = append(probes, p) }
	// Indexes, not pointers, survive appends.
	httpAt, tlsAt := -1, -1
	for _, b := range g.banners {
		switch strings.ToLower(b.service) {
		case "http":
			if resp, ok := parseHTTPResponse(b.banner); ok && httpAt < 0 {
				add(Probe{Name: "http", Request: &Request{Method: "GET", Path: "/"}, Response: resp})
				httpAt = len(probes) - 1
				continue
			}
		case "title":
			titles = append(titles, latin1(b.banner))
			continue
		case "ssl":
			t := masscanSSL(string(b.banner))
			if tlsAt < 0 {
				add(Probe{Name: "ssl", TLS: t})
				tlsAt = len(probes) - 1
			} else if probes[tlsAt].TLS.Version == "" {
				probes[tlsAt].TLS.Version, probes[tlsAt].TLS.Cipher = t.Version, t.Cipher
			}
			probes[tlsAt].Banner = &Banner{Received: BytesBody(b.banner)}
			continue
		case "x509":
			if der, err := base64.StdEncoding.DecodeString(string(b.banner)); err == nil {
				if t, err := certTLS(der); err == nil {
					if tlsAt < 0 {
						add(Probe{Name: "ssl", TLS: t})
						tlsAt = len(probes) - 1
					} else if probes[tlsAt].TLS.SHA256 == "" {
						old := probes[tlsAt].TLS
						t.Version, t.Cipher = old.Version, old.Cipher
						probes[tlsAt].TLS = t
					}
					continue
				}
			}
		}
		add(Probe{Name: b.service, Banner: &Banner{Received: BytesBody(b.banner)}})
	}
	for _, t := range titles {
		if httpAt >= 0 && probes[httpAt].Response.Title == "" {
			probes[httpAt].Response.Title = t
			continue
		}
		add(Probe{Name: "title", Response: &Response{Title: t}})
	}
	if httpAt >= 0 && tlsAt >= 0 && probes[httpAt].TLS == nil && probes[tlsAt].TLS != nil {
		// The certificate is the one the HTTPS exchange ran over.
		probes[httpAt].TLS = probes[tlsAt].TLS
	}
	s.Probes = probes
	for _, b := range g.banners {
		name := strings.ToLower(b.service)
		if name == "title" || name == "http.server" || name == "html" || name == "unknown" {
			continue
		}
		if name == "x509" || name == "x509ca" {
			name = "ssl"
		}
		s.Detected = &Detected{By: "masscan", Service: name}
		break
	}
	return Observation{Type: TypeService, IP: g.ip, Source: src, ObservedAt: opt.when(g.at), Service: s}
}

// masscanSSL reads masscan's ssl banner: "TLS/1.1 cipher:0xc013, name, ...".
func masscanSSL(s string) *TLS {
	t := &TLS{}
	head, _, _ := strings.Cut(s, ",")
	f := strings.Fields(head)
	for _, w := range f {
		switch {
		case strings.HasPrefix(w, "TLS/"):
			t.Version = "TLSv" + strings.TrimPrefix(w, "TLS/")
		case strings.HasPrefix(w, "SSL/"):
			t.Version = "SSLv" + strings.TrimPrefix(w, "SSL/")
		case strings.HasPrefix(w, "cipher:"):
			if v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(w, "cipher:"), "0x"), 16, 32); err == nil {
				t.Cipher = cipherName(v)
			}
		}
	}
	return t
}
