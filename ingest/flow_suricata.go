package ingest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// suricataEvent holds the members of a Suricata EVE JSON line that the
// adapter reads.
type suricataEvent struct {
	Timestamp string          `json:"timestamp"`
	EventType string          `json:"event_type"`
	SrcIP     string          `json:"src_ip"`
	SrcPort   *int            `json:"src_port"`
	DestIP    string          `json:"dest_ip"`
	DestPort  *int            `json:"dest_port"`
	Proto     json.RawMessage `json:"proto"`
	// Direction of an alert's packet (Suricata 7): to_server, to_client.
	Direction string `json:"direction"`
	Flow      *struct {
		// The flow's client and server (an alert's flow member, Suricata 7).
		SrcIP         string `json:"src_ip"`
		DestIP        string `json:"dest_ip"`
		SrcPort       *int   `json:"src_port"`
		DestPort      *int   `json:"dest_port"`
		PktsToServer  int64  `json:"pkts_toserver"`
		PktsToClient  int64  `json:"pkts_toclient"`
		BytesToServer int64  `json:"bytes_toserver"`
		BytesToClient int64  `json:"bytes_toclient"`
		Start         string `json:"start"`
		End           string `json:"end"`
	} `json:"flow"`
	Netflow *struct {
		Pkts  int64  `json:"pkts"`
		Bytes int64  `json:"bytes"`
		Start string `json:"start"`
		End   string `json:"end"`
	} `json:"netflow"`
	TLS *struct {
		Subject     string   `json:"subject"`
		IssuerDN    string   `json:"issuerdn"`
		Serial      string   `json:"serial"`
		SNI         string   `json:"sni"`
		Version     string   `json:"version"`
		NotBefore   string   `json:"notbefore"`
		NotAfter    string   `json:"notafter"`
		Certificate string   `json:"certificate"`
		Chain       []string `json:"chain"`
		JA3S        *struct {
			Hash string `json:"hash"`
		} `json:"ja3s"`
		JA4S string `json:"ja4s"`
	} `json:"tls"`
	HTTP map[string]json.RawMessage `json:"http"`
	SSH  *struct {
		Server *struct {
			ProtoVersion    string `json:"proto_version"`
			SoftwareVersion string `json:"software_version"`
		} `json:"server"`
	} `json:"ssh"`
}

// Suricata reads Suricata's EVE JSON (eve.json), one event per line:
//
//   - flow events: a flow whose remote-access protocol is inferred
//     (InferFlow) from the client's direction (pkts_toserver,
//     bytes_toserver; Suricata counts whole frames), else the server's;
//     netflow events likewise, one direction each; observed at the
//     flow's end;
//   - tls events: a service on dest_ip:dest_port with a TLS probe:
//     subject, issuerdn, serial, validity, version, ja3s (and ja4s where
//     a build logs it), the certificate itself when custom logging has
//     "certificate" (or "chain"); the sni as a host name. The SHA-1
//     fingerprint is not kept (evidence holds SHA-256);
//   - http events: a service with an HTTP probe: http_method, url,
//     hostname, http_user_agent or the request_headers, status, protocol,
//     the response_headers (dump-all-headers) or else the content type and
//     the custom-logged response headers (server, set_cookie, location,
//     www_authenticate, ...);
//   - ssh events: the server's software version as Detected;
//   - alert events that carry the flow's tls, http or ssh metadata (as
//     EVE logs them with an alert's app-layer metadata on): the same
//     evidence, on the flow's server: the alert's packet may go either
//     way, so the server is the flow member's dest_ip (Suricata 7), else
//     the source when the alert's direction is to_client, else the end on
//     the lower port (a server's port against a client's ephemeral one);
//   - every other event type (dns, fileinfo, stats, anomaly, ike, snmp,
//     ...) is counted as skipped; ike events list the vendor IDs of both
//     ends together, which would give a responder its initiator's.
func Suricata(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("suricata")
	br := bufio.NewReaderSize(r, 64*1024)
	// Events exported as a JSON array or pretty-printed (jq -s, a SIEM's
	// export) rather than EVE's one line each.
	if ok, err := eachJSONDocument(br, "suricata eve", bad, func(n int, v []byte) error {
		return suricataRecord(n, v, src, opt, emit, bad)
	}); ok {
		return err
	}
	return opt.nonBlankLines(br, "suricata eve", bad, func(n int, line []byte) error {
		return suricataRecord(n, line, src, opt, emit, bad)
	})
}

