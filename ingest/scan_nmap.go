package ingest

import (
	"bufio"
	"bytes"
	"encoding/pem"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// NmapXML reads nmap's XML output (-oX), one <host> at a time (the file
// is never held whole). Every open port is a service observation:
//
//   - Detected{By: "nmap"} holds -sV's service name, product, version and
//     CPEs; Info its extrainfo, with "ostype: X", "devicetype: Y",
//     "hostname: H" (the host name the service's answer gave, such as a
//     router's model: "RT57i") and "favicon: Z" from the http-favicon
//     script (which names a favicon it knows; nmap gives no hash to keep)
//     appended.
//   - the ssl-cert script is a TLS probe: subject and issuer, validity,
//     SANs, SHA-256 and, when its pem element is there, the serial and
//     anything else read from the certificate itself;
//   - http-title, http-headers and http-server-header make one HTTP probe
//     (a GET of / or the HEAD http-headers says it sent) with the title
//     and headers they report; over an ssl tunnel it carries the TLS;
//   - the banner script is a banner probe (its \xHH escapes decoded);
//   - the output of the ike-version, snmp-sysdescr, http-cisco-anyconnect
//     and http-bigip-cookie scripts (an IKE responder's vendor IDs, an
//     SNMP agent's sysDescr, the AnyConnect server's version, BIG-IP's
//     decoded cookie), of the *-ntlm-info scripts (the target information
//     of the service's NTLM challenge) and of vulnerability scripts (nmapKeptScript) is a
//     banner probe named "nmap:<script>" holding the script's text;
//   - the service fingerprint nmap prints for a service it could not
//     name (servicefp) holds the service's answer to each of nmap's
//     probes: each becomes a banner probe named "nmap:<probe>" (NULL,
//     GetRequest, ...) with those bytes, rather than opaque text in Info.
//
// Other scripts' output is nmap's analysis, not the service's evidence,
// and is not kept. observed_at is the host's endtime, else its
// starttime, else the run's start. Ports not open (closed, filtered,
// open|filtered) are counted through Options.Skipped. The line of a
// record is the line its <host> starts on.

// nmapFaviconMD5 is http-favicon's output for an icon its database does
// not name.
var nmapFaviconMD5 = regexp.MustCompile(`(?i)\bfavicon MD5:\s*([0-9a-f]{32})\b`)

// nmapSSHIdentification is an SSH script's report of the identification
// string the server sent ("Server Identification String: SSH-2.0-ROSSSH",
// the ssh-hassh script of hassh-utils), the string captured.
var nmapSSHIdentification = regexp.MustCompile(`(?m)^\s*Server Identification String:\s*(SSH-\d+\.\d+-[^\r\n]*?)\s*$`)

func NmapXML(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	br := bufio.NewReaderSize(r, 64*1024)
	if head, _ := br.Peek(4096); bytes.Contains(head, []byte(`scanner="masscan"`)) {
		return Masscan(br, opt, emit, bad) // masscan's -oX: one <host> a line, with its banners
	}
	src := opt.source("nmap-xml")
	var runStart time.Time
	sawRun, stopped := false, false
	err := xmlReport(br, "nmap", func(le LineError) {
		stopped = true
		if !sawRun {
			le.Line = 1 // not nmap XML at all: the file is refused as a whole
		}
		bad(le)
	}, func(dec *xml.Decoder, se *xml.StartElement, _ []string, line int) (bool, error) {
		switch se.Name.Local {
		case "nmaprun":
			sawRun = true
			for _, a := range se.Attr {
				if a.Name.Local == "start" {
					runStart = unixTime(a.Value)
				}
			}
		case "host":
			if !sawRun {
				bad(LineError{line, errors.New("not nmap XML: <host> outside <nmaprun>")})
				return true, errStop
			}
			hl, _ := dec.InputPos()
			var h nmapHost
			if err := dec.DecodeElement(&h, se); err != nil {
				bad(LineError{hl, fmt.Errorf("host: %w", err)})
				return true, errStop
			}
			return true, h.emit(hl, src, opt, runStart, emit, bad)
		}
		return false, nil
	})
	switch {
	case errors.Is(err, errStop):
		return nil
	case err != nil:
		return err
	case !sawRun && !stopped:
		bad(LineError{1, errors.New("not nmap XML: no <nmaprun> element")})
	}
	return nil
}

type nmapHost struct {
	StartTime string `xml:"starttime,attr"`
	EndTime   string `xml:"endtime,attr"`
	Addresses []struct {
		Addr     string `xml:"addr,attr"`
		AddrType string `xml:"addrtype,attr"`
	} `xml:"address"`
	Hostnames []struct {
		Name string `xml:"name,attr"`
	} `xml:"hostnames>hostname"`
	Ports []nmapPort `xml:"ports>port"`
}

type nmapPort struct {
	Protocol string `xml:"protocol,attr"`
	PortID   string `xml:"portid,attr"`
	State    struct {
		State string `xml:"state,attr"`
	} `xml:"state"`
	Service *nmapService `xml:"service"`
	Scripts []nmapScript `xml:"script"`
}

// nmapService is nmap's identification of a port's service.
type nmapService struct {
	Name       string   `xml:"name,attr"`
	Product    string   `xml:"product,attr"`
	Version    string   `xml:"version,attr"`
	ExtraInfo  string   `xml:"extrainfo,attr"`
	OSType     string   `xml:"ostype,attr"`
	DeviceType string   `xml:"devicetype,attr"`
	Hostname   string   `xml:"hostname,attr"`
	Tunnel     string   `xml:"tunnel,attr"`
	ServiceFP  string   `xml:"servicefp,attr"`
	CPE        []string `xml:"cpe"`
	// full is the VERSION column as normal and grepable output print it
	// (product, version and extra information joined), where read from
	// them.
	full string
}

type nmapScript struct {
	ID     string      `xml:"id,attr"`
	Output string      `xml:"output,attr"`
	Elems  []nmapElem  `xml:"elem"`
	Tables []nmapTable `xml:"table"`
}

type nmapElem struct {
	Key   string `xml:"key,attr"`
	Value string `xml:",chardata"`
}

type nmapTable struct {
	Key    string      `xml:"key,attr"`
	Elems  []nmapElem  `xml:"elem"`
	Tables []nmapTable `xml:"table"`
}

func elem(es []nmapElem, key string) string {
	for _, e := range es {
		if e.Key == key {
			return e.Value
		}
	}
	return ""
}

func table(ts []nmapTable, key string) *nmapTable {
	for i := range ts {
		if ts[i].Key == key {
			return &ts[i]
		}
	}
	return nil
}

func (h *nmapHost) emit(line int, src string, opt Options, runStart time.Time, emit Emit, bad func(LineError)) error {
	ip := ""
	for _, a := range h.Addresses {
		if a.AddrType == "ipv4" || a.AddrType == "ipv6" {
			ip = a.Addr
			break
		}
	}
	if ip == "" {
		if len(h.Ports) > 0 {
			bad(LineError{line, errors.New("host: no ipv4 or ipv6 address")})
		}
		return nil
	}
	at := unixTime(h.EndTime)
	if at.IsZero() {
		at = unixTime(h.StartTime)
	}
	if at.IsZero() {
		at = runStart
	}
	for _, p := range h.Ports {
		if p.State.State != "open" {
			opt.skip(line, "nmap: port "+p.State.State)
			continue
		}
		port, err := strconv.Atoi(p.PortID)
		if err != nil {
			bad(LineError{line, fmt.Errorf("port %q: not a number", p.PortID)})
			continue
		}
		o := Observation{Type: TypeService, IP: ip, Source: src, ObservedAt: opt.when(at), Service: p.service(port)}
		for _, hn := range h.Hostnames {
			o.Hostnames = append(o.Hostnames, hn.Name)
		}
		if err := emitChecked(line, o, emit, bad); err != nil {
			return err
		}
	}
	return nil
}

func (p *nmapPort) service(port int) *Service {
	s := &Service{Port: port, Transport: p.Protocol}
	var info []string
	tunnel := ""
	if sv := p.Service; sv != nil {
		if sv.ExtraInfo != "" {
			info = append(info, sv.ExtraInfo)
		}
		if sv.OSType != "" {
			info = append(info, "ostype: "+sv.OSType)
		}
		if sv.DeviceType != "" {
			info = append(info, "devicetype: "+sv.DeviceType)
		}
		if sv.Hostname != "" {
			info = append(info, "hostname: "+sv.Hostname)
		}
		tunnel = sv.Tunnel
		s.Detected = &Detected{By: "nmap", Service: sv.Name, Product: sv.Product, Version: sv.Version, CPE: sv.CPE}
		if tunnel == "ssl" && sv.Name != "" && !strings.HasPrefix(sv.Name, "ssl") {
			s.Detected.Service = "ssl/" + sv.Name
		}
	}
	var httpP *Probe
	httpProbe := func() *Probe {
		if httpP == nil {
			httpP = &Probe{Name: "nmap:http", Request: &Request{Method: "GET", Path: "/"}, Response: &Response{}}
		}
		return httpP
	}
	var tlsT *TLS
	var probes []Probe
	for _, sc := range p.Scripts {
		switch sc.ID {
		case "ssl-cert":
			tlsT = nmapCert(&sc)
		case "http-title", "HTML title":
			// "HTML title" is the script's id in nmap 4.x's output
			title := elem(sc.Elems, "title")
			if title == "" && len(sc.Elems) == 0 && !strings.HasPrefix(sc.Output, "Site doesn't have a title") &&
				!strings.HasPrefix(sc.Output, "Did not follow redirect") {
				// the normal output: the title, then "Requested resource
				// was URL" when it followed a redirect
				title, _, _ = strings.Cut(sc.Output, "\n")
			}
			if title != "" {
				httpProbe().Response.Title = title
			}
			// the Location the service answered GET / with: http-title
			// prints it when it did not follow it ("Did not follow
			// redirect to URL") or when the title is the redirect's
			// target's ("Requested resource was URL"); the URL names the
			// product's login path (/+CSCOE+/logon.html, /my.policy, ...)
			if loc := nmapTitleRedirect(&sc); loc != "" {
				hp := httpProbe()
				if !hasHeader(hp.Response.Headers, "Location", loc) {
					hp.Response.Headers = append(hp.Response.Headers, Header{Name: "Location", Value: loc})
				}
			}
		case "http-server-header":
			hp := httpProbe()
			for _, v := range nmapServerHeader(&sc) {
				if !hasHeader(hp.Response.Headers, "Server", v) {
					hp.Response.Headers = append(hp.Response.Headers, Header{Name: "Server", Value: v})
				}
			}
		case "http-headers":
			nmapHTTPHeaders(&sc, httpProbe())
		case "http-auth":
			nmapHTTPAuth(sc.Output, httpProbe())
		case "http-favicon":
			if o := strings.TrimSpace(sc.Output); o != "" {
				info = append(info, "favicon: "+o)
				// an icon nmap's database does not know is printed as its
				// MD5 ("Unknown favicon MD5: 4EAA..."): kept as the
				// favicon's hash, which Recog's favicon database reads
				if m := nmapFaviconMD5.FindStringSubmatch(o); m != nil {
					probes = append(probes, faviconProbe("/favicon.ico", "", &Body{MD5: strings.ToLower(m[1])}))
				}
			}
		case "banner":
			if o := sc.Output; o != "" {
				probes = append(probes, Probe{Name: "nmap:banner", Banner: &Banner{Received: BytesBody(unescapeHex(o))}})
			}
		default:
			// the identification string an SSH script printed (nmap without
			// -sV names the port only "ssh"): kept as the banner the server
			// sent, which the SSH rules read
			if m := nmapSSHIdentification.FindStringSubmatch(sc.Output); m != nil {
				probes = append(probes, Probe{Name: "nmap:" + sc.ID, Banner: &Banner{Received: TextBody(m[1] + "\r\n")}})
				continue
			}
			// what the service said, as the script printed it: the IKE
			// responder's vendor IDs and attributes, the agent's sysDescr,
			// the AnyConnect server's version and tunnel groups, BIG-IP's
			// persistence cookie decoded, and what a vulnerability script
			// found (it names the product it found vulnerable)
			if !nmapKeptScript(sc.ID) && !nmapVulnsReport(sc.Output) {
				continue
			}
			if o := strings.TrimSpace(sc.Output); o != "" {
				probes = append(probes, Probe{Name: "nmap:" + sc.ID, Banner: &Banner{Received: TextBody(o)}})
			}
		}
	}
	if httpP != nil {
		if tunnel == "ssl" && tlsT != nil {
			httpP.TLS, tlsT = tlsT, nil
		}
		probes = append([]Probe{*httpP}, probes...)
	}
	if tlsT != nil {
		probes = append([]Probe{{Name: "nmap:ssl-cert", TLS: tlsT}}, probes...)
	}
	if p.Service != nil && p.Service.ServiceFP != "" {
		probes = append(probes, nmapFingerprint(p.Service.ServiceFP)...)
	} else {
		// nmap's normal output prints the service fingerprint of only a few
		// unrecognised services; fingerprint-strings has every one's
		// responses
		for _, sc := range p.Scripts {
			if sc.ID == "fingerprint-strings" {
				probes = append(probes, nmapFingerprintStrings(sc.Output)...)
			}
		}
	}
	if s.Detected != nil {
		s.Detected.Info = strings.Join(info, "; ")
	} else if len(info) > 0 {
		s.Detected = &Detected{By: "nmap", Info: strings.Join(info, "; ")}
	}
	s.Probes = probes
	return s
}

// nmapKeptScript reports whether a script's output is kept as a banner
// probe named for it: the scripts that print what the service said of
// itself (ftp-syst's SYST answer, "UNIX MikroTik 6.39.2", among them; the
// discovery answers ubiquiti-discovery and mikrotik-routeros-version decode:
// model, firmware, release; the *-ntlm-info scripts' NTLM challenge target
// information), and vulnerability scripts (an id with "vuln" in it: http-vuln-*, vulners, ...;
// or named for a CVE, as third-party checks are: cve-2022-40684), whose
// finding names the product. Others (brute forcing, enumeration, ...) are
// not kept: what they print is not the service's own answer, and a
// brute-force script's is credentials.
func nmapKeptScript(id string) bool {
	switch id {
	case "ike-version", "snmp-sysdescr", "http-cisco-anyconnect", "http-bigip-cookie", "ftp-syst",
		"ubiquiti-discovery", "mikrotik-routeros-version",
		// the private addresses the service's own certificate names in
		// its subject or SANs (group AT8: a Check Point's)
		"ssl-cert-intaddr",
		// the agent's engine ID (its enterprise: "enterprise: ciscoSystems"),
		// the NTP server's version and system ("system: JUNOS15.1X49-D70.3"),
		// the PPTP server's vendor and firmware (group AQ8: nmap's own
		// documented outputs of these scripts)
		"snmp-info", "ntp-info", "pptp-version":
		return true
	}
	if strings.HasSuffix(id, "-ntlm-info") {
		// rdp-, http-, smtp-, ms-sql-ntlm-info...: the target information
		// the service's own NTLM challenge carried (its host and domain
		// names, Product_Version: the Windows build)
		return true
	}
	return strings.Contains(id, "vuln") || strings.Contains(strings.ToLower(id), "cve")
}

// nmapHTTPAuth reads http-auth's answer to GET / into p: its status line
// ("HTTP/1.1 401 Unauthorized") and each challenge of the WWW-Authenticate
// header. The script prints a challenge parsed, as its scheme and
// name=value params ("Basic realm=WatchGuard SOHO"); it is written back as
// the header's form, the values quoted (`Basic realm="WatchGuard SOHO"`),
// one header per challenge. A header the script could not parse it prints
// whole ("WWW-Authenticate: ..."), kept as it is.
func nmapHTTPAuth(out string, p *Probe) {
	for _, l := range strings.Split(out, "\n") {
		// the normal output escapes the status line's CR
		l = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l), `\x0D`))
		switch {
		case l == "" || strings.HasPrefix(l, "Server returned status"):
		case strings.HasPrefix(l, "HTTP/"):
			if _, status, reason, ok := parseStatusLine(l); ok && p.Response.Status == 0 {
				p.Response.Status, p.Response.Reason = status, reason
			}
		case strings.HasPrefix(l, "WWW-Authenticate: "):
			p.Response.Headers = append(p.Response.Headers, Header{Name: "WWW-Authenticate", Value: strings.TrimPrefix(l, "WWW-Authenticate: ")})
		default:
			scheme, params, _ := strings.Cut(l, " ")
			if !nmapAuthScheme.MatchString(scheme) {
				continue
			}
			v := scheme
			idx := nmapAuthParam.FindAllStringSubmatchIndex(" "+params, -1)
			for i, m := range idx {
				end := len(params) + 1
				if i+1 < len(idx) {
					end = idx[i+1][0]
				}
				sep := " "
				if i > 0 {
					sep = ", "
				}
				name, value := (" " + params)[m[2]:m[3]], (" " + params)[m[1]:end]
				v += sep + name + `="` + value + `"`
			}
			p.Response.Headers = append(p.Response.Headers, Header{Name: "WWW-Authenticate", Value: v})
		}
	}
}

