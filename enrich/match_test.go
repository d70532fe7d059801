package enrich

import (
	"bytes"
	"compress/gzip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/netintel/netintel/ingest"
)

func TestVersion_Compare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"9.8.4.10", "9.8.4.20", -1},
		{"9.10", "9.9.2.74", 1},
		{"9.1R11", "9.1:r11", 0},
		{"9.1r1", "9.1r10", -1},
		{"10.2.0", "10.2.0-h1", -1},
		{"13.1-37.164", "13.1-49.13", -1},
		{"7.1.1-7040", "7.1.1-7058", -1},
		{"7.0", "7.0.0", -1},
	}
	for _, tt := range tests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			got := cmpVersion(parseVersion(tt.a), parseVersion(tt.b))
			if (got < 0) != (tt.want < 0) || (got > 0) != (tt.want > 0) {
				t.Errorf("cmp = %d, want sign %d", got, tt.want)
			}
		})
	}
}

// An exact version's band, read in place for ASCII, is what the parsed
// version gives, for every string of a version-like alphabet up to four
// long and for a table of real ones.
func TestMinorBand(t *testing.T) {
	for v, want := range map[string]string{
		"7.2.5": "7.2.x", "7.0.12": "7.0.x", "9.1R11.4": "9.1.x", "10": "10.x", "v10.2.1": "",
		"10.2.0-h3": "10.2.x", "07.04.1": "7.4.x", "99999999999999999999.1": "4611686018427387903.1.x",
		"": "", "r11": "", "1 2 3": "1.2.x", "1k2": "1.x", "1\u212a2": "1.x", "\u0130.2": "",
	} {
		if got := minorBand(v); got != want {
			t.Errorf("minorBand(%q) = %q, want %q", v, got, want)
		}
	}
	alphabet := []string{"0", "1", "7", "10", ".", "-", " ", "r", "R", "x", "k", "\u212a", "\u00e9"}
	var each func(prefix string, n int)
	checked := 0
	each = func(prefix string, n int) {
		if got, want := minorBand(prefix), bandOfParsed(parseVersion(prefix)); got != want {
			t.Errorf("minorBand(%q) = %q, parsed version gives %q", prefix, got, want)
		}
		checked++
		if n == 0 {
			return
		}
		for _, a := range alphabet {
			each(prefix+a, n-1)
		}
	}
	each("", 4)
	if checked < 30000 {
		t.Fatalf("checked %d strings", checked)
	}
}

// bandOfParsed is the minor band of a parsed version: its first two
// numbers before any word.
func bandOfParsed(v version) string {
	var parts []string
	for _, t := range v {
		if t.kind != 0 || len(parts) == 2 {
			break
		}
		parts = append(parts, strconv.FormatInt(t.num, 10))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ".") + ".x"
}

func TestInterval_Within(t *testing.T) {
	tests := []struct {
		inner, outer string
		ok           bool
	}{
		{"22.7R2.x", "22.7.x", true},
		{"22.7.x", "22.7R2.x", false},
		{"7.0.x", "7.0.x", true},
		{"7.0.1..7.0.9", "7.0.x", true},
		{"7.0.9..7.2.1", "7.0.x", false},
		{"10.2.4,10.2.7", "10.2.x", true},
		{"10.2.4,11.0.1", "10.2.x", false},
		{"7.0.12", "7.0.x", true},
	}
	for _, tt := range tests {
		in, _ := bandInterval(tt.inner)
		out, _ := bandInterval(tt.outer)
		if got := in.within(out); got != tt.ok {
			t.Errorf("%s within %s = %v, want %v", tt.inner, tt.outer, got, tt.ok)
		}
	}
}

func TestInterval_Band(t *testing.T) {
	tests := []struct {
		band string
		in   []string
		out  []string
	}{
		{"7.0.x", []string{"7.0", "7.0.0", "7.0.17"}, []string{"6.4.9", "7.1.0", "7.2"}},
		{"6.4.0..6.4.8", []string{"6.4.0", "6.4.8"}, []string{"6.4.9", "6.2.10"}},
		{"9.1R11", []string{"9.1r11"}, []string{"9.1r12"}},
		{"10.2.4,11.0.1", []string{"10.2.4", "11.0.1", "10.2.9"}, []string{"10.2.3", "11.0.2"}},
		{"22.7R2.x", []string{"22.7r2", "22.7R2.3"}, []string{"22.7R1.4", "22.7r3", "22.7.2"}},
	}
	for _, tt := range tests {
		iv, ok := bandInterval(tt.band)
		if !ok {
			t.Fatalf("band %q not parsed", tt.band)
		}
		for _, v := range tt.in {
			if !iv.contains(parseVersion(v)) {
				t.Errorf("%s should contain %s", tt.band, v)
			}
		}
		for _, v := range tt.out {
			if iv.contains(parseVersion(v)) {
				t.Errorf("%s should not contain %s", tt.band, v)
			}
		}
	}
}

