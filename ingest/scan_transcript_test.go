package ingest

import (
	"os"
	"strings"
	"testing"
)

// readTranscript runs the http-transcript adapter over a file of
// testdata/transcript and returns what it emitted, the records it
// reported bad and the skip reasons.
func readTranscript(t *testing.T, name string) (obs []Observation, bad []LineError, skipped []string) {
	t.Helper()
	f, err := os.Open("testdata/transcript/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opt := Options{Skipped: func(_ int, reason string) { skipped = append(skipped, reason) }}
	err = Transcript(f, opt, func(_ int, o Observation) error {
		if err := o.Normalize(); err != nil {
			t.Fatalf("emitted an invalid observation: %v", err)
		}
		obs = append(obs, o)
		return nil
	}, func(e LineError) { bad = append(bad, e) })
	if err != nil {
		t.Fatal(err)
	}
	return obs, bad, skipped
}

// TestTranscript_Files reads real client output: the tools run here
// against the loopback FortiGate replay (ingest/testdata/audit-replay)
// and transcripts published in a course's lab report, a honeypot's
// documentation and a blog (testdata/SOURCES.md), each into the
// connection's address, port and name, the certificate curl, wget or
// openfortivpn printed, and every exchange with its method, path, status,
// headers and body.
func TestTranscript_Files(t *testing.T) {
	t.Parallel()
	type probe struct {
		method, path string
		status       int
		headers      int    // response headers
		header       string // "Name: value" that must be among them
		body         string // prefix of the response body ("" = none)
		bodyLen      int
	}
	tests := []struct {
		file     string
		ip       string
		port     int
		host     string
		tlsVer   string
		subjectO string // the certificate subject's O ("" = no subject read)
		cn       string
		sha256   string
		self     bool
		probes   []probe
	}{
		{file: "curl-v-h2-replay.txt", ip: "127.0.0.1", port: 18443, tlsVer: "TLSv1.3", subjectO: "Fortinet", cn: "FG100ETK1800118",
			probes: []probe{{"GET", "/remote/login", 200, 10, `etag: "83-65132647"`, "<html><script", 131}}},
		{file: "curl-iv-h2-replay.txt", ip: "127.0.0.1", port: 18443, tlsVer: "TLSv1.3", subjectO: "Fortinet", cn: "FG100ETK1800118",
			probes: []probe{{"GET", "/", 200, 10, "content-type: text/html", "<html><script", 131}}},
		{file: "curl-Iv-h1-replay.txt", ip: "127.0.0.1", port: 18443, tlsVer: "TLSv1.3", subjectO: "Fortinet", cn: "FG100ETK1800118",
			probes: []probe{{"HEAD", "/", 200, 10, "X-Frame-Options: SAMEORIGIN", "", 0}}},
		{file: "curl-Iv-lab-rzd-http.txt", ip: "212.164.138.126", port: 80, host: "www.rzd.ru",
			probes: []probe{{"HEAD", "/", 301, 5, "Location: https://www.rzd.ru:443/", "", 0}}},
		{file: "curl-Iv-lab-rzd-https.txt", ip: "212.164.138.123", port: 443, host: "www.rzd.ru", tlsVer: "TLSv1.2", cn: "*.rzd.ru",
			probes: []probe{{"HEAD", "/", 403, 3, "Content-Length: 109", "", 0}}},
		{file: "curl-v-galah-example.txt", ip: "127.0.0.1", port: 8888,
			probes: []probe{{"GET", "/RP?wsrp-url=file://etc/passwd", 200, 4, "Server: Apache/2.4.38", "root:x:0:0:root:/root:/bin/bash\n", 1237}}},
		{file: "wget-S-replay.txt", ip: "127.0.0.1", port: 18443,
			probes: []probe{{"GET", "/remote/login", 200, 10, `Etag: "83-65132647"`, "", 0}}},
		{file: "wget-mdda-blog.txt", ip: "132.147.115.18", port: 80, host: "ardownload.adobe.com",
			probes: []probe{{"GET", "/pub/adobe/reader/unix/9.x/9.5.5/enu/AdbeRdr9.5.5-1_i486linux_enu.rpm", 200, 0, "", "", 0}}},
		{file: "openconnect-fortinet-replay.txt", ip: "127.0.0.1", port: 18443, tlsVer: "TLSv1.3",
			probes: []probe{{"GET", "/", 200, 10, "Content-Length: 131", "<html><script", 131}}},
		{file: "openfortivpn-vv-replay.txt", ip: "127.0.0.1", port: 18443,
			probes: []probe{
				{"POST", "/remote/logincheck", 200, 10, "X-Xss-Protection: 1; mode=block", "<html><script", 131},
				{"GET", "/remote/logout", 200, 10, "Content-Type: text/html", "<html><script", 131},
			}},
		{file: "openssl-s_client-replay.txt", ip: "127.0.0.1", port: 18443, tlsVer: "TLSv1.3", subjectO: "Fortinet", cn: "FG100ETK1800118",
			sha256: "4017759e346c134a4889bfc34cb01fae89b0e4d206a02d798be62be28e2cfafd"}, // openssl x509 -outform der | sha256sum
		{file: "openfortivpn-untrusted-replay.txt", ip: "127.0.0.1", port: 18443, subjectO: "Fortinet", cn: "FG100ETK1800118",
			sha256: "4017759e346c134a4889bfc34cb01fae89b0e4d206a02d798be62be28e2cfafd"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			obs, bad, _ := readTranscript(t, tt.file)
			if len(bad) > 0 {
				t.Fatalf("bad records: %v", bad)
			}
			if len(obs) != 1 {
				t.Fatalf("%d observations, want 1", len(obs))
			}
			o := obs[0]
			if o.IP != tt.ip || o.Service.Port != tt.port || o.Service.Transport != "tcp" {
				t.Errorf("service %s %d/%s, want %s %d/tcp", o.IP, o.Service.Port, o.Service.Transport, tt.ip, tt.port)
			}
			if got := strings.Join(o.Hostnames, ","); got != tt.host {
				t.Errorf("hostnames %q, want %q", got, tt.host)
			}
			var tls *TLS
			var http []Probe
			for _, p := range o.Service.Probes {
				if p.TLS != nil {
					tls = p.TLS
				}
				if p.Request != nil || p.Response != nil {
					http = append(http, p)
				}
			}
			if tt.tlsVer != "" || tt.cn != "" || tt.sha256 != "" {
				if tls == nil {
					t.Fatal("no TLS probe")
				}
				if tls.Version != tt.tlsVer {
					t.Errorf("TLS version %q, want %q", tls.Version, tt.tlsVer)
				}
				if cn := dnCN(tls.Subject); cn != tt.cn {
					t.Errorf("subject CN %q, want %q", cn, tt.cn)
				}
				if tt.subjectO != "" && (tls.Subject == nil || first(tls.Subject.O) != tt.subjectO) {
					t.Errorf("subject %+v, want O=%s", tls.Subject, tt.subjectO)
				}
				if tls.SHA256 != tt.sha256 || tls.SelfSigned != tt.self {
					t.Errorf("sha256 %q self-signed %v, want %q %v", tls.SHA256, tls.SelfSigned, tt.sha256, tt.self)
				}
			} else if tls != nil {
				t.Errorf("TLS probe %+v, want none", tls)
			}
			if len(http) != len(tt.probes) {
				t.Fatalf("%d exchanges, want %d", len(http), len(tt.probes))
			}
			for i, want := range tt.probes {
				p := http[i]
				if p.Request == nil || p.Request.Method != want.method || p.Request.Path != want.path {
					t.Errorf("exchange %d: request %+v, want %s %s", i, p.Request, want.method, want.path)
				}
				r := p.Response
				if r == nil || r.Status != want.status || len(r.Headers) != want.headers {
					t.Fatalf("exchange %d: response %+v, want status %d with %d headers", i, r, want.status, want.headers)
				}
				if want.header != "" && !hasHeaderLine(r.Headers, want.header) {
					t.Errorf("exchange %d: no header %q in %v", i, want.header, r.Headers)
				}
				body := ""
				if r.Body != nil {
					body = r.Body.Data
				}
				if !strings.HasPrefix(body, want.body) || (want.body == "") != (body == "") || (want.bodyLen > 0 && len(body) != want.bodyLen) {
					t.Errorf("exchange %d: body %d bytes %.40q, want %d bytes starting %q", i, len(body), body, want.bodyLen, want.body)
				}
			}
		})
	}
}