// suricataRecord reads one EVE event.
func suricataRecord(n int, line []byte, src string, opt Options, emit Emit, bad func(LineError)) error {
	var ev suricataEvent
	if err := scanUnmarshal(line, &ev); err != nil {
		bad(LineError{n, fmt.Errorf("json: %w", err)})
		return nil
	}
	if ev.EventType == "" {
		bad(LineError{n, errors.New(`not a Suricata EVE event: want "event_type"`)})
		return nil
	}
	switch ev.EventType {
	case "flow", "netflow":
		return ev.flow(n, src, opt, emit, bad)
	case "tls", "http", "ssh", "alert":
		o, err := ev.service(src, opt)
		if err != nil {
			bad(LineError{n, err})
			return nil
		}
		if o == nil {
			if ev.EventType == "alert" {
				opt.skip(n, "suricata alert event without tls, http or ssh metadata")
			} else {
				opt.skip(n, "suricata "+ev.EventType+" event with no server evidence")
			}
			return nil
		}
		return emitChecked(n, *o, emit, bad)
	}
	opt.skip(n, "suricata "+ev.EventType+" event not read")
	return nil
}

// suricataTime reads EVE's time stamps ("2022-02-08T09:40:29.080710-0500",
// the zone without a colon; TLS validity "2017-01-04T10:48:43" in UTC).
func suricataTime(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02T15:04:05.999999999-0700", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return scanTime(s)
}

func (ev *suricataEvent) proto() (int, error) {
	raw := bytes.TrimSpace(ev.Proto)
	if len(raw) == 0 {
		return 0, errors.New("proto: missing")
	}
	var p ipProto
	if err := p.UnmarshalJSON(raw); err != nil {
		return 0, err
	}
	return int(p), nil
}

func (ev *suricataEvent) flow(n int, src string, opt Options, emit Emit, bad func(LineError)) error {
	if capturedUnspecified(ev.SrcIP, ev.DestIP) {
		opt.skip(n, "suricata "+skipUnspecifiedFlow)
		return nil
	}
	srcIP, err := flowAddr("src_ip", ev.SrcIP)
	if err != nil {
		bad(LineError{n, err})
		return nil
	}
	dstIP, err := flowAddr("dest_ip", ev.DestIP)
	if err != nil {
		bad(LineError{n, err})
		return nil
	}
	proto, err := ev.proto()
	if err != nil {
		bad(LineError{n, err})
		return nil
	}
	var sp, dp int
	for _, p := range []struct {
		name string
		v    *int
		to   *int
	}{{"src_port", ev.SrcPort, &sp}, {"dest_port", ev.DestPort, &dp}} {
		if p.v == nil {
			continue
		}
		if *p.v < 0 || *p.v > 65535 {
			bad(LineError{n, fmt.Errorf("%s: must be 0..65535, got %d", p.name, *p.v)})
			return nil
		}
		*p.to = *p.v
	}
	fwd := FlowRecord{Src: srcIP, Dst: dstIP, SrcPort: sp, DstPort: dp, IPProto: proto, L2: true}
	rev := FlowRecord{Src: dstIP, Dst: srcIP, SrcPort: dp, DstPort: sp, IPProto: proto, L2: true}
	var end, ts string
	var hasRev bool
	switch {
	case ev.EventType == "flow" && ev.Flow != nil:
		f := ev.Flow
		if f.PktsToServer < 0 || f.BytesToServer < 0 || f.PktsToClient < 0 || f.BytesToClient < 0 {
			bad(LineError{n, errors.New("flow: negative counter")})
			return nil
		}
		fwd.Packets, fwd.Bytes = f.PktsToServer, f.BytesToServer
		rev.Packets, rev.Bytes = f.PktsToClient, f.BytesToClient
		end, ts, hasRev = f.End, ev.Timestamp, f.PktsToClient > 0
	case ev.EventType == "netflow" && ev.Netflow != nil:
		f := ev.Netflow
		if f.Pkts < 0 || f.Bytes < 0 {
			bad(LineError{n, errors.New("netflow: negative counter")})
			return nil
		}
		fwd.Packets, fwd.Bytes = f.Pkts, f.Bytes
		end, ts = f.End, ev.Timestamp
	default:
		bad(LineError{n, fmt.Errorf("%s event without its %q member", ev.EventType, ev.EventType)})
		return nil
	}
	at := suricataTime(end)
	if at.IsZero() {
		at = suricataTime(ts)
	}
	if at.IsZero() {
		bad(LineError{n, errors.New("flow.end, timestamp: neither is a time")})
		return nil
	}
	// Whole frames as Suricata counts them; a capture without a link
	// layer (raw IP) counts IP packets.
	l3f, l3r := fwd, rev
	l3f.L2, l3r.L2 = false, false
	recs := []FlowRecord{fwd, l3f}
	if hasRev {
		recs = append(recs, rev, l3r)
	}
	return emitFlowFirst(n, recs, at, src, opt, emit, bad)
}