// legacyRules are the version 1 rules converted to version 2, whose
// tables the sample observations were written against.
func legacyRules(t testing.TB) *Rules {
	t.Helper()
	rules, err := LoadRules("testdata/rules-legacy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// The version 1 rules over the version 1 samples they were written for,
// read through the upgrade to probes: what a v1 rule said of a v1
// observation, its v2 form says of the upgraded one.
func TestRules_Fingerprint(t *testing.T) {
	rules := legacyRules(t)
	obs := readObs(t, "testdata/observations-v1.ndjson")
	first := func(key string) (*ingest.Service, *ingest.Flow) {
		o := obs[key][0]
		return o.Service, o.Flow
	}
	type want struct{ vendor, product, family, exact, band, precision string }
	tests := []struct {
		name string
		key  string
		want want
	}{
		{"fortigate band from Last-Modified date table", "203.0.113.10", want{"Fortinet", "FortiGate SSL-VPN", "ssl-vpn", "", "7.0.x", "band"}},
		{"cisco asa exact from config-auth body", "203.0.113.20", want{"Cisco", "ASA AnyConnect", "ssl-vpn", "9.8.4.10", "9.8.x", "exact"}},
		{"ivanti exact from nc_gina_ver body, formatted", "203.0.113.30", want{"Ivanti", "Connect Secure", "ssl-vpn", "9.1R11", "9.1.x", "exact"}},
		{"globalprotect product only (title)", "203.0.113.40", want{"Palo Alto Networks", "GlobalProtect", "ssl-vpn", "", "", ""}},
		{"citrix exact from hash table", "203.0.113.50", want{"Citrix", "NetScaler Gateway", "ssl-vpn", "13.1-49.13", "13.1.x", "exact"}},
		{"sonicwall exact from body", "203.0.113.60", want{"SonicWall", "SMA SSL-VPN", "ssl-vpn", "7.1.1-7040", "7.1.x", "exact"}},
		{"check point band", "203.0.113.70", want{"Check Point", "Mobile Access / SSL Network Extender", "ssl-vpn", "", "R81.10", "band"}},
		{"juniper exact", "203.0.113.80", want{"Juniper Networks", "SRX Dynamic VPN", "ssl-vpn", "15.1X49", "15.1.x", "exact"}},
		{"openvpn access server", "203.0.113.90", want{"OpenVPN Inc.", "OpenVPN Access Server", "openvpn", "2.11.3", "2.11.x", "exact"}},
		{"wireguard from flow", "198.51.100.5", want{"WireGuard", "WireGuard", "wireguard", "", "", ""}},
		{"openvpn from flow", "198.51.100.6", want{"OpenVPN", "OpenVPN", "openvpn", "", "", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, flow := first(tt.key)
			fp, ok := rules.Match(svc, flow)
			if !ok {
				t.Fatal("no rule matched")
			}
			got := want{fp.Vendor, fp.Product, fp.ProtocolFamily, fp.ExactVersion, fp.VersionBand, fp.VersionPrecision}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	t.Run("unknown product", func(t *testing.T) {
		for _, key := range []string{"192.0.2.1", "198.51.100.7"} {
			svc, flow := first(key)
			if fp, ok := rules.Match(svc, flow); ok {
				t.Errorf("%s matched %+v", key, fp)
			}
		}
	})
	page := func(path string, status int, headers ...string) ingest.Probe {
		p := ingest.Probe{Request: &ingest.Request{Method: "GET", Path: path}, Response: &ingest.Response{Status: status}}
		for i := 0; i+1 < len(headers); i += 2 {
			p.Response.Headers = append(p.Response.Headers, ingest.Header{Name: headers[i], Value: headers[i+1]})
		}
		return p
	}
	svc := func(probes ...ingest.Probe) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Probes: probes}
	}
	t.Run("cookie alone, among several set", func(t *testing.T) {
		fp, ok := rules.Match(svc(page("/", 200, "Set-Cookie", "a=1; path=/", "Set-Cookie", "SVPNCOOKIE=; path=/; secure")), nil)
		if !ok || fp.Vendor != "Fortinet" || fp.VersionPrecision != "" {
			t.Errorf("got %+v %v", fp, ok)
		}
	})
	t.Run("date outside every row", func(t *testing.T) {
		fp, _ := rules.Match(svc(page("/", 200, "Set-Cookie", "SVPNCOOKIE=", "last-modified", "Mon, 01 Jan 2001 00:00:00 GMT")), nil)
		if fp.Vendor != "Fortinet" || fp.VersionBand != "" {
			t.Errorf("got %+v from a date before the table", fp)
		}
	})
	t.Run("a body tell on another path does not count", func(t *testing.T) {
		p := page("/other", 200)
		p.Response.Body = ingest.TextBody(`<link href="/css/ftnt-fortinet-grid.css">`)
		if fp, ok := rules.Match(svc(p), nil); ok {
			t.Errorf("matched %+v", fp)
		}
		p.Request.Path = "/remote/login?lang=en"
		if fp, ok := rules.Match(svc(p), nil); !ok || fp.Vendor != "Fortinet" {
			t.Errorf("path with query: got %+v %v", fp, ok)
		}
	})
	t.Run("guard: a look-alike does not get the vendor", func(t *testing.T) {
		p := page("/", 200, "X-Transcend-Version", "1")
		if fp, ok := rules.Match(svc(p), nil); !ok || fp.Vendor != "Cisco" {
			t.Fatalf("got %+v %v", fp, ok)
		}
		p.Response.Headers = append(p.Response.Headers, ingest.Header{Name: "Server", Value: "ocserv/1.2.4"})
		if fp, ok := rules.Match(svc(p), nil); ok {
			t.Errorf("guarded look-alike matched %+v", fp)
		}
	})
	t.Run("version from a probe of one path", func(t *testing.T) {
		css := page("/global-protect/portal/css/login.css", 200)
		css.Response.Body = ingest.TextBody("/* PAN-OS 10.2.4-h3 */")
		fp, ok := rules.Match(svc(page("/", 200, "X-Private-Pan-Sslvpn", "auth-failed"), css), nil)
		if !ok || fp.ExactVersion != "10.2.4-h3" || fp.VersionBand != "10.2.x" {
			t.Errorf("got %+v %v", fp, ok)
		}
	})
}

func TestRules_Conditions(t *testing.T) {
	doc := `version: 2
rules:
  - id: post-login
    vendor: V
    product: P
    protocol_family: f
    match:
      all:
        - {method: POST, path: /login, status: [200, 302], body: 'welcome'}
        - not: {header.server: nginx}
  - id: cert-and-favicon
    vendor: W
    product: Q
    protocol_family: f
    match:
      any:
        - {tls.subject.o: '^Acme Appliances$', tls.issuer.cn: 'Acme CA'}
        - {body.mmh3: [945408572, -76600061]}
        - {banner: '^\x02\x00\x00\x00', transport: udp}
        - {detected.product: 'AcmeVPN', port: [4433]}
    versions:
      - {from: tls.subject.cn, regex: 'acme-(\d+\.\d+)', precision: band, format: '{1}.x'}
      - {from: body, path: /app.js.gz, transform: gzip_mtime, table: acme-dates}
      - {from: header.etag, regex: '"[0-9a-f]+-([0-9a-f]{8})"', transform: hex_epoch, table: acme-dates}
  - id: login-form
    vendor: X
    product: R
    protocol_family: f
    match: {method: POST, request.body: '(?:^|&)LoginPassword=Acme\+Series(?:&|$)'}
tables:
  acme-dates:
    rows:
      - {from: 2020-01-01, to: 2021-01-01, band: "1.0.x", source: "https://example.org/releases"}
`
	rules, err := ParseRules([]byte(doc), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	probe := httpProbe
	mmh3 := func(v int32) ingest.Probe {
		return ingest.Probe{Request: &ingest.Request{Path: "/favicon.ico"}, Response: &ingest.Response{Body: &ingest.Body{MMH3: &v}}}
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.ModTime = time.Date(2020, 6, 1, 0, 0, 0, 0, time.UTC)
	zw.Write([]byte("js"))
	zw.Close()
	gzProbe := ingest.Probe{Request: &ingest.Request{Path: "/app.js.gz"}, Response: &ingest.Response{Body: ingest.BytesBody(gz.Bytes())}}
	tests := []struct {
		name, want, version string
		svc                 ingest.Service
	}{
		{"post on one probe", "post-login", "", ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{probe("POST", "/login", 302, "Welcome back")}}},
		{"get is another probe", "", "", ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{probe("GET", "/login", 200, "welcome"), probe("POST", "/login", 403, "denied")}}},
		{"status not in list", "", "", ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{probe("POST", "/login", 500, "welcome")}}},
		{"not: nginx", "", "", ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{probe("POST", "/login", 200, "welcome"), probe("GET", "/", 200, "", "Server", "nginx/1.25")}}},
		{"favicon hash (negative)", "cert-and-favicon", "", ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{mmh3(-76600061)}}},
		{"favicon hash unknown", "", "", ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{mmh3(1)}}},
		{"cert fields with band", "cert-and-favicon", "2.4.x", ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{TLS: &ingest.TLS{
			Subject: &ingest.DN{CN: "acme-2.4-box", O: []string{"Acme Appliances"}}, Issuer: &ingest.DN{CN: "Acme CA 1"}}}}}},
		{"cert issuer alone", "", "", ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{TLS: &ingest.TLS{Issuer: &ingest.DN{CN: "Acme CA 1"}}}}}},
		{"banner bytes on udp", "cert-and-favicon", "", ingest.Service{Port: 51820, Transport: "udp", Probes: []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.BytesBody([]byte{2, 0, 0, 0, 0xff})}}}}},
		{"banner bytes on tcp", "", "", ingest.Service{Port: 51820, Transport: "tcp", Probes: []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.BytesBody([]byte{2, 0, 0, 0, 0xff})}}}}},
		{"detected on its port", "cert-and-favicon", "", ingest.Service{Port: 4433, Transport: "tcp", Detected: &ingest.Detected{Product: "AcmeVPN httpd"}}},
		{"detected on another port", "", "", ingest.Service{Port: 4434, Transport: "tcp", Detected: &ingest.Detected{Product: "AcmeVPN httpd"}}},
		{"gzip header date", "cert-and-favicon", "1.0.x", ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{mmh3(945408572), gzProbe}}},
		{"hex epoch in an etag", "cert-and-favicon", "1.0.x", ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{mmh3(945408572), probe("GET", "/x", 200, "", "ETag", `"1b5-5e8fa2b1"`)}}},
		{"request body form value", "login-form", "", ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{
			Request: &ingest.Request{Method: "POST", Path: "/", Body: ingest.BytesBody([]byte("myname=a&LoginPassword=Acme+Series"))}, Response: &ingest.Response{Status: 200}}}}},
		{"request body of another value", "", "", ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{
			Request: &ingest.Request{Method: "POST", Path: "/", Body: &ingest.Body{Data: "LoginPassword=secret"}}, Response: &ingest.Response{Status: 200, Body: &ingest.Body{Data: "LoginPassword=Acme+Series"}}}}}},
		{"hex epoch out of every row", "cert-and-favicon", "", ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{mmh3(945408572), probe("GET", "/x", 200, "", "ETag", `"1b5-6e8fa2b1"`)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp, ok := rules.Match(&tt.svc, nil)
			if fp.RuleID != tt.want || ok != (tt.want != "") {
				t.Fatalf("got rule %q (%v), want %q", fp.RuleID, ok, tt.want)
			}
			if fp.VersionBand != tt.version {
				t.Errorf("band %q, want %q", fp.VersionBand, tt.version)
			}
		})
	}
}

