package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// NmapGrep reads nmap's grepable output (-oG): one service observation
// per open port of each "Host: ... Ports: ..." line, with the port's
// service name and version column (product, version and extra info in
// one string) and the host's OS guess as Detected; observed at the
// "# Nmap ... scan initiated" time (nmap writes local time without a
// zone: run it with TZ=UTC), else the file's time.
func NmapGrep(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	br := bufio.NewReaderSize(r, 64*1024)
	if head, _ := br.Peek(4096); bytes.HasPrefix(head, []byte("# Masscan ")) || bytes.HasPrefix(head, []byte("Timestamp: ")) || bytes.Contains(head, []byte("\nTimestamp: ")) {
		return Masscan(br, opt, emit, bad) // masscan's -oG: its own lines (docs/ingest-enrich.md)
	}
	r = br
	src := opt.source("nmap-grep")
	var started time.Time
	return opt.lines(r, "nmap grepable output", bad, func(n int, b []byte) error {
		line := strings.TrimRight(string(b), " \t")
		switch {
		case strings.TrimSpace(line) == "":
			return nil
		case strings.HasPrefix(line, "# Nmap ") && strings.Contains(line, " scan initiated "):
			if t, ok := nmapScanStart(line); ok {
				started = t
			}
			return nil
		case strings.HasPrefix(line, "# Nmap done"):
			started = time.Time{} // the next scan has its own header
			return nil
		case strings.HasPrefix(line, "#"):
			return nil
		case !strings.HasPrefix(line, "Host: "):
			bad(LineError{n, errors.New(`not nmap grepable output: want "Host: " or "#"`)})
			return nil
		}
		host := parseGrepHost(line)
		a, err := netip.ParseAddr(host.ip)
		if err != nil {
			bad(LineError{n, fmt.Errorf("host: not an IP address: %q", host.ip)})
			return nil
		}
		if host.ports == "" {
			return nil // the Status line, or a host without open ports
		}
		when := opt.when(started)
		for _, e := range splitGrepPorts(host.ports) {
			f := strings.Split(e, "/")
			if len(f) < 7 {
				bad(LineError{n, fmt.Errorf("ports: entry %q: want port/state/protocol/owner/service/rpc/version/", e)})
				continue
			}
			port, err := strconv.Atoi(strings.TrimSpace(f[0]))
			if err != nil || port < 1 || port > 65535 {
				bad(LineError{n, fmt.Errorf("ports: entry %q: bad port", e)})
				continue
			}
			if f[1] != "open" {
				opt.skip(n, "nmap: port "+f[1])
				continue
			}
			proto := strings.ToLower(f[2])
			if proto != "tcp" && proto != "udp" {
				opt.skip(n, "nmap: protocol "+proto)
				continue
			}
			s := &Service{Port: port, Transport: proto}
			d := &Detected{By: "nmap", Service: strings.ReplaceAll(f[4], "|", "/")}
			var info []string
			if v := strings.TrimSpace(f[6]); v != "" {
				v = strings.ReplaceAll(v, "|", "/")
				info = append(info, v)
				// the column split as nmap joined it: product, version, (extra info)
				d.Product, d.Version, _ = splitNmapVersion(v)
			}
			if host.os != "" {
				info = append(info, "os: "+host.os)
			}
			d.Info = strings.Join(info, "; ")
			if d.Service != "" || d.Info != "" {
				s.Detected = d
			}
			o := Observation{Type: TypeService, IP: a.Unmap().String(), Source: src, ObservedAt: when, Service: s}
			if host.name != "" {
				o.Hostnames = []string{host.name}
			}
			if err := emitChecked(n, o, emit, bad); err != nil {
				return err
			}
		}
		return nil
	})
}

type grepHost struct{ ip, name, ports, os string }

// parseGrepHost splits a Host line into its fields: tab-separated as
// nmap writes them, or by their keywords where the tabs were lost.
func parseGrepHost(line string) grepHost {
	var h grepHost
	rest := strings.TrimPrefix(line, "Host: ")
	i := strings.IndexAny(rest, " \t")
	if i < 0 {
		h.ip = rest
		return h
	}
	h.ip, rest = rest[:i], strings.TrimLeft(rest[i:], " ")
	if strings.HasPrefix(rest, "(") {
		if j := strings.IndexByte(rest, ')'); j >= 0 {
			h.name, rest = rest[1:j], rest[j+1:]
		}
	}
	for _, key := range []string{"Ports: ", "OS: "} {
		k := strings.Index(rest, key)
		if k < 0 {
			continue
		}
		v := rest[k+len(key):]
		end := len(v)
		for _, stop := range []string{"\t", "  Ignored State:", " Ignored State:", "  OS:", "  Seq Index:"} {
			if s := strings.Index(v, stop); s >= 0 && s < end {
				end = s
			}
		}
		v = strings.TrimSpace(v[:end])
		if key == "Ports: " {
			h.ports = v
		} else {
			h.os = v
		}
	}
	return h
}

// splitGrepPorts splits the Ports field at the ", " that starts the next
// port entry (a version string may itself hold ", ").
func splitGrepPorts(s string) []string {
	var out []string
	start := 0
	for i := 0; i+2 < len(s); i++ {
		if s[i] == ',' && s[i+1] == ' ' && startsWithPortEntry(s[i+2:]) {
			out = append(out, s[start:i])
			start = i + 2
			i++
		}
	}
	return append(out, s[start:])
}

func startsWithPortEntry(s string) bool {
	j := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return j > 0 && j < len(s) && s[j] == '/'
}

// nmapScanStart reads the time of a "# Nmap 7.94 scan initiated Mon Jul 31
// 11:02:56 2019 as: nmap ..." line (normal and grepable output; local time
// without a zone, as nmap writes it).
func nmapScanStart(line string) (time.Time, bool) {
	rest := line[strings.Index(line, " scan initiated ")+len(" scan initiated "):]
	if i := strings.Index(rest, " as: "); i >= 0 {
		rest = rest[:i]
	}
	t, err := time.Parse("Mon Jan 2 15:04:05 2006", strings.Join(strings.Fields(rest), " "))
	return t, err == nil
}
