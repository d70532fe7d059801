package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupQTells checks the tells the group Q and S rounds added
// and the imitations they guard against (docs/accuracy.md): ocserv's
// accepted tunnel, PAN-OS's signed error page, FortiOS's GUI certificate
// and nmap's FortiSSH, Connect Secure's Host Checker cookie; an SP's SAML
// redirect to a Connect Secure and a Server header naming NetScaler name
// nothing; iControl REST's refusals, IPSO's older sysDescr, vpncmd's
// table and the Check Point Management API's version (group S).
func TestRules_GroupQTells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	svc := tcpService
	connect := func(reason string, headers ...string) ingest.Probe {
		p := httpProbe("CONNECT", "/CSCOSSLC/tunnel", 200, "", headers...)
		p.Response.Body = nil
		p.Response.Reason = reason
		return p
	}
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"ocserv's accepted tunnel", svc(443, connect("CONNECTED", "X-CSTP-DPD", "90", "X-CSTP-Keepalive", "32400")), wantMatch{Vendor: "OpenConnect", Rule: "ocserv"}},
		{"a tunnel accepted with 200 OK", svc(443, connect("OK", "X-CSTP-DPD", "30")), wantMatch{}},
		{"ocserv's reason from a look-alike naming itself", svc(443, connect("CONNECTED", "X-CSTP-Server-Name", "anyconnect-server-go 1.0.1")), wantMatch{}},
		{"panweb signing its redirect page", svc(80, httpProbe("GET", "/php/utils/debug.php", 302,
			"<html><body><h1>Moved Temporarily</h1>\n<address>PanWeb Server/ -  at 127.0.0.1:28250 Port 80</address></body></html>")), wantMatch{Vendor: "Palo Alto Networks"}},
		{"apache signing the same page", svc(80, httpProbe("GET", "/", 302, "<address>Apache/2.4.57 (Debian) Server at 127.0.0.1 Port 80</address>")), wantMatch{}},
		{"fortios gui certificate", svc(443, ingest.Probe{TLS: &ingest.TLS{
			Subject: &ingest.DN{CN: "FortiGate", O: []string{"Fortinet Ltd."}, ST: "California", C: "US"},
			Issuer:  &ingest.DN{CN: "FGVMEVMBF57GNJF3", O: []string{"Fortinet"}, ST: "California", C: "US"}}}), wantMatch{Vendor: "Fortinet"}},
		{"a certificate only named FortiGate", svc(443, ingest.Probe{TLS: &ingest.TLS{
			Subject: &ingest.DN{CN: "FortiGate"}, Issuer: &ingest.DN{CN: "R11", O: []string{"Let's Encrypt"}}}}), wantMatch{}},
		{"nmap's FortiSSH", &ingest.Service{Port: 22, Transport: "tcp", Detected: &ingest.Detected{By: "nmap", Service: "ssh", Product: "FortiSSH", Info: "protocol 2.0"}}, wantMatch{Vendor: "Fortinet"}},
		{"host checker cookie", svc(443, httpProbe("GET", "/", 200, "<title>Remote access</title>", "Set-Cookie", "HC_HMAC_VERSION_COOKIE=1")), wantMatch{Vendor: "Ivanti"}},
		{"the product's own redirect into its sign-in pages", svc(443, httpProbe("GET", "/", 302, "", "Location", "https://vpn.example.org/dana-na/auth/url_default/welcome.cgi")), wantMatch{Vendor: "Ivanti"}},
		{"sign-in page headers under /dana-na/", svc(443, httpProbe("GET", "/dana-na/auth/url_6/welcome.cgi", 200, "", "Expires", "-1", "Cache-Control", "no-store", "Pragma", "no-cache")), wantMatch{Vendor: "Ivanti"}},
		{"the same headers elsewhere", svc(443, httpProbe("GET", "/account/login", 200, "", "Expires", "-1", "Cache-Control", "no-store", "Pragma", "no-cache")), wantMatch{}},
		{"an SP's SAML redirect to a Connect Secure IdP", svc(443, httpProbe("GET", "/", 302, "", "Location", "https://extranet.example.org/dana-na/auth/saml-sso.cgi?SAMLRequest=fZJN&SigAlg=x")), wantMatch{}},
		// group S round
		{"restjavad's authorization refusal", svc(443, httpProbe("GET", "/mgmt/shared/appsvcs/info", 401,
			`{"code":401,"message":"Authorization failed: user=https://localhost/mgmt/shared/authz/users/ops resource=/mgmt/shared/appsvcs/info verb=GET uri:http://localhost:8100/mgmt/shared/appsvcs/info referrer:192.0.2.9"}`)), wantMatch{Vendor: "F5"}},
		{"webd's 401 under /mgmt/", svc(443, httpProbe("POST", "/mgmt/shared/authn/login", 401, "<html>\n<head><title>401 Authorization Required</title></head>\n<body>\n<center><h1>401 Authorization Required</h1></center>\n<hr><center>webd</center>\n</body>\n</html>")), wantMatch{Vendor: "F5"}},
		{"nginx's 401 under /mgmt/", svc(443, httpProbe("POST", "/mgmt/login", 401, "<html>\n<head><title>401 Authorization Required</title></head>\n<body>\n<center><h1>401 Authorization Required</h1></center>\n<hr><center>nginx</center>\n</body>\n</html>")), wantMatch{}},
		{"ipso freebsd sysdescr", bannerService(161, "udp", "i386 FreeBSD 2.1.5. Check Point FireWall-1 Version"), wantMatch{Vendor: "Check Point"}},
		{"vpncmd serverinfoget", svc(5555, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("Product Name                    |SoftEther VPN Server (64 bit)\nVersion                         |Version 4.38 Build 9760   (English)\n")}}), wantMatch{Vendor: "SoftEther", Version: "4.38.9760"}},
		{"management api login of R81.20", svc(443, httpProbe("POST", "/web_api/login", 200, `{"uid":"x","sid":"REDACTED","url":"https://127.0.0.1:443/web_api","session-timeout":600,"api-server-version":"1.9"}`, "Content-Type", "application/json")), wantMatch{Vendor: "Check Point", Version: "R81.20"}},
		// group T round
		{"nmap's fortios vulnerability script", &ingest.Service{Port: 8443, Transport: "tcp", Detected: &ingest.Detected{By: "nmap", Service: "https-alt", Info: "CVE-2018-13379: Host is vulnerable to CVE-2018-13379 (Fortinet SSL VPN)"}}, wantMatch{Vendor: "Fortinet"}},
		{"nuclei's cisco-asa template with its version", &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{By: "nuclei", Product: "nuclei:cisco-asa", Info: "[cisco-asa] [http] [info] [9.1(6)]"}}, wantMatch{Vendor: "Cisco", Version: "9.1(6)"}},
		{"nmap -sV's openvpn", &ingest.Service{Port: 1194, Transport: "udp", Detected: &ingest.Detected{By: "nmap", Service: "openvpn", Product: "OpenVPN"}}, wantMatch{Vendor: "OpenVPN"}},
		{"nmap's port name alone", &ingest.Service{Port: 1194, Transport: "udp", Detected: &ingest.Detected{By: "nmap", Service: "openvpn"}}, wantMatch{}},
		{"bigip device-info", svc(443, httpProbe("GET", "/mgmt/shared/identified-devices/config/device-info", 200, `{"baseMac":"00:00:5e:00:53:01","slots":[{"volume":"HD1.1","product":"BIG-IP","version":"14.1.0.5","build":"0.0.5","isActive":true}]}`)), wantMatch{Vendor: "F5", Version: "14.1.0.5"}},
		{"asm page reworded", svc(443, httpProbe("GET", "/", 200, "The requested URL was rejected. Please consult with your administrador.\n\nYour support ID is: <14171762189802438057>")), wantMatch{Vendor: "F5"}},
		{"fortigate ca", svc(443, ingest.Probe{TLS: &ingest.TLS{Subject: &ingest.DN{CN: "FortiGate CA", O: []string{"Fortinet"}, OU: []string{"Certificate Authority"}}, Issuer: &ingest.DN{CN: "FortiGate CA", O: []string{"Fortinet"}}}}), wantMatch{Vendor: "Fortinet"}},
		{"watchguard ssl vpn certificate", svc(443, ingest.Probe{TLS: &ingest.TLS{Subject: &ingest.DN{CN: "Fireware SSLVPN Server", OU: []string{"Fireware"}, O: []string{"WatchGuard_Technologies"}}}}), wantMatch{Vendor: "WatchGuard"}},
		{"sonicos api digest auth-int", svc(443, httpProbe("POST", "/api/sonicos/auth", 401, "", "WWW-Authenticate", `Digest qop="auth-int"`)), wantMatch{Vendor: "SonicWall"}},
		{"rpc over http authenticated channel", svc(443, func() ingest.Probe {
			p := httpProbe("RPC_OUT_DATA", "/rpc/rpcproxy.dll", 200, "", "Content-Length", "1073741824", "Content-Type", "application/rpc")
			p.Response.Body = nil
			return p
		}()), wantMatch{Vendor: "Microsoft"}},
		{"vpncmd cascade table", svc(443, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("Server Product Name                       |SoftEther VPN Server (64 bit)\nServer Version                            |4.34\nServer Build                              |Build 9745")}}), wantMatch{Vendor: "SoftEther", Version: "4.34.9745"}},
		{"ftd walk: sysObjectID first, the release from the sysDescr", &ingest.Service{Port: 161, Transport: "udp", Probes: []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.TextBody(
			".1.3.6.1.2.1.1.1.0 = STRING: Cisco Firepower Threat Defense, Version 6.4.0 (Build 102), ASA Version 9.12(1)6\n.1.3.6.1.2.1.1.2.0 = OID: .1.3.6.1.4.1.9.1.2662\n")}}}}, wantMatch{Vendor: "Cisco", Version: "6.4.0"}},
		{"globalprotect's own 512 without a reason", svc(443, func() ingest.Probe {
			p := httpProbe("POST", "/ssl-vpn/login.esp", 512, "")
			p.Response.Body = nil
			return p
		}()), wantMatch{Vendor: "Palo Alto Networks"}},
		{"a 512 elsewhere", svc(443, func() ingest.Probe {
			p := httpProbe("POST", "/login", 512, "")
			p.Response.Body = nil
			return p
		}()), wantMatch{}},
		{"netscaler gateway login redirect", svc(443, httpProbe("POST", "/cgi/login", 302, "", "Location", "/vpn/index.html", "Set-Cookie", "NSC_TASS=ffffffff; Path=/; Secure; HttpOnly")), wantMatch{Vendor: "Citrix"}},
		{"the same under a Server header naming NetScaler", svc(443, httpProbe("POST", "/cgi/login", 302, "", "Server", "NetScaler Gateway", "Location", "/vpn/index.html", "Set-Cookie", "NSC_TASS=ffffffff; Path=/; Secure; HttpOnly")), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkMatch(t, rules, tt.svc, tt.want) })
	}
}
