package ingest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/netip"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/netintel/netintel/internal/ipmodel"
)

// Helpers the scanner adapters (scan_*.go) share: reading a raw HTTP
// response, a DER certificate, scanner time stamps and escapes.

// scanJSON reads scanner JSON as encoding/json would (names in any case,
// duplicates and bytes that are not UTF-8 allowed), at json/v2's speed.
var scanJSON = jsonv2.JoinOptions(jsonv2.MatchCaseInsensitiveNames(true), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))

func scanUnmarshal(data []byte, v any) error { return jsonv2.Unmarshal(data, v, scanJSON) }

// errStop ends the reading of an input after an error already reported
// (a syntax error that leaves nothing after it to be found again).
var errStop = errors.New("stop reading")

// skip reports a record an adapter read and deliberately did not store
// (not malformed: a zgrab2 module that failed, a closed port).
func (o Options) skip(line int, reason string) {
	if o.Skipped != nil {
		o.Skipped(line, reason)
	}
}

// capConfidence is conf, lowered to the feed's --confidence where one is
// given and is lower (a flow's protocol is never surer than its source).
func (o Options) capConfidence(conf float64) float64 {
	if o.Confidence > 0 && conf > o.Confidence {
		return o.Confidence
	}
	return conf
}

// settled reports a record a reader refused (err: malformed, to bad) or
// left out on purpose (skip: Options.Skipped), and says whether it was
// either; the caller goes on to the next record when it was.
func (o Options) settled(line int, skip string, err error, bad func(LineError)) bool {
	switch {
	case err != nil:
		bad(LineError{line, err})
	case skip != "":
		o.skip(line, skip)
	default:
		return false
	}
	return true
}

// eachCSVRecord calls fn with each record of a scanner's CSV export after
// its header and the record's line, until the end of cr or fn's error. A
// record that does not parse is reported to bad (as "<what> csv: ...")
// and skipped; a quote gone wrong ends the reading, since the rest of the
// file cannot be told apart. Another read error is returned.
func eachCSVRecord(cr *csv.Reader, what string, bad func(LineError), fn func(rec []string, line int) error) error {
	for {
		rec, err := cr.Read()
		line, _ := cr.FieldPos(0)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return fmt.Errorf("read %s: %w", what, err)
			}
			bad(LineError{pe.StartLine, fmt.Errorf("%s csv: %w", what, pe.Err)})
			if pe.Err == csv.ErrQuote || pe.Err == csv.ErrBareQuote {
				return nil
			}
			continue
		}
		if err := fn(rec, line); err != nil {
			return err
		}
	}
}

// csvColumns maps a CSV export's header names (trimmed, a byte order mark
// dropped, lower case) to their columns; a name given twice keeps its
// first column.
type csvColumns map[string]int

func newCSVColumns(header []string) csvColumns {
	col := csvColumns{}
	for i, h := range header {
		k := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if _, dup := col[k]; !dup && k != "" {
			col[k] = i
		}
	}
	return col
}

// first is the column of the first of names the header has (any case),
// or -1.
func (c csvColumns) first(names ...string) int {
	for _, n := range names {
		if i, ok := c[strings.ToLower(n)]; ok {
			return i
		}
	}
	return -1
}

// when returns the time a scanner record gives, or the options' time, or
// now, formatted for observed_at.
func (o Options) when(t time.Time) string {
	if t.IsZero() {
		t = o.ObservedAt
	}
	if t.IsZero() {
		t = time.Now()
	}
	return ipmodel.FormatTime(t)
}

// unixTime reads decimal seconds since the epoch ("1700000000" or
// "1700000000.25"); zero when s is not one.
func unixTime(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || f > 1e11 {
		return time.Time{}
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)).UTC()
}

// scanTime reads a scanner's time stamp: RFC 3339, RFC 3339 without a
// zone (UTC, as Shodan writes it), or Unix seconds.
func scanTime(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t
	}
	// a space for the T, with a zone ("2024-01-04 00:43:10Z", as
	// Shadowserver's Reports API writes its timestamps; "+00", "+00:00")
	for _, layout := range []string{"2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z07", "2006-01-02T15:04:05.999999999Z07"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999 -0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return unixTime(s)
}

