package ingest

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// tlsWant is what a TLS probe read from a real sample must hold.
type tlsWant struct {
	version, cipher         string
	subjectCN, subjectO     string
	issuerCN, issuerO       string
	sans                    []string
	serial, sha256          string
	notBefore, notAfter     string
	selfSigned              bool
	server                  string // the HTTP Server header, "" for none
	status                  int    // the HTTP status, 0 for no response
	hosts                   string // the observation's host names, comma-separated
	ip                      string
	port                    int
	observedAt, detectedSvc string
}

func checkTLS(t *testing.T, o Observation, w tlsWant) {
	t.Helper()
	s := o.Service
	if o.IP != w.ip || s.Port != w.port || s.Transport != "tcp" || strings.Join(o.Hostnames, ",") != w.hosts || (w.observedAt != "" && o.ObservedAt != w.observedAt) || len(s.Probes) == 0 {
		t.Fatalf("observation %s; want %+v", mustJSON(t, o), w)
	}
	x := s.Probes[0].TLS
	o1 := func(d *DN) string {
		if d == nil || len(d.O) == 0 {
			return ""
		}
		return d.O[0]
	}
	cn := func(d *DN) string {
		if d == nil {
			return ""
		}
		return d.CN
	}
	if x == nil || x.Version != w.version || x.Cipher != w.cipher || cn(x.Subject) != w.subjectCN || o1(x.Subject) != w.subjectO ||
		cn(x.Issuer) != w.issuerCN || o1(x.Issuer) != w.issuerO || !slices.Equal(x.SANs, w.sans) || x.Serial != w.serial || x.SHA256 != w.sha256 ||
		x.NotBefore != w.notBefore || x.NotAfter != w.notAfter || x.SelfSigned != w.selfSigned {
		t.Errorf("tls = %s\nwant %+v", mustJSON(t, x), w)
	}
	r := s.Probes[0].Response
	switch {
	case w.status == 0 && r != nil:
		t.Errorf("response %s, want none", mustJSON(t, r))
	case w.status != 0 && (r == nil || r.Status != w.status || strings.Join(headerValues(r.Headers, "Server"), ",") != w.server):
		t.Errorf("response %s, want status %d, Server %q", mustJSON(t, r), w.status, w.server)
	}
	if w.detectedSvc != "" && (s.Detected == nil || s.Detected.Service != w.detectedSvc) {
		t.Errorf("detected %s, want service %q", mustJSON(t, s.Detected), w.detectedSvc)
	}
}

// The FortiGate replay (testdata/SOURCES.md): one loopback service whose
// certificate has the factory subject of a FortiGate, issued by a
// Fortinet-style sub-CA as a unit's factory certificate is.
var fortiReplay = tlsWant{version: "TLSv1.3", cipher: "TLS_AES_128_GCM_SHA256", subjectCN: "FG100ETK1800118", subjectO: "Fortinet",
	issuerCN: "fortinet-subca2001", issuerO: "Fortinet", serial: "5a3c81d2", sha256: "855e822fcf5820b134259a9839c6c1bdc6327dee0acc02ec9951aca45eefe43d",
	notBefore: "2018-05-02T10:11:12Z", notAfter: "2038-01-19T03:14:07Z", ip: "127.0.0.1", port: 10443}

