package ingest

import (
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// OpenVAS reads Greenbone's (OpenVAS's, GVM's) XML report: a <report>
// as the web interface exports it, or the <get_reports_response> of
// gvm-cli that wraps one, read one result at a time; or its CSV export
// ("CSV Results", told apart by its first byte), each row read as a
// result. Each result on a port ("443/tcp", older versions' "https
// (443/tcp)"; a detection consolidated host-wide goes to the port its
// "Location: 80/tcp" line names) belongs to the service of its host and
// port; what is kept of it is what identifies the service, not the
// findings:
//
//   - a log-level result (severity 0) of a detection (its description
//     names a product in Greenbone's words, "Detected Fortinet FortiOS",
//     "Version: 7.2.4", "CPE: cpe:/o:fortinet:fortios:7.2.4", "Concluded
//     from version/product identification result: ...", or a version,
//     model or build line, or its NVT's family is Product or Service
//     detection) is a banner probe named "openvas:<oid>" holding the
//     description as written, and so are the Services, "... Detection",
//     "HTTP Server type and version" and banner results (whose Server line
//     is the Server header of a GET / probe "openvas:http");
//   - a finding (severity above 0) is kept only for the installed version
//     it quotes ("Installed version: 9.1.4"), at most vulnMaxFindings
//     different ones per service;
//   - the product CPEs of a result's <detection> element, and the host
//     details the report lists (a "cpe:/..." detail whose value is the
//     port), go to the service's detected.cpe.
//
// detected is {by: openvas} with those CPEs and the CPEs the kept
// descriptions quote, the first "Detected <product>" line as its product
// and the version line of that result as its version, and the host's
// operating system (its best_os_txt detail, or the "OS:" line of the
// OS detection result) as "os: X" in its info with best_os_cpe in its
// cpe: results on "general/..." are host-level and the observation model
// has no host record, so the host's operating system goes on every one of
// its services. A host with no service gives nothing. observed_at is the
// host's end time (else its start, else the result's modification or
// creation time, else the report's scan_end, scan_start, timestamp).
// Results are buffered (the host details follow them) and the services
// emitted at the end; the line of a record is the line its first result
// starts on.
func OpenVAS(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("openvas")
	sawReport := false
	var reportTime time.Time
	hosts := map[string]*gvmHostInfo{}
	host := func(ip string) *gvmHostInfo {
		h, ok := hosts[ip]
		if !ok {
			h = &gvmHostInfo{}
			hosts[ip] = h
		}
		return h
	}
	var order []*gvmService
	svcs := map[string]*gvmService{}
	br, first, err := peekFirstByte(r, "openvas")
	if err != nil {
		return err
	}
	if first != 0 && first != '<' { // GVM's CSV export, not its XML
		if err := gvmCSV(br, opt, host, svcs, &order, bad); err != nil {
			return err
		}
		return gvmEmit(src, opt, order, host, time.Time{}, emit, bad)
	}
	err = xmlReport(br, "openvas", bad, func(dec *xml.Decoder, se *xml.StartElement, path []string, line int) (bool, error) {
		name, par := se.Name.Local, parent(path)
		switch {
		case name == "report" && (par == "" || par == "get_reports_response" || par == "report"):
			sawReport = true
		case !sawReport:
			if par == "" && name != "get_reports_response" {
				return false, errNotGVM
			}
		case name == "result" && par == "results":
			var res gvmResult
			if err := dec.DecodeElement(&res, se); err != nil {
				l, _ := dec.InputPos()
				bad(LineError{l, fmt.Errorf("openvas: result: %w", err)})
				return true, errStop
			}
			res.add(line, opt, host, svcs, &order, bad)
			return true, nil
		case name == "host" && par == "report":
			var h gvmHost
			if err := dec.DecodeElement(&h, se); err != nil {
				l, _ := dec.InputPos()
				bad(LineError{l, fmt.Errorf("openvas: host: %w", err)})
				return true, errStop
			}
			h.add(line, host, svcs, bad)
			return true, nil
		case (name == "scan_end" || name == "scan_start" || name == "timestamp") && par == "report":
			var v string
			if err := dec.DecodeElement(&v, se); err == nil && reportTime.IsZero() {
				reportTime = scanTime(v)
			}
			return true, nil
		}
		return false, nil
	})
	switch {
	case errors.Is(err, errNotGVM), err == nil && !sawReport:
		bad(LineError{1, errNotGVM})
		return nil
	case err != nil && !errors.Is(err, errStop):
		return err
	}
	return gvmEmit(src, opt, order, host, reportTime, emit, bad)
}

// gvmEmit emits the services gathered, in the order first seen.
func gvmEmit(src string, opt Options, order []*gvmService, host func(string) *gvmHostInfo, reportTime time.Time, emit Emit, bad func(LineError)) error {
	for _, s := range order {
		h := host(s.ip)
		at := h.end
		for _, t := range []time.Time{h.start, s.at, reportTime} {
			if at.IsZero() {
				at = t
			}
		}
		o := Observation{Type: TypeService, IP: s.ip, Source: src, ObservedAt: opt.when(at), Hostnames: hostNames(append(s.names, h.names...)...),
			Service: s.service(h)}
		if err := emitChecked(s.line, o, emit, bad); err != nil {
			return err
		}
	}
	return nil
}

var errNotGVM = errors.New("not a Greenbone report: no <report> element (want <report> or <get_reports_response>)")

type gvmResult struct {
	Host struct {
		Addr     string `xml:",chardata"`
		Hostname string `xml:"hostname"`
	} `xml:"host"`
	Port string `xml:"port"`
	NVT  struct {
		OID    string `xml:"oid,attr"`
		Name   string `xml:"name"`
		Family string `xml:"family"`
	} `xml:"nvt"`
	Severity    string         `xml:"severity"`
	Threat      string         `xml:"threat"`
	Description string         `xml:"description"`
	Detection   []gvmDetection `xml:"detection"`
	Modified    string         `xml:"modification_time"`
	Created     string         `xml:"creation_time"`
}

type gvmDetection struct {
	Details []gvmDetail `xml:"result>details>detail"`
}

type gvmDetail struct {
	Name  string `xml:"name"`
	Value string `xml:"value"`
}

type gvmHost struct {
	IP      string      `xml:"ip"`
	Start   string      `xml:"start"`
	End     string      `xml:"end"`
	Details []gvmDetail `xml:"detail"`
}

// gvmHostInfo is what the report says of a host as a whole.
type gvmHostInfo struct {
	start, end time.Time
	os         string
	osCPEs     []string
	names      []string
}

// gvmService gathers one host's port.
type gvmService struct {
	ip, key  string
	port     int
	proto    string
	line     int
	at       time.Time
	names    []string
	cpes     []string
	product  string
	version  string
	http     *Probe
	banners  []Probe
	findings []string
}

// gvmPort reads a result's port: "443/tcp", "https (443/tcp)";
// "general/tcp", "general/CPE-T", "package" are host-level (port 0).
var gvmPort = regexp.MustCompile(`^(?:[^()]*\()?\s*(\d+)/(tcp|udp)\s*\)?$`)

// gvmServerLine is a Server header line a result quotes.
var gvmServerLine = regexp.MustCompile(`(?m)^[ \t]*Server:[ \t]*(\S[^\r\n|]*?)[ \t]*\r?$`)

// gvmLocation is a detection's "Location: 80/tcp" line.
var gvmLocation = regexp.MustCompile(`(?m)^[ \t]*Location:[ \t]*(\d+)/(tcp|udp)[ \t]*\r?$`)

// gvmIdentName is the name of an NVT that identifies what runs on the
// port (Services, HTTP Server type and version, ... Detection);
// gvmNotIdent those that report a property of it.
var (
	gvmIdentName = regexp.MustCompile(`(?i)(detection|detect|server type|version|banner|services)\b`)
	gvmNotIdent  = regexp.MustCompile(`(?i)\b(ssl|tls|cipher|certificate|headers|methods|cgi|traceroute|hostname)\b`)
)

// gvmOSLine is the OS detection result's "OS: Ubuntu 20.04" line.
var gvmOSLine = regexp.MustCompile(`(?m)^[ \t]*OS:[ \t]*(\S[^\r\n]*?)[ \t]*\r?$`)

func (res *gvmResult) add(line int, opt Options, host func(string) *gvmHostInfo, svcs map[string]*gvmService, order *[]*gvmService, bad func(LineError)) {
	addr := strings.TrimSpace(res.Host.Addr)
	a, err := netip.ParseAddr(addr)
	if err != nil {
		bad(LineError{line, fmt.Errorf("openvas: result <host>: not an IP address: %q", addr)})
		return
	}
	ip := a.Unmap().String()
	desc := strings.TrimSpace(strings.ReplaceAll(res.Description, "\r\n", "\n"))
	sev, _ := strconv.ParseFloat(strings.TrimSpace(res.Severity), 64)
	if strings.TrimSpace(res.Severity) == "" && res.Threat != "" && res.Threat != "Log" {
		sev = 1
	}
	m := gvmPort.FindStringSubmatch(strings.TrimSpace(res.Port))
	if m == nil && sev <= 0 {
		// a detection consolidated host-wide names the port it found the
		// product on ("Location: 80/tcp")
		m = gvmLocation.FindStringSubmatch(desc)
	}
	if m == nil {
		// host-level: the OS detection's result names the host's OS
		h := host(ip)
		if sev <= 0 {
			if om := gvmOSLine.FindStringSubmatch(desc); om != nil && h.os == "" && strings.Contains(res.NVT.Name, "OS") {
				h.os = om[1]
				for _, c := range vulnCPEs(desc) {
					if strings.HasPrefix(c, "cpe:/o:") || strings.HasPrefix(c, "cpe:2.3:o:") {
						h.osCPEs = addCPE(h.osCPEs, c)
					}
				}
			}
		}
		opt.skip(line, "openvas: host-level result (port "+strings.TrimSpace(res.Port)+")")
		return
	}
	port, _ := strconv.Atoi(m[1])
	if port < 1 || port > 65535 {
		bad(LineError{line, fmt.Errorf("openvas: result <port>: must be 1..65535, got %q", res.Port)})
		return
	}
	key := ip + " " + m[1] + "/" + m[2]
	s, ok := svcs[key]
	if !ok {
		s = &gvmService{ip: ip, key: m[1] + "/" + m[2], port: port, proto: m[2], line: line}
		svcs[key] = s
		*order = append(*order, s)
	}
	if hn := strings.TrimSpace(res.Host.Hostname); hn != "" && !slices.Contains(s.names, hn) {
		s.names = append(s.names, hn)
	}
	if s.at.IsZero() {
		s.at = scanTime(res.Modified)
		if s.at.IsZero() {
			s.at = scanTime(res.Created)
		}
	}
	kept := false
	for _, d := range res.Detection {
		for _, dt := range d.Details {
			if dt.Name == "product" {
				s.cpes = addCPE(s.cpes, strings.TrimSpace(dt.Value))
				kept = true
			}
		}
	}
	name := "openvas:" + res.NVT.OID
	if res.NVT.OID == "" {
		name = "openvas"
	}
	switch {
	case desc == "":
	case sev > 0:
		k := installedKey(desc)
		if k != "" && len(s.findings) < vulnMaxFindings && !slices.Contains(s.findings, k) {
			s.findings = append(s.findings, k)
			s.banners = append(s.banners, Probe{Name: name, Banner: &Banner{Received: TextBody(desc)}})
			kept = true
		}
	case vulnDetected.MatchString(desc) || vulnCPE.MatchString(desc) ||
		!gvmNotIdent.MatchString(res.NVT.Name) && (vulnIdentLine.MatchString(desc) || gvmIdentName.MatchString(res.NVT.Name) ||
			res.NVT.Family == "Product detection" || res.NVT.Family == "Service detection"):
		s.banners = append(s.banners, Probe{Name: name, Banner: &Banner{Received: TextBody(desc)}})
		s.cpes = addCPE(s.cpes, vulnCPEs(desc)...)
		if strings.HasPrefix(res.NVT.Name, "HTTP Server type and version") {
			// "The remote HTTP Server banner is:\n\nServer: Apache/2.4.7 (Ubuntu)": the
			// Server header of the answer to its GET /
			for _, sm := range gvmServerLine.FindAllStringSubmatch(desc, 4) {
				if s.http == nil {
					s.http = &Probe{Name: "openvas:http", Request: &Request{Method: "GET", Path: "/"}, Response: &Response{}}
				}
				if !hasHeader(s.http.Response.Headers, "Server", sm[1]) {
					s.http.Response.Headers = append(s.http.Response.Headers, Header{Name: "Server", Value: sm[1]})
				}
			}
		}
		if s.product == "" {
			if pm := vulnDetected.FindStringSubmatch(desc); pm != nil {
				s.product = pm[1]
				if vm := vulnVersion.FindStringSubmatch(desc); vm != nil && !strings.EqualFold(vm[1], "unknown") {
					s.version = vm[1]
				}
			}
		}
		kept = true
	}
	if !kept {
		opt.skip(line, "openvas: result not kept (no product evidence)")
	}
}

// add reads a host's details: its times, names, operating system and the
// product CPEs it lists by port ("cpe:/a:apache:http_server:2.4.41" with
// the value "80/tcp").
func (g *gvmHost) add(line int, host func(string) *gvmHostInfo, svcs map[string]*gvmService, bad func(LineError)) {
	a, err := netip.ParseAddr(strings.TrimSpace(g.IP))
	if err != nil {
		if strings.TrimSpace(g.IP) != "" {
			bad(LineError{line, fmt.Errorf("openvas: host <ip>: not an IP address: %q", g.IP)})
		}
		return
	}
	ip := a.Unmap().String()
	h := host(ip)
	h.start, h.end = scanTime(g.Start), scanTime(g.End)
	for _, d := range g.Details {
		n, v := strings.TrimSpace(d.Name), strings.TrimSpace(d.Value)
		switch {
		case n == "best_os_txt" && v != "":
			h.os = v
		case n == "best_os_cpe" || n == "OS":
			h.osCPEs = addCPE(h.osCPEs, v)
		case n == "hostname" || n == "DNS-via-TargetDefinition":
			if v != "" && !slices.Contains(h.names, v) {
				h.names = append(h.names, v)
			}
		case strings.HasPrefix(n, "cpe:/a:") || strings.HasPrefix(n, "cpe:/h:"):
			if s := svcs[ip+" "+v]; s != nil {
				s.cpes = addCPE(s.cpes, n)
			}
		}
	}
}

func (s *gvmService) service(h *gvmHostInfo) *Service {
	sv := &Service{Port: s.port, Transport: s.proto}
	if s.http != nil {
		sv.Probes = append(sv.Probes, *s.http)
	}
	sv.Probes = append(sv.Probes, s.banners...)
	d := &Detected{By: "openvas", Product: s.product, Version: s.version, CPE: addCPE(slices.Clone(s.cpes), h.osCPEs...)}
	if h.os != "" {
		d.Info = "os: " + h.os
	}
	if d.Product != "" || len(d.CPE) > 0 || d.Info != "" {
		sv.Detected = d
	}
	return sv
}

// gvmCSVColumns are the columns of GVM's CSV export that are read (the
// report format "CSV Results"; "QoD" and the EPSS columns come and go
// between versions, so columns are found by name).
var gvmCSVColumns = []string{"IP", "Hostname", "Port", "Port Protocol", "CVSS", "Severity", "NVT Name", "Specific Result", "NVT OID", "Timestamp", "Product Detection Result"}

// gvmCSV reads GVM's CSV export: a header row, then a result a row; each
// row is read as the XML report's result (its "Specific Result" the
// description, "Product Detection Result"'s CPE its detection). The CSV
// export has no host details.
func gvmCSV(r io.Reader, opt Options, host func(string) *gvmHostInfo, svcs map[string]*gvmService, order *[]*gvmService, bad func(LineError)) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	head, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			bad(LineError{1, errNotGVM})
			return nil
		}
		bad(LineError{1, fmt.Errorf("openvas csv: header: %w", err)})
		return nil
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, c := range []string{"IP", "Port", "Port Protocol", "Specific Result"} {
		if _, ok := col[c]; !ok {
			bad(LineError{1, fmt.Errorf("not GVM's CSV export: no %q column (want %s)", c, strings.Join(gvmCSVColumns, ","))})
			return nil
		}
	}
	field := func(rec []string, name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	return eachCSVRecord(cr, "openvas", bad, func(rec []string, line int) error {
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			return nil
		}
		var res gvmResult
		res.Host.Addr, res.Host.Hostname = field(rec, "IP"), field(rec, "Hostname")
		if p := strings.TrimSpace(field(rec, "Port")); p != "" {
			res.Port = p + "/" + strings.ToLower(strings.TrimSpace(field(rec, "Port Protocol")))
		} else {
			res.Port = "general/" + strings.ToLower(strings.TrimSpace(field(rec, "Port Protocol")))
		}
		res.Severity, res.Threat = field(rec, "CVSS"), field(rec, "Severity")
		res.NVT.OID, res.NVT.Name = field(rec, "NVT OID"), field(rec, "NVT Name")
		res.Description, res.Created = field(rec, "Specific Result"), field(rec, "Timestamp")
		if pd := field(rec, "Product Detection Result"); pd != "" {
			det := gvmDetection{}
			for _, c := range vulnCPEs(pd) {
				det.Details = append(det.Details, gvmDetail{Name: "product", Value: c})
			}
			res.Detection = append(res.Detection, det)
		}
		res.add(line, opt, host, svcs, order, bad)
		return nil
	})
}
