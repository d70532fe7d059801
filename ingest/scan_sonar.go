package ingest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// SonarHTTP reads Rapid7 Project Sonar's HTTP and HTTPS studies, one JSON
// object per line ({"data": base64 of the raw response, "ip", "port",
// "host", "vhost", "path", and a time as "timestamp" or "ts" when the
// study has one; otherwise the file's time is used). The decoded response
// is an HTTP probe: status line, headers in order, and the body (text, or
// base64 when it is not UTF-8), the request a GET of path with vhost (or
// host) as its Host. Data that is not an HTTP response is kept as a banner.
func SonarHTTP(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("sonar-http")
	return opt.nonBlankLines(r, "sonar http", bad, func(n int, line []byte) error {
		var rec struct {
			Data      *string         `json:"data"`
			IP        string          `json:"ip"`
			Host      string          `json:"host"`
			VHost     string          `json:"vhost"`
			Path      string          `json:"path"`
			Port      json.RawMessage `json:"port"`
			Timestamp json.RawMessage `json:"timestamp"`
			TS        json.RawMessage `json:"ts"`
		}
		if err := scanUnmarshal(line, &rec); err != nil {
			bad(LineError{n, fmt.Errorf("json: %w", err)})
			return nil
		}
		ip := rec.IP
		if ip == "" {
			ip = rec.Host
		}
		if ip == "" || rec.Data == nil {
			bad(LineError{n, errors.New(`not a Sonar HTTP record: want "ip" and "data"`)})
			return nil
		}
		port, err := strconv.Atoi(strings.Trim(string(rec.Port), `"`))
		if err != nil {
			bad(LineError{n, fmt.Errorf("port %s: not a number", rec.Port)})
			return nil
		}
		raw, err := base64.StdEncoding.DecodeString(*rec.Data)
		if err != nil {
			bad(LineError{n, errors.New("data: not base64")})
			return nil
		}
		ts := rec.Timestamp
		if len(ts) == 0 {
			ts = rec.TS
		}
		host := rec.VHost
		if host == "" || host == ip {
			host = rec.Host
		}
		if host == ip {
			host = ""
		}
		p := Probe{Request: &Request{Method: "GET", Path: rec.Path, Host: host}}
		if resp, ok := parseHTTPResponse(raw); ok {
			p.Response = resp
		} else {
			p.Banner = &Banner{Received: BytesBody(raw)}
		}
		o := Observation{Type: TypeService, IP: ip, Source: src, ObservedAt: opt.when(scanTime(strings.Trim(string(ts), `"`))),
			Service: &Service{Port: port, Transport: "tcp", Probes: []Probe{p}}}
		if host != "" {
			o.Hostnames = []string{host}
		}
		return emitChecked(n, o, emit, bad)
	})
}
