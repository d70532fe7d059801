package ingest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// Evidence a scanner recorded in full goes in cut to the limits, flagged,
// never refused: a 50 MB body, a 1 MB header, bytes that are not UTF-8.
func TestNDJSON_OversizedEvidenceIsCutNotRefused(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("A", 50<<20)
	longHeader := strings.Repeat("h", 1<<20)
	line := func(probe string) string {
		return `{"v":2,"type":"service","ip":"192.0.2.7","source":"s","observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"transport":"tcp","probes":[` + probe + `]}}` + "\n"
	}
	in := line(`{"request":{"path":"/"},"response":{"status":200,"headers":[{"name":"X-Long","value":"`+longHeader+`"},{"name":"Set-Cookie","value":"a=1"},{"name":"Set-Cookie","value":"b=2"}],"body":{"data":"`+big+`"}}}`) +
		// invalid UTF-8 and a NUL in a text body; invalid UTF-8 in a header
		line("{\"response\":{\"headers\":[{\"name\":\"Server\",\"value\":\"x\xff\xfey\"}],\"body\":{\"data\":\"\xff\xfe\\u0000bin\"}}}") +
		line(`{"banner":{"received":{"encoding":"base64","data":"`+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0, 1, 2, 0xff}, 40000))+`"}}}`)
	r := runAdapter(t, NDJSON, in, Options{})
	if len(r.bad) != 0 || len(r.obs) != 3 {
		t.Fatalf("obs=%d bad=%v, want 3 and none", len(r.obs), r.bad)
	}
	p := r.obs[0].Service.Probes[0]
	body := p.Response.Body
	if !body.Truncated || len(body.Data) != MaxBodyBytes || body.Length != 50<<20 {
		t.Errorf("body: truncated %v, %d bytes kept, length %d", body.Truncated, len(body.Data), body.Length)
	}
	hs := p.Response.Headers
	if len(hs) != 3 || !hs[0].Truncated || len(hs[0].Value) != MaxHeaderBytes || hs[1].Value != "a=1" || hs[2].Value != "b=2" {
		t.Errorf("headers: %d, first truncated %v (%d bytes)", len(hs), hs[0].Truncated, len(hs[0].Value))
	}
	p = r.obs[1].Service.Probes[0]
	// JSON text is UTF-8: bytes that are not arrive as U+FFFD (send such
	// bodies as base64); the NUL is kept.
	if b := p.Response.Body; b.Encoding != EncodingText || b.Data != "\uFFFD\uFFFD\x00bin" {
		t.Errorf("binary text body: %+v", b)
	}
	// An adapter that puts raw bytes in a text body gets them kept as base64.
	raw := &Body{Data: "\xff\xfe\x00bin"}
	if err := raw.normalize(fieldPath{-1, "b"}); err != nil || raw.Encoding != EncodingBase64 || !bytes.Equal(raw.Bytes(), []byte("\xff\xfe\x00bin")) {
		t.Errorf("raw bytes in a text body: %+v %v", raw, err)
	}
	if v := p.Response.Headers[0].Value; !utf8.ValidString(v) || !strings.HasPrefix(v, "x") {
		t.Errorf("header with invalid UTF-8: %q", v)
	}
	b := r.obs[2].Service.Probes[0].Banner.Received
	if !b.Truncated || len(b.Bytes()) != MaxBodyBytes || b.Length != 160000 {
		t.Errorf("banner: truncated %v, %d bytes, length %d", b.Truncated, len(b.Bytes()), b.Length)
	}
	// What was stored encodes, and encodes the same after another Normalize.
	for _, o := range r.obs {
		data, _, err := o.Encode()
		if err != nil {
			t.Fatal(err)
		}
		var again Observation
		if err := json.Unmarshal(data, &again); err != nil {
			t.Fatal(err)
		}
		if err := again.Normalize(); err != nil {
			t.Fatal(err)
		}
		if data2, _, _ := again.Encode(); !bytes.Equal(data, data2) {
			t.Errorf("not stable under Normalize:\n%.300s\n%.300s", data, data2)
		}
	}
}

