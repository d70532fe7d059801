package ingest

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
)

// zoomeyeRecord is one ZoomEye asset: a v1 host search match (ip,
// portinfo {...}, geoinfo {...}, protocol {...}, timestamp) or a v2
// search datum, whose members are flat and named with dots ("ssl.jarm",
// "organization.name"). ip is a string, or a list for a web asset; port
// and asn a number or a string.
type zoomeyeRecord struct {
	IP        any    `json:"ip"`
	Timestamp string `json:"timestamp"`
	Portinfo  *struct {
		Port      any    `json:"port"`
		Service   string `json:"service"`
		Banner    string `json:"banner"`
		App       string `json:"app"`
		Product   string `json:"product"`
		Version   string `json:"version"`
		Device    string `json:"device"`
		OS        string `json:"os"`
		ExtraInfo string `json:"extrainfo"`
		Hostname  string `json:"hostname"`
		RDNS      string `json:"rdns"`
		Title     any    `json:"title"`
	} `json:"portinfo"`
	Geoinfo *struct {
		ASN          any    `json:"asn"`
		Organization string `json:"organization"`
		ISP          string `json:"isp"`
	} `json:"geoinfo"`
	// Protocol is v1's object (application, transport, probe) or v2's
	// transport name ("tcp").
	Protocol any `json:"protocol"`
	// SSL is the certificate as ZoomEye prints it (text).
	SSL any `json:"ssl"`

	// v2 members.
	URL           string `json:"url"`
	Port          any    `json:"port"`
	Domain        string `json:"domain"`
	Hostname      string `json:"hostname"`
	RDNS          string `json:"rdns"`
	OS            string `json:"os"`
	Service       string `json:"service"`
	Title         any    `json:"title"`
	Product       string `json:"product"`
	Version       string `json:"version"`
	Device        string `json:"device"`
	Header        string `json:"header"`
	Body          string `json:"body"`
	Banner        string `json:"banner"`
	UpdateTime    string `json:"update_time"`
	ServerName    string `json:"header.server.name"`
	ServerVersion string `json:"header.server.version"`
	Organization  string `json:"organization.name"`
	ISP           string `json:"isp.name"`
	ASN           any    `json:"asn"`
	JARM          string `json:"ssl.jarm"`
	JA3S          string `json:"ssl.ja3s"`
	Honeypot      any    `json:"honeypot"`

	// An error answer's members (v1: error, message; v2: code, message).
	Code    any    `json:"code"`
	Message string `json:"message"`
	Error   string `json:"error"`
}

// ZoomEye reads ZoomEye's answers: the v1 host search ({"matches":
// [...]}), the v2 search ({"data": [...]}), `zoomeye search -save`'s
// array of v2 data, or JSON lines of either kind of record. Each record
// with an address is one service observation (docs/ingest-enrich.md says
// what is kept); a record without one (a web asset known by its domain
// only) is counted as skipped.
func ZoomEye(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("zoomeye")
	return opt.jsonRecords(r, "zoomeye", bad, []string{"matches", "data"}, func(n int, rec []byte) error {
		var x zoomeyeRecord
		if err := scanUnmarshal(rec, &x); err != nil {
			bad(LineError{n, fmt.Errorf("json: %w", err)})
			return nil
		}
		ips := textsOf(x.IP)
		if len(ips) == 0 {
			switch {
			case x.Domain != "" || x.URL != "":
				opt.skip(n, "zoomeye record without an IP address (domain "+strconv.Quote(firstNonEmpty(x.Domain, x.URL))+")")
			case x.Message != "" || x.Error != "":
				bad(LineError{n, fmt.Errorf("zoomeye answer without records: %s", strings.TrimSpace(x.Error+" "+x.Message))})
			default:
				bad(LineError{n, errors.New(`not a ZoomEye record: want "ip" and "portinfo" (v1) or "port" (v2)`)})
			}
			return nil
		}
		o, err := x.observation(ips[0], src, opt)
		return emitBuilt(n, o, err, emit, bad)
	})
}

func (x *zoomeyeRecord) observation(ip, src string, opt Options) (Observation, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(ip))
	if err != nil {
		return Observation{}, fmt.Errorf("ip: not an IP address: %q", ip)
	}
	pv := x.Port
	if pi := x.Portinfo; pi != nil && pi.Port != nil {
		pv = pi.Port
	}
	if pv == nil && x.URL != "" {
		pv = urlPort(x.URL)
	}
	port, err := scanPort(pv)
	if err != nil {
		return Observation{}, err
	}
	at := scanTime(x.Timestamp)
	if at.IsZero() {
		at = scanTime(x.UpdateTime)
	}
	transport := "tcp"
	switch p := x.Protocol.(type) {
	case string:
		if strings.HasPrefix(strings.ToLower(p), "udp") {
			transport = "udp"
		}
	case map[string]any:
		if s, _ := p["transport"].(string); strings.HasPrefix(strings.ToLower(s), "udp") {
			transport = "udp"
		}
	}
	o := Observation{Type: TypeService, IP: a.Unmap().String(), Source: src, ObservedAt: opt.when(at)}
	names := []string{x.Domain, x.Hostname, x.RDNS}
	if pi := x.Portinfo; pi != nil {
		names = append(names, pi.Hostname, pi.RDNS)
	}
	o.Hostnames = hostNames(names...)
	o.Service = &Service{Port: port, Transport: transport, Probes: x.probes(), Detected: x.detected()}
	org, asn := x.Organization, anyText(x.ASN)
	if g := x.Geoinfo; g != nil {
		org, asn = firstNonEmpty(g.Organization, org), firstNonEmpty(anyText(g.ASN), asn)
	}
	o.Claims = opt.scanClaim("zoomeye", org, asn)
	return o, nil
}

