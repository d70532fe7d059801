package ingest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// scanResult is an adapter's observations, malformed records and skip
// reasons, every observation already normalized (as emitChecked leaves it).
type scanResult struct {
	result
	skipped []string
}

func runScan(t *testing.T, format, input string) scanResult {
	t.Helper()
	var r scanResult
	opt := Options{ObservedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Skipped: func(_ int, reason string) { r.skipped = append(r.skipped, reason) }}
	r.result = runAdapter(t, Adapters()[format], input, opt)
	return r
}

func headerValues(hs []Header, name string) []string {
	var out []string
	for _, h := range hs {
		if h.Name == name {
			out = append(out, h.Value)
		}
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestZGrab2_RealSample(t *testing.T) {
	t.Parallel()
	r := runScan(t, "zgrab2", readFile(t, "zgrab2.jsonl"))
	if len(r.obs) != 8 || len(r.bad) != 0 || len(r.skipped) != 0 {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	ports := map[int]Observation{}
	for _, o := range r.obs {
		ports[o.Service.Port] = o
	}
	http := ports[80].Service.Probes[0]
	if http.Name != "http" || http.Request.Method != "GET" || http.Request.Path != "/" || http.Request.Host != "target" ||
		http.Response.Status != 200 || http.Response.Reason != "OK" || http.Response.Protocol != "HTTP/1.1" ||
		http.Response.Body.Text() != "<html><body>HTTP INDEX</body></html>" ||
		http.Response.Body.SHA256 != "c11fdc020dbb3150da741f51dcf0423c5ce93a798e91bd5c1957ea7299f4e103" {
		t.Errorf("http probe = %s", mustJSON(t, http))
	}
	// Header names back in their usual spelling, the "unknown" list kept.
	for name, want := range map[string]string{"Content-Type": "text/html", "Server": "lighttpd/1.4.35", "ETag": `"2262550883"`, "Accept-Ranges": "bytes"} {
		if got := headerValues(http.Response.Headers, name); len(got) != 1 || got[0] != want {
			t.Errorf("header %s = %v, want %q", name, got, want)
		}
	}
	if got := headerValues(http.Request.Headers, "User-Agent"); len(got) != 1 {
		t.Errorf("request User-Agent = %v", got)
	}
	tls := ports[443].Service.Probes[0].TLS
	if tls == nil || tls.Version != "TLSv1.2" || tls.Cipher != "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256" || tls.Subject.CN != "target" ||
		tls.Serial != "d359b8b41668919f" || !tls.SelfSigned || tls.NotAfter != "2018-03-11T20:31:40Z" ||
		tls.SHA256 != "fe01d8aaa47e75e281f404ab5e60c3e73da4747b02e558c238cc77cf023586fd" {
		t.Errorf("https tls = %s", mustJSON(t, tls))
	}
	if p := ports[22].Service; p.Probes[0].Banner.Received.Text() != "SSH-2.0-OpenSSH_7.2p2 Ubuntu-4ubuntu2.4" || p.Detected.Product != "OpenSSH_7.2p2" {
		t.Errorf("ssh = %s", mustJSON(t, p))
	}
	if p := ports[25].Service.Probes; len(p) != 2 || p[1].Name != "smtp.ehlo" || !strings.HasPrefix(p[0].Banner.Received.Text(), "220 ba06a6536f7e ESMTP") {
		t.Errorf("smtp = %s", mustJSON(t, p))
	}
	if o := ports[3306]; o.Service.Detected.Version != "5.7.20" || o.Service.Probes[0].TLS.Version != "TLSv1.1" {
		t.Errorf("mysql = %s", mustJSON(t, o.Service))
	}
	if ports[21].ObservedAt != "2018-04-06T19:37:52Z" || ports[23].IP != "172.17.0.2" {
		t.Errorf("ftp %s, telnet %s", ports[21].ObservedAt, ports[23].IP)
	}
}

func TestZGrab2_Constructed(t *testing.T) {
	t.Parallel()
	r := runScan(t, "zgrab2", readFile(t, "zgrab2-constructed.jsonl"))
	if len(r.obs) != 2 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	if strings.Join(r.skipped, "|") != "zgrab2 module failed: ssh connection-timeout|zgrab2 module failed: http io-timeout" {
		t.Errorf("skipped %q", r.skipped)
	}
	s := r.obs[0].Service
	if s.Port != 10443 || len(s.Probes) != 3 {
		t.Fatalf("http+tls service = %s", mustJSON(t, s))
	}
	redirect, page, hs := s.Probes[0], s.Probes[1], s.Probes[2]
	if redirect.Response.Status != 302 || len(headerValues(redirect.Response.Headers, "Set-Cookie")) != 2 ||
		headerValues(redirect.Response.Headers, "Location")[0] != "/remote/login?lang=en" {
		t.Errorf("redirect = %s", mustJSON(t, redirect))
	}
	if page.Request.Path != "/remote/login?lang=en" || page.Response.Status != 200 || page.TLS == nil ||
		page.TLS.Serial != "5eed1234abcd" || strings.Join(page.TLS.SANs, ",") != "vpn.example.net,portal.example.net,192.0.2.10" ||
		len(headerValues(page.Response.Headers, "WWW-Authenticate")) != 1 {
		t.Errorf("page = %s", mustJSON(t, page))
	}
	if hs.Name != "tls" || hs.TLS.Version != "TLSv1.3" || hs.TLS.JA3S != "eb1d94daa7e0344597e756a1fb6e7054" {
		t.Errorf("tls module = %s", mustJSON(t, hs))
	}
	if s.Detected.Service != "http" {
		t.Errorf("detected %+v", s.Detected)
	}
	if b := r.obs[1].Service.Probes[0].Banner.Received; b.Text() != "HTTP" || r.obs[1].Service.Port != 7547 {
		t.Errorf("hex banner = %s", mustJSON(t, r.obs[1].Service))
	}
}

func TestMasscan_RealSamples(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"masscan.json", "masscan.txt"} {
		t.Run(file, func(t *testing.T) {
			r := runScan(t, "masscan", readFile(t, file))
			if len(r.obs) != 4 || len(r.bad) != 0 || strings.Join(r.skipped, "|") != "masscan: not a tcp or udp port (icmp)" {
				t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
			}
			var http, ssl *Service
			for _, o := range r.obs {
				if o.IP != "93.184.216.34" {
					t.Errorf("ip %s", o.IP)
				}
				if len(o.Service.Probes) == 0 {
					continue
				}
				if o.Service.Port == 80 {
					http = o.Service
				} else {
					ssl = o.Service
				}
			}
			if http == nil || ssl == nil {
				t.Fatal("no banner observations")
			}
			var page *Probe
			for i := range http.Probes {
				if http.Probes[i].Response != nil {
					page = &http.Probes[i]
				}
			}
			if page == nil || page.Response.Status != 404 || page.Response.Protocol != "HTTP/1.0" || page.Response.Title != "404 - Not Found" ||
				strings.Join(headerValues(page.Response.Headers, "Server"), "") != "ECS (sec/974D)" || len(page.Response.Headers) != 5 {
				t.Errorf("http = %s", mustJSON(t, http))
			}
			if http.Detected.Service != "http" {
				t.Errorf("detected %+v", http.Detected)
			}
			// The X509 banner is cut by masscan: kept as a banner, beside the
			// ssl banner's version and cipher.
			if ssl.Probes[0].TLS.Version != "TLSv1.1" || ssl.Probes[0].TLS.Cipher != "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA" ||
				ssl.Probes[1].Name != "X509" || !strings.HasPrefix(ssl.Probes[1].Banner.Received.Text(), "MIIG1TCCBb2g") {
				t.Errorf("ssl = %s", mustJSON(t, ssl))
			}
		})
	}
}

func TestMasscan_Constructed(t *testing.T) {
	t.Parallel()
	r := runScan(t, "masscan", readFile(t, "masscan-constructed.json"))
	if len(r.obs) != 2 || len(r.bad) != 0 || strings.Join(r.skipped, "|") != "masscan: port closed" {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	s := r.obs[0].Service
	if r.obs[0].ObservedAt != "2025-11-26T00:00:02Z" || len(s.Probes) != 2 {
		t.Fatalf("grouped service = %s", mustJSON(t, s))
	}
	tls := s.Probes[0].TLS
	if tls.Subject.CN != "vpn.example.net" || tls.Serial != "5eed1234abcd" || tls.Version != "TLSv1.2" || !tls.SelfSigned ||
		tls.Cipher != "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256" || len(tls.SANs) != 3 || tls.NotBefore != "2026-01-01T00:00:00Z" {
		t.Errorf("tls = %s", mustJSON(t, tls))
	}
	page := s.Probes[1]
	if cookies := headerValues(page.Response.Headers, "Set-Cookie"); len(cookies) != 2 || page.TLS == nil {
		t.Errorf("page = %s", mustJSON(t, page))
	}
	if got := headerValues(page.Response.Headers, "X-Café"); len(got) != 1 {
		t.Errorf("latin-1 header name lost: %s", mustJSON(t, page.Response.Headers))
	}
	ssh := r.obs[1].Service.Probes[0].Banner.Received
	if raw := ssh.Bytes(); len(raw) != 48 || raw[42] != 0 || raw[45] != '\\' {
		t.Errorf("ssh banner bytes = %q", raw)
	}
}

func TestNmapXML_RealSamples(t *testing.T) {
	t.Parallel()
	r := runScan(t, "nmap-xml", readFile(t, "nmap-complex.xml"))
	if len(r.obs) != 4 || len(r.bad) != 0 || len(r.skipped) != 2 {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	d := r.obs[2].Service.Detected
	if r.obs[2].Service.Port != 80 || d.By != "nmap" || d.Service != "http" || d.Product != "Apache httpd" || d.Version != "2.2.2" || d.Info != "(Fedora)" ||
		r.obs[2].ObservedAt != "2009-07-10T23:49:15Z" || r.obs[3].Service.Transport != "udp" ||
		len(r.obs[0].Hostnames) != 1 || r.obs[0].Hostnames[0] != "scanme.nmap.org" {
		t.Errorf("observations = %s", mustJSON(t, r.obs))
	}

	r = runScan(t, "nmap-xml", readFile(t, "nmap-servicefp.xml"))
	if len(r.bad) != 0 || len(r.obs) < 10 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	var finger, icb *Service
	for _, o := range r.obs {
		switch o.Service.Port {
		case 79:
			finger = o.Service
		case 7326:
			icb = o.Service
		}
	}
	if finger == nil || icb == nil {
		t.Fatal("no fingerprinted services")
	}
	if p := finger.Probes[0]; p.Name != "nmap:NULL" || p.Banner.Received.Length != 419 ||
		!strings.HasPrefix(p.Banner.Received.Text(), "The latest stable version of the Linux kernel is:           2.6.24\n") {
		t.Errorf("finger NULL = %s", mustJSON(t, p))
	}
	if last := finger.Probes[len(finger.Probes)-1].Banner.Received; !last.Truncated || last.Length != 419 || last.SHA256 != "" {
		t.Errorf("nmap's cut fingerprint not marked truncated: %s", mustJSON(t, last))
	}
	if got := icb.Probes[0].Banner.Received.Bytes(); string(got) != "Bj1\x01cvs.openbsd.org\x01Darkside Server version 1.3.221 + pain, v0.100\x00" {
		t.Errorf("icb NULL = %q", got)
	}
}

func TestNmapXML_Scripts(t *testing.T) {
	t.Parallel()
	r := runScan(t, "nmap-xml", readFile(t, "nmap-scripts.xml"))
	if len(r.obs) != 3 || len(r.bad) != 0 || strings.Join(r.skipped, "|") != "nmap: port filtered" {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	ftp, web, tls := r.obs[0].Service, r.obs[1].Service, r.obs[2].Service
	if ftp.Probes[0].Banner.Received.Text() != "220 FTP version 1.0\r\n" || ftp.Detected.Info != "ostype: Unix" ||
		strings.Join(ftp.Detected.CPE, ",") != "cpe:/a:vsftpd:vsftpd:3.0.3" {
		t.Errorf("ftp = %s", mustJSON(t, ftp))
	}
	p := web.Probes[0]
	if p.Request.Method != "HEAD" || p.Response.Title != "Go ahead and ScanMe!" || len(p.Response.Headers) != 8 ||
		strings.Join(headerValues(p.Response.Headers, "Server"), "|") != "Apache/2.2.14 (Ubuntu)|Unidentified Server 1.0|SomeOther Server" ||
		web.Detected.Info != "(Ubuntu); favicon: Socialtext" {
		t.Errorf("http = %s", mustJSON(t, web))
	}
	h := tls.Probes[0]
	if len(tls.Probes) != 1 || h.Response.Title != "Wikipedia, the free encyclopedia" || h.TLS == nil || h.TLS.Subject.CN != "www.paypal.com" ||
		h.TLS.Issuer.O[0] != "DigiCert Inc" || strings.Join(h.TLS.SANs, ",") != "www.paypal.com,fastlane.paypal.com" ||
		h.TLS.NotAfter != "2025-02-08T23:59:59Z" || h.TLS.SHA256 != "d76b791ce89c043ac25d19f397b291d55d94b1c272df8d1f4babfdc191a7413b" ||
		tls.Detected.Service != "ssl/http" {
		t.Errorf("https = %s", mustJSON(t, tls))
	}
}

func TestShodan_Samples(t *testing.T) {
	t.Parallel()
	r := runScan(t, "shodan", readFile(t, "shodan.jsonl"))
	if len(r.obs) != 2 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	dns := r.obs[0]
	if dns.IP != "8.8.8.8" || dns.Service.Transport != "udp" || dns.ObservedAt != "2021-01-28T07:21:33Z" ||
		dns.Service.Probes[0].Banner.Received.Text() != "Recursion: enabled" || dns.Claims[0].OrgName != "Google" ||
		dns.Claims[0].SignalSource != "shodan" || dns.Service.Detected.Service != "dns-udp" ||
		dns.Claims[0].ASN != 15169 || len(dns.Hostnames) != 1 || dns.Hostnames[0] != "dns.google" {
		t.Errorf("dns = %s", mustJSON(t, dns))
	}
	s := r.obs[1].Service
	if len(s.Probes) != 3 {
		t.Fatalf("https = %s", mustJSON(t, s))
	}
	redirect, page, fav := s.Probes[0], s.Probes[1], s.Probes[2]
	if redirect.Response.Status != 302 || redirect.Request.Path != "/" {
		t.Errorf("redirect = %s", mustJSON(t, redirect))
	}
	if page.Request.Path != "/remote/login?lang=en" || page.Response.Status != 200 || page.Response.Title != "Please Login" ||
		len(headerValues(page.Response.Headers, "Set-Cookie")) != 2 || !strings.Contains(page.Response.Body.Text(), "<title>Please Login") ||
		page.TLS.Serial != "5eed1234abcd" || page.TLS.Version != "TLSv1.2" || len(page.TLS.SANs) != 3 || page.TLS.JARM == "" ||
		page.TLS.NotAfter != "2027-01-01T00:00:00Z" || page.TLS.Subject.O[0] != "Example Networks" {
		t.Errorf("page = %s", mustJSON(t, page))
	}
	if fav.Request.Path != "/favicon.ico" || fav.Response.Body.MMH3 == nil || *fav.Response.Body.MMH3 != -1234567890 ||
		string(fav.Response.Body.Bytes()) != "\x00\x00\x01\x00fake-icon-bytes" {
		t.Errorf("favicon = %s", mustJSON(t, fav))
	}
	if d := s.Detected; d.Product != "Fortinet FortiGate SSL VPN" || d.Info != "os: FortiOS; devicetype: firewall" || d.CPE[0] != "cpe:2.3:h:fortinet:fortigate" {
		t.Errorf("detected = %+v", d)
	}
}

func TestSonarHTTP_Samples(t *testing.T) {
	t.Parallel()
	r := runScan(t, "sonar-http", readFile(t, "sonar-http.jsonl"))
	if len(r.obs) != 2 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	p := r.obs[0].Service.Probes[0]
	// dap's response has bare LF line ends and a PNG body (not UTF-8).
	if r.obs[0].Service.Port != 443 || p.Request.Host != "upload.wikimedia.org" || p.Response.Status != 200 ||
		strings.Join(headerValues(p.Response.Headers, "Content-Type"), "") != "image/png" ||
		p.Response.Body.Encoding != EncodingBase64 || p.Response.Body.Length != 95 || r.obs[0].ObservedAt != "2017-03-28T17:18:54Z" {
		t.Errorf("wikimedia = %s", mustJSON(t, r.obs[0]))
	}
	q := r.obs[1].Service.Probes[0]
	if q.Response.Status != 401 || len(headerValues(q.Response.Headers, "Set-Cookie")) != 2 || q.Request.Host != "" ||
		r.obs[1].ObservedAt != "2025-11-26T00:00:00Z" {
		t.Errorf("boa = %s", mustJSON(t, r.obs[1]))
	}
}

// A malformed record is reported with its line and skipped; the records
// around it still go in.
func TestScanAdapters_Malformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format, in string
		obs        int
		badLines   []int
	}{
		{"zgrab2", `{"ip":"192.0.2.1","data":{"ftp":{"status":"success","protocol":"ftp","result":{"banner":"220 x"}}}}` + "\n{not json\n" +
			`{"data":{}}` + "\n" + `{"ip":"999.1.1.1","data":{"ftp":{"status":"success","protocol":"ftp","result":{"banner":"x"}}}}` + "\n" +
			`{"ip":"192.0.2.1","data":{"x":{"status":"success","protocol":"unknownproto","result":{}}}}` + "\n", 1, []int{2, 3, 4, 5}},
		{"masscan", "[\n{\"ip\": \"192.0.2.1\", \"timestamp\": \"1\", \"ports\": [{\"port\": 80, \"proto\": \"tcp\", \"status\": \"open\"}]}\n,\n{bad\n,\n" +
			"{\"ip\": \"192.0.2.2\", \"ports\": [{\"port\": 70000, \"proto\": \"tcp\", \"status\": \"open\"}]}\n]\n", 1, []int{4, 6}},
		{"masscan", "#masscan\nopen tcp 80 192.0.2.1 1700000000\nopen tcp x 192.0.2.1 1700000000\nopen tcp 80\nbanner tcp 80 192.0.2.1 soon http x\n# end\n", 1, []int{3, 4, 5}},
		{"nmap-xml", `<nmaprun start="1"><host><address addr="192.0.2.1" addrtype="ipv4"/><ports><port protocol="tcp" portid="x"><state state="open"/></port>` +
			`<port protocol="tcp" portid="22"><state state="open"/></port></ports></host>` + "\n<host><ports><port", 1, []int{1, 2}},
		{"shodan", `{"ip_str":"192.0.2.1","port":22,"transport":"tcp","data":"SSH-2.0-x","timestamp":"2026-01-01T00:00:00"}` + "\n[]\n{}\n" +
			`{"ip_str":"192.0.2.1","port":22,"transport":"sctp","data":"x"}` + "\n", 1, []int{3, 4}}, // [] is an empty array of banners
		{"sonar-http", `{"ip":"192.0.2.1","port":80,"data":"SFRUUC8xLjEgMjAwIE9LDQoNCg=="}` + "\n" + `{"ip":"192.0.2.1","port":80,"data":"%%%"}` + "\n" +
			`{"ip":"192.0.2.1","port":"eighty","data":""}` + "\n" + `{"port":80}` + "\n", 1, []int{2, 3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			r := runScan(t, tt.format, tt.in)
			if len(r.obs) != tt.obs || mustJSON(t, badLines(r.bad)) != mustJSON(t, tt.badLines) {
				t.Errorf("obs %d, bad %v; want %d, lines %v", len(r.obs), r.bad, tt.obs, tt.badLines)
			}
		})
	}
}

// Fed another format's file, an adapter stores nothing and reports the
// first record that did not fit.
func TestScanAdapters_WrongFormat(t *testing.T) {
	t.Parallel()
	files := map[string]string{"zgrab2": "zgrab2.jsonl", "masscan": "masscan.json", "nmap-xml": "nmap-complex.xml", "shodan": "shodan.jsonl", "sonar-http": "sonar-http.jsonl"}
	for format := range files {
		for other, file := range files {
			if other == format {
				continue
			}
			r := runScan(t, format, readFile(t, file))
			if len(r.obs) != 0 || len(r.bad) == 0 || r.bad[0].Line < 1 {
				t.Errorf("%s reading %s: %d observations, bad %v", format, file, len(r.obs), r.bad)
			}
		}
	}
}

// nmapIKESNMP is nmap -sU -sV --script ike-version,snmp-sysdescr output of
// a Check Point IKE responder and a Cisco ASA's SNMP agent (the script
// output shapes of nmap 7.9x).
const nmapIKESNMP = `<?xml version="1.0"?>
<nmaprun scanner="nmap" start="1700000000">
<host starttime="1700000000" endtime="1700000100"><status state="up"/>
<address addr="192.0.2.10" addrtype="ipv4"/>
<ports>
<port protocol="udp" portid="500"><state state="open" reason="udp-response"/>
<service name="isakmp" product="Checkpoint VPN-1 / Firewall-1" version="NGX" method="probed" conf="10"/>
<script id="ike-version" output="&#xa;  vendor_id: Checkpoint VPN-1 / Firewall-1&#xa;  version: NGX&#xa;  attributes: &#xa;    f4ed19e0c114eb516faaac0ee37daf2807b4381f000000010000138d5ba4ce9a0000000018380000"><elem key="vendor_id">Checkpoint VPN-1 / Firewall-1</elem></script>
</port>
<port protocol="udp" portid="161"><state state="open" reason="udp-response"/>
<service name="snmp" method="probed" conf="10"/>
<script id="snmp-sysdescr" output="Cisco Adaptive Security Appliance Version 9.8(4)20&#xa;  System uptime: 12 days"/>
</port>
<port protocol="udp" portid="123"><state state="open" reason="udp-response"/>
<service name="ntp" method="probed" conf="10"/>
<script id="ntp-info" output="&#xa;  receive time stamp: 2023-11-14T22:13:20"/><script id="clock-skew" output="0s"/>
</port>
</ports></host></nmaprun>
`

func TestNmapXML_IKEAndSNMPScripts(t *testing.T) {
	t.Parallel()
	r := runScan(t, "nmap-xml", nmapIKESNMP)
	if len(r.obs) != 3 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	tests := []struct {
		port     int
		probe    string
		contains string
	}{
		{500, "nmap:ike-version", "f4ed19e0c114eb516faaac0ee37daf2807b4381f000000010000138d"},
		{161, "nmap:snmp-sysdescr", "Cisco Adaptive Security Appliance Version 9.8(4)20"},
	}
	for i, tt := range tests {
		s := r.obs[i].Service
		if s.Port != tt.port || s.Transport != "udp" || len(s.Probes) != 1 || s.Probes[0].Name != tt.probe ||
			s.Probes[0].Banner == nil || !strings.Contains(s.Probes[0].Banner.Received.Text(), tt.contains) {
			t.Errorf("port %d = %s", tt.port, mustJSON(t, s))
		}
	}
	// ntp-info prints the server's own variables (version, system), kept
	// as its banner; a script of other analysis is still not kept
	if ntp := r.obs[2].Service; len(ntp.Probes) != 1 || ntp.Probes[0].Name != "nmap:ntp-info" {
		t.Errorf("ntp = %s", mustJSON(t, ntp))
	}
}

func TestShodan_ISAKMPAndSNMP(t *testing.T) {
	t.Parallel()
	in := `{"ip_str":"192.0.2.20","port":500,"transport":"udp","timestamp":"2024-01-02T03:04:05.000000","data":"VPN (IKE)\n\nVersion: 1.0\nVendor IDs:\n  - 4048b7d56ebce88525e7de7f00d6c2d3c0000000","isakmp":{"version":"1.0","vendor_ids":["4048b7d56ebce88525e7de7f00d6c2d3c0000000","12f5f28c457168a9702d9fe274cc0100"]},"_shodan":{"module":"ike"}}
{"ip_str":"192.0.2.21","port":161,"transport":"udp","timestamp":"2024-01-02T03:04:05.000000","data":"SNMP:\n  Versions:\n    1","snmp":{"description":"Palo Alto Networks PA-220 series firewall","name":"fw1"},"_shodan":{"module":"snmp"}}
{"ip_str":"192.0.2.22","port":500,"transport":"udp","timestamp":"2024-01-02T03:04:05.000000","data":"Vendor IDs:\n  - 12f5f28c457168a9702d9fe274cc0100","isakmp":{"vendor_ids":["12F5F28C457168A9702D9FE274CC0100"]}}
`
	r := runScan(t, "shodan", in)
	if len(r.obs) != 3 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	tests := []struct {
		name   string
		probes int
		last   string
	}{
		// only the VID data does not quote is added
		{"isakmp", 2, "vendor_ids: 12f5f28c457168a9702d9fe274cc0100"},
		{"snmp", 2, "Palo Alto Networks PA-220 series firewall"},
		// everything already in data: nothing added
		{"isakmp quoted", 1, "Vendor IDs:\n  - 12f5f28c457168a9702d9fe274cc0100"},
	}
	for i, tt := range tests {
		s := r.obs[i].Service
		if len(s.Probes) != tt.probes || s.Probes[len(s.Probes)-1].Banner.Received.Text() != tt.last {
			t.Errorf("%s = %s", tt.name, mustJSON(t, s))
		}
	}
}

// TestNmapXML_KeptScripts: the scripts that print what the service said of
// itself and vulnerability scripts are kept as banner probes named for
// them; a brute-force script's output (credentials) is not.
func TestNmapXML_KeptScripts(t *testing.T) {
	t.Parallel()
	in := `<?xml version="1.0"?>
<nmaprun scanner="nmap" start="1700000000">
<host endtime="1700000100"><status state="up"/><address addr="192.0.2.10" addrtype="ipv4"/><ports>
<port protocol="tcp" portid="443"><state state="open"/><service name="https"/>
<script id="http-cisco-anyconnect" output="&#xa;  version: 9.8(4)20&#xa;  tunnel-group: VPN"/>
<script id="http-vuln-cve2018-13379" output="Host is vulnerable to CVE-2018-13379 (Fortinet SSL VPN)"/>
<script id="http-brute" output="&#xa;  Accounts: &#xa;    admin:hunter2 - Valid credentials"/>
<script id="cve-2022-40684" output="VULNERABLE: Fortinet FortiOS authentication bypass"/>
<script id="http-methods" output="Supported Methods: GET HEAD"/></port>
<port protocol="tcp" portid="21"><state state="open"/><service name="ftp"/>
<script id="ftp-syst" output="&#xa;  SYST: UNIX MikroTik 6.39.2"/></port>
</ports></host></nmaprun>`
	r := runScan(t, "nmap-xml", in)
	if len(r.obs) != 2 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	var names []string
	for _, o := range r.obs {
		for _, p := range o.Service.Probes {
			names = append(names, p.Name)
		}
	}
	if strings.Join(names, ",") != "nmap:http-cisco-anyconnect,nmap:http-vuln-cve2018-13379,nmap:cve-2022-40684,nmap:ftp-syst" {
		t.Errorf("probes %v", names)
	}
	if js := mustJSON(t, r.obs[0]); strings.Contains(js, "hunter2") || strings.Contains(js, "Supported Methods") {
		t.Errorf("kept a script it should not: %s", js)
	}
}

// TestNmapXML_FaviconMD5: an icon http-favicon's database does not name is
// printed as its MD5, which becomes the favicon probe's body hash.
func TestNmapXML_FaviconMD5(t *testing.T) {
	t.Parallel()
	in := `<?xml version="1.0"?><nmaprun scanner="nmap" start="1700000000"><host starttime="1700000000"><status state="up"/><address addr="192.0.2.7" addrtype="ipv4"/><ports>` +
		`<port protocol="tcp" portid="443"><state state="open"/><service name="https" tunnel="ssl"/><script id="http-favicon" output="Unknown favicon MD5: 4EAAA139063E6706D1B5D0EEE833D47B"/></port>` +
		`<port protocol="tcp" portid="80"><state state="open"/><service name="http"/><script id="http-favicon" output="Socialtext"/></port>` +
		`</ports></host></nmaprun>`
	r := runScan(t, "nmap-xml", in)
	if len(r.obs) != 2 {
		t.Fatalf("obs %s bad %v", mustJSON(t, r.obs), r.bad)
	}
	var fav *Probe
	for i, p := range r.obs[0].Service.Probes {
		if p.Name == "favicon" {
			fav = &r.obs[0].Service.Probes[i]
		}
	}
	if fav == nil || fav.Response.Body.MD5 != "4eaaa139063e6706d1b5d0eee833d47b" || fav.Request.Path != "/favicon.ico" {
		t.Errorf("443 = %s", mustJSON(t, r.obs[0]))
	}
	for _, p := range r.obs[1].Service.Probes {
		if p.Name == "favicon" {
			t.Errorf("80 has a favicon probe for a named icon: %s", mustJSON(t, r.obs[1]))
		}
	}
}

// TestNmapXML_OldTitleAndVulnsReport: nmap 4.x's "HTML title" script is
// read as http-title; a vulnerability report (nmap's vulns library) is kept
// whatever the script's id, while "VULNERABLE" in other text is not enough.
func TestNmapXML_OldTitleAndVulnsReport(t *testing.T) {
	t.Parallel()
	in := `<?xml version="1.0"?>
<nmaprun scanner="nmap" start="1201479002">
<host><status state="up"/><address addr="192.0.2.168" addrtype="ipv4"/><ports>
<port protocol="tcp" portid="80"><state state="open"/><service name="http" product="Apache httpd" version="1.3.39"/><script id="robots.txt" output="User-Agent: * /img/ " /><script id="HTML title" output="Example: Welcome to example" /></port>
<port protocol="tcp" portid="443"><state state="open"/><service name="https"/>
<script id="tls-ticketbleed" output="&#xa;  VULNERABLE:&#xa;  Ticketbleed is a serious issue in products manufactured by F5&#xa;    State: VULNERABLE (Exploitable)&#xa;"/>
<script id="http-comments-displayer" output="&#xa;  VULNERABLE: a page comment, not a report&#xa;"/></port>
</ports></host></nmaprun>`
	r := runScan(t, "nmap-xml", in)
	if len(r.obs) != 2 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	if p := r.obs[0].Service.Probes; len(p) != 1 || p[0].Response == nil || p[0].Response.Title != "Example: Welcome to example" {
		t.Errorf("80: %s", mustJSON(t, r.obs[0]))
	}
	if p := r.obs[1].Service.Probes; len(p) != 1 || p[0].Name != "nmap:tls-ticketbleed" {
		t.Errorf("443: %s", mustJSON(t, r.obs[1]))
	}
}
