package ingest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// Headers and bodies written in the other shapes people and tools use
// (an object of names, "Name: value" lines, [name, value] pairs, a body as
// a plain string) are read as the format's own list and object, in the
// order written; repeated Set-Cookie values are all kept.
func TestNDJSON_OtherHeaderAndBodyShapes(t *testing.T) {
	t.Parallel()
	line := func(resp string) string {
		return `{"v":2,"type":"service","ip":"192.0.2.7","source":"s","observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"transport":"tcp","probes":[{"request":{"method":"GET","path":"/remote/login"},"response":` + resp + `}]}}` + "\n"
	}
	canonical := line(`{"status":200,"headers":[{"name":"Server","value":"xxxxxxxx-xxxxx"},{"name":"Set-Cookie","value":"SVPNCOOKIE=; path=/"},{"name":"Set-Cookie","value":"SVPNNETWORKCOOKIE=; path=/remote/network"},{"name":"Content-Length","value":"512"}],"body":{"data":"<title>SSL VPN</title>"}}`)
	shapes := map[string]string{
		"object": line(`{"status":200,"headers":{"Server":"xxxxxxxx-xxxxx","Set-Cookie":["SVPNCOOKIE=; path=/","SVPNNETWORKCOOKIE=; path=/remote/network"],"Content-Length":512},"body":"<title>SSL VPN</title>"}`),
		"lines":  line(`{"status":200,"headers":["Server: xxxxxxxx-xxxxx","Set-Cookie: SVPNCOOKIE=; path=/","Set-Cookie:SVPNNETWORKCOOKIE=; path=/remote/network","Content-Length: 512"],"body":"<title>SSL VPN</title>"}`),
		"pairs":  line(`{"status":200,"headers":[["Server","xxxxxxxx-xxxxx"],["Set-Cookie","SVPNCOOKIE=; path=/"],["Set-Cookie","SVPNNETWORKCOOKIE=; path=/remote/network"],["Content-Length","512"]],"body":{"data":"<title>SSL VPN</title>"}}`),
		"mixed":  line(`{"status":200,"headers":[{"name":"Server","value":"xxxxxxxx-xxxxx"},"Set-Cookie: SVPNCOOKIE=; path=/",["Set-Cookie","SVPNNETWORKCOOKIE=; path=/remote/network"],"Content-Length: 512"],"body":"<title>SSL VPN</title>"}`),
	}
	want := runAdapter(t, NDJSON, canonical, Options{})
	if len(want.bad) != 0 || len(want.obs) != 1 {
		t.Fatalf("canonical: %d obs, bad %v", len(want.obs), want.bad)
	}
	schema := compileSchema(t)
	for name, in := range shapes {
		if err := validateJSON(schema, []byte(in)); err != nil {
			t.Errorf("%s: the schema refuses a shape the decoder reads: %v", name, err)
		}
		got := runAdapter(t, NDJSON, in, Options{})
		if len(got.bad) != 0 || len(got.obs) != 1 {
			t.Errorf("%s: %d obs, bad %v", name, len(got.obs), got.bad)
			continue
		}
		if g, w := got.obs[0].Service.Probes[0].Response, want.obs[0].Service.Probes[0].Response; !reflect.DeepEqual(g, w) {
			t.Errorf("%s: response\n%+v\nwant\n%+v", name, g, w)
		}
	}
}

