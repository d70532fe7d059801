package enrich

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/testutil"
)

// agreesWithGeneric checks that where ingest.DecodeCanonical takes data,
// json/v2 with the worker's options takes it too and reads the same
// observation. It reports whether the canonical decoder took it.
func agreesWithGeneric(t *testing.T, data []byte) bool {
	t.Helper()
	var fast ingest.Observation
	if !ingest.DecodeCanonical(data, &fast) {
		return false
	}
	var slow ingest.Observation
	if err := jsonv2.Unmarshal(data, &slow, obsOptions); err != nil {
		t.Fatalf("canonical decoder took %q, json/v2 refuses it: %v", data, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("canonical decoder and json/v2 differ on %q:\n%#v\n%#v", data, fast, slow)
	}
	return true
}

// decodeObsGeneric is decodeObs with json/v2 alone, as it was before the
// canonical decoder.
func decodeObsGeneric(data []byte) (ingest.Observation, error) {
	var o ingest.Observation
	if err := jsonv2.Unmarshal(data, &o, obsOptions); err != nil {
		return o, err
	}
	return o, o.Normalize()
}

// publishedForms are observations as the ingest publisher writes them:
// the generator's mix and the shipped NDJSON sample, through Encode.
func publishedForms(t testing.TB, n int) [][]byte {
	g := newGenerator(t, 1000, 100)
	var out [][]byte
	add := func(o ingest.Observation) {
		data, _, err := o.Encode()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, data)
	}
	for i := range n {
		add(g.obs(i))
	}
	for _, list := range sampleObs(t) {
		for _, o := range list {
			add(o)
		}
	}
	return out
}

// Every observation the publisher writes takes the canonical path and
// reads as json/v2 reads it: were it to fall back, the worker would lose
// the speed the decoder is for without any test noticing.
func TestDecodeCanonical_PublishedForm(t *testing.T) {
	for _, data := range publishedForms(t, 5000) {
		if !agreesWithGeneric(t, data) {
			t.Fatalf("published observation not taken by the canonical decoder: %s", data)
		}
	}
}