var (
	nmapAuthScheme = regexp.MustCompile(`^[A-Za-z][\w.-]*$`)
	// a param of a challenge as http-auth prints it: " name=" before its value
	nmapAuthParam = regexp.MustCompile(` ([A-Za-z][\w-]*)=`)
)

// nmapVulnsReport reports whether a script's output is the report of
// nmap's vulns library ("VULNERABLE:" and a "State: VULNERABLE" line), which
// every vulnerability script prints whatever its id (tls-ticketbleed,
// ssl-heartbleed, http-shellshock): what it found vulnerable names the
// product it found.
func nmapVulnsReport(out string) bool {
	out = strings.TrimSpace(out)
	return strings.HasPrefix(out, "VULNERABLE:") && strings.Contains(out, "State: VULNERABLE")
}

// nmapTitleRedirect is the redirect http-title met on GET /: its
// redirect_url element, else the URL of its output's "Did not follow
// redirect to URL" or "Requested resource was URL" line (the normal
// output, which -oX keeps as the script's output attribute).
func nmapTitleRedirect(sc *nmapScript) string {
	if u := strings.TrimSpace(elem(sc.Elems, "redirect_url")); u != "" {
		return u
	}
	for _, line := range strings.Split(sc.Output, "\n") {
		line = strings.TrimSpace(line)
		for _, prefix := range []string{"Did not follow redirect to ", "Requested resource was "} {
			if u, ok := strings.CutPrefix(line, prefix); ok {
				if u = strings.TrimSpace(u); u != "" && !strings.ContainsAny(u, " \t") {
					return u
				}
			}
		}
	}
	return ""
}

