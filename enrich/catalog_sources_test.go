package enrich

import (
	"os"
	"strings"
	"testing"
	"time"
)

func loadFile(t *testing.T, path string, f func(*os.File) error) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if err := f(fh); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// The EUVD formats: the search response (real, cut to 4 items), one
// enisaid record (real, from the aboutcode mirror) and the mapping dump.
func TestCatalog_LoadEUVD(t *testing.T) {
	tests := []struct {
		name string
		file string
		want map[string]string
	}{
		{"search response", "testdata/euvd-search-exploited.json", map[string]string{
			"CVE-2024-53704": "EUVD-2024-52037", "CVE-2024-55591": "EUVD-2024-52819",
			"CVE-2024-27199": "EUVD-2024-24438", "CVE-2026-20128": "EUVD-2026-8676"}},
		{"enisaid record", "testdata/euvd-enisaid-EUVD-1999-0016.json", map[string]string{"CVE-1999-0016": "EUVD-1999-0016"}},
		{"mapping dump", "testdata/euvd-cve-mapping.csv", map[string]string{
			"CVE-1999-0016": "EUVD-1999-0016", "CVE-2024-53704": "EUVD-2024-52037", "CVE-2024-55591": "EUVD-2024-52819",
			"CVE-2024-27199": "EUVD-2024-24438", "CVE-2026-20128": "EUVD-2026-8676"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCatalog()
			loadFile(t, tt.file, func(f *os.File) error { return c.LoadEUVD(f) })
			if len(c.euvd) != len(tt.want) {
				t.Errorf("got %d ids %v, want %d", len(c.euvd), c.euvd, len(tt.want))
			}
			for cve, id := range tt.want {
				if c.euvd[cve] != id {
					t.Errorf("%s -> %q, want %s", cve, c.euvd[cve], id)
				}
			}
			for k := range c.euvd {
				if strings.HasPrefix(k, "GHSA") {
					t.Errorf("alias %s taken for a CVE", k)
				}
			}
		})
	}
}

func TestCatalog_LoadEUVDFormats(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string]string
		wantErr  string
	}{
		{"kev dump", `[{"cveId":"CVE-2021-44228","euvdId":"EUVD-2021-30358","dateAdded":"2021-12-10"}]`,
			map[string]string{"CVE-2021-44228": "EUVD-2021-30358"}, ""},
		{"list of records", `[{"id":"EUVD-2025-1","aliases":"CVE-2025-0001\n"}]`, map[string]string{"CVE-2025-0001": "EUVD-2025-1"}, ""},
		{"first id kept", "euvd_id,cve_id\nEUVD-2024-1,CVE-2024-0001\nEUVD-2024-2,cve-2024-0001\n", map[string]string{"CVE-2024-0001": "EUVD-2024-1"}, ""},
		{"bom", "\ufeffeuvd_id,cve_id\nEUVD-2024-1,CVE-2024-0001\n", map[string]string{"CVE-2024-0001": "EUVD-2024-1"}, ""},
		{"bad header", "cve_id,euvd_id\n", nil, "line 1"},
		{"bad row", "euvd_id,cve_id\nEUVD-2024-1,GHSA-x\n", nil, "line 2"},
		{"empty", "", nil, "empty"},
		{"bad record id", `{"items":[{"id":"CVE-2024-1","aliases":"CVE-2024-1"}]}`, nil, "[0].id"},
		{"unknown object", `{"total":0}`, nil, "want an EUVD record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCatalog()
			err := c.LoadEUVD(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for cve, id := range tt.want {
				if c.euvd[cve] != id {
					t.Errorf("%s -> %q, want %s", cve, c.euvd[cve], id)
				}
			}
		})
	}
}

