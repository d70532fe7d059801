package ingest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
)

// TestAuditAdapters_Rules runs each real sample of the TLS and SSH
// auditors through its adapter and the built-in rules, as `netintel rules
// match --format F` does: the FortiGate certificate subject of the replay
// (testdata/SOURCES.md) is named Fortinet when the auditor keeps the
// subject's organization (testssl.sh's PEM, sslscan --show-certificate),
// not from sslscan's short certificate (the common name alone); the
// appliances' SSH identification lines read by ssh-audit are named by
// 57-ssh.yaml and Recog's banners; the other servers name nothing.
func TestAuditAdapters_Rules(t *testing.T) {
	t.Parallel()
	rules, err := enrich.DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		format, file string
		vendor, rule []string // per service, "" for none; rule a prefix of the rule's id
	}{
		{"testssl", "testssl-3.0.8.json", []string{"Fortinet"}, []string{"fortinet-fortigate-sslvpn"}},
		{"testssl", "testssl-3.0.8-pretty.json", []string{"Fortinet"}, []string{"fortinet-fortigate-sslvpn"}},
		{"testssl", "testssl-3.0.8.csv", []string{"Fortinet"}, []string{"fortinet-fortigate-sslvpn"}},
		{"testssl", "testssl-defectdojo.csv", []string{""}, []string{""}},
		{"testssl", "testssl-defectdojo-nginx.csv", []string{""}, []string{""}},
		{"sslyze", "sslyze-5.0.1.json", []string{""}, []string{""}},
		{"sslyze", "sslyze-5.0.1-two-targets.json", []string{"", ""}, []string{"", ""}},
		{"sslyze", "sslyze-3.0.7.json", []string{""}, []string{""}},
		{"sslscan", "sslscan-2.0.7-full.xml", []string{"Fortinet"}, []string{"fortinet-fortigate-sslvpn"}},
		{"sslscan", "sslscan-2.0.7.xml", []string{"Fortinet"}, []string{"fortinet-fortigate-factory-certificate-issuer"}},
		{"testssl", "testssl-3.0.8-terminal.txt", []string{"Fortinet"}, []string{"fortinet-fortigate-factory-certificate-issuer"}},
		{"ssh-audit", "ssh-audit-2.5.0.json", []string{"Fortinet"}, []string{"fortinet-fortigate-ssh"}},
		{"ssh-audit", "ssh-audit-targets.json", []string{"Array Networks", "Cisco", "MikroTik"}, []string{"array-networks-ag", "cisco-ssh", "mikrotik-routeros"}},
		{"ssh-audit", "ssh-audit-defectdojo.json", []string{""}, []string{""}},
		{"ssh-audit", "ssh-audit-docker-dropbear_2019.78_test1.json", []string{""}, []string{""}},
		{"ssh-audit", "ssh-audit-docker-openssh_4.0p1_test1.json", []string{""}, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile("testdata/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			var got []enrich.Fingerprint
			err = ingest.Adapters()[tt.format](strings.NewReader(string(b)), ingest.Options{}, func(_ int, o ingest.Observation) error {
				fp, _ := rules.Match(o.Service, o.Flow)
				got = append(got, fp)
				return nil
			}, func(le ingest.LineError) { t.Errorf("bad record: %v", le) })
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.vendor) {
				t.Fatalf("%d services, want %d", len(got), len(tt.vendor))
			}
			for i, fp := range got {
				if fp.Vendor != tt.vendor[i] || !strings.HasPrefix(fp.RuleID, tt.rule[i]) {
					t.Errorf("service %d: %q (rule %q), want %q (%s)", i+1, fp.Vendor, fp.RuleID, tt.vendor[i], tt.rule[i])
				}
			}
		})
	}
}
