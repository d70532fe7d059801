package ingest

import (
	"slices"
	"strings"
	"testing"
)

func TestLeakIX_RealSamples(t *testing.T) {
	t.Parallel()
	// ip4scout's SYN-ACK events (l9format-python's tests, 2021-12-19):
	// open ports, no protocol, no probes.
	r := runScan(t, "leakix", readFile(t, "leakix-ip4scout.jsonl"))
	if len(r.obs) != 5 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	if o := r.obs[0]; o.IP != "205.93.200.123" || o.Service.Port != 1636 || o.Service.Transport != "tcp" || o.ObservedAt != "2021-12-19T14:41:51Z" ||
		len(o.Service.Probes) != 0 || o.Service.Detected.Info != "plugin: ip4scout" || len(o.Claims) != 0 || len(o.Hostnames) != 0 {
		t.Errorf("synack = %s", mustJSON(t, o))
	}

	// l9format's own example event (pretty-printed, as the repository
	// has it): HTTP over TLS, software, the zero time.
	r = runScan(t, "leakix", readFile(t, "leakix-l9event.json"))
	if len(r.obs) != 1 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	o := r.obs[0]
	if o.IP != "127.0.0.1" || o.Service.Port != 8080 || o.ObservedAt != "2026-11-01T00:00:00Z" || strings.Join(o.Hostnames, ",") != "site1.example.com,ptr1.example.com" {
		t.Errorf("event = %s", mustJSON(t, o))
	}
	p := o.Service.Probes[0]
	if p.Request.Path != "/site1/.env" || p.Request.Host != "site1.example.com" || p.Response.Status != 200 || p.Response.Title != "Apache welcome page" ||
		headerValues(p.Response.Headers, "Server")[0] != "Apache" || p.Response.Headers[0].Name != "Content-Type" {
		t.Errorf("http = %s", mustJSON(t, p))
	}
	if x := p.TLS; x == nil || x.Version != "TLSv1.3" || x.Cipher != "TLS_AES_128_GCM_SHA256" || x.JARM != "29d29d00029d29d21c41d41d00041dba71dd2df645850cf5f0b5af18a5fdcf" ||
		x.Subject.CN != "example.com" || x.Issuer.CN != "Rapid SSL" || strings.Join(x.SANs, ",") != "site.example.com,admin.example.com" ||
		x.SHA256 != "e998e371dd4678c9113e196bc5e4a5e901455750c6dbc9985c84403b91055260" || x.NotAfter != "" {
		t.Errorf("tls = %s", mustJSON(t, p.TLS))
	}
	if d := o.Service.Detected; d.By != "leakix" || d.Service != "https" || d.Product != "Apache" || d.Version != "2.2.4" ||
		d.Info != "os: Ubuntu; modules: PHP 4.4.2; plugin: DotEnvConfigPlugin; leak: configuration medium; tags: plc" {
		t.Errorf("detected = %+v", d)
	}
	// The leak's credentials are never kept.
	if strings.Contains(mustJSON(t, o), "SSBhbSBhIGtleQo=") {
		t.Errorf("credentials kept: %s", mustJSON(t, o))
	}
}

