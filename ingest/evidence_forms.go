package ingest

import (
	"fmt"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Headers are a request's or response's header lines in the order sent.
// The format writes them as a list of {"name", "value"}; reading, it also
// takes the shapes people and tools write headers in, so that hand-written
// or converted evidence goes in unchanged (docs/observation.md, "Other
// shapes read"):
//
//   - an object of names to a value or a list of values ({"Server":
//     "nginx", "Set-Cookie": ["a=1", "b=2"]}), in the order written;
//   - a list of "Name: value" lines (a raw header block split into lines);
//   - a list of [name, value] pairs;
//   - the raw header block as one string, its lines as a client prints them.
//
// In the lines, the start line a pasted block begins with ("HTTP/1.1 200
// OK", "GET /path HTTP/1.1") and HTTP/2's pseudo-headers (":status: 200",
// ":path: /x") are kept as pseudo-headers, which normalization reads into
// the response's status or the request's method, path and host and drops
// (they are not headers). Anything else is refused with an error naming
// what was found.
type Headers []Header

// UnmarshalJSONFrom reads any of the shapes Headers takes.
func (h *Headers) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch k := dec.PeekKind(); k {
	case 'n':
		_, err := dec.ReadToken()
		*h = nil
		return err
	case '{':
		return h.fromObject(dec)
	case '[':
		return h.fromList(dec)
	case '"':
		var block string
		if err := jsonv2.UnmarshalDecode(dec, &block); err != nil {
			return err
		}
		out := Headers{}
		for _, line := range strings.Split(block, "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			hd, err := headerFromLine(strings.TrimSuffix(line, "\r"))
			if err != nil {
				return err
			}
			out = append(out, hd)
		}
		*h = out
		return nil
	default:
		return fmt.Errorf("headers: want a list of {name, value}, an object of names to values, a list of \"Name: value\" lines or the header block, got %s", kindName(k))
	}
}

// startLine is the pseudo-header name a pasted block's start line is kept
// under until normalization reads it.
const startLine = ":start-line"

// headerFromLine reads one line of a header list or block: "Name: value",
// an HTTP/2 pseudo-header (":status: 200"), or the block's start line.
func headerFromLine(line string) (Header, error) {
	t := strings.TrimSpace(line)
	if _, _, _, ok := parseStatusLine(t); ok {
		return Header{Name: startLine, Value: t}, nil
	}
	if m, rest, ok := strings.Cut(t, " "); ok && m != "" && strings.ToUpper(m) == m && !strings.Contains(m, ":") {
		if _, proto, ok := strings.Cut(rest, " "); ok && strings.HasPrefix(proto, "HTTP/") {
			return Header{Name: startLine, Value: t}, nil
		}
	}
	if strings.HasPrefix(t, ":") {
		if name, value, ok := strings.Cut(t[1:], ":"); ok && name != "" {
			return Header{Name: ":" + strings.TrimSpace(name), Value: strings.TrimSpace(value)}, nil
		}
	}
	h, ok := headerLine([]byte(line))
	if !ok || h.Name == "" {
		return Header{}, fmt.Errorf("headers: line %q is not \"Name: value\"", clipForError(line, 60))
	}
	return h, nil
}

func (h *Headers) fromList(dec *jsontext.Decoder) error {
	if _, err := dec.ReadToken(); err != nil { // [
		return err
	}
	out := Headers{}
	for dec.PeekKind() != ']' {
		switch k := dec.PeekKind(); k {
		case '{':
			var one Header // decoded with the caller's options: unknown members refused
			if err := jsonv2.UnmarshalDecode(dec, &one); err != nil {
				return err
			}
			out = append(out, one)
		case '"':
			var line string
			if err := jsonv2.UnmarshalDecode(dec, &line); err != nil {
				return err
			}
			h, err := headerFromLine(line)
			if err != nil {
				return err
			}
			out = append(out, h)
		case '[':
			var pair []string
			if err := jsonv2.UnmarshalDecode(dec, &pair); err != nil {
				return err
			}
			if len(pair) != 2 {
				return fmt.Errorf("headers: a [name, value] pair has %d members", len(pair))
			}
			out = append(out, Header{Name: pair[0], Value: pair[1]})
		case 0:
			_, err := dec.ReadToken()
			return err
		default:
			return fmt.Errorf("headers: a list member is %s, want {name, value}, \"Name: value\" or [name, value]", kindName(k))
		}
	}
	if _, err := dec.ReadToken(); err != nil { // ]
		return err
	}
	*h = out
	return nil
}

