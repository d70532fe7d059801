package ingest

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeCanonical decodes data into o, which must be zero, if data is an
// observation in the plain form Encode writes: one JSON object, names
// spelled exactly as the format's, each at most once, no nulls, integers
// without fraction or exponent, strings of valid UTF-8 with at most the
// usual escapes. It reports whether it did; on false o is left in an
// unspecified state and the caller decodes data with a general JSON
// decoder, which also gives the error for data that is not valid.
//
// It exists for the enrich worker, which decodes every observation it
// enriches: a general decoder spends most of its time on reflection and
// on allocating each string, where this one makes one string of data and
// slices every unescaped value from it. Where it says true, the result is
// the one the worker's general decoder gives (FuzzDecodeCanonical in
// package enrich checks this); anything unusual it leaves to that
// decoder rather than risk a different reading.
func DecodeCanonical(data []byte, o *Observation) bool {
	d := canonDecoder{src: string(data)}
	d.skipSpace()
	if !object(&d, readObservation, o) {
		return false
	}
	d.skipSpace()
	return d.pos == len(d.src)
}

// canonDecoder reads one observation from src; every method returns false
// as soon as the input is anything it does not handle.
type canonDecoder struct {
	src string
	pos int
	buf []byte // where escaped strings are unescaped
}

// member reads the value of the member named name into v; false means the
// name is unknown or the value is not one it takes.
type member[T any] func(d *canonDecoder, name string, v *T) bool

