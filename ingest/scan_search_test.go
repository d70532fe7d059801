package ingest

import (
	"slices"
	"strings"
	"testing"
)

func TestZoomEye_RealSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file  string
		check func(t *testing.T, o Observation)
	}{
		{"zoomeye-v1-uncover.json", func(t *testing.T, o Observation) {
			// v1 host search: portinfo with a POP3 banner, no service named.
			p := o.Service.Probes
			if o.IP != "192.168.1.1" || o.Service.Port != 110 || o.Service.Transport != "tcp" || o.ObservedAt != "2016-03-09T16:14:04Z" ||
				len(p) != 1 || p[0].Name != "zoomeye" || p[0].Banner.Received.Text() != "+OK Hello there.\r\n-ERR Invalid command.\r\n\n" ||
				o.Service.Detected != nil || len(o.Claims) != 0 {
				t.Errorf("v1 = %s", mustJSON(t, o))
			}
		}},
		{"zoomeye-v2-api.json", func(t *testing.T, o Observation) {
			// v2 search datum: header as the HTTP answer (the document
			// flattened its lines), ssl.jarm/ja3s under it, the banner and
			// the certificate text as banner probes.
			p := o.Service.Probes
			if o.IP != "1.1.1.1" || o.Service.Port != 443 || o.ObservedAt != "2024-07-03T14:34:10Z" || len(p) != 3 {
				t.Fatalf("v2 = %s", mustJSON(t, o))
			}
			if p[0].Request.Path != "/" || p[0].Response.Status != 302 || p[0].Response.Protocol != "HTTP/1.1" || p[0].Response.Title != "GoogleGoogle appsGoogle Search" ||
				p[0].TLS.JARM != "29d29d15d29d29d00029d29d29d29dea0f89a2e5fb09e4d8e099befed92cfa" || p[0].TLS.JA3S != "45094d08156d110d8ee97b204143db14" {
				t.Errorf("v2 http = %s", mustJSON(t, p[0]))
			}
			if p[1].Name != "zoomeye:https" || p[1].Banner.Received.Text() != "SSH-2.0-OpenSSH_7.6p1 Ubuntu-4ubuntu0.3" ||
				p[2].Name != "zoomeye:ssl" || !strings.HasPrefix(p[2].Banner.Received.Text(), "SSL Certificate Version: TLS 1.2") {
				t.Errorf("v2 banners = %s", mustJSON(t, p[1:]))
			}
			if d := o.Service.Detected; d.By != "zoomeye" || d.Service != "https" || d.Product != "OpenSSD" || d.Version != "1.1.0" || d.Info != "device: webcam; os: windows" {
				t.Errorf("v2 detected = %+v", d)
			}
			if c := o.Claims; len(c) != 1 || c[0].OrgName != "SERVISFIRST BANK" || c[0].ASN != 4837 || c[0].SignalSource != "zoomeye" ||
				strings.Join(o.Hostnames, ",") != "www.google.com,spacex,c01031-001.cust.wallcloud.ch" {
				t.Errorf("v2 claims %+v hostnames %v", c, o.Hostnames)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "zoomeye", readFile(t, tt.file))
			if len(r.obs) != 1 || len(r.bad) != 0 || len(r.skipped) != 0 {
				t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
			}
			tt.check(t, r.obs[0])
		})
	}
}