func TestTestSSL_RealSamples(t *testing.T) {
	t.Parallel()
	withHTTP := fortiReplay
	withHTTP.status, withHTTP.detectedSvc = 200, "http"
	pretty := withHTTP
	pretty.observedAt = "2026-11-27T23:56:31Z" // its startTime
	terminal := withHTTP
	terminal.subjectO = ""
	terminal.notBefore, terminal.notAfter = "2018-05-02T10:11:00Z", "2038-01-19T03:14:00Z" // to the minute
	terminal.observedAt = "2026-11-27T23:55:36Z"                                           // its "Start" line
	tests := []struct {
		file    string
		want    []tlsWant
		skipped []string
	}{
		{"testssl-3.0.8.json", []tlsWant{withHTTP}, nil},
		{"testssl-3.0.8-pretty.json", []tlsWant{pretty}, nil},
		{"testssl-3.0.8.csv", []tlsWant{withHTTP}, nil},
		// what testssl.sh printed on the terminal in the same run: the names'
		// common names and the issuer's O and C ("fortinet-subca2001
		// (Fortinet from US)"), no PEM
		{"testssl-3.0.8-terminal.txt", []tlsWant{terminal}, nil},
		// testssl.sh 3.0's CSV of www.defectdojo.org: its certificate from
		// the PEM (testssl.sh 3.0 listed the dates in its host's local
		// time: 20:28 for 18:28:09 UTC), GitHub's Server header; the
		// engine_problem line, before the name was resolved, has no address.
		{"testssl-defectdojo.csv", []tlsWant{{version: "TLSv1.2", cipher: "ECDHE-RSA-AES128-GCM-SHA256", subjectCN: "www.defectdojo.org",
			issuerCN: "Let's Encrypt Authority X3", issuerO: "Let's Encrypt", sans: []string{"www.defectdojo.org"}, serial: "3f199eec9c93a88ebe13060d76b8b18a54e",
			sha256: "5df7a113b6418dbb02db7e121f533973c603435fdfab62914e8488719f1acc90", notBefore: "2019-05-18T18:28:09Z", notAfter: "2019-08-16T18:28:09Z",
			server: "GitHub.com", status: 200, hosts: "www.defectdojo.org", ip: "185.199.110.153", port: 443, detectedSvc: "http"}},
			[]string{`testssl.sh findings from line 2 on: testssl.sh target "www.defectdojo.org" is a host name with no IP address`}},
		{"testssl-defectdojo-nginx.csv", []tlsWant{{version: "TLSv1.2", cipher: "ECDHE-RSA-AES256-GCM-SHA384", subjectCN: "*.avn-live.com",
			issuerCN: "AlphaSSL CA - SHA256 - G2", issuerO: "GlobalSign nv-sa", sans: []string{"*.avn-live.com", "avn-live.com"}, serial: "618e42c0d7a586970f48bf38",
			sha256: "1bd29c55a8e4c8d77bf3a46095ccae91ec6057fb0705c4da9cb40f42b23430c1", notBefore: "2022-02-07T02:47:42Z", notAfter: "2023-03-11T02:47:42Z",
			server: "nginx", status: 200, hosts: "www.test.com", ip: "127.0.0.1", port: 443, detectedSvc: "http"}}, nil},
		// A target given as a name that testssl.sh wrote without an address.
		{"testssl-defectdojo-names.csv", nil, []string{`testssl.sh findings from line 2 on: testssl.sh target "asdf.com" is a host name with no IP address`}},
		{"testssl-defectdojo-failed.csv", nil, []string{"testssl.sh could not scan the target: Can't connect to '1.2.3.4:443'"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "testssl", readFile(t, tt.file))
			if len(r.obs) != len(tt.want) || len(r.bad) != 0 || len(r.skipped) != len(tt.skipped) {
				t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
			}
			for i, w := range tt.want {
				checkTLS(t, r.obs[i], w)
			}
			for i, s := range tt.skipped {
				if !strings.HasPrefix(r.skipped[i], s) {
					t.Errorf("skipped %q, want %q...", r.skipped[i], s)
				}
			}
		})
	}
}

