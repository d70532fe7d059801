package recog

import (
	"encoding/base64"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

func loadT(t testing.TB) *DB {
	t.Helper()
	db, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestLoad(t *testing.T) {
	db := loadT(t)
	if db.Total() < 1500 {
		t.Fatalf("only %d fingerprints loaded", db.Total())
	}
	for _, f := range db.SkippedFingerprints() {
		t.Logf("skipped %s:%d %q: %s", f.File, f.Line, f.Pattern, f.Skip)
	}
	share := float64(db.Skipped()) / float64(db.Total())
	t.Logf("%d databases, %d fingerprints, %d skipped (%.2f%%)", len(db.Databases()), db.Total(), db.Skipped(), 100*share)
	if share >= 0.05 {
		t.Errorf("%d of %d fingerprints skipped (%.1f%%), want under 5%%", db.Skipped(), db.Total(), 100*share)
	}
	want := []string{"html_title", "http_header.cookie", "http_header.server", "http_header.wwwauth", "ssh.banner", "x509.issuer", "x509.subject"}
	fields := strings.Join(db.Fields(), " ")
	for _, w := range want {
		if len(db.Fingerprints(w)) == 0 {
			t.Errorf("no fingerprints for %q (have %s)", w, fields)
		}
	}
}

// TestExamples is the equivalent of Recog's verify tool: every example of
// every fingerprint must match that fingerprint and yield the parameters
// the example's attributes name.
func TestExamples(t *testing.T) {
	db := loadT(t)
	var examples, noExamples, shadowed int
	for _, d := range db.Databases() {
		for _, f := range d.Fingerprints {
			if !f.Supported() {
				continue
			}
			if len(f.Examples) == 0 {
				noExamples++
			}
			for _, ex := range f.Examples {
				examples++
				m, ok := f.Match(ex.Text)
				if !ok {
					t.Errorf("%s:%d %q: example %q does not match %s", f.File, f.Line, f.Description, ex.Text, f.Regexp())
					continue
				}
				for k, want := range ex.Expect {
					if got, ok := m.Params[k]; !ok || got != want {
						t.Errorf("%s:%d %q: example %q: %s = %q (present %v), want %q", f.File, f.Line, f.Description, ex.Text, k, got, ok, want)
					}
				}
				if !f.mayMatch(&input{s: ex.Text}) {
					t.Errorf("%s:%d %q: prefilter %v rejects example %q", f.File, f.Line, f.Description, f.lits, ex.Text)
				}
				// Recog also requires that no earlier fingerprint of the
				// database claims the example, so the whole-DB Match must
				// answer with this fingerprint.
				if first, ok := db.Match(d.Matches, ex.Text); !ok || first.Description != f.Description {
					shadowed++
					t.Errorf("%s:%d %q: example %q first matched by %q", f.File, f.Line, f.Description, ex.Text, first.Description)
				}
			}
		}
	}
	t.Logf("%d examples checked; %d fingerprints without examples; %d examples first claimed by an earlier fingerprint", examples, noExamples, shadowed)
	if examples < 1000 {
		t.Errorf("only %d examples checked", examples)
	}
}

func TestTranslate(t *testing.T) {
	ok := []struct{ in, out string }{
		{`^Server/(\d+)$`, `^Server/(\d+)$`},
		{`^v(\h+)$`, `^v([0-9A-Fa-f]+)$`},
		{`^[\h:]+$`, `^[0-9A-Fa-f:]+$`},
		{`^x\H`, `^x[^0-9A-Fa-f]`},
		{`\Afoo\Z`, `\Afoo(?:\n?\z)`},
		{`foo\z`, `foo\z`},
		{`^(?<ver>\d+)\.(\d+)$`, `^(?P<ver>\d+)\.(?:\d+)$`},
		{`(?m:a.b)`, `(?s:a.b)`},
		{`(?i)abc`, `(?i)abc`},
		{`(?i-m:abc)`, `(?i-s:abc)`},
		{`\u00e9t\e`, `\x{00e9}t\x1B`},
		{`[[:alpha:]]+\/x`, `[[:alpha:]]+\/x`},
		{`[]a]`, `[]a]`},
		{`[^]a]`, `[^]a]`},
		{`a{2}?`, `a{2}?`},
	}
	for _, c := range ok {
		got, err := translate(c.in)
		if err != nil || got != c.out {
			t.Errorf("translate(%q) = %q, %v; want %q", c.in, got, err, c.out)
		}
	}
	refused := []string{
		`foo(?=bar)`, `foo(?!bar)`, `(?<=a)b`, `(?<!a)b`, `(?>ab)`, `a*+b`, `a++`, `a?+`, `a{2}+`,
		`(a)\1`, `\k<n>`, `\g<1>`, `\Gfoo`, `a\Kb`, `[a-z&&[^x]]`, `[a[bc]]`, `(?x) a b`, `(?#c)a`, `[abc`,
	}
	for _, in := range refused {
		if got, err := translate(in); err == nil {
			t.Errorf("translate(%q) = %q, want refusal", in, got)
		}
	}
}

const goodXML = `<?xml version="1.0" encoding="UTF-8"?>
<fingerprints matches="test.banner" protocol="TCPX" preference="0.5">
  <!-- <fingerprint pattern="commented out"><description>x</description></fingerprint> -->
  <fingerprint pattern="^Acme ([\d.]+)(?: build (\d+))?$">
    <description>Acme
      server</description>
    <example service.version="2.1" _tmp.build="7">Acme 2.1 build 7</example>
    <example service.version="2.2">Acme 2.2</example>
    <param pos="0" name="service.vendor" value="Acme"/>
    <param pos="1" name="service.version"/>
    <param pos="2" name="_tmp.build"/>
    <param pos="0" name="service.cpe23" value="cpe:/a:acme:server:{service.version}"/>
    <param pos="0" name="service.edition" value="{service.version}-b{_tmp.build}"/>
    <param pos="0" name="hw.device" value="VPN"/>
  </fingerprint>
  <fingerprint pattern="^Beta(?: (\d+))?$">
    <description>Beta</description>
    <param pos="0" name="service.product" value="Beta"/>
    <param pos="1" name="service.version"/>
    <param pos="0" name="service.cpe23" value="cpe:/a:beta:beta:{service.version}"/>
    <param pos="0" name="service.protocol" value="beta"/>
  </fingerprint>
  <fingerprint pattern="^BIN\x00(\w+)\x01" flags="REG_ICASE">
    <description>Binary banner</description>
    <example _encoding="base64" service.version="v9">QklOAHY5AQ==</example>
    <param pos="1" name="service.version"/>
  </fingerprint>
  <fingerprint pattern="^first.line$.^second" flags="REG_MULTILINE">
    <description>Two lines</description>
    <example>first line
second</example>
    <param pos="0" name="os.vendor" value="Two"/>
  </fingerprint>
  <fingerprint pattern="foo(?=bar)">
    <description>Lookahead</description>
    <param pos="0" name="os.vendor" value="Look"/>
  </fingerprint>
</fingerprints>
`

func parseGood(t *testing.T) *DB {
	t.Helper()
	d, err := ParseDatabase("test.xml", []byte(goodXML))
	if err != nil {
		t.Fatal(err)
	}
	return New(d)
}

func TestParseAndInterpolation(t *testing.T) {
	db := parseGood(t)
	d := db.Databases()[0]
	if d.Matches != "test.banner" || d.Protocol != "tcpx" || d.Preference != 0.5 || len(d.Fingerprints) != 5 {
		t.Fatalf("database = %+v", d)
	}
	if got := d.Fingerprints[0].Description; got != "Acme server" {
		t.Errorf("description %q", got)
	}
	if d.Fingerprints[0].Line != 4 {
		t.Errorf("line = %d, want 4", d.Fingerprints[0].Line)
	}
	if db.Total() != 5 || db.Skipped() != 1 || db.SkippedFingerprints()[0].Skip != "lookahead" {
		t.Errorf("total %d skipped %d", db.Total(), db.Skipped())
	}

	m, ok := db.Match("test.banner", "Acme 2.1 build 7")
	if !ok {
		t.Fatal("no match")
	}
	want := map[string]string{
		"service.vendor":   "Acme",
		"service.version":  "2.1",
		"service.cpe23":    "cpe:/a:acme:server:2.1",
		"service.edition":  "2.1-b7",
		"hw.device":        "VPN",
		"service.protocol": "tcpx",
	}
	if m.DB != "test.banner" || m.Description != "Acme server" || !equalMaps(m.Params, want) {
		t.Errorf("match = %+v, want params %v", m, want)
	}
	if m.Vendor() != "Acme" || m.Version() != "2.1" || m.DeviceType() != "VPN" || m.Product() != "" {
		t.Errorf("accessors: %q %q %q %q", m.Vendor(), m.Product(), m.Version(), m.DeviceType())
	}

	// The optional build did not participate: the param that needs it is
	// dropped rather than half-filled; _tmp.* never leaks.
	m, _ = db.Match("test.banner", "Acme 2.2")
	if _, ok := m.Params["service.edition"]; ok {
		t.Errorf("service.edition = %q, want absent", m.Params["service.edition"])
	}
	if _, ok := m.Params["_tmp.build"]; ok {
		t.Error("_tmp.build leaked")
	}
	// A missing version in a cpe23 becomes "-", as in Recog; a
	// fingerprint's own service.protocol wins over the database's.
	m, _ = db.Match("test.banner", "Beta")
	if m.Params["service.cpe23"] != "cpe:/a:beta:beta:-" || m.Params["service.protocol"] != "beta" {
		t.Errorf("beta params = %v", m.Params)
	}
	if _, ok := m.Params["service.version"]; ok {
		t.Error("non-participating capture present")
	}
	if _, ok := db.Match("test.banner", "nothing"); ok {
		t.Error("matched nothing")
	}
	if _, ok := db.Match("other.field", "Acme 2.1"); ok {
		t.Error("matched unknown field")
	}
	if all := db.MatchAll("test.banner", "Acme 3"); len(all) != 1 {
		t.Errorf("MatchAll = %v", all)
	}
}

func TestBase64Example(t *testing.T) {
	db := parseGood(t)
	f := db.Databases()[0].Fingerprints[2]
	if len(f.Examples) != 1 || f.Examples[0].Text != "BIN\x00v9\x01" {
		t.Fatalf("examples = %q", f.Examples)
	}
	if _, ok := f.Examples[0].Expect["_encoding"]; ok {
		t.Error("_encoding kept as an expected param")
	}
	m, ok := f.Match(f.Examples[0].Text)
	if !ok || m.Version() != "v9" {
		t.Errorf("match = %+v %v", m, ok)
	}
	// REG_ICASE
	if _, ok := f.Match("bin\x00X\x01"); !ok {
		t.Error("REG_ICASE not honoured")
	}
	// Wrapped base64 (as in some Recog files) decodes too.
	enc := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 80)))
	if b, err := decodeBase64(enc[:40] + "\n    " + enc[40:]); err != nil || len(b) != 80 {
		t.Errorf("wrapped base64: %v %d", err, len(b))
	}
}

