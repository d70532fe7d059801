package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_Favicons checks the favicon hashes of 84-favicons.yaml (the
// round Y sweep of the public favicon databases, docs/rules-sources.md
// "Favicons"): each names its vendor from a favicon probe alone, as a
// Shodan, FOFA or httpx record keeps it; a honeypot tell beside the same
// favicon names nothing; and the hashes the sweep dropped (two vendors, or a
// vendor outside the family) name nothing.
func TestRules_Favicons(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	favicon := func(h int32, headers ...string) ingest.Probe {
		p := ingest.Probe{Name: "favicon", Request: &ingest.Request{Method: "GET", Path: "/favicon.ico"}, Response: &ingest.Response{Status: 200, Body: &ingest.Body{MMH3: &h}}}
		for i := 0; i+1 < len(headers); i += 2 {
			p.Response.Headers = append(p.Response.Headers, ingest.Header{Name: headers[i], Value: headers[i+1]})
		}
		return p
	}
	placeholderCert := ingest.Probe{Name: "tls", TLS: &ingest.TLS{Subject: &ingest.DN{O: []string{"Internet Widgits Pty Ltd"}}, Issuer: &ingest.DN{O: []string{"Internet Widgits Pty Ltd"}}}}
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"pan-os favicon", tcpService(443, favicon(-631559155)), wantMatch{Vendor: "Palo Alto Networks", Rule: "favicon-paloalto-panos", Product: "PAN-OS"}},
		{"netscaler gateway favicon", tcpService(443, favicon(-1292923998)), wantMatch{Vendor: "Citrix", Rule: "favicon-citrix-netscaler-gateway"}},
		{"netscaler gateway second favicon", tcpService(443, favicon(-1166125415)), wantMatch{Vendor: "Citrix", Rule: "favicon-citrix-netscaler-gateway"}},
		{"check point gateway favicon", tcpService(443, favicon(1440532452)), wantMatch{Vendor: "Check Point", Rule: "favicon-checkpoint-gateway"}},
		{"ivanti connect secure favicon", tcpService(443, favicon(-1439222863)), wantMatch{Vendor: "Ivanti", Rule: "favicon-ivanti-connect-secure", Product: "Connect Secure"}},
		// hashes the family files already name stay theirs
		{"fortigate favicon", tcpService(443, favicon(945408572)), wantMatch{Vendor: "Fortinet"}},
		{"globalprotect portal favicon", tcpService(443, favicon(602431586)), wantMatch{Vendor: "Palo Alto Networks", Rule: "paloalto-globalprotect"}},
		// the same favicons beside a honeypot's tells
		{"pan-os favicon with an invalid date", tcpService(443, favicon(-631559155, "Date", "1700000000")), wantMatch{}},
		{"netscaler favicon with a placeholder certificate", tcpService(443, placeholderCert, favicon(-1292923998)), wantMatch{}},
		{"check point favicon on a hosting platform", tcpService(443, favicon(1440532452, "Server", "Vercel")), wantMatch{}},
		{"ivanti favicon with a placeholder certificate", tcpService(443, placeholderCert, favicon(-1439222863)), wantMatch{}},
		// dropped by the sweep: Jira's favicon also listed as BIG-IP's; a
		// Citrix favicon listed for SD-WAN, for virtual desktops and for
		// Grafana; OSTEC's Firebox (not WatchGuard's)
		{"jira favicon listed as big-ip", tcpService(443, favicon(-1581907337)), wantMatch{}},
		{"a favicon of three attributions", tcpService(443, favicon(-1272756243)), wantMatch{}},
		{"ostec firebox favicon", tcpService(443, favicon(635541900)), wantMatch{}},
		{"an unknown favicon", tcpService(443, favicon(12345)), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkMatch(t, rules, tt.svc, tt.want) })
	}
}
