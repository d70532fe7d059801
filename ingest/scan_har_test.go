package ingest

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// runScanWarn is runScan that also collects the warnings.
func runScanWarn(t *testing.T, format, input string) (scanResult, []string) {
	t.Helper()
	var r scanResult
	var warns []string
	opt := Options{ObservedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Skipped: func(_ int, reason string) { r.skipped = append(r.skipped, reason) },
		Warn:    func(_ int, msg string) { warns = append(warns, msg) }}
	r.result = runAdapter(t, Adapters()[format], input, opt)
	return r, warns
}

// The HAR exports of mitmproxy's test data (testdata/SOURCES.md): Chrome,
// Charles, mitmproxy, Firefox and Insomnia wrote them.
func TestHAR_RealSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file     string
		ips      []string // the services, in order
		probes   []int
		skipped  int
		warnings int
	}{
		// entry 2 was blocked (status 0, no serverIPAddress)
		{"mitmproxy-chrome.har", []string{"108.138.246.80", "142.250.185.164"}, []int{1, 1}, 1, 0},
		{"mitmproxy-charles.har", []string{"13.35.121.50"}, []int{1}, 0, 0},
		{"mitmproxy-successful_log.har", []string{"93.184.216.34", "54.211.216.104"}, []int{1, 1}, 0, 0},
		// Firefox writes no serverIPAddress for what it took from its cache: 9 entries known by name only
		{"mitmproxy-firefox.har", []string{"13.35.121.55", "52.218.234.208"}, []int{4, 1}, 9, 9},
		{"mitmproxy-insomnia.har", nil, nil, 1, 1},
		{"mitmproxy-with-bom.har", []string{"99.83.181.31"}, []int{1}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			r, warns := runScanWarn(t, "har", readFile(t, "har/"+tt.file))
			if len(r.bad) != 0 {
				t.Fatalf("bad: %v", r.bad)
			}
			var ips []string
			var probes []int
			for _, o := range r.obs {
				ips = append(ips, o.IP)
				probes = append(probes, len(o.Service.Probes))
				if o.Source != "har" || o.Service.Transport != "tcp" || o.Service.Port != 443 {
					t.Errorf("observation %s", mustJSON(t, o))
				}
			}
			if !slices.Equal(ips, tt.ips) || !slices.Equal(probes, tt.probes) || len(r.skipped) != tt.skipped || len(warns) != tt.warnings {
				t.Errorf("ips %v probes %v skipped %q warnings %q; want %v %v %d %d", ips, probes, r.skipped, warns, tt.ips, tt.probes, tt.skipped, tt.warnings)
			}
			for _, w := range warns {
				if !strings.HasPrefix(w, "entry ") || !strings.Contains(w, "https://") && !strings.Contains(w, "http://") {
					t.Errorf("warning does not name the entry: %q", w)
				}
			}
		})
	}
}

func TestHAR_ChromeEntry(t *testing.T) {
	t.Parallel()
	r := runScan(t, "har", readFile(t, "har/mitmproxy-chrome.har"))
	o := r.obs[0]
	p := o.Service.Probes[0]
	if o.ObservedAt != "2023-03-30T00:00:54Z" || !slices.Equal(o.Hostnames, []string{"mitmproxy.org"}) {
		t.Errorf("observation %s", mustJSON(t, o))
	}
	if p.Request.Method != "GET" || p.Request.Path != "/" || p.Request.Host != "mitmproxy.org" ||
		len(headerValues(p.Request.Headers, "if-none-match")) != 1 {
		t.Errorf("request %s", mustJSON(t, p.Request))
	}
	// content.encoding base64: the body is the page's bytes, whole (content.size 23866)
	if p.Response.Status != 304 || p.Response.Protocol != "HTTP/2" || p.Response.Body == nil ||
		p.Response.Body.Length != 23866 || p.Response.Body.Truncated || !strings.Contains(p.Response.Body.Text(), "<title>mitmproxy") {
		t.Errorf("response status %d protocol %q body %+v", p.Response.Status, p.Response.Protocol, p.Response.Body)
	}
	if len(headerValues(p.Response.Headers, "server")) != 1 {
		t.Errorf("response headers %s", mustJSON(t, p.Response.Headers))
	}
	// the logo (a PNG) is kept as its bytes
	if b := r.obs[1].Service.Probes[0].Response.Body; b == nil || b.Encoding != EncodingBase64 || b.Length != 7108 {
		t.Errorf("png body %+v", b)
	}
}