func TestFlagsAndAnchors(t *testing.T) {
	db := parseGood(t)
	two := db.Databases()[0].Fingerprints[3]
	// REG_MULTILINE is Ruby's MULTILINE: '.' matches a newline.
	if _, ok := two.Match("first line\nsecond"); !ok {
		t.Error("REG_MULTILINE: dot does not match newline")
	}
	// Ruby's ^ and $ are line anchors.
	acme := db.Databases()[0].Fingerprints[0]
	if _, ok := acme.Match("garbage\nAcme 1.0\nmore"); !ok {
		t.Error("^ and $ are not line anchors")
	}
	// Without the flag, '.' does not match a newline.
	d, err := ParseDatabase("x.xml", []byte(`<fingerprints><fingerprint pattern="^a.b$"><description>d</description><param pos="0" name="os.vendor" value="v"/></fingerprint></fingerprints>`))
	if err != nil {
		t.Fatal(err)
	}
	if d.Matches != "x" {
		t.Errorf("matches defaults to the file name: %q", d.Matches)
	}
	if _, ok := d.Fingerprints[0].Match("a\nb"); ok {
		t.Error("dot matched newline without REG_MULTILINE")
	}
}

func TestMalformed(t *testing.T) {
	fp := func(body string) string {
		return `<fingerprints matches="m"><fingerprint pattern="^ok$"><description>fine</description><param pos="0" name="os.vendor" value="v"/></fingerprint>` + body + `</fingerprints>`
	}
	cases := []struct{ name, xml, want string }{
		{"syntax", fp(`<fingerprint pattern="^x$"><description>broken</description>`), "bad.xml"},
		{"nopattern", fp(`<fingerprint><description>No pattern</description><param pos="0" name="os.vendor" value="v"/></fingerprint>`), `"No pattern"`},
		{"badpos", fp(`<fingerprint pattern="^x$"><description>Bad pos</description><param pos="one" name="os.vendor"/></fingerprint>`), `"Bad pos"`},
		{"novalue", fp(`<fingerprint pattern="^x$"><description>No value</description><param pos="0" name="os.vendor"/></fingerprint>`), `pos 0 without a value`},
		{"flag", fp(`<fingerprint pattern="^x$" flags="REG_WHATEVER"><description>Bad flag</description><param pos="0" name="os.vendor" value="v"/></fingerprint>`), `REG_WHATEVER`},
		{"group", fp(`<fingerprint pattern="^(x)$"><description>Too few groups</description><param pos="2" name="os.version"/></fingerprint>`), `group 2`},
		{"base64", fp(`<fingerprint pattern="^x$"><description>Bad b64</description><example _encoding="base64">!!!</example><param pos="0" name="os.vendor" value="v"/></fingerprint>`), `"Bad b64"`},
		{"root", `<other/>`, "want <fingerprints>"},
		{"empty", ``, "no <fingerprints>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadFS(fstest.MapFS{"good.xml": {Data: []byte(fp(""))}, "bad.xml": {Data: []byte(c.xml)}})
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), "bad.xml") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not name bad.xml and %s", err, c.want)
			}
			if c.name != "syntax" && c.name != "root" && c.name != "empty" && !strings.Contains(err.Error(), "fingerprint #1") {
				t.Errorf("error %q does not name the fingerprint", err)
			}
		})
	}
}

