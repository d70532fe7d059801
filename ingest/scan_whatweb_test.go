package ingest

import (
	"slices"
	"strings"
	"testing"
)

// The two outputs of one real WhatWeb 0.5.5 run (testdata/SOURCES.md):
// the same services, each field where it belongs.
func TestWhatWeb_RealRun(t *testing.T) {
	for _, file := range []string{"whatweb.json", "whatweb-brief.txt"} {
		t.Run(file, func(t *testing.T) {
			r := runScan(t, "whatweb", readFile(t, file))
			if len(r.bad) != 0 {
				t.Fatalf("bad lines: %v", r.bad)
			}
			// Eight records; the BIG-IP's redirect and the page it led to are
			// one service.
			if len(r.obs) != 7 {
				t.Fatalf("%d services, want 7: %s", len(r.obs), mustJSON(t, r.obs))
			}
			by := map[int]*Service{}
			for _, o := range r.obs {
				if o.IP != "127.0.0.1" || o.Source != "whatweb" || o.Service.Transport != "tcp" {
					t.Errorf("observation %s", mustJSON(t, o))
				}
				by[o.Service.Port] = o.Service
			}
			forti := by[20230].Probes[0]
			if forti.Request.Path != "/remote/fortisslvpn" || forti.Response.Status != 200 ||
				!slices.Equal(headerValues(forti.Response.Headers, "Set-Cookie"), []string{"SVPNCOOKIE=; HttpOnly"}) ||
				!slices.Equal(headerValues(forti.Response.Headers, "X-Frame-Options"), []string{"SAMEORIGIN"}) {
				t.Errorf("FortiGate probe %s", mustJSON(t, forti))
			}
			ns := by[20061]
			if p := ns.Probes[0]; p.Response.Status != 302 ||
				!slices.Equal(headerValues(p.Response.Headers, "Server"), []string{"Apache/2.2.15 (CentOS)"}) ||
				!strings.HasPrefix(strings.Join(headerValues(p.Response.Headers, "Location"), ""), "https://ads.example.com/RealMedia/") ||
				len(headerValues(p.Response.Headers, "Set-Cookie")) != 2 || !strings.HasPrefix(p.Request.Path, "/RealMedia/ads/adstream_dx.ads/json/") {
				t.Errorf("NetScaler probe %s", mustJSON(t, p))
			}
			if ns.Detected == nil || ns.Detected.By != "whatweb" || !strings.Contains(ns.Detected.Info, "Citrix-NetScaler") || strings.Contains(ns.Detected.Info, "Country") {
				t.Errorf("NetScaler detected %s", mustJSON(t, ns.Detected))
			}
			f5 := by[20111]
			if len(f5.Probes) != 2 || f5.Probes[0].Request.Path != "/" || f5.Probes[1].Request.Path != "/my.policy" ||
				f5.Probes[0].Response.Status != 302 || f5.Probes[1].Response.Status != 404 ||
				!slices.Equal(headerValues(f5.Probes[0].Response.Headers, "Server"), []string{"BigIP"}) ||
				!slices.Equal(headerValues(f5.Probes[0].Response.Headers, "Location"), []string{"/my.policy"}) {
				t.Errorf("BIG-IP probes %s", mustJSON(t, f5.Probes))
			}
			if d := by[20343].Detected; d == nil || !strings.Contains(d.Info, "MikroTik-RouterOS[6.49.18]") {
				t.Errorf("RouterOS detected %s", mustJSON(t, d))
			}
			if p := by[20836].Probes[0]; p.Response.Status != 401 ||
				!slices.Equal(headerValues(p.Response.Headers, "WWW-Authenticate"), []string{`Digest realm="WatchGuard SOHO  Configuration"`}) ||
				!slices.Equal(headerValues(p.Response.Headers, "Server"), []string{"WatchGuard Firewall"}) {
				t.Errorf("WatchGuard probe %s", mustJSON(t, p))
			}
			// An uncommon header's name is kept without its value; a record
			// with only the address's plugins has no detected.
			apache := by[20482]
			if p := apache.Probes[0]; len(headerValues(p.Response.Headers, "Access-Control-Allow-Origin")) != 1 {
				t.Errorf("Apache probe %s", mustJSON(t, p))
			}
			if d := by[20028].Detected; d != nil {
				t.Errorf("FW-1 detected %s, want none", mustJSON(t, d))
			}
		})
	}
}