// TestParseRules_NamedConditions: a condition defined once under
// conditions: guards rules of other files, nests, and matches as if it
// were written in place.
func TestParseRules_NamedConditions(t *testing.T) {
	fsys := fstest.MapFS{
		"00-shared.yaml": {Data: []byte(`version: 2
rules: []
conditions:
  generic-server: {header.server: '^(Apache|nginx)\b'}
  copy: {any: [{use: generic-server}, {body: 'saved from url'}]}
`)},
		"10-acme.yaml": {Data: []byte(`version: 2
rules:
  - id: acme-vpn
    vendor: Acme
    product: VPN
    protocol_family: ssl-vpn
    match: {path: /vpn, body: 'AcmeVPN'}
    guard: {use: copy}
  - id: acme-admin
    vendor: Acme
    product: Admin
    protocol_family: https
    match: {all: [{title: 'Acme Admin'}, {not: {use: generic-server}}]}
`)},
	}
	rules, err := LoadRulesFS(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, want string
		probe      ingest.Probe
	}{
		{"product", "acme-vpn", httpProbe("GET", "/vpn", 200, "AcmeVPN", "Server", "AcmeOS")},
		{"guarded by the nested name", "", httpProbe("GET", "/vpn", 200, "AcmeVPN", "Server", "nginx/1.25")},
		{"guarded by the other branch", "", httpProbe("GET", "/vpn", 200, "<!-- saved from url=(0022)x -->AcmeVPN")},
		{"not of a name", "acme-admin", httpProbe("GET", "/", 200, "<title>Acme Admin</title>")},
		{"not of a name holds", "", httpProbe("GET", "/", 200, "<title>Acme Admin</title>", "Server", "Apache/2.4")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp, ok := rules.Match(&ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{tt.probe}}, nil)
			if fp.RuleID != tt.want || ok != (tt.want != "") {
				t.Fatalf("got rule %q (%v), want %q", fp.RuleID, ok, tt.want)
			}
		})
	}
	// A bad named condition is reported once, under its own name, however
	// many rules use it.
	doc := "version: 2\nconditions:\n  c: {title: '('}\nrules:\n" +
		"  - {id: a, vendor: v, product: p, protocol_family: f, match: {title: x}, guard: {use: c}}\n" +
		"  - {id: b, vendor: v, product: p, protocol_family: f, match: {title: y}, guard: {use: c}}\n"
	_, err = ParseRules([]byte(doc), "r.yaml")
	if err == nil || strings.Count(err.Error(), "error parsing regexp") != 1 {
		t.Errorf("err = %v, want one regexp error", err)
	}
}

