package ingest

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// vulnCase is one real report read through its adapter: how many
// services and malformed records, a reason counted as skipped, and what
// the services hold (by "ip port/transport").
type vulnCase struct {
	file     string
	services int
	bad      int
	badText  string // in the first malformed record's error
	skipped  string
	check    func(t *testing.T, s map[string]Observation)
}

func runVulnCases(t *testing.T, ad Adapter, cases []vulnCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			skips := map[string]int{}
			r := runAdapter(t, ad, readFile(t, tc.file), Options{Skipped: func(_ int, why string) { skips[why]++ }})
			if len(r.obs) != tc.services || len(r.bad) != tc.bad {
				t.Fatalf("got %d services, %d bad (%v); want %d, %d", len(r.obs), len(r.bad), r.bad, tc.services, tc.bad)
			}
			if tc.badText != "" && !strings.Contains(r.bad[0].Error(), tc.badText) {
				t.Errorf("error %q, want it to say %q", r.bad[0].Error(), tc.badText)
			}
			if tc.skipped != "" && skips[tc.skipped] == 0 {
				t.Errorf("skipped %v, want %q counted", skips, tc.skipped)
			}
			by := map[string]Observation{}
			for _, o := range r.obs {
				if o.Type != TypeService || o.Service == nil {
					t.Fatalf("not a service: %+v", o)
				}
				by[o.IP+" "+strconv.Itoa(o.Service.Port)+"/"+o.Service.Transport] = o
			}
			if tc.check != nil {
				tc.check(t, by)
			}
		})
	}
}

