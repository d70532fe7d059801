package wappalyzer

import (
	"strings"
	"testing"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
)

// testData is made up: in-scope names with tells of every kind the
// translator reads, and the weak ones it must leave out.
const testData = `{"apps": {
  "F5 BigIP": {
    "cookies": {"tin": "", "session": "", "f5_test_cookie": "", "mrhtest": "^[0-9a-f]{8}$"},
    "headers": {"server": "^bigtest/([\\d.]+)$\\;version:\\1", "x-powered-by": "", "x-bigtest-node": "", "x-weak": "ab\\;confidence:50"},
    "html": ["<div class=\"f5-test-banner\">", "a|b"],
    "scriptSrc": ["^/public/f5testscript\\.js"],
    "meta": {"application-name": ["^f5 test portal"]},
    "js": {"F5.test": ""},
    "implies": "Linux"
  },
  "Pulse Secure": {"cookies": {"ds": ""}},
  "Grafana": {"html": ["grafana-app-root"]}
}}`

func obs(headers []ingest.Header, body string) *ingest.Service {
	resp := &ingest.Response{Status: 200, Headers: headers}
	if body != "" {
		resp.Body = &ingest.Body{Data: body}
	}
	return &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{
		Request: &ingest.Request{Method: "GET", Path: "/"}, Response: resp}}}
}

func hdr(kv ...string) []ingest.Header {
	var hs []ingest.Header
	for i := 0; i < len(kv); i += 2 {
		hs = append(hs, ingest.Header{Name: kv[i], Value: kv[i+1]})
	}
	return hs
}

// TestGenerate_Translates: distinctive tells become rules that hold where
// Wappalyzer would name the technology; weak tells (short or generic
// cookie names, common headers' presence, partial confidence,
// alternatives), browser-only tells and technologies out of scope are
// left out and counted.
func TestGenerate_Translates(t *testing.T) {
	out, st, err := Generate([]byte(testData))
	if err != nil {
		t.Fatal(err)
	}
	if st.Technologies != 3 || st.Rules != 1 || st.Skipped["technology not in scope"] != 1 || st.Skipped["no distinctive tell"] != 1 ||
		st.Versions != 1 || st.SkippedTells["weak tell alone (too short or generic)"] != 5 ||
		st.SkippedTells["tell of partial confidence"] != 1 || st.SkippedTells["js, dom or css (needs a browser)"] != 1 {
		t.Fatalf("stats %+v\n%s", st, out)
	}
	rules, err := enrich.ParseRules(out, "65-wappalyzer.yaml")
	if err != nil {
		t.Fatalf("generated rules do not load: %v\n%s", err, out)
	}
	tests := []struct {
		name, vendor, version string
		s                     *ingest.Service
	}{
		{"server header with version", "F5", "16.1.3", obs(hdr("Server", "BigTest/16.1.3"), "")},
		{"distinctive cookie name", "F5", "", obs(hdr("Set-Cookie", "F5_test_cookie=1; path=/"), "")},
		{"cookie value pattern", "F5", "", obs(hdr("Set-Cookie", "MRHtest=0123abcd; path=/"), "")},
		{"cookie value not matching", "", "", obs(hdr("Set-Cookie", "MRHtest=zz; path=/"), "")},
		{"product header present", "F5", "", obs(hdr("X-BigTest-Node", "a"), "")},
		{"html", "F5", "", obs(nil, `<html><div class="f5-test-banner">hi`)},
		{"script source inside a page", "F5", "", obs(nil, `<script src="/public/f5testscript.js"></script>`)},
		{"meta tag", "F5", "", obs(nil, `<meta name="application-name" content="F5 Test Portal 2">`)},
		{"short cookie name alone", "", "", obs(hdr("Set-Cookie", "TIN=1"), "")},
		{"generic cookie name alone", "", "", obs(hdr("Set-Cookie", "session=1"), "")},
		{"common header present", "", "", obs(hdr("X-Powered-By", "PHP"), "")},
		{"partial-confidence tell", "", "", obs(hdr("X-Weak", "ab"), "")},
		{"out of scope", "", "", obs(nil, "grafana-app-root")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp, ok := rules.Match(tt.s, nil)
			if fp.Vendor != tt.vendor || ok != (tt.vendor != "") || fp.ExactVersion != tt.version {
				t.Errorf("got %+v %v, want vendor %q version %q", fp, ok, tt.vendor, tt.version)
			}
		})
	}
	if !strings.Contains(string(out), SourceURL) || !strings.Contains(string(out), "guard_vendor: true") {
		t.Errorf("no provenance or vendor guard in\n%s", out)
	}
}

// TestGenerate_Errors: data that is not Wappalyzer's JSON is an error
// naming what failed, not an empty rules file.
func TestGenerate_Errors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"not json", `{"apps": `, "read fingerprints"},
		{"pattern list of numbers", `{"apps": {"F5 BigIP": {"html": [1]}}}`, "read fingerprints"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Generate([]byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}
