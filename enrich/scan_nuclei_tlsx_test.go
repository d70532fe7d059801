package enrich

import (
	"os"
	"strings"
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_NucleiAndTLSXAdapters runs nuclei's, tlsx's, ONYPHE's and
// LeakIX's output through their adapters and the rules: a FortiGate's
// answer inside a nuclei result (or ONYPHE's data) is named Fortinet by
// the answer itself (the evidence rules), the same nuclei result written
// with -omit-raw by the template the scanner matched (70-detected.yaml), a
// FortiGate's factory certificate read by tlsx by its subject; the real
// samples of other servers name nothing.
func TestRules_NucleiAndTLSXAdapters(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	read := func(t *testing.T, format, input string) []Fingerprint {
		t.Helper()
		var got []Fingerprint
		err := ingest.Adapters()[format](strings.NewReader(input), ingest.Options{}, func(_ int, o ingest.Observation) error {
			fp, _ := rules.Match(o.Service, o.Flow)
			got = append(got, fp)
			return nil
		}, func(le ingest.LineError) { t.Errorf("bad record: %v", le) })
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	file := func(t *testing.T, name string) string {
		t.Helper()
		b, err := os.ReadFile("../ingest/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// The FortiGate factory certificate subject of the accuracy corpus
	// (rapid7/recog's x509_subjects.xml example) as tlsx writes it.
	const fortigateTLSX = `{"timestamp":"2024-02-01T13:32:26Z","host":"198.51.100.29","ip":"198.51.100.29","port":"10443","probe_status":true,"tls_version":"tls12","cipher":"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384","subject_dn":"CN=FG100ETK1800118, OU=FortiGate, O=Fortinet, L=Sunnyvale, ST=California, C=US","subject_cn":"FG100ETK1800118","subject_org":["Fortinet"],"tls_connection":"ctls"}`
	// The FortiGate answer of the nuclei sample as ONYPHE's data.
	const fortigateOnyphe = `{"@category":"datascan","@timestamp":"2024-02-01T13:32:26.000Z","ip":"198.51.100.27","port":443,"protocol":"http","tls":true,"url":"/","data":"HTTP/1.1 200 OK\r\nDate: Thu, 01 Feb 2024 13:32:26 GMT\r\nETag: \"83-65132647\"\r\nAccept-Ranges: bytes\r\nContent-Length: 131\r\nContent-Type: text/html\r\nX-Frame-Options: SAMEORIGIN\r\nContent-Security-Policy: frame-ancestors 'self'; object-src 'self'; script-src 'self' https: 'unsafe-eval' 'unsafe-inline' blob:;\r\nX-XSS-Protection: 1; mode=block\r\nX-Content-Type-Options: nosniff\r\nStrict-Transport-Security: max-age=31536000\r\n\r\n<html><script type=\"text/javascript\">\nif (window!=top) top.location=window.location;top.location=\"/remote/login\";\n</script></html>\n","status":200}`
	tests := []struct {
		name, format, input string
		want                []string // vendor per observation, "" for none
		rule                []string // rule id prefix per observation, "" for any
	}{
		{"nuclei fortigate answer, raw and -omit-raw", "nuclei", file(t, "nuclei-appliance.jsonl"), []string{"Fortinet", "Fortinet"}, []string{"", "nuclei-fortinet-fortigate"}},
		{"nuclei real samples of other servers", "nuclei", file(t, "nuclei.jsonl"), []string{"", ""}, []string{"", ""}},
		{"tlsx fortigate factory certificate", "tlsx", fortigateTLSX, []string{"Fortinet"}, []string{""}},
		{"tlsx real samples of other servers", "tlsx", file(t, "tlsx.jsonl"), []string{"", "", "", ""}, []string{"", "", "", ""}},
		{"onyphe fortigate answer", "onyphe", fortigateOnyphe, []string{"Fortinet"}, []string{""}},
		{"onyphe real sample of Apache servers", "onyphe", file(t, "onyphe-api-v1.json"), []string{"", ""}, []string{"", ""}},
		{"leakix real samples: open ports", "leakix", file(t, "leakix-ip4scout.jsonl"), []string{"", "", "", "", ""}, []string{"", "", "", "", ""}},
		{"leakix l9format's example event", "leakix", file(t, "leakix-l9event.json"), []string{""}, []string{""}},
		// A real WhatWeb run over seven of the corpus's answers: the answers
		// WhatWeb keeps enough of are named by them, the NetScaler load
		// balancer and the RouterOS page (whose cookie and markup WhatWeb
		// does not keep) by WhatWeb's verdict, with RouterOS's version.
		{"whatweb json", "whatweb", file(t, "whatweb.json"),
			[]string{"Fortinet", "Citrix", "F5", "MikroTik", "WatchGuard", "Check Point", ""},
			[]string{"fortinet-", "whatweb-citrix-netscaler", "f5-bigip-apm", "whatweb-mikrotik-routeros", "watchguard-", "checkpoint-", ""}},
		{"whatweb brief", "whatweb", file(t, "whatweb-brief.txt"),
			[]string{"Fortinet", "Citrix", "F5", "MikroTik", "WatchGuard", "Check Point", ""},
			[]string{"fortinet-", "whatweb-citrix-netscaler", "f5-bigip-apm", "whatweb-mikrotik-routeros", "watchguard-", "checkpoint-", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := read(t, tt.format, tt.input)
			if len(got) != len(tt.want) {
				t.Fatalf("%d observations, want %d", len(got), len(tt.want))
			}
			for i, fp := range got {
				if fp.Vendor != tt.want[i] || !strings.HasPrefix(fp.RuleID, tt.rule[i]) {
					t.Errorf("observation %d: %q (rule %s), want %q %s", i+1, fp.Vendor, fp.RuleID, tt.want[i], tt.rule[i])
				}
				if fp.RuleID == "whatweb-mikrotik-routeros" && fp.ExactVersion != "6.49.18" {
					t.Errorf("observation %d: RouterOS version %q, want WhatWeb's 6.49.18", i+1, fp.ExactVersion)
				}
				if tt.want[i] != "" && tt.rule[i] == "" && strings.HasPrefix(fp.RuleID, "nuclei-") {
					t.Errorf("observation %d named by the scanner's template (%s), not by its answer", i+1, fp.RuleID)
				}
			}
		})
	}
}
