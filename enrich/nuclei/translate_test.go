package nuclei

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
)

const fortiTemplate = `id: fortigate-test-panel
info:
  name: Fortinet FortiGate Test Panel - Detect
http:
  - method: GET
    path:
      - "{{BaseURL}}/remote/login"
    matchers-condition: and
    matchers:
      - type: word
        part: body
        words: ["ftnt-fortinet-grid", "fgt_lang"]
        condition: and
      - type: word
        part: header
        words: ["xxxxxxxx-xxxxx"]
      - type: word
        words: ["Honeypot"]
        negative: true
      - type: status
        status: [200]
    extractors:
      - type: regex
        name: version
        part: body
        group: 1
        regex: ['FortiOS v(\d+\.\d+\.\d+)']
`

const looseTemplate = `id: sophos-loose-panel
info:
  name: Sophos Loose
http:
  - method: GET
    path: ["{{BaseURL}}"]
    matchers:
      - type: dsl
        dsl: ['status_code==200 && contains(body, "abc")']
`

const dslTemplate = `id: sonicwall-dsl-panel
info:
  name: SonicWall DSL Panel
http:
  - method: GET
    path: ["{{BaseURL}}/favicon.ico"]
    matchers:
      - type: dsl
        dsl: ['status_code==200 && ("-1234567" == mmh3(base64_py(body)) || contains(tolower(header), "sonicwall ssl-vpn"))']
`

const outOfScope = `id: grafana-panel
info:
  name: Grafana
http:
  - method: GET
    path: ["{{BaseURL}}/login"]
    matchers:
      - type: word
        words: ["grafana-app"]
`

func obs(path string, status int, headers []ingest.Header, body string, mmh3 *int32) ingest.Observation {
	resp := &ingest.Response{Status: status, Headers: headers}
	if body != "" || mmh3 != nil {
		resp.Body = &ingest.Body{Data: body, MMH3: mmh3}
	}
	return ingest.Observation{Service: &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{
		Request: &ingest.Request{Method: "GET", Path: path}, Response: resp}}}}
}

// TestGenerate_Translates: the matchers recorded evidence can answer
// become rules that hold where the template would, and not elsewhere;
// loose and out-of-scope templates are skipped and counted.
func TestGenerate_Translates(t *testing.T) {
	fsys := fstest.MapFS{
		"t/forti.yaml":   {Data: []byte(fortiTemplate)},
		"t/loose.yaml":   {Data: []byte(looseTemplate)},
		"t/dsl.yaml":     {Data: []byte(dslTemplate)},
		"t/grafana.yaml": {Data: []byte(outOfScope)},
	}
	out, st, err := Generate(fsys, "t")
	if err != nil {
		t.Fatal(err)
	}
	if st.Rules != 2 || st.Skipped["vendor not in scope"] != 1 || st.Versions != 1 ||
		st.Skipped["too loose: no literal of 6 or more characters, or hash, that must be present"] != 1 {
		t.Fatalf("stats %+v\n%s", st, out)
	}
	rules, err := enrich.ParseRules(out, "60-nuclei.yaml")
	if err != nil {
		t.Fatalf("generated rules do not load: %v\n%s", err, out)
	}
	server := []ingest.Header{{Name: "Server", Value: "xxxxxxxx-xxxxx"}}
	h := int32(-1234567)
	tests := []struct {
		name, vendor, version string
		o                     ingest.Observation
	}{
		{"all matchers", "Fortinet", "7.0.12", obs("/remote/login", 200, server, "ftnt-fortinet-grid fgt_lang FortiOS v7.0.12", nil)},
		{"one word of an and missing", "", "", obs("/remote/login", 200, server, "ftnt-fortinet-grid", nil)},
		{"negative matcher", "", "", obs("/remote/login", 200, server, "ftnt-fortinet-grid fgt_lang Honeypot", nil)},
		{"other path", "", "", obs("/", 200, server, "ftnt-fortinet-grid fgt_lang", nil)},
		{"other status", "", "", obs("/remote/login", 302, server, "ftnt-fortinet-grid fgt_lang", nil)},
		{"favicon hash", "SonicWall", "", obs("/favicon.ico", 200, nil, "", &h)},
		{"header word, tolower", "SonicWall", "", obs("/favicon.ico", 200, []ingest.Header{{Name: "Server", Value: "SonicWALL SSL-VPN Web Server"}}, "x", nil)},
		{"dsl status", "", "", obs("/favicon.ico", 404, nil, "", &h)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp, ok := rules.Match(tt.o.Service, nil)
			if fp.Vendor != tt.vendor || ok != (tt.vendor != "") || fp.ExactVersion != tt.version {
				t.Errorf("got %+v %v, want vendor %q version %q", fp, ok, tt.vendor, tt.version)
			}
		})
	}
	if !strings.Contains(string(out), SourceURL("forti.yaml")) {
		t.Errorf("no provenance in\n%s", out)
	}
}
