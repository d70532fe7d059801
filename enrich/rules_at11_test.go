package enrich

import "testing"

// TestRules_AT11GlobalProtectRekey checks group AT11's rule
// (95-at11-clients.yaml): openconnect's GlobalProtect "Tunnel timeout (rekey
// interval)" line, printed from a gateway's getconfig.esp answer, read with
// the client's POST to /ssl-vpn/getconfig.esp or hipreportcheck.esp; and what
// it must not name: the line alone, the line quoted as a string literal in
// test code, a text kept on 22.
func TestRules_AT11GlobalProtectRekey(t *testing.T) {
	var cases caseList
	const session = "POST https://london.vpn.test/ssl-vpn/getconfig.esp\n" +
		"Connected to xxx.xxx.xxx.xxx:443\n" +
		"SSL negotiation with london.vpn.test\n" +
		"Connected to HTTPS on london.vpn.test\n" +
		"Tunnel timeout (rekey interval) is 180 minutes.\n" +
		"Idle timeout is 180 minutes.\n" +
		"No MTU received. Calculated 1439 for SSL tunnel. No ESP keys received\n" +
		"POST https://london.vpn.test/ssl-vpn/hipreportcheck.esp\n" +
		"Connected as xxx.xxx.xxx.xxx, using SSL, with ESP disabled\n"
	cases.add("openconnect's gp session lines", bannerCase(443, "tcp", session),
		wantMatch{Vendor: "Palo Alto Networks", Rule: "at11-globalprotect-openconnect-getconfig-rekey-interval"})
	cases.add("the rekey line alone", bannerCase(443, "tcp",
		"Connected to HTTPS on vpn.test\nTunnel timeout (rekey interval) is 180 minutes.\n"), wantMatch{})
	cases.add("the line as a string literal in a test", bannerCase(443, "tcp",
		"POST https://vpn.test/ssl-vpn/getconfig.esp\n"+
			"            tunnel._consume_openconnect_line(\n"+
			"                \"Tunnel timeout (rekey interval) is 180 minutes.\"\n"+
			"            )\n"), wantMatch{})
	cases.add("the session kept on 22", sshCase(session), wantMatch{})
	checkMatches(t, cases)
}