// service builds the observation of a tls, http or ssh event; nil when
// the event carries nothing about the server.
func (ev *suricataEvent) service(src string, opt Options) (*Observation, error) {
	ipText, portp, ipField, portField := ev.DestIP, ev.DestPort, "dest_ip", "dest_port"
	if ev.EventType == "alert" {
		ipText, portp, ipField, portField = ev.alertServer()
	}
	ip, err := netip.ParseAddr(strings.TrimSpace(ipText))
	if err != nil {
		return nil, fmt.Errorf("%s: not an IP address: %q", ipField, ipText)
	}
	if portp == nil || *portp < 1 || *portp > 65535 {
		return nil, errors.New(portField + ": must be 1..65535")
	}
	proto, err := ev.proto()
	if err != nil {
		return nil, err
	}
	o := &Observation{Type: TypeService, IP: ip.Unmap().String(), Source: src, ObservedAt: opt.when(suricataTime(ev.Timestamp))}
	s := &Service{Port: *portp, Transport: transportName(proto)}
	all := ev.EventType == "alert" // an alert carries any of them
	if ev.EventType == "tls" || all {
		if t, sni := ev.tls(); t != nil {
			s.Probes = append(s.Probes, Probe{Name: "suricata.tls", TLS: t})
			if sni != "" {
				o.Hostnames = append(o.Hostnames, sni)
			}
		}
	}
	if ev.EventType == "http" || all {
		if p, host := ev.http(); p != nil {
			s.Probes = append(s.Probes, *p)
			if host != "" && !slices.Contains(o.Hostnames, host) {
				o.Hostnames = append(o.Hostnames, host)
			}
		}
	}
	if ev.EventType == "ssh" || all {
		if ev.SSH != nil && ev.SSH.Server != nil && ev.SSH.Server.SoftwareVersion != "" {
			sv := ev.SSH.Server
			s.Detected = &Detected{By: "suricata", Service: "ssh", Product: sv.SoftwareVersion}
			if sv.ProtoVersion != "" {
				s.Detected.Info = "protocol " + sv.ProtoVersion
			}
		}
	}
	if len(s.Probes) == 0 && s.Detected == nil {
		return nil, nil
	}
	o.Service = s
	return o, nil
}

// alertServer is the server end of an alert's flow (see Suricata): the
// flow member's dest_ip, else the source of a to_client packet, else the
// end on the lower port (the destination on a tie); with the member it
// was read from, for an error.
func (ev *suricataEvent) alertServer() (ip string, port *int, ipField, portField string) {
	if f := ev.Flow; f != nil && f.DestIP != "" && f.DestPort != nil {
		return f.DestIP, f.DestPort, "flow.dest_ip", "flow.dest_port"
	}
	switch {
	case ev.Direction == "to_client":
		return ev.SrcIP, ev.SrcPort, "src_ip", "src_port"
	case ev.Direction == "to_server":
	case ev.SrcPort != nil && ev.DestPort != nil && *ev.SrcPort < *ev.DestPort:
		return ev.SrcIP, ev.SrcPort, "src_ip", "src_port"
	}
	return ev.DestIP, ev.DestPort, "dest_ip", "dest_port"
}

