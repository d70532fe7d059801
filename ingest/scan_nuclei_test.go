package ingest

import (
	"slices"
	"strings"
	"testing"
)

func TestNuclei_RealSample(t *testing.T) {
	t.Parallel()
	r := runScan(t, "nuclei", readFile(t, "nuclei.jsonl"))
	if len(r.obs) != 2 || len(r.bad) != 0 || len(r.skipped) != 0 {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}

	// Line 1 (nuclei v2.6+, 2022): no raw request or response, host a
	// URL, the port in matched-at; the request from curl-command; the
	// template and its matcher as detected.
	o := r.obs[0]
	if o.IP != "138.197.231.124" || o.Service.Port != 443 || o.ObservedAt != "2022-04-15T21:09:01Z" || strings.Join(o.Hostnames, ",") != "api.publicapis.org" {
		t.Errorf("line 1 = %s", mustJSON(t, o))
	}
	if len(o.Service.Probes) != 0 {
		t.Errorf("line 1 has no response, yet probes %s", mustJSON(t, o.Service.Probes))
	}
	d := o.Service.Detected
	if d == nil || d.By != "nuclei" || d.Product != "nuclei:tech-detect" || d.Service != "https" ||
		d.Info != "name: Wappalyzer Technology Detection; matcher: caddy; tags: tech; severity: info" {
		t.Errorf("line 1 detected = %+v", d)
	}

	// Line 2 (nuclei v3, 2026, -jsonl): the raw request and response.
	o = r.obs[1]
	if o.IP != "192.168.81.3" || o.Service.Port != 3000 || o.ObservedAt != "2026-02-27T02:47:26Z" || strings.Join(o.Hostnames, ",") != "juiceshop" ||
		len(o.Service.Probes) != 1 {
		t.Fatalf("line 2 = %s", mustJSON(t, o))
	}
	p := o.Service.Probes[0]
	if q := p.Request; q.Method != "GET" || q.Path != "/api-docs/swagger.json" || q.Host != "juiceshop" || len(q.Headers) != 5 ||
		q.Headers[1].Name != "User-Agent" || q.Headers[4].Value != "gzip" {
		t.Errorf("line 2 request = %s", mustJSON(t, q))
	}
	var names []string
	for _, h := range p.Response.Headers {
		names = append(names, h.Name)
	}
	if want := "Connection,Transfer-Encoding,Access-Control-Allow-Origin,Content-Type,Date,Etag,Feature-Policy,Vary,X-Content-Type-Options,X-Frame-Options,X-Recruiting"; strings.Join(names, ",") != want {
		t.Errorf("line 2 header order %v", names)
	}
	if resp := p.Response; resp.Status != 200 || resp.Protocol != "HTTP/1.1" || headerValues(resp.Headers, "Etag")[0] != `W/"c22-H8FH9nKD8DeX/nvIRrte6ZjP2a4"` ||
		!strings.HasPrefix(resp.Body.Text(), "\n<!-- HTML for static distribution bundle build -->\n<!DOCTYPE html>") || !strings.HasSuffix(resp.Body.Text(), "</html>\n") {
		t.Errorf("line 2 response = %s", mustJSON(t, resp))
	}
	if d := o.Service.Detected; d.Product != "nuclei:swagger-api" || d.Service != "http" || !strings.HasPrefix(d.Info, "name: Public Swagger API - Detect; tags: exposure,api,swagger,discovery") {
		t.Errorf("line 2 detected = %+v", d)
	}
}

// The constructed appliance lines: a real FortiGate answer inside
// nuclei's fields, and the same result written with -omit-raw.
func TestNuclei_Appliance(t *testing.T) {
	t.Parallel()
	r := runScan(t, "nuclei", readFile(t, "nuclei-appliance.jsonl"))
	if len(r.obs) != 2 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	o := r.obs[0]
	p := o.Service.Probes[0]
	if o.Service.Port != 443 || len(o.Hostnames) != 0 || p.Response.Status != 200 || !strings.Contains(p.Response.Body.Text(), `top.location="/remote/login";`) ||
		headerValues(p.Response.Headers, "ETag")[0] != `"83-65132647"` || p.Request.Host != "198.51.100.27" {
		t.Errorf("raw = %s", mustJSON(t, o))
	}
	if d := o.Service.Detected; d.Product != "nuclei:fortinet-fortigate-panel" || !strings.Contains(d.Info, "extracted: Release date: Sep 26, 2023") {
		t.Errorf("detected = %+v", d)
	}
	if o := r.obs[1]; o.IP != "198.51.100.28" || len(o.Service.Probes) != 0 || o.Service.Detected.Product != "nuclei:fortinet-fortigate-panel" {
		t.Errorf("omit-raw = %s", mustJSON(t, o))
	}
}

