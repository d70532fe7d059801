package ingest

import (
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"io"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Qualys reads a Qualys VM "Asset Data Report" in XML (<ASSET_DATA_REPORT>,
// as the Scan or Host-based report templates export it), host by host.
// Each (port, protocol) that a host's results name is a service, with
// what Qualys recorded of the service's own answers:
//
//   - QID 12230 "Default Web Page": the request Qualys sent and the raw
//     answer (status line, headers, body) as an HTTP probe;
//   - QID 86000 "Web Server Version": the Server banner as the Server
//     header of an HTTP answer;
//   - QID 38050 "SSH Banner": the identification line as a banner;
//   - QID 86002 "SSL Certificate - Information": the leaf certificate's
//     subject, issuer, serial and validity as a TLS probe;
//   - any other information-gathered result (TYPE Ig) that says what was
//     detected on the port ("Apache web server detected on port 8443 -
//     Apache/2.2.15 (CentOS)") as a banner named qualys:<QID>.
//
// Vulnerability results are the scanner's verdicts, not the service's
// answers, and are not read. detected says the service name Qualys gave
// and the host's operating system. Observed at the latest LAST_FOUND of
// the port's results (UTC, as Qualys writes it). A CSV report (a first
// byte other than '<') is read by qualysCSV, each host's rows as a HOST.
func Qualys(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	br, first, err := peekFirstByte(r, "qualys")
	if err != nil {
		return err
	}
	if first != 0 && first != '<' { // a CSV report, not XML
		return qualysCSV(br, opt, emit, bad)
	}
	src := opt.source("qualys")
	sawReport := false
	err = xmlReport(br, "qualys", bad, func(dec *xml.Decoder, se *xml.StartElement, path []string, line int) (bool, error) {
		switch se.Name.Local {
		case "ASSET_DATA_REPORT":
			sawReport = true
		case "SCAN", "SCAN_RESULTS":
			if !sawReport {
				return false, errQualysScan
			}
		case "HOST":
			if !sawReport || parent(path) != "HOST_LIST" {
				return false, nil
			}
			var h qualysHost
			if err := dec.DecodeElement(&h, se); err != nil {
				l, _ := dec.InputPos()
				bad(LineError{l, fmt.Errorf("HOST: %w", err)})
				return true, errStop
			}
			return true, h.emit(line, src, opt, emit, bad)
		}
		return false, nil
	})
	return endXMLReport(err, sawReport, errNotQualys, bad, errQualysScan)
}

var (
	errNotQualys  = errors.New("not a Qualys asset data report: no <ASSET_DATA_REPORT> element")
	errQualysScan = errors.New("a Qualys scan result file: export the scan as a report (Asset Data Report, XML), which keeps each result's port")
)

type qualysHost struct {
	IP    string       `xml:"IP"`
	DNS   string       `xml:"DNS"`
	OS    string       `xml:"OPERATING_SYSTEM"`
	Vulns []qualysVuln `xml:"VULN_INFO_LIST>VULN_INFO"`
}

type qualysVuln struct {
	QID       string `xml:"QID"`
	Type      string `xml:"TYPE"`
	Port      string `xml:"PORT"`
	Protocol  string `xml:"PROTOCOL"`
	Service   string `xml:"SERVICE"`
	SSL       string `xml:"SSL"`
	Result    string `xml:"RESULT"`
	LastFound string `xml:"LAST_FOUND"`
}

// qualysMaxDetections bounds the detection results kept for one service.
const qualysMaxDetections = 8

func (h *qualysHost) emit(line int, src string, opt Options, emit Emit, bad func(LineError)) error {
	ip, err := netip.ParseAddr(strings.TrimSpace(h.IP))
	if err != nil {
		bad(LineError{line, fmt.Errorf("HOST: IP: not an IP address: %q", h.IP)})
		return nil
	}
	type key struct {
		port      int
		transport string
	}
	type svc struct {
		s          *Service
		at         time.Time
		detections int
	}
	svcs := map[key]*svc{}
	var order []key
	for _, v := range h.Vulns {
		if strings.TrimSpace(v.Port) == "" {
			continue // a host-level result
		}
		port, err := strconv.Atoi(strings.TrimSpace(v.Port))
		if err != nil || port < 1 || port > 65535 {
			bad(LineError{line, fmt.Errorf("HOST %s: QID %s: PORT %q: not 1..65535", h.IP, v.QID, v.Port)})
			continue
		}
		transport := strings.ToLower(strings.TrimSpace(v.Protocol))
		if transport != "tcp" && transport != "udp" {
			continue
		}
		k := key{port, transport}
		sv := svcs[k]
		if sv == nil {
			sv = &svc{s: &Service{Port: port, Transport: transport}}
			svcs[k] = sv
			order = append(order, k)
		}
		if t, err := time.Parse(time.RFC3339, strings.TrimSpace(v.LastFound)); err == nil && t.After(sv.at) {
			sv.at = t
		}
		if sv.s.Detected == nil && strings.TrimSpace(v.Service) != "" {
			sv.s.Detected = &Detected{By: "qualys", Service: strings.TrimSpace(v.Service)}
			if os := strings.TrimSpace(h.OS); os != "" {
				sv.s.Detected.Info = "os: " + os
			}
		}
		res := strings.TrimSpace(v.Result)
		if res == "" {
			continue
		}
		switch qid := strings.TrimSpace(v.QID); qid {
		case "12230":
			if p, ok := qualysExchange(res); ok {
				sv.s.Probes = append(sv.s.Probes, p)
			}
		case "86000":
			if server := qualysTableColumn(res, "Server Banner"); server != "" {
				sv.s.Probes = append(sv.s.Probes, Probe{Name: "qualys.86000", Response: &Response{Headers: []Header{{Name: "Server", Value: server}}}})
			}
		case "38050":
			sv.s.Probes = append(sv.s.Probes, Probe{Name: "qualys.38050", Banner: &Banner{Received: TextBody(res)}})
		case "86002":
			if t := qualysCert(res); t != nil {
				sv.s.Probes = append(sv.s.Probes, Probe{Name: "qualys.86002", TLS: t})
			}
		default:
			if strings.EqualFold(strings.TrimSpace(v.Type), "Ig") && strings.Contains(strings.ToLower(res), "detected") && sv.detections < qualysMaxDetections {
				sv.detections++
				sv.s.Probes = append(sv.s.Probes, Probe{Name: "qualys:" + qid, Banner: &Banner{Received: TextBody(html.UnescapeString(res))}})
			}
		}
	}
	if len(order) == 0 && len(h.Vulns) > 0 {
		// host-level results only (a Cloud Agent host's package findings):
		// the observation model has no host record, so say it, as nessus
		// counts its port 0 items
		opt.skip(line, "qualys: host with host-level results only (no PORT)")
		return nil
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].port < order[j].port })
	for _, k := range order {
		sv := svcs[k]
		o := Observation{Type: TypeService, IP: ip.Unmap().String(), Source: src, ObservedAt: opt.when(sv.at), Service: sv.s}
		if d := strings.TrimSpace(h.DNS); d != "" {
			if _, err := netip.ParseAddr(d); err != nil {
				o.Hostnames = []string{d}
			}
		}
		if err := emitChecked(line, o, emit, bad); err != nil {
			return err
		}
	}
	return nil
}