// Shapes that are none of those are refused, the line's error naming what
// was wrong; the other lines go in.
func TestNDJSON_BadHeaderShapes(t *testing.T) {
	t.Parallel()
	line := func(headers string) string {
		return `{"v":2,"type":"service","ip":"192.0.2.7","source":"s","observed_at":"2026-11-20T10:00:00Z","service":{"port":80,"transport":"tcp","probes":[{"response":{"status":200,"headers":` + headers + `}}]}}` + "\n"
	}
	cases := []struct{ headers, want string }{
		{`12`, "headers: want a list"},
		{`["no colon here"]`, `is not "Name: value"`},
		{`[["Server"]]`, "pair has 1 members"},
		{`{"Server":{"v":1}}`, "Server is an object"},
		{`[true]`, "a list member is a boolean"},
	}
	in := line(`[{"name":"Server","value":"nginx"}]`)
	schema := compileSchema(t)
	for _, c := range cases {
		in += line(c.headers)
		if err := validateJSON(schema, []byte(line(c.headers))); err == nil {
			t.Errorf("the schema accepts headers %s, which the decoder refuses", c.headers)
		}
	}
	r := runAdapter(t, NDJSON, in, Options{})
	if len(r.obs) != 1 || len(r.bad) != len(cases) {
		t.Fatalf("obs %d, bad %d (%v); want 1 and %d", len(r.obs), len(r.bad), r.bad, len(cases))
	}
	for i, e := range r.bad {
		if e.Line != i+2 || !strings.Contains(e.Err.Error(), cases[i].want) {
			t.Errorf("line %d: %v; want line %d naming %q", e.Line, e.Err, i+2, cases[i].want)
		}
	}
}

// An observation may leave out its type (the one payload says it) and give
// a bare date as observed_at (midnight UTC); both the decoder and the
// schema take that, and neither takes an impossible date.
func TestNDJSON_TypeLeftOutAndBareDate(t *testing.T) {
	t.Parallel()
	schema := compileSchema(t)
	good := map[string]string{
		`{"ip":"192.0.2.8","source":"s","observed_at":"2026-11-20","service":{"port":443,"probes":[{"response":{"status":200}}]}}`: TypeService,
		`{"ip":"192.0.2.9","source":"s","observed_at":"2026-11-20","signal":{"kind":"tor_exit"}}`:                                  TypeSignal,
		`{"network":"192.0.2.0/24","source":"s","observed_at":"2026-11-20","range":{"kind":"cdn"}}`:                                TypeRange,
	}
	for line, typ := range good {
		if err := validateJSON(schema, []byte(line)); err != nil {
			t.Errorf("schema refuses %s: %v", line, err)
		}
		r := runAdapter(t, NDJSON, line+"\n", Options{})
		if len(r.obs) != 1 || len(r.bad) != 0 {
			t.Errorf("%s: obs %d, bad %v", line, len(r.obs), r.bad)
			continue
		}
		if o := r.obs[0]; o.Type != typ || o.ObservedAt != "2026-11-20T00:00:00Z" {
			t.Errorf("%s: type %q at %q, want %q at midnight", line, o.Type, o.ObservedAt, typ)
		}
	}
	// a banner-only service without transport: its port says it, where it can
	for port, want := range map[int]string{500: "udp", 51820: "udp", 161: "udp", 22: "tcp", 8291: "tcp", 1194: "", 53: ""} {
		line := fmt.Sprintf(`{"ip":"192.0.2.8","source":"s","observed_at":"2026-11-20","service":{"port":%d,"probes":[{"banner":{"received":{"data":"x"}}}]}}`, port)
		r := runAdapter(t, NDJSON, line+"\n", Options{})
		switch {
		case want == "" && (len(r.bad) != 1 || !strings.Contains(r.bad[0].Err.Error(), "service.transport")):
			t.Errorf("port %d without transport: bad %v, want a service.transport error", port, r.bad)
		case want != "" && (len(r.obs) != 1 || r.obs[0].Service.Transport != want):
			t.Errorf("port %d without transport: obs %+v bad %v, want %s", port, r.obs, r.bad, want)
		}
	}
	bad := `{"ip":"192.0.2.9","source":"s","observed_at":"2026-13-45","signal":{"kind":"tor_exit"}}`
	if err := validateJSON(schema, []byte(bad)); err == nil {
		t.Errorf("schema accepts %s", bad)
	}
	if r := runAdapter(t, NDJSON, bad+"\n", Options{}); len(r.obs) != 0 || len(r.bad) != 1 || !strings.Contains(r.bad[0].Err.Error(), "observed_at") {
		t.Errorf("%s: obs %d, bad %v; want an observed_at error", bad, len(r.obs), r.bad)
	}
}

