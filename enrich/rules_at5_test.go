package enrich

import "testing"

// TestRules_AT5Guards: group AT5's proposed guards. 99-names-text.yaml names
// a product's release at a line's start, as a unit prints it, but not an
// advisory's affected-versions line or a release note's title (a range, a
// bound or a document word after the release); ap3's openfortivpn rule names
// the client's session on the gateway's port, not on the user's own shell
// (22, the README's "Client lines").
func TestRules_AT5Guards(t *testing.T) {
	var cases caseList
	on := func(port int, text string) matchCase { return bannerCase(port, "tcp", text) }
	cases.add("a unit's own release line", on(22, "FortiOS 7.4.3 build2573\n"), wantMatch{Vendor: "Fortinet", Rule: "names-text-fortinet-fortigate"})
	cases.add("an advisory's range", on(22, "Affected Products\nFortiOS 7.4.0 through 7.4.2\nFortiOS 7.2.0 through 7.2.6\n"), wantMatch{})
	cases.add("an advisory's bound", on(22, "SonicOS 7.0.1-5035 and older versions\n"), wantMatch{})
	cases.add("an advisory's dash range", on(22, "BIG-IP 17.1.0 - 17.1.1\n"), wantMatch{})
	cases.add("an advisory's verdict", on(22, "PAN-OS version 10.1.6-h6 is vulnerable\n"), wantMatch{})
	cases.add("a release note's title", on(22, "Ivanti Connect Secure 22.7R2.5 Release Notes\n"), wantMatch{})
	const ofv = "INFO:   Connected to gateway.\nINFO:   Authenticated.\nINFO:   Remote gateway has allocated a VPN.\nINFO:   Got addresses: [10.10.10.2], ns [10.10.1.1]\nINFO:   Tunnel is up and running.\n"
	cases.add("openfortivpn on the gateway's port", on(443, ofv), wantMatch{Vendor: "Fortinet", Rule: "ap3-fortinet-openfortivpn-authenticated-allocated"})
	cases.add("openfortivpn on the user's own shell", on(22, ofv), wantMatch{})
	checkMatches(t, cases)
}
