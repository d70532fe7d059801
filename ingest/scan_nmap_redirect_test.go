package ingest

import (
	"strings"
	"testing"
)

// TestNmapXML_TitleRedirect checks that the redirect http-title met on
// GET / is kept as the answer's Location: from its redirect_url element
// (nmap's own @xmloutput example, nmap-scripts.xml) and from the output
// line alone ("Did not follow redirect to URL", as a public write-up's
// normal output of a pfSense host prints it; "Requested resource was URL").
func TestNmapXML_TitleRedirect(t *testing.T) {
	t.Parallel()
	r := runScan(t, "nmap-xml", readFile(t, "nmap-scripts.xml"))
	if len(r.obs) != 3 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	h := r.obs[2].Service.Probes[0]
	if got := strings.Join(headerValues(h.Response.Headers, "Location"), "|"); got != "http://en.wikipedia.org/wiki/Main_Page" ||
		h.Response.Title != "Wikipedia, the free encyclopedia" {
		t.Errorf("redirect_url: Location %q, title %q", got, h.Response.Title)
	}
	if got := headerValues(r.obs[1].Service.Probes[0].Response.Headers, "Location"); len(got) != 0 {
		t.Errorf("a page without redirect got Location %q", got)
	}

	port := func(script string) string {
		return `<port protocol="tcp" portid="80"><state state="open" reason="syn-ack" reason_ttl="63"/>` +
			`<service name="http" product="lighttpd" version="1.4.35" method="probed" conf="10"><cpe>cpe:/a:lighttpd:lighttpd:1.4.35</cpe></service>` +
			script + `<script id="http-server-header" output="lighttpd/1.4.35"><elem>lighttpd/1.4.35</elem></script></port>`
	}
	doc := func(ports string) string {
		return (`<?xml version="1.0"?><nmaprun scanner="nmap" start="1696080973" version="7.94" xmloutputversion="1.05">` +
			`<host starttime="1696080973" endtime="1696080994"><status state="up" reason="syn-ack"/><address addr="192.0.2.61" addrtype="ipv4"/><ports>` +
			ports + `</ports></host></nmaprun>`)
	}
	tests := []struct {
		name, script, want, title string
	}{
		{"output line, not followed", `<script id="http-title" output="Did not follow redirect to https://sense.htb/"/>`, "https://sense.htb/", ""},
		{"element, not followed", `<script id="http-title" output="Did not follow redirect to https://sense.htb/"><elem key="redirect_url">https://sense.htb/</elem></script>`, "https://sense.htb/", ""},
		{"output line, followed", `<script id="http-title" output="Login&#xa;Requested resource was /index.php?login"/>`, "/index.php?login", "Login"},
		{"no redirect", `<script id="http-title" output="501"><elem key="title">501</elem></script>`, "", "501"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runScan(t, "nmap-xml", doc(port(tt.script)))
			if len(r.obs) != 1 || len(r.bad) != 0 {
				t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
			}
			p := r.obs[0].Service.Probes[0]
			got := strings.Join(headerValues(p.Response.Headers, "Location"), "|")
			if got != tt.want {
				t.Errorf("Location = %q, want %q", got, tt.want)
			}
			if p.Response.Title != tt.title {
				t.Errorf("title = %q, want %q", p.Response.Title, tt.title)
			}
			if strings.Join(headerValues(p.Response.Headers, "Server"), "|") != "lighttpd/1.4.35" {
				t.Errorf("Server = %q", headerValues(p.Response.Headers, "Server"))
			}
		})
	}
}
