package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupLTells checks the tells of OpenVPN (Access Server and
// the protocol), SoftEther, RD Web / RD Gateway and WireGuard on the shapes their
// sources print, and that their look-alikes name nothing: an OpenVPN
// answer off port 1194 (SoftEther's clone, appliances' SSL VPNs), a
// third-party "OpenVPN-Admin" panel, Exchange on the RPC proxy, a
// gateway upgrade without Microsoft's HTTP.sys.
func TestRules_GroupLTells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	http := func(method, path string, status int, body string, headers ...string) ingest.Probe {
		p := ingest.Probe{Request: &ingest.Request{Method: method, Path: path}, Response: &ingest.Response{Status: status, Body: ingest.TextBody(body)}}
		for i := 0; i+1 < len(headers); i += 2 {
			p.Response.Headers = append(p.Response.Headers, ingest.Header{Name: headers[i], Value: headers[i+1]})
		}
		return p
	}
	raw := func(sent, received []byte) ingest.Probe {
		return ingest.Probe{Banner: &ingest.Banner{Sent: ingest.BytesBody(sent), Received: ingest.BytesBody(received)}}
	}
	// OpenVPN's P_CONTROL_HARD_RESET_CLIENT_V2 (opcode 7, key id 0, session
	// id, empty ack array, packet id 0) and the server's
	// P_CONTROL_HARD_RESET_SERVER_V2 (opcode 8) acknowledging it.
	clientReset := []byte{0x38, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0}
	serverReset := []byte{0x40, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0}
	tcp := func(b []byte) []byte { return append([]byte{0, byte(len(b))}, b...) }
	wgInitiation := append([]byte{1, 0, 0, 0}, make([]byte, 144)...)
	wgResponse := append([]byte{2, 0, 0, 0, 7, 7, 7, 7}, make([]byte, 84)...)
	hello := append([]byte("\x00\x00\x00\x04\x00\x00\x00\x06hello\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00\x2c"),
		[]byte("SoftEther VPN Server Developer Edition (64 bit)")...)
	tests := []struct {
		name      string
		port      int
		transport string
		probes    []ingest.Probe
		rule      string
		band      string
	}{
		{"openvpn udp reset answered on 1194", 1194, "udp", []ingest.Probe{raw(clientReset, serverReset)}, "openvpn-protocol", ""},
		{"openvpn tcp reset answered on 1194", 1194, "tcp", []ingest.Probe{raw(tcp(clientReset), tcp(serverReset))}, "openvpn-protocol", ""},
		{"openvpn answer on 443 names nothing", 443, "tcp", []ingest.Probe{raw(tcp(clientReset), tcp(serverReset))}, "", ""},
		{"an answer that is not a server reset", 1194, "udp", []ingest.Probe{raw(clientReset, []byte{0x28, 1, 2, 3, 4, 5, 6, 7, 8})}, "", ""},
		{"openvpn client log line", 1194, "udp", []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.TextBody(
			"UDPv4 READ [26] from [AF_INET]192.0.2.1:1194: P_CONTROL_HARD_RESET_SERVER_V2 kid=0 [ 0 ] pid=0 DATA len=0")}}}, "openvpn-protocol", ""},
		{"openvpn management interface", 7505, "tcp", []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.TextBody(
			">INFO:OpenVPN Management Interface Version 1 -- type 'help' for more info\r\n")}}}, "openvpn-protocol", ""},
		{"access server web ca", 443, "tcp", []ingest.Probe{{TLS: &ingest.TLS{Subject: &ingest.DN{CN: "vpn.example.com"},
			Issuer: &ingest.DN{CN: "OpenVPN Web CA 2022.02.10 14:50:56 UTC vpn"}}}}, "openvpn-access-server", ""},
		{"access server rest error", 443, "tcp", []ingest.Probe{http("GET", "/rest/GetAutologin", 500,
			"<Error>\n  <Type>Internal Server Error</Type>\n  <Synopsis>REST method failed</Synopsis>\n  <Message>NEED_AUTOLOGIN: User 'u' lacks autologin privilege (9000)</Message>\n</Error>")}, "openvpn-access-server", ""},
		{"another server's rest error", 443, "tcp", []ingest.Probe{http("GET", "/rest/GetUserlogin", 401,
			"<Error>\n<Type>Authorization Required</Type>\n<Synopsis>REST method failed</Synopsis>\n<Message>Invalid username or password</Message>\n</Error>")}, "", ""},
		{"openvpn-admin panel", 443, "tcp", []ingest.Probe{http("GET", "/", 200, "<html><head><title>OpenVPN-Admin</title></head></html>")}, "", ""},
		{"openvpn-admin title on access server", 443, "tcp", []ingest.Probe{http("GET", "/", 200, "<title>OpenVPN Admin</title>", "Server", "OpenVPN-AS")}, "openvpn-access-server", ""},
		{"rd gateway websocket upgrade", 443, "tcp", []ingest.Probe{http("RDG_OUT_DATA", "/remoteDesktopGateway/", 101, "",
			"Upgrade", "websocket", "Server", "Microsoft-HTTPAPI/2.0", "Connection", "Upgrade")}, "microsoft-rdgateway", ""},
		{"gateway upgrade without http.sys", 443, "tcp", []ingest.Probe{http("RDG_OUT_DATA", "/remoteDesktopGateway/", 101, "",
			"Upgrade", "websocket", "Connection", "Upgrade")}, "", ""},
		{"rpc proxy challenge", 443, "tcp", []ingest.Probe{http("RPC_IN_DATA", "/rpc/rpcproxy.dll?localhost:3388", 401, "",
			"Server", "Microsoft-IIS/8.5", "WWW-Authenticate", "Negotiate", "WWW-Authenticate", "NTLM")}, "microsoft-rdgateway", "Windows Server 2012 R2"},
		{"rdpgw negotiate challenge", 443, "tcp", []ingest.Probe{http("RDG_OUT_DATA", "/remoteDesktopGateway/", 401, "Unauthorized\n",
			"Content-Type", "text/plain; charset=utf-8", "X-Content-Type-Options", "nosniff", "Www-Authenticate", "Negotiate")}, "", ""},
		{"rd gateway negotiate challenge", 443, "tcp", []ingest.Probe{http("RDG_OUT_DATA", "/remoteDesktopGateway/", 401, "",
			"WWW-Authenticate", "Negotiate", "Content-Length", "341")}, "microsoft-rdgateway", ""},
		{"exchange on the rpc proxy", 443, "tcp", []ingest.Probe{http("RPC_IN_DATA", "/rpc/rpcproxy.dll?localhost:3388", 401, "",
			"Server", "Microsoft-IIS/8.5", "WWW-Authenticate", "Negotiate", "X-FEServer", "EX01")}, "", ""},
		{"rdweb feed login with ntlm build", 443, "tcp", []ingest.Probe{
			http("GET", "/RDWeb/FeedLogin/WebFeedLogin.aspx", 401, "", "Server", "Microsoft-IIS/10.0", "WWW-Authenticate", "NTLM"),
			{Name: "nmap:http-ntlm-info", Banner: &ingest.Banner{Received: ingest.TextBody("Target_Name: CORP\n  Product_Version: 10.0.17763")}}},
			"microsoft-rdweb", "Windows Server 2019"},
		{"rdweb login form fields", 443, "tcp", []ingest.Probe{http("GET", "/RDWeb/Pages/en-US/login.aspx", 200,
			`<input id="DomainUserName" name="DomainUserName" type="text"/><input id="UserPass" name="UserPass" type="password"/>`)}, "microsoft-rdweb", ""},
		{"wireguard response alone on 51820", 51820, "udp", []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.BytesBody(wgResponse)}}}, "wireguard", ""},
		{"wireguard-shaped answer alone elsewhere", 5555, "udp", []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.BytesBody(wgResponse)}}}, "", ""},
		{"wireguard cookie reply to an initiation", 41194, "udp", []ingest.Probe{raw(wgInitiation, []byte{3, 0, 0, 0, 1, 2, 3, 4})}, "wireguard", ""},
		{"softether hello pack", 443, "tcp", []ingest.Probe{http("POST", "/vpnsvc/connect.cgi", 200, string(hello), "Content-Type", "application/octet-stream")}, "softether", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp, ok := rules.Match(&ingest.Service{Port: tt.port, Transport: tt.transport, Probes: tt.probes}, nil)
			if tt.rule == "" {
				if ok {
					t.Fatalf("named %s (%s), want nothing", fp.Vendor, fp.RuleID)
				}
				return
			}
			if !ok || fp.RuleID != tt.rule {
				t.Fatalf("got rule %q (%v), want %q", fp.RuleID, ok, tt.rule)
			}
			if fp.VersionBand != tt.band {
				t.Errorf("band %q, want %q", fp.VersionBand, tt.band)
			}
		})
	}
	t.Run("openvpn version from the management interface", func(t *testing.T) {
		fp, ok := rules.Match(&ingest.Service{Port: 3000, Transport: "tcp", Probes: []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.TextBody(
			">INFO:OpenVPN Management Interface Version 1 -- type 'help' for more info\r\n" +
				"Management Interface for OpenVPN 2.4.8 x86_64-alpine-linux-musl [SSL (OpenSSL)] [LZO] [LZ4] [EPOLL]\r\n")}}}}, nil)
		if !ok || fp.RuleID != "openvpn-protocol" || fp.ExactVersion != "2.4.8" {
			t.Fatalf("got %s version %q (%v), want openvpn-protocol 2.4.8", fp.RuleID, fp.ExactVersion, ok)
		}
	})
}
