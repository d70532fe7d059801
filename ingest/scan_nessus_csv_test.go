package ingest

import (
	"encoding/csv"
	"encoding/xml"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The CSV fixtures are trimmed copies of DefectDojo's parser fixtures
// (github:DefectDojo/django-DefectDojo unittests/scans/tenable/ and
// qualys/, commit 7cfa159a6767b0ac6e66f3b1597a997e607e7308, BSD-3-Clause;
// testdata/SOURCES.md says what was cut), their addresses replaced by
// documentation addresses. Before the CSV readers every one was refused
// whole ("not a .nessus file", "not a Qualys asset data report").

func TestNessusCSV_RealSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file    string
		svcs    []string // ip:port, in order
		skipped []string // reasons, counted
		check   func(t *testing.T, obs []Observation)
	}{
		// Nessus Professional's "all columns" CSV (nessus_many_vuln2-all.csv):
		// HTTP Information, the Server type, the certificate, service
		// detection, OS Identification and the host's CPE plugin.
		{"nessus-dd-many-vuln2-all.csv", []string{"198.51.100.182:80", "198.51.100.182:443"},
			[]string{"nessus: finding not kept (no product evidence)", "nessus: host-level item (port 0)"},
			func(t *testing.T, obs []Observation) {
				https := obs[1].Service
				if len(https.Probes) == 0 || https.Probes[0].Response == nil || https.Probes[0].Response.Status != 404 ||
					!slices.Contains(headerValues(https.Probes[0].Response.Headers, "Server"), "Cowboy") {
					t.Errorf("443 http probe %s", mustJSON(t, https.Probes))
				}
				var cert *TLS
				for _, p := range https.Probes {
					if p.Name == "nessus:10863" {
						cert = p.TLS
					}
				}
				if cert == nil || cert.Subject == nil || cert.Subject.CN != "*.herokuapp.com" || cert.Issuer == nil || !strings.HasPrefix(cert.Issuer.CN, "DigiCert") {
					t.Errorf("443 certificate %s", mustJSON(t, cert))
				}
				d := https.Detected
				if d == nil || d.Info != "os: Microsoft Windows Server 2012 R2" || !slices.Contains(d.CPE, "cpe:/o:microsoft:windows_server_2012:r2") {
					t.Errorf("detected %s", mustJSON(t, d))
				}
			}},
		// Tenable.sc (issue_9612.csv): "IP Address", "Plugin", "Plugin
		// Output: " heading the output, Severity's word, a CPE column,
		// "Last Observed" with its zone.
		{"nessus-dd-sc-issue-9612.csv", []string{"192.0.2.5:1433", "192.0.2.5:5555", "192.0.2.4:1433"}, nil,
			func(t *testing.T, obs []Observation) {
				s := obs[0].Service
				if len(s.Probes) != 1 || s.Probes[0].Name != "nessus:73756" || !strings.HasPrefix(s.Probes[0].Banner.Received.Data, "The following unsupported installation") ||
					!strings.Contains(s.Probes[0].Banner.Received.Data, "Installed version : 10.50.6560.0") {
					t.Errorf("probes %s", mustJSON(t, s.Probes))
				}
				if s.Detected == nil || !slices.Contains(s.Detected.CPE, "cpe:/a:microsoft:sql_server") || obs[0].ObservedAt != "2024-02-19T21:01:01Z" {
					t.Errorf("detected %s at %s", mustJSON(t, s.Detected), obs[0].ObservedAt)
				}
			}},
		// Tenable.sc's older column set (nessus_many_vuln.csv): "Plugin
		// Text", rows of empty fields after the findings, times in MST.
		{"nessus-dd-sc-many-vuln.csv", []string{"192.0.2.11:443", "192.0.2.21:443"},
			[]string{"nessus: finding not kept (no product evidence)"},
			func(t *testing.T, obs []Observation) {
				if obs[0].ObservedAt != "2021-01-05T17:24:08Z" || !slices.Contains(obs[0].Service.Detected.CPE, "cpe:/a:ietf:x.509_certificate") {
					t.Errorf("first %s", mustJSON(t, obs[0]))
				}
			}},
		// Tenable.io's semicolon-separated export (nessus_new.csv): asset.*
		// and definition.* columns, output quoted with a leading "'".
		{"nessus-dd-io-new.csv", []string{"192.0.2.5:22", "192.0.2.32:445"},
			[]string{"nessus: finding not kept (no product evidence)", "nessus: host-level item (port 0)", "nessus: host without a service (no port above 0)"},
			func(t *testing.T, obs []Observation) {
				s := obs[1].Service
				if len(s.Probes) != 1 || !strings.HasPrefix(s.Probes[0].Banner.Received.Data, "Path") || !strings.Contains(s.Probes[0].Banner.Received.Data, "Installed version : 6.1.36.152435") {
					t.Errorf("probes %s", mustJSON(t, s.Probes))
				}
				if s.Detected.Info != "os: Microsoft Windows 10 Enterprise 10.0.19045" || !slices.Contains(s.Detected.CPE, "cpe:/a:oracle:vm_virtualbox") ||
					obs[1].ObservedAt != "2023-06-30T04:32:07Z" || !slices.Equal(obs[1].Hostnames, []string{"blah32"}) {
					t.Errorf("observation %s", mustJSON(t, obs[1]))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "nessus", readFile(t, tt.file))
			if len(r.bad) != 0 {
				t.Fatalf("bad %v", r.bad)
			}
			var got []string
			for _, o := range r.obs {
				got = append(got, o.IP+":"+strconv.Itoa(o.Service.Port))
			}
			if !slices.Equal(got, tt.svcs) {
				t.Fatalf("services %v, want %v", got, tt.svcs)
			}
			reasons := slices.Compact(slices.Sorted(slices.Values(r.skipped)))
			want := slices.Sorted(slices.Values(tt.skipped))
			if !slices.Equal(reasons, want) {
				t.Errorf("skipped %v, want the reasons %v", r.skipped, want)
			}
			tt.check(t, r.obs)
		})
	}
}