// What a recorded request carries of its client's credentials (session
// cookies, a login form's body) is not kept; what the server answered is.
func TestHAR_Credentials(t *testing.T) {
	t.Parallel()
	r := runScan(t, "har", readFile(t, "har/mitmproxy-chrome.har"))
	q := r.obs[1].Service.Probes[0].Request // Chrome sent Google's session cookies
	if len(headerValues(q.Headers, "cookie")) != 0 {
		t.Errorf("request cookies kept: %s", mustJSON(t, q.Headers))
	}
	r = runScan(t, "har", readFile(t, "har/mitmproxy-successful_log.har"))
	if q := r.obs[1].Service.Probes[0].Request; q.Method != "POST" || q.Body != nil {
		t.Errorf("POST body kept: %s", mustJSON(t, q))
	}
}

// A unit test of the mapping of Chrome's _securityDetails (no real HAR
// with it was found: testdata/SOURCES.md).
func TestHAR_SecurityDetails(t *testing.T) {
	t.Parallel()
	in := `{"log":{"entries":[{"startedDateTime":"2026-01-02T03:04:05Z","serverIPAddress":"[2001:db8::1]","request":{"method":"GET","url":"https://vpn.example/remote/login"},` +
		`"response":{"status":200,"headers":[{"name":"Set-Cookie","value":"a=1"},{"name":"Set-Cookie","value":"b=2"}],"content":{"size":5,"text":"aGVsbG8=","encoding":"base64"}},` +
		`"_securityDetails":{"protocol":"TLS 1.2","cipher":"AES_256_GCM","subjectName":"FGT60E","sanList":["vpn.example"],"issuer":"support","validFrom":1577836800,"validTo":1893456000}}]}}`
	r := runScan(t, "har", in)
	if len(r.obs) != 1 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	p := r.obs[0].Service.Probes[0]
	if r.obs[0].IP != "2001:db8::1" || p.TLS == nil || p.TLS.Version != "TLSv1.2" || p.TLS.Subject.CN != "FGT60E" || p.TLS.Issuer.CN != "support" ||
		p.TLS.NotBefore != "2020-01-01T00:00:00Z" || !slices.Equal(p.TLS.SANs, []string{"vpn.example"}) {
		t.Errorf("probe %s", mustJSON(t, p))
	}
	if p.Response.Body.Text() != "hello" || !slices.Equal(headerValues(p.Response.Headers, "Set-Cookie"), []string{"a=1", "b=2"}) {
		t.Errorf("response %s", mustJSON(t, p.Response))
	}
}

func TestHAR_Malformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		obs      int
		bad      []int
		errText  string
	}{
		{"not HAR", `{"entries":[]}`, 0, []int{1}, "not a HAR file"},
		{"entries not an array", "{\"log\":\n{\"entries\": {}}}", 0, []int{2}, "not an array"},
		{"bad entries", "{\"log\":{\"entries\":[\n" +
			`{"request":{"method":"GET","url":"http://192.0.2.1/"},"response":{"status":200}},` + "\n" +
			`{"request":{"method":"GET","url":"/relative"},"response":{"status":200}},` + "\n" +
			`{"serverIPAddress":"not-an-ip","request":{"method":"GET","url":"http://h/"},"response":{"status":200}},` + "\n" +
			`{"request":{"method":"GET","url":"http://192.0.2.1/"},"response":{"status":"abc"}},` + "\n" +
			`{"request":{"method":"GET","url":"http://192.0.2.1/"},"response":{"status":200,"content":{"text":"%%","encoding":"base64"}}},` + "\n" +
			`{"request":{"method":"GET","url":"http://192.0.2.1/"}},` + "\n" +
			`{"request":{"method":"GET","url":"http://192.0.2.1:99999/"},"response":{"status":200}},` + "\n" +
			`{bad json` + "\n]}}", 1, []int{3, 4, 5, 6, 7, 8, 9}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "har", tt.in)
			if len(r.obs) != tt.obs || !slices.Equal(badLines(r.bad), tt.bad) {
				t.Errorf("obs %d bad %v; want %d %v", len(r.obs), r.bad, tt.obs, tt.bad)
			}
			if tt.errText != "" && (len(r.bad) == 0 || !strings.Contains(r.bad[0].Err.Error(), tt.errText)) {
				t.Errorf("bad %v, want %q", r.bad, tt.errText)
			}
			for _, b := range r.bad {
				if tt.name == "bad entries" && !strings.Contains(b.Err.Error(), "entry ") {
					t.Errorf("error does not name the entry: %v", b)
				}
			}
		})
	}
}

