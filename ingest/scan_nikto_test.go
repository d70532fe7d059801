package ingest

import (
	"slices"
	"strings"
	"testing"
)

// Nikto's four output forms, real runs (testdata/SOURCES.md).
func TestNikto_RealSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file     string
		ip       string
		port     int
		headers  []string // the probe's response headers, "Name: value"
		tlsCN    string
		findings int
		at       string
	}{
		{"dd-nikto-output.xml", "127.0.0.1", 8070, nil, "", 13, "2020-11-16T03:45:07Z"},
		{"dd-nikto-report-old-format.xml", "192.168.0.24", 443, []string{"Server: Apache Tomcat"}, "jamf.example.com", 1, "2020-11-14T19:24:57Z"},
		{"dd-tdh.xml", "64.220.43.153", 443, []string{"Server: nginx", "X-Cache: HIT", "X-Cacheable: YES", "X-Redirect-By: WordPress"}, "tdh.com", 6, "2021-04-26T08:33:16Z"},
		{"dd-tdh.json", "64.220.43.153", 443, []string{"Server: nginx", "X-Cacheable: YES", "X-Cache: HIT", "X-Redirect-By: WordPress"}, "", 8, ""},
		{"dd-juice-shop.json", "52.51.36.193", 443, []string{"Server: Cowboy", "Via: 1.1 vegur", "Access-Control-Allow-Origin: *"}, "", 0, ""},
		// Nikto 2.5's JSON: its messages end with a full stop, not part of the header's value
		{"dd-issue_9274.json", "203.0.113.37", 443, []string{"Via: 1.1 google", "X-Google-Gfe-Load-Report: utilization_percent: 51.177505 queries_per_second: 20382 errors_per_second: 0", "X-Google-Gfe-Backend-Request-Cost: 51.177506531784765"}, "", 0, ""},
		{"nikto-2.5.0.csv", "104.18.27.120", 443, []string{"Server: cloudflare"}, "", 2, ""},
		{"nikto-2.1.6-shocker.txt", "10.10.10.56", 80, []string{"Server: Apache/2.4.18 (Ubuntu)"}, "", 7, "2021-06-14T08:07:03Z"},
		{"nikto-2.1.6-vulnos2.txt", "192.168.1.100", 80, []string{"Server: Apache/2.4.7 (Ubuntu)", "X-Powered-By: PHP/5.5.9-1ubuntu4.14", "X-Generator: Drupal 7 (http://drupal.org)"}, "", 36, ""},
		{"nikto-2.1.6-output.txt", "10.10.55.213", 80, nil, "", 5, ""},
		// the -Format txt file: the method before each message
		{"nikto-2.1.6-heist-format-txt.txt", "10.10.10.149", 80, []string{"X-Powered-By: PHP/7.3.1"}, "", 8, ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "nikto", readFile(t, "nikto/"+tt.file))
			if len(r.bad) != 0 || len(r.obs) != 1 || len(r.skipped) != 0 {
				t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
			}
			o := r.obs[0]
			if o.IP != tt.ip || o.Service.Port != tt.port || o.Source != "nikto" {
				t.Errorf("observation %s", mustJSON(t, o))
			}
			if tt.at != "" && o.ObservedAt != tt.at {
				t.Errorf("observed_at %s, want %s", o.ObservedAt, tt.at)
			}
			var headers []string
			cn := ""
			for _, p := range o.Service.Probes {
				if p.Response != nil {
					for _, h := range p.Response.Headers {
						headers = append(headers, h.Name+": "+h.Value)
					}
				}
				if p.TLS != nil && p.TLS.Subject != nil {
					cn = p.TLS.Subject.CN
				}
			}
			if !slices.Equal(headers, tt.headers) || cn != tt.tlsCN {
				t.Errorf("headers %q cn %q; want %q %q", headers, cn, tt.headers, tt.tlsCN)
			}
			if tt.findings > 0 {
				d := o.Service.Detected
				if d == nil || d.By != "nikto" || strings.Count(d.Info, "; ")+1 < tt.findings {
					t.Errorf("findings %s, want at least %d", mustJSON(t, d), tt.findings)
				}
			}
		})
	}
}

func TestNikto_FindingURIs(t *testing.T) {
	t.Parallel()
	r := runScan(t, "nikto", readFile(t, "nikto/dd-tdh.json"))
	info := r.obs[0].Service.Detected.Info
	for _, want := range []string{"GET /wp-admin/: Entry '/wp-admin/' in robots.txt", "GET /status: Default account found for 'Restricted' at /status"} {
		if !strings.Contains(info, want) {
			t.Errorf("info lacks %q: %s", want, info)
		}
	}
	r = runScan(t, "nikto", readFile(t, "nikto/nikto-2.1.6-shocker.txt"))
	if info := r.obs[0].Service.Detected.Info; !strings.Contains(info, "OSVDB-3233: /icons/README: Apache default file found.") || strings.Contains(info, "requests:") {
		t.Errorf("txt findings %s", info)
	}
}

