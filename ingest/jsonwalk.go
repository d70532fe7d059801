package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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

// jsonValues walks the values of a JSON feed (after a byte-order mark): the elements of a top-level
// array one by one (so a cut array keeps what came before the cut), and
// every other top-level value (JSON lines, concatenated objects) whole.
// each gets the line the value starts on, the value, and whether it was an
// array's element. What does not parse is reported through bad with its
// line, and the walk stops there: nothing after it can be found again.
func jsonValues(data []byte, bad func(LineError), each func(line int, v json.RawMessage, inArray bool) error) error {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	// lineAt counts on from the last offset asked (offsets only grow), so
	// a file of many values is not counted from its start for each one.
	lastOff, lastLine := 0, 1
	lineAt := func(off int64) int {
		o := min(int(off), len(data))
		if o < lastOff {
			lastOff, lastLine = 0, 1
		}
		lastLine += bytes.Count(data[lastOff:o], []byte{'\n'})
		lastOff = o
		return lastLine
	}
	// next is the offset of the next value's first byte at or after off.
	next := func(off int64) int64 {
		return int64(len(data) - len(bytes.TrimLeft(data[min(int(off), len(data)):], " \t\r\n,")))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		at := next(dec.InputOffset())
		if int(at) >= len(data) {
			return nil
		}
		if data[at] == '[' {
			if _, err := dec.Token(); err != nil {
				bad(LineError{lineAt(at), fmt.Errorf("JSON: %w", err)})
				return nil
			}
			for dec.More() {
				elAt := next(dec.InputOffset())
				var el json.RawMessage
				if err := dec.Decode(&el); err != nil {
					bad(LineError{lineAt(elAt), fmt.Errorf("JSON: %w", err)})
					return nil
				}
				if err := each(lineAt(elAt), el, true); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				bad(LineError{lineAt(next(dec.InputOffset())), fmt.Errorf("JSON: %w", err)})
				return nil
			}
			continue
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			bad(LineError{lineAt(at), fmt.Errorf("JSON: %w", err)})
			return nil
		}
		if err := each(lineAt(at), v, false); err != nil {
			return err
		}
	}
}