func TestWhatWeb_Forms(t *testing.T) {
	for _, c := range []struct {
		name, in string
		obs      int
		bad      []int
		check    func(t *testing.T, s *Service)
	}{
		{"json lines, a name target with its IP plugin", `{"target":"https://vpn.example.com/remote/login?lang=en","http_status":200,"plugins":{"IP":{"string":["192.0.2.7"]},"Title":{"string":["FortiGate"]},"HTTPServer":{"string":["xxxxxxxx-xxxxx"]}}}` + "\n", 1, nil,
			func(t *testing.T, s *Service) {
				p := s.Probes[0]
				if s.Port != 443 || p.Request.Path != "/remote/login?lang=en" || p.Request.Host != "vpn.example.com" || p.Response.Title != "FortiGate" {
					t.Errorf("%s", mustJSON(t, s))
				}
			}},
		{"brief with brackets and commas in a value", "http://192.0.2.8:8443/ [200 OK] Title[Login [Main], portal], HTTPServer[nginx], Cookies[a,b]\n", 1, nil,
			func(t *testing.T, s *Service) {
				p := s.Probes[0]
				if s.Port != 8443 || p.Response.Title != "Login [Main], portal" || len(headerValues(p.Response.Headers, "Set-Cookie")) != 2 {
					t.Errorf("%s", mustJSON(t, s))
				}
			}},
		{"brief: WhatWeb's error line", "ERROR Opening: http://192.0.2.9 - Connection refused\nhttp://192.0.2.9/ [x] Title[a]\n", 0, []int{1, 2}, nil},
		{"json array: records without target or address", `[{"target":"","plugins":{}},` + "\n" + `{"target":"http://example.com/","http_status":200,"plugins":{}}]`, 0, []int{1, 2}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runScan(t, "whatweb", c.in)
			if len(r.obs) != c.obs || !slices.Equal(badLines(r.bad), c.bad) {
				t.Fatalf("%d observations, bad lines %v (%v); want %d, %v", len(r.obs), badLines(r.bad), r.bad, c.obs, c.bad)
			}
			if c.check != nil {
				c.check(t, r.obs[0].Service)
			}
		})
	}
}

// WhatWeb's verbose report (-v; AutoRecon keeps it as its whatweb files,
// group AS4's DotNetNuke capture): each "WhatWeb report for" block a probe,
// its Summary the plugins, its IP line the address of a named target, its
// "HTTP Headers:" block the response's headers as sent; a redirect and the
// page it leads to one service.
func TestWhatWeb_VerboseReport(t *testing.T) {
	t.Parallel()
	in := "WhatWeb report for http://vpn.example.com/\n" +
		"Status    : 302 Found\n" +
		"Title     : <None>\n" +
		"IP        : 192.0.2.80\n" +
		"Country   : RESERVED, ZZ\n\n" +
		"Summary   : HTTPServer[Apache], RedirectLocation[/remote/login]\n\n" +
		"Detected Plugins:\n" +
		"[ HTTPServer ]\n\tHTTP server header string.\n\n\tString       : Apache (from server string)\n\n" +
		"HTTP Headers:\n" +
		"\tHTTP/1.1 302 Found\n" +
		"\tDate: Wed, 03 Apr 2024 03:58:07 GMT\n" +
		"\tServer: Apache\n" +
		"\tLocation: /remote/login\n\n" +
		"WhatWeb report for http://vpn.example.com/remote/login\n" +
		"Status    : 200 OK\n" +
		"Title     : ,Home\n" +
		"IP        : 192.0.2.80\n\n" +
		"Summary   : DotNetNuke, Cookies[language], X-Frame-Options[SAMEORIGIN]\n\n" +
		"Detected Plugins:\n[ DotNetNuke ]\n\tDotNetNuke is an opensource CMS for Microsoft .Net.\n\n" +
		"HTTP Headers:\n" +
		"\tHTTP/1.1 200 OK\n" +
		"\tSet-Cookie: language=en-US; path=/; HttpOnly\n" +
		"\tX-Frame-Options: SAMEORIGIN\n" +
		"\tContent-Length: 22271\n"
	r := runScan(t, "whatweb", in)
	if len(r.bad) != 0 || len(r.obs) != 1 {
		t.Fatalf("bad %v, %d services: %s", r.bad, len(r.obs), mustJSON(t, r.obs))
	}
	o := r.obs[0]
	if o.IP != "192.0.2.80" || !slices.Equal(o.Hostnames, []string{"vpn.example.com"}) || o.Service.Port != 80 || len(o.Service.Probes) != 2 {
		t.Fatalf("service %s", mustJSON(t, o))
	}
	redirect, page := o.Service.Probes[0], o.Service.Probes[1]
	if redirect.Response.Status != 302 || redirect.Response.Title != "" || redirect.Response.Reason != "Found" || redirect.Response.Protocol != "HTTP/1.1" ||
		!slices.Equal(headerValues(redirect.Response.Headers, "Server"), []string{"Apache"}) ||
		!slices.Equal(headerValues(redirect.Response.Headers, "Date"), []string{"Wed, 03 Apr 2024 03:58:07 GMT"}) {
		t.Errorf("redirect %s", mustJSON(t, redirect))
	}
	if page.Request.Path != "/remote/login" || page.Response.Status != 200 || page.Response.Title != ",Home" ||
		!slices.Equal(headerValues(page.Response.Headers, "Set-Cookie"), []string{"language=en-US; path=/; HttpOnly"}) ||
		len(page.Response.Headers) != 3 {
		t.Errorf("page %s", mustJSON(t, page))
	}
	if d := o.Service.Detected; d == nil || !strings.Contains(d.Info, "DotNetNuke") {
		t.Errorf("detected %s", mustJSON(t, o.Service.Detected))
	}
}