// Inputs around each of the canonical decoder's limits: what it takes must
// read as json/v2 reads it; what it leaves, decodeObs still reads (or
// refuses) as json/v2 does.
func TestDecodeCanonical_Limits(t *testing.T) {
	const svc = `"type":"service","ip":"192.0.2.1","source":"scan-a","observed_at":"2026-11-20T10:00:00Z"`
	for _, c := range []struct {
		name string
		data string
		fast bool // the canonical decoder takes it
	}{
		{"plain", `{"v":1,` + svc + `,"service":{"port":443,"transport":"tcp"}}`, true},
		{"white space", " {\n\t\"v\" : 1 , " + svc + ` , "service" : { "port" : 443 , "transport" : "tcp" } } ` + "\n", true},
		{"escapes", `{"v":2,` + svc + `,"service":{"port":443,"transport":"tcp","probes":[{"response":{"title":"a\"b\\c\/d\b\f\n\r\t\u003c\u00e9\u2028"}}]}}`, true},
		{"utf-8", `{"v":2,` + svc + `,"service":{"port":443,"transport":"tcp","probes":[{"banner":{"received":{"data":"héllo 日本"}}}]}}`, true},
		{"empty containers", `{"v":2,` + svc + `,"claims":[],"service":{"port":443,"transport":"tcp","probes":[{"request":{"headers":[]},"response":{"headers":[]},"tls":{"sans":[],"subject":{"o":[]}}}]}}`, true},
		{"every v2 member", `{"v":2,` + svc + `,"service":{"port":443,"transport":"tcp","probes":[{"name":"n","request":{"method":"POST","path":"/a?b","host":"h","headers":[{"name":"A","value":"1"}],"body":{"data":"x"}},` +
			`"response":{"status":200,"reason":"OK","protocol":"HTTP/1.1","headers":[{"name":"Set-Cookie","value":"a=1","truncated":true},{"name":"Set-Cookie","value":"b=2"}],"title":"t","body":{"encoding":"base64","data":"AAE=","truncated":false,"length":2,"sha256":"` + strings.Repeat("a", 64) + `","mmh3":-2147483648}},` +
			`"tls":{"version":"TLSv1.2","cipher":"c","subject":{"cn":"a","o":["b"],"ou":["c","d"],"c":"US","st":"s","l":"l","email":"e","dn":"CN=a"},"issuer":{"cn":"x"},"sans":["a.b"],"serial":"1","sha256":"` + strings.Repeat("b", 64) + `","not_before":"2020-01-01T00:00:00Z","not_after":"2030-01-01T00:00:00Z","self_signed":true,"jarm":"j","ja3s":"k","ja4s":"l"},` +
			`"banner":{"sent":{"data":"s"},"received":{"data":"r"}}}],"detected":{"by":"nmap","service":"http","product":"p","version":"1","info":"i","cpe":["cpe:/a:x"]}}}`, true},
		{"v2 flow", `{"v":2,"type":"flow","ip":"192.0.2.1","source":"s","observed_at":"2026-11-20T10:00:00Z","flow":{"port":500,"transport":"udp","protocol":"ipsec","ip_protocol":50,"basis":"ip_protocol","confidence":0.9}}`, true},
		{"raw request and response", `{"v":2,` + svc + `,"service":{"port":443,"transport":"tcp","probes":[{"request":"GET /remote/login HTTP/1.1\r\nHost: h\r\n\r\n","response":"HTTP/1.1 200 OK\r\nServer: x\r\n\r\nbody"}]}}`, false},
		{"header block and pseudo-headers", `{"v":2,` + svc + `,"service":{"port":443,"transport":"tcp","probes":[{"response":{"headers":"HTTP/1.1 200 OK\r\nServer: x\r\n"}},{"response":{"headers":[{"name":":status","value":"200"}]}}]}}`, false},
		{"name attribute spellings", `{"v":2,` + svc + `,"service":{"port":443,"transport":"tcp","probes":[{"tls":{"subject":{"common_name":["a"],"organization":"b"}}}]}}`, false},
		{"v1 evidence", `{"v":1,` + svc + `,"service":{"port":443,"transport":"tcp","banner":"x"}}`, false},
		{"mmh3 overflow", `{"v":2,` + svc + `,"service":{"port":443,"transport":"tcp","probes":[{"response":{"body":{"mmh3":2147483648}}}]}}`, false},
		{"bool as string", `{"v":2,` + svc + `,"service":{"port":443,"transport":"tcp","probes":[{"response":{"body":{"truncated":"true"}}}]}}`, false},
		{"numbers", `{"v":1,"type":"signal","ip":"192.0.2.1","source":"s","observed_at":"2026-11-20T10:00:00Z","signal":{"kind":"vpn_exit","confidence":5e-1},"claims":[{"org_name":"X","signal_confidence":0.25}]}`, true},
		{"negative zero float", `{"v":1,"type":"range","network":"10.0.0.0/8","source":"s","observed_at":"2026-11-20T10:00:00Z","range":{"kind":"vpn","confidence":-0.0}}`, true},
		{"name in other case", `{"V":1,` + svc + `,"service":{"port":443,"transport":"tcp"}}`, false},
		{"unknown name", `{"v":1,"x":2,` + svc + `,"service":{"port":443,"transport":"tcp"}}`, false},
		{"duplicate name", `{"v":1,"v":1,` + svc + `,"service":{"port":443,"transport":"tcp"}}`, false},
		{"duplicate object", `{"v":1,` + svc + `,"service":{"port":443},"service":{"transport":"tcp"}}`, false},
		{"duplicate header", `{"v":1,` + svc + `,"service":{"port":443,"transport":"tcp","http":{"headers":{"A":"1","A":"2"}}}}`, false},
		{"null", `{"v":1,` + svc + `,"service":{"port":443,"transport":"tcp","tls":null}}`, false},
		{"fraction in integer", `{"v":1,` + svc + `,"service":{"port":443.0,"transport":"tcp"}}`, false},
		{"exponent in integer", `{"v":1,` + svc + `,"service":{"port":4e2,"transport":"tcp"}}`, false},
		{"leading zero", `{"v":1,` + svc + `,"service":{"port":0443,"transport":"tcp"}}`, false},
		{"integer overflow", `{"v":1,"type":"flow","ip":"192.0.2.1","source":"s","observed_at":"2026-11-20T10:00:00Z","flow":{"port":1,"transport":"udp","protocol":"tor","bytes":9223372036854775808}}`, false},
		{"float overflow", `{"v":1,"type":"range","network":"10.0.0.0/8","source":"s","observed_at":"2026-11-20T10:00:00Z","range":{"kind":"vpn","confidence":1e400}}`, false},
		{"string for number", `{"v":"1",` + svc + `,"service":{"port":443,"transport":"tcp"}}`, false},
		{"number for string", `{"v":1,` + svc + `,"service":{"port":443,"transport":7}}`, false},
		{"escaped surrogate pair", `{"v":1,` + svc + `,"service":{"port":443,"transport":"tcp","banner":"\ud83d\ude00"}}`, false},
		{"lone surrogate", `{"v":1,` + svc + `,"service":{"port":443,"transport":"tcp","banner":"\ud83d"}}`, false},
		{"invalid utf-8", "{\"v\":1," + svc + ",\"service\":{\"port\":443,\"transport\":\"tcp\",\"banner\":\"\xff\"}}", false},
		{"control character", "{\"v\":1," + svc + ",\"service\":{\"port\":443,\"transport\":\"tcp\",\"banner\":\"a\tb\"}}", false},
		{"bad escape", `{"v":1,` + svc + `,"service":{"port":443,"transport":"tcp","banner":"\x"}}`, false},
		{"trailing value", `{"v":1,` + svc + `,"service":{"port":443,"transport":"tcp"}} {}`, false},
		{"trailing comma", `{"v":1,` + svc + `,"service":{"port":443,"transport":"tcp"},}`, false},
		{"truncated", `{"v":1,` + svc + `,"service":{"port":443,"transport":"tc`, false},
		{"array", `[1]`, false},
		{"empty", ``, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := []byte(c.data)
			if got := agreesWithGeneric(t, data); got != c.fast {
				t.Fatalf("canonical decoder took it: %v, want %v", got, c.fast)
			}
			// decodeObs, which the worker calls, reads it as json/v2 does.
			want, wantErr := decodeObsGeneric(data)
			got, err := decodeObs(data)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("decodeObs error %v, json/v2 %v", err, wantErr)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("decodeObs read\n%#v\njson/v2\n%#v", got, want)
			}
		})
	}
}