func TestLeakIX_Shapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		obs      int
		bad      []int
		check    func(t *testing.T, r scanResult)
	}{
		{"host answer: Services and Leaks, the raw response in summary, ssh banner, network claim",
			`{"Services":[{"event_type":"service","event_source":"HttpPlugin","ip":"192.0.2.1","port":"443","protocol":"https","transport":["tcp","tls","http"],"summary":"HTTP/1.1 302 Found\r\nLocation: /remote/login\r\nX-Frame-Options: SAMEORIGIN\r\n\r\n","time":"2024-05-01T00:00:00Z","http":{"url":"/","status":302},"network":{"organization_name":"Example Net","asn":64500}},` +
				`{"event_type":"service","event_source":"SSHOpenPlugin","ip":"192.0.2.1","port":22,"protocol":"ssh","ssh":{"banner":"SSH-2.0-OpenSSH_8.4"},"time":"2024-05-01T00:00:00Z"}],"Leaks":null}`,
			2, nil, func(t *testing.T, r scanResult) {
				p := r.obs[0].Service.Probes[0]
				if p.Response.Status != 302 || headerValues(p.Response.Headers, "Location")[0] != "/remote/login" || r.obs[0].Claims[0].ASN != 64500 || r.obs[0].Claims[0].SignalSource != "leakix" {
					t.Errorf("https = %s", mustJSON(t, r.obs[0]))
				}
				if b := r.obs[1].Service.Probes[0]; r.obs[1].Service.Port != 22 || b.Name != "leakix:ssh" || b.Banner.Received.Text() != "SSH-2.0-OpenSSH_8.4" {
					t.Errorf("ssh = %s", mustJSON(t, r.obs[1]))
				}
			}},
		{"search answer: an array; bad events reported with their lines",
			"[\n{\"event_type\":\"service\",\"event_source\":\"x\",\"ip\":\"192.0.2.2\",\"port\":\"21\",\"protocol\":\"ftp\",\"summary\":\"220 ProFTPD Server ready.\\r\\n\"},\n" +
				"{\"event_type\":\"service\",\"ip\":\"nope\",\"port\":\"21\"},\n{\"event_type\":\"service\",\"ip\":\"192.0.2.2\",\"port\":\"0\"},\n{\"ip\":\"192.0.2.2\",\"port\":\"80\"}\n]\n",
			1, []int{3, 4, 5}, func(t *testing.T, r scanResult) {
				if b := r.obs[0].Service.Probes[0].Banner; b.Received.Text() != "220 ProFTPD Server ready.\r\n" {
					t.Errorf("ftp = %s", mustJSON(t, r.obs[0]))
				}
				if !strings.Contains(r.bad[0].Error(), `ip: not an IP address: "nope"`) || !strings.Contains(r.bad[2].Error(), "not a LeakIX event") {
					t.Errorf("bad %v", r.bad)
				}
			}},
		{"JSON lines: a broken line reported, the rest read",
			`{"event_type":"service","event_source":"x","ip":"192.0.2.3","port":"80","protocol":"http","http":{"status":200,"header":{"server":"nginx"},"title":"Welcome"}}` + "\n{broken\n" +
				`{"event_type":"service","event_source":"x","ip":"192.0.2.3","port":"8443","protocol":"tls","ssl":{"enabled":true,"version":"TLSv1.2","certificate":{"cn":"fw","not_after":"2030-01-01T00:00:00Z"}}}`,
			2, []int{2}, func(t *testing.T, r scanResult) {
				if p := r.obs[0].Service.Probes[0]; p.Response.Status != 200 || p.Response.Title != "Welcome" || headerValues(p.Response.Headers, "server")[0] != "nginx" {
					t.Errorf("http = %s", mustJSON(t, r.obs[0]))
				}
				if x := r.obs[1].Service.Probes[0].TLS; x.Subject.CN != "fw" || x.NotAfter != "2030-01-01T00:00:00Z" {
					t.Errorf("tls = %s", mustJSON(t, r.obs[1]))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "leakix", tt.in)
			if len(r.obs) != tt.obs || !slices.Equal(badLines(r.bad), tt.bad) {
				t.Fatalf("obs %s bad %v", mustJSON(t, r.obs), r.bad)
			}
			tt.check(t, r)
		})
	}
}

