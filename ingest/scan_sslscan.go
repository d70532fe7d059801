package ingest

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// sslscanTest is one <ssltest> of sslscan's --xml: the target, the
// protocols (2.x), the ciphers with their status, and the certificate:
// under <certificates> since 2.0 (type "short", or "full" with
// --show-certificate: the PEM blob, serial, whole subject and issuer),
// directly under the test before.
type sslscanTest struct {
	Host      string `xml:"host,attr"`
	SNI       string `xml:"sniname,attr"`
	Port      string `xml:"port,attr"`
	Protocols []struct {
		Type    string `xml:"type,attr"`
		Version string `xml:"version,attr"`
		Enabled string `xml:"enabled,attr"`
	} `xml:"protocol"`
	Ciphers []struct {
		Status     string `xml:"status,attr"`
		SSLVersion string `xml:"sslversion,attr"`
		Cipher     string `xml:"cipher,attr"`
		ID         string `xml:"id,attr"`
	} `xml:"cipher"`
	Certificates []sslscanCert `xml:"certificates>certificate"`
	Certificate  []sslscanCert `xml:"certificate"`
}

type sslscanCert struct {
	Type       string `xml:"type,attr"`
	Blob       string `xml:"certificate-blob"`
	Serial     string `xml:"serial"`
	Subject    string `xml:"subject"`
	Issuer     string `xml:"issuer"`
	AltNames   string `xml:"altnames"`
	SelfSigned string `xml:"self-signed"`
	NotBefore  string `xml:"not-valid-before"`
	NotAfter   string `xml:"not-valid-after"`
}

// SSLScan reads sslscan's --xml output (1.x and 2.x): each <ssltest> one
// service on its host (an address; a name has none, and is counted as
// skipped) and port, with one TLS probe: the certificate (the PEM blob of
// --show-certificate read whole, else subject, issuer, altnames, serial,
// validity and self-signed as listed), the first protocol's preferred
// cipher (sslscan lists the newest protocol first) as version and cipher
// (the IANA name of its id); sniname a host name.
func SSLScan(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("sslscan")
	dec := xml.NewDecoder(xml11As10(r))
	dec.Strict = false
	seen := false
	for {
		line, _ := dec.InputPos()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if !seen {
				bad(LineError{line, errors.New("sslscan xml: no <ssltest> element (not sslscan --xml output?)")})
			}
			return nil
		}
		if err != nil {
			bad(LineError{line, fmt.Errorf("sslscan xml: %w", err)})
			return nil
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "ssltest" {
			continue
		}
		seen = true
		line, _ = dec.InputPos()
		var x sslscanTest
		if err := dec.DecodeElement(&x, &se); err != nil {
			bad(LineError{line, fmt.Errorf("sslscan xml: ssltest: %w", err)})
			return nil
		}
		ip, name := auditHost(x.Host)
		if ip == "" {
			opt.skip(line, noAddress("sslscan", x.Host))
			continue
		}
		o, err := x.observation(ip)
		if err == nil {
			o.Source, o.ObservedAt = src, opt.when(time.Time{})
			o.Hostnames = auditNames(name, x.SNI)
		}
		if err := emitBuilt(line, o, err, emit, bad); err != nil {
			return err
		}
	}
}

func (x *sslscanTest) observation(ip string) (Observation, error) {
	port, err := scanPort(x.Port)
	if err != nil {
		return Observation{}, fmt.Errorf("ssltest %s: %w", x.Host, err)
	}
	t := &TLS{}
	certs := append(x.Certificates, x.Certificate...)
	if len(certs) > 0 {
		if t, err = certs[0].tls(); err != nil {
			return Observation{}, fmt.Errorf("ssltest %s:%s: certificate: %w", x.Host, x.Port, err)
		}
	}
	for _, c := range x.Ciphers {
		if c.Status != "preferred" {
			continue
		}
		t.Version = c.SSLVersion
		t.Cipher = c.Cipher
		if code, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(c.ID), "0x"), 16, 32); err == nil && c.ID != "" {
			if n := cipherName(code); n != "" && !strings.HasPrefix(n, "0x") {
				t.Cipher = n
			}
		}
		break
	}
	if t.empty() {
		return Observation{}, fmt.Errorf("ssltest %s:%s: no certificate, protocol or cipher to keep", x.Host, x.Port)
	}
	return Observation{Type: TypeService, IP: ip, Service: &Service{Port: port, Transport: "tcp", Probes: []Probe{{Name: "sslscan", TLS: t}}}}, nil
}

// tls reads a certificate element: the PEM blob when there is one, the
// listed fields filling what it left empty.
func (c sslscanCert) tls() (*TLS, error) {
	t, _, err := certFromPEM(c.Blob)
	if err != nil {
		return nil, fmt.Errorf("certificate-blob: %w", err)
	}
	l := &TLS{Subject: sslscanDN(c.Subject), Issuer: sslscanDN(c.Issuer), SANs: sanList(c.AltNames, ","), SelfSigned: strings.TrimSpace(c.SelfSigned) == "true"}
	if s := strings.TrimSpace(c.Serial); s != "" {
		// "1513914834 (0x5a3c81d2)", or colon hex for a long one.
		if _, h, ok := strings.Cut(s, "(0x"); ok {
			l.Serial, err = serialText(strings.TrimSuffix(h, ")"), false)
		} else {
			l.Serial, err = serialText(s, false)
		}
		if err != nil {
			return nil, fmt.Errorf("serial: %w", err)
		}
	}
	for _, f := range []struct {
		name, v string
		dst     *string
	}{{"not-valid-before", c.NotBefore, &l.NotBefore}, {"not-valid-after", c.NotAfter, &l.NotAfter}} {
		v := strings.Join(strings.Fields(f.v), " ")
		if v == "" {
			continue
		}
		// OpenSSL's ASN1_TIME_print: "Mar 13 11:59:45 2018 GMT".
		tm, err := time.Parse("Jan 2 15:04:05 2006 MST", v)
		if err != nil {
			return nil, fmt.Errorf("%s: not a time (as OpenSSL prints it, \"Jan 2 15:04:05 2006 GMT\"): %q", f.name, f.v)
		}
		*f.dst = tm.UTC().Format(time.RFC3339)
	}
	return fillTLS(t, l), nil
}

// sslscanDN reads a subject or issuer: OpenSSL's one-line name
// ("/C=US/O=x/CN=y") in a full certificate, the common name alone in a
// short one.
func sslscanDN(s string) *DN {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return nil
	case strings.HasPrefix(s, "/") || strings.Contains(s, "="):
		return ParseDN(s)
	}
	return &DN{CN: s}
}