// nmapServerHeader is what the http-server-header script saw: its
// table's values, its elements', else its output.
func nmapServerHeader(sc *nmapScript) []string {
	var vals []string
	if t := table(sc.Tables, "Server"); t != nil {
		for _, e := range t.Elems {
			vals = append(vals, e.Value)
		}
	} else if len(sc.Elems) > 0 {
		for _, e := range sc.Elems {
			vals = append(vals, e.Value)
		}
	} else if o := strings.TrimSpace(sc.Output); o != "" {
		vals = append(vals, o)
	}
	return vals
}

// nmapHTTPHeaders adds what the http-headers script recorded to hp: the
// request method it names and each response header line, once.
func nmapHTTPHeaders(sc *nmapScript, hp *Probe) {
	lines := make([]string, 0, len(sc.Elems))
	for _, e := range sc.Elems {
		lines = append(lines, e.Value)
	}
	if len(lines) == 0 {
		lines = strings.Split(sc.Output, "\n")
	}
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if m, ok := strings.CutPrefix(l, "(Request type: "); ok {
			hp.Request.Method = strings.TrimSuffix(m, ")")
			continue
		}
		name, value, ok := strings.Cut(l, ":")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			continue
		}
		value = strings.TrimSpace(value)
		if !hasHeader(hp.Response.Headers, name, value) {
			hp.Response.Headers = append(hp.Response.Headers, Header{Name: name, Value: value})
		}
	}
}

