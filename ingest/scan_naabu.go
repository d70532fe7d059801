package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
)

// naabuRecord is one line of ProjectDiscovery naabu's -json output. The
// port is a number (v2.1.7 on, with protocol and tls beside it) or an
// object {"Port", "Protocol", "TLS"} (v2.1.0 to v2.1.6); with -nmap-cli
// -sV naabu v2.3.8 on adds nmap's service fields to the line.
type naabuRecord struct {
	Host      string          `json:"host"`
	IP        string          `json:"ip"`
	Port      json.RawMessage `json:"port"`
	Protocol  string          `json:"protocol"`
	TLS       bool            `json:"tls"`
	Timestamp string          `json:"timestamp"`
	// nmap's -sV fields (naabu -nmap-cli).
	Name      string `json:"name"`
	Product   string `json:"product"`
	Version   string `json:"version"`
	ExtraInfo string `json:"extra_info"`
	OSType    string `json:"os_type"`
	Method    string `json:"method"`

	// Members only other tools' lines have: such a line is not naabu's.
	Metadata json.RawMessage `json:"metadata"`
	Data     json.RawMessage `json:"data"`
	URL      json.RawMessage `json:"url"`
	Services json.RawMessage `json:"services"`
}

// Naabu reads naabu's JSON lines: each open port is a service
// observation without probes (naabu does not talk to the service), with
// nmap's service detection as Detected when naabu ran nmap.
func Naabu(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("naabu")
	return opt.nonBlankLines(r, "naabu", bad, func(n int, line []byte) error {
		var rec naabuRecord
		if err := scanUnmarshal(line, &rec); err != nil {
			bad(LineError{n, fmt.Errorf("json: %w", err)})
			return nil
		}
		if rec.IP == "" || rec.Metadata != nil || rec.Data != nil || rec.URL != nil || rec.Services != nil {
			bad(LineError{n, errors.New(`not a naabu result: want "ip" and "port" (and no "metadata", "data", "url" or "services")`)})
			return nil
		}
		port, proto, tls, err := rec.port()
		if err != nil {
			bad(LineError{n, err})
			return nil
		}
		if port == 0 {
			opt.skip(n, "naabu: host alive, no port")
			return nil
		}
		ip := strings.TrimSpace(rec.IP)
		var hostnames []string
		if h := strings.TrimSpace(rec.Host); h != "" && h != ip {
			hostnames = []string{h}
		}
		a, err := netip.ParseAddr(ip)
		if err != nil {
			bad(LineError{n, fmt.Errorf("ip: not an IP address: %q", ip)})
			return nil
		}
		s := &Service{Port: port, Transport: proto}
		if d := rec.detected(tls); d != nil {
			s.Detected = d
		}
		o := Observation{Type: TypeService, IP: a.Unmap().String(), Source: src, ObservedAt: opt.when(scanTime(rec.Timestamp)),
			Hostnames: hostnames, Service: s}
		return emitChecked(n, o, emit, bad)
	})
}

// port reads the port in either of its forms; 0 for naabu's host
// discovery lines ("port": null).
func (rec *naabuRecord) port() (port int, proto string, tls bool, err error) {
	proto, tls = strings.ToLower(rec.Protocol), rec.TLS
	raw := bytes.TrimSpace(rec.Port)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		if len(raw) == 0 {
			return 0, "", false, errors.New(`not a naabu result: want "port"`)
		}
		return 0, "", false, nil
	case raw[0] == '{':
		var p struct {
			Port     int    `json:"Port"`
			Protocol any    `json:"Protocol"`
			TLS      bool   `json:"TLS"`
			Service  string `json:"Service"`
		}
		if err := scanUnmarshal(raw, &p); err != nil {
			return 0, "", false, fmt.Errorf("port: %w", err)
		}
		port, tls = p.Port, tls || p.TLS
		switch v := p.Protocol.(type) {
		case string:
			proto = strings.ToLower(v)
		case float64:
			// naabu's protocol.Protocol numbers: 0 tcp, 1 udp.
			if v == 1 {
				proto = "udp"
			}
		}
	default:
		v, err := strconv.Atoi(strings.Trim(string(raw), `"`))
		if err != nil {
			return 0, "", false, fmt.Errorf("port: not a number: %s", raw)
		}
		port = v
	}
	if port < 1 || port > 65535 {
		return 0, "", false, fmt.Errorf("port: must be 1..65535, got %d", port)
	}
	if proto != "udp" {
		proto = "tcp"
	}
	return port, proto, tls, nil
}

func (rec *naabuRecord) detected(tls bool) *Detected {
	d := &Detected{By: "naabu", Service: rec.Name, Product: rec.Product, Version: rec.Version}
	var info []string
	if rec.ExtraInfo != "" {
		info = append(info, rec.ExtraInfo)
	}
	if rec.OSType != "" {
		info = append(info, "os: "+rec.OSType)
	}
	if tls {
		info = append(info, "tls")
	}
	d.Info = strings.Join(info, "; ")
	if d.Service == "" && d.Product == "" && d.Version == "" && d.Info == "" {
		return nil
	}
	if d.Service != "" || d.Product != "" {
		d.By = "nmap" // naabu -nmap-cli: nmap's -sV
	}
	return d
}