// get is the service at key; the test fails when there is none.
func get(t *testing.T, s map[string]Observation, key string) Observation {
	t.Helper()
	o, ok := s[key]
	if !ok {
		keys := make([]string, 0, len(s))
		for k := range s {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		t.Fatalf("no service %s; have %v", key, keys)
	}
	return o
}

// probe is the service's probe named name.
func probe(t *testing.T, o Observation, name string) Probe {
	t.Helper()
	for _, p := range o.Service.Probes {
		if p.Name == name {
			return p
		}
	}
	var names []string
	for _, p := range o.Service.Probes {
		names = append(names, p.Name)
	}
	t.Fatalf("%s %d: no probe %s; have %v", o.IP, o.Service.Port, name, names)
	return Probe{}
}

func header(p Probe, name string) string {
	if p.Response == nil {
		return ""
	}
	for _, h := range p.Response.Headers {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

func wantEq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestNessus_RealSamples(t *testing.T) {
	t.Parallel()
	runVulnCases(t, Nessus, []vulnCase{
		// DefectDojo's fixtures (Nessus 5.2, 2013): a Cisco PIX by OS
		// identification, with its CPE only in plugin 45590's output
		{file: "nessus-dd-many-vuln.xml", services: 2, skipped: "nessus: host-level item (port 0)", check: func(t *testing.T, s map[string]Observation) {
			o := get(t, s, "12.233.108.201 443/tcp")
			wantEq(t, "observed_at", o.ObservedAt, "2013-06-25T10:39:42Z")
			wantEq(t, "hostnames", strings.Join(o.Hostnames, ","), "preprod.boardvantage.net")
			d := o.Service.Detected
			wantEq(t, "detected", d.By+" "+d.Service+" "+d.Info, "nessus https os: CISCO PIX 7.0")
			wantEq(t, "cpe", strings.Join(d.CPE, ","), "cpe:/o:cisco:pix_firewall:7.0")
			wantEq(t, "probes", len(o.Service.Probes), 0) // only the SYN scanner saw it
			wantEq(t, "264", get(t, s, "12.233.108.201 264/tcp").Service.Detected.Service, "fw1-topology-download")
		}},
		{file: "nessus-dd-issue-6992.nessus", services: 1, check: func(t *testing.T, s map[string]Observation) {
			o := get(t, s, "44.228.249.3 80/tcp")
			wantEq(t, "observed_at", o.ObservedAt, "2022-03-23T14:07:52Z") // HOST_END_TIMESTAMP 1648044472
			wantEq(t, "hostname", o.Hostnames[0], "testphp.vulnweb.com")
			wantEq(t, "os", o.Service.Detected.Info, "os: Linux Kernel 2.6")
			if !slices.Contains(o.Service.Detected.CPE, "cpe:/o:linux:linux_kernel") {
				t.Errorf("cpe %v, want the host's OS CPE", o.Service.Detected.CPE)
			}
		}},
		{file: "nessus-dd-cvssv3.nessus", services: 1, skipped: "nessus: finding not kept (no product evidence)", check: func(t *testing.T, s map[string]Observation) {
			o := get(t, s, "44.228.249.3 80/tcp")
			hp := probe(t, o, "nessus:http")
			wantEq(t, "status", hp.Response.Status, 200)
			wantEq(t, "Server", header(hp, "Server"), "nginx/1.19.0")
			wantEq(t, "X-Powered-By", header(hp, "X-Powered-By"), "PHP/5.6.40-38+ubuntu20.04.1+deb.sury.org+1")
			if len(o.Service.Probes) > 1+vulnMaxFindings+4 {
				t.Errorf("%d probes: the findings are kept as probes", len(o.Service.Probes))
			}
		}},
		{file: "nessus-dd-cwe.nessus", services: 1, check: func(t *testing.T, s map[string]Observation) {
			wantEq(t, "service", get(t, s, "44.228.249.3 80/tcp").Service.Detected.Service, "www")
		}},
		// seven Windows hosts (two kept in the copy), Nessus 5 (2013)
		{file: "nessus-dd-v-unknown.xml", services: 25, check: func(t *testing.T, s map[string]Observation) {
			o := get(t, s, "10.31.112.29 445/tcp")
			wantEq(t, "observed_at", o.ObservedAt, "2013-07-01T11:40:48Z") // HOST_END text, no timestamp tag
			wantEq(t, "os", o.Service.Detected.Info, "os: Microsoft Windows Server 2008 R2 Standard Service Pack 1")
			b := probe(t, o, "nessus:10785").Banner.Received.Data
			if !strings.Contains(b, "The remote Operating System is : Windows Server 2008 R2 Standard 7601 Service Pack 1") {
				t.Errorf("10785 banner %q", b)
			}
			wantEq(t, "IIS", header(probe(t, get(t, s, "10.31.112.29 80/tcp"), "nessus:http"), "Server"), "Microsoft-IIS/7.5")
		}},
		// Nessus WAS exports: a URL for a host, no address
		{file: "nessus-dd-was-many-vuln.xml", skipped: "nessus: host without an IP address (host-ip)"},
		{file: "nessus-dd-was-one-vuln.xml", skipped: "nessus: host without an IP address (host-ip)"},
		{file: "nessus-dd-was-no-vuln.xml", skipped: "nessus: host without an IP address (host-ip)"},
		// scans2any's GOAD lab export (Nessus 10, 2025), one host kept
		{file: "nessus-goad-light.nessus", services: 20, check: func(t *testing.T, s map[string]Observation) {
			o := get(t, s, "192.168.56.22 80/tcp")
			wantEq(t, "observed_at", o.ObservedAt, "2025-03-10T14:29:24Z") // HOST_END_TIMESTAMP, not the local-time text
			hp := probe(t, o, "nessus:http")
			wantEq(t, "status", hp.Response.Status, 200)
			wantEq(t, "Server", header(hp, "Server"), "Microsoft-IIS/10.0")
			// the host's cpe-1 tag, named by the port's Server header
			wantEq(t, "detected", o.Service.Detected.Product+" "+o.Service.Detected.Version+" "+strings.Join(o.Service.Detected.CPE, ","),
				"Microsoft IIS 10.0 cpe:/a:microsoft:iis:10.0,cpe:/o:microsoft:windows")
			if hp.Response.Body == nil || !strings.Contains(hp.Response.Body.Data, `<a href="/Default.aspx">`) {
				t.Errorf("body %+v", hp.Response.Body)
			}
			tl := probe(t, get(t, s, "192.168.56.22 3389/tcp"), "nessus:10863").TLS
			wantEq(t, "subject", tl.Subject.CN, "castelblack.north.sevenkingdoms.local")
			wantEq(t, "sha256", tl.SHA256, "82918ab051f7ae764bcd5a378f951b5f1ff582873826734fca4e931d5f896a54")
			tl = probe(t, get(t, s, "192.168.56.22 1433/tcp"), "nessus:10863").TLS
			wantEq(t, "serial", tl.Serial, "42535244843988884c21a5562a4b3a5f")
			wantEq(t, "not_after", tl.NotAfter, "2055-03-10T12:45:10Z")
			for _, p := range get(t, s, "192.168.56.22 1433/tcp").Service.Probes {
				if p.Banner != nil && strings.Contains(p.Banner.Received.Data, "Public Key") {
					t.Errorf("probe %s keeps a certificate's text as a banner", p.Name)
				}
			}
			b := probe(t, get(t, s, "192.168.56.22 445/tcp"), "nessus:10785").Banner.Received.Data
			if !strings.Contains(b, "Product Version: 10.0.17763") {
				t.Errorf("10785 banner %q", b)
			}
		}},
		// scans2any's IPv6 export of a Google front end
		{file: "nessus-google-ipv6.nessus", services: 3, check: func(t *testing.T, s map[string]Observation) {
			o := get(t, s, "2a00:1450:4001:828::200e 443/tcp")
			wantEq(t, "hostname", strings.Join(o.Hostnames, ","), "fra24s05-in-x0e.1e100.net")
			wantEq(t, "Server", header(probe(t, o, "nessus:http"), "Server"), "gws")
			tl := probe(t, o, "nessus:10863").TLS
			wantEq(t, "issuer", tl.Issuer.CN+" "+strings.Join(tl.Issuer.O, ""), "WR2 Google Trust Services")
			if !slices.Contains(tl.SANs, "*.google.com") {
				t.Errorf("sans %v", tl.SANs)
			}
			wantEq(t, "quic", probe(t, get(t, s, "2a00:1450:4001:828::200e 443/udp"), "nessus:206982").Banner.Received.Data, "A QUIC server is running on this port.")
		}},
		// python-libnessus's fixture: an AIX host with two SSH servers
		{file: "nessus-libnessus-local3.nessus", services: 16, check: func(t *testing.T, s map[string]Observation) {
			for port, v := range map[string]string{"22": "5.6", "2222": "5.3"} {
				o := get(t, s, "192.168.2.101 "+port+"/tcp")
				wantEq(t, port+" banner", probe(t, o, "nessus:10267").Banner.Received.Data, "SSH-2.0-OpenSSH_"+v+"\r\n")
				d := o.Service.Detected
				wantEq(t, port+" detected", d.Product+" "+d.Version, "OpenBSD OpenSSH "+v+" "+v)
				if !slices.Contains(d.CPE, "cpe:/a:openbsd:openssh:"+v) {
					t.Errorf("%s cpe %v", port, d.CPE)
				}
				if f := probe(t, o, "nessus:53841").Banner.Received.Data; !strings.Contains(f, "Installed version : "+v) {
					t.Errorf("%s finding %q", port, f)
				}
			}
			// plugin 10107's output goes on, after a blank line, with its
			// advice ("You can set the directive 'ServerTokens Prod' ..."):
			// the Server header is the first paragraph alone
			var servers []string
			for _, p := range get(t, s, "192.168.2.100 80/tcp").Service.Probes {
				if p.Response != nil {
					servers = append(servers, headerValues(p.Response.Headers, "Server")...)
				}
			}
			if !slices.Contains(servers, "Apache/2.2.16 (Ubuntu)") || slices.ContainsFunc(servers, func(v string) bool { return strings.Contains(v, "ServerTokens") || strings.Contains(v, "emanating") }) {
				t.Errorf("Server headers %q", servers)
			}
		}},
		// a real export with invalid UTF-8 in its policy
		{file: "nessus-goad-mini-corrupted.nessus", bad: 1, badText: "line 17: invalid UTF-8"},
	})
}

func TestOpenVAS_RealSamples(t *testing.T) {
	t.Parallel()
	runVulnCases(t, OpenVAS, []vulnCase{
		// DefectDojo's fixtures: an address anonymised into one that is not
		{file: "openvas-dd-many-vuln.xml", bad: 45, badText: `openvas: result <host>: not an IP address: "192.168.1.1001"`},
		{file: "openvas-dd-no-vuln.xml"},
		{file: "openvas-dd-one-vuln.xml", skipped: "openvas: host-level result (port general/tcp)"},
		{file: "openvas-dd-report-detail-v2.xml", services: 1, skipped: "openvas: result not kept (no product evidence)", check: func(t *testing.T, s map[string]Observation) {
			o := get(t, s, "10.99.99.99 42/tcp")
			wantEq(t, "hostname", strings.Join(o.Hostnames, ","), "server99")
			wantEq(t, "probes", len(o.Service.Probes), 0)
		}},
		// Dradis's fixtures: GVM 7's report with a detection CPE, and the
		// older "http (80/tcp)" port form
		{file: "openvas-dradis-v7.xml", services: 4, check: func(t *testing.T, s map[string]Observation) {
			o := get(t, s, "10.10.10.10 8443/tcp")
			wantEq(t, "detected", o.Service.Detected.By+" "+strings.Join(o.Service.Detected.CPE, ","), "openvas cpe:/a:apache:tomcat:6.0.26")
			wantEq(t, "observed_at", o.ObservedAt, "2014-09-20T03:55:32Z")
		}},
		// DefectDojo's CSV exports ("CSV Results"); report_using_openVAS.csv is a GVM 22 scan of
		// scanme.nmap.org with its log-level detections, Apache's consolidated host-wide
		{file: "openvas-dd-report-using-openvas.csv", services: 2, skipped: "openvas: host-level result (port general/)", check: func(t *testing.T, s map[string]Observation) {
			o := get(t, s, "45.33.32.156 80/tcp")
			wantEq(t, "observed_at", o.ObservedAt, "2024-03-18T12:46:31Z")
			d := o.Service.Detected
			wantEq(t, "detected", d.By+"|"+d.Product+"|"+d.Version+"|"+d.Info+"|"+strings.Join(d.CPE, ","),
				"openvas|Apache HTTP Server|2.4.7|os: Ubuntu|cpe:/a:apache:http_server:2.4.7,cpe:/o:canonical:ubuntu_linux")
			wantEq(t, "Server", header(probe(t, o, "openvas:http"), "Server"), "Apache/2.4.7 (Ubuntu)")
			b := probe(t, o, "openvas:1.3.6.1.4.1.25623.1.0.117232").Banner.Received.Data
			if !strings.HasPrefix(b, "Detected Apache HTTP Server\n\nVersion:       2.4.7\nLocation:      80/tcp") {
				t.Errorf("detection banner %q", b)
			}
			probe(t, get(t, s, "45.33.32.156 443/tcp"), "openvas:1.3.6.1.4.1.25623.1.0.10330")
		}},
		{file: "openvas-dd-report-using-cve.csv", skipped: "openvas: host-level result (port general/)"},
		{file: "openvas-dd-report-combine-v2.csv", skipped: "openvas: host-level result (port general/)"},
		{file: "openvas-dd-report-detail-v2.csv", services: 1, check: func(t *testing.T, s map[string]Observation) {
			wantEq(t, "hostname", strings.Join(get(t, s, "10.99.99.99 42/tcp").Hostnames, ","), "server99")
		}},
		{file: "openvas-dd-many-vuln.csv", services: 1, check: func(t *testing.T, s map[string]Observation) {
			wantEq(t, "hostname", strings.Join(get(t, s, "192.168.118.212 9200/tcp").Hostnames, ","), "logsrv")
		}},
		{file: "openvas-dd-one-vuln.csv", services: 1, check: func(t *testing.T, s map[string]Observation) {
			wantEq(t, "observed_at", get(t, s, "10.0.0.8 22/tcp").ObservedAt, "2021-02-25T20:01:27Z")
		}},
		{file: "openvas-dd-no-vuln.csv"},
		{file: "openvas-dradis-v24.xml", services: 1, check: func(t *testing.T, s map[string]Observation) {
			wantEq(t, "hostname", strings.Join(get(t, s, "188.111.11.85 80/tcp").Hostnames, ","), "www.google.com")
		}},
	})
}

// gvmDetectionReport is a Greenbone report written for this test around a
// detection result in the words of Greenbone's FortiOS detection (the
// description form the rules read): no public report with an appliance's
// detection results was found.
const gvmDetectionReport = `<get_reports_response status="200" status_text="OK"><report id="r"><report id="r">
<results start="1" max="-1">
<result id="a"><host>192.0.2.10<hostname>fw.example.net</hostname></host><port>443/tcp</port>
<nvt oid="1.3.6.1.4.1.25623.1.0.105198"><name>Fortinet FortiGate Detection (HTTP)</name><family>Product detection</family></nvt>
<severity>0.0</severity><threat>Log</threat>
<description>Detected Fortinet FortiOS

Version:       7.2.4
Location:      443/tcp
CPE:           cpe:/o:fortinet:fortios:7.2.4

Concluded from version/product identification result:
"version":"v7.2.4"</description></result>
<result id="b"><host>192.0.2.10</host><port>443/tcp</port>
<nvt oid="1.3.6.1.4.1.25623.1.0.170001"><name>Fortinet FortiOS Multiple Vulnerabilities</name><family>FortiOS Local Security Checks</family></nvt>
<severity>9.8</severity><threat>High</threat>
<description>Installed version: 7.2.4
Fixed version:     7.2.5</description></result>
<result id="c"><host>192.0.2.10</host><port>443/tcp</port>
<nvt oid="1.3.6.1.4.1.25623.1.0.170002"><name>Fortinet FortiOS Other Vulnerability</name></nvt>
<severity>5.0</severity><description>Installed version: 7.2.4
Fixed version:     7.2.6</description></result>
<result id="d"><host>192.0.2.10</host><port>general/tcp</port>
<nvt oid="1.3.6.1.4.1.25623.1.0.105937"><name>OS Detection Consolidation and Reporting</name></nvt>
<severity>0.0</severity><description>Best matching OS:

OS:           Fortinet FortiOS 7.2.4
CPE:          cpe:/o:fortinet:fortios:7.2.4</description></result>
</results>
<host><ip>192.0.2.10</ip><start>2024-05-01T10:00:00Z</start><end>2024-05-01T10:30:00Z</end>
<detail><name>best_os_txt</name><value>Fortinet FortiOS 7.2.4</value></detail>
<detail><name>best_os_cpe</name><value>cpe:/o:fortinet:fortios:7.2.4</value></detail>
<detail><name>cpe:/a:fortinet:fortigate_web_ui</name><value>443/tcp</value></detail>
</host>
</report></report></get_reports_response>`

func TestOpenVAS_Detection(t *testing.T) {
	t.Parallel()
	r := runAdapter(t, OpenVAS, gvmDetectionReport, Options{})
	if len(r.obs) != 1 || len(r.bad) != 0 {
		t.Fatalf("got %d services, %v", len(r.obs), r.bad)
	}
	o := r.obs[0]
	wantEq(t, "observed_at", o.ObservedAt, "2024-05-01T10:30:00Z")
	wantEq(t, "hostname", strings.Join(o.Hostnames, ","), "fw.example.net")
	d := o.Service.Detected
	wantEq(t, "detected", d.By+"|"+d.Product+"|"+d.Version+"|"+d.Info, "openvas|Fortinet FortiOS|7.2.4|os: Fortinet FortiOS 7.2.4")
	wantEq(t, "cpe", strings.Join(d.CPE, " "), "cpe:/o:fortinet:fortios:7.2.4 cpe:/a:fortinet:fortigate_web_ui")
	// the detection and one finding (the second quotes the same installed version)
	wantEq(t, "probes", len(o.Service.Probes), 2)
	if b := probe(t, o, "openvas:1.3.6.1.4.1.25623.1.0.105198").Banner.Received.Data; !strings.HasPrefix(b, "Detected Fortinet FortiOS\n\nVersion:       7.2.4") {
		t.Errorf("detection banner %q", b)
	}
	probe(t, o, "openvas:1.3.6.1.4.1.25623.1.0.170001")
}

func TestNessus_Malformed(t *testing.T) {
	t.Parallel()
	const host = `<NessusClientData_v2><Report name="r"><ReportHost name="192.0.2.1"><HostProperties><tag name="host-ip">192.0.2.1</tag></HostProperties>`
	tests := []struct {
		name, in string
		services int
		want     string // in the first error
	}{
		{"not nessus", `<nmaprun></nmaprun>`, 0, "line 1: not a .nessus file: no <NessusClientData_v2> element"},
		{"v1", `<NessusClientData><Report></Report></NessusClientData>`, 0, "NessusClientData (v1)"},
		{"empty", ``, 0, "not a .nessus file"},
		{"bad port", host + `<ReportItem port="http" svc_name="www" protocol="tcp" severity="0" pluginID="22964" pluginName="Service Detection"/></ReportHost></Report></NessusClientData_v2>`, 0,
			`ReportItem plugin 22964: port "http": not a port number`},
		{"cut", host + `<ReportItem port="80" svc_name="www" protocol="tcp" severity="0" pluginID="22964"><plugin_output>A web server`, 0, "nessus: ReportHost \"192.0.2.1\""},
		// read as a Tenable CSV export (not XML): refused naming the column it lacks
		{"not xml", "Plugin,CVE\n1,2\n", 0, "not a .nessus file (no XML) nor a Tenable (Nessus, Tenable.io, Tenable.sc) CSV export: no address column"},
		{"host after a bad one", host + `<ReportItem port="99999" protocol="tcp" pluginID="1"/><ReportItem port="443" protocol="tcp" severity="0" pluginID="10107" pluginName="HTTP Server Type and Version"><plugin_output>The remote web server type is :

FortiGate</plugin_output></ReportItem></ReportHost></Report></NessusClientData_v2>`, 1, `port "99999"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runAdapter(t, Nessus, tt.in, Options{})
			if len(r.obs) != tt.services || len(r.bad) == 0 || !strings.Contains(r.bad[0].Error(), tt.want) {
				t.Fatalf("got %d services, errors %v; want %d and %q", len(r.obs), r.bad, tt.services, tt.want)
			}
		})
	}
}

func TestOpenVAS_Malformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     string
	}{
		{"not a report", `<NessusClientData_v2/>`, "line 1: not a Greenbone report"},
		{"empty", ``, "not a Greenbone report"},
		{"cut", `<report><report><results><result><host>192.0.2.1</host><port>443/tcp`, "openvas: result"},
		{"bad port", `<report><report><results><result><host>192.0.2.1</host><port>70000/tcp</port></result></results></report></report>`, `result <port>: must be 1..65535, got "70000/tcp"`},
		{"bad address", `<report><report><results><result><host>example</host><port>443/tcp</port></result></results></report></report>`, `result <host>: not an IP address: "example"`},
		{"csv without its columns", "Host,Port\n192.0.2.1,443\n", `not GVM's CSV export: no "IP" column`},
		{"csv bad address", "IP,Hostname,Port,Port Protocol,CVSS,Severity,NVT Name,Specific Result\n192.0.2.300,,443,tcp,0.0,Log,Services,A web server\n", `line 2: openvas: result <host>: not an IP address: "192.0.2.300"`},
		{"csv bad quote", "IP,Hostname,Port,Port Protocol,CVSS,Severity,NVT Name,Specific Result\n192.0.2.1,,443,tcp,0.0,Log,\"Services,A web \"server\n", "line 2: openvas csv:"},
		{"syntax", `<report><report><results><result><host>192.0.2.1</host></port></result></results></report></report>`, "line 1: openvas: xml: XML syntax error on line 1: unexpected end element </port>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runAdapter(t, OpenVAS, tt.in, Options{})
			if len(r.obs) != 0 || len(r.bad) == 0 || !strings.Contains(r.bad[0].Error(), tt.want) {
				t.Fatalf("got %d services, errors %v; want %q", len(r.obs), r.bad, tt.want)
			}
		})
	}
}
