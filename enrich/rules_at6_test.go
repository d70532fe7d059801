package enrich

import "testing"

// TestRules_AT6ClientLines checks group AT6's client-line rules
// (95-at6-clients.yaml): openfortivpn's "No cookie given" ending (printed only
// after a 200 to POST /remote/logincheck without a session cookie) names the
// FortiGate, in both wordings and behind a journal's prefix; the same client's
// ending against another vendor's gateway ("Bad HTTP response code", "HTTP
// status code"), the ending without the client's connect line, and the text
// kept on 22 name nothing. gof5's profile line, printed only after the APM's
// favorites answer, names F5; an empty profile list names nothing.
// openconnect's CONNECT status with the server's default CSTP timers names
// ocserv ("200 CONNECTED", keepalive 32400) or the ASA ("200 OK", DPD 30 and
// keepalive 20); other timers, a clone naming itself and the user's shell do
// not.
func TestRules_AT6ClientLines(t *testing.T) {
	const fortiRule = "at6-fortinet-openfortivpn-no-cookie-given"
	const f5Rule = "at6-f5-apm-gof5-found-vpn-profiles"
	var cases caseList
	gw := func(port int, text string) matchCase { return bannerCase(port, "tcp", text) }
	cases.add("openfortivpn before 1.12",
		gw(443, "INFO:   Connected to gateway.\nERROR:  Could not authenticate to gateway (No cookie given).\nINFO:   Closed connection to gateway.\n"),
		wantMatch{Vendor: "Fortinet", Rule: fortiRule})
	cases.add("openfortivpn 1.19 empty cookie",
		gw(443, "DEBUG:  Gateway certificate validation succeeded.\nINFO:   Connected to gateway.\nDEBUG:  Empty cookie.\nERROR:  Could not authenticate to gateway. Please check the password, client certificate, etc.\nDEBUG:  No cookie given (-7)\n"),
		wantMatch{Vendor: "Fortinet", Rule: fortiRule})
	cases.add("openfortivpn in a journal",
		gw(10443, "Jan 02 10:00:00 host openfortivpn[812]: INFO:   Connected to gateway.\nJan 02 10:00:00 host openfortivpn[812]: ERROR:  Could not authenticate to gateway (No cookie given).\n"),
		wantMatch{Vendor: "Fortinet", Rule: fortiRule})
	cases.add("another vendor's gateway",
		gw(443, "INFO:   Connected to gateway.\nERROR:  Could not authenticate to gateway (Bad HTTP response code).\nINFO:   Closed connection to gateway.\n"),
		wantMatch{})
	cases.add("another vendor's gateway, 1.12 and later",
		gw(443, "INFO:   Connected to gateway.\nERROR:  Could not authenticate to gateway. Please check the password, client certificate, etc.\nDEBUG:  HTTP status code 302\n"),
		wantMatch{})
	cases.add("ending without the connect line",
		gw(443, "ERROR:  Could not authenticate to gateway (No cookie given).\n"),
		wantMatch{})
	cases.add("openfortivpn kept on the user's shell",
		gw(22, "INFO:   Connected to gateway.\nERROR:  Could not authenticate to gateway (No cookie given).\n"),
		wantMatch{})
	cases.add("gof5 profile line",
		gw(443, "2025/02/15 10:55:22 Found F5 VPN profiles: [\"0:/Common/Full-Network-Access\"]\n2025/02/15 10:55:22 Using \"/Common/Full-Network-Access\" F5 VPN profile\n"),
		wantMatch{Vendor: "F5", Rule: f5Rule})
	cases.add("gof5 empty profile list",
		gw(443, "2025/02/15 10:55:22 Found F5 VPN profiles: []\n"),
		wantMatch{})
	const ocservRule = "at6-ocserv-connect-200-connected-default-timers"
	const asaRule = "at6-cisco-asa-connect-200-ok-default-timers"
	cases.add("ocserv's default keepalive",
		gw(443, "Got CONNECT response: HTTP/1.1 200 CONNECTED\nCSTP connected. DPD 90, Keepalive 32400\n"),
		wantMatch{Vendor: "OpenConnect", Rule: ocservRule})
	cases.add("200 CONNECTED with other timers",
		gw(443, "Got CONNECT response: HTTP/1.1 200 CONNECTED\nCSTP connected. DPD 60, Keepalive 300\n"),
		wantMatch{})
	cases.add("a clone naming itself with ocserv's timers",
		gw(443, "Got CONNECT response: HTTP/1.1 200 CONNECTED\nX-CSTP-Server-Name: AnyLink 0.9.4\nCSTP connected. DPD 90, Keepalive 32400\n"),
		wantMatch{})
	cases.add("the ASA's default timers",
		gw(443, "Got CONNECT response: HTTP/1.1 200 OK\nCSTP connected. DPD 30, Keepalive 20\n"),
		wantMatch{Vendor: "Cisco", Rule: asaRule})
	cases.add("AnyLink's timers after 200 OK",
		gw(443, "Got CONNECT response: HTTP/1.1 200 OK\nCSTP connected. DPD 10, Keepalive 4\n"),
		wantMatch{})
	cases.add("Xray's timers after 200 OK",
		gw(443, "Got CONNECT response: HTTP/1.1 200 OK\nCSTP connected. DPD 30, Keepalive 10\n"),
		wantMatch{})
	cases.add("the ASA's timers on the user's shell",
		gw(22, "Got CONNECT response: HTTP/1.1 200 OK\nCSTP connected. DPD 30, Keepalive 20\n"),
		wantMatch{})
	checkMatches(t, cases)
}