// zoomeyeFortiGate is a v1 match as ZoomEye writes an HTTPS service: the
// whole response as the banner, the certificate as openssl's text.
const zoomeyeFortiGate = `{"matches":[{"ip":"198.51.100.7","portinfo":{"port":443,"service":"https","app":"Fortinet FortiGate firewall httpd","version":"","os":"FortiOS","device":"firewall","extrainfo":"","title":["Please Login"],"banner":"HTTP/1.1 200 OK\r\nDate: Tue, 01 Oct 2024 10:00:00 GMT\r\nServer: xxxxxxxx-xxxxx\r\nContent-Type: text/html\r\nSet-Cookie: SVPNCOOKIE=; path=/\r\n\r\n<html><title>Please Login</title><script>location='/remote/login?lang=en'</script></html>"},` +
	`"ssl":"SSL Certificate\nVersion: TLS 1.2\nCertificate:\n    Data:\n        Version: 3 (0x2)\n        Serial Number: 1234 (0x4d2)\n        Issuer: C=US, ST=California, L=Sunnyvale, O=Fortinet, OU=Certificate Authority, CN=FGT60E0000000000, emailAddress=support@fortinet.com\n        Subject: C=US, ST=California, L=Sunnyvale, O=Fortinet, OU=FortiGate, CN=FGT60E0000000000, emailAddress=support@fortinet.com\n",` +
	`"geoinfo":{"asn":64500,"organization":"Example Net","isp":"Example ISP"},"protocol":{"application":"HTTP","transport":"tcp","probe":"GetRequest"},"timestamp":"2024-10-01T10:00:00"}]}`

func TestZoomEye_Shapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		obs      int
		bad      []int
		skipped  string
		check    func(t *testing.T, r scanResult)
	}{
		{"v1 HTTPS: the banner as the response, the certificate text read", zoomeyeFortiGate, 1, nil, "", func(t *testing.T, r scanResult) {
			o := r.obs[0]
			p := o.Service.Probes
			if len(p) != 2 || p[0].Response.Status != 200 || headerValues(p[0].Response.Headers, "Server")[0] != "xxxxxxxx-xxxxx" || p[0].Response.Title != "Please Login" ||
				!strings.Contains(p[0].Response.Body.Text(), "/remote/login") || p[1].Name != "zoomeye:ssl" ||
				p[0].TLS.Subject.CN != "FGT60E0000000000" || p[0].TLS.Subject.OU[0] != "FortiGate" || p[0].TLS.Issuer.OU[0] != "Certificate Authority" {
				t.Errorf("probes = %s", mustJSON(t, p))
			}
			if d := o.Service.Detected; d.Product != "Fortinet FortiGate firewall httpd" || d.Info != "device: firewall; os: FortiOS" || o.Claims[0].OrgName != "Example Net" || o.Claims[0].ASN != 64500 {
				t.Errorf("detected %+v claims %+v", d, o.Claims)
			}
		}},
		{"zoomeye search -save: an array of v2 data; udp; a domain-only web asset skipped",
			`[{"ip":"192.0.2.5","port":"161","protocol":"udp","service":"snmp","banner":"Linux core 5.4","update_time":"2025-02-06T16:00:53"},` + "\n" +
				`{"domain":"www.example.com","url":"https://www.example.com/","title":["Example"]},` + "\n" +
				`{"ip":["2001:db8::5"],"url":"https://[2001:db8::5]:8443/login","header":"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\n\r\n","body":"<h1>401</h1>","header.server.name":"nginx","header.server.version":"1.8.1"}]`,
			2, nil, `zoomeye record without an IP address (domain "www.example.com")`, func(t *testing.T, r scanResult) {
				o := r.obs[0]
				if o.Service.Transport != "udp" || o.Service.Port != 161 || o.Service.Probes[0].Name != "zoomeye:snmp" || o.ObservedAt != "2025-02-06T16:00:53Z" {
					t.Errorf("udp = %s", mustJSON(t, o))
				}
				o = r.obs[1]
				p := o.Service.Probes[0]
				if o.IP != "2001:db8::5" || o.Service.Port != 8443 || p.Request.Path != "/login" || p.Response.Status != 401 || p.Response.Body.Text() != "<h1>401</h1>" ||
					o.Service.Detected.Product != "nginx" || o.Service.Detected.Version != "1.8.1" {
					t.Errorf("web = %s", mustJSON(t, o))
				}
			}},
		{"odd JSON: non-objects, members of other types",
			`[null,{"ip":5,"portinfo":"x"},{"ip":"192.0.2.9","portinfo":{"port":22,"title":[1,"a"]},"ssl":{"a":1},"protocol":[1],"geoinfo":{"asn":[1]}}]`,
			1, []int{1, 1}, "", func(t *testing.T, r scanResult) {
				if o := r.obs[0]; o.Service.Port != 22 || len(o.Service.Probes) != 0 || len(o.Claims) != 0 {
					t.Errorf("obs = %s", mustJSON(t, o))
				}
			}},
		{"bad records reported by line and field, the rest read",
			`{"ip":"192.0.2.300","portinfo":{"port":22}}` + "\n" +
				`{"ip":"192.0.2.8","portinfo":{"port":"x"}}` + "\n" +
				`{"code":60003,"message":"invalid api key"}` + "\n" +
				`{"hello":"world"}` + "\n" +
				`{"ip":"192.0.2.8","portinfo":{"port":22,"service":"ssh","banner":"SSH-2.0-OpenSSH_8.0\r\n"}}` + "\n" +
				`{"ip":134744072,"ip_str":"8.8.8.8","port":53,"data":"a Shodan banner: its data is not a list of records"}`,
			1, []int{1, 2, 3, 4, 6}, "", func(t *testing.T, r scanResult) {
				for i, want := range []string{`ip: not an IP address: "192.0.2.300"`, `port: must be 1..65535, got "x"`, "zoomeye answer without records: invalid api key", "not a ZoomEye record", "not a ZoomEye record"} {
					if !strings.Contains(r.bad[i].Error(), want) {
						t.Errorf("bad[%d] = %v, want %q", i, r.bad[i], want)
					}
				}
				if r.obs[0].Service.Probes[0].Banner.Received.Text() != "SSH-2.0-OpenSSH_8.0\r\n" {
					t.Errorf("ssh = %s", mustJSON(t, r.obs[0]))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "zoomeye", tt.in)
			if len(r.obs) != tt.obs || !slices.Equal(badLines(r.bad), tt.bad) || strings.Join(r.skipped, ",") != tt.skipped {
				t.Fatalf("obs %s bad %v skipped %v", mustJSON(t, r.obs), r.bad, r.skipped)
			}
			tt.check(t, r)
		})
	}
}