func TestParseRules_Errors(t *testing.T) {
	rule := "version: 2\nrules:\n  - {id: a, vendor: v, product: p, protocol_family: f, "
	tests := []struct{ name, doc, want string }{
		{"unknown key", "version: 2\nrules:\n  - id: a\n    vendr: x\n", "vendr"},
		{"bad version", "version: 1\nrules: []\n", "version: want 2"},
		{"bad regex", rule + "match: {any: [{title: '('}]}}\n", "r.yaml: rule a: match.any[0].title: error parsing regexp"},
		{"unknown field", rule + "match: {all: [{title: x}, {header: Server}]}}\n", "rule a: match.all[1].header: unknown field"},
		{"unknown tls attribute", rule + "match: {tls.subject.xx: x}}\n", "match.tls.subject.xx: unknown field"},
		{"empty condition", rule + "match: {port: [1]}}\n", "rule a: match: a condition needs a field that reads evidence"},
		{"path only", rule + "match: {any: [{path: /x, status: 200}]}}\n", "match.any[0]: a condition needs"},
		{"a registered status among unregistered ones", rule + "match: {path: /x, status: [512, 401]}}\n", "rule a: match: a condition needs a field that reads evidence"},
		{"missing match", rule + "}\n", "rule a: match: required"},
		{"bad precision", rule + "match: {title: x}, versions: [{from: body, regex: x, precision: vague}]}\n", "rule a: versions[0].precision"},
		{"bad from", rule + "match: {title: x}, versions: [{from: bodyy, regex: x, precision: exact}]}\n", "rule a: versions[0].from: unknown field"},
		{"no table", rule + "match: {title: x}, versions: [{from: body, table: t}]}\n", "versions[0].table: no table"},
		{"bad date row", "version: 2\nrules: []\ntables:\n  t:\n    source: s\n    rows: [{from: 2020-01-01, to: 2019-01-01, band: x}]\n", "table t: rows[0]: from, to"},
		{"row without source", "version: 2\nrules: []\ntables:\n  t:\n    rows: [{key: abc, version: '1.0'}]\n", "table t: rows[0]: source"},
		{"row with both", "version: 2\nrules: []\ntables:\n  t:\n    source: s\n    rows: [{key: abc, version: '1.0', band: 1.x}]\n", "rows[0]: want exactly one of version and band"},
		{"unknown named condition", rule + "match: {title: x}, guard: {any: [{use: nope}]}}\n", "rule a: guard.any[0].use: no condition named \"nope\""},
		{"named condition uses itself", "version: 2\nrules: []\nconditions:\n  c1: {any: [{title: x}, {use: c2}]}\n  c2: {use: c1}\n", "r.yaml: conditions.c1: condition.any[1].use(c2).use: condition \"c1\" uses itself (c1 -> c2 -> c1)"},
		{"bad named condition", "version: 2\nrules: []\nconditions:\n  c: {title: '('}\n", "r.yaml: conditions.c: condition.title: error parsing regexp"},
		{"empty named condition", "version: 2\nrules: []\nconditions:\n  c:\n", "r.yaml: conditions.c: condition: want a mapping of fields"},
		{"use beside a field", rule + "match: {title: x, use: c}}\n", "match.use: all, any, not and use stand alone"},
		{"named condition twice", "", "conditions.c: also defined in"},
		{"duplicate id", "version: 2\nrules:\n  - {id: a, vendor: v, product: p, protocol_family: f, match: {title: x}}\n  - {id: a, vendor: v, product: p, protocol_family: f, match: {title: y}}\n", "rule a: id: also used"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.doc == "" {
				// two files defining one name
				fsys := fstest.MapFS{
					"a.yaml": {Data: []byte("version: 2\nrules: []\nconditions:\n  c: {title: x}\n")},
					"b.yaml": {Data: []byte("version: 2\nrules: []\nconditions:\n  c: {title: y}\n")},
				}
				_, err = LoadRulesFS(fsys, ".")
			} else {
				_, err = ParseRules([]byte(tt.doc), "r.yaml")
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestCatalog_Match(t *testing.T) {
	cat := sampleCatalog(t)
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	fortios := []string{"cpe:2.3:o:fortinet:fortios"}
	asa := []string{"cpe:2.3:o:cisco:adaptive_security_appliance_software", "cpe:2.3:a:cisco:firepower_threat_defense"}
	tests := []struct {
		name     string
		fp       Fingerprint
		wantCVEs []string // must be present
		notCVEs  []string // must be absent
		wantConf string
		wantVia  string
		wantEOL  string // "" = null
		nilSum   bool
	}{
		{"exact version inside ranges", Fingerprint{CPE: asa, ExactVersion: "9.8.4.10"},
			[]string{"CVE-2020-3452", "CVE-2023-20269"}, nil, ConfHigh, ViaExactVersion, "", false},
		{"exact version at an excluded end", Fingerprint{CPE: asa, ExactVersion: "9.8.4.20"},
			nil, []string{"CVE-2020-3452"}, ConfHigh, ViaExactVersion, "", false},
		{"exact ivanti version listed with update", Fingerprint{CPE: []string{"cpe:2.3:a:ivanti:connect_secure"}, ExactVersion: "9.1R11"},
			[]string{"CVE-2023-46805", "CVE-2024-21887"}, []string{"CVE-2019-11510"}, ConfHigh, ViaExactVersion, EOLEnded, false},
		{"band overlapping ranges", Fingerprint{CPE: fortios, VersionBand: "7.0.x"},
			[]string{"CVE-2022-42475", "CVE-2024-21762", "CVE-2024-55591"}, []string{"CVE-2018-13379"}, ConfMedium, ViaVersionBand, EOLEnded, false},
		{"band of a supported cycle", Fingerprint{CPE: fortios, VersionBand: "7.4.x"},
			[]string{"CVE-2024-21762"}, []string{"CVE-2024-55591", "CVE-2018-13379"}, ConfMedium, ViaVersionBand, EOLSupported, false},
		{"band of a cycle ended in 2026", Fingerprint{CPE: fortios, VersionBand: "7.2.x"},
			[]string{"CVE-2024-21762"}, []string{"CVE-2024-55591", "CVE-2018-13379"}, ConfMedium, ViaVersionBand, EOLEnded, false},
		{"band with an inclusive end", Fingerprint{CPE: fortios, VersionBand: "5.0.x"},
			[]string{"CVE-2022-42475"}, []string{"CVE-2024-21762"}, ConfMedium, ViaVersionBand, EOLUnknown, false},
		{"product only", Fingerprint{CPE: []string{"cpe:2.3:o:paloaltonetworks:pan-os"}},
			[]string{"CVE-2024-3400"}, nil, ConfLow, ViaProduct, EOLUnknown, false},
		{"version outside every range", Fingerprint{CPE: fortios, ExactVersion: "7.6.1"},
			nil, []string{"CVE-2022-42475", "CVE-2024-21762", "CVE-2024-55591", "CVE-2023-27997", "CVE-2018-13379"}, "", "", EOLSupported, false},
		{"unknown product", Fingerprint{Vendor: "Nobody"}, nil, nil, "", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, sum := cat.Match(tt.fp, now)
			if tt.nilSum {
				if sum != nil || fs != nil {
					t.Fatalf("got %v %v, want nil", fs, sum)
				}
				return
			}
			if tt.wantConf == "" && len(fs) != 0 {
				t.Errorf("findings %v, want none", fs)
			}
			got := map[string]bool{}
			for _, f := range fs {
				got[f.CveID] = true
				if f.DetectionConfidence != tt.wantConf || *f.MatchedVia != tt.wantVia || f.Source != SourceNVD {
					t.Errorf("%s: confidence %s via %s", f.CveID, f.DetectionConfidence, *f.MatchedVia)
				}
				if f.KevAddedAt == nil || f.EpssScore == nil || f.SeverityScore == nil || f.CvssVersion == nil || f.SeverityRating == nil {
					t.Errorf("%s: KEV/EPSS/CVSS missing: %+v", f.CveID, f)
				}
			}
			for _, id := range tt.wantCVEs {
				if !got[id] {
					t.Errorf("missing %s (got %v)", id, got)
				}
			}
			for _, id := range tt.notCVEs {
				if got[id] {
					t.Errorf("unexpected %s", id)
				}
			}
			if sum.TotalCount != len(fs) || sum.KevCount != len(fs) || *sum.LastComputedAt != "2026-11-23T00:00:00Z" {
				t.Errorf("summary %+v", sum)
			}
			gotEOL := ""
			if sum.EolStatus != nil {
				gotEOL = *sum.EolStatus
			}
			if gotEOL != tt.wantEOL {
				t.Errorf("eol = %q, want %q", gotEOL, tt.wantEOL)
			}
		})
	}
}

func TestCatalog_Severity(t *testing.T) {
	cat := sampleCatalog(t)
	fs, sum := cat.Match(Fingerprint{CPE: []string{"cpe:2.3:o:cisco:adaptive_security_appliance_software"}, ExactVersion: "9.8.4.10"}, time.Now())
	for _, f := range fs {
		if f.CveID == "CVE-2020-3452" {
			if *f.SeverityScore != 7.5 || *f.SeverityRating != "high" || *f.CvssVersion != "3.1" || *f.KevAddedAt != "2021-11-03T00:00:00Z" {
				t.Errorf("CVE-2020-3452 = score %v %v %v kev %v", *f.SeverityScore, *f.SeverityRating, *f.CvssVersion, *f.KevAddedAt)
			}
		}
	}
	if sum.MaxSeverityScore == nil || *sum.MaxSeverityScore < 7.5 {
		t.Errorf("max severity %v", sum.MaxSeverityScore)
	}
}

func TestCatalog_LoadErrors(t *testing.T) {
	tests := []struct {
		name string
		load func(*Catalog) error
		want string
	}{
		{"epss without model line", func(c *Catalog) error { return c.LoadEPSS(strings.NewReader("cve,epss,percentile\nCVE-1,0.1,0.2\n")) }, "model_version"},
		{"epss bad header", func(c *Catalog) error { return c.LoadEPSS(strings.NewReader("#model_version:v1\ncve,score\n")) }, "line 2"},
		{"epss bad row", func(c *Catalog) error {
			return c.LoadEPSS(strings.NewReader("#model_version:v1\ncve,epss,percentile\nCVE-1,0.1,0.2\nCVE-2,abc,0.2\n"))
		}, "line 4"},
		{"kev bad date", func(c *Catalog) error {
			return c.LoadKEV(strings.NewReader(`{"vulnerabilities":[{"cveID":"CVE-1","dateAdded":"soon"}]}`))
		}, "CVE-1"},
		{"nvd not a record", func(c *Catalog) error { return c.LoadNVD(strings.NewReader(`{"foo":1}`)) }, "CVE id"},
		{"eol bad date", func(c *Catalog) error {
			return c.LoadEOL(strings.NewReader("products:\n  - cpe: cpe:2.3:o:a:b\n    cycles: [{cycle: '1', eol: never}]\n"))
		}, "cycles[0].eol"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.load(NewCatalog())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	c := NewCatalog()
	if err := c.LoadEPSS(strings.NewReader("#model_version:v2026.06.15,score_date:2026-09-29T12:00:22Z\ncve,epss,percentile\nCVE-1999-0001,0.03351,0.88255\n")); err != nil {
		t.Fatal(err)
	}
	if c.EPSSModel != "model_version:v2026.06.15,score_date:2026-09-29T12:00:22Z" || c.epss["CVE-1999-0001"] != [2]float64{0.03351, 0.88255} {
		t.Errorf("epss = %v %v", c.EPSSModel, c.epss)
	}
}

func TestRules_RecogSSHBanner(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	ssh := func(line string) *ingest.Service {
		return bannerService(22, "tcp", line)
	}
	tests := []struct {
		name, banner, vendor string
	}{
		// Recog matches the software part after "SSH-2.0-" (its ssh_banners.xml).
		{"zyxel", "SSH-2.0-Zyxel SSH server\r\n", "Zyxel"},
		{"array networks", "SSH-2.0-ArrayOS\r\n", "Array Networks"},
		{"protocol 1.99", "SSH-1.99-ArrayOS\n", "Array Networks"},
		{"not an identification line", "Zyxel SSH server\r\n", ""},
		{"an ordinary OpenSSH", "SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13.5\r\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, ssh(tt.banner), wantMatch{Vendor: tt.vendor})
		})
	}
}

// TestRules_RecogProtocolBanners checks that raw answers reach Recog's
// FTP, SMTP, telnet and SNMP databases as Recog writes their values: a
// greeting without its reply code, telnet text without its option
// negotiation, a sysDescr out of snmpwalk's listing; telnet and SNMP text
// only on their ports, and Zyxel's home routers name nothing.
func TestRules_RecogProtocolBanners(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	svc := bannerService
	iac := "\xff\xfd\x18\xff\xfd\x20\xff\xfb\x01"
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"routeros telnet with option negotiation", svc(23, "tcp", iac+"\r\nMikroTik v6.42.3 (stable)\r\nLogin: "), wantMatch{Vendor: "MikroTik", Version: "6.42.3"}},
		{"routeros sysDescr in snmpwalk's listing", svc(161, "udp", "SNMPv2-MIB::sysDescr.0 = STRING: RouterOS RB SXT-5D\nSNMPv2-MIB::sysObjectID.0 = OID: SNMPv2-SMI::enterprises.14988.1"), wantMatch{Vendor: "MikroTik"}},
		{"routeros ftp greeting without its code", svc(21, "tcp", "example.com FTP server (MikroTik 6.18) ready"), wantMatch{Vendor: "MikroTik"}},
		{"a zyxel adsl router's sysDescr", svc(161, "udp", "Prestige 660HW-61"), wantMatch{}},
		{"a zyxel router's telnet prompt", svc(23, "tcp", "ZyXEL VDSL Router Login: "), wantMatch{}},
		{"mikrotik's switch os", svc(161, "udp", "CSS326-24G-2S+ SwOS v2.13"), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkMatch(t, rules, tt.svc, tt.want) })
	}
}

// TestRules_TLSSubjectWhole: tls.subject and tls.issuer read the whole DN
// and each of its attributes on its own (docs/rules.md), so an anchored
// pattern matches an attribute's whole value.
func TestRules_TLSSubjectWhole(t *testing.T) {
	doc := `version: 2
rules:
  - {id: o, vendor: Acme, product: Box, protocol_family: https, match: {tls.subject: '^Acme Appliances$'}}
  - {id: dn, vendor: Acme, product: Box, protocol_family: https, match: {tls.issuer: '^CN=Acme CA 1, O=Acme$'}}
`
	rules, err := ParseRules([]byte(doc), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, want string
		tls        ingest.TLS
	}{
		{"attribute value", "o", ingest.TLS{Subject: &ingest.DN{CN: "box1", O: []string{"Other", "Acme Appliances"}}}},
		{"whole DN string", "dn", ingest.TLS{Issuer: &ingest.DN{DN: "CN=Acme CA 1, O=Acme"}}},
		{"no attribute equal", "", ingest.TLS{Subject: &ingest.DN{CN: "Acme Appliances Ltd"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp, ok := rules.Match(&ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{TLS: &tt.tls}}}, nil)
			if fp.RuleID != tt.want || ok != (tt.want != "") {
				t.Fatalf("got rule %q (%v), want %q", fp.RuleID, ok, tt.want)
			}
		})
	}
}