// parseHTTPResponse reads a raw HTTP/1.x response as scanners record it:
// a status line, header lines (CRLF or bare LF; a response cut before the
// blank line keeps the headers it has) and the body. ok is false when raw
// does not start with an HTTP status line.
func parseHTTPResponse(raw []byte) (r *Response, ok bool) {
	line, rest, _ := cutLine(raw)
	proto, status, reason, ok := parseStatusLine(string(line))
	if !ok {
		return nil, false
	}
	r = &Response{Protocol: proto, Status: status, Reason: reason}
	for len(rest) > 0 {
		var l []byte
		var complete bool
		l, rest, complete = cutLine(rest)
		if len(l) == 0 {
			if complete {
				if len(rest) > 0 {
					r.Body = BytesBody(rest)
				}
				return r, true
			}
			break
		}
		if (l[0] == ' ' || l[0] == '\t') && len(r.Headers) > 0 {
			// An obsolete folded continuation of the previous header.
			h := &r.Headers[len(r.Headers)-1]
			h.Value += " " + strings.TrimSpace(latin1(l))
			continue
		}
		h, found := headerLine(l)
		if !found {
			if !complete {
				break // the cut end of a banner
			}
			continue
		}
		r.Headers = append(r.Headers, h)
	}
	return r, true
}

// headerLine reads one "Name: value" header line, its name and value
// trimmed and read as latin1 where they are not UTF-8; false when the
// line has no colon.
func headerLine(l []byte) (Header, bool) {
	name, value, found := bytes.Cut(l, []byte{':'})
	if !found {
		return Header{}, false
	}
	return Header{Name: strings.TrimSpace(latin1(name)), Value: strings.TrimSpace(latin1(value))}, true
}

// cutLine splits b at its first line end (LF, with an optional CR before
// it); complete says a line end was found.
func cutLine(b []byte) (line, rest []byte, complete bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return bytes.TrimSuffix(b, []byte{'\r'}), nil, false
	}
	return bytes.TrimSuffix(b[:i], []byte{'\r'}), b[i+1:], true
}

// parseStatusLine reads "HTTP/1.1 200 OK" (the reason may be missing).
func parseStatusLine(s string) (proto string, status int, reason string, ok bool) {
	proto, rest, found := strings.Cut(s, " ")
	if !found || !strings.HasPrefix(proto, "HTTP/") || len(proto) > 16 {
		return "", 0, "", false
	}
	code, reason, _ := strings.Cut(strings.TrimLeft(rest, " "), " ")
	if len(code) != 3 {
		return "", 0, "", false
	}
	status, err := strconv.Atoi(code)
	if err != nil || status < 100 {
		return "", 0, "", false
	}
	return proto, status, strings.TrimSpace(reason), true
}

// latin1 returns b as text: b itself when it is UTF-8, otherwise each
// byte as the character of that code (ISO 8859-1), as HTTP header bytes
// outside ASCII are read.
func latin1(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for _, c := range b {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

// runesToBytes undoes a JSON escape of bytes as \u00XX characters
// (masscan's -oJ): every character below 256 becomes that byte. ok is
// false when s has a character above 255 (then it was not such an escape).
func runesToBytes(s string) ([]byte, bool) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xFF {
			return nil, false
		}
		out = append(out, byte(r))
	}
	return out, true
}

// unescapeHex decodes \xHH escapes (masscan's -oL, nmap's banner script);
// any other backslash is kept as it is.
func unescapeHex(s string) []byte {
	if !strings.Contains(s, `\x`) {
		return []byte(s)
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) && s[i+1] == 'x' {
			if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				out = append(out, byte(v))
				i += 3
				continue
			}
		}
		out = append(out, s[i])
	}
	return out
}

// certTLS reads a DER certificate into a TLS probe's certificate fields.
func certTLS(der []byte) (*TLS, error) {
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(der)
	t := &TLS{
		Subject:   pkixDN(c.Subject.String(), c.Subject.CommonName, c.Subject.Organization, c.Subject.OrganizationalUnit, c.Subject.Country, c.Subject.Province, c.Subject.Locality),
		Issuer:    pkixDN(c.Issuer.String(), c.Issuer.CommonName, c.Issuer.Organization, c.Issuer.OrganizationalUnit, c.Issuer.Country, c.Issuer.Province, c.Issuer.Locality),
		Serial:    hexSerial(c.SerialNumber),
		SHA256:    hex.EncodeToString(sum[:]),
		NotBefore: c.NotBefore.UTC().Format(time.RFC3339),
		NotAfter:  c.NotAfter.UTC().Format(time.RFC3339),
	}
	t.SANs = append(t.SANs, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		t.SANs = append(t.SANs, ip.String())
	}
	// Self-signed by its names and key identifiers: verifying the
	// signature would cost more than the rest of a record's decoding.
	if bytes.Equal(c.RawSubject, c.RawIssuer) && (len(c.AuthorityKeyId) == 0 || bytes.Equal(c.AuthorityKeyId, c.SubjectKeyId)) {
		t.SelfSigned = true
	}
	return t, nil
}

