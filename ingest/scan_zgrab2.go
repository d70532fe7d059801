package ingest

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
)

// zgrab2DefaultPorts are the ports zgrab2's modules scan when --port is
// not given (each module's DefaultPort in zmap/zgrab2 modules/*), used for
// a module result that carries no port of its own (zgrab2 before the
// "port" member of its scan response). http is 80, or 443 when its
// request was https.
var zgrab2DefaultPorts = map[string]int{
	"amqp091": 5672, "bacnet": 47808, "banner": 80, "checkpoint": 264, "codesys2": 1200, "dnp3": 20000,
	"drda": 50000, "enip": 44818, "fox": 1911, "ftp": 21, "http": 80, "imap": 143, "ipp": 631, "jarm": 443,
	"managesieve": 4190, "memcached": 11211, "modbus": 502, "mongodb": 27017, "mqtt": 1883, "mssql": 1433,
	"mysql": 3306, "ntp": 123, "omronfins": 9600, "oracle": 1521, "pop3": 110, "postgres": 5432, "pptp": 1723,
	"rdp": 3389, "redis": 6379, "siemens": 102, "smb": 445, "smtp": 25, "socks5": 1080, "ssh": 22,
	"telnet": 23, "tls": 443,
}

// zgrab2UDP are the modules that scan over UDP.
var zgrab2UDP = map[string]bool{"ntp": true, "bacnet": true}

// zgrab2Extra are the text members of a module result, besides banner,
// that hold what the service answered to a further command.
var zgrab2Extra = []string{"ehlo", "helo", "help", "noop", "starttls", "auth_tls", "auth_ssl", "quit"}

type zgrab2Line struct {
	IP     string                   `json:"ip"`
	Domain string                   `json:"domain"`
	Data   map[string]*zgrab2Module `json:"data"`
}

type zgrab2Module struct {
	Status    string          `json:"status"`
	Protocol  string          `json:"protocol"`
	Port      int             `json:"port"`
	Result    json.RawMessage `json:"result"`
	Timestamp string          `json:"timestamp"`
	Error     *string         `json:"error"`
}