func (h *Headers) fromObject(dec *jsontext.Decoder) error {
	if _, err := dec.ReadToken(); err != nil { // {
		return err
	}
	out := Headers{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String()
		switch k := dec.PeekKind(); k {
		case '"':
			var v string
			if err := jsonv2.UnmarshalDecode(dec, &v); err != nil {
				return err
			}
			out = append(out, Header{Name: name, Value: v})
		case '[':
			var vs []string
			if err := jsonv2.UnmarshalDecode(dec, &vs); err != nil {
				return fmt.Errorf("headers: %s: %w", clipForError(name, 60), err)
			}
			for _, v := range vs {
				out = append(out, Header{Name: name, Value: v})
			}
		case '0':
			// A number written bare ({"Content-Length": 512}): its text.
			v, err := dec.ReadValue()
			if err != nil {
				return err
			}
			out = append(out, Header{Name: name, Value: string(v)})
		default:
			return fmt.Errorf("headers: %s is %s, want a string or a list of strings", clipForError(name, 60), kindName(k))
		}
	}
	if _, err := dec.ReadToken(); err != nil { // }
		return err
	}
	*h = out
	return nil
}

// body is Body without its methods.
type body Body

// UnmarshalJSONFrom reads a body written as its object, or as a plain
// string: the text itself.
func (b *Body) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return stringOrObject(dec, b, func(s string) (Body, error) { return Body{Data: s}, nil }, func(v body) Body { return Body(v) })
}

// stringOrObject reads into dst a JSON string, through fromString (which
// may refuse it), or an object, decoded as A (T without its methods, so
// that T's own decoding is not called again) and converted.
func stringOrObject[T, A any](dec *jsontext.Decoder, dst *T, fromString func(string) (T, error), fromObject func(A) T) error {
	if dec.PeekKind() == '"' {
		var s string
		if err := jsonv2.UnmarshalDecode(dec, &s); err != nil {
			return err
		}
		v, err := fromString(s)
		if err != nil {
			return err
		}
		*dst = v
		return nil
	}
	var v A
	if err := jsonv2.UnmarshalDecode(dec, &v); err != nil {
		return err
	}
	*dst = fromObject(v)
	return nil
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "a boolean"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '{':
		return "an object"
	case '[':
		return "a list"
	}
	return "nothing"
}

// clipForError shortens s to at most n bytes (a whole character
// at the cut) and marks the cut, for quoting a value in an error message.
func clipForError(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cutUTF8(s, n) + "..."
}

// dn is DN without its methods.
type dn DN

// UnmarshalJSONFrom reads a name written as its object, or as the whole
// name in a string ("CN=vpn, O=Fortinet" or "/C=US/O=Fortinet/CN=vpn"),
// whose attributes are then read into the fields (ParseDN).
//
// In the object, an attribute may be named as the format does (`cn`, `o`),
// by its X.520 name (`commonName`, `organizationName`,
// `organizationalUnitName`, `countryName`, `stateOrProvinceName`,
// `localityName`, `emailAddress`) or as zgrab2 and Censys write it
// (`common_name`, `organization`, `organizational_unit`, `country`,
// `province`, `locality`, `email_address`), and its value may be a string
// or a list of strings (the first is kept where the format holds one).
func (d *DN) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '"':
		var s string
		if err := jsonv2.UnmarshalDecode(dec, &s); err != nil {
			return err
		}
		*d = *ParseDN(s)
		return nil
	case '{':
	default:
		var v dn // null, or an error naming what was found
		err := jsonv2.UnmarshalDecode(dec, &v)
		*d = DN(v)
		return err
	}
	if _, err := dec.ReadToken(); err != nil { // {
		return err
	}
	var out DN
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String()
		var vals []string
		switch k := dec.PeekKind(); k {
		case '"':
			var v string
			if err := jsonv2.UnmarshalDecode(dec, &v); err != nil {
				return err
			}
			vals = []string{v}
		case '[':
			if err := jsonv2.UnmarshalDecode(dec, &vals); err != nil {
				return fmt.Errorf("%s: %w", clipForError(name, 60), err)
			}
		case 'n':
			if _, err := dec.ReadToken(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s is %s, want a string or a list of strings", clipForError(name, 60), kindName(k))
		}
		first := func(dst *string) {
			if len(vals) > 0 && *dst == "" {
				*dst = vals[0]
			}
		}
		switch dnAttr(name) {
		case "cn":
			first(&out.CN)
		case "o":
			out.O = appendAttr(out.O, vals)
		case "ou":
			out.OU = appendAttr(out.OU, vals)
		case "c":
			first(&out.C)
		case "st":
			first(&out.ST)
		case "l":
			first(&out.L)
		case "email":
			first(&out.Email)
		case "dn":
			first(&out.DN)
		default:
			return fmt.Errorf("unknown member %q (want cn, o, ou, c, st, l, email or dn)", clipForError(name, 60))
		}
	}
	if _, err := dec.ReadToken(); err != nil { // }
		return err
	}
	*d = out
	return nil
}

