package ingest

import (
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
)

// tlsxResponse is ProjectDiscovery tlsx's response (its clients.Response
// with the certificate response inline): a line of `tlsx -json`, and the
// tls member of an httpx line, which is the same structure. tlsx v0.0.1
// (2022-06-24) wrote the names with hyphens (tls-version, subject-dn,
// fingerprint-hash); every release since, with underscores. Both are
// read.
type tlsxResponse struct {
	Timestamp   string `json:"timestamp"`
	Host        string `json:"host"`
	IP          string `json:"ip"`
	Port        any    `json:"port"`
	ProbeStatus *bool  `json:"probe_status"`
	Error       string `json:"error"`
	CTLSource   string `json:"ctl_source"`

	Version    string   `json:"tls_version"`
	Cipher     string   `json:"cipher"`
	SubjectDN  string   `json:"subject_dn"`
	SubjectCN  string   `json:"subject_cn"`
	SubjectOrg []string `json:"subject_org"`
	SubjectAN  []string `json:"subject_an"`
	IssuerDN   string   `json:"issuer_dn"`
	IssuerCN   string   `json:"issuer_cn"`
	IssuerOrg  []string `json:"issuer_org"`
	Serial     string   `json:"serial"`
	NotBefore  string   `json:"not_before"`
	NotAfter   string   `json:"not_after"`
	SelfSigned bool     `json:"self_signed"`
	SNI        string   `json:"sni"`
	JarmHash   string   `json:"jarm_hash"`
	JA3S       string   `json:"ja3s_hash"`
	// Certificate is the leaf in PEM, with tlsx -cert.
	Certificate string    `json:"certificate"`
	Fingerprint *tlsxHash `json:"fingerprint_hash"`

	// tlsx v0.0.1's spelling.
	OldVersion     string    `json:"tls-version"`
	OldSubjectDN   string    `json:"subject-dn"`
	OldSubjectCN   string    `json:"subject-cn"`
	OldSubjectOrg  []string  `json:"subject-org"`
	OldSubjectAN   []string  `json:"subject-an"`
	OldIssuerDN    string    `json:"issuer-dn"`
	OldIssuerCN    string    `json:"issuer-cn"`
	OldIssuerOrg   []string  `json:"issuer-org"`
	OldNotBefore   string    `json:"not-before"`
	OldNotAfter    string    `json:"not-after"`
	OldSelfSigned  bool      `json:"self-signed"`
	OldFingerprint *tlsxHash `json:"fingerprint-hash"`
}

// tlsxHash is tlsx's fingerprint_hash (of the DER certificate).
type tlsxHash struct {
	SHA256 string `json:"sha256"`
}

// evidence reads the certificate's fields (or, with tlsx -cert, the
// certificate itself), the version, cipher, jarm and ja3s into a TLS
// probe's evidence; nil when there is none.
func (x *tlsxResponse) evidence() *TLS {
	t := &TLS{}
	if blk, _ := pem.Decode([]byte(x.Certificate)); blk != nil {
		if c, err := certTLS(blk.Bytes); err == nil {
			t = c
		}
	}
	subjectDN, subjectCN := firstNonEmpty(x.SubjectDN, x.OldSubjectDN), firstNonEmpty(x.SubjectCN, x.OldSubjectCN)
	if t.Subject == nil && (subjectDN != "" || subjectCN != "") {
		t.Subject = tlsxDN(subjectDN, subjectCN, firstList(x.SubjectOrg, x.OldSubjectOrg))
	}
	issuerDN, issuerCN := firstNonEmpty(x.IssuerDN, x.OldIssuerDN), firstNonEmpty(x.IssuerCN, x.OldIssuerCN)
	if t.Issuer == nil && (issuerDN != "" || issuerCN != "") {
		t.Issuer = tlsxDN(issuerDN, issuerCN, firstList(x.IssuerOrg, x.OldIssuerOrg))
	}
	if len(t.SANs) == 0 {
		t.SANs = firstList(x.SubjectAN, x.OldSubjectAN)
	}
	if t.Serial == "" && x.Serial != "" {
		t.Serial = colonHexSerial(x.Serial)
	}
	for _, f := range []*tlsxHash{x.Fingerprint, x.OldFingerprint} {
		if t.SHA256 == "" && f != nil && isHex(strings.ToLower(f.SHA256), 64) {
			t.SHA256 = strings.ToLower(f.SHA256)
		}
	}
	if t.NotBefore == "" {
		t.NotBefore = rfc3339(firstNonEmpty(x.NotBefore, x.OldNotBefore))
	}
	if t.NotAfter == "" {
		t.NotAfter = rfc3339(firstNonEmpty(x.NotAfter, x.OldNotAfter))
	}
	t.SelfSigned = t.SelfSigned || x.SelfSigned || x.OldSelfSigned
	t.Version, t.Cipher = tlsVersionText(firstNonEmpty(x.Version, x.OldVersion)), x.Cipher
	t.JARM, t.JA3S = x.JarmHash, x.JA3S
	if t.empty() {
		return nil
	}
	return t
}

