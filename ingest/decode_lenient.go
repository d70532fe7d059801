package ingest

import (
	"bytes"
	"errors"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// maxDroppedMembers bounds the unknown members one record may lose.
const maxDroppedMembers = 64

// DecodeKeepingKnown decodes b into v with DecodeOptions; a member the
// format does not know is no reason to lose the rest of the record: it is
// dropped (at most maxDroppedMembers of them) and named in dropped, as its
// JSON Pointer ("/comment", "/service/notes"). Every other error (a value
// of the wrong type, a bad address) is returned as it is.
func DecodeKeepingKnown[T any](b []byte, v *T) (dropped []string, err error) {
	for range maxDroppedMembers + 1 {
		*v = *new(T)
		err = jsonv2.Unmarshal(b, v, DecodeOptions)
		var se *jsonv2.SemanticError
		if err == nil || !errors.As(err, &se) || !errors.Is(se.Err, jsonv2.ErrUnknownName) || len(dropped) == maxDroppedMembers {
			return dropped, err
		}
		nb, ok := dropMember(b, se.JSONPointer)
		if !ok {
			return dropped, err
		}
		dropped = append(dropped, string(se.JSONPointer))
		b = nb
	}
	return dropped, err
}

// dropMember rewrites the JSON document b without the object member at
// ptr, keeping every other token in its order.
func dropMember(b []byte, ptr jsontext.Pointer) ([]byte, bool) {
	opts := jsontext.AllowDuplicateNames(true)
	dec := jsontext.NewDecoder(bytes.NewReader(b), opts, jsontext.AllowInvalidUTF8(true))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out, opts, jsontext.AllowInvalidUTF8(true))
	found := false
	for dec.PeekKind() != 0 {
		name := false
		if d := dec.StackDepth(); d > 0 {
			kind, n := dec.StackIndex(d)
			name = kind == '{' && n%2 == 0
		}
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, false
		}
		if name && !found && dec.StackPointer() == ptr {
			if dec.SkipValue() != nil {
				return nil, false
			}
			found = true
			continue
		}
		if enc.WriteToken(tok) != nil {
			return nil, false
		}
	}
	return bytes.TrimSpace(out.Bytes()), found
}

// UnknownMembersWarning says which unknown members a record lost.
func UnknownMembersWarning(dropped []string) string {
	return "unknown member " + strings.Join(dropped, ", ") + " ignored (the format does not know it; the rest went in)"
}

func (o Options) warn(line int, msg string) {
	if o.Warn != nil {
		o.Warn(line, msg)
	}
}
