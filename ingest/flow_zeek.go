package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
)

// Zeek logs: TSV as Zeek writes by default (the "#separator", "#fields",
// "#types" header of each file, several files one after the other) or
// JSON lines (LogAscii::use_json, or the json-streaming-logs package's
// lines with "_path"). What each log gives:
//
//   - conn.log: a flow; the protocol is inferred (InferFlow) from the
//     originator's direction (orig_pkts, orig_ip_bytes), else the
//     responder's; observed at ts + duration;
//   - ssl.log: a service on id.resp_h:id.resp_p with a TLS probe: version,
//     cipher, ja3s (the ja3 package), and the server's certificate from
//     x509.log (cert_chain_fps, or cert_chain_fuids before Zeek 4.2), or
//     the subject and issuer ssl.log itself carried before Zeek 4.0;
//     server_name (the SNI) as a host name;
//   - x509.log: certificates, held for the ssl.log records that name them
//     (in either order: an ssl.log record whose certificate comes later is
//     held until the end of the input) and not stored themselves;
//   - http.log: a service with an HTTP probe: method, uri, host,
//     user_agent; status_code, status_msg, version;
//   - ssh.log: a service with the server's software string as a banner;
//   - software.log (policy/frameworks/software): the servers' software on
//     host:host_p as the protocol shows it: HTTP::SERVER as the Server
//     header of an HTTP answer, HTTP::APPSERVER as its X-Powered-By,
//     SSH::SERVER as the identification line, FTP::SERVER and
//     SMTP::SERVER as the greeting's text; clients' software is skipped;
//   - known_certs.log: a TLS probe on host:port_num with the subject,
//     issuer and serial;
//   - every other log (dns, files, weird, known_services, ...) is counted
//     as skipped.

// zeekMaxHeld bounds the certificates and the ssl.log records a Zeek
// input holds while it waits for the other half.
const zeekMaxHeld = 100000

// zeekRec is one log record: its fields by name, each a string, a list of
// strings (TSV sets and vectors, JSON arrays), a number or a bool.
type zeekRec map[string]any

func (z zeekRec) str(k string) string {
	switch v := z[k].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case json.Number:
		return v.String()
	case bool:
		if v {
			return "T"
		}
		return "F"
	}
	return ""
}

func (z zeekRec) strs(k string) []string {
	switch v := z[k].(type) {
	case []string:
		return v
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case string:
		if v != "" {
			return []string{v}
		}
	}
	return nil
}

func (z zeekRec) has(k string) bool { _, ok := z[k]; return ok }

