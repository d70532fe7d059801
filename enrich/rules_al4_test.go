package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_AL4PANOSDefaultCertificate checks the group AL4 tell
// (90-al4-logs.yaml): PAN-OS's default certificate, as Zeek and Suricata
// print it (Suricata 4.x leaves "/emailAddress=..." inside the common name),
// named by its hex-CN subject or by its own CA issuer, and the look-alikes
// it must not name: Palo Alto Networks' public web certificate, the
// firewall's cloud client certificate, and another product's localhost CA
// with an OU of Support.
func TestRules_AL4PANOSDefaultCertificate(t *testing.T) {
	cert := func(subject, issuer string) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{TLS: &ingest.TLS{Subject: ingest.ParseDN(subject), Issuer: ingest.ParseDN(issuer)}}}}
	}
	const hex = "d92c11ece94546685d283c62baa542e1f4e65323e4c865aa71cd5bff8dfc95b7"
	pan := wantMatch{Vendor: "Palo Alto Networks", Rule: "al4-panos-default-certificate"}
	checkMatches(t, []matchCase{
		{"suricata rendering", cert("C=US, ST=CA, L=Santa Clara, O=Palo Alto Networks, CN="+hex+"/emailAddress=support@paloaltonetworks.com",
			"C=US, ST=CA, L=Santa Clara, O=Palo Alto Networks, OU=Support, CN=localhost/emailAddress=support@paloaltonetworks.com"), pan},
		{"zeek rendering", cert("emailAddress=support@paloaltonetworks.com,CN="+hex+",O=Palo Alto Networks,L=Santa Clara,ST=CA,C=US",
			"emailAddress=support@paloaltonetworks.com,CN=localhost,OU=Support,O=Palo Alto Networks,L=Santa Clara,ST=CA,C=US"), pan},
		{"subject alone, suricata rendering", cert("C=US, ST=CA, L=Santa Clara, O=Palo Alto Networks, CN="+hex+"/emailAddress=support@paloaltonetworks.com", ""), pan},
		{"the default CA issuing another name", cert("CN=vpn.example.com", "C=US, ST=CA, L=Santa Clara, O=Palo Alto Networks, OU=Support, CN=localhost/emailAddress=support@paloaltonetworks.com"), pan},
		{"the vendor's public web certificate", cert("CN=*.paloaltonetworks.com,OU=IT,O=Palo Alto Networks\\, Inc.,L=Santa Clara,ST=California,C=US",
			"CN=DigiCert SHA2 Secure Server CA,O=DigiCert Inc,C=US"), wantMatch{}},
		{"the firewall's cloud client certificate", cert("CN=Palo Alto Networks Device 410,O=Palo Alto Networks,C=US",
			"CN=Palo Alto Networks SSL CA 1,O=Palo Alto Networks,C=US"), wantMatch{}},
		{"another product's localhost CA", cert("CN=appliance.example.com,O=Example Networks", "CN=localhost,OU=Support,O=Example Networks"), wantMatch{}},
		{"a short hex common name", cert("CN=0ed5ec94,O=Palo Alto Networks", ""), wantMatch{}},
	})
}