func TestTestSSL_Shapes(t *testing.T) {
	t.Parallel()
	flat := readFile(t, "testssl-3.0.8.json")
	finding := func(id, ip, port, sev, f string) string {
		return `{"id":"` + id + `","ip":"` + ip + `","port":"` + port + `","severity":"` + sev + `","finding":"` + f + `"}`
	}
	tests := []struct {
		name, in string
		obs      int
		bad      []int
		want     []string // substrings of the errors, in order
		check    func(t *testing.T, r scanResult)
	}{
		{"a file cut after the certificate keeps what was read and says where it stops",
			flat[:strings.Index(flat, `"cert_chain_of_trust"`)], 1, []int{344}, []string{"testssl: array: the input ends inside a JSON value (cut file?)"},
			func(t *testing.T, r scanResult) {
				if x := r.obs[0].Service.Probes[0].TLS; x.Subject.CN != "FG100ETK1800118" || x.Serial != "5a3c81d2" {
					t.Errorf("tls %s", mustJSON(t, x))
				}
			}},
		{"several certificates, IPv6, application banners and an F5 cookie", "[" + strings.Join([]string{
			finding("service", "vpn.example/2001:db8::7", "443", "INFO", "HTTP"),
			finding("cert_commonName <cert#1>", "vpn.example/2001:db8::7", "443", "OK", "vpn.example"),
			finding("cert_serialNumber <cert#1>", "vpn.example/2001:db8::7", "443", "INFO", "0A:1B"),
			finding("cert_commonName <cert#2>", "vpn.example/2001:db8::7", "443", "OK", "ecdsa.vpn.example"),
			finding("cert_fingerprintSHA256 <cert#2>", "vpn.example/2001:db8::7", "443", "INFO", "2D21E6E2AD6633EEA48C63E6C8275637F44548C59B5090313B64F59032CDD779"),
			finding("cert_caIssuers <cert#2>", "vpn.example/2001:db8::7", "443", "CRITICAL", "selfsigned"),
			finding("cert_notAfter <cert#2>", "vpn.example/2001:db8::7", "443", "OK", "2030-01-02 03:04"),
			finding("protocol_negotiated", "vpn.example/2001:db8::7", "443", "OK", "Default protocol TLS1.3"),
			finding("banner_application", "vpn.example/2001:db8::7", "443", "INFO", "X-Powered-By: PHP/8.1, ASP.NET, X-AspNet-Version: 4.0.30319"),
			finding("cookie_bigip_f5", "vpn.example/2001:db8::7", "443", "MEDIUM", "Information leakage: F5 cookie BIGipServerpool_web 1677787402.36895.0000 is default IPv4 pool member 10.1.1.100:8080"),
		}, ",") + "]", 1, nil, nil, func(t *testing.T, r scanResult) {
			o := r.obs[0]
			p := o.Service.Probes
			if o.IP != "2001:db8::7" || len(p) != 2 || p[0].TLS.Subject.CN != "vpn.example" || p[0].TLS.Serial != "a1b" || p[0].TLS.Version != "TLSv1.3" ||
				p[1].TLS.Subject.CN != "ecdsa.vpn.example" || !p[1].TLS.SelfSigned || p[1].TLS.NotAfter != "2030-01-02T03:04:00Z" || p[1].TLS.Version != "" ||
				!slices.Equal(headerValues(p[0].Response.Headers, "X-Powered-By"), []string{"PHP/8.1, ASP.NET"}) ||
				!slices.Equal(headerValues(p[0].Response.Headers, "X-AspNet-Version"), []string{"4.0.30319"}) ||
				!slices.Equal(headerValues(p[0].Response.Headers, "Set-Cookie"), []string{"BIGipServerpool_web=1677787402.36895.0000"}) {
				t.Errorf("obs %s", mustJSON(t, o))
			}
		}},
		{"certificate fields that do not parse name the finding", strings.Join([]string{
			`"id","fqdn/ip","port","severity","finding","cve","cwe"`,
			`"cert_serialNumber","a.example/192.0.2.1","443","INFO","SERIAL?","",""`,
			`"cert_notAfter","b.example/192.0.2.2","443","OK","next year","",""`,
			`"cert","c.example/192.0.2.3","443","INFO","-----BEGIN CERTIFICATE----- MIIBnjCCAUSgAwIBAgIU -----END CERTIFICATE-----","",""`,
			`"cert_fingerprintSHA256","d.example/192.0.2.4","443","INFO","ABCD","",""`,
			`"TLS1_2","e.example/192.0.2.5","not a port","OK","offered","",""`,
			`"TLS1_2","e.example/192.0.2.5","443","OK","offered","",""`,
		}, "\n"), 0, []int{6, 2, 3, 4, 5}, []string{"testssl.sh finding TLS1_2: port: must be 1..65535",
			"testssl.sh finding cert_serialNumber: not a hex serial number", "testssl.sh finding cert_notAfter: not a date", "testssl.sh finding cert: PEM certificate:",
			"testssl.sh finding cert_fingerprintSHA256: not a SHA-256 fingerprint"}, nil},
		{"wrong JSON shapes", `[{"name":"x"},{"id":"service","ip":"192.0.2.9/192.0.2.9","port":{"n":1}}]` + "\n" + `{"scanResult":[{"targetHost":"x","ip":"192.0.2.1","port":"0"}]}`, 0, []int{1, 1, 2},
			[]string{`not a testssl.sh finding`, "testssl.sh finding", "testssl.sh scanResult: port: must be 1..65535"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "testssl", tt.in)
			if len(r.obs) != tt.obs || !slices.Equal(badLines(r.bad), tt.bad) {
				t.Fatalf("obs %s bad %v (%v) skipped %v", mustJSON(t, r.obs), badLines(r.bad), r.bad, r.skipped)
			}
			for i, w := range tt.want {
				if !strings.Contains(r.bad[i].Error(), w) {
					t.Errorf("error %d = %v, want %q", i, r.bad[i], w)
				}
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
	// A CSV without testssl.sh's header is not read further.
	r := runScan(t, "testssl", "a,b,c\n1,2,3\n")
	if len(r.obs) != 0 || len(r.bad) != 1 || r.bad[0].Line != 1 || !strings.Contains(r.bad[0].Error(), `not testssl.sh's header`) {
		t.Errorf("bad %v", r.bad)
	}
	// Terminal output with no target line is refused; a target named by
	// a host name alone is skipped with its reason.
	r = runScan(t, "testssl", " Testing all IPv4 addresses -->> nothing\n")
	if len(r.obs) != 0 || len(r.bad) != 1 || r.bad[0].Line != 1 || !strings.Contains(r.bad[0].Error(), `not testssl.sh output`) {
		t.Errorf("bad %v", r.bad)
	}
	r = runScan(t, "testssl", " Start 2026-11-27 23:55:36        -->> vpn.example.com:443 (vpn.example.com) <<--\n Common Name (CN)             FGT60E4Q16000000\n")
	if len(r.obs) != 0 || len(r.bad) != 0 || len(r.skipped) != 1 || !strings.Contains(r.skipped[0], "host name with no IP address") {
		t.Errorf("bad %v skipped %v", r.bad, r.skipped)
	}
}

func TestSSLyze_RealSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want []tlsWant
	}{
		// sslyze 5.0.1 (DefectDojo's sample): DefectDojo replaced the
		// listed subject and host name with example.com but left the PEM,
		// which is the server's: the certificate is read from it.
		{"sslyze-5.0.1.json", []tlsWant{{version: "TLSv1.3", cipher: "TLS_AES_256_GCM_SHA384", subjectCN: "*.delfi.lt", issuerCN: "RapidSSL TLS DV RSA Mixed SHA256 2020 CA-1",
			issuerO: "DigiCert Inc", sans: []string{"*.delfi.lt", "delfi.lt"}, serial: "2946456517eb6a920b627f59843da92",
			sha256: "ea15021056767c36d4199e09502ce5e469aa102057b04b5347ebefddb6e5f106", notBefore: "2021-03-15T00:00:00Z", notAfter: "2022-03-15T23:59:59Z",
			hosts: "example.com", ip: "1.1.1.1", port: 443, observedAt: "2022-01-17T16:46:10Z"}}},
		{"sslyze-5.0.1-two-targets.json", []tlsWant{
			{version: "TLSv1.2", cipher: "ECDHE-RSA-AES256-GCM-SHA384", subjectCN: "www.kilobaitas.lt", issuerCN: "Sectigo RSA Domain Validation Secure Server CA",
				issuerO: "Sectigo Limited", sans: []string{"www.kilobaitas.lt", "kilobaitas.lt"}, serial: "13ec894ca236a3761adb1cb99db99bb4",
				sha256: "e06911647f6bfe5e958f171ddef1c56fa13d46daee8324d3eedce4426e94f026", notBefore: "2021-03-17T00:00:00Z", notAfter: "2022-04-17T23:59:59Z",
				hosts: "example.com", ip: "82.135.216.30", port: 443, observedAt: "2022-01-17T17:23:27Z"},
			{version: "TLSv1.3", cipher: "TLS_AES_256_GCM_SHA384", subjectCN: "sni.cloudflaressl.com", subjectO: "Cloudflare, Inc.", issuerCN: "Cloudflare Inc ECC CA-3",
				issuerO: "Cloudflare, Inc.", sans: []string{"sni.cloudflaressl.com", "*.cybear.care", "cybear.care"}, serial: "22aa3057e3631b8fdce85157a1b6e7c",
				sha256: "a7b49deb36b981d5da3140532c06f5ccd81cbfcb5a336faeb473e730306261ee", notBefore: "2021-08-02T00:00:00Z", notAfter: "2022-08-01T23:59:59Z",
				hosts: "example2.com", ip: "104.21.26.66", port: 443, observedAt: "2022-01-17T17:23:27Z"}}},
		// sslyze 3.0.7: server_info and scan_commands_results; DefectDojo
		// emptied the PEM, so the listed camel-case fields are what is read
		// (serialNumber "123" is decimal).
		{"sslyze-3.0.7.json", []tlsWant{{version: "TLSv1.2", cipher: "ECDHE-RSA-AES256-GCM-SHA384", subjectCN: "www.example.com", issuerCN: "Let's Encrypt Authority X3",
			issuerO: "Let's Encrypt", sans: []string{"www.example.com"}, serial: "7b", notBefore: "2020-09-22T19:13:34Z", notAfter: "2020-12-21T19:13:34Z",
			hosts: "www.example.com", ip: "194.168.0.1", port: 443, observedAt: "2026-11-01T00:00:00Z"}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "sslyze", readFile(t, tt.file))
			if len(r.obs) != len(tt.want) || len(r.bad) != 0 || len(r.skipped) != 0 {
				t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
			}
			for i, w := range tt.want {
				checkTLS(t, r.obs[i], w)
			}
		})
	}
}

