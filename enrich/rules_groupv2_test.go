package enrich

import (
	"testing"
	"time"

	"github.com/netintel/netintel/ingest"
	"gopkg.in/yaml.v3"
)

// TestRules_GroupV2Versions checks the group V2 version tells of FortiOS
// (rules/10-fortinet.yaml and the nuclei rule of rules/70-detected.yaml):
// the image's build day in the ETag or Last-Modified of its static files,
// looked up in fortios-build-dates; the same day as nuclei's
// fortinet-fortigate-panel extractor prints it ("Release date: Sep 26,
// 2023"); the GUI configuration of fweb_all.js and its GUI number. A day
// the table does not hold, or the day after a build, gives no version; the
// same ETag on an imitation served by a generic web server names nothing.
func TestRules_GroupV2Versions(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	h := func(name, value string) ingest.Header { return ingest.Header{Name: name, Value: value} }
	svc := tcpService
	nuclei := func(info string) *ingest.Service {
		return &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{By: "nuclei", Service: "http", Product: "nuclei:fortinet-fortigate-panel", Info: info}}
	}
	const vpnRoot = "<html><script type=\"text/javascript\">\nif (window!=top) top.location=window.location;top.location=\"/remote/login\";\n</script></html>\n"
	const adminRoot = "<html><script language=\"javascript\">\n    document.location=\"/login\";\n    top.location=\"/login\";\n</script></html>\n"
	tests := []struct {
		name          string
		svc           *ingest.Service
		vendor        string
		version, band string
	}{
		// the OpenConnect #702 root: ETag mtime 2023-09-26 18:43 UTC, the day of 7.2.6 build1575
		{"ssl-vpn root etag on a build day", svc(443, headerProbe("GET", "/", 200, vpnRoot, h("ETag", `"83-65132647"`), h("Content-Type", "text/html"))), "Fortinet", "7.2.6", ""},
		{"ssl-vpn root last-modified on a build day", svc(443, headerProbe("GET", "/", 200, vpnRoot, h("Server", "xxxxxxxx-xxxxx"), h("Last-Modified", "Wed, 30 Aug 2023 10:00:00 GMT"))), "Fortinet", "7.4.1", ""},
		{"admin root etag of fortios 4/5 form", svc(443, headerProbe("GET", "/", 200, adminRoot, h("ETag", `"610_4f_5b2a6bf0"`))), "Fortinet", "5.6.5", ""},
		{"admin root etag of the later form", svc(443, headerProbe("GET", "/", 200, adminRoot, h("ETag", `"83-629db400"`))), "Fortinet", "7.0.6", ""},
		{"etag the day after a build", svc(443, headerProbe("GET", "/", 200, vpnRoot, h("ETag", `"83-65137e90"`))), "Fortinet", "", ""},
		{"etag on a day the table lacks", svc(443, headerProbe("GET", "/", 200, vpnRoot, h("Server", "xxxxxxxx-xxxxx"), h("ETag", `"83-6011f49f"`))), "Fortinet", "", ""},
		{"nuclei release date", nuclei("name: Fortinet FortiGate SSL VPN Login Panel - Detect; extracted: Release date: Sep 26, 2023; tags: panel,fortigate,vpn; severity: info"), "Fortinet", "7.2.6", ""},
		{"nuclei release date with a one-digit day", nuclei("[fortinet-fortigate-panel] [http] [info] https://vpn.example [\"Release date: Jun 6, 2022\"]"), "Fortinet", "7.0.6", ""},
		{"nuclei release date the table lacks", nuclei("extracted: Release date: Jan 27, 2021"), "Fortinet", "", ""},
		{"fweb_all.js gui configuration", svc(443,
			headerProbe("GET", "/api", 401, "<script src=\"/0cebad09e7db38e5316621c963cf944e/fweb_all.js\"></script>", h("Server", "xxxxxxxx-xxxxx")),
			headerProbe("GET", "/0cebad09e7db38e5316621c963cf944e/fweb_all.js", 200, "CONFIG: {\n    CONFIG_BUILD_NUMBER: 231,\n    CONFIG_GUI_NO: \"0cebad09e7db38e5316621c963cf944e\",\n    CONFIG_MAJOR_NUM: 6,\n    CONFIG_MINOR_NUM: 0,\n    CONFIG_MODEL: \"FGT_81E_POE\",\n    CONFIG_MODEL_LEVEL_LOW: !0,\n    CONFIG_PATCH_NUM: 4,\n    CONFIG_SQL_LOG: !0\n},")), "Fortinet", "6.0.4", ""},
		{"admin login page served from the gui number", svc(443, headerProbe("GET", "/login", 200, `<html class="main-app"><head><link href="/0cebad09e7db38e5316621c963cf944e/css/main.css" rel="stylesheet"></head><body><f-icon class="fa-warning"></f-icon></body></html>`)), "Fortinet", "6.0.4", ""},
		// look-alikes: an imitation behind nginx, a web server's own page on a build day
		{"imitation behind nginx with a fortios etag", svc(443, headerProbe("GET", "/", 200, vpnRoot, h("Server", "nginx/1.24.0"), h("ETag", `"83-65132647"`))), "", "", ""},
		{"apache page modified on a build day", svc(443, headerProbe("GET", "/", 200, "<html><title>It works!</title></html>", h("Server", "Apache/2.4.57"), h("Last-Modified", "Tue, 26 Sep 2023 18:43:19 GMT"))), "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor, Version: tt.version, Band: tt.band, StrictVersion: true})
		})
	}
}

// TestRules_GroupV2BuildDatesTable checks the fortios-build-dates table
// itself (rules/10-fortinet.yaml): every row is one day with a public
// source and an exact FortiOS release, and no two rows share a day (a
// shared day would be a band, not a release).
func TestRules_GroupV2BuildDatesTable(t *testing.T) {
	b, err := defaultRules.ReadFile("rules/10-fortinet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f rulesFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	tab, ok := f.Tables["fortios-build-dates"]
	if !ok {
		t.Fatal("table fortios-build-dates missing")
	}
	if len(tab.Rows) < 20 {
		t.Fatalf("fortios-build-dates has %d rows, want at least 20", len(tab.Rows))
	}
	seen := map[string]string{}
	for _, r := range tab.Rows {
		if r.Source == "" && tab.Source == "" {
			t.Errorf("row %s (%s) has no source", r.From, r.Version)
		}
		if r.Version == "" || r.Band != "" || r.Key != "" {
			t.Errorf("row %s: key %q version %q band %q, want a date row with an exact release", r.From, r.Key, r.Version, r.Band)
		}
		from, err1 := time.Parse(time.DateOnly, r.From)
		to, err2 := time.Parse(time.DateOnly, r.To)
		if err1 != nil || err2 != nil || to.Sub(from) != 24*time.Hour {
			t.Errorf("row %s..%s (%s): want one day", r.From, r.To, r.Version)
		}
		if prev, dup := seen[r.From]; dup {
			t.Errorf("day %s holds %s and %s", r.From, prev, r.Version)
		}
		seen[r.From] = r.Version
	}
}