// A raw HTTP exchange written as a banner (a scanner's raw capture, `curl
// -i` output) is read as the probe's request and response too; the banner
// stays as written, a cut banner gives a truncated body, and a banner that
// is not HTTP stays a banner only.
func TestNormalize_HTTPInABanner(t *testing.T) {
	t.Parallel()
	line := func(banner string) string {
		return `{"v":2,"type":"service","ip":"192.0.2.7","source":"s","observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"transport":"tcp","probes":[{"banner":` + banner + `}]}}` + "\n"
	}
	in := line(`{"sent":{"data":"GET /remote/login?lang=en HTTP/1.1\r\nHost: vpn\r\n\r\n"},"received":{"data":"HTTP/1.1 200 OK\r\nServer: xxxxxxxx-xxxxx\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\n<title>SSL VPN</title>"}}`) +
		line(`{"received":{"data":"HTTP/1.0 302 Found\nLocation: /remote/login\n\n<html>cut","truncated":true,"length":9000}}`) +
		line(`{"received":{"data":"SSH-2.0-OpenSSH_9.6\r\n"}}`)
	r := runAdapter(t, NDJSON, in, Options{})
	if len(r.obs) != 3 || len(r.bad) != 0 {
		t.Fatalf("obs %d, bad %v", len(r.obs), r.bad)
	}
	p := r.obs[0].Service.Probes[0]
	if p.Banner == nil || p.Response == nil || p.Request == nil {
		t.Fatalf("probe: %+v", p)
	}
	if q := p.Request; q.Method != "GET" || q.Path != "/remote/login?lang=en" {
		t.Errorf("request: %+v", q)
	}
	want := Headers{{Name: "Server", Value: "xxxxxxxx-xxxxx"}, {Name: "Set-Cookie", Value: "a=1"}, {Name: "Set-Cookie", Value: "b=2"}}
	if resp := p.Response; resp.Status != 200 || !reflect.DeepEqual(resp.Headers, want) || resp.Body == nil || resp.Body.Data != "<title>SSL VPN</title>" {
		t.Errorf("response: %+v", resp)
	}
	if !strings.HasPrefix(p.Banner.Received.Data, "HTTP/1.1 200 OK\r\n") {
		t.Errorf("banner changed: %q", p.Banner.Received.Data)
	}
	p = r.obs[1].Service.Probes[0]
	if resp := p.Response; resp == nil || resp.Status != 302 || resp.Body == nil || !resp.Body.Truncated || resp.Body.SHA256 != "" {
		t.Errorf("cut response: %+v", resp)
	}
	if p = r.obs[2].Service.Probes[0]; p.Response != nil || p.Request != nil {
		t.Errorf("an SSH banner became HTTP: %+v", p)
	}
}