// appendAttr adds an attribute's values; an empty list written stays an
// empty list, as the object's own decoding keeps it.
func appendAttr(dst, vals []string) []string {
	if dst == nil {
		return vals
	}
	return append(dst, vals...)
}

// dnAttr is the format's name of a name attribute written as the format,
// X.520 or zgrab2 and Censys write it; "" for none.
func dnAttr(name string) string {
	k := strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(name))
	switch k {
	case "cn", "commonname":
		return "cn"
	case "o", "organization", "organisation", "organizationname":
		return "o"
	case "ou", "organizationalunit", "organisationalunit", "organizationalunitname":
		return "ou"
	case "c", "country", "countryname":
		return "c"
	case "st", "s", "state", "province", "stateorprovincename", "stateorprovince":
		return "st"
	case "l", "locality", "localityname":
		return "l"
	case "email", "emailaddress", "e":
		return "email"
	case "dn":
		return "dn"
	}
	return ""
}

// dnShortName is the attribute name spells (any spelling dnAttr knows:
// "CN", "commonName", "organizationalUnitName", ...) as a DN string writes
// it ("CN", "O", "OU", "C", "ST", "L", "emailAddress"), or "".
func dnShortName(name string) string {
	switch a := dnAttr(name); a {
	case "email":
		return "emailAddress"
	case "", "dn":
		return ""
	default:
		return strings.ToUpper(a)
	}
}

// setAttr sets the attribute of the name that name spells (dnShortName):
// O and OU add a value, the others replace theirs. It returns the short
// name, or "" when name is none of the DN's fields.
func (d *DN) setAttr(name, value string) string {
	short := dnShortName(name)
	switch short {
	case "CN":
		d.CN = value
	case "O":
		d.O = append(d.O, value)
	case "OU":
		d.OU = append(d.OU, value)
	case "C":
		d.C = value
	case "ST":
		d.ST = value
	case "L":
		d.L = value
	case "emailAddress":
		d.Email = value
	}
	return short
}

// request is Request without its methods.
type request Request

// UnmarshalJSONFrom reads a request written as its object, or as a
// string: the raw request as a client's verbose output or a write-up
// prints it ("GET /remote/login HTTP/1.1" and its header lines), its
// first line alone without the protocol ("POST /ssl-vpn/login.esp"), or
// the path or URL requested.
func (q *Request) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return stringOrObject(dec, q, requestFromText, func(v request) Request { return Request(v) })
}

func requestFromText(s string) (Request, error) {
	raw := strings.TrimLeft(s, " \t\r\n")
	if r, ok := parseHTTPRequest([]byte(raw)); ok {
		return *r, nil
	}
	line, _, _ := strings.Cut(raw, "\n")
	line = strings.TrimSpace(line)
	if method, target, ok := strings.Cut(line, " "); ok && method != "" && strings.ToUpper(method) == method && len(method) <= 32 && !strings.ContainsAny(strings.TrimSpace(target), " \t") {
		return Request{Method: method, Path: strings.TrimSpace(target)}, nil
	}
	if !strings.ContainsAny(line, " \t") && (strings.HasPrefix(line, "/") || strings.HasPrefix(strings.ToLower(line), "http://") || strings.HasPrefix(strings.ToLower(line), "https://")) {
		return Request{Path: line}, nil
	}
	return Request{}, fmt.Errorf("request: a string must be a raw HTTP request (\"GET /path HTTP/1.1\" and its headers), its first line or a path; got %q", clipForError(s, 60))
}

// response is Response without its methods.
type response Response

// UnmarshalJSONFrom reads a response written as its object, or as a
// string: the raw response as `curl -i`, a client's verbose output or a
// write-up prints it (its status line, header lines and body; curl -v's
// "< " lines; curl -i's output under its command line).
func (r *Response) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return stringOrObject(dec, r, func(s string) (Response, error) {
		_, p, ok := exchangeFromText(strings.TrimLeft(s, " \t\r\n"))
		if !ok {
			return Response{}, fmt.Errorf("response: a string must be a raw HTTP response (\"HTTP/1.1 200 OK\", its headers and body); got %q", clipForError(s, 60))
		}
		return *p, nil
	}, func(v response) Response { return Response(v) })
}