func pkixDN(whole, cn string, o, ou, c, st, l []string) *DN {
	d := &DN{DN: whole, CN: cn, O: o, OU: ou, C: first(c), ST: first(st), L: first(l)}
	if d.DN == "" && d.CN == "" && len(d.O) == 0 && len(d.OU) == 0 && d.C == "" && d.ST == "" && d.L == "" {
		return nil
	}
	return d
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// hexSerial writes a certificate serial number as lower-case hex, the
// form evidence keeps whatever the scanner wrote.
func hexSerial(n *big.Int) string {
	if n == nil {
		return ""
	}
	if n.Sign() < 0 {
		return "-" + new(big.Int).Neg(n).Text(16)
	}
	return n.Text(16)
}

// colonHexSerial writes a serial given as hex, colon-separated or not
// ("0B:58:BC", httpx's, tlsx's, Suricata's, ONYPHE's), as evidence keeps
// serials: lower-case hex without leading zeros.
func colonHexSerial(s string) string {
	return strings.TrimLeft(strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), ":", "")), "0")
}

// scanClaim is the owner a scanner's record names: its organisation, with
// the AS number when it gives one ("AS15169" or "15169"), as a claim of
// confidence 0.5 by source; none without an organisation.
func (o Options) scanClaim(source, org, asn string) []Claim {
	if org = strings.TrimSpace(org); org == "" {
		return nil
	}
	c := Claim{OrgName: org, SignalSource: source, SignalConfidence: o.conf(0.5)}
	if v, err := strconv.ParseInt(strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(asn)), "AS"), 10, 64); err == nil && v > 0 && v < 1<<32 {
		c.ASN = v
	}
	return []Claim{c}
}

// hostNames are the names among names (a record's host, reverse name, SNI,
// ...): trimmed, without a final dot, addresses and repeats left out.
func hostNames(names ...string) []string {
	var out []string
	for _, h := range names {
		h = strings.TrimSuffix(strings.TrimSpace(h), ".")
		if h == "" || slices.Contains(out, h) {
			continue
		}
		if _, err := netip.ParseAddr(h); err != nil {
			out = append(out, h)
		}
	}
	return out
}

// decimalSerial converts a decimal serial number (zgrab2, Shodan) to hex;
// a string that is not decimal is kept as it is.
func decimalSerial(s string) string {
	n, ok := new(big.Int).SetString(strings.TrimSpace(s), 10)
	if !ok {
		return s
	}
	return hexSerial(n)
}

// cipherName names a cipher suite code ("0xc013" or 49171); unknown codes
// keep their hex form.
func cipherName(code uint64) string {
	if code > 0xFFFF {
		return ""
	}
	if name, ok := ianaCiphers[uint16(code)]; ok {
		return name
	}
	name := tls.CipherSuiteName(uint16(code))
	if strings.HasPrefix(name, "0x") {
		return strings.ToLower(name)
	}
	return name
}

// ianaCiphers are IANA's names of the suites crypto/tls does not know
// that appliances and their clients still negotiate (DHE, the NULL
// suites, CBC with SHA-2), so a probe says TLS_DHE_RSA_WITH_AES_256_CBC_SHA
// where it said 0x0039 (AnyConnect's DTLS, old IVE and NetScreen answers).
var ianaCiphers = map[uint16]string{
	0x0001: "TLS_RSA_WITH_NULL_MD5", 0x0002: "TLS_RSA_WITH_NULL_SHA", 0x0004: "TLS_RSA_WITH_RC4_128_MD5",
	0x0013: "TLS_DHE_DSS_WITH_3DES_EDE_CBC_SHA", 0x0016: "TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA",
	0x0032: "TLS_DHE_DSS_WITH_AES_128_CBC_SHA", 0x0033: "TLS_DHE_RSA_WITH_AES_128_CBC_SHA",
	0x0038: "TLS_DHE_DSS_WITH_AES_256_CBC_SHA", 0x0039: "TLS_DHE_RSA_WITH_AES_256_CBC_SHA",
	0x003b: "TLS_RSA_WITH_NULL_SHA256", 0x003d: "TLS_RSA_WITH_AES_256_CBC_SHA256",
	0x0041: "TLS_RSA_WITH_CAMELLIA_128_CBC_SHA", 0x0045: "TLS_DHE_RSA_WITH_CAMELLIA_128_CBC_SHA",
	0x0067: "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256", 0x006b: "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256",
	0x0084: "TLS_RSA_WITH_CAMELLIA_256_CBC_SHA", 0x0088: "TLS_DHE_RSA_WITH_CAMELLIA_256_CBC_SHA",
	0x0096: "TLS_RSA_WITH_SEED_CBC_SHA", 0x009d: "TLS_RSA_WITH_AES_256_GCM_SHA384",
	0x009e: "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", 0x009f: "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384",
	0xc024: "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", 0xc028: "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384",
	0xccaa: "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
	// the pre-shared-key suites (RFC 4279, 5487, 7905) ocserv's DTLS negotiates with OpenConnect
	// from a key derived of the CSTP session (its dtls-psk, on by default since 0.11.5)
	0x008c: "TLS_PSK_WITH_AES_128_CBC_SHA", 0x008d: "TLS_PSK_WITH_AES_256_CBC_SHA",
	0x00a8: "TLS_PSK_WITH_AES_128_GCM_SHA256", 0x00a9: "TLS_PSK_WITH_AES_256_GCM_SHA384",
	0x00ae: "TLS_PSK_WITH_AES_128_CBC_SHA256", 0x00af: "TLS_PSK_WITH_AES_256_CBC_SHA384",
	0xccab: "TLS_PSK_WITH_CHACHA20_POLY1305_SHA256",
}