// TestAppliances checks the remote-access appliance strings that Recog's
// own examples contain.
func TestAppliances(t *testing.T) {
	db := loadT(t)
	cases := []struct {
		field, value                     string
		vendor, product, version, device string
	}{
		{"http_header.server", "SonicWALL SSL-VPN Web Server", "SonicWall", "SSL-VPN", "", "VPN"},
		{"http_header.server", "CPWS", "Check Point", "Firewall-1", "", "Firewall"},
		{"http_header.server", "BigIP", "F5", "BIG-IP LTM", "", ""},
		{"http_header.server", "OpenVPN-AS", "OpenVPN", "OpenVPN Access Server", "", ""},
		{"http_header.server", "PanWeb Server/ -", "Palo Alto Networks", "PA Firewall", "", "Firewall"},
		{"http_header.server", "xxxxxxxx-xxxxx", "Fortinet", "FortiOS", "", "Firewall"},
		{"http_header.server", "NS_6.1", "Citrix", "NetScaler", "6.1", ""},
		{"http_header.server", "Cisco AWARE 2.0", "Cisco", "HTTP", "2.0", ""},
		{"http_header.server", "Microsoft-IIS/10.0", "Microsoft", "IIS", "10.0", ""},
		{"http_header.server", "support@arraynetworks.net", "Array Networks", "", "", ""},
		{"html_title", "Pulse Connect Secure - SSL", "Pulse Secure", "Pulse Connect Secure", "", "VPN"},
		{"html_title", "Netscaler Gateway", "Citrix", "NetScaler Gateway", "", ""},
		{"html_title", "FortiGate", "Fortinet", "FortiOS", "", "Firewall"},
		{"html_title", "Fireware XTM User Authentication", "WatchGuard", "Fireware XTM", "", "Firewall"},
		{"html_title", "Cisco ASDM 6.4(7)", "Cisco", "ASDM", "6.4(7)", ""},
		{"http_header.cookie", "DSSignInURL=/; path=/; secure", "Pulse Secure", "Pulse Connect Secure", "", "VPN"},
		{"http_header.cookie", "webvpn=; expires=Thu, 01 Jan 1970 22:00:00 GMT; path=/; secure", "Cisco", "HTTP", "", ""},
		{"http_header.cookie", "NSC_AAAC=xyz;", "Citrix", "NetScaler", "", ""},
		{"http_header.wwwauth", `Basic realm="BIG-IP"`, "F5", "BIG-IP LTM", "", ""},
		{"x509.subject", "CN=FG100ETK1800118,OU=FortiGate,O=Fortinet,L=Sunnyvale,ST=California,C=US", "Fortinet", "FortiOS", "", "Firewall"},
		{"x509.subject", "CN=d9fc2294968367a3a8ad1acd4c816c78444e6ea4d69869b40cc9751951fd3693,O=Palo Alto Networks,L=Santa Clara,ST=CA,C=US", "Palo Alto Networks", "PAN-OS", "", "Firewall"},
		{"x509.subject", "CN=ASA Temporary Self Signed Certificate", "Cisco", "Adaptive Security Appliance", "", "Firewall"},
		{"x509.issuer", "CN=default,OU=NS Internal,O=Citrix ANG,L=San Jose,ST=California,C=US", "Citrix", "Netscaler", "", ""},
		{"x509.subject", "CN=192.168.200.1,OU=SSL-VPN,O=SonicWALL\\, Inc.,L=Sunnyvale,ST=CA,C=US", "SonicWall", "SonicOS", "", ""},
		{"ssh.banner", "NetScreen", "Juniper", "NetScreen", "", "Firewall"},
		{"ssh.banner", "Zyxel SSH server", "Zyxel", "ZyNOS firmware", "", ""},
	}
	for _, c := range cases {
		m, ok := db.Match(c.field, c.value)
		if !ok {
			t.Errorf("%s %q: no match", c.field, c.value)
			continue
		}
		got := [4]string{m.Vendor(), m.Product(), m.Version(), m.DeviceType()}
		want := [4]string{c.vendor, c.product, c.version, c.device}
		// An empty expected device means "don't care".
		if want[3] == "" {
			got[3] = ""
		}
		if got != want {
			t.Errorf("%s %q (%s): got vendor/product/version/device %q, want %q; params %v", c.field, c.value, m.Description, got, want, m.Params)
		}
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

var serverHeaders = []string{
	"nginx",
	"nginx/1.18.0 (Ubuntu)",
	"Apache/2.4.41 (Ubuntu)",
	"Apache",
	"Microsoft-IIS/10.0",
	"cloudflare",
	"LiteSpeed",
	"openresty/1.21.4.1",
	"SonicWALL SSL-VPN Web Server",
	"CPWS",
	"BigIP",
	"OpenVPN-AS",
	"PanWeb Server/ -",
	"xxxxxxxx-xxxxx",
	"Apache-Coyote/1.1",
	"lighttpd/1.4.59",
	"Jetty(9.4.44.v20210927)",
	"gunicorn",
	"AkamaiGHost",
	"Server",
	"",
	"Caddy",
	"envoy",
	"Kestrel",
}

func BenchmarkMatch(b *testing.B) {
	db := loadT(b)
	b.ReportAllocs()
	b.ResetTimer()
	hits := 0
	for i := 0; i < b.N; i++ {
		if _, ok := db.Match("http_header.server", serverHeaders[i%len(serverHeaders)]); ok {
			hits++
		}
	}
	_ = hits
}

func BenchmarkLoad(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Load(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRecogDir loads and verifies every database in $RECOG_DIR (for
// example a checkout's xml/ directory), to vet an update before embedding.
func TestRecogDir(t *testing.T) {
	dir := os.Getenv("RECOG_DIR")
	if dir == "" {
		t.Skip("RECOG_DIR not set")
	}
	db, err := LoadFS(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range db.SkippedFingerprints() {
		t.Logf("skipped %s:%d %q: %s", f.File, f.Line, f.Pattern, f.Skip)
	}
	failed := 0
	for _, d := range db.Databases() {
		for _, f := range d.Fingerprints {
			for _, ex := range f.Examples {
				m, ok := f.Match(ex.Text)
				if !f.Supported() {
					continue
				}
				bad := !ok
				for k, want := range ex.Expect {
					if m.Params[k] != want {
						bad = true
					}
				}
				if bad {
					failed++
					t.Logf("%s:%d %q: example %q gives %v", f.File, f.Line, f.Description, ex.Text, m.Params)
				}
			}
		}
	}
	t.Logf("%d databases, %d fingerprints, %d skipped, %d failing examples", len(db.Databases()), db.Total(), db.Skipped(), failed)
	if failed > 0 {
		t.Errorf("%d examples fail", failed)
	}
}

// BenchmarkMatchNoPrefilter is BenchmarkMatch without the literal
// prefilter, for comparison.
func BenchmarkMatchNoPrefilter(b *testing.B) {
	db := loadT(b)
	fps := db.Fingerprints("http_header.server")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v := serverHeaders[i%len(serverHeaders)]
		for _, f := range fps {
			if _, ok := f.Match(v); ok {
				break
			}
		}
	}
}

// TestPrefilterSound checks that the literal prefilter never rejects a
// value the regexp matches, over variants of every example (case changes,
// surrounding lines, Unicode case-fold look-alikes).
func TestPrefilterSound(t *testing.T) {
	db := loadT(t)
	fold := strings.NewReplacer("k", "\u212a", "K", "\u212a", "s", "\u017f", "S", "\u017f")
	checked := 0
	for _, d := range db.Databases() {
		for _, f := range d.Fingerprints {
			if !f.Supported() {
				continue
			}
			for _, ex := range f.Examples {
				for _, v := range []string{ex.Text, strings.ToUpper(ex.Text), strings.ToLower(ex.Text), fold.Replace(ex.Text), "x\n" + ex.Text + "\ny", "\xff" + ex.Text} {
					if f.Regexp().MatchString(v) {
						checked++
						if !f.mayMatch(&input{s: v}) {
							t.Errorf("%s:%d %q: prefilter %v rejects matching %q", f.File, f.Line, f.Description, f.lits, v)
						}
					}
				}
			}
		}
	}
	t.Logf("%d matching variants checked", checked)
}
