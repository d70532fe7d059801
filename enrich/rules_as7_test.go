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
	oc := func(text string) matchCase { return matchCase{svc: bannerService(443, "tcp", text)} }
	cases := []matchCase{
		oc("Got CONNECT response: HTTP/1.1 200 CONNECTED\nCSTP connected. DPD 90, Keepalive 32400\n"),
		oc("2018-10-22 18:03:39 | 2548 | Got CONNECT response: HTTP/1.1 200 CONNECTED\n2018-10-22 18:03:39 | 2548 | X-CSTP-Version: 1\n2018-10-22 18:03:39 | 2548 | X-CSTP-Server-Name: ocserv 1.1.6\n"),
		oc("POST https://vpn.example.com/\nConnected to 192.0.2.1:443\nXML POST enabled\nPlease enter your username.\nPOST https://vpn.example.com/auth\nPlease enter your password.\nPassword:\n"),
		oc("Connected as 192.168.250.120, using SSL, with DTLS in progress\nEstablished DTLS connection (using GnuTLS). Ciphersuite (DTLS1.2)-(PSK)-(AES-128-GCM).\n"),
		oc("POST https://vpn.example.com/\nXML POST enabled\nPlease enter your username and password.\nPOST https://vpn.example.com/\nGot CONNECT response: HTTP/1.1 200 OK\nCSTP connected. DPD 30, Keepalive 20\n"),
		oc("Got CONNECT response: HTTP/1.1 200 OK\nCSTP connected. DPD 10, Keepalive 4\nEstablished DTLS connection (using GnuTLS). Ciphersuite (DTLS1.2)-(ECDHE-RSA)-(AES-256-GCM).\n"),
		oc("Got CONNECT response: HTTP/1.1 200 CONNECTED\nX-CSTP-Version: 1\nX-CSTP-Server-Name: AnyLink 0.9.4\n"),
		oc("POST https://app.example.com/auth\nHTTP/1.1 302 Found\n"),
	}
	names := []string{"status line alone is clavister's too", "server name with release", "auth form flow", "dtls psk alone is xray's too", "asa session", "certificate dtls suite", "clone naming itself", "another app's /auth"}
	wants := []wantMatch{
		{}, // the status line alone: Clavister's OneConnect sends it too (group AS19)
		{Vendor: "OpenConnect", Rule: rule, Version: "1.1.6"},
		{Vendor: "OpenConnect", Rule: rule},
		{}, // the PSK suite alone: Xray's inbound settles on it too (group AS17)
		{}, {}, {}, {},
	}
	for i := range cases {
		cases[i].name, cases[i].want = names[i], wants[i]
	}
	checkMatches(t, cases)
}
