package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_ImitationGuards checks the round HP guards (docs/rules.md,
// "Imitations"): each imitation names nothing, and the real product's
// answer without the honeypot's tell still names its vendor. The classes:
// a placeholder certificate (OpenSSL's "Internet Widgits Pty Ltd",
// Cymmetria's "My Company" / example.com, a self-signed localhost), lophiid's 307 carrying a copied
// 302 page, a framework's default Content-Type on a GlobalProtect or
// SonicOS page, a NetScaler clearing cookie with another expiry than the
// product's, a FortiGate-style certificate named after a bare model, and
// portspoof's generated lines (an HTTP status outside 1xx-5xx, an SSH
// protocol version other than 2.0, 1.99 or 1.5).
func TestRules_ImitationGuards(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	svc := tcpService
	withTLS := func(p ingest.Probe, subject, issuer ingest.DN) ingest.Probe {
		p.TLS = &ingest.TLS{Subject: &subject, Issuer: &issuer}
		return p
	}
	widgits := ingest.DN{C: "AU", ST: "Some-State", O: []string{"Internet Widgits Pty Ltd"}}
	myCompany := ingest.DN{C: "US", ST: "CA", L: "San Francisco", O: []string{"My Company"}, CN: "example.com"}
	ownCA := ingest.DN{CN: "vpn.example.org", O: []string{"Example Corp"}}
	publicCA := ingest.DN{CN: "R11", O: []string{"Let's Encrypt"}}

	smbConf := func() ingest.Probe {
		return httpProbe("GET", "/vpn/../vpns/cfg/smb.conf", 200, "[global]\n\tencrypt passwords = yes\n\tname resolve order = lmhosts wins host bcast\n",
			"Server", "Apache", "Content-Type", "text/plain")
	}
	const cookieReset = "webvpn=; expires=Thu, 01 Jan 1970 22:00:00 GMT; path=/; secure"
	asaRoot := func() ingest.Probe {
		return httpProbe("GET", "/", 200, `<html><script>document.location.replace("/+CSCOE+/logon.html")</script></html>`,
			"Content-Type", "text/html", "Set-Cookie", cookieReset, "Set-Cookie", "webvpnlogin=1; path=/; secure")
	}
	const apache302 = "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html><head>\n<title>302 Found</title>\n</head><body>\n<h1>Found</h1>\n<p>The document has moved <a href=\"%s\">here</a>.</p>\n</body></html>\n"
	bigipRoot := func(status int) ingest.Probe {
		return httpProbe("GET", "/", status, apache302, "Server", "Apache", "Location", "/tmui/login.jsp",
			"Content-Security-Policy", "default-src 'self'  'unsafe-inline' 'unsafe-eval' data: blob:; img-src 'self' data:  http://127.4.1.1 http://127.4.2.1")
	}
	smaRoot := func(status int) ingest.Probe {
		return httpProbe("GET", "/", status, apache302, "Server", "SMA/12.4", "Location", "https://vpn.example.org/workplace/home.action",
			"Set-Cookie", "EXTRAWEB_REFERER=%252F; path=/; secure; HttpOnly")
	}
	const gpPage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>GlobalProtect Portal</title>
<link rel="stylesheet" href="/global-protect/portal/css/login.css"></head>
<body><form id="loginForm" method="post" action="/global-protect/login.esp">
<input type="hidden" name="prot" value="https:"><input type="hidden" name="server" value="">
<input type="text" name="user"><input type="password" name="passwd"></form></body></html>`
	const nsc1999 = "NSC_TEMP=xyz;Path=/;expires=Wednesday, 09-Nov-1999 23:12:40 GMT;Secure"
	const nsc2024 = "NSC_TEMP=xyz;Path=/;expires=Wednesday, 09-Nov-2024 23:12:40 GMT;Secure"
	banner := func(port int, text string) *ingest.Service { return rawAnswer(t, port, text) }
	fortiLogin := func() ingest.Probe {
		return httpProbe("GET", "/", 200, "", "Server", "xxxxxxxx-xxxxx")
	}

	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"netscaler traversal answer", svc(443, withTLS(smbConf(), ownCA, publicCA)), wantMatch{Vendor: "Citrix"}},
		{"the same over OpenSSL's placeholder certificate (T-Pot citrixhoneypot, h0neytr4p)", svc(443, withTLS(smbConf(), widgits, widgits)), wantMatch{}},
		{"a certificate issued by a placeholder CA", svc(443, withTLS(smbConf(), ownCA, widgits)), wantMatch{}},
		{"the same over a self-signed localhost certificate (jtatman's CitrixHoneypot)", svc(443, withTLS(smbConf(), ingest.DN{CN: "localhost"}, ingest.DN{CN: "localhost"})), wantMatch{}},
		{"a self-signed localhost.localdomain certificate is not the placeholder", svc(443, withTLS(smbConf(), ingest.DN{CN: "localhost.localdomain"}, ingest.DN{CN: "localhost.localdomain"})), wantMatch{Vendor: "Citrix"}},
		{"asa webvpn cookie resets", svc(443, withTLS(asaRoot(), ownCA, publicCA)), wantMatch{Vendor: "Cisco"}},
		{"the same over Cymmetria's gencert certificate (T-Pot ciscoasa)", svc(8443, withTLS(asaRoot(), myCompany, myCompany)), wantMatch{}},
		{"big-ip redirect to the configuration utility", svc(443, bigipRoot(302)), wantMatch{Vendor: "F5"}},
		{"the same 302 page under lophiid's 307", svc(443, bigipRoot(307)), wantMatch{}},
		{"sma 1000 redirect to workplace", svc(443, smaRoot(302)), wantMatch{Vendor: "SonicWall"}},
		{"the same 302 page under lophiid's 307 (sma 1000)", svc(443, smaRoot(307)), wantMatch{}},
		{"globalprotect portal page", svc(443, httpProbe("GET", "/", 200, gpPage, "Content-Type", "text/html; charset=UTF-8")), wantMatch{Vendor: "Palo Alto Networks"}},
		{"the same under Go's default content type", svc(443, httpProbe("GET", "/", 200, gpPage, "Content-Type", "text/html; charset=utf-8")), wantMatch{}},
		{"the portal page beside another page with the lower-case type", svc(443,
			httpProbe("GET", "/", 200, gpPage, "Content-Type", "text/html; charset=UTF-8"),
			httpProbe("GET", "/app/", 200, "<title>Intranet</title>", "Content-Type", "text/html; charset=utf-8")), wantMatch{Vendor: "Palo Alto Networks"}},
		{"netscaler clearing cookies of 1999", svc(443, httpProbe("GET", "/vpn/index.html", 200, "", "Server", "Apache", "Set-Cookie", nsc1999)), wantMatch{Vendor: "Citrix"}},
		{"clearing cookies dated 2024", svc(443, httpProbe("GET", "/vpn/index.html", 200, "", "Server", "Apache", "Set-Cookie", nsc2024)), wantMatch{}},
		{"fortios masked server header, unit certificate", svc(10443, withTLS(fortiLogin(),
			ingest.DN{CN: "FG100ETK1800118", O: []string{"Fortinet"}, OU: []string{"FortiGate"}}, ingest.DN{CN: "support", O: []string{"Fortinet"}})), wantMatch{Vendor: "Fortinet"}},
		{"the same over a certificate named after a bare model", svc(10443, withTLS(fortiLogin(), ingest.DN{CN: "FGT60F"}, ingest.DN{CN: "FGT60F"})), wantMatch{}},
		{"zyxel's ssh identification", banner(22, "SSH-2.0-Zyxel SSH server\r\n"), wantMatch{Vendor: "Zyxel"}},
		{"the same after portspoof's random protocol version", banner(2022, "SSH-7.3.-Zyxel SSH server\r\n"), wantMatch{}},
		{"fortios masked ssh identification", banner(22, "SSH-2.0-xxxxxxx\r\n"), wantMatch{Vendor: "Fortinet"}},
		{"the same after portspoof's random protocol version (fortios)", banner(2222, "SSH-4.81-xxxxxxx\r\n"), wantMatch{}},
		{"a sonicwall server header", banner(443, "HTTP/1.0 200 OK\r\nServer: SonicWALL\r\n"), wantMatch{Vendor: "SonicWall"}},
		{"the same under portspoof's random status code", banner(8081, "HTTP/1.0 738 hkqdx\r\nServer: SonicWALL\r\n"), wantMatch{}},
		// portspoof fills nmap's "Date: .*" with random letters; a server sends the time
		{"panweb with its date", banner(443, "HTTP/1.0 200 OK\r\nDate: Tue, 03 Mar 2026 10:00:00 GMT\r\nServer: PanWeb Server/ - \r\nExpires: Mon, 26 Jul 1997 05:00:00 GMT\r\n\r\n"), wantMatch{Vendor: "Palo Alto Networks"}},
		{"panweb with portspoof's date", banner(8443, "HTTP/1.0 200 OK\r\nDate: kwfcw GMT\r\nServer: PanWeb Server/ - \r\nExpires: Mon, 26 Jul 1997 05:00:00 GMT\r\n\r\n"), wantMatch{}},
		{"an asa redirect dated in UTC", banner(80, "HTTP/1.1 301 Moved Permanently\r\nDate: Tue, 03 Mar 2026 10:00:00 UTC\r\nConnection: close\r\nLocation: /admin/public/index.html\r\n\r\n"), wantMatch{Vendor: "Cisco"}},
		{"the same with portspoof's date", banner(80, "HTTP/1.1 301 Moved Permanently\r\nDate: rbyugrl UTC\r\nConnection: close\r\nLocation: /admin/public/index.html\r\n\r\n"), wantMatch{}},
		{"netscreen ssh", banner(22, "SSH-2.0-NetScreen\r\n"), wantMatch{Vendor: "Juniper Networks"}},
		{"netscreen ssh with portspoof's version", banner(22, "SSH-48004-NetScreen\n"), wantMatch{}},
		// the servers honeypot frameworks run on (generic-web-server)
		{"an asa root page", svc(443, asaRoot()), wantMatch{Vendor: "Cisco"}},
		{"the same from uvicorn", svc(443, func() ingest.Probe {
			p := asaRoot()
			p.Response.Headers = append(p.Response.Headers, ingest.Header{Name: "Server", Value: "uvicorn"})
			return p
		}()), wantMatch{}},
		{"the same from express", svc(443, func() ingest.Probe {
			p := asaRoot()
			p.Response.Headers = append(p.Response.Headers, ingest.Header{Name: "X-Powered-By", Value: "Express"})
			return p
		}()), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkMatch(t, rules, tt.svc, tt.want) })
	}
}
