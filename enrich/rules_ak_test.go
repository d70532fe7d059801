package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_AKMix checks rules/89-ak-mix.yaml: the UniFi controller's
// default certificate names Ubiquiti only with all three of its fields
// (a certificate that keeps CN=UniFi under another organisation names
// nothing); the older Horizon / View portal titles name VMware, and a
// title that only mentions Horizon among other words does not.
func TestRules_AKMix(t *testing.T) {
	cert := func(cn, ou, o string) ingest.Probe {
		return ingest.Probe{TLS: &ingest.TLS{Subject: &ingest.DN{CN: cn, OU: []string{ou}, O: []string{o}}}}
	}
	title := func(s string) ingest.Probe {
		p := headerProbe("GET", "/", 200, "")
		p.Response.Title = s
		return p
	}
	checkMatches(t, []matchCase{
		{"unifi default certificate", tcpService(8443, cert("UniFi", "UniFi", "ubnt.com")), wantMatch{Vendor: "Ubiquiti"}},
		{"CN=UniFi under another organisation", tcpService(8443, cert("UniFi", "UniFi", "Example Corp")), wantMatch{}},
		{"horizon view title", tcpService(443, title("VMware Horizon View")), wantMatch{Vendor: "VMware"}},
		{"view portal title with nbsp", tcpService(443, title("VMware&nbsp;View Portal")), wantMatch{Vendor: "VMware"}},
		{"a page about Horizon", tcpService(443, title("Migrating from VMware Horizon to Citrix")), wantMatch{}},
	})
}