// Burp's "Save items" (nuclei's test data) and scanner issue reports
// (DefectDojo's), testdata/SOURCES.md.
func TestBurp_RealSamples(t *testing.T) {
	t.Parallel()
	r := runScan(t, "burp", readFile(t, "burp/nuclei-burp-items.xml"))
	if len(r.bad) != 0 || len(r.obs) != 2 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	o := r.obs[1] // google.com, host ip="216.58.196.110"
	p := o.Service.Probes[0]
	if o.IP != "216.58.196.110" || o.Service.Port != 80 || !slices.Equal(o.Hostnames, []string{"google.com"}) || o.ObservedAt != "2023-09-30T20:08:54Z" ||
		p.Request.Method != "GET" || p.Request.Path != "/" || p.Response.Status != 301 ||
		!slices.Equal(headerValues(p.Response.Headers, "Location"), []string{"http://www.google.com/"}) || p.Response.Body == nil {
		t.Errorf("google item %s", mustJSON(t, o))
	}
	if q := r.obs[0].Service.Probes[0].Request; q.Method != "POST" || q.Body != nil || q.Path != "/scans" {
		t.Errorf("POST item request %s", mustJSON(t, q))
	}

	r = runScan(t, "burp", readFile(t, "burp/dd-one_finding.xml"))
	if len(r.bad) != 0 || len(r.obs) != 1 {
		t.Fatalf("issues: obs %d bad %v", len(r.obs), r.bad)
	}
	o = r.obs[0]
	if o.IP != "192.168.187.137" || o.Service.Port != 80 || len(o.Service.Probes) == 0 || o.ObservedAt != "2014-09-13T22:39:44Z" {
		t.Errorf("issue %s", mustJSON(t, o))
	}
	for _, p := range o.Service.Probes {
		if p.Request == nil || p.Response == nil || p.Response.Status == 0 || len(headerValues(p.Request.Headers, "Cookie")) != 0 {
			t.Errorf("issue probe %s", mustJSON(t, p))
		}
	}
	// an issue whose request/response pair has no response
	r = runScan(t, "burp", readFile(t, "burp/dd-one_finding_with_blank_response.xml"))
	if len(r.bad) != 0 || len(r.obs) != 0 || !slices.Equal(r.skipped, []string{"burp: issue without a response"}) {
		t.Errorf("blank response: obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
}

// Burp 1.5.20 on declares its XML exports version 1.1 (<?xml
// version="1.1"?>, then a comment on NUL bytes), which encoding/xml
// refuses outright: such a report was "not read" whole. A minimal
// reproduction of the issue report shape of
// github:reconmap/php-command-output-parsers/resources/burp-1.5.20-brief.xml@4578da50049048bf316523eb7c1e046c72ff6dcc
// (LGPL-3.0, so written anew here, not copied).
func TestBurp_XML11Declaration(t *testing.T) {
	t.Parallel()
	for _, decl := range []string{`<?xml version="1.1"?>`, "\ufeff<?xml version='1.1' encoding=\"UTF-8\"?>", `<?xml version="1.0"?>`} {
		in := decl + "\n<!-- a comment -->\n<issues burpVersion=\"1.5.20\" exportTime=\"Mon Jan 06 12:00:00 GMT 2014\">\n" +
			`<issue><name>x</name><host ip="192.0.2.10">https://vpn.example:443</host><path>/</path>` +
			`<requestresponse><request base64="false"><![CDATA[GET / HTTP/1.1` + "\r\nHost: vpn.example\r\n\r\n" + `]]></request>` +
			`<response base64="false"><![CDATA[HTTP/1.1 200 OK` + "\r\nServer: xxxxxxxx-xxxxx\r\n\r\n" + `version 1.1]]></response></requestresponse></issue>` + "\n</issues>\n"
		r := runScan(t, "burp", in)
		if len(r.bad) != 0 || len(r.obs) != 1 || r.obs[0].IP != "192.0.2.10" || r.obs[0].Service.Port != 443 {
			t.Errorf("%s: obs %d bad %v", decl, len(r.obs), r.bad)
			continue
		}
		if b := r.obs[0].Service.Probes[0].Response.Body; b == nil || !strings.Contains(b.Data, "version 1.1") {
			t.Errorf("%s: body changed: %s", decl, mustJSON(t, r.obs[0]))
		}
	}
}

// Burp keeps NUL bytes of raw messages in its XML unless they are
// base64-encoded (its export's comment says so); encoding/xml stops at the
// first one, and the items after it were lost. A reproduction written anew.
func TestBurp_NULBytes(t *testing.T) {
	t.Parallel()
	item := func(ip, body string) string {
		return `<item><url>http://` + ip + `/</url><host ip="` + ip + `">h</host><port>80</port><request base64="false"><![CDATA[GET / HTTP/1.1` + "\r\n\r\n" + `]]></request>` +
			`<response base64="false"><![CDATA[HTTP/1.1 200 OK` + "\r\nContent-Type: application/octet-stream\r\n\r\n" + body + `]]></response></item>` + "\n"
	}
	in := "<?xml version=\"1.1\"?>\n<items burpVersion=\"1.5.20\">\n" + item("192.0.2.1", "a\x00b") + item("192.0.2.2", "ok") + "</items>\n"
	r := runScan(t, "burp", in)
	if len(r.bad) != 0 || len(r.obs) != 2 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	if b := r.obs[0].Service.Probes[0].Response.Body; b == nil || b.Data != "a\uFFFDb" {
		t.Errorf("body with a NUL: %s", mustJSON(t, r.obs[0].Service.Probes[0].Response))
	}
}

func TestBurp_Malformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		obs      int
		bad      []int
	}{
		{"not burp", `<nmaprun></nmaprun>`, 0, []int{1}},
		{"items", "<items burpVersion=\"1\">\n" +
			`<item><url>http://192.0.2.1/</url><host ip="192.0.2.1">a</host><port>80</port><request>GET / HTTP/1.1` + "\r\n\r\n" + `</request><response>HTTP/1.1 200 OK` + "\r\n\r\n" + `</response></item>` + "\n" +
			`<item><url>http://h/</url><host ip="999.0.0.1">h</host><port>80</port><response>HTTP/1.1 200 OK</response></item>` + "\n" +
			`<item><url>x</url><host ip="192.0.2.1">h</host><port>x</port><response>HTTP/1.1 200 OK</response></item>` + "\n" +
			`<item><url>http://192.0.2.1/</url><host ip="192.0.2.1">h</host><port>80</port><response base64="true">%%%</response></item>` + "\n" +
			`<item><url>http://192.0.2.1/</url><host ip="192.0.2.1">h</host><port>80</port>` + "\n" + `<response>` + "\n</items>", 1, []int{7, 8, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "burp", tt.in)
			if len(r.obs) != tt.obs || !slices.Equal(badLines(r.bad), tt.bad) {
				t.Errorf("obs %d bad %v; want %d %v", len(r.obs), r.bad, tt.obs, tt.bad)
			}
		})
	}
}