func TestNetlas_RealSample(t *testing.T) {
	t.Parallel()
	r := runScan(t, "netlas", readFile(t, "netlas-cookbook-response.json"))
	if len(r.obs) != 1 || len(r.bad) != 0 || len(r.skipped) != 0 {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	o := r.obs[0]
	if o.IP != "15.185.166.67" || o.Service.Port != 443 || o.Service.Transport != "tcp" || o.ObservedAt != "2023-09-23T04:39:09Z" ||
		strings.Join(o.Hostnames, ",") != "ec2-15-185-166-67.me-south-1.compute.amazonaws.com" || o.Service.Detected.Service != "https" {
		t.Errorf("obs = %s", mustJSON(t, o))
	}
	if c := o.Claims; len(c) != 1 || c[0].OrgName != "Amazon.com" || c[0].ASN != 16509 || c[0].SignalSource != "netlas" {
		t.Errorf("claims = %+v", c)
	}
	p := o.Service.Probes
	if len(p) != 1 || p[0].Request.Path != "/" || p[0].Response.Status != 403 || p[0].Response.Reason != "Forbidden" || p[0].Response.Protocol != "HTTP/1.1" ||
		p[0].Response.Title != "403 Forbidden" || !strings.HasPrefix(p[0].Response.Body.Text(), "<html>\r\n<head><title>403 Forbidden</title>") {
		t.Fatalf("probe = %s", mustJSON(t, p))
	}
	var names []string
	for _, h := range p[0].Response.Headers {
		names = append(names, h.Name+"="+h.Value)
	}
	if got := strings.Join(names, "|"); got != "Date=Sat, 23 Sep 2023 04:39:04 GMT|Server=Server|Content-Type=text/html|Connection=keep-alive|Content-Length=565" {
		t.Errorf("headers = %s", got)
	}
	x := p[0].TLS
	if x.Subject.CN != "ecs-t.me-south-1.amazonaws.com" || x.Issuer.CN != "Amazon RSA 2048 M01" || x.Issuer.O[0] != "Amazon" || x.Issuer.C != "US" ||
		strings.Join(x.SANs, ",") != "ecs-t.me-south-1.amazonaws.com,*.ecs-t.me-south-1.vpce.amazonaws.com" || x.Serial != "5b6a524ecc79c306d55716cb2c6c328" ||
		x.SHA256 != "e508abebeacadee987d3358d2814704c679ebcd288162daec1b00eed5c67ce24" || x.NotBefore != "2023-03-16T00:00:00Z" || x.NotAfter != "2024-02-21T23:59:59Z" ||
		x.JARM != "29d29d15d29d29d21c29d29d29d29d935576741dfb52d851054f608b751a40" {
		t.Errorf("tls = %s", mustJSON(t, x))
	}
}

func TestNetlas_Shapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		obs      int
		bad      []int
		skipped  string
		check    func(t *testing.T, r scanResult)
	}{
		{"API answer: items with data; an SSH banner; a domain record skipped; unknown headers and the favicon",
			`{"items":[{"data":{"ip":"192.0.2.20","port":22,"prot4":"tcp","prot7":"ssh","protocol":"ssh","ssh":{"banner":"SSH-2.0-OpenSSH_8.9p1 Ubuntu-3"},"@timestamp":"2024-05-01T00:00:00Z"}},` +
				`{"data":{"domain":"example.com","a":["192.0.2.1"]}},` +
				`{"data":{"ip":"192.0.2.21","port":"10443","prot4":"tcp","prot7":"http","protocol":"https","path":"/remote/login","http":{"status_code":200,"status_line":"200 OK","headers":{"server":["xxxxxxxx-xxxxx"],"set_cookie":["a=1","b=2"]},"unknown_headers":[{"key":"X-Frame-Options","value":["SAMEORIGIN"]}],"favicon":{"path":"/favicon.ico","hash":945408572}},"certificate":{"subject_dn":"CN=FortiGate, O=Fortinet","issuer_dn":"CN=FortiGate, O=Fortinet","signature":{"self_signed":true}}}}]}`,
			2, nil, `netlas record without an IP address (domain "example.com")`, func(t *testing.T, r scanResult) {
				if p := r.obs[0].Service.Probes; len(p) != 1 || p[0].Name != "netlas:ssh" || p[0].Banner.Received.Text() != "SSH-2.0-OpenSSH_8.9p1 Ubuntu-3" {
					t.Errorf("ssh = %s", mustJSON(t, r.obs[0]))
				}
				o := r.obs[1]
				p := o.Service.Probes
				if o.Service.Port != 10443 || len(p) != 2 || p[0].Request.Path != "/remote/login" || strings.Join(headerValues(p[0].Response.Headers, "Set-Cookie"), ",") != "a=1,b=2" ||
					headerValues(p[0].Response.Headers, "X-Frame-Options")[0] != "SAMEORIGIN" || !p[0].TLS.SelfSigned || p[0].TLS.Subject.O[0] != "Fortinet" || *p[1].Response.Body.MMH3 != 945408572 {
					t.Errorf("https = %s", mustJSON(t, o))
				}
			}},
		{"odd JSON: non-objects, members of other types, a truncated line",
			`[null,1,{"data":{"ip":"192.0.2.34","port":443,"http":{"status_code":200,"headers":{"server":5,"x_a":["1",2]}},"certificate":{"subject_dn":7}}}]` + "\n" +
				`{"data":{"ip":"192.0.2.35","port":443,"http":"x"}}` + "\n" + `{"data":{"ip":"192.0.2.36",`,
			0, []int{1, 1, 1, 2, 3}, "", func(t *testing.T, r scanResult) {}},
		{"netlas download lines; bad records named by field",
			`{"data":{"ip":"192.0.2.30","port":80,"http":{"status_code":"x"}}}` + "\n" +
				`{"data":{"ip":"192.0.2.31","port":443,"certificate":{"serial_number":"12ab"}}}` + "\n" +
				`{"data":{"ip":"not-an-ip","port":80}}` + "\n" +
				`{"data":{"ip":"192.0.2.32"}}` + "\n" +
				`{"detail":"Request was throttled. Expected available in 1 second."}` + "\n" +
				`{"data":{"ip":"192.0.2.33","port":21,"prot7":"ftp","ftp":{"banner":"220 FTP ready\r\n"}}}`,
			1, []int{1, 2, 3, 4, 5}, "", func(t *testing.T, r scanResult) {
				for i, want := range []string{"http.status_code: not a number", `certificate.serial_number: not a decimal number: "12ab"`, `ip: not an IP address: "not-an-ip"`, "port: missing", "netlas answer without records"} {
					if !strings.Contains(r.bad[i].Error(), want) {
						t.Errorf("bad[%d] = %v, want %q", i, r.bad[i], want)
					}
				}
				if r.obs[0].Service.Probes[0].Name != "netlas:ftp" {
					t.Errorf("ftp = %s", mustJSON(t, r.obs[0]))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "netlas", tt.in)
			if len(r.obs) != tt.obs || !slices.Equal(badLines(r.bad), tt.bad) || strings.Join(r.skipped, ",") != tt.skipped {
				t.Fatalf("obs %s bad %v skipped %v", mustJSON(t, r.obs), r.bad, r.skipped)
			}
			tt.check(t, r)
		})
	}
}