// qualysExchange reads QID 12230's result: the request Qualys sent, then
// what came back: the raw answer (status line, headers, body), or the
// body alone where Qualys kept only that. Qualys writes the answer's
// markup as HTML entities.
func qualysExchange(res string) (Probe, bool) {
	res = strings.ReplaceAll(res, "\r\n", "\n")
	reqText, answer, ok := strings.Cut(res, "\n\n")
	if !ok {
		return Probe{}, false
	}
	answer = strings.TrimLeft(answer, "\n")
	if strings.Contains(answer, "&lt;") && !strings.Contains(answer, "<") {
		answer = html.UnescapeString(answer)
	}
	p := Probe{Name: "qualys.12230"}
	if req, ok := parseHTTPRequest([]byte(strings.TrimSpace(reqText) + "\r\n")); ok {
		p.Request = req
	}
	if strings.HasPrefix(answer, "HTTP/") {
		head, body, _ := strings.Cut(answer, "\n\n")
		resp, ok := parseHTTPResponse([]byte(strings.ReplaceAll(head, "\n", "\r\n") + "\r\n\r\n" + strings.TrimLeft(body, "\n")))
		if !ok {
			return Probe{}, false
		}
		p.Response = resp
	} else if answer != "" {
		p.Response = &Response{Body: TextBody(answer)}
	}
	return p, p.Response != nil
}

// qualysTableColumn reads a "format=table" result's first row's value in
// the named column (tab-separated, a header row first).
func qualysTableColumn(res, column string) string {
	lines := strings.Split(strings.ReplaceAll(res, "\r\n", "\n"), "\n")
	if len(lines) < 2 {
		return ""
	}
	for i, h := range strings.Split(lines[0], "\t") {
		if strings.TrimSpace(h) == column {
			if f := strings.Split(lines[1], "\t"); i < len(f) {
				return strings.TrimSpace(f[i])
			}
		}
	}
	return ""
}

// qualysCert reads QID 86002's table of the certificate chain: the first
// certificate's (0) serial, names and validity.
func qualysCert(res string) *TLS {
	t := &TLS{}
	var section string
	names := map[string][]string{}
	for _, l := range strings.Split(strings.ReplaceAll(res, "\r\n", "\n"), "\n") {
		k, v, _ := strings.Cut(l, "\t")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if strings.HasPrefix(k, "(") {
			if !strings.HasPrefix(k, "(0)") {
				break // the next certificate of the chain
			}
			section = ""
			switch strings.TrimPrefix(k, "(0)") {
			case "Serial Number":
				t.Serial = strings.TrimLeft(strings.ToLower(strings.ReplaceAll(v, ":", "")), "0")
			case "ISSUER NAME":
				section = "issuer"
			case "SUBJECT NAME":
				section = "subject"
			case "Valid From", "Valid Till":
				if at, err := time.Parse("Jan _2 15:04:05 2006 MST", strings.Join(strings.Fields(v), " ")); err == nil {
					if strings.HasSuffix(k, "From") {
						t.NotBefore = at.UTC().Format(time.RFC3339)
					} else {
						t.NotAfter = at.UTC().Format(time.RFC3339)
					}
				}
			}
			continue
		}
		if a := dnShortName(k); a != "" && section != "" {
			names[section] = append(names[section], a+"="+strings.ReplaceAll(v, ",", `\,`))
		}
	}
	if s := names["subject"]; len(s) > 0 {
		t.Subject = ParseDN(strings.Join(s, ","))
	}
	if s := names["issuer"]; len(s) > 0 {
		t.Issuer = ParseDN(strings.Join(s, ","))
	}
	if t.Subject != nil && t.Issuer != nil && t.Subject.DN == t.Issuer.DN {
		t.SelfSigned = true
	}
	if t.Subject == nil && t.Issuer == nil && t.Serial == "" {
		return nil
	}
	return t
}
