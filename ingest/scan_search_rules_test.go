package ingest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
)

// TestSearchEngineAdapters_Rules runs the search engines' samples through
// their adapters and the built-in rules, as `netintel rules match --format
// F` does: the real samples (testdata/SOURCES.md) hold no appliance and
// name nothing; an appliance as each engine writes it (the FortiGate SSL
// VPN login page ZoomEye keeps as the raw banner, with its factory
// certificate as ZoomEye's text; Netlas's parsed answer and certificate;
// FOFA's header and certs_* fields)
// is named by the rules from what the adapter kept.
func TestSearchEngineAdapters_Rules(t *testing.T) {
	t.Parallel()
	rules, err := enrich.DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	file := func(name string) string {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name, format, in string
		vendor, rule     []string // per service, "" for none; rule a prefix of the rule's id
		bad              int
	}{
		{"zoomeye-v1-uncover.json", "zoomeye", file("zoomeye-v1-uncover.json"), []string{""}, []string{""}, 0},
		{"zoomeye-v2-api.json", "zoomeye", file("zoomeye-v2-api.json"), []string{""}, []string{""}, 0},
		{"netlas-cookbook-response.json", "netlas", file("netlas-cookbook-response.json"), []string{""}, []string{""}, 0},
		{"fofa-api-gofofa.jsonl", "fofa", file("fofa-api-gofofa.jsonl"), make([]string, 7), make([]string, 7), 1},
		{"fofa-gofofa-guide.jsonl", "fofa", file("fofa-gofofa-guide.jsonl"), make([]string, 8), make([]string, 8), 0},
		{"fofa-gofofa-guide.csv", "fofa", file("fofa-gofofa-guide.csv"), make([]string, 4), make([]string, 4), 0},
		{"fofa FortiGate", "fofa", `{"error":false,"fields":"link,ip,port,protocol,title,header,certs_subject_cn,certs_subject_org,certs_issuer_cn","results":[["https://198.51.100.9:10443/remote/login","198.51.100.9","10443","https","Please Login","HTTP/1.1 200 OK\r\nServer: xxxxxxxx-xxxxx\r\n","FGT60E","Fortinet","FGT60E"]]}`,
			[]string{"Fortinet"}, []string{"fortinet-fortigate-sslvpn"}, 0},
		{"zoomeye FortiGate", "zoomeye", `{"ip":"198.51.100.7","portinfo":{"port":443,"service":"https","banner":"HTTP/1.1 200 OK\r\nServer: xxxxxxxx-xxxxx\r\nContent-Type: text/html\r\n\r\n<html><script>top.location='/remote/login?lang=en'</script></html>"},` +
			`"ssl":"SSL Certificate\nCertificate:\n    Data:\n        Issuer: C=US, ST=California, L=Sunnyvale, O=Fortinet, OU=Certificate Authority, CN=FGT60E0000000000, emailAddress=support@fortinet.com\n        Subject: C=US, ST=California, L=Sunnyvale, O=Fortinet, OU=FortiGate, CN=FGT60E0000000000, emailAddress=support@fortinet.com\n","timestamp":"2024-10-01T10:00:00"}`,
			[]string{"Fortinet"}, []string{"fortinet-fortigate-sslvpn"}, 0},
		{"netlas FortiGate", "netlas", `{"data":{"ip":"198.51.100.8","port":10443,"prot7":"http","protocol":"https","path":"/remote/login","http":{"status_code":200,"headers":{"server":["xxxxxxxx-xxxxx"]},"body":"<html><script>top.location='/remote/login?lang=en'</script></html>"},"certificate":{"subject_dn":"C=US, ST=California, L=Sunnyvale, O=Fortinet, OU=FortiGate, CN=FGT60E0000000000","issuer_dn":"C=US, ST=California, L=Sunnyvale, O=Fortinet, OU=Certificate Authority, CN=FGT60E0000000000"}}}`,
			[]string{"Fortinet"}, []string{"fortinet-fortigate-sslvpn"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []enrich.Fingerprint
			bad := 0
			err := ingest.Adapters()[tt.format](strings.NewReader(tt.in), ingest.Options{}, func(_ int, o ingest.Observation) error {
				fp, _ := rules.Match(o.Service, o.Flow)
				got = append(got, fp)
				return nil
			}, func(ingest.LineError) { bad++ })
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.vendor) || bad != tt.bad {
				t.Fatalf("%d services, %d bad records, want %d and %d", len(got), bad, len(tt.vendor), tt.bad)
			}
			for i, fp := range got {
				if fp.Vendor != tt.vendor[i] || !strings.HasPrefix(fp.RuleID, tt.rule[i]) {
					t.Errorf("service %d: %q (rule %q), want %q (%s)", i+1, fp.Vendor, fp.RuleID, tt.vendor[i], tt.rule[i])
				}
			}
		})
	}
}
