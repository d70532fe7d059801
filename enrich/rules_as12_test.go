package enrich

import "testing"

// TestRules_AS12AnyConnectSession: the AnyConnect client's "Establishing
// VPN" notices (printed once the head-end pushed its tunnel settings) with
// a named head-end name the ASA; the same session in a text that names
// ocserv, which AnyConnect also talks to, names nothing, and nor does the
// user's own shell (22).
func TestRules_AS12AnyConnectSession(t *testing.T) {
	const session = "  >> contacting host (vpn.example.com) for login information...\n  >> notice: Contacting vpn.example.com.\n  >> notice: Establishing VPN - Configuring system...\n  >> notice: Establishing VPN - Activating VPN adapter...\n  >> state: Connected\n"
	var cases caseList
	on := func(port int, text string) matchCase { return bannerCase(port, "tcp", text) }
	cases.add("anyconnect cli session", on(443, session), wantMatch{Vendor: "Cisco", Rule: "as12-cisco-anyconnect-establishing-vpn-configuring-connected"})
	cases.add("the same session against ocserv", on(443, "ocserv 1.2.4 on the server side\n"+session), wantMatch{})
	cases.add("the user's own shell", on(22, session), wantMatch{})
	cases.add("notices without a named head-end", on(443, "  >> notice: Establishing VPN - Configuring system...\n  >> state: Connected\n"), wantMatch{})
	checkMatches(t, cases)
}