// A certificate given as PEM is read into the TLS fields (those left
// empty), and a subject or issuer given as a string into its attributes;
// a PEM that is not a certificate is refused naming the field.
func TestNormalize_PEMAndStringNames(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(0x1234), Subject: pkix.Name{CommonName: "FortiGate", Organization: []string{"Fortinet"}, OrganizationalUnit: []string{"FortiGate"}},
		DNSNames: []string{"vpn.example.com"}, NotBefore: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2034, 1, 1, 0, 0, 0, 0, time.UTC)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pemText := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	quoted, _ := json.Marshal(pemText)
	line := func(tls string) string {
		return `{"v":2,"type":"service","ip":"192.0.2.7","source":"s","observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"transport":"tcp","probes":[{"tls":` + tls + `}]}}` + "\n"
	}
	in := line(`{"pem":`+string(quoted)+`}`) +
		line(`{"subject":"CN=vpn, O=Check Point, OU=Check Point Security Gateway","issuer":"/C=US/O=Fortinet/CN=FortiGate CA"}`) +
		line(`{"pem":"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}`)
	r := runAdapter(t, NDJSON, in, Options{})
	if len(r.obs) != 2 || len(r.bad) != 1 || !strings.Contains(r.bad[0].Err.Error(), "tls.pem") {
		t.Fatalf("obs %d, bad %v; want 2 and one tls.pem error", len(r.obs), r.bad)
	}
	c := r.obs[0].Service.Probes[0].TLS
	sum := sha256.Sum256(der)
	if c.PEM != "" || c.Subject == nil || c.Subject.CN != "FortiGate" || !slices.Equal(c.Subject.O, []string{"Fortinet"}) || c.SHA256 != hex.EncodeToString(sum[:]) ||
		!slices.Equal(c.SANs, []string{"vpn.example.com"}) || !c.SelfSigned || c.NotAfter != "2034-01-01T00:00:00Z" || c.Serial == "" {
		t.Errorf("from PEM: %+v subject %+v", c, c.Subject)
	}
	c = r.obs[1].Service.Probes[0].TLS
	if c.Subject == nil || c.Subject.CN != "vpn" || !slices.Equal(c.Subject.OU, []string{"Check Point Security Gateway"}) || c.Issuer == nil || !slices.Equal(c.Issuer.O, []string{"Fortinet"}) || c.Issuer.C != "US" {
		t.Errorf("names from strings: subject %+v issuer %+v", c.Subject, c.Issuer)
	}
}

// A request and a response written as the raw text a client's verbose
// output or `curl -i` prints (or a request as its first line or a URL)
// are read as the objects they stand for; a string that is none of these
// is refused naming the member. The schema accepts what the decoder reads.
func TestNDJSON_RawRequestAndResponseStrings(t *testing.T) {
	t.Parallel()
	line := func(probe string) string {
		return `{"v":2,"type":"service","ip":"192.0.2.7","source":"s","observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"transport":"tcp","probes":[` + probe + `]}}` + "\n"
	}
	canonical := line(`{"request":{"method":"GET","path":"/remote/login?lang=en","host":"vpn.example.com","headers":[{"name":"Host","value":"vpn.example.com"}]},` +
		`"response":{"status":200,"reason":"OK","protocol":"HTTP/1.1","headers":[{"name":"Server","value":"xxxxxxxx-xxxxx"},{"name":"Set-Cookie","value":"SVPNCOOKIE=; path=/"}],"body":{"data":"<title>SSL VPN</title>"}}}`)
	raw := line(`{"request":"GET /remote/login?lang=en HTTP/1.1\r\nHost: vpn.example.com\r\n\r\n",` +
		`"response":"HTTP/1.1 200 OK\r\nServer: xxxxxxxx-xxxxx\r\nSet-Cookie: SVPNCOOKIE=; path=/\r\n\r\n<title>SSL VPN</title>"}`)
	want := runAdapter(t, NDJSON, canonical, Options{})
	got := runAdapter(t, NDJSON, raw, Options{})
	if len(want.obs) != 1 || len(got.obs) != 1 || len(got.bad) != 0 {
		t.Fatalf("canonical %d, raw %d obs, bad %v", len(want.obs), len(got.obs), got.bad)
	}
	w, g := want.obs[0].Service.Probes[0], got.obs[0].Service.Probes[0]
	if g.Response.Body != nil && w.Response.Body != nil {
		g.Response.Body.Length, g.Response.Body.SHA256 = w.Response.Body.Length, w.Response.Body.SHA256 // a raw body is known whole
	}
	if !reflect.DeepEqual(g.Request, w.Request) || !reflect.DeepEqual(g.Response, w.Response) {
		t.Errorf("raw strings:\n%+v %+v\nwant\n%+v %+v", g.Request, g.Response, w.Request, w.Response)
	}
	short := runAdapter(t, NDJSON, line(`{"request":"POST /ssl-vpn/login.esp","response":{"status":512}}`)+
		line(`{"request":"https://vpn.example.com/global-protect/login.esp","response":{"status":200}}`), Options{})
	if len(short.obs) != 2 || len(short.bad) != 0 {
		t.Fatalf("short forms: %d obs, bad %v", len(short.obs), short.bad)
	}
	if q := short.obs[0].Service.Probes[0].Request; q.Method != "POST" || q.Path != "/ssl-vpn/login.esp" {
		t.Errorf("first line: %+v", q)
	}
	if q := short.obs[1].Service.Probes[0].Request; q.Method != "GET" || q.Path != "/global-protect/login.esp" || q.Host != "vpn.example.com" {
		t.Errorf("url: %+v", q)
	}
	schema := compileSchema(t)
	for _, in := range []string{raw, line(`{"request":"POST /ssl-vpn/login.esp","response":{"status":512}}`)} {
		if err := validateJSON(schema, []byte(in)); err != nil {
			t.Errorf("the schema refuses a shape the decoder reads: %v", err)
		}
	}
	bad := runAdapter(t, NDJSON, line(`{"response":"200 OK and a page"}`)+line(`{"request":"please fetch the login page"}`), Options{})
	if len(bad.obs) != 0 || len(bad.bad) != 2 || !strings.Contains(bad.bad[0].Err.Error(), "response: a string must be a raw HTTP response") ||
		!strings.Contains(bad.bad[1].Err.Error(), "request: a string must be a raw HTTP request") {
		t.Errorf("bad strings: %d obs, bad %v", len(bad.obs), bad.bad)
	}
}

