package ingest

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// fingerprintxRecord is one line of praetorian fingerprintx's --json
// output (and of nerva, its successor, which writes the HTTP plugin's
// members in snake_case): the service's name is "protocol"
// (v1.1 on) or "service" (before), its details the plugin's "metadata".
type fingerprintxRecord struct {
	Host      string                     `json:"host"`
	IP        string                     `json:"ip"`
	Port      int                        `json:"port"`
	Protocol  string                     `json:"protocol"`
	Service   string                     `json:"service"`
	TLS       bool                       `json:"tls"`
	Transport string                     `json:"transport"`
	Version   string                     `json:"version"`
	CPE       string                     `json:"cpe"`
	Metadata  map[string]json.RawMessage `json:"metadata"`
}

// Fingerprintx reads fingerprintx --json lines: one service observation
// per line. The HTTP plugins' metadata (status, responseHeaders) is an
// HTTP probe; a banner (ssh, ftp, smtp, pop3, imap, ...) or telnet's
// serverData (hex) a banner probe; the protocol, version, technologies,
// CPEs and every other scalar metadata member are Detected{By:
// "fingerprintx"}.
func Fingerprintx(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("fingerprintx")
	return opt.nonBlankLines(r, "fingerprintx", bad, func(n int, line []byte) error {
		var rec fingerprintxRecord
		if err := scanUnmarshal(line, &rec); err != nil {
			bad(LineError{n, fmt.Errorf("json: %w", err)})
			return nil
		}
		a, err := netip.ParseAddr(strings.TrimSpace(rec.IP))
		if err != nil {
			bad(LineError{n, fmt.Errorf("ip: not an IP address: %q", rec.IP)})
			return nil
		}
		if rec.Port < 1 || rec.Port > 65535 {
			bad(LineError{n, fmt.Errorf("port: must be 1..65535, got %d", rec.Port)})
			return nil
		}
		proto := strings.ToLower(firstNonEmpty(rec.Protocol, rec.Service))
		if proto == "" || rec.Transport == "" {
			bad(LineError{n, errors.New(`not a fingerprintx result: want "protocol" (or "service") and "transport"`)})
			return nil
		}
		transport := strings.ToLower(rec.Transport)
		if transport != "udp" {
			transport = "tcp"
		}
		s := &Service{Port: rec.Port, Transport: transport}
		s.Probes, s.Detected = rec.evidence(proto)
		o := Observation{Type: TypeService, IP: a.Unmap().String(), Source: src, ObservedAt: opt.when(opt.ObservedAt), Service: s}
		if h := strings.TrimSpace(rec.Host); h != "" && h != rec.IP {
			if _, err := netip.ParseAddr(h); err != nil {
				o.Hostnames = []string{h}
			}
		}
		return emitChecked(n, o, emit, bad)
	})
}

func (rec *fingerprintxRecord) evidence(proto string) ([]Probe, *Detected) {
	md := rec.Metadata
	getStr := func(k string) string {
		var s string
		if raw, ok := md[k]; ok && json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	}
	getList := func(k string) []string {
		var l []string
		if raw, ok := md[k]; ok {
			_ = json.Unmarshal(raw, &l)
		}
		return l
	}
	used := map[string]bool{}
	var probes []Probe
	// fingerprintx writes camelCase (statusCode, responseHeaders); nerva,
	// its successor, snake_case (status_code, response_headers).
	headersKey, codeKey := "responseHeaders", "statusCode"
	if _, ok := md[headersKey]; !ok {
		if _, ok := md["response_headers"]; ok {
			headersKey, codeKey = "response_headers", "status_code"
		}
	}
	if raw, ok := md[headersKey]; ok {
		var hm map[string][]string
		_ = json.Unmarshal(raw, &hm)
		resp := &Response{}
		for _, k := range slices.Sorted(maps.Keys(hm)) {
			for _, v := range hm[k] {
				resp.Headers = append(resp.Headers, Header{Name: k, Value: v})
			}
		}
		var code int
		if raw, ok := md[codeKey]; ok {
			_ = json.Unmarshal(raw, &code)
		}
		status := getStr("status")
		if c, reason, ok := strings.Cut(status, " "); ok {
			if v, err := strconv.Atoi(c); err == nil && code == 0 {
				code = v
			}
			resp.Reason = reason
		}
		if code > 0 && code < 1000 {
			resp.Status = code
		}
		probes = append(probes, Probe{Name: proto, Request: &Request{Method: "GET", Path: "/"}, Response: resp})
		used[headersKey], used[codeKey], used["status"] = true, true, true
	}
	if banner := getStr("banner"); banner != "" {
		probes = append(probes, Probe{Name: proto, Banner: &Banner{Received: TextBody(banner)}})
		used["banner"] = true
	} else if sd := getStr("serverData"); sd != "" {
		if raw, err := hex.DecodeString(sd); err == nil {
			probes = append(probes, Probe{Name: proto, Banner: &Banner{Received: BytesBody(raw)}})
			used["serverData"] = true
		}
	}
	d := &Detected{By: "fingerprintx", Service: proto, Version: firstNonEmpty(rec.Version, getStr("version"))}
	used["version"] = true
	d.CPE = append(getList("cpes"), getList("cpe")...)
	if rec.CPE != "" {
		d.CPE = append(d.CPE, rec.CPE)
	}
	used["cpes"], used["cpe"] = true, true
	var info []string
	if tech := getList("technologies"); len(tech) > 0 {
		info = append(info, "tech: "+strings.Join(tech, ", "))
	}
	used["technologies"] = true
	if rec.TLS {
		info = append(info, "tls")
	}
	// Every other scalar the plugin reported (RDP's OS fingerprint, SMB's
	// signing, a database's server version), by name.
	for _, k := range slices.Sorted(maps.Keys(md)) {
		if used[k] {
			continue
		}
		var v any
		if json.Unmarshal(md[k], &v) != nil {
			continue
		}
		switch x := v.(type) {
		case string:
			if x != "" {
				info = append(info, k+": "+x)
			}
		case bool:
			info = append(info, k+": "+strconv.FormatBool(x))
		case float64:
			info = append(info, k+": "+strconv.FormatFloat(x, 'f', -1, 64))
		}
	}
	d.Info = strings.Join(info, "; ")
	return probes, d
}