func firstList(l ...[]string) []string {
	for _, v := range l {
		if len(v) > 0 {
			return v
		}
	}
	return nil
}

// TLSX reads ProjectDiscovery tlsx's JSON lines (`tlsx -json`, with or
// without -cert, -jarm, -ja3s, -tls-version, -cipher): each line is one
// service observation on the address and port tlsx connected to, with
// one TLS probe (docs/ingest-enrich.md says what is kept).
func TLSX(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("tlsx")
	return opt.nonBlankLines(r, "tlsx", bad, func(n int, line []byte) error {
		var x tlsxResponse
		if err := scanUnmarshal(line, &x); err != nil {
			bad(LineError{n, fmt.Errorf("json: %w", err)})
			return nil
		}
		switch {
		case x.CTLSource != "":
			opt.skip(n, "tlsx certificate transparency entry (no service)")
			return nil
		case x.Host == "" && x.IP == "" || x.Port == nil:
			bad(LineError{n, errors.New(`not a tlsx result: want "host" or "ip", and "port"`)})
			return nil
		case x.ProbeStatus != nil && !*x.ProbeStatus:
			opt.skip(n, "tlsx probe failed")
			return nil
		}
		o, err := x.observation(src, opt)
		return emitBuilt(n, o, err, emit, bad)
	})
}

func (x *tlsxResponse) observation(src string, opt Options) (Observation, error) {
	ip, host, err := scanAddress(x.IP, x.Host)
	if err != nil {
		return Observation{}, err
	}
	port, err := scanPort(x.Port)
	if err != nil {
		return Observation{}, err
	}
	t := x.evidence()
	if t == nil {
		return Observation{}, errors.New("no version, cipher or certificate to keep")
	}
	o := Observation{Type: TypeService, IP: ip, Source: src, ObservedAt: opt.when(scanTime(x.Timestamp)),
		Service: &Service{Port: port, Transport: "tcp", Probes: []Probe{{Name: "tlsx", TLS: t}}}}
	o.Hostnames = hostNames(host, x.SNI)
	return o, nil
}

// scanAddress returns the address a ProjectDiscovery tool connected to:
// ip, else host when it is an address; and host when it is a name.
func scanAddress(ip, host string) (addr, name string, err error) {
	host = strings.Trim(strings.TrimSpace(host), "[]")
	if _, err := netip.ParseAddr(host); err != nil {
		name = host
	}
	for _, s := range []string{ip, host} {
		s = strings.Trim(strings.TrimSpace(s), "[]")
		a, err := netip.ParseAddr(s)
		if err != nil && strings.HasSuffix(s, ".") {
			// an address written as a fully qualified name, with the root's
			// dot (nuclei's "ip":"10.10.10.10." of a name it resolved:
			// DefectDojo's nuclei/issue_9201.json)
			a, err = netip.ParseAddr(strings.TrimSuffix(s, "."))
		}
		if err == nil {
			return a.Unmap().String(), name, nil
		}
	}
	if ip != "" {
		return "", name, fmt.Errorf("ip: not an IP address: %q", ip)
	}
	return "", name, fmt.Errorf("host: not an IP address: %q (and no ip)", host)
}

// scanPort reads a port given as a JSON number or string.
// scanIPPort reads a record's address and port members.
func scanIPPort(ip string, port any) (netip.Addr, int, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(ip))
	if err != nil {
		return a, 0, fmt.Errorf("ip: not an IP address: %q", ip)
	}
	p, err := scanPort(port)
	return a, p, err
}

func scanPort(v any) (int, error) {
	var s string
	switch p := v.(type) {
	case string:
		s = strings.TrimSpace(p)
	case float64:
		s = strconv.FormatFloat(p, 'f', -1, 64)
	case nil:
		return 0, errors.New("port: missing")
	default:
		return 0, fmt.Errorf("port: not a number: %v", v)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("port: must be 1..65535, got %q", s)
	}
	return n, nil
}