func TestNormalize_ProbeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, probe, want string }{
		{"empty probe", `{}`, "service.probes[0]: needs a request, response, tls or banner"},
		{"bad base64", `{"response":{"body":{"encoding":"base64","data":"!!"}}}`, "service.probes[0].response.body.data: not base64"},
		{"bad encoding", `{"response":{"body":{"encoding":"rot13","data":"x"}}}`, "response.body.encoding"},
		{"bad status", `{"response":{"status":1000}}`, "response.status"},
		{"bad sha256", `{"response":{"body":{"data":"x","sha256":"abc"}}}`, "response.body.sha256"},
		{"bad md5", `{"response":{"body":{"data":"x","md5":"abc"}}}`, "service.probes[0].response.body.md5: want 32 hex digits"},
		{"bad cert sha256", `{"tls":{"sha256":"xyz"}}`, "tls.sha256"},
		{"bad method", `{"request":{"method":"GET /x"}}`, "request.method"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := `{"type":"service","ip":"192.0.2.7","source":"s","observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"transport":"tcp","probes":[` + tt.probe + `]}}` + "\n"
			r := runAdapter(t, NDJSON, in, Options{})
			if len(r.obs) != 0 || len(r.bad) != 1 || !strings.Contains(r.bad[0].Error(), tt.want) {
				t.Errorf("obs=%d bad=%v, want one naming %q", len(r.obs), r.bad, tt.want)
			}
		})
	}
}

// A request target is read in origin form whatever form it was written
// in: an absolute URL gives its path and query (and its host as the Host
// when none is given, never the credentials written into it), a path
// without its leading slash gets one, an empty one is "/".
func TestNormalize_RequestTarget(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, request, path, host string }{
		{"absolute url", `{"path":"https://vpn.example.com/remote/login?lang=en"}`, "/remote/login?lang=en", "vpn.example.com"},
		{"absolute url upper scheme, port", `{"path":"HTTPS://198.51.100.4:10443/remote/logincheck"}`, "/remote/logincheck", "198.51.100.4:10443"},
		{"absolute url keeps given host", `{"path":"http://a.example/dana-na/","host":"b.example"}`, "/dana-na/", "b.example"},
		{"absolute url, no path", `{"path":"https://gp.example.com"}`, "/", "gp.example.com"},
		{"absolute url, query only, fragment", `{"path":"https://gp.example.com?x=1#top"}`, "/?x=1", "gp.example.com"},
		{"credentials dropped", `{"path":"https://user:pw@gw.example/+CSCOE+/logon.html"}`, "/+CSCOE+/logon.html", "gw.example"},
		{"no leading slash", `{"path":"global-protect/login.esp"}`, "/global-protect/login.esp", ""},
		{"empty", `{"method":"HEAD"}`, "/", ""},
		{"asterisk", `{"method":"OPTIONS","path":"*"}`, "*", ""},
		{"connect authority", `{"method":"CONNECT","path":"vpn.example.com:443"}`, "vpn.example.com:443", ""},
		{"origin form kept", `{"path":"/vpn/index.html"}`, "/vpn/index.html", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := `{"type":"service","ip":"192.0.2.7","source":"s","observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"transport":"tcp","probes":[{"request":` + tt.request + `,"response":{"status":200}}]}}` + "\n"
			r := runAdapter(t, NDJSON, in, Options{})
			if len(r.obs) != 1 || len(r.bad) != 0 {
				t.Fatalf("obs=%d bad=%v", len(r.obs), r.bad)
			}
			q := r.obs[0].Service.Probes[0].Request
			if q.Path != tt.path || q.Host != tt.host {
				t.Errorf("path %q host %q, want %q %q", q.Path, q.Host, tt.path, tt.host)
			}
		})
	}
}

// Version 1's evidence becomes probes: the page, each body snippet at its
// path, the favicon hash, the certificate and the banner.
func TestNormalize_UpgradesV1(t *testing.T) {
	t.Parallel()
	in := `{"v":1,"type":"service","ip":"192.0.2.7","source":"s","observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"transport":"tcp",` +
		`"http":{"status":200,"headers":{"Server":"xxxxxxxx-xxxxx"},"cookies":["SVPNCOOKIE"],"title":"Login","bodies":{"/remote/login":"<html>","/":"root"},"favicon_hash":"-76600061"},` +
		`"tls":{"subject":"CN=FGT60F,O=Fortinet","issuer":"/C=US/O=Fortinet/CN=FortiGate CA"},"banner":"SSH-2.0-x"}}` + "\n"
	r := runAdapter(t, NDJSON, in, Options{})
	if len(r.obs) != 1 {
		t.Fatalf("bad: %v", r.bad)
	}
	o := r.obs[0]
	s := o.Service
	if o.V != 2 || s.HTTP != nil || s.TLS != nil || s.Banner != "" || len(s.Probes) != 4 {
		t.Fatalf("not upgraded: %+v", s)
	}
	root := s.Probes[0]
	if root.Request.Path != "/" || root.Response.Status != 200 || root.Response.Title != "Login" || root.Response.Body.Data != "root" ||
		len(root.Response.Headers) != 2 || root.Response.Headers[1].Value != "SVPNCOOKIE=" {
		t.Errorf("root probe: %+v", root.Response)
	}
	if root.TLS == nil || root.TLS.Subject.CN != "FGT60F" || root.TLS.Subject.O[0] != "Fortinet" || root.TLS.Issuer.CN != "FortiGate CA" || root.TLS.Issuer.C != "US" {
		t.Errorf("tls: %+v %+v", root.TLS.Subject, root.TLS.Issuer)
	}
	if p := s.Probes[1]; p.Request.Path != "/remote/login" || p.Response.Body.Data != "<html>" {
		t.Errorf("body probe: %+v", p)
	}
	if p := s.Probes[2]; p.Request.Path != "/favicon.ico" || *p.Response.Body.MMH3 != -76600061 {
		t.Errorf("favicon probe: %+v", p)
	}
	if p := s.Probes[3]; p.Banner.Received.Data != "SSH-2.0-x" {
		t.Errorf("banner probe: %+v", p)
	}
}