// canonicalHeader restores a header name a scanner folded to lower case
// with underscores ("content_type" -> "Content-Type").
func canonicalHeader(s string) string {
	if c, ok := headerCasing[s]; ok {
		return c
	}
	return textproto.CanonicalMIMEHeaderKey(strings.ReplaceAll(s, "_", "-"))
}

// headerCasing are the names whose usual spelling the canonical form
// misses.
var headerCasing = map[string]string{
	"www_authenticate": "WWW-Authenticate", "etag": "ETag", "p3p": "P3P", "content_md5": "Content-MD5",
	"x_ua_compatible": "X-UA-Compatible", "x_xss_protection": "X-XSS-Protection", "x_webkit_csp": "X-WebKit-CSP",
	"te": "TE", "dnt": "DNT", "x_dns_prefetch_control": "X-DNS-Prefetch-Control",
}

// peekFirstByte returns r with the first byte that is not white space or
// a byte-order mark (0 when there is none) peeked: how the adapters that
// read two forms (JSON or text, XML or CSV) tell which they were given.
func peekFirstByte(r io.Reader, what string) (*bufio.Reader, byte, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 512; ; n *= 2 {
		b, err := br.Peek(n)
		t := bytes.TrimLeft(b, " \t\r\n\ufeff")
		if len(t) > 0 || err != nil || n >= br.Size() {
			if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
				return nil, 0, fmt.Errorf("read %s: %w", what, err)
			}
			if len(t) == 0 {
				return br, 0, nil
			}
			return br, t[0], nil
		}
	}
}

// tlsVersionText writes a TLS or SSL protocol version as the probes do
// ("TLSv1.2", "SSLv3") from any of the spellings the tools write:
// sslyze's "TLS_1_2", tlsx's "tls12", Zeek's "TLSv12", Censys's
// "TLSv1_2", testssl.sh's "TLS1.2" and "TLSv1", openconnect's "TLS1.2", a
// browser's "TLS 1.2", "SSL_3_0" and "ssl30". Any other value (a DTLS or
// QUIC version, a tool's own word) is returned as it is.
func tlsVersionText(v string) string {
	k := strings.NewReplacer(" ", "", "_", "", ".", "").Replace(strings.ToUpper(v))
	if strings.HasPrefix(k, "TLSV") || strings.HasPrefix(k, "SSLV") {
		k = k[:3] + k[4:]
	}
	switch k {
	case "SSL2", "SSL20":
		return "SSLv2"
	case "SSL3", "SSL30":
		return "SSLv3"
	case "TLS1", "TLS10":
		return "TLSv1.0"
	case "TLS11":
		return "TLSv1.1"
	case "TLS12":
		return "TLSv1.2"
	case "TLS13":
		return "TLSv1.3"
	}
	return v
}

// credentialHeaders are the request headers that carry the client's
// credentials (a browser's session, a tester's token): not evidence of
// the server, and secrets netintel must not store.
var credentialHeaders = map[string]bool{"cookie": true, "authorization": true, "proxy-authorization": true,
	"x-api-key": true, "x-auth-token": true, "x-csrf-token": true, "x-xsrf-token": true}

// withoutCredentials drops what a recorded request carries of its
// client's credentials: the credential headers and the body (a login
// form's password). What the server answered is kept whole.
func withoutCredentials(q *Request) {
	if q == nil {
		return
	}
	q.Headers = slices.DeleteFunc(q.Headers, func(h Header) bool { return credentialHeaders[strings.ToLower(strings.TrimSpace(h.Name))] })
	q.Body = nil
}