// urlPort is the port of a URL, written or its scheme's; nil when there
// is none.
func urlPort(s string) any {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return nil
	}
	hostport, _, _ := strings.Cut(rest, "/")
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.HasSuffix(hostport, "]") {
		return hostport[i+1:]
	}
	switch strings.ToLower(scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return nil
}

// anyText is a JSON string or number as text ("" for anything else).
func anyText(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

// probes: the banner (v1 portinfo.banner or v2 banner) or the v2 header
// that is an HTTP response, with the v2 body and the title, as the answer
// to a GET of the url's path; any other banner as a banner probe
// "zoomeye:<service>" ("zoomeye" when it names none); the certificate text as a banner probe
// "zoomeye:ssl", and the certificate's names read from it (openssl's
// Subject: and Issuer: lines) with ssl.jarm and ssl.ja3s as a TLS probe
// (under the HTTP probe on HTTPS).
func (x *zoomeyeRecord) probes() []Probe {
	service, banner, title := x.Service, x.Banner, first(textsOf(x.Title))
	if pi := x.Portinfo; pi != nil {
		service, banner = firstNonEmpty(pi.Service, service), firstNonEmpty(pi.Banner, banner)
		title = firstNonEmpty(first(textsOf(pi.Title)), title)
	}
	sslText, _ := x.SSL.(string)
	t := certTextTLS(sslText)
	if x.JARM != "" || x.JA3S != "" {
		if t == nil {
			t = &TLS{}
		}
		t.JARM, t.JA3S = x.JARM, x.JA3S
	}
	name := "zoomeye"
	if service != "" {
		name += ":" + strings.ToLower(service)
	}
	var probes []Probe
	raw := banner
	if _, ok := parseHTTPResponse([]byte(x.Header)); ok {
		raw = x.Header
	}
	if resp, ok := parseHTTPResponse([]byte(raw)); ok {
		if x.Body != "" && x.Body != x.Header && resp.Body == nil {
			resp.Body = TextBody(x.Body)
		}
		resp.Title = title
		path := "/"
		if x.URL != "" {
			path = pathOf(x.URL)
		}
		probes = append(probes, Probe{Request: &Request{Method: "GET", Path: path}, Response: resp, TLS: t})
		t = nil
		if raw != banner && banner != "" {
			probes = append(probes, Probe{Name: name, Banner: &Banner{Received: TextBody(banner)}})
		}
	} else if banner != "" {
		probes = append(probes, Probe{Name: name, Banner: &Banner{Received: TextBody(banner)}})
	}
	if strings.TrimSpace(sslText) != "" {
		probes = append(probes, Probe{Name: "zoomeye:ssl", Banner: &Banner{Received: TextBody(sslText)}})
	}
	if t != nil {
		probes = append(probes, Probe{TLS: t})
	}
	return probes
}

// detected: the service, product (v1's app when it names none; v2's
// header.server.name when it names none) and version ZoomEye identified;
// device, OS, extra info and the honeypot flag as info.
func (x *zoomeyeRecord) detected() *Detected {
	d := &Detected{By: "zoomeye", Service: strings.ToLower(x.Service), Product: x.Product, Version: x.Version}
	device, osName, extra := x.Device, x.OS, ""
	if pi := x.Portinfo; pi != nil {
		d.Service = firstNonEmpty(strings.ToLower(pi.Service), d.Service)
		d.Product = firstNonEmpty(pi.Product, pi.App, d.Product)
		d.Version = firstNonEmpty(pi.Version, d.Version)
		device, osName, extra = firstNonEmpty(pi.Device, device), firstNonEmpty(pi.OS, osName), pi.ExtraInfo
	}
	if d.Product == "" && x.ServerName != "" {
		d.Product, d.Version = x.ServerName, x.ServerVersion
	}
	var info []string
	if extra != "" {
		info = append(info, extra)
	}
	if device != "" {
		info = append(info, "device: "+device)
	}
	if osName != "" {
		info = append(info, "os: "+osName)
	}
	if v, ok := anyInt(x.Honeypot); ok && v == 1 {
		info = append(info, "honeypot")
	}
	d.Info = strings.Join(info, "; ")
	if d.Service == "" && d.Product == "" && d.Info == "" {
		return nil
	}
	return d
}

// certTextTLS reads a certificate a search engine gives as text (openssl's
// x509 -text, a PEM block) as tlsFromBanners reads a pasted one; nil when
// text names no subject.
func certTextTLS(text string) *TLS {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	s := &Service{Probes: []Probe{{Banner: &Banner{Received: TextBody(text)}}}}
	s.tlsFromBanners()
	if len(s.Probes) < 2 {
		return nil
	}
	return s.Probes[1].TLS
}
