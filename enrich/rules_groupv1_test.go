package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupV1Guards checks the group V1 guards against imitations
// (rules/01-conditions.yaml: framework-default-redirect, hosting-platform,
// citrix-engine-answer-with-apache; rules/15-citrix.yaml): each imitation
// names nothing, and the product's own answer of the same kind still names
// its vendor.
func TestRules_GroupV1Guards(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	type hdr = ingest.Header
	probe := headerProbe
	svc := func(ps ...ingest.Probe) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Probes: ps}
	}
	const (
		apache302   = "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html><head>\n<title>302 Found</title>\n</head><body>\n<h1>Found</h1>\n<p>The document has moved <a href=\"/logon/LogonPoint/tmindex.html\">here</a>.</p>\n</body></html>\n"
		authMethods = `<?xml version="1.0" encoding="UTF-8"?><authMethods><method name="ExplicitForms" url="/nf/auth/getAuthenticationRequirements.do"/></authMethods>`
		gpLogin     = "<html>\n<head>\n<title>GlobalProtect Portal</TITLE>\n<link rel=\"stylesheet\" href=\"/global-protect/portal/css/login.css\">\n</head></html>"
		nfCT        = "application/vnd.citrix.authenticateresponse-1+xml; charset=utf-8"
	)
	xca := hdr{Name: "X-Citrix-Application", Value: "Receiver for Web"}
	tests := []struct {
		name   string
		svc    *ingest.Service
		vendor string
	}{
		// framework-default-redirect: Werkzeug's empty redirect (merabytes/vpn-honeypots' NetScaler clone)
		{"netscaler clone root redirect with werkzeug's content type", svc(probe("GET", "/", 302, "", hdr{Name: "Content-Type", Value: "text/plain; charset=utf-8"}, hdr{Name: "Content-Length", Value: "0"}, hdr{Name: "Location", Value: "/logon/LogonPoint/tmindex.html"}, hdr{Name: "Server", Value: "Apache"})), ""},
		{"netscaler clone vpn index redirect", svc(probe("GET", "/vpn/index.html", 302, "", hdr{Name: "Content-Type", Value: "text/plain; charset=utf-8"}, hdr{Name: "Location", Value: "/logon/LogonPoint/tmindex.html"}, hdr{Name: "Server", Value: "Apache"})), ""},
		{"express redirect to the globalprotect login page", svc(probe("GET", "/", 302, "Found. Redirecting to /global-protect/login.esp", hdr{Name: "Location", Value: "/global-protect/login.esp"})), ""},
		{"go net/http redirect to the globalprotect login page", svc(probe("GET", "/", 302, "<a href=\"/global-protect/login.esp\">Found</a>.\n\n", hdr{Name: "Content-Type", Value: "text/html; charset=utf-8"}, hdr{Name: "Location", Value: "/global-protect/login.esp"})), ""},
		// citrix-engine-answer-with-apache: the clone stamps Apache on the engine's answers
		{"getauthmethods with apache's server header", svc(probe("GET", "/cgi/GetAuthMethods", 200, authMethods, hdr{Name: "Content-Type", Value: nfCT}, xca, hdr{Name: "Server", Value: "Apache"})), ""},
		{"resources list with apache's server header", svc(probe("POST", "/cgi/Resources/List", 200, `{"unauthorized": true}`, hdr{Name: "Content-Type", Value: "text/plain; charset=utf-8"}, xca, hdr{Name: "CitrixWebReceiver-Authenticate", Value: `reason="notoken", location="/cgi/GetAuthMethods"`}, hdr{Name: "Server", Value: "Apache"})), ""},
		// hosting-platform: a clone deployed on Vercel or GitHub Pages
		{"globalprotect login page served by vercel", svc(probe("GET", "/global-protect/login.esp", 200, gpLogin, hdr{Name: "Content-Type", Value: "text/html; charset=UTF-8"}, hdr{Name: "Server", Value: "Vercel"}, hdr{Name: "X-Vercel-Id", Value: "cdg1::iad1::abcde-1764201600000-0123456789ab"})), ""},
		{"netscaler via header behind a vercel id only", svc(probe("GET", "/vpn/index.html", 200, "", hdr{Name: "Via", Value: "NS-CACHE-10.0:  15"}, hdr{Name: "x-vercel-id", Value: "fra1::fra1::abcde-1764201600000-0123456789ab"})), ""},
		{"globalprotect page on github pages", svc(probe("GET", "/global-protect/login.esp", 200, gpLogin, hdr{Name: "X-GitHub-Request-Id", Value: "E3A2:160030:DC7C75:F76DCA:6990609D"})), ""},
		// every family's web rules carry honeypot-tells: a clone of another family's page on a hosting
		// platform or behind a framework's redirect names nothing either
		{"rd web access page served by vercel", svc(probe("GET", "/RDWeb/Pages/en-US/login.aspx", 200, "<html><head><title>RD Web Access</title></head></html>", hdr{Name: "Server", Value: "Vercel"})), ""},
		{"array ag redirect in werkzeug's form", svc(probe("GET", "/", 302, "", hdr{Name: "Content-Type", Value: "text/plain; charset=utf-8"}, hdr{Name: "Location", Value: "/prx/000/http/localhost/login"})), ""},
		// the products' own answers stay named
		{"rd web access page", svc(probe("GET", "/RDWeb/Pages/en-US/login.aspx", 200, "<html><head><title>RD Web Access</title></head></html>", hdr{Name: "Server", Value: "Microsoft-IIS/10.0"})), "Microsoft"},
		{"array ag redirect", svc(probe("GET", "/", 302, "", hdr{Name: "Location", Value: "/prx/000/http/localhost/login"})), "Array Networks"},
		{"netscaler apache redirect to the logon point", svc(probe("GET", "/", 302, apache302, hdr{Name: "Content-Type", Value: "text/html; charset=iso-8859-1"}, hdr{Name: "Location", Value: "/logon/LogonPoint/tmindex.html"}, hdr{Name: "Server", Value: "Apache"})), "Citrix"},
		{"getauthmethods without a server header", svc(probe("GET", "/cgi/GetAuthMethods", 200, authMethods, hdr{Name: "Content-Type", Value: nfCT}, xca)), "Citrix"},
		{"home configuration from apache with the receiver header", svc(probe("POST", "/logon/LogonPoint/Home/Configuration", 200, "<?xml version=\"1.0\" encoding=\"UTF-8\"?><clientSettings>", hdr{Name: "Content-Type", Value: "application/xml; charset=utf-8"}, xca, hdr{Name: "Server", Value: "Apache"})), "Citrix"},
		{"globalprotect login page without a hosting platform", svc(probe("GET", "/global-protect/login.esp", 200, gpLogin, hdr{Name: "Content-Type", Value: "text/html; charset=UTF-8"}, hdr{Name: "X-Frame-Options", Value: "DENY"})), "Palo Alto Networks"},
		{"globalprotect redirect without a framework's body", svc(probe("GET", "/", 302, "", hdr{Name: "Location", Value: "/global-protect/login.esp"})), "Palo Alto Networks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor})
		})
	}
}