func TestOnyphe_RealSample(t *testing.T) {
	t.Parallel()
	r := runScan(t, "onyphe", readFile(t, "onyphe-api-v1.json"))
	if len(r.obs) != 2 || len(r.bad) != 0 || len(r.skipped) != 0 {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	// Document 1: HTTP, data as the raw response (cut by the API), the
	// API v1's strings for the port and status.
	o := r.obs[0]
	if o.IP != "35.241.121.91" || o.Service.Port != 80 || o.ObservedAt != "2019-09-17T09:29:06Z" || strings.Join(o.Hostnames, ",") != "91.121.241.35.bc.googleusercontent.com" {
		t.Errorf("doc 1 = %s", mustJSON(t, o))
	}
	p := o.Service.Probes[0]
	if p.Request.Path != "/" || p.Response.Status != 403 || p.Response.Reason != "Forbidden" || headerValues(p.Response.Headers, "Date")[0] != "Tue, 17 Sep 2019 09:28:57 GMT" ||
		headerValues(p.Response.Headers, "Server")[0] != "Apache/2.4.6 (CentO..." || p.TLS != nil {
		t.Errorf("doc 1 probe = %s", mustJSON(t, p))
	}
	if d := o.Service.Detected; d.By != "onyphe" || d.Service != "http" || d.Product != "Apache HTTP Server" || d.Version != "2.4.6" || d.Info != "os: Linux" {
		t.Errorf("doc 1 detected = %+v", d)
	}
	if c := o.Claims; len(c) != 1 || c[0].OrgName != "Google LLC" || c[0].ASN != 15169 || c[0].SignalSource != "onyphe" {
		t.Errorf("doc 1 claims = %+v", c)
	}
	// Document 2: HTTPS, the certificate under the HTTP probe.
	o = r.obs[1]
	x := o.Service.Probes[0].TLS
	if o.Service.Port != 443 || x == nil || x.Subject.CN != "pkg.elinkstaging.com" || x.Issuer.CN != "Let's Encrypt Authority X3" || x.Issuer.O[0] != "Let's Encrypt" ||
		x.Issuer.C != "US" || strings.Join(x.SANs, ",") != "pkg.elinkstaging.com" || x.Serial != "456858a63886e914c1d5cc66b5c8f3eece6" ||
		x.SHA256 != "fc7e3dc3f158e86e2670f3037221dba373558f7fa36cc0be307a0fbdb684088c" || x.NotBefore != "2019-08-05T11:41:24Z" || x.NotAfter != "2019-11-03T11:41:24Z" {
		t.Errorf("doc 2 tls = %s", mustJSON(t, o.Service.Probes[0]))
	}
}

func TestOnyphe_Shapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		obs      int
		bad      []int
		skipped  string
		check    func(t *testing.T, r scanResult)
	}{
		{"API v2 types, export lines: banner with \\xHH bytes, favicon, device, cpe; synscan; other categories skipped",
			`{"@category":"datascan","@timestamp":"2024-03-01T10:00:00.000Z","ip":"192.0.2.10","port":53,"protocol":"dns","transport":"udp","tls":false,"data":"\\x003\\xfc-version.bind Q9-P-5.1","cpe":["cpe:2.3:a:isc:bind"],"device":{"class":"Firewall","productvendor":"Fortinet","product":"FortiGate"}}` + "\n" +
				`{"@category":"datascan","ip":"192.0.2.11","port":443,"protocol":"http","tls":true,"status":200,"url":"/remote/login?lang=en","app":{"http":{"title":"Please Login"},"favicon":{"url":"/favicon.ico","imagemmh3":945408572}},"seen_date":"2024-03-02"}` + "\n" +
				`{"@category":"synscan","ip":"192.0.2.12","port":"8443","seen_date":"2024-03-02"}` + "\n" +
				`{"@category":"geoloc","ip":"192.0.2.12","country":"FR"}`,
			3, nil, "onyphe geoloc document (not a service)", func(t *testing.T, r scanResult) {
				o := r.obs[0]
				if o.Service.Transport != "udp" || !strings.HasPrefix(string(o.Service.Probes[0].Banner.Received.Bytes()), "\x003\xfc-version.bind") || o.Service.Detected.Product != "Fortinet FortiGate" ||
					o.Service.Detected.Info != "device: Firewall Fortinet FortiGate" || o.Service.Detected.CPE[0] != "cpe:2.3:a:isc:bind" {
					t.Errorf("dns = %s", mustJSON(t, o))
				}
				o = r.obs[1]
				if ps := o.Service.Probes; len(ps) != 2 || ps[0].Response.Status != 200 || ps[0].Response.Title != "Please Login" || ps[0].Request.Path != "/remote/login?lang=en" ||
					*ps[1].Response.Body.MMH3 != 945408572 || o.ObservedAt != "2024-03-02T00:00:00Z" {
					t.Errorf("http = %s", mustJSON(t, o))
				}
				if o := r.obs[2]; o.Service.Port != 8443 || len(o.Service.Probes) != 0 || o.Service.Detected != nil {
					t.Errorf("synscan = %s", mustJSON(t, o))
				}
			}},
		{"bad documents reported, the rest read",
			`{"results":[{"@category":"datascan","ip":"192.0.2.13","port":"22","protocol":"ssh","data":"SSH-2.0-OpenSSH_7.4\r\n"},{"@category":"datascan","ip":"192.0.2.300","port":"22"},{"@category":"datascan","ip":"192.0.2.13","port":"x"},{"ip":"192.0.2.13","port":"22"}]}`,
			1, []int{1, 1, 1}, "", func(t *testing.T, r scanResult) {
				if r.obs[0].Service.Probes[0].Banner.Received.Text() != "SSH-2.0-OpenSSH_7.4\r\n" || !strings.Contains(r.bad[2].Error(), `not an ONYPHE document: want "@category"`) {
					t.Errorf("obs %s bad %v", mustJSON(t, r.obs), r.bad)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "onyphe", tt.in)
			if len(r.obs) != tt.obs || !slices.Equal(badLines(r.bad), tt.bad) || strings.Join(r.skipped, ",") != tt.skipped {
				t.Fatalf("obs %s bad %v skipped %v", mustJSON(t, r.obs), r.bad, r.skipped)
			}
			tt.check(t, r)
		})
	}
}
