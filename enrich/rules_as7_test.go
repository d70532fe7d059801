package enrich

import "testing"

// TestRules_AS7OcservClientLines checks what OpenConnect prints of ocserv's
// answers (95-as7-clones.yaml, from ocserv's worker-vpn.c and worker-auth.c):
// the X-CSTP-Server-Name header with its release and the /auth form flow
// name ocserv; the "200 CONNECTED" status line alone (Clavister's too) and
// the DTLS-PSK suite alone (Xray's too), the ASA's and AnyLink's sessions,
// which answer "200 OK", post back to their own URL and use certificate
// suites, and a clone naming itself beside the copied status line, name
// nothing.
func TestRules_AS7OcservClientLines(t *testing.T) {
	const rule = "as7-ocserv-openconnect-client-lines"
	var cases caseList
	oc := func(text string) matchCase { return bannerCase(443, "tcp", text) }
	// the status line alone: Clavister's OneConnect sends it too (group AS19)
	// (group AS19's Clavister capture prints no CSTP timer line; ocserv's default timers after the
	// status line are read by 95-at6-clients.yaml, TestRules_AT6Clients)
	cases.add("status line alone is clavister's too", oc("Got CONNECT response: HTTP/1.1 200 CONNECTED\nCSTP connected.\n"), wantMatch{})
	cases.add("server name with release", oc("2018-10-22 18:03:39 | 2548 | Got CONNECT response: HTTP/1.1 200 CONNECTED\n2018-10-22 18:03:39 | 2548 | X-CSTP-Version: 1\n2018-10-22 18:03:39 | 2548 | X-CSTP-Server-Name: ocserv 1.1.6\n"), wantMatch{Vendor: "OpenConnect", Rule: rule, Version: "1.1.6"})
	cases.add("auth form flow", oc("POST https://vpn.example.com/\nConnected to 192.0.2.1:443\nXML POST enabled\nPlease enter your username.\nPOST https://vpn.example.com/auth\nPlease enter your password.\nPassword:\n"), wantMatch{Vendor: "OpenConnect", Rule: rule})
	// the PSK suite alone: Xray's inbound settles on it too (group AS17)
	cases.add("dtls psk alone is xray's too", oc("Connected as 192.168.250.120, using SSL, with DTLS in progress\nEstablished DTLS connection (using GnuTLS). Ciphersuite (DTLS1.2)-(PSK)-(AES-128-GCM).\n"), wantMatch{})
	cases.add("asa session", oc("POST https://vpn.example.com/\nXML POST enabled\nPlease enter your username and password.\nPOST https://vpn.example.com/\nGot CONNECT response: HTTP/1.1 200 OK\nCSTP connected. DPD 30, Keepalive 20\n"), wantMatch{Vendor: "Cisco"}) // the ASA's default timers (95-at6-clients.yaml)
	cases.add("certificate dtls suite", oc("Got CONNECT response: HTTP/1.1 200 OK\nCSTP connected. DPD 10, Keepalive 4\nEstablished DTLS connection (using GnuTLS). Ciphersuite (DTLS1.2)-(ECDHE-RSA)-(AES-256-GCM).\n"), wantMatch{})
	cases.add("clone naming itself", oc("Got CONNECT response: HTTP/1.1 200 CONNECTED\nX-CSTP-Version: 1\nX-CSTP-Server-Name: AnyLink 0.9.4\n"), wantMatch{})
	cases.add("another app's /auth", oc("POST https://app.example.com/auth\nHTTP/1.1 302 Found\n"), wantMatch{})
	checkMatches(t, cases)
}
