package ingest

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Helpers the TLS and SSH auditors' adapters (testssl, sslyze, sslscan,
// ssh-audit) share: their JSON read as a stream (so a cut file keeps the
// records before the cut), their targets' addresses, and certificate
// fields given as text.

// auditJSON reads the JSON documents of r one after the other (one
// pretty-printed document, several, or JSON lines) and passes each record
// to each with the line it starts on: the elements of a top-level array,
// the elements of the arrays members names in a top-level object (the
// object's other members go to header, in order, before the records that
// follow them), or the object itself when it has none of them. A
// document that is cut or malformed is reported with the line where
// reading stopped; the records read before it are kept (jsonWalk).
func auditJSON(r io.Reader, what string, members []string, bad func(LineError), header func(key string, raw json.RawMessage), each func(line int, rec json.RawMessage) error) error {
	data, err := readJSONFeed(r, what)
	if err != nil {
		return err
	}
	return jsonWalk{what: what, wrappers: members, header: header}.walk(data, 1, bad, func(line int, rec json.RawMessage, _ bool) error {
		return each(line, rec)
	})
}

// auditHost reads the host an auditor names as its target: an address
// (IPv6 in brackets or not), or a name. "localhost" is the loopback
// address (RFC 6761 reserves the name for it; an auditor run against it
// connected there), and not kept as a host name; any other name has no
// address to file the service under.
func auditHost(host string) (ip, name string) {
	host = strings.TrimSpace(host)
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return a.Unmap().String(), ""
	}
	if h := strings.TrimSuffix(strings.ToLower(host), "."); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return "127.0.0.1", ""
	}
	return "", host
}

// noAddress is the reason a record whose target is a name without an
// address is skipped.
func noAddress(tool, name string) string {
	return fmt.Sprintf("%s target %q is a host name with no IP address: the record has no address to file the service under", tool, name)
}

// auditPort reads a port given as a JSON number or a string.
func auditPort(v any) (int, error) {
	if n, ok := v.(json.Number); ok {
		v = string(n)
	}
	return scanPort(v)
}

// certFromPEM reads the first certificate of a PEM text (line breaks or
// spaces between its base64 lines, as testssl writes it on one line). ok
// is false when there is no PEM block; an error when the block is not a
// certificate.
func certFromPEM(s string) (t *TLS, ok bool, err error) {
	s = strings.TrimSpace(s)
	const begin, end = "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----"
	i := strings.Index(s, begin)
	if i < 0 {
		return nil, false, nil
	}
	body := s[i+len(begin):]
	j := strings.Index(body, end)
	if j < 0 {
		return nil, true, errors.New("PEM certificate without its END line (cut?)")
	}
	b64 := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, body[:j])
	if b64 == "" {
		return nil, false, nil // an empty block: nothing to read
	}
	der, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		if blk, _ := pem.Decode([]byte(s[i:])); blk != nil {
			der, err = blk.Bytes, nil
		}
	}
	if err != nil {
		return nil, true, fmt.Errorf("PEM certificate: base64: %w", err)
	}
	t, err = certTLS(der)
	if err != nil {
		return nil, true, fmt.Errorf("PEM certificate: %w", err)
	}
	return t, true, nil
}

// fillTLS fills the fields of t left empty with listed's (the fields an
// auditor lists beside, or instead of, the certificate it read).
func fillTLS(t, listed *TLS) *TLS {
	if t == nil {
		return listed
	}
	if listed == nil {
		return t
	}
	if t.Subject == nil {
		t.Subject = listed.Subject
	}
	if t.Issuer == nil {
		t.Issuer = listed.Issuer
	}
	if len(t.SANs) == 0 {
		t.SANs = listed.SANs
	}
	t.Serial = firstNonEmpty(t.Serial, listed.Serial)
	t.SHA256 = firstNonEmpty(t.SHA256, listed.SHA256)
	t.NotBefore = firstNonEmpty(t.NotBefore, listed.NotBefore)
	t.NotAfter = firstNonEmpty(t.NotAfter, listed.NotAfter)
	t.SelfSigned = t.SelfSigned || listed.SelfSigned
	t.Version = firstNonEmpty(t.Version, listed.Version)
	t.Cipher = firstNonEmpty(t.Cipher, listed.Cipher)
	return t
}

// hexFingerprint reads a SHA-256 fingerprint written as hex (with or
// without colons, any case) or base64 (sslyze 5 on): lower-case hex.
func hexFingerprint(s string) (string, error) {
	s = strings.TrimSpace(s)
	if h := strings.ToLower(strings.ReplaceAll(s, ":", "")); isHex(h, 64) {
		return h, nil
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) == 32 {
		return hex.EncodeToString(b), nil
	}
	return "", fmt.Errorf("not a SHA-256 fingerprint (64 hex digits or 32 bytes in base64): %q", s)
}

// serialText reads a serial number written in decimal (dec true) or hex
// (colons allowed): lower-case hex, as evidence keeps serials.
func serialText(s string, dec bool) (string, error) {
	s = strings.TrimSpace(s)
	if dec {
		n, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return "", fmt.Errorf("not a decimal serial number: %q", s)
		}
		return hexSerial(n), nil
	}
	h := strings.ToLower(strings.ReplaceAll(s, ":", ""))
	h = strings.TrimPrefix(h, "0x")
	if h == "" || !isHex(h, len(h)) {
		return "", fmt.Errorf("not a hex serial number: %q", s)
	}
	if h = strings.TrimLeft(h, "0"); h == "" {
		h = "0"
	}
	return h, nil
}

// jsonText reads a JSON string or number as its text ("" for null or
// absent).
func jsonText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	if _, err := strconv.ParseFloat(string(raw), 64); err != nil && !isBigInteger(string(raw)) {
		return "", fmt.Errorf("not a string or number: %s", raw)
	}
	return string(raw), nil
}

func isBigInteger(s string) bool {
	_, ok := new(big.Int).SetString(s, 10)
	return ok
}

// sanList splits a list of subject alternative names ("DNS:a, DNS:b",
// "a b", "IP Address:192.0.2.1") into the names.
func sanList(s string, sep string) []string {
	var out []string
	for _, f := range strings.Split(s, sep) {
		f = strings.TrimSpace(f)
		for _, p := range []string{"DNS:", "IP Address:", "IP:", "DNS Name:"} {
			if rest, ok := strings.CutPrefix(f, p); ok {
				f = strings.TrimSpace(rest)
				break
			}
		}
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// auditNames are the host names among names (hostNames), without
// localhost's.
func auditNames(names ...string) []string {
	return slices.DeleteFunc(hostNames(names...), func(h string) bool {
		h = strings.ToLower(h)
		return h == "localhost" || strings.HasSuffix(h, ".localhost")
	})
}
