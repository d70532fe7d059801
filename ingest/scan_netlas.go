package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// netlasData is one Netlas response (the "data" of an item of the
// responses search): the address and port, the protocols, the HTTP
// answer and the certificate as Netlas parsed them.
type netlasData struct {
	IP          string `json:"ip"`
	Host        string `json:"host"`
	Port        any    `json:"port"`
	Prot4       string `json:"prot4"`
	Prot7       string `json:"prot7"`
	Protocol    string `json:"protocol"`
	URI         string `json:"uri"`
	Path        string `json:"path"`
	Timestamp   string `json:"@timestamp"`
	LastUpdated string `json:"last_updated"`
	ScanDate    string `json:"scan_date"`
	ISP         string `json:"isp"`
	PTR         any    `json:"ptr"`
	Domain      any    `json:"domain"`
	JARM        string `json:"jarm"`
	Whois       *struct {
		ASN *struct {
			Number any    `json:"number"`
			Name   string `json:"name"`
		} `json:"asn"`
		Net *struct {
			Organization string `json:"organization"`
		} `json:"net"`
	} `json:"whois"`
	HTTP *struct {
		StatusCode     any            `json:"status_code"`
		StatusLine     string         `json:"status_line"`
		Headers        jsontext.Value `json:"headers"`
		UnknownHeaders []struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		} `json:"unknown_headers"`
		Title       string `json:"title"`
		Body        string `json:"body"`
		HTTPVersion *struct {
			Name string `json:"name"`
		} `json:"http_version"`
		Favicon *struct {
			Path string `json:"path"`
			Hash any    `json:"hash"`
		} `json:"favicon"`
	} `json:"http"`
	Certificate *netlasCert `json:"certificate"`
}

// netlasCert is a certificate as Netlas (after zcrypto) parses it.
type netlasCert struct {
	SubjectDN    string       `json:"subject_dn"`
	IssuerDN     string       `json:"issuer_dn"`
	Subject      *zcryptoName `json:"subject"`
	Issuer       *zcryptoName `json:"issuer"`
	SerialNumber string       `json:"serial_number"`
	SHA256       string       `json:"fingerprint_sha256"`
	Names        []string     `json:"names"`
	Validity     *struct {
		Start string `json:"start"`
		End   string `json:"end"`
	} `json:"validity"`
	Signature *struct {
		SelfSigned bool `json:"self_signed"`
	} `json:"signature"`
	Extensions *struct {
		SubjectAltName *struct {
			DNSNames    []string `json:"dns_names"`
			IPAddresses []string `json:"ip_addresses"`
		} `json:"subject_alt_name"`
	} `json:"extensions"`
}

// Netlas reads Netlas responses: an API answer ({"items": [{"data":
// {...}}]}), `netlas download`'s JSON lines ({"data": {...}} each), or
// the data objects alone (one, an array, or JSON lines). Each response
// with an address is one service observation (docs/ingest-enrich.md says
// what is kept); a record without one (a DNS or whois record) is counted
// as skipped.
func Netlas(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("netlas")
	return opt.jsonRecords(r, "netlas", bad, []string{"items"}, func(n int, rec []byte) error {
		var m map[string]jsontext.Value
		if err := scanUnmarshal(rec, &m); err != nil || m == nil {
			if err == nil {
				err = errors.New("not an object")
			}
			bad(LineError{n, fmt.Errorf("json: %w", err)})
			return nil
		}
		if d, ok := m["data"]; ok && m["ip"] == nil && bytes.HasPrefix(bytes.TrimSpace(d), []byte("{")) {
			rec = d
			m = nil
			if err := scanUnmarshal(rec, &m); err != nil {
				bad(LineError{n, fmt.Errorf("data: json: %w", err)})
				return nil
			}
		}
		if detail, ok := m["detail"]; ok && m["ip"] == nil {
			bad(LineError{n, fmt.Errorf("netlas answer without records: %s", detail)})
			return nil
		}
		var x netlasData
		if err := scanUnmarshal(rec, &x); err != nil {
			bad(LineError{n, fmt.Errorf("json: %w", err)})
			return nil
		}
		if x.IP == "" {
			if _, err := netip.ParseAddr(x.Host); err != nil {
				name := firstNonEmpty(x.Host, first(textsOf(x.Domain)))
				if name == "" {
					bad(LineError{n, errors.New(`not a Netlas response: want "ip" and "port" (or "data" holding them)`)})
					return nil
				}
				opt.skip(n, "netlas record without an IP address (domain "+strconv.Quote(name)+")")
				return nil
			}
			x.IP = x.Host
		}
		o, err := x.observation(m, src, opt)
		return emitBuilt(n, o, err, emit, bad)
	})
}

