package jsonx

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// FuzzAppendString checks both forms against encoding/json without HTML
// escaping, on the strings that need escaping and on invalid UTF-8.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `"Quoted" Hosting, Inc.`, "back\\slash", "<a href='x'>&amp;</a>", "tab\tnew\nline\rcr\bbs\fff",
		"\x00\x01\x1f\x7f", "caf\u00e9 \u2028 \u2029 \U0001F600", "bad \xff\xfe utf8 \xc3", "\xe2\x80", "\ufffd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		w := bytes.TrimSuffix(want.Bytes(), []byte("\n"))
		if got := AppendString([]byte("x"), s); !bytes.Equal(got[1:], w) || got[0] != 'x' {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, w)
		}
		if got := AppendBytes(nil, []byte(s)); !bytes.Equal(got, w) {
			t.Fatalf("AppendBytes(%q) = %s, want %s", s, got, w)
		}
	})
}

// The renderers call these per field: they must not allocate beyond the
// destination's growth.
func TestAppendString_NoAllocs(t *testing.T) {
	dst := make([]byte, 0, 256)
	src := []byte("caf\u00e9 \"quoted\" \xff \u2028")
	if n := testing.AllocsPerRun(100, func() {
		_ = AppendString(dst[:0], "caf\u00e9 \"quoted\" \xff \u2028")
		_ = AppendBytes(dst[:0], src)
	}); n != 0 {
		t.Errorf("%v allocations a call, want 0", n)
	}
}

// FuzzAppendFloat checks AppendFloat against encoding/json on finite
// numbers, the exponent forms' edges included.
func FuzzAppendFloat(f *testing.F) {
	for _, v := range []float64{0, math.Copysign(0, -1), 0.1, 0.92, 1, -1.5, 9.8, 1e-6, 9.99e-7, 1e-7, 123456789, 1e20, 1e21, 1.5e300, 5e-324, math.MaxFloat64} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendFloat(nil, v); !bytes.Equal(got, want) {
			t.Fatalf("AppendFloat(%v) = %s, want %s", v, got, want)
		}
	})
}