func (ev *suricataEvent) tls() (*TLS, string) {
	x := ev.TLS
	if x == nil {
		return nil, ""
	}
	t := &TLS{}
	der := x.Certificate
	if der == "" && len(x.Chain) > 0 {
		der = x.Chain[0]
	}
	if der != "" {
		if raw, err := base64.StdEncoding.DecodeString(der); err == nil {
			if c, err := certTLS(raw); err == nil {
				t = c
			}
		}
	}
	if t.Subject == nil && x.Subject != "" {
		t.Subject = ParseDN(x.Subject)
	}
	if t.Issuer == nil && x.IssuerDN != "" {
		t.Issuer = ParseDN(x.IssuerDN)
	}
	if t.Serial == "" && x.Serial != "" {
		t.Serial = colonHexSerial(x.Serial)
	}
	if t.NotBefore == "" {
		if at := suricataTime(x.NotBefore); !at.IsZero() {
			t.NotBefore = at.UTC().Format(time.RFC3339)
		}
	}
	if t.NotAfter == "" {
		if at := suricataTime(x.NotAfter); !at.IsZero() {
			t.NotAfter = at.UTC().Format(time.RFC3339)
		}
	}
	switch v := x.Version; {
	case v == "" || v == "UNDETERMINED":
	case v == "TLSv1":
		t.Version = "TLSv1.0"
	default:
		t.Version = strings.Replace(v, "TLS ", "TLSv", 1)
	}
	if x.JA3S != nil {
		t.JA3S = x.JA3S.Hash
	}
	t.JA4S = x.JA4S
	if t.empty() {
		return nil, x.SNI
	}
	return t, x.SNI
}

// suricataHeaderNames are the http members that Suricata's custom
// logging writes for response headers, with the header's name.
var suricataHeaderNames = map[string]string{
	"server": "Server", "set_cookie": "Set-Cookie", "location": "Location", "redirect": "Location",
	"www_authenticate": "WWW-Authenticate", "content_length": "Content-Length", "content_encoding": "Content-Encoding",
	"last_modified": "Last-Modified", "etag": "ETag", "etags": "ETag", "vary": "Vary", "via": "Via",
	"proxy_authenticate": "Proxy-Authenticate", "allow": "Allow", "age": "Age", "expires": "Expires",
	"refresh": "Refresh", "link": "Link", "upgrade": "Upgrade", "x_flash_version": "X-Flash-Version",
}

func (ev *suricataEvent) http() (*Probe, string) {
	h := ev.HTTP
	if len(h) == 0 {
		return nil, ""
	}
	str := func(k string) string {
		var s string
		if raw, ok := h[k]; ok && json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	}
	headers := func(k string) []Header {
		var hs []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		}
		raw, ok := h[k]
		if !ok || json.Unmarshal(raw, &hs) != nil {
			return nil
		}
		out := make([]Header, 0, len(hs))
		for _, x := range hs {
			out = append(out, Header{Name: x.Name, Value: x.Value})
		}
		return out
	}
	host := str("hostname")
	q := &Request{Method: str("http_method"), Path: str("url"), Host: host, Headers: headers("request_headers")}
	if q.Headers == nil {
		if ua := str("http_user_agent"); ua != "" {
			q.Headers = []Header{{Name: "User-Agent", Value: ua}}
		}
	}
	p := &Probe{Name: "suricata.http", Request: q}
	status := 0
	if raw, ok := h["status"]; ok {
		s := strings.Trim(string(raw), `" `)
		if v, err := strconv.Atoi(s); err == nil && v > 0 && v < 1000 {
			status = v
		}
	}
	r := &Response{Status: status, Protocol: str("protocol"), Headers: headers("response_headers")}
	if r.Headers == nil {
		if ct := str("http_content_type"); ct != "" {
			r.Headers = append(r.Headers, Header{Name: "Content-Type", Value: ct})
		}
		for _, k := range slices.Sorted(maps.Keys(h)) {
			if name, ok := suricataHeaderNames[k]; ok {
				if v := str(k); v != "" {
					r.Headers = append(r.Headers, Header{Name: name, Value: v})
				}
			}
		}
	}
	if r.Status != 0 || len(r.Headers) > 0 {
		p.Response = r
	}
	if q.Method == "" && q.Path == "" && p.Response == nil {
		return nil, ""
	}
	if _, err := netip.ParseAddr(host); err == nil {
		host = ""
	}
	return p, host
}