func TestFOFA_RealSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file    string
		obs     int
		bad     []int
		skipped string
		check   func(t *testing.T, r scanResult)
	}{
		{"fofa-api-gofofa.jsonl", 7, []int{3}, "", func(t *testing.T, r scanResult) {
			// Answer 1 (fields host,ip,port,protocol, read by content).
			for i, want := range []string{"1.1.1.1 socks5", "2.2.2.2 redis", "3.3.3.3 https"} {
				o := r.obs[i]
				if got := o.IP + " " + o.Service.Detected.Service; got != want || o.Service.Port != 1080 || o.Service.Detected.By != "fofa" {
					t.Errorf("answer 1 row %d = %s", i, mustJSON(t, o))
				}
			}
			// Answer 2 (its "fields" link,ip,port,domain,title,fid): the
			// link's host and the domain as host names, the title.
			o := r.obs[6]
			if o.IP != "117.50.23.106" || o.Service.Port != 443 || strings.Join(o.Hostnames, ",") != "huashunxinan.net,fwtn2k7oigaiyla.huashunxinan.net" ||
				o.Service.Probes[0].Response.Title != "华顺信安-网络空间测绘的先行者" || o.Service.Probes[0].Request.Path != "/" {
				t.Errorf("answer 2 row 4 = %s", mustJSON(t, o))
			}
			if r.obs[3].Service.Probes[0].Response.Title != "301 Moved Permanently" {
				t.Errorf("answer 2 row 1 = %s", mustJSON(t, r.obs[3]))
			}
			// Answer 3: the API's error.
			if !strings.Contains(r.bad[0].Error(), "fofa answer: error: [-700] Account Invalid") {
				t.Errorf("bad = %v", r.bad)
			}
		}},
		{"fofa-gofofa-guide.jsonl", 8, nil, "", func(t *testing.T, r scanResult) {
			if o := r.obs[0]; o.IP != "39.101.36.243" || o.Service.Port != 6379 || len(o.Service.Probes) != 0 || o.Service.Detected != nil {
				t.Errorf("line 1 = %s", mustJSON(t, o))
			}
			// fofa random -f host,ip,port,lastupdatetime,title,header,body:
			// the header as the HTTP answer, lastupdatetime as the time.
			o := r.obs[4]
			p := o.Service.Probes
			if o.IP != "95.22.200.127" || o.Service.Port != 7547 || o.ObservedAt != "2024-08-14T13:00:00Z" || len(p) != 1 || p[0].Response.Status != 401 ||
				p[0].Response.Reason != "Unauthorized" || !strings.HasPrefix(headerValues(p[0].Response.Headers, "Www-Authenticate")[0], `Digest realm="IgdAuthentication"`) ||
				headerValues(p[0].Response.Headers, "Content-Length")[0] != "0" || p[0].Response.Body != nil {
				t.Errorf("line 5 = %s", mustJSON(t, o))
			}
			if o := r.obs[7]; o.IP != "198.144.179.122" || o.Service.Port != 80 {
				t.Errorf("line 8 = %s", mustJSON(t, o))
			}
		}},
		{"fofa-gofofa-guide.csv", 4, nil, "", func(t *testing.T, r scanResult) {
			if o := r.obs[0]; o.IP != "168.119.197.62" || o.Service.Port != 6379 || o.ObservedAt != "2024-08-23T12:00:00Z" || o.Service.Detected.Service != "redis" || len(o.Hostnames) != 0 {
				t.Errorf("row 1 = %s", mustJSON(t, o))
			}
			if o := r.obs[2]; o.IP != "112.126.87.29" || o.Service.Detected != nil {
				t.Errorf("row 3 (protocol unknown) = %s", mustJSON(t, o))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "fofa", readFile(t, tt.file))
			if len(r.obs) != tt.obs || !slices.Equal(badLines(r.bad), tt.bad) || strings.Join(r.skipped, ",") != tt.skipped {
				t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
			}
			tt.check(t, r)
		})
	}
}