// Random edits of published observations (bytes changed, dropped,
// repeated), checked in every run; FuzzDecodeCanonical goes on from here
// under `go test -fuzz`.
func TestDecodeCanonical_Mutations(t *testing.T) {
	forms := publishedForms(t, 200)
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "{}[]:,\"\\ 0123456789.-+eEnulltrueabcu\x00\x1f\x7f\xc3\xa9\xff"
	taken := 0
	for range 50_000 {
		data := append([]byte(nil), forms[rng.IntN(len(forms))]...)
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(data))
			switch rng.IntN(3) {
			case 0:
				data[i] = alphabet[rng.IntN(len(alphabet))]
			case 1:
				data = append(data[:i], data[i+1:]...)
			default:
				j := min(len(data), i+1+rng.IntN(8))
				data = append(data[:j], append(append([]byte(nil), data[i:j]...), data[j:]...)...)
			}
		}
		if agreesWithGeneric(t, data) {
			taken++
		}
	}
	// The edits must leave some inputs the decoder takes, or the check
	// above checked nothing.
	if taken < 1000 {
		t.Fatalf("only %d of 50,000 edited observations taken", taken)
	}
}

// FuzzDecodeCanonical: on any input, the canonical decoder either leaves
// it to json/v2 or reads exactly what json/v2 reads.
func FuzzDecodeCanonical(f *testing.F) {
	for _, data := range publishedForms(f, 50) {
		f.Add(data)
	}
	f.Add([]byte(`{"v":1,"service":{"http":{"headers":{"a":"\u00e9"},"cookies":["x"]}},"claims":[{"org_name":"o"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		agreesWithGeneric(t, data)
	})
}

// BenchmarkDecodeObs compares decodeObs on the publisher's form (which
// takes the canonical decoder) with json/v2, which it used before, in the
// same run, on the generator's mix.
func BenchmarkDecodeObs(b *testing.B) {
	testutil.Micro(b)
	forms := publishedForms(b, 10_000)
	for _, c := range []struct {
		name   string
		decode func([]byte) (ingest.Observation, error)
	}{{"canonical", decodeObs}, {"jsonv2", decodeObsGeneric}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := c.decode(forms[i%len(forms)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
