package ingest

import (
	"slices"
	"strings"
	"testing"
)

// nuclei's text output of a real scan (testdata/SOURCES.md): each result
// line is the observation the JSON path makes of the same result, less
// what the text does not carry (the raw exchange, the template's name and
// tags).
func TestNuclei_TextRealRun(t *testing.T) {
	t.Parallel()
	r, warns := runScanWarn(t, "nuclei", readFile(t, "nuclei/nuclei-text-htb.txt"))
	// line 14 lost its first bracket when it was copied: malformed
	if !slices.Equal(badLines(r.bad), []int{14}) || !strings.Contains(r.bad[0].Err.Error(), "not a nuclei result line") {
		t.Errorf("bad %v", r.bad)
	}
	// two javascript results on the bare address (no port), the [INF] line
	if len(r.skipped) != 3 || len(warns) != 0 {
		t.Errorf("skipped %q warnings %q", r.skipped, warns)
	}
	if len(r.obs) != 22 {
		t.Fatalf("%d observations, want 22", len(r.obs))
	}
	byProduct := map[string]Observation{}
	for _, o := range r.obs {
		if o.IP != "10.129.229.183" || o.Source != "nuclei" || o.Service.Detected == nil || o.Service.Detected.By != "nuclei" {
			t.Errorf("observation %s", mustJSON(t, o))
		}
		byProduct[o.Service.Detected.Product+"|"+o.Service.Detected.Info] = o
	}
	tests := []struct {
		key     string
		port    int
		service string
		version string
	}{
		{"nuclei:http-trace|matcher: trace-request; severity: info", 443, "https", ""},
		// a banner, not a version
		{"nuclei:openssh-detect|extracted: SSH-2.0-OpenSSH_4.3; severity: info", 22, "", ""},
		{"nuclei:snmpv3-detect|extracted: Enterprise: unknown; severity: info", 161, "", ""},
		{"nuclei:weak-cipher-suites|matcher: tls-1.0; extracted: [tls10 TLS_RSA_WITH_AES_128_CBC_SHA]; severity: low", 443, "tls", ""},
		{"nuclei:CVE-2023-37599|severity: high", 443, "https", ""},
	}
	for _, tt := range tests {
		o, ok := byProduct[tt.key]
		if !ok {
			t.Errorf("no result %q", tt.key)
			continue
		}
		if o.Service.Port != tt.port || o.Service.Detected.Service != tt.service || o.Service.Detected.Version != tt.version {
			t.Errorf("%s: %s", tt.key, mustJSON(t, o))
		}
	}
	// tls-version's extracted version is the TLS probe's, as from JSON
	if o := byProduct["nuclei:tls-version|extracted: tls10; severity: info"]; len(o.Service.Probes) != 1 || o.Service.Probes[0].TLS.Version != "TLSv1.0" {
		t.Errorf("tls-version %s", mustJSON(t, o))
	}
}

// The same result as JSON (the -jsonl line nuclei writes) and as its text
// line make the same detected.
func TestNuclei_TextMatchesJSON(t *testing.T) {
	t.Parallel()
	jsonLine := `{"template-id":"openssh-detect","info":{"severity":"info"},"type":"tcp","host":"10.129.229.183:22","matched-at":"10.129.229.183:22","extracted-results":["SSH-2.0-OpenSSH_4.3"],"ip":"10.129.229.183"}`
	textLine := `[openssh-detect] [tcp] [info] 10.129.229.183:22 ["SSH-2.0-OpenSSH_4.3"]`
	a := runScan(t, "nuclei", jsonLine+"\n")
	b := runScan(t, "nuclei", textLine+"\n")
	if len(a.obs) != 1 || len(b.obs) != 1 {
		t.Fatalf("obs %d %d bad %v %v", len(a.obs), len(b.obs), a.bad, b.bad)
	}
	if x, y := mustJSON(t, a.obs[0]), mustJSON(t, b.obs[0]); x != y {
		t.Errorf("json %s\ntext %s", x, y)
	}
}