func TestSSLyze_Shapes(t *testing.T) {
	t.Parallel()
	one := readFile(t, "sslyze-5.0.1.json")
	two := readFile(t, "sslyze-5.0.1-two-targets.json")
	leafPEM := regexp.MustCompile(`"as_pem": "-----BEGIN CERTIFICATE-----\\n[^"]*"`)
	redacted := leafPEM.ReplaceAllString(one, `"as_pem": "-----BEGIN CERTIFICATE-----REDACTED-----END CERTIFICATE-----"`)
	noPEM := leafPEM.ReplaceAllString(one, `"as_pem": ""`)
	tests := []struct {
		name, in string
		obs      int
		skipped  int
		want     []string // substrings of the errors, in order
	}{
		// DefectDojo's one_target_zero_vuln_new.json has such a PEM. It
		// used to make the whole server malformed, losing the address,
		// port, TLS version and cipher the file holds; now only the PEM
		// is dropped (with a warning, checked below) and the fields
		// sslyze lists beside it are read: never lose data a file holds.
		{"a PEM that is not a certificate", redacted, 1, 0, nil},
		{"without the PEM the listed fields are read", noPEM, 1, 0, nil},
		{"a fingerprint that is neither hex nor base64", strings.ReplaceAll(noPEM, `"6hUCEFZ2fDbUGZ4JUCzl5GmqECBXsEtTR+vv3bbl8QY="`, `"not-a-hash"`), 0, 0,
			[]string{"received_certificate_chain[0]: fingerprint_sha256: not a SHA-256 fingerprint"}},
		{"a serial that is not a number", strings.ReplaceAll(noPEM, `"serial_number": 3428951006436800667962695313007041170`, `"serial_number": "0x1F"`), 0, 0,
			[]string{`serial_number: not a decimal serial number: "0x1F"`}},
		{"a date that is not one", strings.ReplaceAll(noPEM, `"not_valid_after": "2022-03-15T23:59:59"`, `"not_valid_after": "soon"`), 0, 0,
			[]string{`not_valid_after: not a time: "soon"`}},
		{"cut in the second server: the first is kept", two[:strings.Index(two, `"example2.com"`)], 1, 0, []string{"sslyze: server_scan_results: the input ends inside a JSON value (cut file?)"}},
		{"wrong shapes", `{"server_scan_results":[{"uuid":"x"},{"server_location":{"hostname":"a","ip_address":"192.0.2.1","port":"x"},"connectivity_status":"COMPLETED"},` +
			`{"server_location":{"hostname":"b.example","ip_address":null,"port":443},"connectivity_status":"COMPLETED"},` +
			`{"server_location":{"hostname":"c.example","ip_address":"192.0.2.3","port":443},"connectivity_status":"ERROR","connectivity_error_trace":"refused"}]}`, 0, 2,
			[]string{`not an sslyze server scan result`, `server_location: port: must be 1..65535, got "x"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, warns := runScanWarn(t, "sslyze", tt.in)
			if len(r.obs) != tt.obs || len(r.bad) != len(tt.want) || len(r.skipped) != tt.skipped {
				t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
			}
			if tt.name == "a PEM that is not a certificate" {
				o := r.obs[0]
				x := o.Service.Probes[0].TLS
				if o.IP == "" || o.Service.Port != 443 || x.Version != "TLSv1.3" || x.Cipher == "" || x.PEM != "" || x.Subject == nil || x.Subject.CN != "*.example.com" ||
					x.SHA256 != "ea15021056767c36d4199e09502ce5e469aa102057b04b5347ebefddb6e5f106" {
					t.Errorf("observation %s", mustJSON(t, o))
				}
				if len(warns) != 1 || !strings.Contains(warns[0], "received_certificate_chain[0]: as_pem is not a certificate (PEM certificate: x509:") {
					t.Errorf("warnings %q", warns)
				}
			} else if len(warns) != 0 {
				t.Errorf("warnings %q", warns)
			}
			for i, w := range tt.want {
				if !strings.Contains(r.bad[i].Error(), w) {
					t.Errorf("error %d = %v, want %q", i, r.bad[i], w)
				}
			}
			if tt.name == "without the PEM the listed fields are read" {
				if x := r.obs[0].Service.Probes[0].TLS; x.Subject.CN != "*.example.com" || x.SHA256 != "ea15021056767c36d4199e09502ce5e469aa102057b04b5347ebefddb6e5f106" ||
					x.Serial != "2946456517eb6a920b627f59843da92" || x.NotAfter != "2022-03-15T23:59:59Z" {
					t.Errorf("tls %s", mustJSON(t, x))
				}
			}
			if tt.name == "wrong shapes" && (!strings.Contains(r.skipped[0], `"b.example" is a host name with no IP address`) || !strings.Contains(r.skipped[1], "could not connect to 192.0.2.3:443 (ERROR)")) {
				t.Errorf("skipped %v", r.skipped)
			}
		})
	}
}

func TestSSLScan_RealSamples(t *testing.T) {
	t.Parallel()
	short := fortiReplay
	// The short certificate: the names' common names alone, no serial,
	// no fingerprint.
	short.subjectO, short.issuerO, short.serial, short.sha256 = "", "", "", ""
	tests := []struct {
		file    string
		want    []tlsWant
		skipped string
	}{
		{"sslscan-2.0.7-full.xml", []tlsWant{fortiReplay}, ""},
		{"sslscan-2.0.7.xml", []tlsWant{short}, ""},
		{"sslscan-1.11.13.xml", nil, `sslscan target "www.target.com" is a host name with no IP address`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "sslscan", readFile(t, tt.file))
			if len(r.obs) != len(tt.want) || len(r.bad) != 0 || len(r.skipped) != 0 && !strings.HasPrefix(r.skipped[0], tt.skipped) {
				t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
			}
			for i, w := range tt.want {
				checkTLS(t, r.obs[i], w)
			}
		})
	}
	// sslscan 1.x's certificate element (the DefectDojo sample) read
	// when the target is an address.
	old := strings.Replace(readFile(t, "sslscan-1.11.13.xml"), `host="www.target.com"`, `host="192.0.2.44"`, 1)
	r := runScan(t, "sslscan", old)
	if len(r.obs) != 1 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	checkTLS(t, r.obs[0], tlsWant{version: "TLSv1.2", cipher: "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", subjectCN: "*.service.target.com",
		issuerCN: "GlobalSign Organization Validation CA - SHA256 - G2", sans: []string{"*.service.target.com", "service.target.com"},
		notBefore: "2018-03-13T11:59:45Z", notAfter: "2019-03-13T11:59:45Z", hosts: "www.target.com", ip: "192.0.2.44", port: 443})
}

func TestSSLScan_Shapes(t *testing.T) {
	t.Parallel()
	full := readFile(t, "sslscan-2.0.7-full.xml")
	tests := []struct {
		name, in string
		obs      int
		want     []string
	}{
		{"cut inside the certificate", full[:strings.Index(full, "<not-valid-after>")], 0, []string{"sslscan xml: ssltest: XML syntax error"}},
		{"a serial that is not one", strings.Replace(strings.Replace(full, "1513914834 (0x5a3c81d2)", "1513914834 (0xZZ)", 1), "-----BEGIN CERTIFICATE-----", "", 1), 0,
			[]string{`ssltest 127.0.0.1:10443: certificate: serial: not a hex serial number: "ZZ"`}},
		{"a date that is not one", strings.Replace(readFile(t, "sslscan-2.0.7.xml"), "Jan 19 03:14:07 2038 GMT", "someday", 1), 0,
			[]string{`not-valid-after: not a time`}},
		{"a certificate blob cut short", strings.Replace(full, "-----END CERTIFICATE-----", "", 1), 0, []string{"certificate-blob: PEM certificate without its END line"}},
		{"not sslscan's XML", readFile(t, "nmap-complex.xml"), 0, []string{"no <ssltest> element"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "sslscan", tt.in)
			if len(r.obs) != tt.obs || len(r.bad) != len(tt.want) {
				t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
			}
			for i, w := range tt.want {
				if !strings.Contains(r.bad[i].Error(), w) {
					t.Errorf("error %d = %v, want %q", i, r.bad[i], w)
				}
			}
		})
	}
}

func TestSSHAudit_RealSamples(t *testing.T) {
	t.Parallel()
	type svc struct {
		ip     string
		port   int
		banner string
		keys   string // detected info
	}
	tests := []struct {
		file    string
		want    []svc
		skipped string
	}{
		// Debian's ssh-audit 2.5.0: the target without its port.
		{"ssh-audit-2.5.0.json", []svc{{"127.0.0.1", 22, "SSH-2.0-FortiSSH_2.5", "host keys: ssh-rsa SHA256:f+LtlYXyq9Ub4Vfrdbq3AhDy60c5t3vViZsEtYCARhM"}}, ""},
		// ssh-audit at 1eb1105 with -T: an array, in the order the scans ended.
		{"ssh-audit-targets.json", []svc{
			{"127.0.0.1", 10024, "SSH-2.0-ArrayOS", "host keys: ecdsa-sha2-nistp256 SHA256:BOlijzYsTJMz0GpqTceX/lS2KXvoQL8q1uAZrRKUsjk, ssh-rsa SHA256:f+LtlYXyq9Ub4Vfrdbq3AhDy60c5t3vViZsEtYCARhM"},
			{"127.0.0.1", 10025, "SSH-2.0-Cisco-1.25", ""},
			{"127.0.0.1", 10023, "SSH-2.0-ROSSSH", ""}}, ""},
		{"ssh-audit-defectdojo.json", []svc{{"1.1.1.1", 22, "SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.4",
			"host keys: ssh-ed25519 SHA256:7HGjPCpM7KL+xEDT+o4oMsuLphK9emAFY4T9fglsCjE, ssh-rsa SHA256:v9O1CYNZpN+Ng3R+49vHmiBoJ6WhvMQ1Z4BeHcWFE4E"}}, ""},
		{"ssh-audit-defectdojo-name.json", nil, `ssh-audit target "nanana.com" is a host name with no IP address`},
		// ssh-audit's own docker tests: localhost is the loopback address.
		{"ssh-audit-docker-dropbear_2019.78_test1.json", []svc{{"127.0.0.1", 2222, "SSH-2.0-dropbear_2019.78",
			"host keys: ecdsa-sha2-nistp256 SHA256:jdUfqoGCDOY1drQcoqIJm/pEix2r09hqwOs9E9GimZQ, ssh-dss SHA256:NBzry0uMAX8BRsn4mv9CHpeivMOdwzGFEKrf6Hg7tIQ, ssh-rsa SHA256:CDfAU12pjQS7/91kg7gYacza0U/6PDbE04Ic3IpYxkM"}}, ""},
		{"ssh-audit-docker-openssh_4.0p1_test1.json", []svc{{"127.0.0.1", 2222, "SSH-1.99-OpenSSH_4.0",
			"host keys: ssh-dss SHA256:sqDDYhzYz7YIQeFDc0WF8SeXtrEz+iwsV7d/FdIgztM, ssh-rsa SHA256:YZ457EBcJTSxRKI3yXRgtAj3PBf5B9/F36b1SVooml4"}}, ""},
		{"ssh-audit-docker-tinyssh_20190101_test1.json", nil, "ssh-audit target localhost:2222: no identification line (banner.raw is empty)"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "ssh-audit", readFile(t, tt.file))
			if len(r.obs) != len(tt.want) || len(r.bad) != 0 || tt.skipped != "" && (len(r.skipped) != 1 || !strings.HasPrefix(r.skipped[0], tt.skipped)) {
				t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
			}
			for i, w := range tt.want {
				o := r.obs[i]
				s := o.Service
				if o.IP != w.ip || s.Port != w.port || len(o.Hostnames) != 0 || len(s.Probes) != 1 || s.Probes[0].Banner == nil || s.Probes[0].Banner.Received.Data != w.banner ||
					s.Detected == nil || s.Detected.By != "ssh-audit" || s.Detected.Service != "ssh" || w.keys != "" && s.Detected.Info != w.keys {
					t.Errorf("observation %d = %s; want %+v", i, mustJSON(t, o), w)
				}
			}
		})
	}
}

func TestSSHAudit_Shapes(t *testing.T) {
	t.Parallel()
	targets := readFile(t, "ssh-audit-targets.json")
	rec := func(target, raw string) string {
		return `{"banner":{"raw":"` + raw + `","protocol":"2.0","software":"x","comments":null},"target":"` + target + `"}`
	}
	tests := []struct {
		name, in string
		ports    []int
		ips      []string
		skipped  int
		want     []string
	}{
		{"targets with IPv6 addresses, ports and JSON lines", rec("2001:db8::1:2222", "SSH-2.0-a") + "\n" + rec("[2001:db8::2]:22", "SSH-2.0-b") + "\n" +
			`{"banner":{"raw":"SSH-2.0-c","protocol":[2,0]},"target":"2001:db8::3"}` + "\n" + rec("192.0.2.4:22", `SSH-2.0-d\r\n`),
			[]int{2222, 22, 22, 22}, []string{"2001:db8::1", "2001:db8::2", "2001:db8::3", "192.0.2.4"}, 0, nil},
		{"cut inside the second target: the first is kept", targets[:strings.Index(targets, `"target": "127.0.0.1:10025"`)+10], []int{10024}, []string{"127.0.0.1"}, 0,
			[]string{"ssh-audit: array: the input ends inside a JSON value (cut file?)"}},
		{"policy and client audits skipped, wrong shapes reported", `{"host":"192.0.2.1","port":22,"policy":"Hardened OpenSSH Server v8.0 (version 1)","passed":false}` + "\n" +
			`{"banner":{"raw":"SSH-2.0-x"},"client_ip":"192.0.2.2"}` + "\n" + `{"banner":{"raw":"SSH-2.0-x"}}` + "\n" + rec("192.0.2.3:99999", "SSH-2.0-x") + "\n" + `[1,2]` + "\n",
			nil, nil, 2, []string{`not an ssh-audit result: want "banner" and "target"`, `target: port: must be 1..65535, got "99999"`, "ssh-audit: json:", "ssh-audit: json:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "ssh-audit", tt.in)
			if len(r.obs) != len(tt.ports) || len(r.bad) != len(tt.want) || len(r.skipped) != tt.skipped {
				t.Fatalf("obs %s bad %v skipped %v", mustJSON(t, r.obs), r.bad, r.skipped)
			}
			for i, o := range r.obs {
				if o.IP != tt.ips[i] || o.Service.Port != tt.ports[i] || strings.ContainsAny(o.Service.Probes[0].Banner.Received.Data, "\r\n") {
					t.Errorf("observation %d = %s", i, mustJSON(t, o))
				}
			}
			for i, w := range tt.want {
				if !strings.Contains(r.bad[i].Error(), w) {
					t.Errorf("error %d = %v, want %q", i, r.bad[i], w)
				}
			}
		})
	}
}

// Fed another auditor's output, each of the four adapters stores nothing
// and reports what did not fit (or, for a name without an address,
// skips it).
func TestAuditAdapters_WrongFormat(t *testing.T) {
	t.Parallel()
	files := map[string]string{"testssl": "testssl-3.0.8.json", "sslyze": "sslyze-5.0.1.json", "sslscan": "sslscan-2.0.7-full.xml", "ssh-audit": "ssh-audit-targets.json"}
	for format := range files {
		for other, file := range files {
			if other == format {
				continue
			}
			r := runScan(t, format, readFile(t, file))
			if len(r.obs) != 0 || len(r.bad) == 0 && len(r.skipped) == 0 {
				t.Errorf("%s reading %s: %d observations, nothing reported", format, file, len(r.obs))
			}
		}
	}
}