func TestNikto_Malformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		obs      int
		bad      []int
		skipped  int
	}{
		{"xml not nikto", `<nmaprun/>`, 0, []int{1}, 0},
		{"xml bad port", "<niktoscan>\n<scandetails targetip=\"192.0.2.1\" targetport=\"x\"></scandetails>\n<scandetails targetip=\"192.0.2.1\" targetport=\"80\" targetbanner=\"a\"></scandetails></niktoscan>", 1, []int{2}, 0},
		{"json", "[\n{\"ip\":\"192.0.2.1\",\"port\":\"80\",\"banner\":\"x\"},\n{\"ip\":\"192.0.2.1\",\"port\":\"eighty\"},\n{\"nothing\":1},\n{\"ip\":\"nope\",\"port\":80,\"banner\":\"x\"},\n{\"host\":\"h.example\",\"port\":80,\"banner\":\"x\"}\n]", 1, []int{3, 4, 5}, 1},
		{"csv", "\"Nikto - v2.1.6/2.1.5\"\n\"h\",\"192.0.2.1\",\"80\",\"\",\"\",\"\",\"Apache\"\n\"h\",\"192.0.2.1\",\"x\",\"\",\"GET\",\"/\",\"m\"\n\"too\",\"few\"\n", 1, []int{3, 4}, 0},
		{"txt", "+ finding before target\n+ Target IP: 192.0.2.1\n+ Target Port: eighty\nrandom text\n+ Target IP: 192.0.2.2\n+ Target Port: 80\n+ Server: x\n+ Target Host: h.example\n+ Target Port: 80\n+ Server: y\n", 1, []int{1, 3, 4, 2}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, warns := runScanWarn(t, "nikto", tt.in)
			if len(r.obs) != tt.obs || !slices.Equal(badLines(r.bad), tt.bad) || len(r.skipped) != tt.skipped || len(warns) != tt.skipped {
				t.Errorf("obs %d bad %v skipped %v warns %v; want %d %v %d", len(r.obs), r.bad, r.skipped, warns, tt.obs, tt.bad, tt.skipped)
			}
		})
	}
}

// ZAP's reports (DefectDojo's and ZAP's own test data, testdata/SOURCES.md):
// every real -plus report names its site by host name, which ZAP
// records no address of; the plain report's instances carry no response.
func TestZAP_RealSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file     string
		skipped  int
		warnings int
	}{
		{"dd-zap-xml-plus-format.xml", 1, 1},
		{"dd-zap_2.16.1_with_req_resp.xml", 13, 1},
		{"zap-reports-basic-traditional-json-plus.json", 2, 1},
		{"dd-dvwa_baseline_dojo_subset.xml", 97, 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			r, warns := runScanWarn(t, "zap", readFile(t, "zap/"+tt.file))
			if len(r.bad) != 0 || len(r.obs) != 0 || len(r.skipped) != tt.skipped || len(warns) != tt.warnings {
				t.Errorf("obs %d bad %v skipped %d warnings %q; want 0 0 %d %d", len(r.obs), r.bad, len(r.skipped), warns, tt.skipped, tt.warnings)
			}
		})
	}
}

// The exchanges of a real -plus report, read as what they are once the
// site is known by its address: the report's site is localhost, given
// here as 127.0.0.1 (the one change made to it); 2.16.1's re-indented
// header blocks are read too (its site example-domain.com given as
// 192.0.2.1).
func TestZAP_Exchanges(t *testing.T) {
	t.Parallel()
	in := strings.Replace(readFile(t, "zap/dd-zap-xml-plus-format.xml"), `host="localhost"`, `host="127.0.0.1"`, 1)
	r := runScan(t, "zap", in)
	if len(r.bad) != 0 || len(r.obs) != 1 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	o := r.obs[0]
	p := o.Service.Probes[0]
	if o.IP != "127.0.0.1" || o.Service.Port != 8080 || p.Request.Method != "PUT" || p.Request.Path != "/bodgeit/js/qndto7n63d" ||
		len(headerValues(p.Request.Headers, "Cookie")) != 0 || p.Request.Body != nil ||
		p.Response.Status != 403 || !slices.Equal(headerValues(p.Response.Headers, "Server"), []string{"Apache-Coyote/1.1"}) ||
		!strings.Contains(p.Response.Body.Text(), "<h3>Apache Tomcat/8.0.37</h3>") {
		t.Errorf("probe %s", mustJSON(t, o))
	}
	in = strings.Replace(readFile(t, "zap/dd-zap_2.16.1_with_req_resp.xml"), `host="example-domain.com"`, `host="192.0.2.1"`, 1)
	r = runScan(t, "zap", in)
	if len(r.bad) != 0 || len(r.obs) != 1 || len(r.obs[0].Service.Probes) == 0 {
		t.Fatalf("2.16.1: obs %d bad %v", len(r.obs), r.bad)
	}
	for _, p := range r.obs[0].Service.Probes {
		if p.Response.Status < 100 || len(p.Response.Headers) == 0 || len(headerValues(p.Request.Headers, "authorization")) != 0 {
			t.Errorf("2.16.1 probe %s", mustJSON(t, p))
		}
	}
}

func TestZAP_Malformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		bad      []int
	}{
		{"not zap", `<nmaprun/>`, []int{1}},
		{"text", "hello", []int{1}},
		{"json not zap", `{"a":1}`, []int{1}},
		{"bad port and header", "<OWASPZAPReport>\n<site host=\"192.0.2.1\" port=\"x\"><alerts><alertitem><instances><instance><responseheader>HTTP/1.1 200 OK</responseheader></instance></instances></alertitem></alerts></site>\n" +
			"<site host=\"192.0.2.1\" port=\"80\"><alerts><alertitem><instances><instance><responseheader>garbage</responseheader></instance></instances></alertitem></alerts></site></OWASPZAPReport>", []int{2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "zap", tt.in)
			if len(r.obs) != 0 || !slices.Equal(badLines(r.bad), tt.bad) {
				t.Errorf("obs %d bad %v; want 0 %v", len(r.obs), r.bad, tt.bad)
			}
		})
	}
}