func TestNuclei_TextLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line            string
		id, match, typ  string
		sev, target, ts string
		extracted       []string
		status          *bool
	}{
		// v2.7's default time stamp, unquoted extracted results (testdata/nuclei/nuclei-text-timestamps.txt)
		{"[2022-09-01 05:54:26] [metatag-cms] [http] [info] https://www.xanhacks.xyz [Hugo 0.101.0]", "metatag-cms", "", "http", "info", "https://www.xanhacks.xyz", "2022-09-01 05:54:26", []string{"Hugo 0.101.0"}, nil},
		{"[2022-09-01 05:54:36] [ssl-dns-names] [ssl] [info] https://www.xanhacks.xyz [www.xanhacks.xyz]", "ssl-dns-names", "", "ssl", "info", "https://www.xanhacks.xyz", "2022-09-01 05:54:36", []string{"www.xanhacks.xyz"}, nil},
		// v3, quoted results holding brackets
		{`[weak-cipher-suites:tls-1.0] [ssl] [low] 10.129.229.183:443 ["[tls10 TLS_RSA_WITH_AES_128_CBC_SHA]"]`, "weak-cipher-suites", "tls-1.0", "ssl", "low", "10.129.229.183:443", "", []string{"[tls10 TLS_RSA_WITH_AES_128_CBC_SHA]"}, nil},
		// the same line as nuclei colours it on a terminal (aurora's codes: format_screen.go), severity before protocol
		{"[\x1b[92mwaf-detect\x1b[0m:\x1b[1;92mapachegeneric\x1b[0m] [\x1b[34minfo\x1b[0m] [\x1b[94mhttp\x1b[0m] https://10.129.229.183", "waf-detect", "apachegeneric", "http", "info", "https://10.129.229.183", "", nil, nil},
		// -ms's matcher status
		{"[http-trace:trace-request] [failed] [http] [info] https://10.129.229.183", "http-trace", "trace-request", "http", "info", "https://10.129.229.183", "", nil, new(bool)},
	}
	for _, tt := range tests {
		x, skip, err := nucleiTextLine(tt.line)
		if err != nil || skip != "" {
			t.Errorf("%q: skip %q err %v", tt.line, skip, err)
			continue
		}
		if x.TemplateID != tt.id || x.MatcherName != tt.match || x.Type != tt.typ || x.Info.Severity != tt.sev || x.MatchedAt != tt.target ||
			x.Timestamp != tt.ts || !slices.Equal(x.Extracted, tt.extracted) || (x.MatcherStatus == nil) != (tt.status == nil) {
			t.Errorf("%q: %+v", tt.line, x)
		}
	}
	for _, bad := range []string{"robots-txt] [http] [info] https://10.129.229.183/robots.txt", "[x] [http] https://a", "[x] [bogus] [info] https://a", "plain words"} {
		if _, _, err := nucleiTextLine(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// A result on a host name: nuclei's text has no address, so it is not
// read, with a warning that names it.
func TestNuclei_TextNames(t *testing.T) {
	t.Parallel()
	r, warns := runScanWarn(t, "nuclei", readFile(t, "nuclei/nuclei-text-timestamps.txt"))
	if len(r.obs) != 0 || len(r.bad) != 0 || len(r.skipped) != 4 || len(warns) != 4 || !strings.Contains(warns[1], `metatag-cms result on "https://www.xanhacks.xyz"`) {
		t.Errorf("obs %d bad %v skipped %v warnings %q", len(r.obs), r.bad, r.skipped, warns)
	}
}

// httpx's text output of a real run (httpx 1.1.5, -title -web-server
// -status-code -follow-redirects -vhost -ip; testdata/SOURCES.md).
func TestHTTPX_TextRealRun(t *testing.T) {
	t.Parallel()
	r := runScan(t, "httpx", readFile(t, "httpx/httpx-1.1.5-text.txt"))
	if len(r.bad) != 0 || len(r.obs) != 20 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	tests := []struct {
		i      int
		ip     string
		port   int
		status int
		title  string
		info   string
	}{
		{3, "10.1.205.8", 443, 200, "Welcome to Citrix Hypervisor 8.2.0", ""},
		{4, "10.1.205.9", 80, 200, "Index of /", "httpx text: Apache/2.4.29 (Ubuntu)"},
		// -fr's chain: the URL's own status is the first
		{5, "10.1.205.1", 8080, 303, "", "httpx text: none"},
		{6, "10.1.205.1", 443, 200, "Fireware XTM User Authentication", ""},
		{10, "10.1.205.20", 80, 301, "Dimension", "httpx text: WatchGuard"},
		// no status printed ([])
		{11, "10.1.205.20", 443, 0, "Dimension", "httpx text: WatchGuard"},
	}
	for _, tt := range tests {
		o := r.obs[tt.i]
		p := o.Service.Probes[0]
		if o.IP != tt.ip || o.Service.Port != tt.port || p.Response.Status != tt.status || p.Response.Title != tt.title ||
			o.Service.Detected.Info != tt.info || p.Request.Path != "/" || o.Source != "httpx" {
			t.Errorf("line %d: %s", tt.i+1, mustJSON(t, o))
		}
	}
}

// Lines of other httpx runs (-title -server -status-code -tech-detect on
// names): their hosts are names and the lines carry no -ip column, so they
// are counted as skipped with a warning.
func TestHTTPX_TextNames(t *testing.T) {
	t.Parallel()
	r, warns := runScanWarn(t, "httpx", readFile(t, "httpx/httpx-text-names.txt"))
	if len(r.obs) != 0 || len(r.bad) != 0 || len(r.skipped) != 6 || len(warns) != 6 || !strings.HasPrefix(warns[0], `"https://migration.domain.com": not read`) {
		t.Errorf("obs %d bad %v skipped %v warnings %q", len(r.obs), r.bad, r.skipped, warns)
	}
}

// The columns of real text lines (testdata/SOURCES.md), each host name
// replaced by a documentation address (the one change made): title,
// Server, tech lists.
func TestHTTPX_TextColumns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line, title, server, info string
	}{
		// -title -server -status-code -tech-detect: title, server, tech
		{"https://192.0.2.1 [403] [403 Forbidden] [Apache] [Apache]", "403 Forbidden", "Apache", "tech: Apache"},
		{"https://192.0.2.1 [200] [] [] [AngularJS,Java]", "", "", "tech: AngularJS, Java"},
		// -status-code -title -tech-detect: the list is tech, not a server
		{"https://192.0.2.1 [200] [LOCK YOUR LAPTOP!] [Cloudflare,HSTS,HTTP/3]", "LOCK YOUR LAPTOP!", "", "tech: Cloudflare, HSTS, HTTP/3"},
		{"https://192.0.2.1 [200] [] [Cloudflare,HSTS,HTTP/3,Hugo:0.120.4]", "", "", "tech: Cloudflare, HSTS, HTTP/3, Hugo:0.120.4"},
		// one technology or a server: httpx's text does not tell which
		{"https://192.0.2.1 [404] [404 Not Found] [HSTS]", "404 Not Found", "", "httpx text: HSTS"},
	}
	for _, tt := range tests {
		o, skip, err := httpxTextLine(tt.line, "httpx", Options{})
		if err != nil || skip != "" {
			t.Errorf("%q: skip %q err %v", tt.line, skip, err)
			continue
		}
		p := o.Service.Probes[0]
		if p.Response.Title != tt.title || strings.Join(headerValues(p.Response.Headers, "Server"), "") != tt.server || o.Service.Detected.Info != tt.info {
			t.Errorf("%q: %s", tt.line, mustJSON(t, o))
		}
	}
	for _, bad := range []string{"not-a-url [200]", "https://192.0.2.1 [200] trailing words", "ftp://192.0.2.1 [200]"} {
		if _, _, err := httpxTextLine(bad, "httpx", Options{}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// nuclei v3.10.0's terminal output of a real scan, its banner and log
// lines and all (testdata/SOURCES.md): the 46 matches it reports; the
// templates' one extracted version as detected.version, a banner not;
// metadata groups (ftp-weak-credentials' user and password) not kept.
func TestNuclei_TextV3Run(t *testing.T) {
	t.Parallel()
	r := runScan(t, "nuclei", readFile(t, "nuclei/nuclei-3.10.0-text-insanity.txt"))
	if len(r.bad) != 0 || len(r.obs) != 46 || len(r.skipped) != 18 {
		t.Fatalf("obs %d bad %v skipped %d", len(r.obs), r.bad, len(r.skipped))
	}
	versions := map[string]string{}
	for _, o := range r.obs {
		d := o.Service.Detected
		if o.IP != "192.168.200.124" || strings.Contains(d.Info, "stingray") || strings.Contains(d.Info, "123456") {
			t.Errorf("observation %s", mustJSON(t, o))
		}
		versions[d.Product] = d.Version
	}
	for product, want := range map[string]string{"nuclei:phpmyadmin-panel": "5.0.2", "nuclei:vsftpd-detect": "3.0.2", "nuclei:php-eol": "7.2.33",
		"nuclei:apache-detect": "", "nuclei:ssh-server-enumeration": "", "nuclei:options-method": ""} {
		if got, ok := versions[product]; !ok || got != want {
			t.Errorf("%s: version %q (found %v), want %q", product, got, ok, want)
		}
	}
}