// A certificate name written with X.520's or zgrab2's and Censys's
// attribute names, its values as strings or lists, is read into the
// format's attributes; an attribute no name has is refused naming it.
func TestNDJSON_NameAttributeSpellings(t *testing.T) {
	t.Parallel()
	line := func(subject string) string {
		return `{"v":2,"type":"service","ip":"192.0.2.7","source":"s","observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"transport":"tcp","probes":[{"tls":{"subject":` + subject + `}}]}}` + "\n"
	}
	want := DN{CN: "FGT60E1234567890", O: []string{"Fortinet"}, OU: []string{"FortiGate"}, C: "US", ST: "California", L: "Sunnyvale", Email: "support@fortinet.com"}
	for name, subject := range map[string]string{
		"format, strings": `{"cn":"FGT60E1234567890","o":"Fortinet","ou":"FortiGate","c":"US","st":"California","l":"Sunnyvale","email":"support@fortinet.com"}`,
		"x520":            `{"commonName":"FGT60E1234567890","organizationName":["Fortinet"],"organizationalUnitName":"FortiGate","countryName":"US","stateOrProvinceName":"California","localityName":"Sunnyvale","emailAddress":"support@fortinet.com"}`,
		"censys":          `{"common_name":["FGT60E1234567890"],"organization":["Fortinet"],"organizational_unit":["FortiGate"],"country":["US"],"province":["California"],"locality":["Sunnyvale"],"email_address":["support@fortinet.com"]}`,
	} {
		r := runAdapter(t, NDJSON, line(subject), Options{})
		if len(r.obs) != 1 || len(r.bad) != 0 {
			t.Errorf("%s: %d obs, bad %v", name, len(r.obs), r.bad)
			continue
		}
		if got := *r.obs[0].Service.Probes[0].TLS.Subject; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
		if err := validateJSON(compileSchema(t), []byte(line(subject))); err != nil {
			t.Errorf("%s: the schema refuses a shape the decoder reads: %v", name, err)
		}
	}
	r := runAdapter(t, NDJSON, line(`{"cn":"vpn","serialNumber":"FGT60E"}`)+line(`{"cn":{"x":1}}`), Options{})
	if len(r.obs) != 0 || len(r.bad) != 2 || !strings.Contains(r.bad[0].Err.Error(), `unknown member "serialNumber"`) || !strings.Contains(r.bad[1].Err.Error(), "cn is an object") {
		t.Errorf("bad names: %d obs, bad %v", len(r.obs), r.bad)
	}
}