func (x *netlasData) observation(m map[string]jsontext.Value, src string, opt Options) (Observation, error) {
	a, port, err := scanIPPort(x.IP, x.Port)
	if err != nil {
		return Observation{}, err
	}
	at := scanTime(x.Timestamp)
	if at.IsZero() {
		at = scanTime(x.LastUpdated)
	}
	o := Observation{Type: TypeService, IP: a.Unmap().String(), Source: src, ObservedAt: opt.when(at)}
	o.Hostnames = hostNames(append(append([]string{x.Host}, textsOf(x.Domain)...), textsOf(x.PTR)...)...)
	transport := "tcp"
	if strings.EqualFold(x.Prot4, "udp") {
		transport = "udp"
	}
	probes, err := x.probes(m)
	if err != nil {
		return Observation{}, err
	}
	o.Service = &Service{Port: port, Transport: transport, Probes: probes}
	if svc := strings.ToLower(firstNonEmpty(x.Protocol, x.Prot7)); svc != "" {
		o.Service.Detected = &Detected{By: "netlas", Service: svc}
	}
	var asn string
	if w := x.Whois; w != nil && w.ASN != nil {
		asn = first(textsOf(w.ASN.Number))
		if asn == "" {
			asn = anyText(w.ASN.Number)
		}
	}
	o.Claims = opt.scanClaim("netlas", x.ISP, asn)
	return o, nil
}

// probes: the HTTP answer (status line, headers, title, body) to a GET
// of path, with the certificate and jarm under it; without one, a banner
// of the protocol's member ("ssh": {"banner": ...}) as a banner probe
// "netlas:<protocol>" and the certificate as a TLS probe; the favicon's
// hash when Netlas gives it as a number (mmh3).
func (x *netlasData) probes(m map[string]jsontext.Value) ([]Probe, error) {
	t, err := x.tls()
	if err != nil {
		return nil, err
	}
	var probes []Probe
	if h := x.HTTP; h != nil {
		resp := &Response{Title: h.Title}
		if st, ok := anyInt(h.StatusCode); ok {
			if st < 100 || st > 999 {
				return nil, fmt.Errorf("http.status_code: not an HTTP status: %d", st)
			}
			resp.Status = int(st)
		} else if h.StatusCode != nil {
			return nil, fmt.Errorf("http.status_code: not a number: %v", h.StatusCode)
		}
		if code, reason, ok := strings.Cut(strings.TrimSpace(h.StatusLine), " "); ok && code == strconv.Itoa(resp.Status) {
			resp.Reason = strings.TrimSpace(reason)
		}
		if h.HTTPVersion != nil {
			resp.Protocol = h.HTTPVersion.Name
		}
		hs, err := netlasHeaders(h.Headers)
		if err != nil {
			return nil, err
		}
		resp.Headers = hs
		for _, u := range h.UnknownHeaders {
			for _, v := range textsOf(u.Value) {
				resp.Headers = append(resp.Headers, Header{Name: u.Key, Value: v})
			}
		}
		if h.Body != "" {
			resp.Body = TextBody(h.Body)
		}
		path := x.Path
		if path == "" {
			path = pathOf(x.URI)
		}
		probes = append(probes, Probe{Request: &Request{Method: "GET", Path: path}, Response: resp, TLS: t})
		t = nil
		if f := h.Favicon; f != nil {
			if v, ok := anyInt(f.Hash); ok && v >= -1<<31 && v < 1<<32 {
				mm := int32(v)
				p := "/favicon.ico"
				if f.Path != "" {
					p = pathOf(f.Path)
				}
				probes = append(probes, faviconProbe(p, "", &Body{MMH3: &mm}))
			}
		}
	}
	for _, name := range []string{x.Prot7, x.Protocol} {
		raw, ok := m[strings.ToLower(name)]
		if name == "" || !ok || strings.EqualFold(name, "http") || strings.EqualFold(name, "https") {
			continue
		}
		var b struct {
			Banner string `json:"banner"`
		}
		if scanUnmarshal(raw, &b) == nil && b.Banner != "" {
			probes = append(probes, Probe{Name: "netlas:" + strings.ToLower(name), Banner: &Banner{Received: TextBody(b.Banner)}})
			break
		}
	}
	if t != nil {
		probes = append(probes, Probe{TLS: t})
	}
	return probes, nil
}