// A real MyJVN getVulnOverviewList response (RSS 1.0 + mod_sec 3.0).
func TestCatalog_LoadJVN(t *testing.T) {
	c := NewCatalog()
	loadFile(t, "testdata/jvn-myjvn-overview.rdf", func(f *os.File) error { return c.LoadJVN(f) })
	want := map[string]string{
		"CVE-2017-10852": "JVNDB-2018-000024", "CVE-2017-10853": "JVNDB-2018-000024", "CVE-2017-10854": "JVNDB-2018-000024",
		"CVE-2018-0547": "JVNDB-2018-000023", "CVE-2018-0546": "JVNDB-2018-000022",
	}
	if len(c.jvn) != len(want) {
		t.Errorf("got %v, want %v", c.jvn, want)
	}
	for cve, id := range want {
		if c.jvn[cve] != id {
			t.Errorf("%s -> %q, want %s", cve, c.jvn[cve], id)
		}
	}
	for _, tt := range []struct{ name, in, wantErr string }{
		{"not rss", `<feed/>`, "rdf:RDF"},
		{"bad identifier", `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:sec="http://jvn.jp/rss/mod_sec/3.0/"><item><sec:identifier>JVN#1</sec:identifier></item></rdf:RDF>`, "sec:identifier"},
		{"broken", `<rdf:RDF><item>`, "decode"},
		{"empty", ``, "empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := NewCatalog().LoadJVN(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// Real endoflife.date repository files, and the API v0 JSON generated from
// fortios.md by the site's own rules.
func TestCatalog_LoadEndOfLife(t *testing.T) {
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name, file string
		cpe        string
		version    string
		want       string
	}{
		{"fortios md ended", "testdata/endoflife/fortios.md", "cpe:2.3:o:fortinet:fortios", "7.0.14", EOLEnded},
		{"fortios md supported", "testdata/endoflife/fortios.md", "cpe:2.3:o:fortinet:fortios", "7.4.3", EOLSupported},
		{"fortios md unknown cycle", "testdata/endoflife/fortios.md", "cpe:2.3:o:fortinet:fortios", "5.6.3", EOLUnknown},
		{"fortios api v0", "testdata/endoflife/fortios.json", "cpe:2.3:o:fortinet:fortios", "6.4.15", EOLEnded},
		{"fortios api v0 supported", "testdata/endoflife/fortios.json", "cpe:2.3:o:fortinet:fortios", "8.0.1", EOLSupported},
		{"pan-os md (no identifier, built-in map)", "testdata/endoflife/pan-os.md", "cpe:2.3:o:paloaltonetworks:pan-os", "11.1.2-h3", EOLSupported},
		{"pan-os md ended", "testdata/endoflife/pan-os.md", "cpe:2.3:o:paloaltonetworks:pan-os", "10.1.14", EOLEnded},
		{"big-ip md", "testdata/endoflife/big-ip.md", "cpe:2.3:a:f5:big-ip_access_policy_manager", "17.1.1.3", EOLSupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCatalog()
			loadFile(t, tt.file, func(f *os.File) error {
				return c.LoadEndOfLife(endOfLifeName(tt.file), f, EndOfLifeCPE(nil))
			})
			got := c.eolStatus(Fingerprint{CPE: []string{tt.cpe}, ExactVersion: tt.version}, now)
			if got == nil || *got != tt.want {
				t.Errorf("eol_status of %s = %v, want %s", tt.version, got, tt.want)
			}
		})
	}
}

func TestCatalog_LoadEndOfLifeFormats(t *testing.T) {
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	cpes := map[string][]string{"thing": {"cpe:2.3:a:acme:thing"}}
	tests := []struct {
		name, product, in string
		version, want     string
		wantErr           string
	}{
		{"v0 boolean eol true", "thing", `[{"cycle":"1.0","eol":true},{"cycle":"2.0","eol":false}]`, "1.0.3", EOLEnded, ""},
		{"v0 boolean eol false", "thing", `[{"cycle":"1.0","eol":true},{"cycle":"2.0","eol":false}]`, "2.0.1", EOLSupported, ""},
		{"v1 product", "ignored", `{"schema_version":"1.2.0","result":{"name":"thing","identifiers":[],"releases":[{"name":"3.1","isEol":true,"eolFrom":"2025-01-31"},{"name":"3.2","isEol":false,"eolFrom":null}]}}`, "3.1.9", EOLEnded, ""},
		{"v1 identifiers give the cpe", "other", `{"result":{"name":"other","identifiers":[{"id":"cpe:2.3:a:acme:thing","type":"cpe"}],"releases":[{"name":"3.2","isEol":false,"eolFrom":"2030-01-01"}]}}`, "3.2", EOLSupported, ""},
		{"md identifiers give the cpe", "unmapped", "---\ntitle: X\nidentifiers:\n  - cpe: cpe:2.3:a:acme:thing\nreleases:\n  - releaseCycle: \"4.10\"\n    eol: 2020-01-01\n---\nbody\n", "4.10.2", EOLEnded, ""},
		{"md cycle 4.10 is not 4.1", "unmapped", "---\nidentifiers:\n  - cpe: cpe:2.3:a:acme:thing\nreleases:\n  - releaseCycle: \"4.10\"\n    eol: 2020-01-01\n---\n", "4.1.2", EOLUnknown, ""},
		{"no cpe", "nobody", `[{"cycle":"1.0","eol":true}]`, "", "", "endoflife_cpe"},
		{"bad date", "thing", `[{"cycle":"1.0","eol":"soon"}]`, "", "", "YYYY-MM-DD"},
		{"no eol", "thing", `[{"cycle":"1.0"}]`, "", "", "no eol"},
		{"no releases", "thing", `[]`, "", "", "no releases"},
		{"front matter not closed", "thing", "---\nreleases: []\n", "", "", "not closed"},
		{"html", "thing", "<html>", "", "", "want a products"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCatalog()
			err := c.LoadEndOfLife(tt.product, strings.NewReader(tt.in), cpes)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := c.eolStatus(Fingerprint{CPE: []string{"cpe:2.3:a:acme:thing"}, ExactVersion: tt.version}, now)
			if got == nil || *got != tt.want {
				t.Errorf("eol_status = %v, want %s", got, tt.want)
			}
		})
	}
}