// num reads a count or port; ok is false when the field is unset.
func (z zeekRec) num(k string) (int64, bool, error) {
	s := z.str(k)
	if s == "" {
		return 0, false, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v > math.MaxInt64/2 {
		return 0, false, fmt.Errorf("%s: not a count: %q", k, s)
	}
	return int64(v), true, nil
}

// time reads a Zeek time: seconds since 1970 (TSV, JSON by default) or
// ISO 8601 (JSON with LogAscii::json_timestamps=JSON::TS_ISO8601).
func (z zeekRec) time(k string) time.Time {
	s := z.str(k)
	if s == "" {
		return time.Time{}
	}
	return scanTime(s)
}

// zeekHeader is what a TSV file's header says.
type zeekHeader struct {
	sep, setSep, empty, unset string
	path                      string
	fields, types             []string
}

type zeekState struct {
	opt  Options
	src  string
	tsv  *zeekHeader
	emit Emit
	bad  func(LineError)
	// certs by fingerprint (x509.log's fingerprint, Zeek 4.2 on) and by
	// file id (x509.log's id, before).
	certs map[string]*TLS
	// waiting ssl.log records whose certificate is not yet read.
	waiting []zeekWaiting
}

type zeekWaiting struct {
	line int
	rec  zeekRec
}

// Zeek reads Zeek logs, TSV or JSON (see above).
func Zeek(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	st := &zeekState{opt: opt, src: opt.source("zeek"), emit: emit, bad: bad, certs: map[string]*TLS{}}
	err := opt.lines(r, "zeek log", bad, func(n int, b []byte) error {
		if len(bytes.TrimSpace(b)) == 0 {
			return nil
		}
		if b[0] == '#' {
			return st.header(string(b))
		}
		var rec zeekRec
		var path string
		if b[0] == '{' {
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			if err := dec.Decode(&rec); err != nil {
				bad(LineError{n, fmt.Errorf("json: %w", err)})
				return nil
			}
			path = rec.str("_path")
			if path == "" {
				path = zeekGuessPath(rec)
			}
		} else {
			if st.tsv == nil || len(st.tsv.fields) == 0 {
				bad(LineError{n, errors.New("not a Zeek log: a record before the #fields header (or not JSON)")})
				return nil
			}
			var err error
			if rec, err = st.tsv.record(string(b)); err != nil {
				bad(LineError{n, err})
				return nil
			}
			path = st.tsv.path
		}
		return st.record(n, path, rec)
	})
	if err != nil {
		return err
	}
	// The ssl.log records whose certificate never came: stored with what
	// they have.
	for _, w := range st.waiting {
		if err := st.ssl(w.line, w.rec, true); err != nil {
			return err
		}
	}
	return nil
}

// header reads a TSV header line; other comments are ignored.
func (st *zeekState) header(line string) error {
	key, val, _ := strings.Cut(line, " ")
	if key == "#separator" {
		sep := strings.TrimSpace(val)
		if u := unescapeHex(sep); len(u) > 0 {
			sep = string(u)
		}
		st.tsv = &zeekHeader{sep: sep, setSep: ",", empty: "(empty)", unset: "-"}
		return nil
	}
	if st.tsv == nil || !strings.HasPrefix(line, "#") {
		return nil
	}
	parts := strings.Split(line, st.tsv.sep)
	switch parts[0] {
	case "#set_separator":
		if len(parts) > 1 {
			st.tsv.setSep = string(unescapeHex(parts[1]))
		}
	case "#empty_field":
		if len(parts) > 1 {
			st.tsv.empty = parts[1]
		}
	case "#unset_field":
		if len(parts) > 1 {
			st.tsv.unset = parts[1]
		}
	case "#path":
		if len(parts) > 1 {
			st.tsv.path = parts[1]
		}
	case "#fields":
		st.tsv.fields = parts[1:]
	case "#types":
		st.tsv.types = parts[1:]
	}
	return nil
}

// record reads one TSV line by the header's fields: unset fields are
// left out, sets and vectors split, escapes (\x09, \\) undone.
func (h *zeekHeader) record(line string) (zeekRec, error) {
	vals := strings.Split(line, h.sep)
	if len(vals) != len(h.fields) {
		return nil, fmt.Errorf("%d fields, the #fields header names %d", len(vals), len(h.fields))
	}
	rec := make(zeekRec, len(vals))
	for i, v := range vals {
		if v == h.unset {
			continue
		}
		container := i < len(h.types) && (strings.HasPrefix(h.types[i], "set[") || strings.HasPrefix(h.types[i], "vector["))
		switch {
		case container && v == h.empty:
			rec[h.fields[i]] = []string{}
		case container:
			items := strings.Split(v, h.setSep)
			for j := range items {
				items[j] = zeekUnescape(items[j])
			}
			rec[h.fields[i]] = items
		case v == h.empty:
			rec[h.fields[i]] = ""
		default:
			rec[h.fields[i]] = zeekUnescape(v)
		}
	}
	return rec, nil
}

// zeekUnescape undoes the ASCII writer's escapes: \xHH for separators
// and bytes that are not printable, \\ for a backslash.
func zeekUnescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if s[i+1] == '\\' {
				b.WriteByte('\\')
				i++
				continue
			}
			if s[i+1] == 'x' && i+4 <= len(s) {
				if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 3
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// zeekGuessPath names the log of a JSON line without "_path" by the
// fields only that log has.
func zeekGuessPath(rec zeekRec) string {
	switch {
	case rec.has("certificate.subject") || rec.has("certificate.serial"):
		return "x509"
	case rec.has("cert_chain_fps") || rec.has("cert_chain_fuids") || rec.has("cipher") || rec.has("server_name"):
		return "ssl"
	case rec.has("trans_depth") || rec.has("status_code") || rec.has("method") && rec.has("uri"):
		return "http"
	case rec.has("conn_state") || rec.has("orig_ip_bytes") || rec.has("history") && rec.has("proto"):
		return "conn"
	case rec.has("auth_success") || rec.has("auth_attempts") || rec.has("client") && rec.has("server") && rec.has("version"):
		return "ssh"
	case rec.has("software_type") && rec.has("unparsed_version"):
		return "software"
	case rec.has("port_num") && rec.has("issuer_subject"):
		return "known_certs"
	case rec.has("display_string") || rec.has("community") && rec.has("get_requests"):
		return "snmp"
	}
	return ""
}

func (st *zeekState) record(n int, path string, rec zeekRec) error {
	switch path {
	case "conn":
		return st.conn(n, rec)
	case "ssl":
		return st.ssl(n, rec, false)
	case "x509":
		st.x509(n, rec)
		return nil
	case "http":
		return st.http(n, rec)
	case "ssh":
		return st.ssh(n, rec)
	case "software":
		return st.software(n, rec)
	case "known_certs":
		return st.knownCert(n, rec)
	case "snmp":
		return st.snmp(n, rec)
	case "":
		st.bad(LineError{n, errors.New("not a Zeek log record: no #path or _path, and not a conn, ssl, x509, http, ssh, software, known_certs or snmp record")})
		return nil
	}
	st.opt.skip(n, "zeek "+path+" log not read")
	return nil
}

// endpoint reads the record's responder address and port.
func (st *zeekState) endpoint(rec zeekRec) (netip.Addr, int, error) {
	a, err := netip.ParseAddr(rec.str("id.resp_h"))
	if err != nil {
		return a, 0, fmt.Errorf("id.resp_h: not an IP address: %q", rec.str("id.resp_h"))
	}
	p, ok, err := rec.num("id.resp_p")
	if err != nil || !ok || p < 1 || p > 65535 {
		return a, 0, fmt.Errorf("id.resp_p: must be 1..65535, got %q", rec.str("id.resp_p"))
	}
	return a.Unmap(), int(p), nil
}

// when is a service record's ts; one that is there but not a time (Zeek's
// test logs write XXXXXXXXXX.XXXXXX) is warned of, and the record goes in
// at the file's time.
func (st *zeekState) when(n int, rec zeekRec) string {
	at := rec.time("ts")
	if at.IsZero() && rec.str("ts") != "" {
		st.opt.warn(n, fmt.Sprintf("ts: not a time: %q: observed at the file's time", clipForError(rec.str("ts"), 40)))
	}
	return st.opt.when(at)
}

// capturedUnspecified tells whether one of addrs is the unspecified
// address (0.0.0.0, ::). In what a sensor saw on the wire (Zeek, Suricata)
// it is a real packet's source: a DHCP client before it has an address,
// IPv6 duplicate address detection. Such a flow says nothing of a server
// on the internet; it is skipped, not reported as malformed.
func capturedUnspecified(addrs ...string) bool {
	for _, s := range addrs {
		if a, err := netip.ParseAddr(strings.TrimSpace(s)); err == nil && a.Unmap().IsUnspecified() {
			return true
		}
	}
	return false
}

const skipUnspecifiedFlow = "flow of the unspecified address (0.0.0.0 or ::: DHCP, IPv6 duplicate address detection)"

func (st *zeekState) conn(n int, rec zeekRec) error {
	if capturedUnspecified(rec.str("id.orig_h"), rec.str("id.resp_h")) {
		st.opt.skip(n, "zeek conn "+skipUnspecifiedFlow)
		return nil
	}
	orig, err := flowAddr("id.orig_h", rec.str("id.orig_h"))
	if err != nil {
		st.bad(LineError{n, err})
		return nil
	}
	resp, err := flowAddr("id.resp_h", rec.str("id.resp_h"))
	if err != nil {
		st.bad(LineError{n, err})
		return nil
	}
	var proto int
	switch p := strings.ToLower(rec.str("proto")); p {
	case "tcp":
		proto = ipProtoTCP
	case "udp":
		proto = ipProtoUDP
	case "icmp":
		proto = 1
	case "unknown_transport", "":
		proto = 255
		if v, ok, err := rec.num("ip_proto"); err == nil && ok && v <= 255 {
			proto = int(v)
		}
	default:
		st.bad(LineError{n, fmt.Errorf("proto: %q is not tcp, udp, icmp or unknown_transport", p)})
		return nil
	}
	var c [6]int64
	for i, k := range []string{"id.orig_p", "id.resp_p", "orig_pkts", "orig_ip_bytes", "resp_pkts", "resp_ip_bytes"} {
		v, _, err := rec.num(k)
		if err != nil {
			st.bad(LineError{n, err})
			return nil
		}
		if i < 2 && v > 65535 {
			st.bad(LineError{n, fmt.Errorf("%s: must be 0..65535, got %d", k, v)})
			return nil
		}
		c[i] = v
	}
	at := rec.time("ts")
	if at.IsZero() {
		st.bad(LineError{n, fmt.Errorf("ts: not a time: %q", rec.str("ts"))})
		return nil
	}
	if d, err := strconv.ParseFloat(rec.str("duration"), 64); err == nil && d > 0 && d < 1e9 {
		at = at.Add(time.Duration(d * float64(time.Second)))
	}
	ports := proto == ipProtoTCP || proto == ipProtoUDP
	fwd := FlowRecord{Src: orig, Dst: resp, IPProto: proto, Packets: c[2], Bytes: c[3]}
	rev := FlowRecord{Src: resp, Dst: orig, IPProto: proto, Packets: c[4], Bytes: c[5]}
	if ports {
		fwd.SrcPort, fwd.DstPort = int(c[0]), int(c[1])
		rev.SrcPort, rev.DstPort = int(c[1]), int(c[0])
	}
	if p := zeekServiceProtocol(rec.str("service"), int(c[1])); p != "" && ports {
		// Zeek's analyzers confirmed the protocol in the packets: named
		// (basis label) on the responder, whatever its port.
		o := Observation{Type: TypeFlow, IP: resp.Unmap().String(), Source: st.src, ObservedAt: ipmodel.FormatTime(at),
			Flow: &Flow{Port: int(c[1]), Transport: transportName(proto), Protocol: p, Confidence: st.opt.capConfidence(confPayload),
				Packets: c[2] + c[4], Bytes: c[3] + c[5]}}
		return emitChecked(n, o, st.emit, st.bad)
	}
	recs := []FlowRecord{fwd}
	if c[4] > 0 {
		recs = append(recs, rev)
	}
	return emitFlowFirst(n, recs, at, st.src, st.opt, st.emit, st.bad)
}

// zeekServiceProtocol is the remote-access protocol conn.log's service
// names, "" for none: the service is the list of the analyzers that
// confirmed their protocol in the connection's packets (Zeek's ssh;
// corelight's spicy plugins' spicy_openvpn_*, spicy_wireguard,
// spicy_ipsec_ike_udp and spicy_ipsec_*). IKE on 4500 is written ipsec, as
// the pcap reader writes it.
func zeekServiceProtocol(service string, port int) string {
	for _, s := range strings.Split(strings.ToLower(service), ",") {
		switch s = strings.TrimSpace(s); {
		case strings.Contains(s, "openvpn"):
			return "openvpn"
		case strings.Contains(s, "wireguard"):
			return "wireguard"
		case strings.Contains(s, "ipsec_ike") && port != 4500:
			return "ikev2"
		case strings.Contains(s, "ipsec"):
			return "ipsec"
		case s == "ssh":
			return "ssh"
		}
	}
	return ""
}

// x509 holds a certificate for the ssl.log records that name it.
func (st *zeekState) x509(n int, rec zeekRec) {
	t := &TLS{Serial: zeekSerial(rec.str("certificate.serial"))}
	if s := rec.str("certificate.subject"); s != "" {
		t.Subject = ParseDN(s)
	}
	if s := rec.str("certificate.issuer"); s != "" {
		t.Issuer = ParseDN(s)
	}
	if at := rec.time("certificate.not_valid_before"); !at.IsZero() {
		t.NotBefore = at.UTC().Format(time.RFC3339)
	}
	if at := rec.time("certificate.not_valid_after"); !at.IsZero() {
		t.NotAfter = at.UTC().Format(time.RFC3339)
	}
	t.SANs = append(append(t.SANs, rec.strs("san.dns")...), rec.strs("san.ip")...)
	fp := strings.ToLower(rec.str("fingerprint"))
	if isHex(fp, 64) {
		t.SHA256 = fp
	}
	if t.Subject != nil && t.Issuer != nil && t.Subject.DN == t.Issuer.DN {
		t.SelfSigned = true
	}
	if len(st.certs) < zeekMaxHeld {
		for _, k := range []string{fp, rec.str("id")} {
			if k != "" {
				st.certs[k] = t
			}
		}
	}
	st.opt.skip(n, "zeek x509 record (read for ssl.log)")
}

// zeekSerial writes x509.log's serial ("0B58BC38...") as evidence keeps
// serials: lower-case hex without leading zeros.
func zeekSerial(s string) string {
	s = strings.TrimLeft(strings.ToLower(strings.TrimSpace(s)), "0")
	if s == "" || !isHex(s, 0) {
		return ""
	}
	return s
}

// ssl builds the TLS probe of an ssl.log record. A record whose leaf
// certificate is not read yet waits for it (final: emit it as it is).
func (st *zeekState) ssl(n int, rec zeekRec, final bool) error {
	ip, port, err := st.endpoint(rec)
	if err != nil {
		st.bad(LineError{n, err})
		return nil
	}
	chain := rec.strs("cert_chain_fps")
	if len(chain) == 0 {
		chain = rec.strs("cert_chain_fuids")
	}
	var leaf *TLS
	if len(chain) > 0 && chain[0] != "" {
		leaf = st.certs[strings.ToLower(chain[0])]
		if leaf == nil {
			leaf = st.certs[chain[0]]
		}
		if leaf == nil && !final && len(st.waiting) < zeekMaxHeld {
			st.waiting = append(st.waiting, zeekWaiting{n, rec})
			return nil
		}
	}
	t := &TLS{}
	if leaf != nil {
		c := *leaf
		t = &c
	} else {
		if s := rec.str("subject"); s != "" {
			t.Subject = ParseDN(s)
		}
		if s := rec.str("issuer"); s != "" {
			t.Issuer = ParseDN(s)
		}
	}
	t.Version, t.Cipher, t.JA3S = tlsVersionText(rec.str("version")), rec.str("cipher"), rec.str("ja3s")
	if t.empty() {
		st.opt.skip(n, "zeek ssl record with no version, cipher or certificate")
		return nil
	}
	transport := "tcp"
	if strings.HasPrefix(rec.str("version"), "DTLS") {
		transport = "udp"
	}
	o := Observation{Type: TypeService, IP: ip.String(), Source: st.src, ObservedAt: st.when(n, rec),
		Service: &Service{Port: port, Transport: transport, Probes: []Probe{{Name: "zeek.ssl", TLS: t}}}}
	if sni := rec.str("server_name"); sni != "" {
		o.Hostnames = []string{sni}
	}
	return emitChecked(n, o, st.emit, st.bad)
}

func (st *zeekState) http(n int, rec zeekRec) error {
	ip, port, err := st.endpoint(rec)
	if err != nil {
		st.bad(LineError{n, err})
		return nil
	}
	q := &Request{Method: rec.str("method"), Path: rec.str("uri"), Host: rec.str("host")}
	if ua := rec.str("user_agent"); ua != "" {
		q.Headers = []Header{{Name: "User-Agent", Value: ua}}
	}
	p := Probe{Name: "zeek.http", Request: q}
	if code, ok, err := rec.num("status_code"); err == nil && ok && code > 0 && code < 1000 {
		p.Response = &Response{Status: int(code), Reason: rec.str("status_msg")}
		if v := rec.str("version"); v != "" {
			p.Response.Protocol = "HTTP/" + v
		}
	}
	if q.Method == "" && p.Response == nil {
		st.opt.skip(n, "zeek http record with no request or response")
		return nil
	}
	o := Observation{Type: TypeService, IP: ip.String(), Source: st.src, ObservedAt: st.when(n, rec),
		Service: &Service{Port: port, Transport: "tcp", Probes: []Probe{p}}}
	if h := hostOf(q.Host); h != "" {
		if _, err := netip.ParseAddr(h); err != nil {
			o.Hostnames = []string{h}
		}
	}
	return emitChecked(n, o, st.emit, st.bad)
}

// snmp reads an snmp.log record: the agent's system description
// (display_string, which Zeek takes from a response's sysDescr) as a
// banner of the responder's port, the form the SNMP rules read.
func (st *zeekState) snmp(n int, rec zeekRec) error {
	return st.banner(n, rec, "display_string", "udp", "zeek.snmp", "zeek snmp record with no display_string (sysDescr)")
}

// ssh reads an ssh.log record: the server's software string as a banner.
func (st *zeekState) ssh(n int, rec zeekRec) error {
	return st.banner(n, rec, "server", "tcp", "zeek.ssh", "zeek ssh record with no server software")
}

// banner reads a record whose field is the server's own text: a banner
// probe named probe on the responder's port; a record without it is
// skipped, saying missing.
func (st *zeekState) banner(n int, rec zeekRec, field, transport, probe, missing string) error {
	ip, port, err := st.endpoint(rec)
	if err != nil {
		st.bad(LineError{n, err})
		return nil
	}
	text := rec.str(field)
	if text == "" {
		st.opt.skip(n, missing)
		return nil
	}
	o := Observation{Type: TypeService, IP: ip.String(), Source: st.src, ObservedAt: st.when(n, rec),
		Service: &Service{Port: port, Transport: transport, Probes: []Probe{{Name: probe, Banner: &Banner{Received: TextBody(validUTF8(text))}}}}}
	return emitChecked(n, o, st.emit, st.bad)
}

// software reads a software.log record: a server's software becomes the
// evidence the protocol carries it in.
func (st *zeekState) software(n int, rec zeekRec) error {
	typ, sw := rec.str("software_type"), rec.str("unparsed_version")
	var p Probe
	switch typ {
	case "HTTP::SERVER":
		p = Probe{Name: "zeek.software", Response: &Response{Headers: []Header{{Name: "Server", Value: sw}}}}
	case "HTTP::APPSERVER":
		p = Probe{Name: "zeek.software", Response: &Response{Headers: []Header{{Name: "X-Powered-By", Value: sw}}}}
	case "SSH::SERVER":
		line := sw
		if !strings.HasPrefix(line, "SSH-") {
			line = "SSH-2.0-" + line
		}
		p = Probe{Name: "zeek.software", Banner: &Banner{Received: TextBody(line)}}
	case "FTP::SERVER", "SMTP::SERVER", "MySQL::SERVER":
		p = Probe{Name: "zeek.software", Banner: &Banner{Received: TextBody(sw)}}
	default:
		st.opt.skip(n, "zeek software record of a client ("+typ+")")
		return nil
	}
	if sw == "" {
		st.opt.skip(n, "zeek software record with no unparsed_version")
		return nil
	}
	ip, err := netip.ParseAddr(rec.str("host"))
	if err != nil {
		st.bad(LineError{n, fmt.Errorf("host: not an IP address: %q", rec.str("host"))})
		return nil
	}
	port, ok, err := rec.num("host_p")
	if err != nil || !ok || port < 1 || port > 65535 {
		st.opt.skip(n, "zeek software record of a server with no port")
		return nil
	}
	o := Observation{Type: TypeService, IP: ip.Unmap().String(), Source: st.src, ObservedAt: st.when(n, rec),
		Service: &Service{Port: int(port), Transport: "tcp", Probes: []Probe{p}}}
	return emitChecked(n, o, st.emit, st.bad)
}

// knownCert reads a known_certs.log record (policy/protocols/ssl/known-certs).
func (st *zeekState) knownCert(n int, rec zeekRec) error {
	ip, err := netip.ParseAddr(rec.str("host"))
	if err != nil {
		st.bad(LineError{n, fmt.Errorf("host: not an IP address: %q", rec.str("host"))})
		return nil
	}
	port, ok, err := rec.num("port_num")
	if err != nil || !ok || port < 1 || port > 65535 {
		st.bad(LineError{n, fmt.Errorf("port_num: must be 1..65535, got %q", rec.str("port_num"))})
		return nil
	}
	t := &TLS{Serial: zeekSerial(rec.str("serial"))}
	if s := rec.str("subject"); s != "" {
		t.Subject = ParseDN(s)
	}
	if s := rec.str("issuer_subject"); s != "" {
		t.Issuer = ParseDN(s)
	}
	if t.Subject != nil && t.Issuer != nil && t.Subject.DN == t.Issuer.DN {
		t.SelfSigned = true
	}
	if t.empty() {
		st.opt.skip(n, "zeek known_certs record with no subject, issuer or serial")
		return nil
	}
	o := Observation{Type: TypeService, IP: ip.Unmap().String(), Source: st.src, ObservedAt: st.when(n, rec),
		Service: &Service{Port: int(port), Transport: "tcp", Probes: []Probe{{Name: "zeek.known_certs", TLS: t}}}}
	return emitChecked(n, o, st.emit, st.bad)
}