// netlasHeaders reads http.headers ({"content_type": ["text/html"],
// ...}: names folded to lower case with underscores, each a list of
// values) in the order Netlas wrote them.
func netlasHeaders(v jsontext.Value) (Headers, error) {
	if len(bytes.TrimSpace(v)) == 0 || string(bytes.TrimSpace(v)) == "null" {
		return nil, nil
	}
	var m map[string]any
	if err := scanUnmarshal(v, &m); err != nil {
		return nil, fmt.Errorf("http.headers: %w", err)
	}
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	if _, err := dec.ReadToken(); err != nil {
		return nil, fmt.Errorf("http.headers: %w", err)
	}
	var hs Headers
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("http.headers: %w", err)
		}
		name := tok.String()
		if err := dec.SkipValue(); err != nil {
			return nil, fmt.Errorf("http.headers: %w", err)
		}
		for _, val := range textsOf(m[name]) {
			hs = append(hs, Header{Name: canonicalHeader(name), Value: val})
		}
	}
	return hs, nil
}

// tls reads the certificate: subject and issuer (the DN strings and the
// attribute lists), names and SANs, the serial (decimal, written as hex),
// SHA-256, validity, self-signed; jarm.
func (x *netlasData) tls() (*TLS, error) {
	t := &TLS{JARM: x.JARM}
	if c := x.Certificate; c != nil {
		t.Subject, t.Issuer = c.Subject.dn(c.SubjectDN), c.Issuer.dn(c.IssuerDN)
		if c.SerialNumber != "" {
			if !isBigInteger(c.SerialNumber) {
				return nil, fmt.Errorf("certificate.serial_number: not a decimal number: %q", c.SerialNumber)
			}
			t.Serial = decimalSerial(c.SerialNumber)
		}
		if s := strings.ToLower(c.SHA256); s != "" {
			if !isHex(s, 64) {
				return nil, errors.New("certificate.fingerprint_sha256: not 64 hex digits")
			}
			t.SHA256 = s
		}
		if v := c.Validity; v != nil {
			t.NotBefore, t.NotAfter = rfc3339(v.Start), rfc3339(v.End)
		}
		if c.Signature != nil {
			t.SelfSigned = c.Signature.SelfSigned
		}
		var sans []string
		if e := c.Extensions; e != nil && e.SubjectAltName != nil {
			sans = append(append(sans, e.SubjectAltName.DNSNames...), e.SubjectAltName.IPAddresses...)
		}
		if len(sans) == 0 {
			sans = c.Names
		}
		t.SANs = sans
	}
	if t.empty() {
		return nil, nil
	}
	return t, nil
}
