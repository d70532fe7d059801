package enrich

import (
	"bytes"
	"encoding/json"
	"testing"
)

// benchDocs builds n state documents the way the workers do, from the
// generator's observations (about five per address).
func benchDocs(b testing.TB, n int) []*doc {
	g := newGenerator(b, n, n/10+1)
	rules, err := DefaultRules()
	if err != nil {
		b.Fatal(err)
	}
	byKey := map[string]*doc{}
	var order []*doc
	for i := 0; i < 5*n; i++ {
		o := g.obs(i)
		k := stateKey(&o)
		d := byKey[k]
		if d == nil {
			d = newDoc(&o)
			byKey[k] = d
			order = append(order, d)
		}
		d.apply(&o, "id"+k, rules)
	}
	return order
}

// BenchmarkDocCodec measures encoding and decoding a state document, the
// work a worker does per observation (decode on a cache miss, encode on
// every write).
func BenchmarkDocCodec(b *testing.B) {
	docs := benchDocs(b, 2000)
	enc := make([][]byte, len(docs))
	size := 0
	for i, d := range docs {
		var err error
		if enc[i], err = encodeDoc(d); err != nil {
			b.Fatal(err)
		}
		size += len(enc[i])
	}
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := encodeDoc(docs[i%len(docs)]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(size)/float64(len(docs)), "bytes/doc")
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			var d doc
			if err := decodeDoc(enc[i%len(enc)], &d); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A stored document reads back to one that stores the same bytes, in the
// compressed form and in the plain JSON of older records.
func TestDocCodec_RoundTrip(t *testing.T) {
	docs := benchDocs(t, 300)
	for _, d := range docs {
		enc, err := encodeDoc(d)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, stored := range [][]byte{enc, plain} {
			var back doc
			if err := decodeDoc(stored, &back); err != nil {
				t.Fatal(err)
			}
			again, err := encodeDoc(&back)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, enc) {
				t.Fatalf("%s: decoded document encodes differently", d.IP)
			}
		}
	}
	var d doc
	if err := decodeDoc([]byte{s2Mark, 0xff, 0x00}, &d); err == nil {
		t.Fatal("corrupt compressed document decoded")
	}
	if err := decodeDoc([]byte(`{"v":1,"assets":[`), &d); err == nil {
		t.Fatal("truncated document decoded")
	}
}