// Headers pasted as a client prints them (the block as one string, or its
// lines with the start line first, HTTP/2's pseudo-headers) are read as
// headers, the start line and pseudo-headers into the status or the
// request line, and not kept as headers.
func TestNDJSON_PastedHeaderBlocks(t *testing.T) {
	t.Parallel()
	line := func(probe string) string {
		return `{"v":2,"type":"service","ip":"192.0.2.7","source":"s","observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"transport":"tcp","probes":[` + probe + `]}}` + "\n"
	}
	in := line(`{"response":{"headers":"HTTP/1.1 302 Found\r\nLocation: /remote/login\r\nServer: xxxxxxxx-xxxxx\r\n"}}`) +
		line(`{"request":{"headers":["GET /global-protect/login.esp HTTP/1.1","Host: gp.example.com"]},"response":{"headers":["HTTP/1.1 200 OK","Content-Type: text/html; charset=UTF-8"]}}`) +
		line(`{"request":{"headers":[":method: POST",":path: /ssl-vpn/prelogin.esp",":authority: gp.example.com"]},"response":{"headers":[":status: 200","content-type: application/xml; charset=UTF-8"]}}`) +
		line(`{"response":{"status":401,"headers":["HTTP/1.1 200 OK","WWW-Authenticate: Basic realm=\"x\""]}}`)
	r := runAdapter(t, NDJSON, in, Options{})
	if len(r.obs) != 4 || len(r.bad) != 0 {
		t.Fatalf("obs %d, bad %v", len(r.obs), r.bad)
	}
	type want struct {
		method, path, host string
		status             int
		proto, reason      string
		headers            Headers
	}
	for i, w := range []want{
		{"", "", "", 302, "HTTP/1.1", "Found", Headers{{Name: "Location", Value: "/remote/login"}, {Name: "Server", Value: "xxxxxxxx-xxxxx"}}},
		{"GET", "/global-protect/login.esp", "", 200, "HTTP/1.1", "OK", Headers{{Name: "Content-Type", Value: "text/html; charset=UTF-8"}}},
		{"POST", "/ssl-vpn/prelogin.esp", "gp.example.com", 200, "HTTP/2", "", Headers{{Name: "content-type", Value: "application/xml; charset=UTF-8"}}},
		{"", "", "", 401, "", "", Headers{{Name: "WWW-Authenticate", Value: `Basic realm="x"`}}}, // a status given wins
	} {
		p := r.obs[i].Service.Probes[0]
		if q := p.Request; w.method != "" && (q == nil || q.Method != w.method || q.Path != w.path || q.Host != w.host) {
			t.Errorf("%d: request %+v, want %s %s host %q", i, q, w.method, w.path, w.host)
		}
		if q := p.Request; q != nil && slices.ContainsFunc(q.Headers, func(h Header) bool { return strings.HasPrefix(h.Name, ":") }) {
			t.Errorf("%d: pseudo-headers kept in the request: %+v", i, q.Headers)
		}
		if s := p.Response; s.Status != w.status || s.Protocol != w.proto || s.Reason != w.reason || !reflect.DeepEqual(s.Headers, w.headers) {
			t.Errorf("%d: response %d %q %q %+v, want %d %q %q %+v", i, s.Status, s.Protocol, s.Reason, s.Headers, w.status, w.proto, w.reason, w.headers)
		}
	}
	schema := compileSchema(t)
	for _, l := range strings.SplitAfter(strings.TrimSpace(in), "\n") {
		if err := validateJSON(schema, []byte(l)); err != nil {
			t.Errorf("the schema refuses a shape the decoder reads: %v\n%s", err, l)
		}
	}
	bad := runAdapter(t, NDJSON, line(`{"response":{"headers":"Server: x\r\nno colon here"}}`), Options{})
	if len(bad.obs) != 0 || len(bad.bad) != 1 || !strings.Contains(bad.bad[0].Err.Error(), `line "no colon here" is not "Name: value"`) {
		t.Errorf("bad block: %d obs, bad %v", len(bad.obs), bad.bad)
	}
}