// The CSV's rows, written as the ReportItems of a .nessus file, give the
// same observations: the CSV is read as the XML is.
func TestNessusCSV_SameAsNessus(t *testing.T) {
	t.Parallel()
	in := readFile(t, "nessus-dd-many-vuln2-all.csv")
	recs, err := csv.NewReader(strings.NewReader(in)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	sev := map[string]string{"None": "0", "Low": "1", "Medium": "2", "High": "3", "Critical": "4"}
	esc := func(s string) string {
		var b strings.Builder
		xml.EscapeText(&b, []byte(s))
		return b.String()
	}
	var doc strings.Builder
	doc.WriteString("<?xml version=\"1.0\" ?>\n<NessusClientData_v2><Report name=\"r\"><ReportHost name=\"198.51.100.182\"><HostProperties><tag name=\"host-ip\">198.51.100.182</tag></HostProperties>\n")
	for _, r := range recs[1:] {
		doc.WriteString(`<ReportItem port="` + r[col["Port"]] + `" protocol="` + r[col["Protocol"]] + `" pluginID="` + r[col["Plugin ID"]] +
			`" pluginName="` + esc(r[col["Name"]]) + `" severity="` + sev[r[col["Risk"]]] + `"><plugin_output>` + esc(r[col["Plugin Output"]]) + "</plugin_output></ReportItem>\n")
	}
	doc.WriteString("</ReportHost></Report></NessusClientData_v2>\n")
	fromCSV, fromXML := runScan(t, "nessus", in), runScan(t, "nessus", doc.String())
	if len(fromXML.bad) != 0 || len(fromXML.obs) != 2 {
		t.Fatalf("xml: obs %d bad %v", len(fromXML.obs), fromXML.bad)
	}
	if a, b := mustJSON(t, fromCSV.obs), mustJSON(t, fromXML.obs); a != b {
		t.Errorf("csv:\n%s\nxml:\n%s", a, b)
	}
	if !slices.Equal(fromCSV.skipped, fromXML.skipped) {
		t.Errorf("skipped: csv %v, xml %v", fromCSV.skipped, fromXML.skipped)
	}
}

func TestNessusCSV_Shapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		obs      int
		skipped  []string
		bad      []string
	}{
		{"GVM's CSV is not Tenable's", readFile(t, "openvas-dd-one-vuln.csv"), 0, nil,
			[]string{`not a .nessus file (no XML) nor a Tenable (Nessus, Tenable.io, Tenable.sc) CSV export: no plugin column ("Plugin ID" or "Plugin" or "definition.id")`}},
		{"no output column", "Plugin ID,CVE,CVSS,Risk,Host,Protocol,Port,Name\n10107,,,None,192.0.2.1,tcp,80,HTTP Server Type and Version\n", 0, nil,
			[]string{`no plugin output column ("Plugin Output" or "Plugin Text" or "output")`}},
		// Nessus WAS names the site, not an address, and has no port
		{"a host known by name only", "Plugin ID,CVE,CVSS,CVSSv3,Risk,Host,Protocol,Port,Name,Synopsis,Description,Solution,See Also,Plugin Output\n98104,,7.5,7.1,high,www.example.com,http,,XSS,,,,,found\n",
			0, []string{"nessus: host without an IP address (host-ip)"}, nil},
		{"header only", "Plugin ID,CVE,CVSS,Risk,Host,Protocol,Port,Name,Synopsis,Description,Solution,See Also,Plugin Output\n", 0, nil, nil},
		{"a port that is not one", "Plugin ID,Risk,Host,Protocol,Port,Name,Plugin Output\n10107,None,192.0.2.1,tcp,eighty,HTTP Server Type and Version,\"The remote web server type is :\n\nnginx\"\n", 0,
			[]string{"nessus: host without a service (no port above 0)"}, []string{`port "eighty": not a port number`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "nessus", tt.in)
			if len(r.obs) != tt.obs || len(r.bad) != len(tt.bad) || !slices.Equal(r.skipped, tt.skipped) {
				t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
			}
			for i, w := range tt.bad {
				if !strings.Contains(r.bad[i].Error(), w) {
					t.Errorf("error %d = %v, want %q", i, r.bad[i], w)
				}
			}
		})
	}
}

