package ingest

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// nessusCSVColumn is one field of a Tenable CSV row, by the names the
// exports give it (compared without case): Nessus Professional and
// Tenable.io's vulnerability export ("Plugin ID", "Host", "Plugin
// Output", ...), Tenable.sc's ("Plugin", "IP Address", "Plugin Text",
// ...) and Tenable.io's newer semicolon-separated export
// ("definition.id", "asset.display_ipv4_address", "output", ...).
type nessusCSVColumn struct {
	what  string
	names []string
}

var (
	nessusColPlugin   = nessusCSVColumn{"plugin", []string{"Plugin ID", "Plugin", "definition.id"}}
	nessusColName     = nessusCSVColumn{"plugin name", []string{"Name", "Plugin Name", "definition.name"}}
	nessusColIP       = nessusCSVColumn{"address", []string{"IP Address", "asset.display_ipv4_address", "asset.display_ipv6_address", "Host"}}
	nessusColProtocol = nessusCSVColumn{"protocol", []string{"Protocol"}}
	nessusColPort     = nessusCSVColumn{"port", []string{"Port"}}
	nessusColOutput   = nessusCSVColumn{"plugin output", []string{"Plugin Output", "Plugin Text", "output"}}
	nessusColRisk     = nessusCSVColumn{"severity", []string{"Risk", "Severity", "Risk Factor", "definition.severity"}}
	nessusColCPE      = nessusCSVColumn{"cpe", []string{"CPE", "definition.cpe"}}
	nessusColOS       = nessusCSVColumn{"operating system", []string{"OS", "asset.operating_system"}}
	nessusColService  = nessusCSVColumn{"service", []string{"Service"}}
	nessusColFQDN     = nessusCSVColumn{"host name", []string{"DNS Name", "FQDN", "asset.display_fqdn", "asset.host_name"}}
	nessusColTime     = nessusCSVColumn{"time", []string{"Host End", "Last Observed", "Last Found", "last_seen", "Host Start", "First Discovered", "First Found", "first_observed"}}
	// the columns a Tenable CSV must have, in the order they are asked for
	nessusCSVNeeded = []nessusCSVColumn{nessusColPlugin, nessusColIP, nessusColPort, nessusColProtocol, nessusColOutput}
)