// ZGrab2 reads zgrab2's output, one JSON object per line
// ({"ip":..,"data":{"<scan name>":{"status":..,"protocol":..,"result":..}}}).
// Every module that succeeded becomes evidence of the service on its
// port: an http module its response (and each response of its redirect
// chain) with the request that got it and the TLS handshake under it; a
// tls module its handshake; jarm its fingerprint; banner, ssh, ftp, smtp,
// pop3, imap, telnet and any module with a banner a banner probe named
// for the module; ssh's software, mysql's server_version, memcached's and
// mssql's version and amqp091's server_properties (product, version,
// platform) the detected product. A line with a "domain" and no "ip" is
// skipped: it has no address. Modules on the same port make one observation. A module
// whose status is not success is counted through Options.Skipped, not
// stored. A result without a port takes the module's default port
// (zgrab2DefaultPorts; http by the scheme of its URL).
func ZGrab2(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("zgrab2")
	return opt.nonBlankLines(r, "zgrab2", bad, func(n int, line []byte) error {
		var zl zgrab2Line
		if err := scanUnmarshal(line, &zl); err != nil {
			bad(LineError{n, fmt.Errorf("json: %w", err)})
			return nil
		}
		if zl.IP == "" && zl.Domain != "" && zl.Data != nil {
			// zgrab2 given a name it did not resolve (its own
			// integration tests' "target") writes no "ip"
			opt.skip(n, noAddress("zgrab2", zl.Domain))
			return nil
		}
		if zl.IP == "" || zl.Data == nil {
			bad(LineError{n, errors.New(`not a zgrab2 record: want "ip" and "data"`)})
			return nil
		}
		names := make([]string, 0, len(zl.Data))
		for name := range zl.Data {
			names = append(names, name)
		}
		slices.Sort(names)
		byPort := map[int]*Observation{}
		var order []int
		for _, name := range names {
			m := zl.Data[name]
			if m == nil {
				bad(LineError{n, fmt.Errorf("data.%s: null", name)})
				continue
			}
			if m.Status != "success" {
				reason := m.Status
				if reason == "" {
					reason = "no status"
				}
				opt.skip(n, "zgrab2 module failed: "+name+" "+reason)
				continue
			}
			proto := m.Protocol
			if proto == "" {
				proto = name
			}
			probes, port, det, err := zgrab2Probes(name, proto, m.Result, zl.Domain)
			if err != nil {
				bad(LineError{n, fmt.Errorf("data.%s.result: %w", name, err)})
				continue
			}
			if m.Port > 0 {
				port = m.Port
			}
			if port == 0 {
				port = zgrab2DefaultPorts[proto]
			}
			if port == 0 {
				bad(LineError{n, fmt.Errorf("data.%s: no port, and module %q has no default port", name, proto)})
				continue
			}
			o, ok := byPort[port]
			if !ok {
				transport := "tcp"
				if zgrab2UDP[proto] {
					transport = "udp"
				}
				o = &Observation{Type: TypeService, IP: zl.IP, Source: src, ObservedAt: opt.when(scanTime(m.Timestamp)),
					Service: &Service{Port: port, Transport: transport}}
				if zl.Domain != "" {
					o.Hostnames = []string{zl.Domain}
				}
				byPort[port] = o
				order = append(order, port)
			}
			o.Service.Probes = append(o.Service.Probes, probes...)
			if o.Service.Detected == nil || (o.Service.Detected.Service == "tls" && det.Service != "tls") {
				o.Service.Detected = det
			}
		}
		for _, port := range order {
			if err := emitChecked(n, *byPort[port], emit, bad); err != nil {
				return err
			}
		}
		return nil
	})
}

// zgrab2Probes maps one module's result.
func zgrab2Probes(name, proto string, raw json.RawMessage, domain string) (probes []Probe, port int, det *Detected, err error) {
	det = &Detected{By: "zgrab2", Service: proto}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, 0, det, nil
	}
	switch proto {
	case "http", "ipp":
		probes, port, err = zgrab2HTTPProbes(name, raw, domain)
		if err != nil {
			return nil, 0, nil, err
		}
		return probes, port, det, nil
	case "tls":
		var log zgrab2TLSLog
		if err := scanUnmarshal(raw, &log); err != nil {
			return nil, 0, nil, err
		}
		if t := log.tls(); t != nil {
			probes = append(probes, Probe{Name: name, TLS: t})
		}
		return probes, 0, det, nil
	case "jarm":
		var res struct {
			Fingerprint string `json:"fingerprint"`
		}
		if err := scanUnmarshal(raw, &res); err != nil {
			return nil, 0, nil, err
		}
		if res.Fingerprint != "" {
			probes = append(probes, Probe{Name: name, TLS: &TLS{JARM: res.Fingerprint}})
		}
		return probes, 0, det, nil
	}
	var res map[string]json.RawMessage
	if err := scanUnmarshal(raw, &res); err != nil {
		return nil, 0, nil, err
	}
	str := func(k string) string {
		var s string
		_ = scanUnmarshal(res[k], &s)
		return s
	}
	var tlsProbe *TLS
	if t, ok := res["tls"]; ok {
		var log zgrab2TLSLog
		if scanUnmarshal(t, &log) == nil {
			tlsProbe = log.tls()
		}
	}
	if proto == "ssh" {
		var sid struct {
			Raw      string `json:"raw"`
			Software string `json:"software"`
			Comment  string `json:"comment"`
		}
		_ = scanUnmarshal(res["server_id"], &sid)
		if sid.Raw != "" {
			probes = append(probes, Probe{Name: name, Banner: &Banner{Received: TextBody(sid.Raw)}})
		}
		det.Product = sid.Software
		det.Info = sid.Comment
	}
	if b := str("banner"); b != "" {
		body := TextBody(b)
		if proto == "banner" {
			body = zgrab2BannerBody(b, res)
		}
		probes = append(probes, Probe{Name: name, Banner: &Banner{Received: body}, TLS: tlsProbe})
		tlsProbe = nil
	}
	for _, k := range zgrab2Extra {
		if s := str(k); s != "" {
			probes = append(probes, Probe{Name: name + "." + k, Banner: &Banner{Received: TextBody(s)}})
		}
	}
	if tlsProbe != nil {
		probes = append(probes, Probe{Name: name, TLS: tlsProbe})
	}
	if v := str("server_version"); v != "" { // mysql
		det.Version = v
	}
	switch proto {
	case "memcached", "mssql":
		// memcached's VERSION answer (zgrab2 keeps its "\r"), the SQL
		// Server build of mssql's PRELOGIN answer ("14.0.3015")
		if v := strings.TrimSpace(str("version")); v != "" {
			det.Version = v
		}
	}
	if proto == "amqp091" {
		// The broker's Connection.Start server-properties: RabbitMQ's
		// product, version and platform (Erlang/OTP).
		var sp struct {
			Product  string `json:"product"`
			Version  string `json:"version"`
			Platform string `json:"platform"`
		}
		_ = scanUnmarshal(res["server_properties"], &sp)
		det.Product, det.Version, det.Info = sp.Product, sp.Version, sp.Platform
	}
	return probes, 0, det, nil
}