// A 50 MB body, a 1 MB header and bytes that are not UTF-8 are stored cut
// and flagged, never lost with their record.
func TestHAR_LargeAndBinary(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("a", 50<<20)
	header := strings.Repeat("b", 1<<20)
	in := `{"log":{"entries":[{"serverIPAddress":"192.0.2.1","request":{"method":"GET","url":"http://192.0.2.1/"},"response":{"status":200,` +
		`"headers":[{"name":"X-Big","value":"` + header + `"},{"name":"X-Bin","value":"` + "\xff\xfe" + `"}],"content":{"size":52428800,"text":"` + body + `"}}}]}}`
	r := runScan(t, "har", in)
	if len(r.bad) != 0 || len(r.obs) != 1 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	resp := r.obs[0].Service.Probes[0].Response
	if b := resp.Body; !b.Truncated || b.Length != 50<<20 || len(b.Data) > MaxBodyBytes {
		t.Errorf("body truncated %v length %d data %d", b.Truncated, b.Length, len(b.Data))
	}
	for _, h := range resp.Headers {
		if h.Name == "X-Big" && (!h.Truncated || len(h.Value) > MaxHeaderBytes) {
			t.Errorf("header truncated %v len %d", h.Truncated, len(h.Value))
		}
	}
	if v := headerValues(resp.Headers, "X-Bin"); len(v) != 1 || v[0] == "" {
		t.Errorf("binary header %q", v)
	}
}