func TestFOFA_Shapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		obs      int
		bad      []int
		skipped  string
		check    func(t *testing.T, r scanResult)
	}{
		{"API answer with its fields: header, body, certs_*, banner, cert, product, AS claim, favicon; a host-only row skipped",
			`{"error":false,"size":3,"page":1,"mode":"extended","query":"app=\"FORTINET-FortiGate\"","fields":"link,ip,port,protocol,base_protocol,title,header,body,banner,cert,certs_subject_cn,certs_subject_org,certs_issuer_cn,certs_domains,jarm,product,version,server,os,as_number,as_organization,icon_hash,lastupdatetime","results":[` +
				`["https://198.51.100.9:10443/remote/login","198.51.100.9","10443","https","tcp","Please Login","HTTP/1.1 200 OK\r\nServer: xxxxxxxx-xxxxx\r\nSet-Cookie: SVPNCOOKIE=; path=/\r\n","<html>/remote/login</html>","","Version:  v3\nSubject: C=US, O=Fortinet, OU=FortiGate, CN=FGT60E\n","FGT60E","Fortinet","FGT60E","a.example,b.example","07d14d16d21d21d07c42d41d00041d24a458a375eef0c576d23a7bab9a9fb1","FORTINET-FortiGate","7.0.12","xxxxxxxx-xxxxx","FortiOS","64500","Example Net","945408572","2024-03-01 10:00:00"],` +
				`["","198.51.100.10","22","ssh","tcp","","","","SSH-2.0-OpenSSH_8.4p1\r\n","","","","","","","OpenSSH","8.4p1","","","","","",""],` +
				`["https://www.example.com","","443","https","tcp","","","","","","","","","","","","","","","","","",""]]}`,
			2, nil, `fofa record without an IP address (host "https://www.example.com")`, func(t *testing.T, r scanResult) {
				o := r.obs[0]
				p := o.Service.Probes
				if o.Service.Port != 10443 || o.ObservedAt != "2024-03-01T10:00:00Z" || len(p) != 3 || p[0].Request.Path != "/remote/login" || p[0].Response.Status != 200 ||
					p[0].Response.Title != "Please Login" || p[0].Response.Body.Text() != "<html>/remote/login</html>" || headerValues(p[0].Response.Headers, "Server")[0] != "xxxxxxxx-xxxxx" {
					t.Fatalf("https = %s", mustJSON(t, o))
				}
				if x := p[0].TLS; x.Subject.CN != "FGT60E" || x.Subject.O[0] != "Fortinet" || x.Issuer.CN != "FGT60E" || strings.Join(x.SANs, ",") != "a.example,b.example" ||
					x.JARM != "07d14d16d21d21d07c42d41d00041d24a458a375eef0c576d23a7bab9a9fb1" {
					t.Errorf("tls = %s", mustJSON(t, x))
				}
				if p[1].Name != "fofa:cert" || !strings.Contains(p[1].Banner.Received.Text(), "OU=FortiGate") || *p[2].Response.Body.MMH3 != 945408572 {
					t.Errorf("cert, favicon = %s", mustJSON(t, p[1:]))
				}
				if d := o.Service.Detected; d.Service != "https" || d.Product != "FORTINET-FortiGate" || d.Version != "7.0.12" || d.Info != "server: xxxxxxxx-xxxxx; os: FortiOS" {
					t.Errorf("detected = %+v", d)
				}
				if c := o.Claims; len(c) != 1 || c[0].OrgName != "Example Net" || c[0].ASN != 64500 || c[0].SignalSource != "fofa" {
					t.Errorf("claims = %+v", c)
				}
				if p := r.obs[1].Service.Probes; len(p) != 1 || p[0].Name != "fofa:ssh" || p[0].Banner.Received.Text() != "SSH-2.0-OpenSSH_8.4p1\r\n" {
					t.Errorf("ssh = %s", mustJSON(t, r.obs[1]))
				}
			}},
		{"CSV without a header (GoFOFA's default ip,port output)", "69.80.101.32,80\n69.80.101.68,80\n", 2, nil, "", func(t *testing.T, r scanResult) {
			if o := r.obs[1]; o.IP != "69.80.101.68" || o.Service.Port != 80 {
				t.Errorf("row 2 = %s", mustJSON(t, o))
			}
		}},
		{"named JSON line: cert's text read into the TLS probe when no certs_* field names the certificate",
			`{"ip":"192.0.2.60","port":"443","protocol":"https","cert":"Version:  v3\nSubject: C=US, O=Palo Alto Networks, CN=GP\nIssuer: C=US, O=Palo Alto Networks, CN=GP CA\n","isActive":"true"}`,
			1, nil, "", func(t *testing.T, r scanResult) {
				p := r.obs[0].Service.Probes
				if len(p) != 2 || p[0].Name != "fofa:cert" || p[1].TLS.Subject.O[0] != "Palo Alto Networks" || p[1].TLS.Subject.CN != "GP" || p[1].TLS.Issuer.CN != "GP CA" {
					t.Errorf("probes = %s", mustJSON(t, p))
				}
			}},
		{"one-field answer (fields=host, its rows strings)",
			`{"error":false,"size":3,"page":1,"mode":"extended","query":"port=\"50000\"","results":["118.190.75.134:50000",":0","34.83.32.116"]}`,
			1, []int{1}, `fofa record without an IP address (host ":0")`, func(t *testing.T, r scanResult) {
				if o := r.obs[0]; o.IP != "118.190.75.134" || o.Service.Port != 50000 || !strings.Contains(r.bad[0].Error(), "port: missing") {
					t.Errorf("obs %s bad %v", mustJSON(t, o), r.bad)
				}
			}},
		{"CSV with a header: quoted header fields keep their lines; wrong widths and bad values named",
			"ip,port,protocol,header,status_code,title,domain,base_protocol\r\n" +
				"192.0.2.40,8443,https,\"HTTP/1.1 302 Found\r\nLocation: /remote/login\r\n\",,,vpn.example.com,tcp\r\n" +
				"192.0.2.41,53,dns,,,,,udp\r\n" +
				"192.0.2.42,80\r\n" +
				"192.0.2.43,80,http,,abc,,,tcp\r\n" +
				"192.0.2.44,0,http,,,,,tcp\r\n" +
				"192.0.2.450,80,http,,,,,tcp\r\n",
			2, []int{6, 7, 8, 9}, "", func(t *testing.T, r scanResult) {
				o := r.obs[0]
				if p := o.Service.Probes[0]; p.Response.Status != 302 || headerValues(p.Response.Headers, "Location")[0] != "/remote/login" || strings.Join(o.Hostnames, ",") != "vpn.example.com" {
					t.Errorf("row 1 = %s", mustJSON(t, o))
				}
				if r.obs[1].Service.Transport != "udp" {
					t.Errorf("row 2 = %s", mustJSON(t, r.obs[1]))
				}
				for i, want := range []string{"csv: 2 values for 8 columns", `status_code: not an HTTP status: "abc"`, `port: must be 1..65535, got "0"`, `ip: not an IP address: "192.0.2.450"`} {
					if !strings.Contains(r.bad[i].Error(), want) {
						t.Errorf("bad[%d] = %v, want %q", i, r.bad[i], want)
					}
				}
			}},
		{"odd JSON: members of other types, arrays of non-objects, truncated documents",
			`{"ip":"192.0.2.72","port":80,"title":5,"header":{"a":1}}` + "\n" + `[1,"x",null]` + "\n" + `{"error":false,"results":[[1,2],[{"a":1}],null]}` + "\n" + `{"title":"no address"}` + "\n" + `{"ip":"192.0.2.73","port":`,
			1, []int{2, 2, 2, 3, 4, 5}, "", func(t *testing.T, r scanResult) {
				if p := r.obs[0].Service.Probes; len(p) != 1 || p[0].Response.Title != "5" || !strings.Contains(r.bad[2].Error(), "json: not an object") ||
					!strings.Contains(r.bad[4].Error(), `not a FOFA record: want "ip", "host" or "link"`) {
					t.Errorf("obs %s bad %v", mustJSON(t, r.obs), r.bad)
				}
			}},
		{"answers the adapter cannot name the columns of, or holding bad values, reported by field",
			`{"error":false,"results":[["117.50.23.106","h8huumr2zdmwgy5.huashunxinan.net","301"]]}` + "\n" +
				`{"error":false,"fields":"ip,port,icon_hash","results":[["192.0.2.50","80","x"]]}` + "\n" +
				`{"error":false,"fields":"ip,port","results":[["192.0.2.51","80","extra"]]}` + "\n" +
				`{"error":false,"fields":"ip,,port","results":[]}` + "\n" +
				`{"error":false,"results":"test"}` + "\n" +
				`{"error":false,"fields":["ip","port","jarm"],"results":[["192.0.2.52","443","zz"],["192.0.2.53","443",""]]}`,
			1, []int{1, 2, 3, 4, 5, 6}, "", func(t *testing.T, r scanResult) {
				for i, want := range []string{`rows of 3 values and no "fields": add the request's fields`, `icon_hash: not an mmh3 hash: "x"`, "results[0]: 3 values for 2 fields (ip,port)",
					`"fields": field 2 has no name`, "results: not a list", `jarm: not 62 hex digits: "zz"`} {
					if !strings.Contains(r.bad[i].Error(), want) {
						t.Errorf("bad[%d] = %v, want %q", i, r.bad[i], want)
					}
				}
				if r.obs[0].IP != "192.0.2.53" {
					t.Errorf("obs = %s", mustJSON(t, r.obs))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "fofa", tt.in)
			if len(r.obs) != tt.obs || !slices.Equal(badLines(r.bad), tt.bad) || strings.Join(r.skipped, ",") != tt.skipped {
				t.Fatalf("obs %s bad %v skipped %v", mustJSON(t, r.obs), r.bad, r.skipped)
			}
			tt.check(t, r)
		})
	}
}
