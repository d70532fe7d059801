package ingest

import (
	"slices"
	"strings"
	"testing"
)

func TestHTTPX_RealSample(t *testing.T) {
	t.Parallel()
	r := runScan(t, "httpx", readFile(t, "httpx.jsonl"))
	if len(r.obs) != 8 || len(r.bad) != 0 || len(r.skipped) != 0 {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}

	// Line 1 (BBOT's 2022 sample, -irr): the raw request and response,
	// headers in the server's order, the whole body.
	o := r.obs[0]
	if o.IP != "93.184.216.34" || o.ObservedAt != "2022-11-14T17:15:47Z" || strings.Join(o.Hostnames, ",") != "example.com" ||
		o.Service.Port != 80 || o.Service.Transport != "tcp" || len(o.Service.Probes) != 1 {
		t.Fatalf("line 1 = %s", mustJSON(t, o))
	}
	p := o.Service.Probes[0]
	if q := p.Request; q.Method != "GET" || q.Path != "/" || q.Host != "example.com" ||
		strings.Join(headerValues(q.Headers, "User-Agent"), "") != "Xenu Link Sleuth/1.3.8" || len(q.Headers) != 4 {
		t.Errorf("line 1 request = %s", mustJSON(t, q))
	}
	resp := p.Response
	var names []string
	for _, h := range resp.Headers {
		names = append(names, h.Name)
	}
	if want := "Connection,Age,Cache-Control,Content-Type,Date,Etag,Expires,Last-Modified,Server,Vary,X-Cache"; strings.Join(names, ",") != want {
		t.Errorf("line 1 header order %v, want %s", names, want)
	}
	if resp.Status != 200 || resp.Reason != "OK" || resp.Protocol != "HTTP/1.1" || resp.Title != "Example Domain" ||
		headerValues(resp.Headers, "Server")[0] != "ECS (agb/A434)" || headerValues(resp.Headers, "Etag")[0] != `"3147526947+gzip"` {
		t.Errorf("line 1 response = %s", mustJSON(t, resp))
	}
	if b := resp.Body; b.Length != 1256 || b.Truncated || !strings.HasPrefix(b.Text(), "<!doctype html>\n<html>") ||
		b.SHA256 != "ea8fac7c65fb589b0d53560f5251f74f9e9b243478dcb6b3ea79b5e36449c8d9" {
		t.Errorf("line 1 body length %d truncated %v sha %s", b.Length, b.Truncated, b.SHA256)
	}
	if d := o.Service.Detected; d == nil || d.By != "httpx" || d.Service != "http" {
		t.Errorf("line 1 detected = %+v", d)
	}

	// Line 2: the Set-Cookie of raw_header kept whole, not the header map's.
	if p := r.obs[1].Service.Probes[0]; r.obs[1].IP != "104.16.185.241" || r.obs[1].Service.Port != 443 ||
		!strings.HasPrefix(headerValues(p.Response.Headers, "Set-Cookie")[0], "__cf_bm=PJp0Q02") ||
		headerValues(p.Response.Headers, "Server")[0] != "cloudflare" || p.Response.Body.Text() != "96.65.132.137\n" {
		t.Errorf("line 2 = %s", mustJSON(t, r.obs[1]))
	}

	// Line 3: no headers, no body in the line: the content type httpx
	// reports and the body's hash (the body itself not in the line).
	if p := r.obs[2].Service.Probes[0]; r.obs[2].Service.Port != 9200 || p.Response.Status != 200 ||
		strings.Join(headerValues(p.Response.Headers, "Content-Type"), "") != "application/json" ||
		p.Response.Body.SHA256 != "36f34b6897c72b9ae6a8d9b44c27ffd26361267ec0072fd49721f879c445f197" || !p.Response.Body.Truncated ||
		p.Response.Body.Length != 345 || len(r.obs[2].Service.Probes) != 1 {
		t.Errorf("line 3 = %s", mustJSON(t, r.obs[2]))
	}

	// Line 4: webserver as Server, the title, the favicon's mmh3.
	s4 := r.obs[3].Service
	if len(s4.Probes) != 2 || s4.Probes[0].Response.Title != "在线资产管理平台" || headerValues(s4.Probes[0].Response.Headers, "Server")[0] != "PHP/8.3" {
		t.Errorf("line 4 = %s", mustJSON(t, s4))
	} else if f := s4.Probes[1]; f.Name != "favicon" || f.Request.Path != "/favicon.ico" || f.Response.Body.MMH3 == nil || *f.Response.Body.MMH3 != 673152537 {
		t.Errorf("line 4 favicon = %s", mustJSON(t, f))
	}

	// Line 5: the tlsx response and jarm on the HTTPS probe.
	tls := r.obs[4].Service.Probes[0].TLS
	if tls == nil || tls.Version != "TLSv1.3" || tls.Cipher != "TLS_AES_128_GCM_SHA256" || tls.Subject.CN != "127.0.0.1" ||
		!tls.SelfSigned || strings.Join(tls.SANs, ",") != "localhost" || tls.NotAfter != "2034-05-27T02:32:47Z" ||
		tls.SHA256 != "963f7bc86b3b7a87c7fd26f018cbdc9471a56992dee76f259097a2547e581c2d" ||
		tls.JARM != "3fd3fd20d00000000043d3fd3fd43d684d61a135bd962c8dd9c541ddbaefa8" {
		t.Errorf("line 5 tls = %s", mustJSON(t, tls))
	}

	// Line 6: subject_org, the escaped comma of subject_dn, an empty body.
	tls = r.obs[5].Service.Probes[0].TLS
	if tls == nil || tls.Subject.CN != "baidu.com" || !slices.Equal(tls.Subject.O, []string{"Beijing Baidu Netcom Science Technology Co., Ltd"}) ||
		tls.Subject.C != "CN" || tls.Issuer.CN != "GlobalSign RSA OV SSL CA 2018" || len(tls.SANs) != 53 || tls.Version != "TLSv1.2" {
		t.Errorf("line 6 tls = %s", mustJSON(t, tls))
	}
	if b := r.obs[5].Service.Probes[0].Response.Body; b == nil || b.Truncated || b.SHA256 != emptySHA256 {
		t.Errorf("line 6 body = %s", mustJSON(t, b))
	}
	if r.obs[5].IP != "103.235.46.40" || r.obs[5].Hostnames[0] != "www.baidu.com" || r.obs[5].Service.Probes[0].Request.Host != "www.baidu.com" {
		t.Errorf("line 6 = %s", mustJSON(t, r.obs[5]))
	}

	// Line 7: -asn as a claim, -td as detected, Location.
	o = r.obs[6]
	if len(o.Claims) != 1 || o.Claims[0].OrgName != "LEVEL3" || o.Claims[0].ASN != 3356 || o.Claims[0].SignalSource != "httpx" {
		t.Errorf("line 7 claims = %+v", o.Claims)
	}
	if p := o.Service.Probes[0]; p.Response.Status != 302 || headerValues(p.Response.Headers, "Location")[0] != "https://www.sina.com.cn/" ||
		o.Service.Detected.Info != "tech: Tengine" || *o.Service.Probes[1].Response.Body.MMH3 != -1840324437 {
		t.Errorf("line 7 = %s", mustJSON(t, o.Service))
	}

	// Line 8: httpx before v1.2.5 (status-code, content-type, body-sha256).
	o = r.obs[7]
	if p := o.Service.Probes[0]; o.IP != "103.255.172.222" || o.ObservedAt != "2022-04-15T08:25:31Z" || p.Response.Status != 200 ||
		headerValues(p.Response.Headers, "Content-Type")[0] != "text/html" || p.Response.Body.Length != 484 ||
		p.Response.Body.SHA256 != "39dd202d40bfb8f31078d7a4208fc1fd9fe59330adf6f6f1c0ddbc0766f858dc" {
		t.Errorf("line 8 = %s", mustJSON(t, o))
	}
}

