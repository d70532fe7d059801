package ingest

import (
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

// Nessus reads Nessus's .nessus export (NessusClientData_v2), one
// ReportHost at a time (the file is never held whole). A host's address is
// its host-ip tag, else its name when that is an address; host-fqdn,
// host-rdns and a name that is not an address are its host names. Each
// port above 0 a ReportItem names (per protocol) is one service; what is
// kept of it is what identifies it, not the findings:
//
//   - plugin 24260 (HTTP Information) is an HTTP probe of GET / with the
//     status and headers it prints (and the body when it printed one);
//     10107 (HTTP Server Type and Version) gives its Server header;
//   - plugin 10863 (SSL Certificate Information) is a TLS probe: its PEM
//     certificate when printed, else the subject, issuer, serial,
//     validity, SANs and SHA-256 fingerprint read from its text;
//   - the output of service and product detection plugins (22964 Service
//     Detection, 10267 SSH Server Type and Version, FTP, SMTP and telnet
//     banners, SNMP sysDescr, and any informational plugin whose output
//     names a product, version, model or build, or that carries a CPE) is
//     a banner probe named "nessus:<pluginID>" holding the output as
//     printed, or the banner it quotes (the SSH version string, the FTP
//     greeting) where it quotes one;
//   - a finding (severity 1 and above) is kept only for the installed
//     version it quotes ("Installed version : 9.1.4"), at most
//     vulnMaxFindings different ones per service: the rest of the
//     findings say what is wrong with the product, not what it is.
//
// detected is {by: nessus, service: svc_name} with the CPEs the port's
// items carry, each given its version from the host's cpe-N tags where
// Nessus resolved one ("cpe:/a:microsoft:iis:10.0 -> Microsoft IIS", whose
// name and version become detected's product and version), and the host's
// operating system: port 0 items are host-level and the observation model
// has no host record, so the host's operating-system tag (else OS
// Identification's "Remote operating system") is "os: X" in every
// service's info and its OS and hardware CPEs are in every service's cpe.
// A host with no port above 0 gives nothing (counted through
// Options.Skipped), as does a finding not kept. observed_at is the host's
// HOST_END (HOST_END_TIMESTAMP, else the text, which Nessus writes in the
// scanner's local time without a zone and is read as UTC), else its
// HOST_START. The line of a record is the line its ReportHost starts on.
// A Tenable CSV export (a first byte other than '<') is read by nessusCSV,
// each host's rows as a ReportHost.
func Nessus(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	br, first, err := peekFirstByte(r, "nessus")
	if err != nil {
		return err
	}
	if first != 0 && first != '<' { // a Tenable CSV export, not .nessus
		return nessusCSV(br, opt, emit, bad)
	}
	src := opt.source("nessus")
	sawRoot := false
	err = xmlReport(br, "nessus", bad, func(dec *xml.Decoder, se *xml.StartElement, path []string, line int) (bool, error) {
		switch se.Name.Local {
		case "NessusClientData_v2":
			sawRoot = true
		case "NessusClientData":
			return false, errNessusV1
		case "ReportHost":
			if !sawRoot {
				return false, errNotNessus
			}
			var h nessusHost
			if err := dec.DecodeElement(&h, se); err != nil {
				l, _ := dec.InputPos()
				bad(LineError{l, fmt.Errorf("nessus: ReportHost %q: %w", h.Name, err)})
				return true, errStop
			}
			return true, h.emit(line, src, opt, emit, bad)
		}
		return false, nil
	})
	return endXMLReport(err, sawRoot, errNotNessus, bad, errNessusV1, errNotNessus)
}

var (
	errNotNessus = errors.New("not a .nessus file: no <NessusClientData_v2> element")
	errNessusV1  = errors.New("nessus: a NessusClientData (v1) file: export the scan as .nessus (v2)")
)

type nessusHost struct {
	Name string `xml:"name,attr"`
	Tags []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:",chardata"`
	} `xml:"HostProperties>tag"`
	Items []nessusItem `xml:"ReportItem"`
}

type nessusItem struct {
	Port     string `xml:"port,attr"`
	Protocol string `xml:"protocol,attr"`
	SvcName  string `xml:"svc_name,attr"`
	PluginID string `xml:"pluginID,attr"`
	Plugin   string `xml:"pluginName,attr"`
	Severity string `xml:"severity,attr"`
	Output   string `xml:"plugin_output"`
	CPE      string `xml:"cpe"`
}

// nessusPortScanners are the plugins that only say a port is open.
var nessusPortScanners = map[string]bool{"11219": true, "34220": true, "14272": true, "10335": true, "34277": true, "14274": true}

// nessusIdentify are the plugins whose output identifies the service
// whatever its wording: service detection, the SSH, FTP, SMTP and telnet
// banners, SNMP's system information, SMB's native LAN manager.
var nessusIdentify = map[string]bool{
	"22964": true, "11153": true, "10267": true, "10092": true, "10263": true, "10281": true,
	"10800": true, "10785": true, "10719": true, "10144": true, "17367": true, "10028": true,
}

// nessusIdentName is a plugin name that says the plugin identifies a
// product; nessusNotIdent are detections of a protocol property.
var (
	nessusParagraph = regexp.MustCompile(`\r?\n[ \t]*\r?\n`) // a blank line
	nessusIdentName = regexp.MustCompile(`(?i)(detection|detect|server type|version information|banner|identification)\b`)
	nessusNotIdent  = regexp.MustCompile(`(?i)\b(ssl|tls|cipher|certificate|methods|enumeration|dialects|ALPN|STARTTLS|mismatch)\b`)
)

func (h *nessusHost) tag(name string) string {
	for _, t := range h.Tags {
		if t.Name == name {
			return strings.TrimSpace(t.Value)
		}
	}
	return ""
}

// nessusCPE is one of the host's cpe-N tags: "cpe:/a:microsoft:iis:10.0 ->
// Microsoft IIS".
type nessusCPE struct{ cpe, name string }

func (h *nessusHost) emit(line int, src string, opt Options, emit Emit, bad func(LineError)) error {
	ip := h.tag("host-ip")
	if _, err := netip.ParseAddr(ip); err != nil {
		ip = ""
		if _, err := netip.ParseAddr(h.Name); err == nil {
			ip = h.Name
		}
	}
	if ip == "" {
		opt.skip(line, "nessus: host without an IP address (host-ip)")
		return nil
	}
	var names []string
	for _, n := range []string{h.tag("host-fqdn"), h.tag("host-rdns"), h.Name} {
		if n != "" && !strings.Contains(n, "/") && !strings.Contains(n, " ") {
			names = append(names, n)
		}
	}
	at := unixTime(h.tag("HOST_END_TIMESTAMP"))
	for _, t := range []string{"HOST_END", "HOST_START"} {
		if at.IsZero() {
			at = nessusTime(h.tag(t))
		}
	}
	if at.IsZero() {
		at = unixTime(h.tag("HOST_START_TIMESTAMP"))
	}
	// the host's CPEs (cpe-0, cpe-1, ... and cpe) and operating system
	var hostCPEs []nessusCPE
	for _, t := range h.Tags {
		if t.Name != "cpe" && !strings.HasPrefix(t.Name, "cpe-") {
			continue
		}
		c, name, _ := strings.Cut(strings.TrimSpace(t.Value), "->")
		if c = strings.TrimSpace(c); strings.HasPrefix(c, "cpe:") {
			hostCPEs = append(hostCPEs, nessusCPE{c, strings.Join(strings.Fields(name), " ")})
		}
	}
	osName, _, _ := strings.Cut(h.tag("operating-system"), "\n")
	for i := range h.Items {
		it := &h.Items[i]
		if it.Port != "0" {
			continue
		}
		switch it.PluginID {
		case "11936": // OS Identification
			if m := nessusRemoteOS.FindStringSubmatch(it.Output); m != nil && osName == "" {
				osName = m[1]
			}
		case "45590": // Common Platform Enumeration: the same as the cpe-N tags
			if len(hostCPEs) == 0 {
				for _, m := range nessusCPELine.FindAllStringSubmatch(it.Output, -1) {
					hostCPEs = append(hostCPEs, nessusCPE{m[1], strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(m[2]), "->"))})
				}
			}
		}
	}
	type svc struct {
		key  string
		port int
		s    *nessusService
	}
	var order []*svc
	byKey := map[string]*svc{}
	for i := range h.Items {
		it := &h.Items[i]
		port, err := strconv.Atoi(strings.TrimSpace(it.Port))
		if err != nil || port < 0 || port > 65535 {
			bad(LineError{line, fmt.Errorf("nessus: ReportItem plugin %s: port %q: not a port number", it.PluginID, it.Port)})
			continue
		}
		if port == 0 {
			opt.skip(line, "nessus: host-level item (port 0)")
			continue
		}
		proto := strings.ToLower(strings.TrimSpace(it.Protocol))
		if proto != "tcp" && proto != "udp" {
			opt.skip(line, "nessus: protocol not tcp or udp")
			continue
		}
		key := strconv.Itoa(port) + "/" + proto
		s, ok := byKey[key]
		if !ok {
			s = &svc{key: key, port: port, s: &nessusService{}}
			byKey[key] = s
			order = append(order, s)
		}
		if !s.s.add(it) {
			opt.skip(line, "nessus: finding not kept (no product evidence)")
		}
	}
	if len(order) == 0 {
		opt.skip(line, "nessus: host without a service (no port above 0)")
		return nil
	}
	for _, s := range order {
		o := Observation{Type: TypeService, IP: ip, Source: src, ObservedAt: opt.when(at), Hostnames: hostNames(names...),
			Service: s.s.service(s.port, strings.SplitN(s.key, "/", 2)[1], hostCPEs, osName)}
		if err := emitChecked(line, o, emit, bad); err != nil {
			return err
		}
	}
	return nil
}

var (
	nessusRemoteOS = regexp.MustCompile(`(?m)^[ \t]*Remote operating system[ \t]*:[ \t]*(\S[^\r\n]*?)[ \t]*\r?$`)
	nessusCPELine  = regexp.MustCompile(`(?m)^[ \t]*(cpe:/[aoh]:\S+)([ \t]*->[^\r\n]*)?\r?$`)
)

// nessusTime reads HOST_START and HOST_END: "Thu Mar 16 10:44:23 2023"
// (the scanner's local time, no zone: read as UTC), or RFC 3339 as Nessus
// WAS writes them.
func nessusTime(s string) time.Time {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return time.Time{}
	}
	for _, layout := range []string{"Mon Jan 2 15:04:05 2006", "Mon Jan 2 15:04:05 MST 2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return scanTime(s)
}

// nessusService gathers one port's items.
type nessusService struct {
	svcName  string
	cpes     []string
	http     *Probe
	tls      *TLS
	banners  []Probe
	findings []string // installed-version keys of the findings kept
}

// add takes what identifies the service out of one item; false when the
// item gave nothing.
func (s *nessusService) add(it *nessusItem) bool {
	if s.svcName == "" || s.svcName == "unknown" {
		s.svcName = strings.TrimSuffix(strings.TrimSpace(it.SvcName), "?")
	}
	for _, c := range strings.Fields(it.CPE) {
		s.cpes = addCPE(s.cpes, c) // p-cpe: and x-cpe: (packages, Tenable's own) are left out
	}
	out := strings.TrimSpace(strings.ReplaceAll(it.Output, "\r\n", "\n"))
	if out == "" || nessusPortScanners[it.PluginID] {
		return strings.Contains(it.CPE, "cpe:")
	}
	switch it.PluginID {
	case "24260": // HTTP Information
		if r := nessusHTTPInfo(out); r != nil {
			hp := s.httpProbe()
			hp.Response.Status, hp.Response.Protocol, hp.Response.Reason, hp.Response.Body = r.Status, r.Protocol, r.Reason, r.Body
			for _, h := range r.Headers {
				if !hasHeader(hp.Response.Headers, h.Name, h.Value) {
					hp.Response.Headers = append(hp.Response.Headers, h)
				}
			}
			return true
		}
		return false
	case "10107": // HTTP Server Type and Version
		_, v, ok := strings.Cut(out, ":")
		if v = strings.TrimSpace(v); !ok || v == "" {
			return false
		}
		hp := s.httpProbe()
		// The Server value is the first paragraph: older plugin versions
		// follow it, after a blank line, with their advice ("Solution :
		// You can set the directive 'ServerTokens Prod' to limit / the
		// information ..."), which is the scanner's text, not a header.
		v = nessusParagraph.Split(v, 2)[0]
		for _, line := range strings.Split(v, "\n") {
			if line = strings.TrimSpace(line); line != "" && !hasHeader(hp.Response.Headers, "Server", line) {
				hp.Response.Headers = append(hp.Response.Headers, Header{Name: "Server", Value: line})
			}
		}
		return true
	case "10863": // SSL Certificate Information
		if t := nessusCert(out); t != nil {
			s.tls = t
			return true
		}
		return false
	}
	sev, _ := strconv.Atoi(strings.TrimSpace(it.Severity))
	if sev > 0 {
		key := installedKey(out)
		if key == "" || len(s.findings) >= vulnMaxFindings || slices.Contains(s.findings, key) {
			return false
		}
		s.findings = append(s.findings, key)
		s.banners = append(s.banners, Probe{Name: "nessus:" + it.PluginID, Banner: &Banner{Received: TextBody(out)}})
		return true
	}
	if !nessusIdentify[it.PluginID] && (nessusNotIdent.MatchString(it.Plugin) ||
		!vulnIdentLine.MatchString(out) && !vulnCPE.MatchString(out) && !nessusIdentName.MatchString(it.Plugin)) {
		return strings.Contains(it.CPE, "cpe:") // its CPE is in detected
	}
	s.banners = append(s.banners, Probe{Name: "nessus:" + it.PluginID, Banner: &Banner{Received: TextBody(nessusQuoted(it.PluginID, out))}})
	return true
}

// text is what the port's kept output says: its banners and Server headers.
func (s *nessusService) text() string {
	var b strings.Builder
	for _, p := range s.banners {
		b.WriteString(p.Banner.Received.Data + "\n")
	}
	if s.http != nil {
		for _, h := range s.http.Response.Headers {
			b.WriteString(h.Value + "\n")
		}
	}
	return b.String()
}

func (s *nessusService) httpProbe() *Probe {
	if s.http == nil {
		s.http = &Probe{Name: "nessus:http", Request: &Request{Method: "GET", Path: "/"}, Response: &Response{}}
	}
	return s.http
}

// service is the observation's service: its probes (HTTP, TLS, the
// banners in the report's order) and detected.
func (s *nessusService) service(port int, proto string, hostCPEs []nessusCPE, osName string) *Service {
	sv := &Service{Port: port, Transport: proto}
	if s.http != nil {
		sv.Probes = append(sv.Probes, *s.http)
	}
	if s.tls != nil {
		sv.Probes = append(sv.Probes, Probe{Name: "nessus:10863", TLS: s.tls})
	}
	sv.Probes = append(sv.Probes, s.banners...)
	d := &Detected{By: "nessus", Service: s.svcName}
	text := s.text()
	for _, c := range s.cpes {
		// the host's cpe-N tag of the same product carries the version
		// Nessus resolved and the product's name; where the host has the
		// product in several versions (two SSH servers), the one this
		// port's own output quotes
		var match []nessusCPE
		for _, hc := range hostCPEs {
			if hc.cpe == c || strings.HasPrefix(hc.cpe, c+":") {
				match = append(match, hc)
			}
		}
		if len(match) > 1 {
			match = slices.DeleteFunc(match, func(hc nessusCPE) bool {
				v := cpeVersion(hc.cpe)
				return v == "" || !strings.Contains(text, v)
			})
		}
		if len(match) != 1 {
			d.CPE = addCPE(d.CPE, c)
			continue
		}
		d.CPE = addCPE(d.CPE, match[0].cpe)
		if d.Product == "" && match[0].name != "" && strings.HasPrefix(c, "cpe:/a:") {
			d.Product, d.Version = match[0].name, cpeVersion(match[0].cpe)
		}
	}
	for _, p := range s.banners {
		d.CPE = addCPE(d.CPE, vulnCPEs(p.Banner.Received.Data)...)
	}
	// an application of the host's cpe-N tags that no item of the port
	// names, where the port's own output quotes its name and version (the
	// Server header "Microsoft-IIS/10.0" for cpe:/a:microsoft:iis:10.0)
	lower := strings.ToLower(text)
	for _, hc := range hostCPEs {
		parts := strings.Split(strings.TrimPrefix(hc.cpe, "cpe:/a:"), ":")
		if !strings.HasPrefix(hc.cpe, "cpe:/a:") || len(parts) < 3 || slices.Contains(d.CPE, hc.cpe) {
			continue
		}
		named := hasWord(lower, parts[1]) || hasWord(lower, strings.ReplaceAll(parts[1], "_", " ")) || hasWord(lower, parts[0])
		if named && hasVersion(lower, parts[2]) {
			d.CPE = addCPE(d.CPE, hc.cpe)
			if d.Product == "" && hc.name != "" {
				d.Product, d.Version = hc.name, cpeVersion(hc.cpe)
			}
		}
	}
	for _, hc := range hostCPEs {
		if !strings.HasPrefix(hc.cpe, "cpe:/a:") {
			d.CPE = addCPE(d.CPE, hc.cpe)
		}
	}
	if osName != "" {
		d.Info = "os: " + osName
	}
	sv.Detected = d
	return sv
}

// cpeVersion is a 2.2 CPE's version field ("cpe:/a:microsoft:iis:10.0"
// gives "10.0").
func cpeVersion(cpe string) string {
	parts := strings.Split(strings.TrimPrefix(cpe, "cpe:/"), ":")
	if len(parts) < 4 || parts[3] == "*" || parts[3] == "-" {
		return ""
	}
	return parts[3]
}

// nessusQuoted is what an identifying plugin's output quotes the service
// as saying, where it quotes it: the SSH version string (10267), a banner
// printed between snip lines (telnet) or after a "... banner ... :" line
// (FTP, SMTP); else the output as printed.
func nessusQuoted(id, out string) string {
	if id == "10267" {
		if m := nessusSSHVersion.FindStringSubmatch(out); m != nil {
			return m[1] + "\r\n"
		}
	}
	if m := nessusSnip.FindStringSubmatch(out); m != nil && strings.TrimSpace(m[1]) != "" {
		return strings.Trim(m[1], "\n")
	}
	if m := nessusBannerIs.FindStringSubmatch(out); m != nil && strings.TrimSpace(m[1]) != "" {
		return strings.TrimSpace(m[1])
	}
	return out
}

var (
	nessusSSHVersion = regexp.MustCompile(`(?m)^[ \t]*SSH version[ \t]*:[ \t]*(SSH-\S[^\r\n]*?)[ \t]*$`)
	nessusSnip       = regexp.MustCompile(`(?s)-{5,} ?snip ?-{5,}\n(.*?)\n-{5,} ?snip ?-{5,}`)
	nessusBannerIs   = regexp.MustCompile(`(?is)\A[^\n]*\bbanner\b[^\n]*:[ \t]*\n+(.+)\z`)
)

// nessusHTTPInfo reads plugin 24260's output: "Response Code :
// HTTP/1.1 200 OK", the "Headers :" block (indented "Name: value" lines)
// and the "Response Body :" after it.
func nessusHTTPInfo(out string) *Response {
	r := &Response{}
	lines := strings.Split(out, "\n")
	inHeaders := false
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " \t\r")
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "Response Code :"):
			proto, status, reason, ok := parseStatusLine(strings.TrimSpace(strings.TrimPrefix(t, "Response Code :")))
			if ok {
				r.Protocol, r.Status, r.Reason = proto, status, reason
			}
			inHeaders = false
		case t == "Headers :":
			inHeaders = true
		case t == "Response Body :":
			body := strings.TrimLeft(strings.Join(lines[i+1:], "\n"), "\n")
			if strings.TrimSpace(body) != "" {
				r.Body = TextBody(body)
			}
			i = len(lines)
		case inHeaders && t != "" && (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")):
			if h, ok := headerLine([]byte(t)); ok && h.Name != "" && !strings.ContainsAny(h.Name, " \t") {
				r.Headers = append(r.Headers, h)
			}
		}
	}
	if r.Status == 0 && len(r.Headers) == 0 {
		return nil
	}
	return r
}

// nessusCert reads plugin 10863's output: its PEM certificate when it
// printed one (Normalize reads every field from it), else the subject's
// and issuer's attributes ("Common Name: x" under "Subject Name:"), the
// serial, the validity, the Subject Alternative Name extension's DNS and
// IP lines and the SHA-256 fingerprint.
func nessusCert(out string) *TLS {
	t := &TLS{}
	if i := strings.Index(out, "-----BEGIN CERTIFICATE-----"); i >= 0 {
		if j := strings.Index(out[i:], "-----END CERTIFICATE-----"); j > 0 {
			t.PEM = out[i : i+j+len("-----END CERTIFICATE-----")]
		}
	}
	var cur *DN
	var parts []string
	closeName := func() {
		if cur != nil {
			cur.DN = strings.Join(parts, ",")
		}
		cur, parts = nil, nil
	}
	inSAN, inFP := false, false
	var fp strings.Builder
	for _, l := range strings.Split(out, "\n") {
		t0 := strings.TrimSpace(l)
		if inFP && strings.HasPrefix(l, " ") && isHexPairs(t0) {
			fp.WriteString(strings.ReplaceAll(t0, " ", ""))
			continue
		}
		inFP = false
		k, v, ok := strings.Cut(t0, ":")
		v = strings.TrimSpace(v)
		switch {
		case t0 == "Subject Name:" || t0 == "Issuer Name:":
			closeName()
			cur = &DN{}
			if t0 == "Subject Name:" {
				t.Subject = cur
			} else {
				t.Issuer = cur
			}
		case cur != nil && ok && v != "":
			switch k {
			case "Common Name":
				cur.CN, parts = v, append(parts, "CN="+v)
			case "Organization":
				cur.O, parts = append(cur.O, v), append(parts, "O="+v)
			case "Organization Unit":
				cur.OU, parts = append(cur.OU, v), append(parts, "OU="+v)
			case "Country":
				cur.C, parts = v, append(parts, "C="+v)
			case "State/Province":
				cur.ST, parts = v, append(parts, "ST="+v)
			case "Locality":
				cur.L, parts = v, append(parts, "L="+v)
			case "Email Address":
				cur.Email = v
			case "Serial Number", "Version":
				closeName()
				if k == "Serial Number" {
					t.Serial = colonHexSerial(strings.ReplaceAll(v, " ", ""))
				}
			default:
				parts = append(parts, k+"="+v)
			}
		case ok && k == "Serial Number":
			closeName()
			t.Serial = colonHexSerial(strings.ReplaceAll(v, " ", ""))
		case ok && k == "Not Valid Before":
			t.NotBefore = nessusCertTime(v)
		case ok && k == "Not Valid After":
			t.NotAfter = nessusCertTime(v)
		case strings.HasPrefix(t0, "Extension: Subject Alternative Name"):
			closeName()
			inSAN = true
		case strings.HasPrefix(t0, "Extension:") || strings.HasPrefix(t0, "Fingerprints"):
			closeName()
			inSAN = false
		case inSAN && ok && (k == "DNS" || k == "IP" || k == "IP Address") && v != "":
			t.SANs = append(t.SANs, v)
		case ok && k == "SHA-256 Fingerprint":
			fp.Reset()
			fp.WriteString(strings.ReplaceAll(v, " ", ""))
			inFP = true
		}
	}
	closeName()
	if s := strings.ToLower(fp.String()); isHex(s, 64) {
		t.SHA256 = s
	}
	for _, d := range []**DN{&t.Subject, &t.Issuer} {
		if *d != nil && (*d).DN == "" && (*d).Email == "" {
			*d = nil
		}
	}
	if t.PEM == "" && t.empty() {
		return nil
	}
	return t
}

func isHexPairs(s string) bool {
	return s != "" && isHex(strings.ToLower(strings.ReplaceAll(s, " ", "")), len(strings.ReplaceAll(s, " ", "")))
}

// nessusCertTime reads "Mar 10 12:45:10 2025 GMT".
func nessusCertTime(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	for _, layout := range []string{"Jan 2 15:04:05 2006 MST", "Jan 2 15:04:05 2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Format(time.RFC3339)
		}
	}
	return ""
}

// hasWord reports whether text holds w (lower case) between characters
// that are not letters or digits.
func hasWord(text, w string) bool {
	if len(w) < 3 {
		return false
	}
	for i := 0; ; {
		j := strings.Index(text[i:], w)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (j == 0 || !isAlnum(text[j-1])) && (end == len(text) || !isAlnum(text[end])) {
			return true
		}
		i = j + 1
	}
}

// hasVersion reports whether text holds the version v whole: not inside a
// longer number ("10.0" is not in "10.0.17763").
func hasVersion(text, v string) bool {
	if v == "" || v == "*" || v == "-" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(text[i:], v)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(v)
		before := j == 0 || !(isDigit(text[j-1]) || text[j-1] == '.')
		after := end == len(text) || !(isDigit(text[end]) || text[end] == '.' && end+1 < len(text) && isDigit(text[end+1]))
		if before && after {
			return true
		}
		i = j + 1
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
