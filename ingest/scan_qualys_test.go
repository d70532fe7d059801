package ingest

import (
	"strings"
	"testing"
)

// TestQualys_AssetDataReport reads DefectDojo's real Qualys asset data
// report (ingest/testdata/SOURCES.md): each port's answers as probes.
func TestQualys_AssetDataReport(t *testing.T) {
	t.Parallel()
	r := runAdapter(t, Qualys, readFile(t, "qualys-dd-sample-report.xml"), Options{})
	if len(r.bad) != 0 || len(r.obs) != 13 {
		t.Fatalf("%d observations, bad %v", len(r.obs), r.bad)
	}
	find := func(ip string, port int) *Service {
		for _, o := range r.obs {
			if o.IP == ip && o.Service.Port == port {
				return o.Service
			}
		}
		t.Fatalf("%s:%d not read", ip, port)
		return nil
	}
	probe := func(s *Service, name string) *Probe {
		for i := range s.Probes {
			if s.Probes[i].Name == name {
				return &s.Probes[i]
			}
		}
		t.Fatalf("no %s probe in %+v", name, s.Probes)
		return nil
	}
	if b := probe(find("64.41.200.243", 22), "qualys.38050").Banner; string(b.Received.Data) != "SSH-2.0-OpenSSH_5.3" {
		t.Errorf("ssh banner %q", b.Received.Data)
	}
	web := find("64.41.200.246", 80)
	if h := probe(web, "qualys.86000").Response.Headers; h[0].Name != "Server" || h[0].Value != "Microsoft-IIS/7.5" {
		t.Errorf("server %+v", h)
	}
	ex := probe(web, "qualys.12230")
	if ex.Request.Method != "GET" || ex.Request.Path != "/" || ex.Response.Status != 404 || ex.Response.Reason != "Not Found" {
		t.Errorf("exchange %+v %+v", ex.Request, ex.Response)
	}
	body := probe(find("64.41.200.250", 443), "qualys.12230").Response
	if body.Status != 0 || !strings.HasPrefix(string(body.Body.Data), "<HTML>") {
		t.Errorf("body-only answer %+v", body)
	}
	tls := probe(find("64.41.200.247", 3389), "qualys.86002").TLS
	if tls.Subject.CN != "trn-win7.trn.qualys.com" || tls.Serial != "7f75a0a391b1cb83465cc6cd9ebec9e2" || tls.NotAfter != "2019-10-01T20:25:08Z" || !tls.SelfSigned {
		t.Errorf("certificate %+v %+v", tls, tls.Subject)
	}
	det := probe(find("64.41.200.250", 8080), "qualys:86496").Banner
	if !strings.Contains(string(det.Received.Data), "Apache-Coyote/1.1") {
		t.Errorf("detection %q", det.Received.Data)
	}
	if o := r.obs[0]; o.ObservedAt != "2019-07-31T21:57:48Z" || o.Source != "qualys" || !strings.Contains(o.Service.Detected.Info, "os: ") {
		t.Errorf("first %s %s %+v", o.ObservedAt, o.Source, o.Service.Detected)
	}
	for _, tt := range []struct{ in, want string }{
		{`<SCAN value="x"><IP value="192.0.2.1"/></SCAN>`, "scan result"},
		{`<nmaprun/>`, "not a Qualys"},
		{`<ASSET_DATA_REPORT><HOST_LIST><HOST><IP>192.0.2.300</IP></HOST></HOST_LIST></ASSET_DATA_REPORT>`, "not an IP address"},
		{`<ASSET_DATA_REPORT><HOST_LIST><HOST><IP>192.0.2.1</IP><VULN_INFO_LIST><VULN_INFO><QID>6</QID><PORT>99999</PORT><PROTOCOL>tcp</PROTOCOL></VULN_INFO></VULN_INFO_LIST></HOST></HOST_LIST></ASSET_DATA_REPORT>`, "PORT"},
	} {
		r := runAdapter(t, Qualys, tt.in, Options{})
		if len(r.obs) != 0 || len(r.bad) != 1 || !strings.Contains(r.bad[0].Error(), tt.want) {
			t.Errorf("%s: obs %d bad %v, want one naming %q", tt.in, len(r.obs), r.bad, tt.want)
		}
	}
}

// A host whose results carry no PORT (a Cloud Agent host's package
// findings, as in dradis-qualys's simple_asset.xml fixture, GPL-2.0, cited
// in testdata/fingerprints/README.md Group AR1; written anew here) gives
// no service, and says so instead of vanishing silently.
func TestQualys_HostLevelOnly(t *testing.T) {
	t.Parallel()
	in := `<?xml version="1.0" encoding="UTF-8" ?>
<ASSET_DATA_REPORT><HOST_LIST><HOST><IP network_id="0">192.0.2.7</IP><TRACKING_METHOD>QAGENT</TRACKING_METHOD>
<OPERATING_SYSTEM><![CDATA[Red Hat Enterprise Linux Server 7.9]]></OPERATING_SYSTEM>
<VULN_INFO_LIST><VULN_INFO><QID id="qid_1">1</QID><TYPE>Vuln</TYPE><RESULT format="table"><![CDATA[Package	Installed Version]]></RESULT></VULN_INFO></VULN_INFO_LIST>
</HOST></HOST_LIST></ASSET_DATA_REPORT>`
	r := runScan(t, "qualys", in)
	if len(r.obs) != 0 || len(r.bad) != 0 || len(r.skipped) != 1 || !strings.Contains(r.skipped[0], "host-level results only") {
		t.Errorf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
}