func TestQualysCSV(t *testing.T) {
	t.Parallel()
	// monthly_pci_issue6932.csv: a PCI report's row (RESULT column): its
	// port is a service; the result is a vulnerability's, not an answer,
	// so it gives no probe (as in the XML report).
	r := runScan(t, "qualys", readFile(t, "qualys-dd-monthly-pci.csv"))
	if len(r.bad) != 0 || len(r.obs) != 1 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	o := r.obs[0]
	if o.IP != "192.0.2.1" || o.Service.Port != 80 || o.Service.Transport != "tcp" || o.ObservedAt != "2022-09-22T13:01:00Z" || !slices.Equal(o.Hostnames, []string{"abv.xyw.com.fj"}) {
		t.Errorf("observation %s", mustJSON(t, o))
	}
	// Qualys_Sample_Report.csv lists findings with no result text and no
	// port: nothing a service is read from, said by name.
	r = runScan(t, "qualys", readFile(t, "qualys-dd-sample-report.csv"))
	if len(r.obs) != 0 || len(r.bad) != 1 || !strings.Contains(r.bad[0].Error(), `qualys csv: no "Results" (or "RESULT") column`) {
		t.Errorf("obs %d bad %v", len(r.obs), r.bad)
	}
	// a scan report's CSV: rows before the header, an information-
	// gathered result with what it detected, a host-level one
	scan := "\"Scan Results\",\"scan/1\"\n\"Company\",\"Example\"\n\n" +
		"\"IP\",\"DNS\",\"NetBIOS\",\"OS\",\"IP Status\",\"QID\",\"Title\",\"Type\",\"Severity\",\"Port\",\"Protocol\",\"FQDN\",\"SSL\",\"CVE ID\",\"Threat\",\"Impact\",\"Solution\",\"Results\",\"PCI Vuln\",\"Instance\",\"Category\"\n" +
		"\"192.0.2.7\",\"www.example.com\",\"\",\"Linux 3.x\",\"host scanned, found vuln\",\"38050\",\"SSH Banner\",\"Ig\",\"1\",\"22\",\"tcp\",\"\",\"no\",\"\",\"\",\"\",\"\",\"SSH-2.0-OpenSSH_8.0\",\"no\",\"\",\"General remote services\"\n" +
		"\"192.0.2.7\",\"www.example.com\",\"\",\"Linux 3.x\",\"host scanned, found vuln\",\"45038\",\"Host Scan Time\",\"Ig\",\"1\",\"\",\"\",\"\",\"no\",\"\",\"\",\"\",\"\",\"Scan duration: 100 seconds\",\"no\",\"\",\"Information gathering\"\n"
	r = runScan(t, "qualys", scan)
	if len(r.bad) != 0 || len(r.obs) != 1 {
		t.Fatalf("scan report: obs %d bad %v", len(r.obs), r.bad)
	}
	if p := r.obs[0].Service.Probes; len(p) != 1 || p[0].Name != "qualys.38050" || p[0].Banner.Received.Data != "SSH-2.0-OpenSSH_8.0" {
		t.Errorf("probes %s", mustJSON(t, p))
	}
}