// A certificate pasted as a banner (openssl s_client's output, openssl
// x509 -text's Subject and Issuer, nmap's ssl-cert lines) is read into a
// TLS probe beside it, once; a service with a certificate of its own, or
// text with no name in it, gets none.
func TestNormalize_CertificatePastedInABanner(t *testing.T) {
	t.Parallel()
	svc := func(text string, more ...Probe) Observation {
		return Observation{Type: TypeService, IP: "192.0.2.1", Source: "s", ObservedAt: "2026-11-20T10:00:00Z",
			Service: &Service{Port: 443, Transport: "tcp", Probes: append([]Probe{{Banner: &Banner{Received: TextBody(text)}}}, more...)}}
	}
	for name, tt := range map[string]struct {
		text       string
		cn, o, icn string
	}{
		"s_client":                          {"Certificate chain\n 0 s:C = US, ST = California, O = Fortinet, OU = FortiGate, CN = FGT60E4Q16000000\n   i:C = US, O = Fortinet, CN = FortiGate CA\n---\nServer certificate\nsubject=C = US, ST = California, O = Fortinet, OU = FortiGate, CN = FGT60E4Q16000000\nissuer=C = US, O = Fortinet, CN = FortiGate CA\n", "FGT60E4Q16000000", "Fortinet", "FortiGate CA"},
		"old s_client":                      {"subject=/C=US/O=Palo Alto Networks/CN=gp.example.com\nissuer=/C=US/O=Palo Alto Networks/CN=PA-CA\n", "gp.example.com", "Palo Alto Networks", "PA-CA"},
		"x509 -text":                        {"        Issuer: C = --, ST = WA, O = MyCompany, CN = localhost.localdomain\n        Validity\n        Subject: C = --, ST = WA, O = MyCompany, OU = MyOrg, CN = localhost.localdomain\n", "localhost.localdomain", "MyCompany", "localhost.localdomain"},
		"nmap ssl-cert":                     {"Subject: commonName=FGT60E4Q16000000/organizationName=Fortinet/countryName=US\nIssuer: commonName=support/organizationName=Fortinet\n", "FGT60E4Q16000000", "Fortinet", "support"},
		"nmap ssl-cert, a comma in a value": {"Subject: commonName=vpn.example.com/organizationName=Example, Inc./countryName=US\nIssuer: commonName=CA/organizationName=Example, Inc.\n", "vpn.example.com", "Example, Inc.", "CA"},
	} {
		o := svc(tt.text)
		if err := o.Normalize(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := o.Service.Probes
		if len(p) != 2 || p[1].Name != "text:certificate" || p[1].TLS.Subject.CN != tt.cn || !slices.Equal(p[1].TLS.Subject.O, []string{tt.o}) || p[1].TLS.Issuer == nil || p[1].TLS.Issuer.CN != tt.icn {
			t.Errorf("%s: %s", name, mustJSON(t, o))
		}
		before := mustJSON(t, o)
		if err := o.Normalize(); err != nil || mustJSON(t, o) != before {
			t.Errorf("%s: normalizing again changed it", name)
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "FGT60E4Q16000000", Organization: []string{"Fortinet"}, OrganizationalUnit: []string{"FortiGate"}},
		NotBefore: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2034, 1, 1, 0, 0, 0, 0, time.UTC)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	o := svc("Server certificate\n" + string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})) + "subject=CN = ignored\n")
	if err := o.Normalize(); err != nil || len(o.Service.Probes) != 2 || o.Service.Probes[1].TLS.Subject.CN != "FGT60E4Q16000000" || !slices.Equal(o.Service.Probes[1].TLS.Subject.OU, []string{"FortiGate"}) || o.Service.Probes[1].TLS.SHA256 == "" {
		t.Errorf("pem: %v %s", err, mustJSON(t, o))
	}
	o = svc("subject=CN=other", Probe{TLS: &TLS{Subject: &DN{CN: "own"}}})
	if err := o.Normalize(); err != nil || len(o.Service.Probes) != 2 {
		t.Errorf("a service with its own certificate: %s", mustJSON(t, o))
	}
	o = svc("Subject: your invoice\n")
	if err := o.Normalize(); err != nil || len(o.Service.Probes) != 1 {
		t.Errorf("no name: %s", mustJSON(t, o))
	}
}

