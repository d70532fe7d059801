package enrich

import "testing"

// TestRules_AO9ClientViews checks the two classes the group AO9 round added
// (93-ao9-clients.yaml): FortiOS's tunnel configuration XML quoted in parts
// on its own path, and OpenVPN Access Server's Google Authenticator dynamic
// challenge as a client logs it; and what they must not name: the same
// elements on another path or under a generic web server's Server header,
// double-quoted look-alike attributes, another server's CRV1 text, and the
// prompt without the challenge.
func TestRules_AO9ClientViews(t *testing.T) {
	const xmlRule = "ao9-fortinet-tunnel-xml-elements"
	const asRule = "ao9-openvpn-as-totp-crv1-challenge"
	splitDNS := "<split-dns domains='office.intra,dmz.intra' dnsserver1='10.10.20.5' dnsserver2='10.10.20.6' />"
	checkMatches(t, []matchCase{
		{"split-dns elements on the tunnel xml path", tcpService(443, httpProbe("GET", "/remote/fortisslvpn_xml", 200, splitDNS)), wantMatch{Vendor: "Fortinet", Rule: xmlRule}},
		{"assigned-addr element on the tunnel xml path", tcpService(10443, httpProbe("GET", "/remote/fortisslvpn_xml", 200, "<ipv4><assigned-addr ipv4='10.212.134.200' /><dns ip='10.0.0.1' /></ipv4>")), wantMatch{Vendor: "Fortinet", Rule: xmlRule}},
		{"split-tunnel-info on the tunnel xml path", tcpService(443, httpProbe("GET", "/remote/fortisslvpn_xml", 200, "<split-tunnel-info>\n<addr ip='10.0.0.0' mask='255.0.0.0' />\n</split-tunnel-info>")), wantMatch{Vendor: "Fortinet", Rule: xmlRule}},
		{"split-dns elements on another path", tcpService(443, httpProbe("GET", "/api/dns", 200, splitDNS)), wantMatch{}},
		{"split-dns elements under nginx", tcpService(443, httpProbe("GET", "/remote/fortisslvpn_xml", 200, splitDNS, "Server", "nginx/1.18.0")), wantMatch{}},
		{"double-quoted assigned-addr", tcpService(443, httpProbe("GET", "/remote/fortisslvpn_xml", 200, `<assigned-addr ipv4="10.0.0.2"/>`)), wantMatch{}},
		{"access server totp challenge", bannerService(1194, "udp", "Sun Sep 17 21:06:11 2016 AUTH: Received control message: AUTH_FAILED,CRV1:R,E:F/xxxxxx+xxxxxxxxxxxxxxxxxxxxxxxx:Enter Google Authenticator Code"), wantMatch{Vendor: "OpenVPN Inc.", Rule: asRule}},
		{"community daemon crv1 challenge", bannerService(1194, "udp", "AUTH: Received control message: AUTH_FAILED,CRV1:R,E:Om01u7Fh4LrGBS7uh0SWmzwabUiGiW6l:dHZh:Enter Your OTP"), wantMatch{}},
		{"prompt without the challenge", bannerService(1194, "udp", "static-challenge \"Enter Google Authenticator Code\" 1"), wantMatch{}},
	})
}
