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

// TestRules_FrameworkCookieOrderSparesSESSID checks the exemption round
// AK7 added to the framework-cookie-order guard (01-conditions.yaml): a
// GlobalProtect prelogin answer whose SESSID cookie PAN-OS writes in Go's
// attribute order is still named by paloalto-globalprotect, while the
// same answer with any other cookie in that order (a Go honeypot's) is
// guarded and names nothing.
func TestRules_FrameworkCookieOrderSparesSESSID(t *testing.T) {
	body := "<prelogin-response><status>Success</status><ccusername/><autosubmit>false</autosubmit></prelogin-response>"
	prelogin := func(cookie string) *ingest.Service {
		return tcpService(443, headerProbe("POST", "/global-protect/prelogin.esp", 200, body,
			ingest.Header{Name: "Content-Type", Value: "application/xml; charset=UTF-8"},
			ingest.Header{Name: "Set-Cookie", Value: cookie}))
	}
	checkMatches(t, []matchCase{
		{"PAN-OS's SESSID in Go's order", prelogin("SESSID=0123abcd-4567-89ab-cdef-0123456789ab; Path=/; HttpOnly; Secure"), wantMatch{Vendor: "Palo Alto Networks"}},
		{"another cookie in Go's order", prelogin("session=abc; Path=/; HttpOnly; Secure"), wantMatch{}},
	})
}