// TestRules_OcservConnectProbe checks 05-ocserv.yaml's accepted tunnel
// CONNECT as a probe (what the http-transcript reader makes of openconnect's
// "Got CONNECT response" and "CSTP connected" lines): "200 CONNECTED" names
// ocserv only with ocserv's own tunnel-header values (keepalive 32400, oc-lz4,
// an idle timeout of "none"); alone it is Clavister's OneConnect's answer too
// (group AS19). With the ASA's pair after "200 OK" the ASA is named
// (95-at6-clients.yaml's structured form).
func TestRules_OcservConnectProbe(t *testing.T) {
	connect := func(reason string, headers ...string) matchCase {
		p := httpProbe("CONNECT", "/CSCOSSLC/tunnel", 200, "", headers...)
		p.Response.Reason, p.Response.Protocol, p.Response.Body = reason, "HTTP/1.1", nil
		return matchCase{svc: tcpService(443, p)}
	}
	var cases caseList
	cases.add("200 CONNECTED alone", connect("CONNECTED"), wantMatch{})
	cases.add("200 CONNECTED with other timers", connect("CONNECTED", "X-CSTP-DPD", "90", "X-CSTP-Keepalive", "300"), wantMatch{})
	cases.add("ocserv's keepalive", connect("CONNECTED", "X-CSTP-DPD", "90", "X-CSTP-Keepalive", "32400"), wantMatch{Vendor: "OpenConnect"})
	cases.add("oc-lz4", connect("CONNECTED", "X-CSTP-Content-Encoding", "oc-lz4"), wantMatch{Vendor: "OpenConnect"})
	cases.add("idle timeout none", connect("CONNECTED", "X-CSTP-Idle-Timeout", "none"), wantMatch{Vendor: "OpenConnect"})
	cases.add("a clone naming itself", connect("CONNECTED", "X-CSTP-Server-Name", "AnyLink 0.9.4", "X-CSTP-Keepalive", "32400"), wantMatch{})
	cases.add("the ASA's pair", connect("OK", "X-CSTP-DPD", "30", "X-CSTP-Keepalive", "20"), wantMatch{Vendor: "Cisco"})
	cases.add("AnyLink naming itself with the ASA's pair", connect("OK", "Server", "AnyLink", "X-CSTP-DPD", "30", "X-CSTP-Keepalive", "20"), wantMatch{})
	checkMatches(t, cases)
}