// Each template type, each version's names, and bad input.
func TestNuclei_Shapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		check    func(t *testing.T, r scanResult)
	}{
		{"network template: request and response as a banner",
			`{"template-id":"openssh-detect","info":{"name":"OpenSSH Service - Detect","tags":"network,ssh,openssh,detect","severity":"info","classification":{"cpe":"cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*"}},"extractor-name":"version","type":"tcp","host":"192.0.2.5:22","port":"22","matched-at":"192.0.2.5:22","extracted-results":["SSH-2.0-OpenSSH_9.6"],"request":"\r\n","response":"SSH-2.0-OpenSSH_9.6\r\n","ip":"192.0.2.5","timestamp":"2024-05-01T10:00:00Z","matcher-status":true}`,
			func(t *testing.T, r scanResult) {
				o := r.obs[0]
				b := o.Service.Probes[0].Banner
				if o.Service.Port != 22 || o.Service.Probes[0].Name != "nuclei:openssh-detect" || b.Received.Text() != "SSH-2.0-OpenSSH_9.6\r\n" || b.Sent.Text() != "\r\n" {
					t.Errorf("banner = %s", mustJSON(t, o.Service))
				}
				if d := o.Service.Detected; d.Service != "" || !slices.Equal(d.CPE, []string{"cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*"}) ||
					d.Info != "name: OpenSSH Service - Detect; extractor: version; extracted: SSH-2.0-OpenSSH_9.6; tags: network,ssh,openssh,detect; severity: info" {
					t.Errorf("detected = %+v", d)
				}
			}},
		{"a vulnerability template's CPE is not an identification",
			`{"template-id":"CVE-2020-2034","info":{"name":"PAN-OS GlobalProtect OS Command Injection","severity":"critical","classification":{"cve-id":"CVE-2020-2034","cpe":"cpe:2.3:o:paloaltonetworks:pan-os:*:*:*:*:*:*:*:*"}},"type":"http","host":"https://192.0.2.9","matched-at":"https://192.0.2.9/ssl-vpn/hipreport.esp","ip":"192.0.2.9","timestamp":"2024-05-01T10:00:00Z"}` + "\n" +
				`{"template-id":"CVE-2024-3400","info":{"name":"PAN-OS GlobalProtect - Command Injection","severity":"critical","classification":{"cve-id":["CVE-2024-3400"],"cpe":"cpe:2.3:o:paloaltonetworks:pan-os:*:*:*:*:*:*:*:*"}},"type":"http","host":"https://192.0.2.10","ip":"192.0.2.10"}`,
			func(t *testing.T, r scanResult) {
				if len(r.obs) != 2 {
					t.Fatalf("obs %s", mustJSON(t, r.obs))
				}
				for _, o := range r.obs {
					if d := o.Service.Detected; d == nil || len(d.CPE) != 0 || !strings.HasPrefix(d.Product, "nuclei:CVE-") {
						t.Errorf("detected = %s", mustJSON(t, d))
					}
				}
			}},
		{"ssl templates: what they extract on a TLS probe, 443 by default",
			`{"template-id":"ssl-dns-names","info":{"name":"SSL DNS Names","severity":"info"},"type":"ssl","host":"vpn.example.com","matched-at":"vpn.example.com:443","extracted-results":["vpn.example.com","www.example.com"],"ip":"192.0.2.6","timestamp":"2024-05-01T10:00:00Z"}` + "\n" +
				`{"template-id":"tls-version","info":{"name":"TLS Version - Detect","severity":"info"},"type":"ssl","host":"192.0.2.6:8443","extracted-results":["tls12"],"ip":"192.0.2.6"}` + "\n" +
				`{"template-id":"fortigate-certificate","info":{"name":"Fortinet FortiGate Certificate - Detect","severity":"info"},"type":"ssl","host":"192.0.2.6:10443","port":"10443","ip":"192.0.2.6"}`,
			func(t *testing.T, r scanResult) {
				if len(r.obs) != 3 {
					t.Fatalf("obs %s", mustJSON(t, r.obs))
				}
				if o := r.obs[0]; o.Service.Port != 443 || strings.Join(o.Service.Probes[0].TLS.SANs, ",") != "vpn.example.com,www.example.com" || o.Hostnames[0] != "vpn.example.com" || o.Service.Detected.Service != "tls" {
					t.Errorf("ssl-dns-names = %s", mustJSON(t, o))
				}
				if o := r.obs[1]; o.Service.Port != 8443 || o.Service.Probes[0].TLS.Version != "TLSv1.2" {
					t.Errorf("tls-version = %s", mustJSON(t, o))
				}
				if o := r.obs[2]; o.Service.Port != 10443 || len(o.Service.Probes) != 0 || o.Service.Detected.Product != "nuclei:fortigate-certificate" {
					t.Errorf("fortigate-certificate = %s", mustJSON(t, o))
				}
			}},
		{"nuclei v2.3 to v2.5 names",
			`{"templateID":"apache-detect","info":{"name":"Apache Detection","author":"philippedelteil","severity":"info","tags":"tech,apache"},"matcher_name":"version","type":"http","host":"http://192.0.2.7:8080","matched":"http://192.0.2.7:8080/","extracted_results":["Apache/2.4.6 (CentOS)"],"ip":"192.0.2.7","timestamp":"2021-07-20T10:00:00.1+02:00","response":"HTTP/1.1 200 OK\r\nServer: Apache/2.4.6 (CentOS)\r\n\r\nhi"}`,
			func(t *testing.T, r scanResult) {
				o := r.obs[0]
				if o.Service.Port != 8080 || o.ObservedAt != "2021-07-20T08:00:00Z" || headerValues(o.Service.Probes[0].Response.Headers, "Server")[0] != "Apache/2.4.6 (CentOS)" ||
					o.Service.Probes[0].Request.Path != "/" || o.Service.Detected.Info != "name: Apache Detection; matcher: version; extracted: Apache/2.4.6 (CentOS); tags: tech,apache; severity: info" {
					t.Errorf("v2.3 = %s", mustJSON(t, o))
				}
			}},
		{"nuclei v2.0 to v2.2: template is the id, info at the top level",
			// An output line quoted in a scanner's README (code index file
			// id 33034586865): the host a name, no ip.
			`{"severity":"info","matcher_name":"apachegeneric","matched":"https://www.ohlinge.cn/","template":"waf-detect","type":"http","host":"https://www.ohlinge.cn","name":"WAF Detection","author":"dwisiswant0"}` + "\n" +
				`{"template":"waf-detect","severity":"info","matcher_name":"apachegeneric","matched":"https://192.0.2.8/","type":"http","host":"https://192.0.2.8","name":"WAF Detection","response":"HTTP/1.1 403 Forbidden\r\n\r\n"}`,
			func(t *testing.T, r scanResult) {
				if len(r.bad) != 1 || !strings.Contains(r.bad[0].Error(), `line 1: host: not an IP address: "www.ohlinge.cn"`) {
					t.Errorf("bad %v", r.bad)
				}
				if o := r.obs[0]; o.Service.Port != 443 || o.Service.Detected.Product != "nuclei:waf-detect" || o.Service.Detected.Info != "name: WAF Detection; matcher: apachegeneric; severity: info" {
					t.Errorf("v2.0 = %s", mustJSON(t, o))
				}
			}},
		{"-json-export array, one line as nuclei writes it",
			`[{"template-id":"a","info":{"name":"A"},"type":"http","host":"192.0.2.9:80","port":"80","ip":"192.0.2.9","response":"HTTP/1.1 200 OK\r\n\r\n"},{"template-id":"b","info":{"name":"B"},"type":"http","host":"192.0.2.9:80","port":"0","ip":"192.0.2.9"},{"template-id":"c","info":{"name":"C"},"type":"dns","host":"example.com"}]`,
			func(t *testing.T, r scanResult) {
				if len(r.obs) != 1 || len(r.bad) != 1 || !strings.Contains(r.bad[0].Error(), "line 1: element 2: port: must be 1..65535") ||
					strings.Join(r.skipped, ",") != "nuclei dns result (no service of the address)" {
					t.Errorf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
				}
			}},
		{"-json-export array pretty-printed, cut",
			"[\n  {\"template-id\":\"a\",\"info\":{\"name\":\"A\"},\"type\":\"tcp\",\"host\":\"192.0.2.9:23\",\"ip\":\"192.0.2.9\",\"response\":\"login: \"},\n  {\"template-id\": \n",
			func(t *testing.T, r scanResult) {
				if len(r.obs) != 1 || len(r.bad) != 1 || r.bad[0].Line != 3 || r.obs[0].Service.Port != 23 {
					t.Errorf("obs %d bad %v", len(r.obs), r.bad)
				}
			}},
		{"malformed lines reported, the rest read; failed matchers and file results skipped",
			`{"template-id":"x","info":{"name":"X"},"type":"http","host":"http://192.0.2.10","ip":"192.0.2.10","response":"HTTP/1.1 200 OK\r\n\r\n"}` + "\n" +
				"{broken\n" +
				`{"template-id":"x","info":{},"type":"http","ip":"999.1.1.1","port":"80"}` + "\n" +
				`{"info":{"name":"no id"},"type":"http","ip":"192.0.2.10","port":"80"}` + "\n" +
				`{"template-id":"x","info":{},"type":"tcp","ip":"192.0.2.10"}` + "\n" +
				`{"template-id":"x","info":{},"type":"http","ip":"192.0.2.10","port":"80","matcher-status":false}` + "\n" +
				`{"template-id":"x","info":{},"type":"file","host":"/etc/passwd","matched-at":"/etc/passwd"}` + "\n" +
				`{"template-id":"x","info":{},"ip":"192.0.2.10","port":"80"}` + "\n",
			func(t *testing.T, r scanResult) {
				if !slices.Equal(badLines(r.bad), []int{2, 3, 4, 5, 8}) || !strings.Contains(r.bad[4].Error(), "type: missing") || len(r.obs) != 1 || r.obs[0].Service.Port != 80 {
					t.Errorf("obs %d bad %v", len(r.obs), r.bad)
				}
				if !strings.Contains(r.bad[1].Error(), `ip: not an IP address: "999.1.1.1"`) || !strings.Contains(r.bad[2].Error(), `not a nuclei result: want "template-id"`) ||
					!strings.Contains(r.bad[3].Error(), "port: missing") {
					t.Errorf("errors %v", r.bad)
				}
				if strings.Join(r.skipped, ",") != "nuclei template did not match (matcher-status false),nuclei file result (no service of the address)" {
					t.Errorf("skipped %v", r.skipped)
				}
			}},
		{"headless template, request from curl-command when the raw is omitted",
			`{"template-id":"h","info":{"name":"H"},"type":"headless","host":"https://192.0.2.11:8443/login","ip":"192.0.2.11","curl-command":"curl -X 'POST' -d 'a=1' -H 'X-Test: \"q\"' 'https://192.0.2.11:8443/login?next=%2F'","response":"HTTP/1.1 302 Found\r\nLocation: /home\r\n\r\n"}`,
			func(t *testing.T, r scanResult) {
				p := r.obs[0].Service.Probes[0]
				if r.obs[0].Service.Port != 8443 || p.Request.Method != "POST" || p.Request.Path != "/login?next=%2F" || headerValues(p.Request.Headers, "X-Test")[0] != `"q"` || p.Response.Status != 302 {
					t.Errorf("headless = %s", mustJSON(t, r.obs[0]))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "nuclei", tt.in)
			if len(r.obs) == 0 {
				t.Fatalf("no observations; bad %v skipped %v", r.bad, r.skipped)
			}
			tt.check(t, r)
		})
	}
}

