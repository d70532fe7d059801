package ingest

import (
	"slices"
	"strings"
	"testing"
)

// TestMasscan_XMLAndGrepable reads masscan's -oX and -oG output of a real
// scan (ingest/testdata/SOURCES.md) through the masscan format and
// through nmap-xml and nmap-grep, which hand masscan's files to it.
func TestMasscan_XMLAndGrepable(t *testing.T) {
	t.Parallel()
	for _, ad := range []struct {
		name string
		ad   Adapter
	}{{"masscan", Masscan}, {"nmap-xml", NmapXML}} {
		t.Run("-oX via "+ad.name, func(t *testing.T) {
			t.Parallel()
			r := runAdapter(t, ad.ad, readFile(t, "masscan-sec560.xml"), Options{})
			if len(r.bad) != 0 || len(r.obs) != 5 {
				t.Fatalf("%d observations, bad %v", len(r.obs), r.bad)
			}
			var keys []string
			for _, o := range r.obs {
				keys = append(keys, o.IP+":"+itoa(o.Service.Port))
			}
			if want := []string{"10.130.10.11:80", "10.130.10.6:80", "10.130.10.11:80", "10.130.10.21:3389", "10.130.10.6:80"}; !slices.Equal(keys, want) {
				t.Errorf("services %v, want %v", keys, want)
			}
			o := r.obs[2] // the three banners of 10.130.10.11:80
			if o.Source != "masscan" || o.ObservedAt != "2024-09-24T04:18:43Z" {
				t.Errorf("source %q at %s", o.Source, o.ObservedAt)
			}
			var resp *Response
			var server string
			for _, p := range o.Service.Probes {
				if p.Response != nil && p.Response.Status == 200 {
					resp = p.Response
				}
				if p.Name == "http.server" && p.Banner != nil {
					server = string(p.Banner.Received.Data)
				}
			}
			if resp == nil || resp.Title != "Welcome to nginx!" || server != "nginx/1.24.0 (Ubuntu)" {
				t.Fatalf("probes %+v", o.Service.Probes)
			}
			etag := ""
			for _, h := range resp.Headers {
				if h.Name == "ETag" {
					etag = h.Value
				}
			}
			if etag != `"66e224dd-267"` {
				t.Errorf("ETag %q (the \\x22 escapes read back)", etag)
			}
		})
	}
	for _, ad := range []struct {
		name string
		ad   Adapter
	}{{"masscan", Masscan}, {"nmap-grep", NmapGrep}} {
		t.Run("-oG via "+ad.name, func(t *testing.T) {
			t.Parallel()
			r := runAdapter(t, ad.ad, readFile(t, "masscan-sec560.gnmap"), Options{})
			if len(r.bad) != 0 || len(r.obs) != 6 {
				t.Fatalf("%d observations, bad %v", len(r.obs), r.bad)
			}
			if o := r.obs[0]; o.IP != "10.130.10.44" || o.Service.Port != 139 || o.ObservedAt != "2024-09-24T04:23:54Z" {
				t.Errorf("first %+v at %s", o.Service, o.ObservedAt)
			}
		})
	}
	t.Run("-oG banner lines, as masscan's out-grepable.c writes them", func(t *testing.T) {
		in := "# Masscan 1.3.2 scan initiated Tue Sep 24 04:18:39 2024\n" +
			"Timestamp: 1727151519\tHost: 192.0.2.11 ()\tPorts: 443/open/tcp//https//\n" +
			"Host: 192.0.2.11 ()\tPort: 443\tService: http\tBanner: HTTP/1.1 302 Found\\x0d\\x0aLocation: /remote/login?lang=en\\x0d\\x0a\\x0d\\x0a\n" +
			"Host: 192.0.2.12 ()\tPort: 161\tService: snmp\tBanner: sysDescr:FortiGate-60F\n" +
			"Host: 192.0.2.13 ()\tPort: x\tService: http\tBanner: y\n"
		r := runAdapter(t, NmapGrep, in, Options{})
		if len(r.obs) != 2 || !slices.Equal(badLines(r.bad), []int{5}) {
			t.Fatalf("%d observations, bad %v", len(r.obs), r.bad)
		}
		if p := r.obs[0].Service.Probes; len(p) != 1 || p[0].Response == nil || p[0].Response.Status != 302 {
			t.Errorf("probes %+v", p)
		}
		if s := r.obs[1].Service; s.Transport != "udp" || !strings.Contains(string(s.Probes[0].Banner.Received.Data), "FortiGate-60F") {
			t.Errorf("snmp %+v", s)
		}
	})
}