func (d *canonDecoder) skipSpace() {
	for d.pos < len(d.src) {
		switch d.src[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// next skips white space and reports whether the next byte is c,
// consuming it if so.
func (d *canonDecoder) next(c byte) bool {
	d.skipSpace()
	if d.pos < len(d.src) && d.src[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

// members reads a JSON object, handing each member's name to value, which
// reads the value that follows.
func (d *canonDecoder) members(value func(name string) bool) bool {
	if !d.next('{') {
		return false
	}
	if d.next('}') {
		return true
	}
	for {
		d.skipSpace()
		name, ok := d.string()
		if !ok || !d.next(':') {
			return false
		}
		d.skipSpace()
		if !value(name) {
			return false
		}
		if d.next('}') {
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

// object reads a JSON object whose members read hands each name to; a
// name seen twice in one object is refused (the general decoder keeps the
// last, and merges objects, which is not worth copying here).
func object[T any](d *canonDecoder, read member[T], v *T) bool {
	var seenArr [12]string
	seen := seenArr[:0]
	return d.members(func(name string) bool {
		if slices.Contains(seen, name) {
			return false
		}
		seen = append(seen, name)
		return read(d, name, v)
	})
}

// array reads a JSON array, calling elem for each element.
func (d *canonDecoder) array(elem func() bool) bool {
	if !d.next('[') {
		return false
	}
	if d.next(']') {
		return true
	}
	for {
		d.skipSpace()
		if !elem() {
			return false
		}
		if d.next(']') {
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

// string reads a JSON string at pos. Without escapes the result is a slice
// of src; control characters, invalid UTF-8 and escaped surrogates are
// refused.
func (d *canonDecoder) string() (string, bool) {
	if d.pos >= len(d.src) || d.src[d.pos] != '"' {
		return "", false
	}
	start := d.pos + 1
	ascii := true
	i := start
	for ; i < len(d.src); i++ {
		c := d.src[i]
		if c == '"' {
			break
		}
		if c == '\\' {
			return d.escaped(start)
		}
		if c < 0x20 {
			return "", false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if i == len(d.src) {
		return "", false
	}
	s := d.src[start:i]
	if !ascii && !utf8.ValidString(s) {
		return "", false
	}
	d.pos = i + 1
	return s, true
}

// escaped reads the string starting at start that has an escape.
func (d *canonDecoder) escaped(start int) (string, bool) {
	b := d.buf[:0]
	defer func() { d.buf = b }()
	for i := start; i < len(d.src); {
		c := d.src[i]
		switch {
		case c == '"':
			if !utf8.Valid(b) {
				return "", false
			}
			d.pos = i + 1
			return string(b), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b = append(b, c)
			i++
			continue
		}
		if i+1 >= len(d.src) {
			return "", false
		}
		switch e := d.src[i+1]; e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			if i+6 > len(d.src) {
				return "", false
			}
			r, err := strconv.ParseUint(d.src[i+2:i+6], 16, 16)
			if err != nil || utf16.IsSurrogate(rune(r)) {
				return "", false
			}
			b = utf8.AppendRune(b, rune(r))
			i += 6
			continue
		default:
			return "", false
		}
		i += 2
	}
	return "", false
}

// number returns the JSON number at pos, checked against JSON's grammar.
func (d *canonDecoder) number() (s string, integer, ok bool) {
	start, i := d.pos, d.pos
	digits := func() int {
		n := 0
		for i < len(d.src) && d.src[i] >= '0' && d.src[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(d.src) && d.src[i] == '-' {
		i++
	}
	lead := i
	n := digits()
	if n == 0 || (n > 1 && d.src[lead] == '0') {
		return "", false, false
	}
	integer = true
	if i < len(d.src) && d.src[i] == '.' {
		i++
		if digits() == 0 {
			return "", false, false
		}
		integer = false
	}
	if i < len(d.src) && (d.src[i] == 'e' || d.src[i] == 'E') {
		i++
		if i < len(d.src) && (d.src[i] == '+' || d.src[i] == '-') {
			i++
		}
		if digits() == 0 {
			return "", false, false
		}
		integer = false
	}
	d.pos = i
	return d.src[start:i], integer, true
}

// int64 reads an integer without fraction or exponent that fits in bits.
func (d *canonDecoder) int64(v *int64, bits int) bool {
	s, integer, ok := d.number()
	if !ok || !integer {
		return false
	}
	n, err := strconv.ParseInt(s, 10, bits)
	*v = n
	return err == nil
}

func (d *canonDecoder) int(v *int) bool {
	var n int64
	ok := d.int64(&n, strconv.IntSize)
	*v = int(n)
	return ok
}

func (d *canonDecoder) float(v *float64) bool {
	s, _, ok := d.number()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return false
	}
	*v = f
	return true
}

// bool reads true or false.
func (d *canonDecoder) bool(v *bool) bool {
	switch {
	case strings.HasPrefix(d.src[d.pos:], "true"):
		*v, d.pos = true, d.pos+4
	case strings.HasPrefix(d.src[d.pos:], "false"):
		*v, d.pos = false, d.pos+5
	default:
		return false
	}
	return true
}

func (d *canonDecoder) str(v *string) bool {
	s, ok := d.string()
	*v = s
	return ok
}

// strings reads an array of strings into a new slice (empty, not nil, for []).
func (d *canonDecoder) strings(v *[]string) bool {
	out := []string{}
	ok := d.array(func() bool {
		s, ok := d.string()
		out = append(out, s)
		return ok
	})
	*v = out
	return ok
}

func readObservation(d *canonDecoder, name string, o *Observation) bool {
	switch name {
	case "v":
		return d.int(&o.V)
	case "type":
		return d.str(&o.Type)
	case "ip":
		return d.str(&o.IP)
	case "network":
		return d.str(&o.Network)
	case "source":
		return d.str(&o.Source)
	case "observed_at":
		return d.str(&o.ObservedAt)
	case "listed_at":
		return d.str(&o.ListedAt)
	case "class":
		return d.str(&o.Class)
	case "hostnames":
		return d.strings(&o.Hostnames)
	case "claims":
		o.Claims = []Claim{}
		return d.array(func() bool {
			o.Claims = append(o.Claims, Claim{})
			return object(d, readClaim, &o.Claims[len(o.Claims)-1])
		})
	case "service":
		o.Service = &Service{}
		return object(d, readService, o.Service)
	case "signal":
		o.Signal = &Signal{}
		return object(d, readSignal, o.Signal)
	case "range":
		o.Range = &Range{}
		return object(d, readRange, o.Range)
	case "flow":
		o.Flow = &Flow{}
		return object(d, readFlow, o.Flow)
	}
	return false
}

func readClaim(d *canonDecoder, name string, c *Claim) bool {
	switch name {
	case "org_name":
		return d.str(&c.OrgName)
	case "signal_source":
		return d.str(&c.SignalSource)
	case "signal_confidence":
		return d.float(&c.SignalConfidence)
	case "asn":
		return d.int64(&c.ASN, 64)
	}
	return false
}

func readService(d *canonDecoder, name string, s *Service) bool {
	switch name {
	case "port":
		return d.int(&s.Port)
	case "transport":
		return d.str(&s.Transport)
	case "protocol_family":
		return d.str(&s.ProtocolFamily)
	case "probes":
		s.Probes = []Probe{}
		return d.array(func() bool {
			s.Probes = append(s.Probes, Probe{})
			return object(d, readProbe, &s.Probes[len(s.Probes)-1])
		})
	case "detected":
		s.Detected = &Detected{}
		return object(d, readDetected, s.Detected)
	}
	// Version 1's http, tls and banner never reach the stream: Normalize
	// turns them into probes before the publisher writes.
	return false
}

func readProbe(d *canonDecoder, name string, p *Probe) bool {
	switch name {
	case "name":
		return d.str(&p.Name)
	case "request":
		p.Request = &Request{}
		return object(d, readRequest, p.Request)
	case "response":
		p.Response = &Response{}
		return object(d, readResponse, p.Response)
	case "tls":
		p.TLS = &TLS{}
		return object(d, readTLS, p.TLS)
	case "banner":
		p.Banner = &Banner{}
		return object(d, readBanner, p.Banner)
	}
	return false
}

func (d *canonDecoder) headers(v *[]Header) bool {
	out := []Header{}
	ok := d.array(func() bool {
		out = append(out, Header{})
		return object(d, readHeader, &out[len(out)-1])
	})
	*v = out
	return ok
}

func readHeader(d *canonDecoder, name string, h *Header) bool {
	switch name {
	case "name":
		return d.str(&h.Name)
	case "value":
		return d.str(&h.Value)
	case "truncated":
		return d.bool(&h.Truncated)
	}
	return false
}

func readRequest(d *canonDecoder, name string, q *Request) bool {
	switch name {
	case "method":
		return d.str(&q.Method)
	case "path":
		return d.str(&q.Path)
	case "host":
		return d.str(&q.Host)
	case "headers":
		return d.headers((*[]Header)(&q.Headers))
	case "body":
		q.Body = &Body{}
		return object(d, readBody, q.Body)
	}
	return false
}

func readResponse(d *canonDecoder, name string, r *Response) bool {
	switch name {
	case "status":
		return d.int(&r.Status)
	case "reason":
		return d.str(&r.Reason)
	case "protocol":
		return d.str(&r.Protocol)
	case "headers":
		return d.headers((*[]Header)(&r.Headers))
	case "title":
		return d.str(&r.Title)
	case "body":
		r.Body = &Body{}
		return object(d, readBody, r.Body)
	}
	return false
}

func readBody(d *canonDecoder, name string, b *Body) bool {
	switch name {
	case "encoding":
		return d.str(&b.Encoding)
	case "data":
		return d.str(&b.Data)
	case "truncated":
		return d.bool(&b.Truncated)
	case "length":
		return d.int64(&b.Length, 64)
	case "sha256":
		return d.str(&b.SHA256)
	case "md5":
		return d.str(&b.MD5)
	case "mmh3":
		var n int64
		if !d.int64(&n, 32) {
			return false
		}
		m := int32(n)
		b.MMH3 = &m
		return true
	}
	return false
}

func readTLS(d *canonDecoder, name string, t *TLS) bool {
	switch name {
	case "version":
		return d.str(&t.Version)
	case "cipher":
		return d.str(&t.Cipher)
	case "subject":
		t.Subject = &DN{}
		return object(d, readDN, t.Subject)
	case "issuer":
		t.Issuer = &DN{}
		return object(d, readDN, t.Issuer)
	case "sans":
		return d.strings(&t.SANs)
	case "serial":
		return d.str(&t.Serial)
	case "sha256":
		return d.str(&t.SHA256)
	case "not_before":
		return d.str(&t.NotBefore)
	case "not_after":
		return d.str(&t.NotAfter)
	case "self_signed":
		return d.bool(&t.SelfSigned)
	case "jarm":
		return d.str(&t.JARM)
	case "ja3s":
		return d.str(&t.JA3S)
	case "ja4s":
		return d.str(&t.JA4S)
	}
	return false
}

func readDN(d *canonDecoder, name string, n *DN) bool {
	switch name {
	case "cn":
		return d.str(&n.CN)
	case "o":
		return d.strings(&n.O)
	case "ou":
		return d.strings(&n.OU)
	case "c":
		return d.str(&n.C)
	case "st":
		return d.str(&n.ST)
	case "l":
		return d.str(&n.L)
	case "email":
		return d.str(&n.Email)
	case "dn":
		return d.str(&n.DN)
	}
	return false
}

func readBanner(d *canonDecoder, name string, b *Banner) bool {
	switch name {
	case "sent":
		b.Sent = &Body{}
		return object(d, readBody, b.Sent)
	case "received":
		b.Received = &Body{}
		return object(d, readBody, b.Received)
	}
	return false
}

func readDetected(d *canonDecoder, name string, t *Detected) bool {
	switch name {
	case "by":
		return d.str(&t.By)
	case "service":
		return d.str(&t.Service)
	case "product":
		return d.str(&t.Product)
	case "version":
		return d.str(&t.Version)
	case "info":
		return d.str(&t.Info)
	case "cpe":
		return d.strings(&t.CPE)
	}
	return false
}

func readSignal(d *canonDecoder, name string, s *Signal) bool {
	switch name {
	case "kind":
		return d.str(&s.Kind)
	case "provider":
		return d.str(&s.Provider)
	case "confidence":
		return d.float(&s.Confidence)
	case "ref":
		return d.str(&s.Ref)
	case "port":
		return d.int(&s.Port)
	case "protocol_family":
		return d.str(&s.ProtocolFamily)
	}
	return false
}

func readRange(d *canonDecoder, name string, r *Range) bool {
	switch name {
	case "kind":
		return d.str(&r.Kind)
	case "provider":
		return d.str(&r.Provider)
	case "region":
		return d.str(&r.Region)
	case "service":
		return d.str(&r.Service)
	case "country":
		return d.str(&r.Country)
	case "city":
		return d.str(&r.City)
	case "confidence":
		return d.float(&r.Confidence)
	}
	return false
}

func readFlow(d *canonDecoder, name string, f *Flow) bool {
	switch name {
	case "port":
		return d.int(&f.Port)
	case "transport":
		return d.str(&f.Transport)
	case "protocol":
		return d.str(&f.Protocol)
	case "packets":
		return d.int64(&f.Packets, 64)
	case "bytes":
		return d.int64(&f.Bytes, 64)
	case "ip_protocol":
		return d.int(&f.IPProtocol)
	case "basis":
		return d.str(&f.Basis)
	case "confidence":
		return d.float(&f.Confidence)
	}
	return false
}