func dnCN(d *DN) string {
	if d == nil {
		return ""
	}
	return d.CN
}

func hasHeaderLine(hs Headers, line string) bool {
	name, value, _ := strings.Cut(line, ": ")
	for _, h := range hs {
		if h.Name == name && h.Value == value {
			return true
		}
	}
	return false
}

// TestTranscript_Bad: what is not a transcript is refused on its first
// line, a connection line with an impossible address or port is reported
// by its line and field, and a connection whose address the paste masked
// or named only is skipped with its reason, its exchanges not stored
// under another address.
func TestTranscript_Bad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		obs      int
		bad      []string // substrings of the errors, in order
		skipped  string   // substring of a skip reason
	}{
		{name: "not a transcript", in: "HTTP/1.1 200 OK\nServer: x\n\nhello\n", bad: []string{"line 1", "not a client transcript"}},
		{name: "bad port", in: "* Connected to h (192.0.2.1) port 99999 (#0)\n> GET / HTTP/1.1\n>\n< HTTP/1.1 200 OK\n<\n", bad: []string{"line 1", `bad port "99999"`}, skipped: "no connection"},
		{name: "bad address", in: "Connecting to h (h)|192.0.2.999|:443... connected.\nHTTP request sent, awaiting response... 200 OK\nLength: 1\n", bad: []string{"line 1", `not an IP address: "192.0.2.999"`}, skipped: "no connection"},
		{name: "masked address", in: "* Connected to vpn.example.com (x.x.x.x) port 443 (#0)\n> GET / HTTP/1.1\n>\n< HTTP/1.1 302 Found\n< Location: /remote/login\n<\n", skipped: `address is not shown ("x.x.x.x")`},
		{name: "openfortivpn with a name", in: "DEBUG:  Configuration host = \"vpn.example.com\"\nERROR:  Gateway certificate:\nERROR:      subject:\nERROR:          O=Fortinet\n", skipped: `address is not shown ("vpn.example.com")`},
		{name: "openfortivpn 1.7's Config lines", in: "DEBUG:  Config host = \"192.0.2.9\"\nDEBUG:  Config port = \"10443\"\nERROR:  Gateway certificate:\nERROR:      subject:\nERROR:          O=Fortinet\nERROR:          CN=FGT60E\n", obs: 1},
		{name: "second connection kept apart", in: "* Connected to a (192.0.2.1) port 443 (#0)\n> GET / HTTP/1.1\n>\n< HTTP/1.1 200 OK\n<\n* Connected to b (192.0.2.2) port 8443 (#1)\n> GET /x HTTP/1.1\n>\n< HTTP/1.1 404 Not Found\n<\n", obs: 2},
		{name: "binary and long lines", in: "* Connected to a (192.0.2.1) port 80 (#0)\n> GET / HTTP/1.1\n>\n< HTTP/1.1 200 OK\n< X: \xff\xfe\n<\n" + strings.Repeat("A", 3000) + "\n", obs: 1, bad: []string{"line 7", "longer than 2048 bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var obs int
			var bad []string
			var skipped []string
			opt := Options{MaxLineBytes: 2048, Skipped: func(_ int, r string) { skipped = append(skipped, r) }}
			err := Transcript(strings.NewReader(tt.in), opt, func(_ int, o Observation) error {
				if err := o.Normalize(); err != nil {
					t.Errorf("invalid observation: %v", err)
				}
				obs++
				return nil
			}, func(e LineError) { bad = append(bad, e.Error()) })
			if err != nil {
				t.Fatal(err)
			}
			if obs != tt.obs {
				t.Errorf("%d observations, want %d", obs, tt.obs)
			}
			if len(tt.bad) == 0 && len(bad) > 0 {
				t.Errorf("errors %q, want none", bad)
			}
			for _, want := range tt.bad {
				if len(bad) == 0 || !strings.Contains(bad[0], want) {
					t.Errorf("errors %q, want %q", bad, want)
				}
			}
			if tt.skipped != "" && !strings.Contains(strings.Join(skipped, "|"), tt.skipped) {
				t.Errorf("skipped %q, want %q", skipped, tt.skipped)
			}
		})
	}
}

