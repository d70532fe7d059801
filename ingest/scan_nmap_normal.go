package ingest

import (
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

// NmapNormal reads nmap's normal output (-oN, and what nmap prints on a
// terminal, as people paste it into issues and write-ups): each "Nmap
// scan report for" block's port table and the script output under each
// port, read as the nmap-xml adapter reads the same scan. The port
// table's VERSION column (product, version and extra information in one
// string) is split as nmap joins them: the extra information in the
// trailing parentheses, the version from the first word that starts
// with a digit; the whole column is kept as detected.info. Script output
// is read as its text (ssl-cert's Subject and Issuer lines, http-title,
// http-server-header, banner, the kept scripts), a service fingerprint
// ("SF-Port443-TCP:..." and its "SF:" lines) as the responses it holds,
// and "Service Info: OS: ...; Host: ...; Device: ...; CPE: ..." as every
// port's OS, host name, device type and CPEs (as the XML's service
// attributes are read). observed_at is the host's "Scanned at" time
// (nmap -v), else the run's start.
// Lines that are none of these (host status, OS detection, traceroute)
// are passed over; a file with no scan report in it is refused.
func NmapNormal(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("nmap-normal")
	var (
		started time.Time
		host    *normalHost
		sawScan bool
	)
	flush := func() error {
		if host == nil {
			return nil
		}
		h := host
		host = nil
		return h.emit(src, opt, started, emit, bad)
	}
	err := opt.lines(r, "nmap normal output", bad, func(n int, b []byte) error {
		line := strings.TrimRight(string(b), " \t\r")
		switch {
		case strings.HasPrefix(line, "# Nmap ") && strings.Contains(line, " scan initiated "):
			if t, ok := nmapScanStart(line); ok {
				started = t
			}
			return nil
		case strings.HasPrefix(line, "Starting Nmap "):
			// what nmap prints on a terminal: each run's start, the
			// hosts after it observed then (the host before it is
			// the run before's)
			if err := flush(); err != nil {
				return err
			}
			if t, ok := nmapStarting(line); ok {
				started = t
			}
			return nil
		case strings.HasPrefix(line, "Nmap scan report for "), normalOldHost.MatchString(line):
			if err := flush(); err != nil {
				return err
			}
			sawScan = true
			at, current := strings.CutPrefix(line, "Nmap scan report for ")
			old := !current
			if old {
				at = normalOldHost.FindStringSubmatch(line)[1]
			}
			ip, name, err := scanReportHost(at)
			if err != nil {
				bad(LineError{n, err})
				return nil
			}
			host = &normalHost{line: n, ip: ip, name: name, old: old}
			return nil
		case host == nil:
			return nil
		}
		host.read(n, line)
		return nil
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	if !sawScan {
		bad(LineError{1, errors.New(`not nmap normal output: no "Nmap scan report for" line`)})
	}
	return nil
}

// scanReportHost reads "NAME (IP)" or "IP" of a scan report line.
func scanReportHost(s string) (ip, name string, err error) {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '('); i > 0 && strings.HasSuffix(s, ")") {
		name, s = strings.TrimSpace(s[:i]), s[i+1:len(s)-1]
	}
	a, perr := netip.ParseAddr(s)
	if perr != nil {
		return "", "", fmt.Errorf("scan report: not an IP address: %q", s)
	}
	return a.Unmap().String(), name, nil
}

// normalHost is one scan report's ports as they are read.
type normalHost struct {
	line     int
	ip, name string
	ports    []nmapPort
	// inScripts: script lines now belong to the last port (not to the
	// host's "Host script results").
	inScripts bool
	// fp collects a service fingerprint's lines, fpPort the port it is of.
	fp     strings.Builder
	fpPort string
	os     string
	device string // Service Info's Device: (the XML's devicetype)
	host   string // Service Info's Host: (the XML's service hostname)
	cpe    []string
	// reason: the port table's header has nmap's REASON column (--reason,
	// -v with -sV), printed between SERVICE and VERSION.
	reason bool
	// old: the block began with "Interesting ports on", as nmap 5.00 and
	// older print a host's report; their script lines may carry one more
	// space after the bar ("|  snmp-sysdescr: ...", "|_ sshv1: ...").
	old bool
	// scanned: the host's "Scanned at" line (nmap -v and more), the time
	// its own scan began.
	scanned time.Time
}

var (
	// normalScannedAt is the line -v prints under a host's status:
	// "Scanned at 2024-06-04 17:03:18 UTC for 1185s", the zone as the
	// system's strftime %Z gives it.
	normalScannedAt = regexp.MustCompile(`^Scanned at (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})(?: (\S+))? for `)
	normalPortLine  = regexp.MustCompile(`^(\d{1,5})/(tcp|udp|sctp)\s+(\S+)\s+(\S+)(?:\s+(.*))?$`)
	normalScript    = regexp.MustCompile(`^` + nmapScriptID + `(?: (.*))?$`)
	normalFPStart   = regexp.MustCompile(`^SF-Port(\d+)-(TCP|UDP):`)
	normalHeader    = regexp.MustCompile(`^PORT\s+STATE\s+SERVICE(\s+REASON)?\b`)
	// normalOldHost is a host report's first line as nmap printed it up to
	// 5.00 ("Interesting ports on NAME (IP):", "Interesting ports on IP:");
	// 5.20 and later print "Nmap scan report for".
	normalOldHost = regexp.MustCompile(`^Interesting ports on (.+):$`)
	// normalOldScript is a script block's first line of that output, its
	// id after "| ", "|_", "|  " or "|_ ".
	normalOldScript = regexp.MustCompile(`^\|[_ ] ?([a-z][a-z0-9]*(?:-[a-z0-9]+)*):(?: (.*))?$`)
	// normalReason is the REASON column's value ("syn-ack", "udp-response",
	// "syn-ack ttl 63") before the VERSION column.
	normalReason = regexp.MustCompile(`^\S+(?:\s+ttl\s+\d+)?(?:\s+(.*))?$`)
)

func (h *normalHost) read(n int, line string) {
	switch {
	case normalFPStart.MatchString(line):
		h.endFingerprint()
		h.fpPort = normalFPStart.FindStringSubmatch(line)[1]
		h.fp.WriteString(line)
		return
	case strings.HasPrefix(line, "SF:") && h.fpPort != "":
		h.fp.WriteString("\n" + line)
		return
	}
	h.endFingerprint()
	switch {
	case normalScannedAt.MatchString(line) && len(h.ports) == 0:
		// a UTC or GMT zone, or a numeric offset, gives the instant; a
		// zone abbreviation (PDT, CST) is ambiguous, so its clock time is
		// taken as it stands, as the "scan initiated" line's is
		m := normalScannedAt.FindStringSubmatch(line)
		if t, ok := nmapClock("2006-01-02 15:04:05", m[1], m[2]); ok {
			h.scanned = t
		}
	case normalHeader.MatchString(line):
		h.reason = normalHeader.FindStringSubmatch(line)[1] != ""
	case normalPortLine.MatchString(line):
		m := normalPortLine.FindStringSubmatch(line)
		if h.reason && m[5] != "" {
			m[5] = normalReason.FindStringSubmatch(m[5])[1]
		}
		p := nmapPort{Protocol: m[2], PortID: m[1]}
		p.State.State = m[3]
		svc := strings.TrimSuffix(m[4], "?")
		tunnel := ""
		if rest, ok := strings.CutPrefix(svc, "ssl/"); ok {
			svc, tunnel = rest, "ssl"
		}
		product, version, extra := splitNmapVersion(m[5])
		p.Service = &nmapService{Name: svc, Product: product, Version: version, ExtraInfo: extra, Tunnel: tunnel, full: strings.TrimSpace(m[5])}
		h.ports = append(h.ports, p)
		h.inScripts = true
	case strings.HasPrefix(line, "Host script results:"):
		h.inScripts = false
	case strings.HasPrefix(line, "Service Info: "):
		for _, f := range strings.Split(strings.TrimPrefix(line, "Service Info: "), ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(f), ": ")
			switch {
			case !ok:
			case k == "OS":
				h.os = v
			case k == "Device":
				h.device = v
			case k == "Host":
				h.host = v
			case k == "CPE" || k == "CPEs":
				h.cpe = append(h.cpe, strings.Fields(strings.ReplaceAll(v, ",", " "))...)
			}
		}
	case strings.HasPrefix(line, "|") && h.inScripts && len(h.ports) > 0:
		p := &h.ports[len(h.ports)-1]
		if m := normalScript.FindStringSubmatch(line); m != nil {
			p.Scripts = append(p.Scripts, nmapScript{ID: m[1], Output: m[2]})
			return
		}
		if m := normalOldScript.FindStringSubmatch(line); h.old && m != nil {
			p.Scripts = append(p.Scripts, nmapScript{ID: m[1], Output: strings.TrimSpace(m[2])})
			return
		}
		if len(p.Scripts) == 0 {
			return
		}
		sc := &p.Scripts[len(p.Scripts)-1]
		// nmap writes "| " before a line of a script's output and "|_" before its last
		text := strings.TrimPrefix(line[1:], " ")
		if strings.HasPrefix(line, "|_") {
			text = line[2:]
		}
		if h.old {
			// nmap 5.00 indents a script's further lines by two spaces more than its first
			text = strings.TrimSpace(text)
		}
		if sc.Output == "" {
			sc.Output = text
		} else {
			sc.Output += "\n" + text
		}
	case line == "" || !strings.HasPrefix(line, " "):
		h.inScripts = h.inScripts && line != ""
	}
}

// endFingerprint gives a finished service fingerprint to its port.
func (h *normalHost) endFingerprint() {
	if h.fpPort == "" {
		return
	}
	for i := range h.ports {
		if h.ports[i].PortID == h.fpPort && h.ports[i].Service != nil {
			h.ports[i].Service.ServiceFP = h.fp.String()
		}
	}
	h.fpPort = ""
	h.fp.Reset()
}

func (h *normalHost) emit(src string, opt Options, started time.Time, emit Emit, bad func(LineError)) error {
	h.endFingerprint()
	for _, p := range h.ports {
		if p.State.State != "open" {
			opt.skip(h.line, "nmap: port "+p.State.State)
			continue
		}
		port, err := strconv.Atoi(p.PortID)
		if err != nil || port < 1 || port > 65535 {
			bad(LineError{h.line, fmt.Errorf("port %q: bad port", p.PortID)})
			continue
		}
		if sv := p.Service; sv != nil {
			if sv.OSType == "" {
				sv.OSType = h.os
			}
			if sv.DeviceType == "" {
				sv.DeviceType = h.device
			}
			if sv.Hostname == "" {
				sv.Hostname = h.host
			}
			sv.CPE = append(sv.CPE, h.cpe...)
		}
		s := p.service(port)
		if s.Detected != nil && p.Service != nil && p.Service.full != "" {
			s.Detected.Info = strings.Join(append([]string{p.Service.full}, nonEmpty(s.Detected.Info)...), "; ")
		}
		at := started
		if !h.scanned.IsZero() {
			at = h.scanned
		}
		o := Observation{Type: TypeService, IP: h.ip, Source: src, ObservedAt: opt.when(at), Service: s}
		if h.name != "" {
			o.Hostnames = []string{h.name}
		}
		if err := emitChecked(h.line, o, emit, bad); err != nil {
			return err
		}
	}
	return nil
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// splitNmapVersion splits the VERSION column nmap prints (normal and
// grepable output) back into the parts it joined: "product version
// (extra info)". The extra information is the trailing parenthesised
// group; the version starts at the first word after the product's first
// that begins with a digit ("Cisco SSH 1.25 (protocol 2.0)", "MikroTik
// router ftpd 5.26"); a column without such a word is the product alone
// ("Fortinet FortiGate SSL VPN").
func splitNmapVersion(col string) (product, version, extra string) {
	col = strings.TrimSpace(col)
	if strings.HasSuffix(col, ")") {
		depth := 0
		for i := len(col) - 1; i >= 0; i-- {
			switch col[i] {
			case ')':
				depth++
			case '(':
				depth--
			}
			if depth == 0 {
				extra = col[i+1 : len(col)-1]
				col = strings.TrimSpace(col[:i])
				break
			}
		}
	}
	words := strings.Fields(col)
	for i := 1; i < len(words); i++ {
		if c := words[i][0]; c >= '0' && c <= '9' {
			return strings.Join(words[:i], " "), strings.Join(words[i:], " "), extra
		}
	}
	return col, "", extra
}

// nmapPortLineFor finds the port table's line of one port in pasted nmap
// output ("443/tcp open ssl/http ...").
var nmapPortLineFor = regexp.MustCompile(`(?m)^\d{1,5}/(?:tcp|udp|sctp)\s+open\s`)

// nmapScriptID is a script block's first line up to its id's colon
// ("| ssl-cert:", "|_http-title:"), the id captured.
const nmapScriptID = `\|[_ ]([a-z][a-z0-9]*(?:-[a-z0-9]+)*):`

// nmapScriptStart finds a script block's first line ("| ssl-cert: ...",
// or "| ftp-syst:" alone, as a multi-line output's first line reads once
// a page or an editor has dropped its trailing space).
var nmapScriptStart = regexp.MustCompile(`(?m)^` + nmapScriptID + `(?: |$)`)

// nmapFromBanners reads nmap's normal output pasted as a banner (a
// capture that quotes a write-up's or a terminal's nmap run as the text
// it is) the way the nmap-normal adapter reads it: for the line of the
// service's own port, the scanner's identification becomes the service's
// (when it has none) and the scripts' probes (the certificate, the title,
// the server header, a kept script) are added beside the banner. A
// service that already has an identification or nmap's probes is left as
// it is, so normalizing twice changes nothing.
func (s *Service) nmapFromBanners() {
	if s.Detected != nil || slices.ContainsFunc(s.Probes, func(p Probe) bool { return strings.HasPrefix(p.Name, "nmap:") }) {
		return // nmap's own record, or a paste already read
	}
	for i := range s.Probes {
		b := s.Probes[i].Banner
		if b == nil || b.Received == nil || b.Received.Encoding != "" || len(b.Received.Data) > 256<<10 {
			continue
		}
		text := b.Received.Data
		portLine := nmapPortLineFor.MatchString(text)
		if !portLine {
			// a script block quoted without its port line ("| ssl-cert:
			// Subject: ..."): read as the service's own port's
			if !nmapScriptStart.MatchString(text) {
				continue
			}
			text = fmt.Sprintf("%d/%s open unknown\n", s.Port, s.Transport) + text
		}
		var found *Service
		_ = NmapNormal(strings.NewReader("Nmap scan report for 192.0.2.1\n"+text), Options{}, func(_ int, o Observation) error {
			if o.Service != nil && o.Service.Port == s.Port && o.Service.Transport == s.Transport && found == nil {
				found = o.Service
			}
			return nil
		}, func(LineError) {})
		if found == nil {
			continue
		}
		if portLine {
			s.Detected = found.Detected
		}
		if len(found.Probes) == 0 {
			continue
		}
		s.Probes = append(s.Probes, found.Probes...)
		return
	}
}

// nmapStartingLine is the line nmap prints on a terminal when a run starts:
// "Starting Nmap 7.95 ( https://nmap.org ) at 2025-02-09 17:24 UTC" (older
// releases name http://nmap.org or http://insecure.org), the zone as the
// system's strftime %Z gives it.
var nmapStartingLine = regexp.MustCompile(`^Starting Nmap \S+ \( ?https?://[^)]*\) at (\d{4}-\d{2}-\d{2} \d{2}:\d{2})(?: (\S+))?`)

// nmapStarting reads the time of a "Starting Nmap ... at" line: a UTC or
// GMT zone, or a numeric offset ("-03", "+0530"), gives the instant; a
// zone abbreviation (CST, IST, EDT) is ambiguous, so its clock time is
// taken as it stands, as the "# Nmap ... scan initiated" line's local time
// is.
func nmapStarting(line string) (time.Time, bool) {
	m := nmapStartingLine.FindStringSubmatch(line)
	if m == nil {
		return time.Time{}, false
	}
	return nmapClock("2006-01-02 15:04", m[1], m[2])
}

// nmapClock reads the clock time nmap printed (layout) and the zone after
// it: a numeric offset gives the instant; UTC, GMT, an abbreviation or
// none leave the clock time as it stands.
func nmapClock(layout, clock, zone string) (time.Time, bool) {
	t, err := time.Parse(layout, clock)
	if err != nil {
		return time.Time{}, false
	}
	if off, ok := numericZone(zone); ok {
		t = t.Add(-off)
	}
	return t, true
}

// numericZone reads an offset written "+05", "-0300", "+05:30".
func numericZone(z string) (time.Duration, bool) {
	if len(z) < 3 || (z[0] != '+' && z[0] != '-') {
		return 0, false
	}
	digits := strings.ReplaceAll(z[1:], ":", "")
	if len(digits) != 2 && len(digits) != 4 {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	h, m := n, 0
	if len(digits) == 4 {
		h, m = n/100, n%100
	}
	if h > 14 || m > 59 {
		return 0, false
	}
	d := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute
	if z[0] == '-' {
		d = -d
	}
	return d, true
}
