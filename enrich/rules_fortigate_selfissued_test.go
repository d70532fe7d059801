package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_FortiGateSelfIssuedCertificate: a certificate with FortiGate's
// factory subject issued by itself (OU=FortiGate in the issuer) is what
// FortiGate honeypots make with openssl req -x509 (code-index files
// 21848181284 and 39267057982, group AJ2's notes) and names nothing; the
// same subject issued by Fortinet's sub-CA (a unit's factory certificate)
// names Fortinet, and so does an old unit's self-signed certificate whose
// issuer is its serial under O=Fortinet Ltd. with no OU (group AI1's 60C).
func TestRules_FortiGateSelfIssuedCertificate(t *testing.T) {
	t.Parallel()
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	factory := func(cn string) *ingest.DN {
		return &ingest.DN{CN: cn, O: []string{"Fortinet"}, OU: []string{"FortiGate"}, C: "US", ST: "California", L: "Sunnyvale", Email: "support@fortinet.com"}
	}
	subca := &ingest.DN{CN: "fortinet-subca2001", O: []string{"Fortinet"}, OU: []string{"Certificate Authority"}, C: "US", ST: "California", L: "Sunnyvale"}
	for _, tt := range []struct {
		name            string
		subject, issuer *ingest.DN
		vendor          string
	}{
		{"honeypot: serial subject, self-issued", factory("FGT61FTZ24061580"), factory("FGT61FTZ24061580"), ""},
		{"honeypot: FortiGate-Firewall, self-issued", factory("FortiGate-Firewall"), factory("FortiGate-Firewall"), ""},
		{"unit: issued by Fortinet's sub-CA", factory("FGT61FTZ24061580"), subca, "Fortinet"},
		{"old unit: self-signed under Fortinet Ltd.", &ingest.DN{CN: "FGT60C3G12019794", O: []string{"some_org_name"}}, &ingest.DN{CN: "FGT60C3G12019794", O: []string{"Fortinet Ltd."}}, "Fortinet"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			svc := &ingest.Service{Port: 10443, Transport: "tcp", Probes: []ingest.Probe{{TLS: &ingest.TLS{Subject: tt.subject, Issuer: tt.issuer}}}}
			fp, _ := rules.Match(svc, nil)
			if fp.Vendor != tt.vendor {
				t.Errorf("vendor %q (rule %s), want %q", fp.Vendor, fp.RuleID, tt.vendor)
			}
		})
	}
}