func TestHTTPX_Malformed(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"url":"http://example.com","host":"example.com","status_code":200}`, // no address
		`{"timestamp":"2024-01-01T00:00:00Z","url":"https://192.0.2.1:99999","host":"192.0.2.1","port":"99999","status_code":200}`,
		`not json`,
		`{"a":1}`,
		`{"url":"http://192.0.2.2","input":"192.0.2.2","failed":true}`,
		`{"url":"http://192.0.2.3:8080","host":"192.0.2.3","host_ip":"192.0.2.3","status_code":404,"failed":false}`,
		// -fr: the chain's redirect, then the final response (raw in the chain).
		`{"url":"http://192.0.2.5","host_ip":"192.0.2.5","status_code":200,"final_url":"http://192.0.2.5/login","chain":[{"request":"GET / HTTP/1.1\r\nHost: 192.0.2.5\r\n\r\n","response":"HTTP/1.1 302 Found\r\nLocation: /login\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\n","status_code":302,"location":"/login","request-url":"http://192.0.2.5/"},{"request":"GET /login HTTP/1.1\r\nHost: 192.0.2.5\r\n\r\n","response":"HTTP/1.1 200 OK\r\nServer: fw\r\n\r\n<b>x</b>","status_code":200,"request-url":"http://192.0.2.5/login"}]}`,
		// httpx before v1.2.5: -tls-grab's cryptoutil TLSData.
		`{"url":"https://192.0.2.6:443","host":"192.0.2.6","port":"443","status-code":200,"tls-grab":{"tls_version":"TLSv1.2","dns_names":["a.example","b.example"],"common_name":["a.example"],"organization":["Example Inc"],"issuer_common_name":["R3"],"issuer_organization":["Let's Encrypt"],"fingerprint_sha256":"963F7BC86B3B7A87C7FD26F018CBDC9471A56992DEE76F259097A2547E581C2D"}}`,
		// -irrb: raw_header and the body in base64.
		`{"url":"http://192.0.2.4","host_ip":"192.0.2.4","status_code":200,"raw_header":"SFRUUC8xLjEgMjAwIE9LDQpTZXJ2ZXI6IHgNClNldC1Db29raWU6IGE9MQ0KU2V0LUNvb2tpZTogYj0yDQoNCg==","body":"aGk="}`,
	}, "\n")
	r := runScan(t, "httpx", in)
	if got := badLines(r.bad); !slices.Equal(got, []int{1, 2, 3, 4}) {
		t.Errorf("bad lines %v (%v)", got, r.bad)
	}
	if !strings.Contains(r.bad[0].Error(), "host: not an IP address") || !strings.Contains(r.bad[1].Error(), "port: must be 1..65535") {
		t.Errorf("errors %v", r.bad)
	}
	if strings.Join(r.skipped, ",") != "httpx probe failed" {
		t.Errorf("skipped %v", r.skipped)
	}
	if len(r.obs) != 4 || r.obs[0].Service.Port != 8080 || r.obs[0].Service.Probes[0].Response.Status != 404 {
		t.Fatalf("obs %s", mustJSON(t, r.obs))
	}
	if ps := r.obs[1].Service.Probes; len(ps) != 2 || ps[0].Name != "redirect" || ps[0].Response.Status != 302 ||
		len(headerValues(ps[0].Response.Headers, "Set-Cookie")) != 2 || ps[1].Request.Path != "/login" ||
		headerValues(ps[1].Response.Headers, "Server")[0] != "fw" || ps[1].Response.Status != 200 || ps[1].Response.Body.Text() != "<b>x</b>" {
		t.Errorf("chain = %s", mustJSON(t, ps))
	}
	if tls := r.obs[2].Service.Probes[0].TLS; tls == nil || tls.Subject.CN != "a.example" || tls.Subject.O[0] != "Example Inc" || tls.Issuer.CN != "R3" ||
		strings.Join(tls.SANs, ",") != "a.example,b.example" || tls.SHA256 != "963f7bc86b3b7a87c7fd26f018cbdc9471a56992dee76f259097a2547e581c2d" || tls.Version != "TLSv1.2" {
		t.Errorf("tls-grab = %s", mustJSON(t, r.obs[2].Service.Probes[0]))
	}
	p := r.obs[3].Service.Probes[0]
	if got := headerValues(p.Response.Headers, "Set-Cookie"); len(got) != 2 || p.Response.Body.Text() != "hi" || headerValues(p.Response.Headers, "Server")[0] != "x" {
		t.Errorf("base64 line = %s", mustJSON(t, p))
	}
}

func TestNaabu_RealSample(t *testing.T) {
	t.Parallel()
	r := runScan(t, "naabu", readFile(t, "naabu.jsonl"))
	if len(r.obs) != 7 || len(r.bad) != 0 || len(r.skipped) != 0 {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	if o := r.obs[0]; o.IP != "8.8.8.8" || o.Service.Port != 443 || o.Service.Transport != "tcp" || o.ObservedAt != "2022-08-03T16:01:15Z" ||
		len(o.Service.Probes) != 0 || o.Service.Detected != nil {
		t.Errorf("line 1 = %s", mustJSON(t, o))
	}
	if o := r.obs[1]; o.IP != "104.16.99.52" || o.Service.Port != 8080 || o.Hostnames[0] != "hackerone.com" || o.ObservedAt != "2026-11-01T00:00:00Z" {
		t.Errorf("line 2 = %s", mustJSON(t, o))
	}
	if o := r.obs[5]; o.IP != "2600:3c01::f03c:91ff:fe18:bb2f" || o.Service.Port != 80 {
		t.Errorf("line 6 = %s", mustJSON(t, o))
	}
	if d := r.obs[6].Service.Detected; d == nil || d.By != "nmap" || d.Service != "ssh" || d.Product != "OpenSSH" || d.Version != "10.0p2 Debian 5" ||
		d.Info != "protocol 2.0; os: Linux" {
		t.Errorf("line 7 detected = %+v", d)
	}
	// naabu before v2.0 (issue #37, 2020) wrote the host without its address.
	r = runScan(t, "naabu", `{"host":"hackerone.com","port":443}`)
	if len(r.obs) != 0 || len(r.bad) != 1 || !strings.Contains(r.bad[0].Error(), `line 1: not a naabu result: want "ip"`) {
		t.Errorf("no address: obs %d bad %v", len(r.obs), r.bad)
	}
	// naabu v2.1.0-v2.1.6's port object, host discovery's null port.
	r = runScan(t, "naabu", `{"ip":"192.0.2.7","port":{"Port":53,"Protocol":1,"TLS":false}}`+"\n"+`{"host":"h","ip":"192.0.2.8","port":null,"protocol":"tcp"}`+"\n"+`{"ip":"192.0.2.9","port":0}`)
	if len(r.obs) != 1 || r.obs[0].Service.Transport != "udp" || r.obs[0].Service.Port != 53 || strings.Join(r.skipped, "") != "naabu: host alive, no port" || !slices.Equal(badLines(r.bad), []int{3}) {
		t.Errorf("port forms: obs %s skipped %v bad %v", mustJSON(t, r.obs), r.skipped, r.bad)
	}
}

func TestNmapGrep_RealSample(t *testing.T) {
	t.Parallel()
	r := runScan(t, "nmap-grep", readFile(t, "nmap-grep.gnmap"))
	if len(r.obs) != 13 || len(r.bad) != 0 || len(r.skipped) != 0 {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	o := r.obs[0]
	if d := o.Service.Detected; o.IP != "10.82.182.44" || o.Service.Port != 22 || o.ObservedAt != "2021-09-10T05:14:19Z" ||
		d.By != "nmap" || d.Service != "ssh" || d.Info != "OpenSSH 6.7p1 Debian 5+deb8u8 (protocol 2.0); os: Linux 3.13" {
		t.Errorf("line 3 port 22 = %s", mustJSON(t, o))
	}
	if d := r.obs[4].Service.Detected; r.obs[4].Service.Port != 111 || d.Info != "2-4 (RPC #100000); os: Linux 3.13" {
		t.Errorf("rpcbind = %s", mustJSON(t, r.obs[4]))
	}
	// The Nmap 7.80 file whose tabs were lost: found by keyword.
	if o := r.obs[6]; o.IP != "10.129.2.28" || o.Service.Port != 22 || o.Service.Detected.Info != "" || o.ObservedAt != "2020-06-16T12:14:53Z" {
		t.Errorf("7.80 line = %s", mustJSON(t, o))
	}
	// Lines after "# Nmap done" without a header of their own: the file's time.
	if o := r.obs[9]; o.IP != "10.5.23.5" || o.ObservedAt != "2026-11-01T00:00:00Z" || o.Service.Detected.Info != "OpenSSH 10.2p1 Debian 2 (protocol 2.0)" {
		t.Errorf("headerless line = %s", mustJSON(t, o))
	}
	if d := r.obs[12].Service.Detected; r.obs[12].Service.Port != 443 || d.Service != "ssl/https" || d.Info != "TLB" {
		t.Errorf("ssl|https = %s", mustJSON(t, r.obs[12]))
	}
	// Bad input: line numbers, closed ports skipped.
	r = runScan(t, "nmap-grep", "Host: 192.0.2.1 ()\tPorts: 22/closed/tcp//ssh///, 70000/open/tcp//x///, 23/open/tcp//telnet//x, y/\nHost: nope ()\tPorts: 1/open/tcp/////\ngarbage\n")
	if !slices.Equal(badLines(r.bad), []int{1, 2, 3}) || strings.Join(r.skipped, ",") != "nmap: port closed" || len(r.obs) != 1 || r.obs[0].Service.Detected.Info != "x, y" {
		t.Errorf("bad input: obs %s bad %v skipped %v", mustJSON(t, r.obs), r.bad, r.skipped)
	}
}

func TestFingerprintx_RealSample(t *testing.T) {
	t.Parallel()
	r := runScan(t, "fingerprintx", readFile(t, "fingerprintx.jsonl"))
	if len(r.obs) != 3 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	o := r.obs[0]
	p := o.Service.Probes[0]
	if o.IP != "127.0.0.1" || o.Service.Port != 8000 || o.Service.Transport != "tcp" || p.Response.Status != 200 || p.Response.Reason != "OK" ||
		headerValues(p.Response.Headers, "Server")[0] != "SimpleHTTP/0.6 Python/3.10.6" || len(p.Response.Headers) != 4 ||
		o.Service.Detected.Service != "http" || o.Service.Detected.By != "fingerprintx" || o.Service.Detected.Version != "SimpleHTTP/0.6 Python/3.10.6" {
		t.Errorf("line 1 = %s", mustJSON(t, o))
	}
	if o := r.obs[1]; o.IP != "146.148.61.165" || o.Hostnames[0] != "praetorian.com" || o.Service.Probes[0].Response.Status != 404 ||
		headerValues(o.Service.Probes[0].Response.Headers, "Etag")[0] != `W/"5e3e263f-1703"` {
		t.Errorf("line 2 = %s", mustJSON(t, o))
	}
	// telnet's serverData is hex of the bytes the server sent (IAC WILL SGA).
	if o := r.obs[2]; o.Service.Port != 23 || o.Service.Detected.Service != "telnet" || !slices.Equal(o.Service.Probes[0].Banner.Received.Bytes(), []byte{0xff, 0xfb, 0x03}) {
		t.Errorf("line 3 = %s", mustJSON(t, o))
	}
	r = runScan(t, "fingerprintx", `{"ip":"192.0.2.1","port":3389,"protocol":"rdp","tls":true,"transport":"tcp","metadata":{"fingerprint":"Windows Server 2016 or 2019","osVersion":"10.0.17763"}}`+"\n"+`{"ip":"192.0.2.1","port":0,"protocol":"x"}`+"\n"+`{"ip":"192.0.2.1","port":1}`)
	if len(r.obs) != 1 || r.obs[0].Service.Detected.Info != "tls; fingerprint: Windows Server 2016 or 2019; osVersion: 10.0.17763" || !slices.Equal(badLines(r.bad), []int{2, 3}) {
		t.Errorf("metadata: %s bad %v", mustJSON(t, r.obs), r.bad)
	}
}

// Fed another tool's output, the adapters of this file and of Censys,
// Zeek and Suricata store nothing and report what did not fit, and the
// other adapters store nothing of their files.
func TestMoreScanAdapters_WrongFormat(t *testing.T) {
	t.Parallel()
	files := map[string]string{"zgrab2": "zgrab2.jsonl", "masscan": "masscan.json", "nmap-xml": "nmap-complex.xml", "shodan": "shodan.jsonl",
		"sonar-http": "sonar-http.jsonl", "httpx": "httpx.jsonl", "naabu": "naabu.jsonl", "fingerprintx": "fingerprintx.jsonl",
		"nmap-grep": "nmap-grep.gnmap", "censys": "censys-v2-host.json", "zeek": "zeek-docs.ndjson", "suricata-eve": "suricata-eve.json",
		"goflow2": "goflow2-v2.2.6.ndjson"}
	fresh := []string{"httpx", "naabu", "fingerprintx", "nmap-grep", "censys", "zeek", "suricata-eve"}
	for format := range files {
		for other, file := range files {
			if other == format || !slices.Contains(fresh, format) && !slices.Contains(fresh, other) {
				continue
			}
			r := runScan(t, format, readFile(t, file))
			if len(r.obs) != 0 {
				t.Errorf("%s reading %s: %d observations", format, file, len(r.obs))
			}
		}
	}
}

// TestHTTPX_FaviconMD5: httpx's favicon_md5 is kept as the favicon
// probe's body md5 beside its mmh3; one of the wrong shape is dropped.
func TestHTTPX_FaviconMD5(t *testing.T) {
	t.Parallel()
	in := `{"timestamp":"2024-05-01T10:00:00Z","url":"https://192.0.2.9","input":"192.0.2.9","host":"192.0.2.9","port":"443","scheme":"https","status_code":200,"favicon":"-631559155","favicon_md5":"3AB22B6F3F0D4271E8D038C05CFBD5C9","favicon_path":"/global-protect/portal/images/favicon.ico"}` + "\n" +
		`{"timestamp":"2024-05-01T10:00:00Z","url":"https://192.0.2.10","input":"192.0.2.10","host":"192.0.2.10","port":"443","scheme":"https","status_code":200,"favicon":"1","favicon_md5":"zz"}`
	r := runScan(t, "httpx", in)
	if len(r.obs) != 2 {
		t.Fatalf("obs %s bad %v", mustJSON(t, r.obs), r.bad)
	}
	f := r.obs[0].Service.Probes[len(r.obs[0].Service.Probes)-1]
	if f.Name != "favicon" || f.Response.Body.MD5 != "3ab22b6f3f0d4271e8d038c05cfbd5c9" || *f.Response.Body.MMH3 != -631559155 || f.Request.Path != "/global-protect/portal/images/favicon.ico" {
		t.Errorf("favicon = %s", mustJSON(t, f))
	}
	if f := r.obs[1].Service.Probes[len(r.obs[1].Service.Probes)-1]; f.Response.Body.MD5 != "" {
		t.Errorf("bad md5 kept: %s", mustJSON(t, f))
	}
}

// TestFingerprintx_NervaSnakeCase: nerva, fingerprintx's successor, writes
// the HTTP plugin's status and headers as status_code and
// response_headers; they are the probe's answer as fingerprintx's
// camelCase members are (a Cloudflare edge's 301 a design note pastes,
// group AP5), and its product claims stay detected.
func TestFingerprintx_NervaSnakeCase(t *testing.T) {
	t.Parallel()
	r := runScan(t, "fingerprintx", readFile(t, "nerva-cloudflare-edge.jsonl"))
	if len(r.obs) != 1 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	o := r.obs[0]
	if len(o.Service.Probes) != 1 || o.Service.Probes[0].Response == nil {
		t.Fatalf("probes = %s", mustJSON(t, o.Service.Probes))
	}
	p := o.Service.Probes[0]
	if p.Response.Status != 301 || p.Response.Reason != "Moved Permanently" || headerValues(p.Response.Headers, "Server")[0] != "cloudflare" ||
		headerValues(p.Response.Headers, "Location")[0] != "https://www.example.com/" || len(headerValues(p.Response.Headers, "Server-Timing")) != 2 {
		t.Errorf("answer = %s", mustJSON(t, p.Response))
	}
	if d := o.Service.Detected; d.Version != "cloudflare" || !slices.Contains(d.CPE, "cpe:2.3:o:checkpoint:gaia:*:*:*:*:*:*:*:*") || strings.Contains(d.Info, "status_code") || strings.Contains(d.Info, "response_headers") {
		t.Errorf("detected = %s", mustJSON(t, d))
	}
}

// httpx's default JSON line (DefectDojo's httpx_many_vuln.json) holds no
// body and no hash, only content_length: the body's length is kept.
func TestHTTPX_AT1ContentLengthOnly(t *testing.T) {
	t.Parallel()
	r := runScan(t, "httpx", readFile(t, "httpx/httpx-dd-many-vuln.jsonl"))
	if len(r.obs) != 5 || len(r.bad) != 0 || len(r.skipped) != 0 {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	want := map[string]int64{}
	for _, o := range r.obs {
		p := o.Service.Probes[0]
		if p.Response.Body == nil || !p.Response.Body.Truncated || p.Response.Body.Data != "" {
			t.Fatalf("%s body = %s", p.Request.Path, mustJSON(t, p.Response.Body))
		}
		want[p.Request.Path] = p.Response.Body.Length
	}
	if want["/.git/config"] != 36 || want["/"] != 182 || want["/robots.txt"] != 49 || len(want) != 5 {
		t.Errorf("lengths = %v", want)
	}
}
