package enrich

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_MatchDecodedBody: a capture that kept the bytes on the wire,
// a chunked transfer or a gzip or zlib coded page (what a packet capture
// or a raw banner holds), is matched on the page the browser reads, also
// when the capture is cut inside the coded stream; a body that only
// claims a coding is read as it is.
func TestRules_MatchDecodedBody(t *testing.T) {
	t.Parallel()
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	page := "<html><script type=\"text/javascript\">\nif (window!=top) top.location=window.location;top.location=\"/remote/login\";\n</script></html>\n"
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.Bytes()
	}
	zl := func(s string) []byte {
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.Bytes()
	}
	long := page + string(bytes.Repeat([]byte("<!-- padding -->\n"), 2000))
	cut := gz(long)
	cut = cut[:len(cut)/2]
	chunked := "1d\r\n" + page[:29] + "\r\n" + "5c\r\n" + page[29:] + "\r\n0\r\n\r\n"
	tests := []struct {
		name    string
		headers ingest.Headers
		body    *ingest.Body
		vendor  string
	}{
		{"plain", nil, ingest.TextBody(page), "Fortinet"},
		{"gzip", ingest.Headers{{Name: "Content-Encoding", Value: "gzip"}}, ingest.BytesBody(gz(page)), "Fortinet"},
		{"gzip cut", ingest.Headers{{Name: "Content-Encoding", Value: "gzip"}}, &ingest.Body{Encoding: ingest.EncodingBase64, Data: ingest.BytesBody(cut).Data, Truncated: true}, "Fortinet"},
		{"deflate", ingest.Headers{{Name: "Content-Encoding", Value: "deflate"}}, ingest.BytesBody(zl(page)), "Fortinet"},
		{"chunked", ingest.Headers{{Name: "Transfer-Encoding", Value: "chunked"}}, ingest.TextBody(chunked), "Fortinet"},
		{"gzip undeclared", nil, ingest.BytesBody(gz(page)), ""},
		{"claims gzip", ingest.Headers{{Name: "Content-Encoding", Value: "gzip"}}, ingest.TextBody(page), "Fortinet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hs := append(ingest.Headers{{Name: "Content-Type", Value: "text/html"}}, tt.headers...)
			svc := &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{Request: &ingest.Request{Method: "GET", Path: "/"},
				Response: &ingest.Response{Status: 200, Headers: hs, Body: tt.body}}}}
			fp, _ := rules.Match(svc, nil)
			if fp.Vendor != tt.vendor {
				t.Errorf("vendor %q (rule %s), want %q", fp.Vendor, fp.RuleID, tt.vendor)
			}
		})
	}
}

func TestDechunk(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\n\r\n", "Wikipedia", true},
		{"4\nWiki\n5\npedia\n0\n", "Wikipedia", true},
		{"a\r\n01234", "01234", true}, // cut inside a chunk
		{"<html>", "", false},
		{"4\r\nWiki\r\nzz\r\nrest", "Wiki", true},
	} {
		got, ok := dechunk(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("dechunk(%q) = %q %v, want %q %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
