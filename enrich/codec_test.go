package enrich

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/klauspost/compress/s2"

	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/bincodec"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/testutil"
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
		_, id, err := o.Encode() // the message id the worker would see
		if err != nil {
			b.Fatal(err)
		}
		d.apply(&o, id, rules)
	}
	return order
}

// encodeLegacyDoc stores d as documents were stored before the binary
// form: JSON compressed with S2, marked 's'.
func encodeLegacyDoc(d *doc) ([]byte, error) {
	js, err := json.Marshal(d)
	return append([]byte{s2Mark}, s2.Encode(nil, js)...), err
}

// BenchmarkDocCodec measures encoding and decoding a state document, the
// work a worker does per observation (encode on every write, decode on a
// cache hit or a read-back), beside the S2-compressed JSON the documents
// were stored as before (encoding/json encode, json/v2 decode) in the same
// run.
func BenchmarkDocCodec(b *testing.B) {
	testutil.Micro(b)
	docs := benchDocs(b, 2000)
	for _, c := range []struct {
		name   string
		encode func(*doc) ([]byte, error)
	}{{"binary", encodeDoc}, {"json", encodeLegacyDoc}} {
		enc := make([][]byte, len(docs))
		size := 0
		for i, d := range docs {
			var err error
			if enc[i], err = c.encode(d); err != nil {
				b.Fatal(err)
			}
			size += len(enc[i])
		}
		b.Run(c.name+"/encode", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := c.encode(docs[i%len(docs)]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(size)/float64(len(docs)), "bytes/doc")
		})
		b.Run(c.name+"/decode", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				var d doc
				if err := decodeDoc(enc[i%len(enc)], &d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A stored document reads back to the same document, in the binary form
// and in the S2-compressed and plain JSON of older records.
func TestDocCodec_RoundTrip(t *testing.T) {
	docs := benchDocs(t, 300)
	for _, d := range docs {
		enc, err := encodeDoc(d)
		if err != nil {
			t.Fatal(err)
		}
		// Appended after other records, the same bytes, the others kept.
		for _, prefix := range [][]byte{[]byte("earlier records"), append(make([]byte, 0, 1<<16), "earlier records"...)} {
			if app, err := appendDoc(prefix, d); err != nil || string(app) != "earlier records"+string(enc) {
				t.Fatalf("%s: appended record differs from the encoded one (err %v)", d.IP, err)
			}
		}
		want, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		legacy, err := encodeLegacyDoc(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, stored := range [][]byte{enc, legacy, want} {
			var back doc
			if err := decodeDoc(stored, &back); err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(&back)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s (stored as %q...): decoded\n%s\nwant\n%s", d.IP, stored[:1], got, want)
			}
		}
	}
}

// Records stored in format version 2, which carried each asset's CVE
// findings, still read: the findings are skipped (they are computed when
// a record is read), everything else is as it was. testdata/state-v2.bin
// holds 40 such records (each a uvarint length, then the record) written
// by the version 2 code; state-v2.json the documents they hold.
func TestDocCodec_ReadsVersion2(t *testing.T) {
	bin, err := os.ReadFile("testdata/state-v2.bin")
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, err := os.ReadFile("testdata/state-v2.json")
	if err != nil {
		t.Fatal(err)
	}
	var want []json.RawMessage
	if err := json.Unmarshal(wantJSON, &want); err != nil {
		t.Fatal(err)
	}
	withCVEs := 0
	for i := 0; len(bin) > 0; i++ {
		n, w := binary.Uvarint(bin)
		rec := bin[w : w+int(n)]
		bin = bin[w+int(n):]
		if rec[0] != binMark || rec[1] != 2 {
			t.Fatalf("record %d is not version 2: %q", i, rec[:2])
		}
		if body, err := s2.Decode(nil, rec[2:]); err == nil && bytes.Contains(body, []byte("CVE-")) {
			withCVEs++
		}
		var d doc
		if err := decodeDoc(rec, &d); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		got, _ := json.Marshal(&d)
		// The documents as JSON, read as legacy records are: with the
		// data classes they can be told to have (legacyClasses).
		var compact bytes.Buffer
		if i < len(want) {
			var wd doc
			if err := decodeDoc(want[i], &wd); err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(&wd)
			compact.Write(b)
		}
		if i >= len(want) || !bytes.Equal(got, compact.Bytes()) {
			t.Fatalf("record %d decoded to\n%s\nwant\n%s", i, got, want[min(i, len(want)-1)])
		}
		if i == len(want)-1 && len(bin) > 0 {
			t.Fatal("more records than documents")
		}
	}
	if withCVEs == 0 {
		t.Fatal("no version 2 record carried CVE findings: skipping them went untested")
	}
}

// A truncated, corrupt or foreign record is an error, never a panic or a
// half-read document taken for whole.
func TestDocCodec_Corrupt(t *testing.T) {
	d := benchDocs(t, 20)[3]
	enc, err := encodeDoc(d)
	if err != nil {
		t.Fatal(err)
	}
	var body []byte
	if body, err = s2.Decode(nil, enc[2:]); err != nil {
		t.Fatal(err)
	}
	for n := range len(body) {
		// Every proper prefix of the body, validly compressed, is refused.
		cut := append([]byte{binMark, binVersion}, s2.Encode(nil, body[:n])...)
		var back doc
		if err := decodeDoc(cut, &back); err == nil {
			t.Fatalf("body cut at %d of %d bytes decoded", n, len(body))
		}
	}
	long := append([]byte{binMark, binVersion}, s2.Encode(nil, append(body, 0))...)
	for name, b := range map[string][]byte{
		"trailing byte":   long,
		"newer version":   append([]byte{binMark, binVersion + 1}, enc[2:]...),
		"bad compression": {binMark, binVersion, 0xff, 0x00},
		"legacy corrupt":  {s2Mark, 0xff, 0x00},
		"truncated json":  []byte(`{"v":1,"assets":[`),
	} {
		var back doc
		if err := decodeDoc(b, &back); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// FuzzDecodeDoc: no stored bytes make the decoder panic or allocate beyond
// what they could hold; what decodes re-encodes to the same document.
func FuzzDecodeDoc(f *testing.F) {
	for _, d := range benchDocs(f, 10) {
		enc, err := encodeDoc(d)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc)
	}
	f.Add([]byte{binMark, binVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		var d doc
		if decodeDoc(b, &d) != nil || len(b) == 0 || b[0] != binMark {
			return
		}
		enc, err := encodeDoc(&d)
		if err != nil {
			t.Fatal(err)
		}
		var again doc
		if err := decodeDoc(enc, &again); err != nil {
			t.Fatalf("re-encoded document does not decode: %v", err)
		}
		j1, _ := json.Marshal(&d)
		j2, _ := json.Marshal(&again)
		if !bytes.Equal(j1, j2) {
			t.Fatalf("round trip changed the document:\n%s\n%s", j1, j2)
		}
	})
}

// BenchmarkApply measures a worker's own CPU per observation, without the
// broker: decode the observation, decode its address's stored document,
// merge and encode it again, over 200,000 generated observations
// on 40,000 addresses held in memory as stored. "binary" is the worker as
// it is (json/v2 observation decoding, binary documents); "json" is the
// same work with the codecs it replaced (encoding/json observation
// decoding, S2-compressed JSON documents), in the same run.
func BenchmarkApply(b *testing.B) {
	testutil.Micro(b)
	const n = 200_000
	g := newGenerator(b, n/5, n/50)
	msgs := make([][]byte, n)
	for i := range msgs {
		o := g.obs(i)
		data, _, err := o.Encode()
		if err != nil {
			b.Fatal(err)
		}
		msgs[i] = data
	}
	w, err := NewWorker(nil, config.Default().Enrich, nil, sampleCatalog(b), testutil.Logger(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	legacyDecodeObs := func(data []byte) (ingest.Observation, error) {
		var o ingest.Observation
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			return o, err
		}
		return o, o.Normalize()
	}
	for _, c := range []struct {
		name      string
		decodeObs func([]byte) (ingest.Observation, error)
		encode    func(*doc) ([]byte, error)
	}{{"binary", decodeObs, encodeDoc}, {"json", legacyDecodeObs, encodeLegacyDoc}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			stored := map[string][]byte{}
			for i := 0; b.Loop(); i++ {
				o, err := c.decodeObs(msgs[i%n])
				if err != nil {
					b.Fatal(err)
				}
				k := stateKey(&o)
				var d *doc
				if data, ok := stored[k]; ok {
					if d, err = decodeState(k, data); err != nil {
						b.Fatal(err)
					}
				} else {
					d = newDoc(&o)
				}
				d.apply(&o, strconv.Itoa(i%n), w.rules)
				if stored[k], err = c.encode(d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// encodeV3 stores d as format version 3 did: no data classes, no
// per-source times.
func encodeV3(d *doc) []byte {
	e := bincodec.Encoder{}
	e.Int(d.V)
	e.Str(d.IP)
	e.Str(d.Network)
	e.Str(d.FirstSeen)
	e.Str(d.LastSeen)
	e.Count(len(d.Signals))
	for i := range d.Signals {
		s := &d.Signals[i]
		encodeKey(&e, s.appendKey(nil))
		e.Str(s.Class)
		e.Str(s.Source)
		e.Str(s.Provider)
		e.F64(s.Conf)
		e.Str(s.FirstSeen)
		e.Str(s.LastSeen)
		e.Str(s.Win)
	}
	claims := func(cs []claim) {
		e.Count(len(cs))
		for _, c := range cs {
			e.Str(c.SignalSource)
			e.Attribution(c.Attribution)
		}
	}
	winner := func(w *fpWinner) {
		if !e.Flag(w != nil) {
			return
		}
		e.Str(w.Win)
		fp := &w.Fp
		e.Str(fp.RuleID)
		e.Str(fp.Vendor)
		e.Str(fp.Product)
		e.Strs(fp.CPE)
		e.Str(fp.ProtocolFamily)
		e.Str(fp.Class)
		e.Str(fp.ExactVersion)
		e.Str(fp.VersionBand)
		e.Str(fp.VersionPrecision)
	}
	claims(d.Claims)
	e.Count(len(d.Assets))
	for i := range d.Assets {
		a := &d.Assets[i]
		encodeKey(&e, a.appendKey(nil))
		e.Int(a.Port)
		e.Str(a.Family)
		e.Str(a.FirstSeen)
		e.Str(a.LastSeen)
		winner(a.Svc)
		winner(a.Flow)
		e.Count(len(a.Sources))
		for _, s := range a.Sources {
			e.Str(s.Source)
			e.Str(s.Vendor)
			e.Str(s.Win)
		}
		claims(a.Claims)
	}
	return append([]byte{binMark, 3}, s2.Encode(nil, e.B)...)
}

// Records of format version 3 (before data classes) still read, with
// the classes they can be told to have: a residential_proxy signal and
// its source's claims residential, a flow fingerprint and the evidence
// and claims of the source that made it netflow, the rest standard.
func TestDocCodec_ReadsVersion3(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	d := &doc{V: 1, IP: "192.0.2.9"}
	for i, line := range []string{
		`{"type":"signal","ip":"192.0.2.9","source":"tor-exits","observed_at":"2026-11-20T10:00:00Z","signal":{"kind":"tor_exit","provider":"Tor"}}`,
		`{"type":"signal","ip":"192.0.2.9","source":"sightings","observed_at":"2026-11-20T10:00:00Z","signal":{"kind":"residential_proxy","provider":"ResiNet"},"claims":[{"org_name":"ResiOrg"}]}`,
		`{"type":"flow","ip":"192.0.2.9","source":"edge","observed_at":"2026-11-20T10:00:00Z","flow":{"port":51820,"transport":"udp","protocol":"wireguard"},"claims":[{"org_name":"FlowOrg"}]}`,
	} {
		var o ingest.Observation
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatal(err)
		}
		if err := o.Normalize(); err != nil {
			t.Fatal(err)
		}
		d.apply(&o, fmt.Sprintf("%032x", i), rules)
	}
	var back doc
	if err := decodeDoc(encodeV3(d), &back); err != nil {
		t.Fatal(err)
	}
	// Per-source times did not exist: a view takes the asset's; nor did
	// flow confidences.
	for i := range d.Assets {
		for j := range d.Assets[i].Sources {
			d.Assets[i].Sources[j].First, d.Assets[i].Sources[j].Last = "", ""
			d.Assets[i].Sources[j].Flow = 0
		}
	}
	want, _ := json.Marshal(d)
	got, _ := json.Marshal(&back)
	if !bytes.Equal(got, want) {
		t.Fatalf("decoded\n%s\nwant\n%s", got, want)
	}
	free := back.view(ipmodel.AudienceFree).build(nil)
	if !slices.Equal(free.Classifications, []string{"tor"}) || len(free.Assets) != 0 || len(free.Attributions) != 1 {
		t.Errorf("free view of a version 3 record: %+v", free)
	}
}
