package enrich

import "testing"

// 99-as3-client-identity.yaml: a VPN client that exists only for one
// vendor's gateway names that vendor by its own identity in its log (its
// module paths, process name, command line at a prompt, own table headings)
// on a line that reports the gateway's answer; the same client's lines
// before any answer, clients other servers answer too (OpenVPN,
// OpenConnect's AnyConnect protocol), the official clients' status lines
// and the same names inside a sentence do not.
func TestRules_ClientIdentity(t *testing.T) {
	var cases caseList
	add := cases.add
	log := func(text string) matchCase { return bannerCase(443, "tcp", text) }
	add("snx-rs module line with the gateway's answer", log("2026-01-02T10:00:00.000000Z DEBUG snxcore::tunnel::ssl::connector: Received hello reply, session 4\n"), wantMatch{Vendor: "Check Point", Rule: "as3-client-checkpoint-snx-rs"})
	add("snx-rs module line before any answer", log("2026-01-02T10:00:00.000000Z DEBUG snxcore::tunnel::ssl::connector: Authenticating to endpoint: 192.0.2.1\n"), wantMatch{})
	add("snx-rs start line alone", log("2026-01-02T10:00:00.000000Z DEBUG snx_rs: >>> Starting snx-rs client version 9.9.9\n"), wantMatch{})
	add("an snx-rs command line alone, as a readme shows it", log("[user@host ~]$ sudo snx-rs -s vpn.example.com -o vpn_Username_Password\n"), wantMatch{})
	add("snx-rs info answer", log("Supported tunnel protocols:\n\tIPSec\n\tSSL\nAvailable login types:\n\tvpn_Azure (Azure)\n"), wantMatch{Vendor: "Check Point"})
	add("snx-rs inside a sentence", log("I then tried snx-rs -s vpn.example.com and it hung\n"), wantMatch{})
	add("tunnel protocols without the login types", log("Supported tunnel protocols:\n\tIPSec\n\tSSL\n"), wantMatch{})
	add("gpclient module line with the gateway's answer", log("[2026-01-02T10:00:00Z INFO  gpclient::tunnel] Gateway returned tunnel settings\n"), wantMatch{Vendor: "Palo Alto Networks", Rule: "as3-client-globalprotect-openconnect"})
	add("gpclient module line before any answer", log("[2026-01-02T10:00:00Z INFO  gpclient::tunnel] Waiting for the tunnel\n"), wantMatch{})
	add("gpauth start line alone", log("[2026-01-02T10:00:00Z INFO  main] gpauth started: 2.9.0 (2026-01-01)\n"), wantMatch{})
	add("gp auth window's acs line", log("[2026-01-02T10:00:00Z INFO  auth::webview] No auth data found in Cookies, it may not be the /SAML20/SP/ACS endpoint\n"), wantMatch{Vendor: "Palo Alto Networks", Rule: "as3-client-globalprotect-openconnect"})
	add("the official globalprotect client's status", log("$ globalprotect show --status\nGlobalProtect status: Connected\nGateway IP address: 192.0.2.1\n"), wantMatch{})
	add("openfortivpn journal line of the tunnel phase", log("Jan 02 10:00:00 host openfortivpn[123]: INFO:   Adding VPN nameservers...\n"), wantMatch{Vendor: "Fortinet", Rule: "as3-client-openfortivpn"})
	add("openfortivpn allocation line", log("INFO:   Remote gateway has allocated a VPN.\n"), wantMatch{Vendor: "Fortinet"})
	add("openfortivpn refused before login", log("INFO:   Connected to gateway.\nERROR:  Could not authenticate to gateway (Bad HTTP response code).\nINFO:   Closed connection to gateway.\n"), wantMatch{})
	add("openfortivpn's process name without a tunnel line", log("Jan 02 10:00:00 host openfortivpn[123]: ERROR:  Could not resolve host\n"), wantMatch{})
	add("openconnect gp esp step", log("ESP tunnel connected; exiting HTTPS mainloop.\n"), wantMatch{Vendor: "Palo Alto Networks", Rule: "as3-client-openconnect-gp"})
	add("openconnect fortinet protocol", log("$ sudo openconnect --protocol=fortinet vpn.example.com:443\nPOST https://vpn.example.com/remote/logincheck\nGot HTTP response: HTTP/1.1 200 OK\n"), wantMatch{Vendor: "Fortinet", Rule: "as3-client-openconnect-fortinet"})
	add("openconnect fortinet protocol with no answer", log("$ sudo openconnect --protocol=fortinet vpn.example.com:443\nFailed to connect to host vpn.example.com\n"), wantMatch{})
	add("openconnect pulse protocol", log("# openconnect --user=bob --protocol=pulse https://vpn.example.com/\nConnected as 10.1.2.3, using SSL, with ESP in progress\n"), wantMatch{Vendor: "Ivanti", Rule: "as3-client-openconnect-pulse"})
	add("openconnect anyconnect protocol is ocserv's too", log("$ sudo openconnect --protocol=anyconnect vpn.example.com\nConnected as 10.1.2.3, using SSL\n"), wantMatch{})
	add("openconnect protocol inside a sentence", log("you can also use openconnect --protocol=gp against it\nConnected as 10.1.2.3, using SSL\n"), wantMatch{})
	add("f5fpc favorites table", log("Connection Status: session established\nFavorites Information:\n______________________\nfav-Id   fav-Type  fav-Status       fav-Name\n12      vpn        established     /Common/na\n"), wantMatch{Vendor: "F5", Rule: "as3-client-f5-f5fpc"})
	add("f5fpc command line beside its status line", log("$ f5fpc --info\nConnection Status: logon denied\n"), wantMatch{Vendor: "F5", Rule: "as3-client-f5-f5fpc"})
	add("netextender login", log("NetExtender for Linux - Version 10.2.300\nConnecting to SSL-VPN Server \"vpn.example.com:4433\"...\nConnected.\nLogging in...\nLogin successful.\n"), wantMatch{Vendor: "SonicWall", Rule: "as3-client-sonicwall-netextender"})
	add("netextender's help", log("NetExtender for Linux - Version 10.2.300\nUsage: netExtender [OPTIONS] server[:port]\n"), wantMatch{})
	add("horizon client line with the broker's answer", log("2026-01-02 10:00:00.000+01:00: vmware-view 4242| Broker: response to get-launch-items, 3 items\n"), wantMatch{Vendor: "VMware", Rule: "as3-client-vmware-horizon"})
	add("horizon client start line", log("2026-01-02 10:00:00.000+01:00: vmware-view 4242| Log for VMware Horizon Client pid=4242\n"), wantMatch{})
	add("an openvpn client's lines", log("2026-01-02 10:00:00 TLS: Initial packet from [AF_INET]192.0.2.1:1194\n2026-01-02 10:00:01 Initialization Sequence Completed\n"), wantMatch{})
	add("pulse secure client's proxy lines", log("20170929162605.739243 pulsesvc[p31527.t31527] pulseui.info proxy is direct:// (pulseProxy.cpp:185)\n"), wantMatch{})
	checkMatches(t, cases)
}
