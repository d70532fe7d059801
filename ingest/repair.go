package ingest

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// repairObservation rewrites the values of an observation line that
// people and converters write in another JSON type than the format's,
// where the meaning is plain (docs/observation.md, "Other shapes read"):
//
//   - a port or an HTTP status as a string of digits ("443", "200");
//   - observed_at or listed_at as Unix seconds;
//   - a banner as a string: the text received;
//   - the probes as one object instead of a list;
//   - a certificate's SANs as one string ("DNS:vpn.example.com,
//     IP Address:192.0.2.1", as openssl prints them, or names separated by
//     commas);
//   - a scanner's CPE as one string.
//
// It returns the line rewritten and whether anything was; names are not
// touched, so an unknown member is still refused. The caller decodes the
// rewritten line strictly and reports its error if that fails too.
func repairObservation(line []byte) ([]byte, bool) {
	opts := jsontext.AllowDuplicateNames(true)
	dec := jsontext.NewDecoder(bytes.NewReader(line), opts, jsontext.AllowInvalidUTF8(true))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out, opts, jsontext.AllowInvalidUTF8(true))
	changed := false
	wrapAt := -1 // the depth of a probes object written into a list
	for {
		k := dec.PeekKind()
		if k == 0 {
			break
		}
		at := ""
		if d := dec.StackDepth(); d > 0 {
			if kind, n := dec.StackIndex(d); kind == '{' && n%2 == 1 {
				at = string(dec.StackPointer()) // a member's value comes next
				if wrapAt > 0 && strings.HasPrefix(at, "/service/probes/") {
					at = "/service/probes/0/" + at[len("/service/probes/"):] // the one probe, as it is written
				}
			}
		}
		if at == "/service/probes" && k == '{' && wrapAt < 0 {
			if enc.WriteToken(jsontext.BeginArray) != nil {
				return nil, false
			}
			wrapAt, changed = dec.StackDepth()+1, true
		}
		if at == "" || !repairable(at, k) {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, false
			}
			if err := enc.WriteToken(tok); err != nil {
				return nil, false
			}
			if tok.Kind() == '}' && dec.StackDepth() == wrapAt-1 {
				if enc.WriteToken(jsontext.EndArray) != nil {
					return nil, false
				}
				wrapAt = -2 // once
			}
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return nil, false
		}
		nv, ok := repairValue(at, k, v)
		if ok {
			v, changed = nv, true
		}
		if err := enc.WriteValue(v); err != nil {
			return nil, false
		}
	}
	if !changed {
		return nil, false
	}
	return bytes.TrimSpace(out.Bytes()), true
}

var (
	repairPaths = regexp.MustCompile(`^/(observed_at|listed_at|(service|signal|flow)/port|service/probes/\d+/(banner|tls/sans|response/status)|service/detected/cpe)$`)
	indexRe     = regexp.MustCompile(`/\d+/`)
)

// repairable says the value of kind k at JSON pointer at may need a repair.
func repairable(at string, k jsontext.Kind) bool {
	if !repairPaths.MatchString(at) {
		return false
	}
	if strings.HasSuffix(at, "_at") {
		return k == '0'
	}
	return k == '"'
}

// repairValue is v (of kind k, at JSON pointer at) in the format's type,
// and true, or false when it is already that or cannot be read as it.
func repairValue(at string, k jsontext.Kind, v jsontext.Value) (jsontext.Value, bool) {
	str := func() (string, bool) {
		if k != '"' {
			return "", false
		}
		var s string
		if err := jsonv2.Unmarshal(v, &s); err != nil {
			return "", false
		}
		return s, true
	}
	marshal := func(x any) (jsontext.Value, bool) {
		b, err := jsonv2.Marshal(x)
		return b, err == nil
	}
	switch indexRe.ReplaceAllString(at, "/N/") {
	case "/service/port", "/signal/port", "/flow/port", "/service/probes/N/response/status":
		s, ok := str()
		if !ok {
			return nil, false
		}
		s = strings.TrimSpace(s)
		if strings.HasSuffix(at, "/status") {
			s, _, _ = strings.Cut(s, " ") // "200 OK"
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return nil, false
		}
		return marshal(n)
	case "/observed_at", "/listed_at":
		if k == '0' { // Unix seconds
			var secs float64
			if err := jsonv2.Unmarshal(v, &secs); err != nil || secs < 0 || secs > 1e11 {
				return nil, false
			}
			return marshal(time.Unix(int64(secs), 0).UTC().Format(time.RFC3339))
		}
		return nil, false
	case "/service/probes/N/banner":
		s, ok := str()
		if !ok {
			return nil, false
		}
		return marshal(map[string]string{"received": s})
	case "/service/probes/N/tls/sans":
		s, ok := str()
		if !ok {
			return nil, false
		}
		sans := parseSANText(s)
		return marshal(sans)
	case "/service/detected/cpe":
		s, ok := str()
		if !ok {
			return nil, false
		}
		return marshal(strings.Fields(s))
	}
	return nil, false
}