func TestEndOfLifeName(t *testing.T) {
	for in, want := range map[string]string{
		"samples/cve/endoflife/pan-os.md":                    "pan-os",
		"https://endoflife.date/api/fortios.json":            "fortios",
		"https://endoflife.date/api/v1/products/fortios/":    "fortios",
		"/data/eol/big-ip.json.gz":                           "big-ip",
		"https://endoflife.date/api/panos.json?x=1":          "panos",
		`C:\eol\cisco-ios-xe.md`:                             "cisco-ios-xe",
		"https://endoflife.date/api/v1/products/pan-os#frag": "pan-os",
	} {
		if got := endOfLifeName(in); got != want {
			t.Errorf("endOfLifeName(%q) = %q, want %q", in, got, want)
		}
	}
}

// The bundled catalog gives the sample CVEs their EUVD ids, and takes
// FortiOS cycles from endoflife.date before netintel's table.
func TestCatalog_SampleIdentifiers(t *testing.T) {
	cat := sampleCatalog(t)
	fs, sum := cat.Match(Fingerprint{CPE: []string{"cpe:2.3:o:fortinet:fortios"}, ExactVersion: "7.0.16"}, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	var found bool
	for _, f := range fs {
		switch f.CveID {
		case "CVE-2024-55591":
			found = true
			if f.EuvdID == nil || *f.EuvdID != "EUVD-2024-52819" {
				t.Errorf("euvd_id = %v", f.EuvdID)
			}
		default:
			if f.EuvdID != nil {
				t.Errorf("%s: euvd_id %s not in the sample", f.CveID, *f.EuvdID)
			}
		}
		if f.JvnID != nil {
			t.Errorf("%s: jvn_id %s, the JVN sample has none of these CVEs", f.CveID, *f.JvnID)
		}
	}
	if !found {
		t.Fatalf("CVE-2024-55591 not matched: %+v", fs)
	}
	if sum.EolStatus == nil || *sum.EolStatus != EOLEnded {
		t.Errorf("eol_status = %v, want eol (FortiOS 7.0 ended 2025-09-30)", sum.EolStatus)
	}
	if cat.jvn["CVE-2017-10852"] != "JVNDB-2018-000024" {
		t.Errorf("jvn sample not loaded: %v", cat.jvn)
	}
}
