package enrich

import "testing"

// TestRules_AP3ClientLogs checks 94-ap3-clients.yaml's five classes of client log
// (group AP3) and the look-alikes they must leave: openfortivpn's lines before the
// gateway authenticated (a Huawei USG dialled with it), gpclient lines that follow
// no server answer, and a spaced hex dump of another vendor ID.
func TestRules_AP3ClientLogs(t *testing.T) {
	const fortiRule = "ap3-fortinet-openfortivpn-authenticated-allocated"
	const saseRule = "ap3-fortinet-fortisase-edge-name"
	const gpRule = "ap3-globalprotect-client-log-answers"
	const ciscoRule = "ap3-cisco-ike-copyright-vid-spaced-hex"
	const snxRule = "ap3-checkpoint-snx-rs-office-mode-no-session"
	checkMatches(t, []matchCase{
		{"openfortivpn authenticated and allocated", bannerService(443, "tcp", "INFO:   Connected to gateway.\nINFO:   Authenticated.\nINFO:   Remote gateway has allocated a VPN.\n"), wantMatch{Vendor: "Fortinet", Rule: fortiRule}},
		{"openfortivpn refused at logincheck", bannerService(443, "tcp", "INFO:   Connected to gateway.\nERROR:  Could not authenticate to gateway (Bad HTTP response code).\nINFO:   Closed connection to gateway.\n"), wantMatch{}},
		{"fortisase tenant edge in an SNI line", bannerService(443, "tcp", "DEBUG:  Set SNI for TLS handshake: tenant1.edge.prod.fortisase.com\n"), wantMatch{Vendor: "Fortinet", Rule: saseRule}},
		{"fortisase named in prose", bannerService(443, "tcp", "we moved to fortisase.com last year"), wantMatch{}},
		{"gpclient gateway list parsed", bannerService(443, "tcp", "[2024-12-09T01:35:07Z INFO  gpapi::gateway::parse_gateways] Try to parse the external gateways...\n"), wantMatch{Vendor: "Palo Alto Networks", Rule: gpRule}},
		{"openconnect hip check answer", bannerService(443, "tcp", "Gateway says HIP report submission is needed.\n"), wantMatch{Vendor: "Palo Alto Networks", Rule: gpRule}},
		{"gpclient before any answer", bannerService(443, "tcp", "[2024-12-09T01:34:50Z INFO  gpapi::portal::prelogin] Perform prelogin, user_agent: PAN GlobalProtect\n"), wantMatch{}},
		{"cisco copyright vid spaced", bannerService(500, "udp", "43 49 53 43  4f 28 43 4f  50 59 52 49  47 48 54 29  26 43 6f 70..."), wantMatch{Vendor: "Cisco", Rule: ciscoRule}},
		{"snx-rs office mode reply without a session", bannerService(443, "tcp", "Error: No session in reply, VPN server may be running out of OM licenses!"), wantMatch{Vendor: "Check Point", Rule: snxRule}},
		{"snx-rs reply without an address", bannerService(443, "tcp", "Error: No IPv4 in reply!"), wantMatch{}},
		{"openiked vid spaced", bannerService(500, "udp", "ignoring unknown Vendor ID payload [4f 70 65 6e 49 4b 45 44 2d 37 2e 34]"), wantMatch{}},
	})
}
