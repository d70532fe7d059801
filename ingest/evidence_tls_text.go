package ingest

import (
	"regexp"
	"strings"
)

// certText finds the certificate lines of the tools people paste:
// openssl s_client's "subject=" and "issuer=" and its chain's " 0 s:" and
// "   i:", openssl x509 -text's "Subject:" and "Issuer:", nmap's ssl-cert
// "Subject:"/"Issuer:" (its slash-separated long names).
var (
	certSubjectLine = regexp.MustCompile(`(?m)^[ \t]*(?:subject=|Subject:[ \t]*|0 s:)[ \t]*(.+?)[ \t]*\r?$`)
	certIssuerLine  = regexp.MustCompile(`(?m)^[ \t]*(?:issuer=|Issuer:[ \t]*|i:)[ \t]*(.+?)[ \t]*\r?$`)
)

// tlsFromBanners reads a certificate pasted as a banner (openssl s_client's
// or x509's output, a PEM block, nmap's ssl-cert lines quoted alone) into
// a TLS probe beside the banner, named "text:certificate", for a service
// that has no certificate of its own: a PEM block whole, else the
// subject's and issuer's names. Normalizing twice adds it once.
func (s *Service) tlsFromBanners() {
	for _, p := range s.Probes {
		if p.TLS != nil {
			return
		}
	}
	for _, p := range s.Probes {
		b := p.Banner
		if b == nil || b.Received == nil || b.Received.Encoding != "" || len(b.Received.Data) > 256<<10 {
			continue
		}
		text := b.Received.Data
		var t *TLS
		if i := strings.Index(text, "-----BEGIN CERTIFICATE-----"); i >= 0 {
			if j := strings.Index(text[i:], "-----END CERTIFICATE-----"); j > 0 {
				c := &TLS{PEM: text[i : i+j+len("-----END CERTIFICATE-----")]}
				if c.readPEM() == nil && !c.empty() {
					t = c
				}
			}
		}
		if t == nil {
			sub := certSubjectLine.FindStringSubmatch(text)
			if sub == nil || !strings.Contains(sub[1], "=") {
				continue
			}
			t = &TLS{Subject: certName(sub[1])}
			if iss := certIssuerLine.FindStringSubmatch(text); iss != nil && strings.Contains(iss[1], "=") {
				t.Issuer = certName(iss[1])
			}
		}
		s.Probes = append(s.Probes, Probe{Name: "text:certificate", TLS: t})
		return
	}
}

// slashAttr finds an attribute of a slash-separated name ("/O=", "/organizationName=").
var slashAttr = regexp.MustCompile(`/[A-Za-z]+=`)

// certName reads a name as the tools print it: "C = US, O = Fortinet",
// "/C=US/O=Fortinet", or nmap's "commonName=x/organizationName=y" (whose
// values may hold commas: "organizationName=Fortinet, Inc.").
func certName(v string) *DN {
	if !strings.HasPrefix(v, "/") && slashAttr.MatchString(v) {
		v = "/" + v
	}
	return ParseDN(v)
}