// TestTranscript_SelfSigned: curl's verify result 18 is the server's own
// certificate self-signed; 19, a self-signed CA at the end of the chain,
// is not.
func TestTranscript_SelfSigned(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		result string
		want   bool
	}{
		{"self-signed certificate (18), continuing anyway.", true},
		{"self signed certificate (18), continuing anyway.", true},
		{"self-signed certificate in certificate chain (19), continuing anyway.", false},
		{"unable to get local issuer certificate (20), continuing anyway.", false},
	} {
		in := "* Connected to h (192.0.2.1) port 443 (#0)\n* Server certificate:\n*  subject: CN=x\n*  SSL certificate verify result: " + tt.result + "\n"
		var got *TLS
		err := Transcript(strings.NewReader(in), Options{}, func(_ int, o Observation) error {
			got = o.Service.Probes[0].TLS
			return nil
		}, func(e LineError) { t.Errorf("bad: %v", e) })
		if err != nil || got == nil || got.SelfSigned != tt.want {
			t.Errorf("%q: TLS %+v err %v, want self-signed %v", tt.result, got, err, tt.want)
		}
	}
}

// TestTranscript_NoCredentials: what a client sent of its user's
// credentials (an Authorization or Cookie header, an openconnect login
// form's body, openfortivpn's logged POST) is not kept; the request's
// method, path and other headers are.
func TestTranscript_NoCredentials(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"curl":         "* Connected to h (192.0.2.1) port 443 (#0)\n> POST /remote/logincheck HTTP/1.1\n> Host: h\n> Authorization: Basic dXNlcjpzM2NyZXQ=\n> Cookie: SVPNCOOKIE=s3cret\n>\n< HTTP/1.1 200 OK\n<\n",
		"openconnect":  "Connected to 192.0.2.1:443\n> POST / HTTP/1.1\n> Host: h\n> Cookie: webvpn=s3cret\n>\n> <auth><username>u</username><password>s3cret</password></auth>\nGot HTTP response: HTTP/1.1 200 OK\nContent-Length: 0\n",
		"openfortivpn": "DEBUG:  gateway_addr: 192.0.2.1\nDEBUG:  gateway_port: 443\nDEBUG:  http_send:\nPOST /remote/logincheck HTTP/1.1\nHost: h\nCookie: SVPNCOOKIE=s3cret\n\nusername=u&credential=s3cret\nDEBUG:  http_receive:\nHTTP/1.1 200 OK\n\n",
	} {
		var got []Observation
		err := Transcript(strings.NewReader(in), Options{}, func(_ int, o Observation) error {
			got = append(got, o)
			return nil
		}, func(e LineError) { t.Errorf("%s: bad: %v", name, e) })
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: %d observations, err %v", name, len(got), err)
		}
		b, _, err := got[0].Encode()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "s3cret") || strings.Contains(string(b), "dXNlcjpz") {
			t.Errorf("%s: a credential was kept: %s", name, b)
		}
		var req *Request
		for _, p := range got[0].Service.Probes {
			if p.Request != nil {
				req = p.Request
			}
		}
		if req == nil || req.Method != "POST" || req.Host != "h" || len(req.Headers) != 1 || req.Headers[0].Name != "Host" || req.Body != nil {
			t.Errorf("%s: request %+v, want POST with its Host header alone", name, req)
		}
	}
}
