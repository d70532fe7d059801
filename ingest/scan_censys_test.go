package ingest

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestCensys_V2HostView(t *testing.T) {
	t.Parallel()
	r := runScan(t, "censys", readFile(t, "censys-v2-host.json"))
	if len(r.obs) != 2 || len(r.bad) != 0 || len(r.skipped) != 0 {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	dns, web := r.obs[0], r.obs[1]
	if dns.IP != "8.8.8.8" || dns.Service.Port != 53 || dns.Service.Transport != "udp" || dns.ObservedAt != "2022-08-30T06:39:12Z" ||
		dns.Service.Detected.Service != "DNS" || len(dns.Service.Probes) != 0 {
		t.Errorf("dns = %s", mustJSON(t, dns))
	}
	if len(web.Claims) != 1 || web.Claims[0].OrgName != "GOOGLE" || web.Claims[0].ASN != 15169 || web.Claims[0].SignalSource != "censys" ||
		strings.Join(web.Hostnames, ",") != "dns.google" {
		t.Errorf("claims %+v hostnames %v", web.Claims, web.Hostnames)
	}
	p := web.Service.Probes[0]
	// The headers in banner_hex's order (the response Censys saw), with
	// the Date line's bare LF; the request's header map back to User-Agent.
	var names []string
	for _, h := range p.Response.Headers {
		names = append(names, h.Name)
	}
	if want := "X-Content-Type-Options,Access-Control-Allow-Origin,Location,Date,Content-Type,Server,Content-Length,X-XSS-Protection,X-Frame-Options,Alt-Svc"; strings.Join(names, ",") != want {
		t.Errorf("header order %v", names)
	}
	if p.Request.Method != "GET" || p.Request.Path != "/" || p.Request.Host != "" || headerValues(p.Request.Headers, "User-Agent")[0] != "Mozilla/5.0 (compatible; CensysInspect/1.1; +https://about.censys.io/)" ||
		p.Response.Status != 302 || p.Response.Reason != "Found" || p.Response.Title != "302 Moved" ||
		!strings.HasSuffix(headerValues(p.Response.Headers, "Alt-Svc")[0], `quic=":443"; ma=2592000; v="46,43"`) {
		t.Errorf("http = %s", mustJSON(t, p))
	}
	// body_size beyond the body kept: cut, no hash of the part.
	if b := p.Response.Body; b.Text() != "test" || !b.Truncated || b.Length != 216 || b.SHA256 != "" {
		t.Errorf("body = %s", mustJSON(t, b))
	}
	tls := p.TLS
	if tls == nil || tls.Version != "TLSv1.2" || tls.Subject.CN != "dns.google" || tls.Issuer.CN != "GTS CA 1C3" || tls.Issuer.O[0] != "Google Trust Services LLC" ||
		tls.SHA256 != "5c2d6869e805696c328d7ba5acd7d347b46e1e03d7ed65886bf2df55f41d01fd" || len(tls.SANs) != 7 || tls.SelfSigned {
		t.Errorf("tls = %s", mustJSON(t, tls))
	}
}

func TestCensys_Platform(t *testing.T) {
	t.Parallel()
	r := runScan(t, "censys", readFile(t, "censys-platform-host.json"))
	if len(r.obs) != 3 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	if q := r.obs[1]; q.Service.Port != 443 || q.Service.Transport != "udp" || q.Service.Detected != nil || len(q.Service.Probes) != 0 {
		t.Errorf("quic = %s", mustJSON(t, q))
	}
	o := r.obs[2]
	p := o.Service.Probes[0]
	if o.ObservedAt != "2026-01-15T12:32:21Z" || p.Response.Status != 302 || headerValues(p.Response.Headers, "Server")[0] != "HTTP server (unknown)" ||
		p.Response.Title != "302 Moved" || !strings.HasPrefix(p.Response.Body.Text(), "<HTML><HEAD>") || p.Response.Body.Truncated {
		t.Errorf("endpoint = %s", mustJSON(t, p))
	}
	tls := p.TLS
	// serial_number is decimal: written as hex.
	if tls.Version != "TLSv1.3" || tls.Cipher != "TLS_CHACHA20_POLY1305_SHA256" || tls.Serial != "e00fd556c89bc8b60a46a49c45ffaa61" ||
		tls.NotAfter != "2026-02-25T15:57:25Z" || tls.Issuer.CN != "WR2" || tls.JA4S != "t130200_1303_234ea6891581" ||
		tls.JARM != "29d3fd00029d29d00042d43d00041d8f924f5255cbc229bc55efa16391dad6" || !slices.Contains(tls.SANs, "dns64.dns.google") {
		t.Errorf("tls = %s", mustJSON(t, tls))
	}
}

func TestCensys_Shapes(t *testing.T) {
	t.Parallel()
	host := `{"ip":"192.0.2.1","services":[{"port":22,"service_name":"SSH","transport_protocol":"TCP","banner":"SSH-2.0-OpenSSH_8.9","software":[{"part":"a","vendor":"OpenBSD","product":"OpenSSH","version":"8.9","uniform_resource_identifier":"cpe:2.3:a:openbsd:openssh:8.9:*:*:*:*:*:*:*"},{"part":"o","vendor":"Canonical","product":"Ubuntu Linux"}]}]}`
	in := strings.Join([]string{
		host, // JSON lines
		`[` + strings.Replace(host, "192.0.2.1", "192.0.2.2", 1) + `]`, // an array
		`{"code":200,"status":"OK","result":{"hits":[` + strings.Replace(host, "192.0.2.1", "192.0.2.3", 1) + `]}}`,
		`{"ip":"nope","services":[]}`,
		`{"ip":"192.0.2.4","services":[{"port":70000}]}`,
		`{"hello":1}`,
		`{"ip": "192.0.2.5", "services": [`, // cut: the next line is read again
		strings.Replace(host, "192.0.2.1", "192.0.2.6", 1),
		`{"ip":`,
	}, "\n")
	r := runScan(t, "censys", in)
	if len(r.obs) != 4 || !slices.Equal(badLines(r.bad), []int{4, 5, 6, 7, 9}) || r.obs[3].IP != "192.0.2.6" {
		t.Fatalf("obs %s bad %v", mustJSON(t, r.obs), r.bad)
	}
	for i, o := range r.obs {
		d := o.Service.Detected
		if o.IP != []string{"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.6"}[i] || o.Service.Probes[0].Banner.Received.Text() != "SSH-2.0-OpenSSH_8.9" ||
			d.Product != "OpenSSH" || d.Version != "8.9" || d.Info != "Canonical Ubuntu Linux" || len(d.CPE) != 1 {
			t.Errorf("obs %d = %s", i, mustJSON(t, o))
		}
	}
}

// TestCensys_Favicons: the favicons Censys fetched become probes named
// "favicon" carrying the hashes it published (v2's md5_hash, the
// Platform's hash_md5, hash_sha256 and hash_shodan); a hash of the wrong
// shape is dropped and the rest of the record stands.
func TestCensys_Favicons(t *testing.T) {
	t.Parallel()
	v2 := `{"ip":"192.0.2.1","services":[{"port":443,"service_name":"HTTP","transport_protocol":"TCP","http":{"request":{"uri":"https://192.0.2.1/"},"response":{"status_code":200,"favicons":[{"name":"https://vpn.example.com/vpn/images/AccessGateway.ico","md5_hash":"4EAAA139063E6706D1B5D0EEE833D47B"},{"name":"https://192.0.2.1/favicon.ico","md5_hash":"nothex"}]}}}]}`
	platform := `{"ip":"192.0.2.2","services":[{"port":443,"protocol":"HTTP","transport_protocol":"tcp","endpoints":[{"path":"/","http":{"status_code":200,"favicons":[{"name":"data:image/x-icon;base64,AAABAAEAEBAAAAEAIABoBAAAFgAAACgAAAAQAAAAIAAAAAEAIAAAAAAAAAQ","hash_md5":"0d835213afc36cc098b080784bc223a0","hash_sha256":"5c4e137d4bcf2a86fbab08a0a416ecfbaff97cd410254a1dd4dd9d3d36eb3762","hash_shodan":-1658992314,"size":1150}]}}]}]}`
	r := runScan(t, "censys", v2+"\n"+platform)
	if len(r.obs) != 2 || len(r.bad) != 0 {
		t.Fatalf("obs %s bad %v", mustJSON(t, r.obs), r.bad)
	}
	ps := r.obs[0].Service.Probes
	if len(ps) != 2 || ps[1].Name != "favicon" || ps[1].Request.Path != "/vpn/images/AccessGateway.ico" || ps[1].Request.Host != "vpn.example.com" ||
		ps[1].Response.Body.MD5 != "4eaaa139063e6706d1b5d0eee833d47b" {
		t.Errorf("v2 probes = %s", mustJSON(t, ps))
	}
	ps = r.obs[1].Service.Probes
	if len(ps) != 2 || ps[1].Request.Path != "/favicon.ico" || ps[1].Response.Body.MD5 != "0d835213afc36cc098b080784bc223a0" ||
		ps[1].Response.Body.MMH3 == nil || *ps[1].Response.Body.MMH3 != -1658992314 || ps[1].Response.Body.Length != 1150 ||
		ps[1].Response.Body.SHA256 != "5c4e137d4bcf2a86fbab08a0a416ecfbaff97cd410254a1dd4dd9d3d36eb3762" {
		t.Errorf("platform probes = %s", mustJSON(t, ps))
	}
}

// Censys's IPv4 dataset (Search API v1, BigQuery): ports as members
// ("443", "p22"), the protocol's grab beneath, flat field names folded
// back, and a document without "ip" refused with the field named.
func TestCensys_IPv4Dataset(t *testing.T) {
	t.Parallel()
	r := runScan(t, "censys", readFile(t, "censys-ipv4-v1.jsonl"))
	if len(r.obs) != 6 || len(r.bad) != 1 || !strings.Contains(r.bad[0].Err.Error(), "ip: missing") || r.bad[0].Line != 4 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	byPort := map[string]Observation{}
	for _, o := range r.obs {
		byPort[o.IP+":"+strconv.Itoa(o.Service.Port)] = o
	}
	ssh := byPort["192.0.2.10:22"]
	if b := ssh.Service.Probes[0].Banner; b == nil || b.Received.Text() != "SSH-1.5-Cisco-1.25" || ssh.Service.Detected.Service != "ssh" {
		t.Errorf("ssh = %s", mustJSON(t, ssh))
	}
	web := byPort["192.0.2.10:80"].Service.Probes[0]
	if web.Request.Method != "GET" || web.Response.Status != 401 || web.Response.Reason != "Unauthorized" || web.Response.Protocol != "HTTP/1.1" ||
		headerValues(web.Response.Headers, "Server")[0] != "cisco-IOS" || len(headerValues(web.Response.Headers, "WWW-Authenticate")) != 1 {
		t.Errorf("http = %s", mustJSON(t, web))
	}
	tl := byPort["192.0.2.10:443"].Service.Probes[0].TLS
	if tl == nil || tl.Subject.CN != "CISCO." || tl.Issuer.CN != "CISCO." || !tl.SelfSigned || tl.Serial != "0" ||
		tl.NotBefore != "1993-04-10T17:00:49Z" || tl.NotAfter != "2003-04-08T17:00:49Z" ||
		tl.SHA256 != "26917c533b12ffc9f1e72d526a7503f2c479cd3718e6db9c8b681ebe28f90c14" || tl.Version != "SSLv3" {
		t.Errorf("tls = %s", mustJSON(t, tl))
	}
	// flat names: one HTTP exchange with its certificate
	flat := byPort["192.0.2.11:443"].Service.Probes
	if len(flat) != 1 || flat[0].Response.Status != 200 || flat[0].Response.Title != "Example portal" ||
		headerValues(flat[0].Response.Headers, "Server")[0] != "xxxxxxxx-xxxxx" || flat[0].TLS == nil || flat[0].TLS.Subject.CN != "portal.example.com" {
		t.Errorf("flat = %s", mustJSON(t, flat))
	}
	// BigQuery's p<port> columns; DNS over UDP with no grab read but the
	// identification kept
	bq := byPort["192.0.2.12:22"]
	if bq.Service.Probes[0].Banner.Received.Text() != "SSH-2.0-OpenSSH_7.4" || bq.Service.Detected.Product != "OpenSSH" || bq.Service.Detected.Version != "7.4" {
		t.Errorf("p22 = %s", mustJSON(t, bq))
	}
	if dns := byPort["192.0.2.12:53"]; dns.Service.Transport != "udp" || len(dns.Service.Probes) != 0 || dns.Service.Detected.Service != "dns" {
		t.Errorf("p53 = %s", mustJSON(t, dns))
	}
}

// censysIPv4CrossfeedRecord is one host of Censys's IPv4 dataset as
// served in 2020 (Search API v1), trimmed from the test mock
// backend/src/tasks/helpers/__mocks__/censysIpv4Sample.json of
// github:cisagov/crossfeed at 7da8691c302267015bb45a9ad4485dd87e554fab
// (CC0 1.0): host 192.150.185.186, its address replaced by the
// documentation address 203.0.113.186; of its eleven ports 80 (http),
// 587 (smtp, without its certificate), 993 (imaps) and 3306 (mysql) kept, the body, the certificate's key,
// extensions and chain, and the mysql capability flags left out; the
// values as the record has them.
const censysIPv4CrossfeedRecord = `{"ip":"203.0.113.186","updated_at":"2020-07-15T07:46:21Z","metadata":{"os":"Debian,Debian,Debian"},
"p80":{"http":{"get":{"body_sha256":"f14e8167f12be74330c1b881b5aa3df95f5bd66d26f42cc03b87a7c38946c571","headers":{"accept_ranges":"bytes","content_type":"text/html","server":"Apache/2.4.25 (Debian)","unknown":[{"key":"etag","value":"\"29cd-5418134625740-gzip\""}]},"metadata":{"description":"Apache httpd 2.4.25","manufacturer":"Apache","product":"httpd","version":"2.4.25"},"status_code":"200","status_line":"200 OK","title":"Apache2 Debian Default Page: It works","timestamp":"2020-07-07T12:37:16Z"}}},
"p993":{"imaps":{"tls":{"banner":"* OK [CAPABILITY IMAP4rev1 LITERAL+ SASL-IR LOGIN-REFERRALS ID ENABLE IDLE AUTH=PLAIN AUTH=LOGIN] Dovecot ready.","timestamp":"2020-07-13T23:16:29Z","tls":{"certificate":{"parsed":{"fingerprint_sha256":"aea987f7c2426d5bf1ab8b9866fb7af8022319869a35c3618406e8b927a0e5e2","issuer":{"common_name":["HubBuzzy"],"country":["CA"],"locality":["Toronto"],"organization":["The Number One Company Inc."],"province":["Ontario"]},"issuer_dn":"C=CA, ST=Ontario, L=Toronto, O=The Number One Company Inc., CN=HubBuzzy","serial_number":"9879948764769384498","signature":{"self_signed":true},"subject":{"common_name":["HubBuzzy"],"country":["CA"],"locality":["Toronto"],"organization":["The Number One Company Inc."],"province":["Ontario"]},"subject_dn":"C=CA, ST=Ontario, L=Toronto, O=The Number One Company Inc., CN=HubBuzzy","validity":{"end":"2025-12-30T02:41:12Z","length":"315360000","start":"2016-01-02T02:41:12Z"},"version":"3"}},"cipher_suite":{"id":"0xC02F","name":"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},"version":"TLSv1.2"}}}},
"p587":{"smtp":{"starttls":{"banner":"220 ns1.hubbuzzy.com ESMTP Postfix (Debian/GNU)","ehlo":"250-ns1.hubbuzzy.com\r\n250-PIPELINING\r\n250-SIZE\r\n250-VRFY\r\n250-ETRN\r\n250-STARTTLS\r\n250-ENHANCEDSTATUSCODES\r\n250-8BITMIME\r\n250 DSN","starttls":"220 2.0.0 Ready to start TLS","timestamp":"2020-07-11T03:41:34Z","metadata":{"description":"Postfix","product":"Postfix"}}}},
"p3306":{"mysql":{"banner":{"protocol_version":"10","server_version":"5.5.5-10.1.41-MariaDB-0+deb9u1","supported":true,"timestamp":"2020-07-13T10:54:45Z"}}}}`

// TestCensys_IPv4DatasetCrossfeed: zgrab 1's status line is "200 OK"
// (no protocol, which stays empty); the identification is the maker's
// product ("Apache httpd") with its version; each service is dated by its
// own grab, not the host's updated_at; the certificate of a protocol
// spoken inside TLS (imaps: tls.tls) is kept with its banner; mysql's
// server_version and the host's os are kept in info.
func TestCensys_IPv4DatasetCrossfeed(t *testing.T) {
	t.Parallel()
	r := runScan(t, "censys", strings.ReplaceAll(censysIPv4CrossfeedRecord, "\n", ""))
	if len(r.obs) != 4 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	byPort := map[int]Observation{}
	for _, o := range r.obs {
		byPort[o.Service.Port] = o
	}
	web := byPort[80]
	p := web.Service.Probes[0]
	if p.Response.Protocol != "" || p.Response.Status != 200 || p.Response.Reason != "OK" || web.ObservedAt != "2020-07-07T12:37:16Z" {
		t.Errorf("http = %s at %s", mustJSON(t, p.Response), web.ObservedAt)
	}
	if d := web.Service.Detected; d.Product != "Apache httpd" || d.Version != "2.4.25" || !strings.Contains(d.Info, "host_os: Debian") {
		t.Errorf("detected = %s", mustJSON(t, d))
	}
	imaps := byPort[993]
	if len(imaps.Service.Probes) != 1 || imaps.ObservedAt != "2020-07-13T23:16:29Z" {
		t.Fatalf("imaps = %s", mustJSON(t, imaps))
	}
	ip := imaps.Service.Probes[0]
	if ip.Banner == nil || !strings.HasSuffix(ip.Banner.Received.Text(), "Dovecot ready.") || ip.TLS == nil || ip.TLS.Subject.CN != "HubBuzzy" ||
		ip.TLS.SHA256 != "aea987f7c2426d5bf1ab8b9866fb7af8022319869a35c3618406e8b927a0e5e2" || !ip.TLS.SelfSigned || ip.TLS.Version != "TLSv1.2" ||
		ip.TLS.NotAfter != "2025-12-30T02:41:12Z" {
		t.Errorf("imaps probe = %s", mustJSON(t, ip))
	}
	// the EHLO and STARTTLS replies kept beside the greeting
	smtp := byPort[587].Service.Probes
	if len(smtp) != 3 || smtp[0].Banner.Received.Text() != "220 ns1.hubbuzzy.com ESMTP Postfix (Debian/GNU)" ||
		smtp[1].Name != "ehlo" || !strings.HasSuffix(smtp[1].Banner.Received.Text(), "250-STARTTLS\r\n250-ENHANCEDSTATUSCODES\r\n250-8BITMIME\r\n250 DSN") ||
		smtp[2].Name != "starttls" || smtp[2].Banner.Received.Text() != "220 2.0.0 Ready to start TLS" {
		t.Errorf("smtp = %s", mustJSON(t, smtp))
	}
	my := byPort[3306]
	if my.ObservedAt != "2020-07-13T10:54:45Z" || !strings.Contains(my.Service.Detected.Info, "server_version: 5.5.5-10.1.41-MariaDB-0+deb9u1") {
		t.Errorf("mysql = %s", mustJSON(t, my))
	}
}