// TestUnregisteredStatuses: only codes outside the HTTP registry count as
// evidence, and only when every code of the matcher is one.
func TestUnregisteredStatuses(t *testing.T) {
	tests := []struct {
		eq   []string
		want bool
	}{
		{[]string{"512", "513"}, true},
		{[]string{"599"}, true},
		{[]string{"512", "401"}, false},
		{[]string{"200"}, false},
		{[]string{"306"}, false}, // registered, as unused
		{[]string{"418"}, false},
		{[]string{"600"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := unregisteredStatuses(matcher{eq: tt.eq}); got != tt.want {
			t.Errorf("%v: got %v, want %v", tt.eq, got, tt.want)
		}
	}
	if unregisteredStatuses(matcher{any: true}) {
		t.Error("a presence test is not a code")
	}
}

// TestStatusCodes: a status list is compared as numbers, with the same
// answers as the string comparison it replaces; an expression keeps the
// string path, and an unrecorded status passes a registered list.
func TestStatusCodes(t *testing.T) {
	for _, tt := range []struct {
		m    matcher
		want []int
	}{
		{matcher{eq: []string{"301", "302"}}, []int{301, 302}},
		{matcher{eq: []string{"2xx"}}, nil},
		{matcher{eq: []string{"0404"}}, nil},
		{matcher{any: true}, nil},
	} {
		if got := statusCodes(tt.m); !slices.Equal(got, tt.want) {
			t.Errorf("%+v: %v, want %v", tt.m, got, tt.want)
		}
	}
	ft := fieldTest{f: field{kind: fStatus}, m: matcher{eq: []string{"302", "404"}}, anyStatus: true, codes: []int{302, 404}}
	slow := ft
	slow.codes = nil
	for _, st := range []int{0, 200, 302, 404, 4040, 30} {
		v := &probeView{p: &ingest.Probe{Response: &ingest.Response{Status: st}}}
		if got, want := ft.holds(nil, v), slow.holds(nil, v); got != want {
			t.Errorf("status %d: %v by number, %v by string", st, got, want)
		}
	}
	if v := (&probeView{p: &ingest.Probe{}}); ft.holds(nil, v) {
		t.Error("a probe without a response holds a status list")
	}
}

// TestSysDescr: the sysDescr value out of the forms scanners print.
func TestSysDescr(t *testing.T) {
	tests := []struct{ in, want string }{
		{"RouterOS RB SXT-5D", "RouterOS RB SXT-5D"},
		{"SNMPv2-MIB::sysDescr.0 = STRING: Juniper SRX240\nSNMPv2-MIB::sysUpTime.0 = Timeticks: (1) 0:00:00.01", "Juniper SRX240"},
		{".1.3.6.1.2.1.1.1.0 = STRING: \"Cisco Adaptive Security Appliance Version 9.8(2)\"", "Cisco Adaptive Security Appliance Version 9.8(2)"},
		{"| snmp-sysdescr: Linux fw 3.10\n|_  System uptime: 1d", "Linux fw 3.10"},
		{"sysDescr.0:FortiGate-60F", "FortiGate-60F"},
		{"SNMPv2-MIB::sysName.0 = STRING: fw1", ""},
	}
	for _, tt := range tests {
		if got, _ := sysDescr(tt.in); got != tt.want {
			t.Errorf("sysDescr(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := stripTelnetOptions("\xff\xfd\x18\xff\xfa\x18\x01\xff\xf0login: \xff\xff"); got != "login: \xff" {
		t.Errorf("stripTelnetOptions = %q", got)
	}
}

// countCond counts its evaluations.
type countCond struct{ n *int }

func (c countCond) holds(*evidence) bool { *c.n++; return true }

// TestMemoCond: a named condition shared by several rules is evaluated
// once per Match (its answer kept in the evidence's memo), and evaluated
// each time where no memo is set up.
func TestMemoCond(t *testing.T) {
	n := 0
	m := &memoCond{id: 0, c: countCond{&n}}
	e := &evidence{memo: make([]uint8, 1)}
	for range 3 {
		if !m.holds(e) {
			t.Fatal("holds = false")
		}
	}
	if n != 1 {
		t.Errorf("evaluated %d times with a memo, want 1", n)
	}
	n = 0
	bare := &evidence{}
	m.holds(bare)
	m.holds(bare)
	if n != 2 {
		t.Errorf("evaluated %d times without a memo, want 2", n)
	}
}

// TestRules_NamedConditionShared: every use of a named condition is the
// same compiled condition.
func TestRules_NamedConditionShared(t *testing.T) {
	doc := `version: 2
conditions:
  tell: {header.server: '^Acme$'}
rules:
  - {id: a, vendor: Acme, product: A, protocol_family: https, match: {use: tell}}
  - {id: b, vendor: Acme, product: B, protocol_family: https, match: {all: [{use: tell}, {title: x}]}}
`
	rs, err := ParseRules([]byte(doc), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, ok := rs.rules[0].match.(*memoCond)
	if !ok {
		t.Fatalf("rule a's match is %T, want the shared named condition", rs.rules[0].match)
	}
	if b := rs.rules[1].match.(allOf)[0]; b != condition(a) {
		t.Errorf("rule b uses another copy of the named condition")
	}
	if rs.nmemo != 1 {
		t.Errorf("nmemo = %d", rs.nmemo)
	}
}

// TestRules_FileGuard: a file's `guard` guards every rule of the file
// beside the rule's own guard, and no rule of another file.
func TestRules_FileGuard(t *testing.T) {
	rules, err := parseDocs([]namedDoc{{"a.yaml", []byte(`version: 2
guard: {header.server: '^cloudflare$'}
rules:
  - id: a-plain
    vendor: Acme
    product: VPN
    protocol_family: https
    match: {body: 'AcmeVPN'}
  - id: a-own-guard
    vendor: Acme
    product: Portal
    protocol_family: https
    guard: {header.server: '^nginx'}
    match: {body: 'AcmePortal'}
`)}, {"b.yaml", []byte(`version: 2
rules:
  - id: b-plain
    vendor: Bolt
    product: VPN
    protocol_family: https
    match: {body: 'BoltVPN'}
`)}})
	if err != nil {
		t.Fatal(err)
	}
	answer := func(server, body string) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{Request: &ingest.Request{Method: "GET", Path: "/"},
			Response: &ingest.Response{Status: 200, Headers: ingest.Headers{{Name: "Server", Value: server}}, Body: ingest.TextBody(body)}}}}
	}
	for _, tt := range []struct{ name, server, body, want string }{
		{"plain rule named", "Acme", "AcmeVPN", "a-plain"},
		{"file guard refuses", "cloudflare", "AcmeVPN", ""},
		{"own guard kept", "nginx/1.25", "AcmePortal", ""},
		{"file guard beside own guard", "cloudflare", "AcmePortal", ""},
		{"own guard's rule named", "Acme", "AcmePortal", "a-own-guard"},
		{"another file unguarded", "cloudflare", "BoltVPN", "b-plain"},
	} {
		fp, ok := rules.Match(answer(tt.server, tt.body), nil)
		if got := fp.RuleID; !ok && got != "" || got != tt.want {
			t.Errorf("%s: named by %q, want %q", tt.name, got, tt.want)
		}
	}
	if _, err := ParseRules([]byte("version: 2\nguard: {nosuch: x}\nrules:\n  - {id: x, vendor: V, product: P, protocol_family: f, match: {body: x}}\n"), "g.yaml"); err == nil || !strings.Contains(err.Error(), "g.yaml: rule x: file guard") {
		t.Errorf("bad file guard: %v", err)
	}
}