// Fed another tool's output, the nuclei, tlsx, LeakIX and ONYPHE adapters
// store nothing and report the first record that did not fit; every other
// scanner adapter stores nothing of their samples, but naabu: a tlsx line
// and a LeakIX event have naabu's ip, host and port, and do say the port
// is open.
func TestNewScanAdapters_WrongFormat(t *testing.T) {
	t.Parallel()
	files := map[string]string{"zgrab2": "zgrab2.jsonl", "masscan": "masscan.json", "nmap-xml": "nmap-complex.xml", "shodan": "shodan.jsonl",
		"sonar-http": "sonar-http.jsonl", "httpx": "httpx.jsonl", "naabu": "naabu.jsonl", "fingerprintx": "fingerprintx.jsonl",
		"nmap-grep": "nmap-grep.gnmap", "censys": "censys-v2-host.json", "zeek": "zeek-docs.ndjson", "suricata-eve": "suricata-eve.json",
		"goflow2": "goflow2-v2.2.6.ndjson", "nuclei": "nuclei.jsonl", "tlsx": "tlsx.jsonl",
		"leakix": "leakix-ip4scout.jsonl", "onyphe": "onyphe-api-v1.json"}
	mine := []string{"nuclei", "tlsx", "leakix", "onyphe"}
	for format := range files {
		for other, file := range files {
			if other == format || !slices.Contains(mine, format) && !slices.Contains(mine, other) || format == "naabu" && (other == "tlsx" || other == "leakix") {
				continue
			}
			r := runScan(t, format, readFile(t, file))
			if len(r.obs) != 0 {
				t.Errorf("%s reading %s: %d observations", format, file, len(r.obs))
			}
			if slices.Contains(mine, format) && (len(r.bad) == 0 || r.bad[0].Line < 1) {
				t.Errorf("%s reading %s: nothing reported", format, file)
			}
		}
	}
}