func hasHeader(hs []Header, name, value string) bool {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) && h.Value == value {
			return true
		}
	}
	return false
}

// nmapCert reads the ssl-cert script's structured output (nmap 6.49 and
// later), or its text output when there is no structure.
func nmapCert(sc *nmapScript) *TLS {
	t := &TLS{}
	if pemText := elem(sc.Elems, "pem"); pemText != "" {
		if blk, _ := pem.Decode([]byte(pemText)); blk != nil {
			if c, err := certTLS(blk.Bytes); err == nil {
				t = c
			}
		}
	}
	name := func(key string) *DN {
		tb := table(sc.Tables, key)
		if tb == nil {
			return nil
		}
		d := &DN{}
		var parts []string
		for _, e := range tb.Elems {
			switch short := d.setAttr(e.Key, e.Value); short {
			case "emailAddress": // kept out of the DN string, as nmap's own line leaves it
			case "":
				parts = append(parts, e.Key+"="+e.Value)
			default:
				parts = append(parts, short+"="+e.Value)
			}
		}
		d.DN = strings.Join(parts, ",")
		return d
	}
	if d := name("subject"); d != nil && t.Subject == nil {
		t.Subject = d
	}
	if d := name("issuer"); d != nil && t.Issuer == nil {
		t.Issuer = d
	}
	if v := table(sc.Tables, "validity"); v != nil && t.NotBefore == "" {
		t.NotBefore = nmapTime(elem(v.Elems, "notBefore"))
		t.NotAfter = nmapTime(elem(v.Elems, "notAfter"))
	}
	if s := elem(sc.Elems, "sha256"); s != "" && t.SHA256 == "" {
		t.SHA256 = s
	}
	if ext := table(sc.Tables, "extensions"); ext != nil && len(t.SANs) == 0 {
		for _, e := range ext.Tables {
			if elem(e.Elems, "name") == "X509v3 Subject Alternative Name" {
				t.SANs = parseSANText(elem(e.Elems, "value"))
			}
		}
	}
	if len(sc.Tables) == 0 && t.Subject == nil {
		// Text only: "Subject: commonName=x/organizationName=y\nIssuer: ...",
		// and with -v (-oN of nmap -vv or --script-args) the certificate's
		// PEM block, read as the pem element is: the certificate's own
		// fields win, the text fills what it lacks.
		if i := strings.Index(sc.Output, "-----BEGIN CERTIFICATE-----"); i >= 0 {
			if blk, _ := pem.Decode([]byte(sc.Output[i:])); blk != nil {
				if c, err := certTLS(blk.Bytes); err == nil {
					t = c
				}
			}
		}
		for _, l := range strings.Split(sc.Output, "\n") {
			k, v, ok := strings.Cut(l, ":")
			if !ok {
				continue
			}
			v = strings.TrimSpace(v)
			switch strings.TrimSpace(k) {
			case "Subject":
				if t.Subject == nil {
					t.Subject = certName(v)
				}
			case "Issuer":
				if t.Issuer == nil {
					t.Issuer = certName(v)
				}
			case "Subject Alternative Name":
				if len(t.SANs) == 0 {
					t.SANs = parseSANText(v)
				}
			case "Not valid before":
				if t.NotBefore == "" {
					t.NotBefore = nmapTime(v)
				}
			case "Not valid after":
				if t.NotAfter == "" {
					t.NotAfter = nmapTime(v)
				}
			case "SHA-256":
				if t.SHA256 == "" {
					t.SHA256 = strings.ReplaceAll(v, " ", "")
				}
			}
		}
	}
	if t.SHA256 != "" && !isHex(strings.ToLower(strings.ReplaceAll(t.SHA256, ":", "")), 64) {
		t.SHA256 = ""
	}
	if t.empty() {
		return nil
	}
	return t
}