func TestParseDN(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want DN
	}{
		{"CN=FGT60F,OU=FortiGate,O=Fortinet,L=Sunnyvale,ST=California,C=US", DN{CN: "FGT60F", OU: []string{"FortiGate"}, O: []string{"Fortinet"}, L: "Sunnyvale", ST: "California", C: "US"}},
		{"/C=US/ST=CA/O=Palo Alto Networks/CN=gp.example.com/emailAddress=a@b", DN{CN: "gp.example.com", O: []string{"Palo Alto Networks"}, ST: "CA", C: "US", Email: "a@b"}},
		{`CN=a\, b,O="x, y"`, DN{CN: "a, b", O: []string{"x, y"}}},
		// Suricata 4.x: OpenSSL's one-line form joins the e-mail address to the CN.
		{"C=US, ST=CA, L=Santa Clara, O=Palo Alto Networks, OU=Support, CN=localhost/emailAddress=support@paloaltonetworks.com",
			DN{CN: "localhost", O: []string{"Palo Alto Networks"}, OU: []string{"Support"}, L: "Santa Clara", ST: "CA", C: "US", Email: "support@paloaltonetworks.com"}},
		// a slash that starts no attribute stays in the value
		{"CN=vpn/portal, O=a/b", DN{CN: "vpn/portal", O: []string{"a/b"}}},
	}
	for _, tt := range tests {
		got := ParseDN(tt.in)
		tt.want.DN = tt.in
		if g, w := jsonOf(t, got), jsonOf(t, &tt.want); g != w {
			t.Errorf("ParseDN(%q) = %s, want %s", tt.in, g, w)
		}
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestObservation_DataClass: the class follows the content (a flow is
// netflow, a residential-proxy signal or range residential), never the
// source's name, and a source's declared class only restricts further.
func TestObservation_DataClass(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		o    Observation
		want string
	}{
		{"flow from a source named edge", Observation{Type: TypeFlow, Source: "edge", Flow: &Flow{}}, "netflow"},
		{"residential signal from sightings", Observation{Type: TypeSignal, Source: "sightings", Signal: &Signal{Kind: "residential_proxy"}}, "residential"},
		{"residential range", Observation{Type: TypeRange, Source: "x", Range: &Range{Kind: "residential_proxy"}}, "residential"},
		{"tor exit from a source named residential-feed", Observation{Type: TypeSignal, Source: "residential-feed", Signal: &Signal{Kind: "tor_exit"}}, "standard"},
		{"service from netflow-named source", Observation{Type: TypeService, Source: "netflow-scan", Service: &Service{}}, "standard"},
		{"declared residential", Observation{Type: TypeSignal, Source: "partner", Class: "residential", Signal: &Signal{Kind: "vpn_exit"}}, "residential"},
		{"declared residential flow stays netflow", Observation{Type: TypeFlow, Source: "edge", Class: "residential", Flow: &Flow{}}, "netflow"},
		{"declared netflow signal", Observation{Type: TypeSignal, Source: "telemetry", Class: "netflow", Signal: &Signal{Kind: "residential_proxy"}}, "netflow"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.o.DataClass(); got != tc.want {
				t.Errorf("DataClass() = %q, want %q", got, tc.want)
			}
		})
	}
	o := Observation{Type: TypeSignal, IP: "192.0.2.1", Source: "s", ObservedAt: "2026-11-20T10:00:00Z", Signal: &Signal{Kind: "vpn_exit"}, Class: "secret"}
	if err := o.Normalize(); err == nil || !strings.Contains(err.Error(), "class:") {
		t.Errorf("unknown class: %v", err)
	}
	o.Class = "standard"
	if err := o.Normalize(); err != nil || o.Class != "" {
		t.Errorf("standard: %v, class %q (want the default, omitted)", err, o.Class)
	}
}
