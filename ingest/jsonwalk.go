package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// readJSONFeed reads a whole JSON feed, at most maxJSONFeed bytes.
func readJSONFeed(r io.Reader, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxJSONFeed+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if len(data) > maxJSONFeed {
		return nil, fmt.Errorf("read %s: larger than %d bytes", what, maxJSONFeed)
	}
	return data, nil
}

// jsonWalk is the one reader of JSON documents the adapters share: the
// documents of data one after the other (one pretty-printed document,
// several back to back, JSON lines), each top-level array's elements one
// by one and each wrapping object's record arrays one by one, so that a
// cut file keeps every record before the cut.
type jsonWalk struct {
	// what names the input in errors ("sslyze: server_scan_results: ...");
	// "" gives "json: ...".
	what string
	// wrappers are the members of a top-level object whose array holds
	// the records (an API answer's "results"); an object with none of
	// them, or with a member of that name that is not an array, is a
	// record itself.
	wrappers []string
	// header, if set, gets a wrapping object's other members in order.
	header func(key string, raw json.RawMessage)
	// resync: after a document that does not parse, reading resumes at
	// the next line that starts one (JSON lines, documents back to back);
	// otherwise it stops there, as nothing after a syntax error can be
	// told apart from the middle of a value.
	resync bool
	// values: a top-level value that is neither an object nor an array
	// is passed on too (else it is reported).
	values bool
}

// lineCounter returns the line of an offset in data, data's first line
// being firstLine. It counts on from the last offset asked (offsets
// mostly grow: a record's own line inside a document read before it
// starts the count again), so a file of many records is not counted from
// its start for each one. Offsets outside data are taken as its ends.
func lineCounter(data []byte, firstLine int) func(off int64) int {
	lastOff, lastLine := int64(0), firstLine
	return func(off int64) int {
		off = min(max(off, 0), int64(len(data)))
		if off < lastOff {
			lastOff, lastLine = 0, firstLine
		}
		lastLine += bytes.Count(data[lastOff:off], []byte{'\n'})
		lastOff = off
		return lastLine
	}
}

// walk passes every record of data to each, with the line it starts on
// (firstLine is data's first line in the input) and whether it was an
// array's element. What does not parse is reported through bad with the
// line where reading stopped.
func (w jsonWalk) walk(data []byte, firstLine int, bad func(LineError), each func(line int, rec json.RawMessage, inArray bool) error) error {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var base int64 // offset of the decoder's input in data
	lineAt := lineCounter(data, firstLine)
	skip := func(off int64) int64 {
		for off < int64(len(data)) && bytes.IndexByte([]byte(" \t\r\n,"), data[off]) >= 0 {
			off++
		}
		return off
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	at := func() int64 { return base + dec.InputOffset() }
	// fail reports where reading stopped, and either resumes at the next
	// line that starts a document or ends the input.
	fail := func(off int64, ctx string, err error) error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = errors.New("the input ends inside a JSON value (cut file?)")
		}
		bad(LineError{lineAt(off), w.errorf(ctx, err)})
		if !w.resync {
			return errStop
		}
		next := resyncJSON(data, off+1)
		if next < 0 {
			return errStop
		}
		base = next
		dec = json.NewDecoder(bytes.NewReader(data[base:]))
		return nil
	}
	array := func(ctx string) (bool, error) {
		for dec.More() {
			start := skip(at())
			var rec json.RawMessage
			if err := dec.Decode(&rec); err != nil {
				return false, fail(start, ctx, err)
			}
			if err := each(lineAt(start), rec, true); err != nil {
				return false, err
			}
		}
		if _, err := dec.Token(); err != nil {
			return false, fail(at(), ctx, err)
		}
		return true, nil
	}
	err := func() error {
		for {
			start := skip(at())
			if start >= int64(len(data)) {
				return nil
			}
			switch c := data[start]; {
			case c == '[':
				if _, err := dec.Token(); err != nil {
					return fail(start, "json", err)
				}
				if _, err := array("array"); err != nil {
					return err
				}
				continue
			case c == '{' && len(w.wrappers) > 0:
				if err := w.object(dec, data, start, at, skip, lineAt, fail, array, each); err != nil {
					return err
				}
				continue
			case c != '{' && !w.values:
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					if err := fail(start, "json", err); err != nil {
						return err
					}
					continue
				}
				bad(LineError{lineAt(start), w.errorf("json", errors.New("not an object or array"))})
				continue
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				if err := fail(start, "json", err); err != nil {
					return err
				}
				continue
			}
			if err := each(lineAt(start), v, false); err != nil {
				return err
			}
		}
	}()
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// object reads a top-level object that may wrap records: its members one
// by one, a wrapper's array element by element, the others to header; an
// object that wrapped none is a record itself.
func (w jsonWalk) object(dec *json.Decoder, data []byte, start int64, at func() int64, skip func(int64) int64, lineAt func(int64) int,
	fail func(int64, string, error) error, array func(string) (bool, error), each func(int, json.RawMessage, bool) error) error {
	if _, err := dec.Token(); err != nil {
		return fail(start, "json", err)
	}
	wrapped := false
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return fail(at(), "json", err)
		}
		key, _ := kt.(string)
		if slices.Contains(w.wrappers, key) {
			v := skip(at())
			if v < int64(len(data)) && data[v] == ':' {
				v = skip(v + 1)
			}
			if v < int64(len(data)) && data[v] == '[' {
				if _, err := dec.Token(); err != nil {
					return fail(v, key, err)
				}
				ok, err := array(key)
				if !ok {
					return err
				}
				wrapped = true
				continue
			}
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fail(at(), key, err)
		}
		if w.header != nil {
			w.header(key, raw)
		}
	}
	if _, err := dec.Token(); err != nil {
		return fail(at(), "json", err)
	}
	if wrapped {
		return nil
	}
	return each(lineAt(start), json.RawMessage(data[start:at()]), false)
}

// errorf is an error of the walk: "what: ctx: err", or "ctx: err" when
// the walk has no name.
func (w jsonWalk) errorf(ctx string, err error) error {
	if w.what == "" {
		return fmt.Errorf("%s: %w", ctx, err)
	}
	return fmt.Errorf("%s: %s: %w", w.what, ctx, err)
}

// resyncJSON returns the offset of the first line at or after from that
// starts with "{" or "[" (a document's first character), or -1.
func resyncJSON(data []byte, from int64) int64 {
	for i := max(from, 1); i < int64(len(data)); i++ {
		if data[i-1] == '\n' && (data[i] == '{' || data[i] == '[') {
			return i
		}
	}
	return -1
}

// jsonValues walks the values of a JSON feed (after a byte-order mark):
// the elements of a top-level array one by one (so a cut array keeps what
// came before the cut), and every other top-level value (JSON lines,
// concatenated objects) whole. each gets the line the value starts on,
// the value, and whether it was an array's element. What does not parse
// is reported through bad with its line, and the walk stops there:
// nothing after it can be found again.
func jsonValues(data []byte, bad func(LineError), each func(line int, v json.RawMessage, inArray bool) error) error {
	return jsonWalk{values: true}.walk(data, 1, bad, each)
}
