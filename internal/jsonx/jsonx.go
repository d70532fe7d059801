// Package jsonx appends JSON values to byte slices without reflection, for
// the hot paths that render JSON by hand (the snapshot's NDJSON, the IP
// API's lookup body). What it writes is what encoding/json writes for the
// same value with HTML escaping off.
package jsonx

import (
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s quoted as encoding/json does without HTML
// escaping: ", \ and control characters escaped, invalid UTF-8 as
// \ufffd, U+2028 and U+2029 escaped. It allocates nothing beyond
// growing b.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendBytes is AppendString for bytes (a sub-slice of a mapped file,
// say), without copying them into a string first. b must not change
// during the call.
func AppendBytes(dst, b []byte) []byte {
	return AppendString(dst, unsafe.String(unsafe.SliceData(b), len(b)))
}

// AppendFloat appends a finite f as encoding/json does (ES6 number to
// string: %f, switching to %e below 1e-6 and from 1e21, without exponent
// padding). NaN and infinities have no JSON form: callers refuse them.
func AppendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