// nmapTime makes nmap's "2024-02-08T00:00:00" (UTC, no zone) RFC 3339.
func nmapTime(s string) string {
	if t := scanTime(s); !t.IsZero() {
		return t.UTC().Format(time.RFC3339)
	}
	return s
}

// parseSANText reads "DNS:a, DNS:b, IP Address:192.0.2.1".
//
// It reads the SANs as people write them too (the repair of an
// observation's "sans" given as one string): separated by commas,
// semicolons or lines, with or without the type's prefix.
func parseSANText(s string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' || r == '\n' }) {
		v := strings.TrimSpace(part)
		for _, p := range sanTypes {
			if len(v) > len(p) && strings.EqualFold(v[:len(p)], p) {
				v = strings.TrimSpace(v[len(p):])
				break
			}
		}
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// sanTypes are the type prefixes openssl and nmap print before a SAN.
var sanTypes = []string{"DNS:", "IP Address:", "IP:", "email:", "URI:", "DirName:", "othername:", "Registered ID:"}

// nmapFingerprint reads the responses in a service fingerprint:
// "SF-Port80-TCP:V=7.94%I=7%D=...%r(GetRequest,1A,"HTTP/1\.0\x20200...")%r(...)",
// whose lines after the first start with "SF:".
func nmapFingerprint(fp string) []Probe {
	fp = strings.ReplaceAll(fp, "\nSF:", "")
	fp = strings.ReplaceAll(fp, "\n", "")
	var out []Probe
	for {
		i := strings.Index(fp, "%r(")
		if i < 0 {
			return out
		}
		fp = fp[i+3:]
		name, rest, ok := strings.Cut(fp, ",")
		if !ok {
			return out
		}
		size, rest, ok := strings.Cut(rest, ",")
		if !ok || !strings.HasPrefix(rest, `"`) {
			return out
		}
		data, n := nmapFPString(rest[1:])
		fp = rest[1+n:]
		body := BytesBody(data)
		if want, err := strconv.ParseInt(size, 16, 64); err == nil && want > int64(len(data)) {
			// nmap cuts long fingerprints: the response is only begun.
			body.Truncated, body.Length, body.SHA256 = true, want, ""
		}
		out = append(out, Probe{Name: "nmap:" + name, Banner: &Banner{Received: body}})
		if len(out) >= MaxProbes {
			return out
		}
	}
}

// nmapFingerprintStrings reads the fingerprint-strings script's output:
// for each group of nmap's probes that got the same answer ("  GetRequest,
// HTTPOptions:"), the answer's printable strings, one a line ("    HTTP/1.1
// 404 Not Found"). nmap drops the bytes that are not printable, the line
// ends and the empty line before a body among them, so the answer is
// written back with CRLF line ends and, for an HTTP answer, an empty line
// before its first line that is not a header: the banner probe the
// service fingerprint would have given, named for the group's GetRequest
// where it has one, else for its first probe.
func nmapFingerprintStrings(out string) []Probe {
	var probes []Probe
	var name string
	var lines []string
	flush := func() {
		if name != "" && len(lines) > 0 && len(probes) < MaxProbes {
			if strings.HasPrefix(lines[0], "HTTP/") {
				for i := 1; i < len(lines); i++ {
					if !nmapHeaderLine.MatchString(lines[i]) {
						lines = slices.Insert(lines, i, "")
						break
					}
				}
			}
			probes = append(probes, Probe{Name: "nmap:" + name, Banner: &Banner{Received: TextBody(strings.Join(lines, "\r\n"))}})
		}
		name, lines = "", nil
	}
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "    "):
			if name != "" {
				lines = append(lines, l[4:])
			}
		case strings.HasPrefix(l, "  ") && strings.HasSuffix(strings.TrimSpace(l), ":"):
			flush()
			// named for GetRequest where the group has it (the probe a
			// rule of an HTTP answer reads), else for its first probe
			group := strings.Split(strings.TrimSuffix(strings.TrimSpace(l), ":"), ",")
			name = strings.TrimSpace(group[0])
			for _, g := range group {
				if strings.TrimSpace(g) == "GetRequest" {
					name = "GetRequest"
				}
			}
		}
	}
	flush()
	return probes
}

// nmapHeaderLine is an HTTP header line as fingerprint-strings prints it.
var nmapHeaderLine = regexp.MustCompile(`^[!#$%&'*+.^_` + "`" + `|~0-9A-Za-z-]+:`)

// nmapFPString decodes a fingerprint's quoted response up to its closing
// quote: \xHH, \0, \n, \r, \t and a backslash before any other character
// (nmap escapes regular-expression characters) stand for that byte. n is
// how much of s was read, the closing quote included.
func nmapFPString(s string) (out []byte, n int) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return out, i + 1
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'x':
				if i+2 < len(s) {
					if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
						out = append(out, byte(v))
						i += 2
						continue
					}
				}
				out = append(out, 'x')
			case '0':
				out = append(out, 0)
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			default:
				out = append(out, s[i])
			}
		default:
			out = append(out, c)
		}
	}
	return out, len(s)
}