// nessusCSV reads a Tenable CSV export (told from .nessus by its first
// byte): a header row, then a finding a row. The rows are gathered per
// host (the exports sort them by plugin or severity, not by host) and
// each host is then read as a .nessus ReportHost: a row is a ReportItem
// (plugin, protocol, port, severity from Risk's word or Severity's number,
// plugin output, CPEs, Service as svc_name), and the host's address, DNS
// name, operating system and last time seen become its host-ip, host-fqdn,
// operating-system and HOST_END_TIMESTAMP tags. The line of a host's
// observations is the line of its first row.
func nessusCSV(br *bufio.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("nessus")
	cr := csv.NewReader(br)
	if head, _ := br.Peek(br.Size()); nessusSemicolons(head) {
		cr.Comma = ';'
	}
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			bad(LineError{1, errNotNessus})
			return nil
		}
		bad(LineError{1, fmt.Errorf("nessus csv: header: %w", err)})
		return nil
	}
	col := newCSVColumns(head)
	index := func(c nessusCSVColumn) int { return col.first(c.names...) }
	for _, c := range nessusCSVNeeded {
		if index(c) < 0 {
			bad(LineError{1, fmt.Errorf("not a .nessus file (no XML) nor a Tenable (Nessus, Tenable.io, Tenable.sc) CSV export: no %s column (%s); want the export's header row: "+
				"Plugin ID,CVE,CVSS,Risk,Host,Protocol,Port,Name,...,Plugin Output (Nessus, Tenable.io), Plugin,Plugin Name,...,IP Address,Protocol,Port,...,Plugin Output (Tenable.sc), "+
				"or Tenable.io's definition.id, asset.display_ipv4_address, port, protocol, output", c.what, nessusColumnNames(c))})
			return nil
		}
	}
	// a Host column beside an IP Address column holds the host's name
	hostName := -1
	if i, ok := col["host"]; ok && i != index(nessusColIP) {
		hostName = i
	}
	field := func(rec []string, c nessusCSVColumn) string {
		for _, n := range c.names {
			if i, ok := col[strings.ToLower(n)]; ok && i < len(rec) && strings.TrimSpace(rec[i]) != "" {
				return strings.TrimSpace(rec[i])
			}
		}
		return ""
	}
	type csvHost struct {
		line int
		h    nessusHost
		at   time.Time
	}
	hosts := map[string]*csvHost{}
	var order []*csvHost
	if err := eachCSVRecord(cr, "nessus", bad, func(rec []string, line int) error {
		if strings.TrimSpace(strings.Join(rec, "")) == "" {
			return nil // an empty row (Tenable.sc pads its exports with them)
		}
		addr := field(rec, nessusColIP)
		if a, _, ok := strings.Cut(addr, ","); ok { // Tenable.io lists an asset's addresses
			addr = strings.TrimSpace(a)
		}
		if addr == "" {
			bad(LineError{line, fmt.Errorf("nessus csv: plugin %s: no host (%s)", field(rec, nessusColPlugin), nessusColumnNames(nessusColIP))})
			return nil
		}
		h, ok := hosts[addr]
		if !ok {
			h = &csvHost{line: line, h: nessusHost{Name: addr}}
			if ip, err := netip.ParseAddr(addr); err == nil {
				h.h.addTag("host-ip", ip.String())
			}
			hosts[addr] = h
			order = append(order, h)
		}
		if h.h.tag("host-fqdn") == "" {
			n := field(rec, nessusColFQDN)
			if n == "" && hostName >= 0 && hostName < len(rec) {
				n = strings.TrimSpace(rec[hostName])
			}
			if _, err := netip.ParseAddr(n); n != "" && err != nil {
				h.h.addTag("host-fqdn", n)
			}
		}
		if os := field(rec, nessusColOS); os != "" && h.h.tag("operating-system") == "" {
			h.h.addTag("operating-system", os)
		}
		if t := nessusCSVTime(field(rec, nessusColTime)); t.After(h.at) {
			h.at = t
		}
		out := field(rec, nessusColOutput)
		// Tenable.sc heads the output "Plugin Output: "; Tenable.io
		// quotes a value that could be read as a spreadsheet formula with
		// a leading "'"
		out = strings.TrimPrefix(out, "Plugin Output:")
		out = strings.TrimPrefix(out, "'")
		h.h.Items = append(h.h.Items, nessusItem{
			Port: field(rec, nessusColPort), Protocol: field(rec, nessusColProtocol), SvcName: field(rec, nessusColService),
			PluginID: field(rec, nessusColPlugin), Plugin: field(rec, nessusColName), Severity: nessusSeverity(field(rec, nessusColRisk)),
			Output: out, CPE: strings.Join(strings.FieldsFunc(field(rec, nessusColCPE), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' }), " "),
		})
		return nil
	}); err != nil {
		return err
	}
	for _, h := range order {
		if !h.at.IsZero() {
			h.h.addTag("HOST_END_TIMESTAMP", strconv.FormatInt(h.at.Unix(), 10))
		}
		// a row with no port is a host-level finding, as port 0 is
		for i := range h.h.Items {
			if h.h.Items[i].Port == "" {
				h.h.Items[i].Port = "0"
			}
		}
		if err := h.h.emit(h.line, src, opt, emit, bad); err != nil {
			return err
		}
	}
	return nil
}

func (h *nessusHost) addTag(name, value string) {
	h.Tags = append(h.Tags, struct {
		Name  string `xml:"name,attr"`
		Value string `xml:",chardata"`
	}{name, value})
}

func nessusColumnNames(c nessusCSVColumn) string {
	q := make([]string, len(c.names))
	for i, n := range c.names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, " or ")
}

// nessusSemicolons reports whether the header row (the first line of
// head) separates its names with semicolons (Tenable.io's newer export).
func nessusSemicolons(head []byte) bool {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	return bytes.Count(line, []byte(";")) > bytes.Count(line, []byte(","))
}

// nessusSeverity is a finding's severity as .nessus writes it (0 to 4),
// from the word of a Risk column ("None", "Low", "Medium", "High",
// "Critical"; "Info") or a number.
func nessusSeverity(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "none", "info", "informational":
		return "0"
	case "low":
		return "1"
	case "medium":
		return "2"
	case "high":
		return "3"
	case "critical":
		return "4"
	}
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		return strconv.Itoa(n)
	}
	return "0"
}

// nessusCSVZones are the zone abbreviations Tenable.sc writes after its
// times ("Jan 5, 2021 10:24:08 MST"), which Go does not resolve itself.
var nessusCSVZones = map[string]int{"UTC": 0, "GMT": 0, "EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7}

// nessusCSVTime reads a Tenable CSV's time: Tenable.sc's "Feb 9, 2024
// 10:48:42 UTC" (the US zones by their abbreviations; another zone is read
// as UTC), Tenable.io's RFC 3339, Nessus's "Thu Mar 16 10:44:23 2023".
func nessusCSVTime(s string) time.Time {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return time.Time{}
	}
	if i := strings.LastIndexByte(s, ' '); i > 0 {
		if t, err := time.Parse("Jan 2, 2006 15:04:05", s[:i]); err == nil {
			off := nessusCSVZones[s[i+1:]]
			return t.Add(-time.Duration(off) * time.Hour).UTC()
		}
	}
	if t, err := time.Parse("Jan 2, 2006 15:04:05", s); err == nil {
		return t.UTC()
	}
	return nessusTime(s)
}