// Pasted HTTP exchanges in a banner: `curl -v`'s "> " and "< " lines (the
// first exchange of a followed redirect) and `curl -i` output under the
// command line that ran it.
func TestNormalize_CurlPastedInABanner(t *testing.T) {
	t.Parallel()
	norm := func(text string) Probe {
		o := Observation{Type: TypeService, IP: "192.0.2.1", Source: "s", ObservedAt: "2026-11-20T10:00:00Z",
			Service: &Service{Port: 443, Transport: "tcp", Probes: []Probe{{Banner: &Banner{Received: TextBody(text)}}}}}
		if err := o.Normalize(); err != nil {
			t.Fatal(err)
		}
		return o.Service.Probes[0]
	}
	p := norm("*   Trying 192.0.2.1:443...\n> GET /remote/login?lang=en HTTP/1.1\n> Host: vpn.example.com\n>\n< HTTP/1.1 200 OK\n< Server: xxxxxxxx-xxxxx\n< Set-Cookie: SVPNCOOKIE=; path=/\n<\n<html><title>SSL VPN</title></html>\n* Connection #0 to host vpn.example.com left intact\n")
	if p.Request == nil || p.Request.Path != "/remote/login?lang=en" || p.Request.Host != "vpn.example.com" || p.Response == nil || p.Response.Status != 200 ||
		!slices.Equal(headerValues(p.Response.Headers, "Server"), []string{"xxxxxxxx-xxxxx"}) || p.Response.Body == nil || p.Response.Body.Data != "<html><title>SSL VPN</title></html>" {
		t.Errorf("curl -v: %s", mustJSON(t, p))
	}
	p = norm("> GET / HTTP/1.1\n>\n< HTTP/1.1 302 Found\n< Location: /remote/login\n<\n> GET /remote/login HTTP/1.1\n>\n< HTTP/1.1 200 OK\n<\nok\n")
	if p.Response == nil || p.Response.Status != 302 || !slices.Equal(headerValues(p.Response.Headers, "Location"), []string{"/remote/login"}) || p.Request.Path != "/" {
		t.Errorf("curl -v -L, the first exchange: %s", mustJSON(t, p))
	}
	p = norm("$ curl -ik https://gp.example.com/global-protect/login.esp\nHTTP/1.1 200 OK\nContent-Type: text/html; charset=UTF-8\n\n<title>GlobalProtect Portal</title>")
	if p.Response == nil || p.Response.Status != 200 || p.Response.Body == nil || p.Response.Body.Data != "<title>GlobalProtect Portal</title>" {
		t.Errorf("curl -i under its command: %s", mustJSON(t, p))
	}
	if p = norm("SSH-2.0-OpenSSH_9.6\r\n"); p.Response != nil {
		t.Errorf("an SSH banner became HTTP: %s", mustJSON(t, p))
	}
}