// zgrab2HTTPProbes reads the http module's result: a probe per response
// of the redirect chain, then the final one. The port scanned is the first
// request's: the chain's first, or the final response's when there was no
// redirect.
func zgrab2HTTPProbes(name string, raw json.RawMessage, domain string) (probes []Probe, port int, err error) {
	var res struct {
		Response *zgrab2Response  `json:"response"`
		Chain    []zgrab2Response `json:"redirect_response_chain"`
	}
	if err := scanUnmarshal(raw, &res); err != nil {
		return nil, 0, err
	}
	for i := range res.Chain {
		p, pt := res.Chain[i].probe(name, domain)
		probes = append(probes, p)
		if i == 0 {
			port = pt
		}
	}
	if res.Response != nil {
		p, pt := res.Response.probe(name, domain)
		probes = append(probes, p)
		if len(res.Chain) == 0 {
			port = pt
		}
	}
	return probes, port, nil
}

// zgrab2BannerBody decodes the banner module's banner, which is text, or
// hex (--hex) or base64 (--base64) of the bytes: the encoding whose
// decoded bytes match the result's length (and sha256, when given) wins.
func zgrab2BannerBody(s string, res map[string]json.RawMessage) *Body {
	var length int
	var sum string
	_ = scanUnmarshal(res["length"], &length)
	_ = scanUnmarshal(res["sha256"], &sum)
	fits := func(b []byte) bool {
		if length > 0 && len(b) != length {
			return false
		}
		if sum != "" {
			return strings.EqualFold(BytesBody(b).SHA256, sum)
		}
		return length > 0
	}
	if fits([]byte(s)) {
		return BytesBody([]byte(s))
	}
	if b, err := hex.DecodeString(s); err == nil && fits(b) {
		return BytesBody(b)
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && fits(b) {
		return BytesBody(b)
	}
	return TextBody(s)
}

// zgrab2Headers is a header map as zgrab2 writes it: lower-case names
// with underscores, each to its values, and "unknown" to a list of
// {key, value} for names outside its list of known headers.
type zgrab2Headers map[string]json.RawMessage

func (h zgrab2Headers) list() []Header {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	var out []Header
	for _, k := range names {
		if k == "unknown" {
			var unk []struct {
				Key   string   `json:"key"`
				Value []string `json:"value"`
			}
			_ = scanUnmarshal(h[k], &unk)
			for _, u := range unk {
				for _, v := range u.Value {
					out = append(out, Header{Name: canonicalHeader(u.Key), Value: v})
				}
			}
			continue
		}
		var vs []string
		if scanUnmarshal(h[k], &vs) != nil {
			continue
		}
		for _, v := range vs {
			out = append(out, Header{Name: canonicalHeader(k), Value: v})
		}
	}
	return out
}

type zgrab2Response struct {
	StatusLine string          `json:"status_line"`
	StatusCode int             `json:"status_code"`
	Protocol   json.RawMessage `json:"protocol"`
	Headers    zgrab2Headers   `json:"headers"`
	HeadersRaw []byte          `json:"headers_raw"`
	Body       *string         `json:"body"`
	BodySHA256 string          `json:"body_sha256"`
	BodyLength int64           `json:"body_length"`
	Request    *struct {
		URL *struct {
			Scheme   string `json:"scheme"`
			Host     string `json:"host"`
			Path     string `json:"path"`
			RawQuery string `json:"raw_query"`
		} `json:"url"`
		Method  string        `json:"method"`
		Headers zgrab2Headers `json:"headers"`
		Host    string        `json:"host"`
		TLSLog  *zgrab2TLSLog `json:"tls_log"`
	} `json:"request"`
}

// probe maps one response, and the port its request went to (0 when the
// request does not say).
func (z *zgrab2Response) probe(name, domain string) (Probe, int) {
	resp := &Response{Status: z.StatusCode}
	if _, reason, ok := strings.Cut(z.StatusLine, " "); ok {
		resp.Reason = reason
	}
	var proto struct {
		Name string `json:"name"`
	}
	if scanUnmarshal(z.Protocol, &proto) != nil {
		_ = scanUnmarshal(z.Protocol, &proto.Name)
	}
	resp.Protocol = proto.Name
	if len(z.HeadersRaw) > 0 {
		// The raw header bytes keep the server's names, order and repeats.
		if r, ok := parseHTTPResponse(append([]byte("HTTP/1.1 200 X\r\n"), z.HeadersRaw...)); ok {
			resp.Headers = r.Headers
		}
	}
	if resp.Headers == nil {
		resp.Headers = z.Headers.list()
	}
	if z.Body != nil && *z.Body != "" {
		resp.Body = TextBody(*z.Body)
		if isHex(strings.ToLower(z.BodySHA256), 64) {
			resp.Body.SHA256 = z.BodySHA256
		}
		resp.Body.Length = z.BodyLength
	}
	p := Probe{Name: name, Response: resp}
	port := 0
	if q := z.Request; q != nil {
		req := &Request{Method: q.Method, Host: q.Host, Headers: q.Headers.list()}
		if u := q.URL; u != nil {
			req.Path = u.Path
			if u.RawQuery != "" {
				req.Path += "?" + u.RawQuery
			}
			if req.Host == "" {
				req.Host = u.Host
			}
			if _, ps, err := net.SplitHostPort(u.Host); err == nil {
				port, _ = strconv.Atoi(ps)
			} else if u.Scheme == "https" {
				port = 443
			} else if u.Scheme == "http" {
				port = 80
			}
		}
		if req.Host == "" {
			req.Host = domain
		}
		p.Request = req
		if q.TLSLog != nil {
			p.TLS = q.TLSLog.tls()
		}
	}
	return p, port
}

// zgrab2TLSLog is zgrab2's TLS log (its tls module's result, an http
// request's tls_log): the handshake with the server's certificate.
type zgrab2TLSLog struct {
	HandshakeLog *struct {
		ServerHello *struct {
			Version *struct {
				Name string `json:"name"`
			} `json:"version"`
			CipherSuite *struct {
				Name string `json:"name"`
			} `json:"cipher_suite"`
		} `json:"server_hello"`
		ServerCertificates *struct {
			Certificate *struct {
				Raw    []byte         `json:"raw"`
				Parsed *zcryptoParsed `json:"parsed"`
			} `json:"certificate"`
		} `json:"server_certificates"`
	} `json:"handshake_log"`
	JA3S string `json:"ja3s"`
	JA4S string `json:"ja4s"`
}

type zcryptoName struct {
	CommonName         []string `json:"common_name"`
	Organization       []string `json:"organization"`
	OrganizationalUnit []string `json:"organizational_unit"`
	Country            []string `json:"country"`
	Province           []string `json:"province"`
	Locality           []string `json:"locality"`
	EmailAddress       []string `json:"email_address"`
}

func (n *zcryptoName) dn(whole string) *DN {
	if n == nil && whole == "" {
		return nil
	}
	if n == nil {
		return ParseDN(whole)
	}
	d := pkixDN(whole, first(n.CommonName), n.Organization, n.OrganizationalUnit, n.Country, n.Province, n.Locality)
	if d != nil {
		d.Email = first(n.EmailAddress)
	}
	return d
}

type zcryptoParsed struct {
	SerialNumber string       `json:"serial_number"`
	Issuer       *zcryptoName `json:"issuer"`
	IssuerDN     string       `json:"issuer_dn"`
	Subject      *zcryptoName `json:"subject"`
	SubjectDN    string       `json:"subject_dn"`
	Validity     *struct {
		Start string `json:"start"`
		End   string `json:"end"`
	} `json:"validity"`
	Extensions *struct {
		SubjectAltName *struct {
			DNSNames    []string `json:"dns_names"`
			IPAddresses []string `json:"ip_addresses"`
		} `json:"subject_alt_name"`
	} `json:"extensions"`
	FingerprintSHA256 string `json:"fingerprint_sha256"`
	Signature         *struct {
		SelfSigned bool `json:"self_signed"`
	} `json:"signature"`
}

// tls maps the log; nil when it holds nothing.
func (l *zgrab2TLSLog) tls() *TLS {
	t := &TLS{JA3S: l.JA3S, JA4S: l.JA4S}
	if h := l.HandshakeLog; h != nil {
		if sh := h.ServerHello; sh != nil {
			if sh.Version != nil {
				t.Version = sh.Version.Name
			}
			if sh.CipherSuite != nil {
				t.Cipher = sh.CipherSuite.Name
			}
		}
		if sc := h.ServerCertificates; sc != nil && sc.Certificate != nil {
			if p := sc.Certificate.Parsed; p != nil {
				t.Subject = p.Subject.dn(p.SubjectDN)
				t.Issuer = p.Issuer.dn(p.IssuerDN)
				t.Serial = decimalSerial(p.SerialNumber)
				t.SHA256 = p.FingerprintSHA256
				if v := p.Validity; v != nil {
					t.NotBefore, t.NotAfter = v.Start, v.End
				}
				if e := p.Extensions; e != nil && e.SubjectAltName != nil {
					t.SANs = append(append(t.SANs, e.SubjectAltName.DNSNames...), e.SubjectAltName.IPAddresses...)
				}
				if p.Signature != nil {
					t.SelfSigned = p.Signature.SelfSigned
				}
			} else if len(sc.Certificate.Raw) > 0 {
				if c, err := certTLS(sc.Certificate.Raw); err == nil {
					c.Version, c.Cipher, c.JA3S, c.JA4S = t.Version, t.Cipher, t.JA3S, t.JA4S
					t = c
				}
			}
		}
	}
	if t.empty() {
		return nil
	}
	return t
}

func (t *TLS) empty() bool {
	return t.Version == "" && t.Cipher == "" && t.Subject == nil && t.Issuer == nil && len(t.SANs) == 0 && t.Serial == "" &&
		t.SHA256 == "" && t.NotBefore == "" && t.NotAfter == "" && t.JARM == "" && t.JA3S == "" && t.JA4S == ""
}
