package ingest

import (
	"slices"
	"strings"
	"testing"
)

// TestNexpose_Reports reads DefectDojo's real Nexpose XML exports
// (ingest/testdata/SOURCES.md): banners, certificates and fingerprints
// of each open endpoint.
func TestNexpose_Reports(t *testing.T) {
	t.Parallel()
	find := func(obs []Observation, ip string, port int, transport string) *Observation {
		for i := range obs {
			if obs[i].IP == ip && obs[i].Service.Port == port && obs[i].Service.Transport == transport {
				return &obs[i]
			}
		}
		t.Fatalf("%s %d/%s not read", ip, port, transport)
		return nil
	}
	t.Run("version 1.0, banners and a certificate", func(t *testing.T) {
		t.Parallel()
		r := runAdapter(t, Nexpose, readFile(t, "nexpose-dd-many-vulns.xml"), Options{})
		if len(r.bad) != 0 || len(r.obs) != 19 {
			t.Fatalf("%d observations, bad %v", len(r.obs), r.bad)
		}
		ftp := find(r.obs, "192.168.1.1", 21, "tcp")
		if ftp.ObservedAt != "2013-11-27T11:55:13Z" || ftp.Source != "nexpose" || string(ftp.Service.Probes[0].Banner.Received.Data) != "220 Welcome to TBS FTP Server." {
			t.Errorf("ftp %s %+v", ftp.ObservedAt, ftp.Service.Probes)
		}
		ssh := find(r.obs, "192.168.1.1", 22, "tcp")
		if d := ssh.Service.Detected; string(ssh.Service.Probes[0].Banner.Received.Data) != "SSH-2.0-dropbear_0.51" || d.Product != "Dropbear" || d.Version != "0.51" || !strings.Contains(d.Info, "os: Linux Linux 2.6.9") {
			t.Errorf("ssh %+v %+v", ssh.Service.Probes, d)
		}
		web := find(r.obs, "192.168.1.1", 80, "tcp")
		if h := web.Service.Probes[0].Response.Headers; len(h) != 1 || h[0].Name != "Server" || h[0].Value != "mini_httpd/1.19 19dec2003" {
			t.Errorf("http %+v", h)
		}
		tls := find(r.obs, "192.168.1.33", 443, "tcp").Service.Probes[0].TLS
		if tls == nil || tls.Subject.CN != "www.dlink.com.tw" || !slices.Contains(tls.Subject.O, "D-Link Taiwan") || tls.Serial != "9d60889cb54acca6" ||
			tls.NotAfter != "2023-03-11T10:43:06Z" || !tls.SelfSigned {
			t.Errorf("tls %+v", tls)
		}
		find(r.obs, "192.168.1.33", 123, "udp")
	})
	t.Run("version 2.0, the service fingerprint", func(t *testing.T) {
		t.Parallel()
		r := runAdapter(t, Nexpose, readFile(t, "nexpose-dd-dns.xml"), Options{})
		if len(r.bad) != 0 || len(r.obs) != 2 {
			t.Fatalf("%d observations, bad %v", len(r.obs), r.bad)
		}
		d := find(r.obs, "192.168.1.1", 53, "udp").Service.Detected
		if d.By != "nexpose" || d.Service != "dns" || d.Product != "Recursor" || d.Version != "4.3.5" || !strings.Contains(d.Info, "PowerDNS Recursor 4.3.5") {
			t.Errorf("detected %+v", d)
		}
		if at := r.obs[0].ObservedAt; at != "2021-02-28T22:54:29Z" {
			t.Errorf("observed at %s", at)
		}
	})
	t.Run("bad input", func(t *testing.T) {
		t.Parallel()
		for _, tt := range []struct{ in, want string }{
			{`<NeXposeSimpleXML version="1.0"><devices/></NeXposeSimpleXML>`, "Simple XML"},
			{`<nmaprun/>`, "not a Nexpose"},
			{`<NexposeReport version="2.0"><nodes><node address="192.0.2.300"><endpoints/></node></nodes></NexposeReport>`, "not an IP address"},
			{`<NexposeReport version="2.0"><nodes><node address="192.0.2.1"><endpoints><endpoint protocol="tcp" port="0" status="open"/></endpoints></node></nodes></NexposeReport>`, "port"},
			{`<NexposeReport version="2.0"><nodes><node address="192.0.2.1">`, "XML syntax error"},
		} {
			r := runAdapter(t, Nexpose, tt.in, Options{})
			if len(r.obs) != 0 || len(r.bad) != 1 || !strings.Contains(r.bad[0].Error(), tt.want) {
				t.Errorf("%s: obs %d bad %v, want one naming %q", tt.in, len(r.obs), r.bad, tt.want)
			}
		}
	})
}
