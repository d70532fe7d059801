package ingest

import (
	"strings"
	"testing"
)

// TestShodan_HostAnswerAndArray reads the answers of Shodan's host API
// (/shodan/host/{ip}: the banners in its "data" array) and an array of
// banners, both pretty-printed as saved by common-osint-model: before,
// every line of them was "json: unexpected EOF" and nothing was read.
// The certificate serial these files hold is a float that kept 17
// digits ("1.9335859262210987e+37"); the serial comes from the chain's
// certificate instead.
func TestShodan_HostAnswerAndArray(t *testing.T) {
	t.Parallel()
	r := runScan(t, "shodan", readFile(t, "shodan-host-api-com.json"))
	if len(r.obs) != 4 || len(r.bad) != 0 {
		t.Fatalf("host answer: obs %d bad %v", len(r.obs), r.bad)
	}
	type want struct {
		port      int
		at        string
		module    string
		status    int
		banner    string
		hostnames int
	}
	for i, w := range []want{
		{443, "2021-08-16T20:42:40Z", "https", 301, "", 2},
		{80, "2021-08-16T20:42:38Z", "http", 301, "", 2},
		{9418, "2021-08-12T02:10:13Z", "git", 0, "0020ERR \n  Repository not found.", 2},
		{22, "2021-08-03T21:10:29Z", "ssh", 0, "SSH-2.0-babeld-968490c5\nKey type: ssh-rsa", 2},
	} {
		o := r.obs[i]
		s := o.Service
		if o.IP != "192.0.2.4" || s.Port != w.port || s.Transport != "tcp" || o.ObservedAt != w.at ||
			s.Detected.Service != w.module || len(o.Hostnames) < w.hostnames || o.Claims[0].OrgName != "GitHub, Inc." || o.Claims[0].ASN != 36459 {
			t.Errorf("obs %d = %s", i, mustJSON(t, o))
			continue
		}
		p := s.Probes[0]
		if w.status != 0 && (p.Response == nil || p.Response.Status != w.status) {
			t.Errorf("obs %d probe = %s", i, mustJSON(t, p))
		}
		if w.banner != "" && (p.Banner == nil || !strings.HasPrefix(p.Banner.Received.Text(), w.banner)) {
			t.Errorf("obs %d banner = %s", i, mustJSON(t, p))
		}
	}
	https := r.obs[0].Service.Probes[0]
	if https.TLS == nil || https.TLS.Serial != "e8bf3770d92d196f0bb61f93c4166be" || https.TLS.Subject.CN != "github.com" ||
		https.TLS.Version != "TLSv1/SSLv3" || https.TLS.Cipher != "ECDHE-ECDSA-AES128-GCM-SHA256" ||
		headerValues(https.Response.Headers, "Location")[0] != "https://github.com/" {
		t.Errorf("https = %s", mustJSON(t, https))
	}

	r = runScan(t, "shodan", readFile(t, "shodan-banners-array-com.json"))
	if len(r.obs) != 2 || len(r.bad) != 0 {
		t.Fatalf("array: obs %d bad %v", len(r.obs), r.bad)
	}
	dns, web := r.obs[0], r.obs[1]
	if dns.IP != "192.0.2.9" || dns.Service.Port != 53 || dns.Service.Transport != "udp" || dns.ObservedAt != "2020-06-06T10:12:43Z" {
		t.Errorf("dns = %s", mustJSON(t, dns))
	}
	p := web.Service.Probes[0]
	if web.Service.Port != 443 || p.Response == nil || p.Response.Status != 404 || p.TLS == nil || p.TLS.Serial != "5eb7ca26a174ea0810c019241e7de06" {
		t.Errorf("https = %s", mustJSON(t, web))
	}
}

// TestShodan_HostAnswerLine: a host answer on one line of a JSON lines
// file is read banner by banner like the pretty-printed one, and the
// lines around it still are; a line that does not parse is reported with
// its number.
func TestShodan_HostAnswerLine(t *testing.T) {
	t.Parallel()
	in := `{"ip_str":"192.0.2.1","port":21,"transport":"tcp","data":"220 ftp ready\r\n"}` + "\n" +
		`{"ip_str":"192.0.2.2","ports":[22,23],"data":[{"ip_str":"192.0.2.2","port":22,"data":"SSH-2.0-x"},{"ip_str":"192.0.2.2","port":23,"data":"login:"}]}` + "\n" +
		`{"ip_str":"192.0.2.3","port":` + "\n" +
		`{"total":1,"matches":[{"ip_str":"192.0.2.5","port":8080,"data":"x"}]}` + "\n"
	r := runScan(t, "shodan", in)
	if len(r.obs) != 4 || len(r.bad) != 1 || r.bad[0].Line != 3 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	for i, w := range []string{"192.0.2.1:21", "192.0.2.2:22", "192.0.2.2:23", "192.0.2.5:8080"} {
		if got := r.obs[i].IP + ":" + itoa(r.obs[i].Service.Port); got != w {
			t.Errorf("obs %d = %s, want %s", i, got, w)
		}
	}
}

// TestShodan_Components: the https banner of a 2020 Shodan export
// (common-osint-model's 140.82.118.4, cut to that element) names the web
// technologies Shodan recognised in http.components ("Bootstrap"); they
// were dropped, they are detected.info's "components: ..." now. The page,
// its title, the favicon and the chain's exact serial (the file's is a
// float) are read as they are.
func TestShodan_Components(t *testing.T) {
	t.Parallel()
	r := runScan(t, "shodan", readFile(t, "shodan-https-components-com.json"))
	if len(r.obs) != 1 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	o := r.obs[0]
	s := o.Service
	if o.IP != "192.0.2.18" || s.Port != 443 || o.ObservedAt != "2020-06-09T09:09:19Z" || s.Detected.Info != "components: Bootstrap" || len(s.Probes) != 2 {
		t.Fatalf("obs = %s", mustJSON(t, o))
	}
	page, fav := s.Probes[0], s.Probes[1]
	if page.Request.Host != "github.com" || page.Response.Status != 200 || page.Response.Title != "The world’s leading software development platform · GitHub" ||
		headerValues(page.Response.Headers, "server")[0] != "GitHub.com" || page.Response.Body.Length != 132048 ||
		page.TLS == nil || page.TLS.Serial != "557c80b282683a17b0a114493296b79" {
		t.Errorf("page = %s", mustJSON(t, page))
	}
	if fav.Request.Path != "/favicon.ico" || fav.Response.Body.MMH3 == nil || *fav.Response.Body.MMH3 != 1848946384 {
		t.Errorf("favicon = %s", mustJSON(t, fav))
	}
}
