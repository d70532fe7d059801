package wafw00f

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
)

// Made-up plugins under in-scope names, in the shapes wafw00f's take.
const fortiwebPlugin = `NAME = 'FortiWeb (Fortinet)'

def is_waf(self):
    # a comment
    if self.matchCookie(r'^FORTITESTSID='):
        return True
    if self.matchContent(r'Fortinet.Networks'):
        return True
    if self.matchHeader(('Server', 'FT')):
        return True
    if check_schema_01(self):
        return True
    return False

def check_schema_01(self):
    if not self.matchContent('test.page.blocked'):
        return False
    if not self.matchContent('url'):
        return False
    return True
`

const kempPlugin = `NAME = 'Kemp LoadMaster (Progress Software)'

def is_waf(self):
    if self.matchHeader(('X-ServedBy', 'KEMP-TEST')) and \
        self.matchStatus(403):
        return True
    return False
`

const watchguardPlugin = `NAME = 'WatchGuard (WatchGuard Technologies)'

def is_waf(self):
    if self.matchHeader(('X-ServedBy', 'WG-TEST')) and \
        self.matchStatus(403):
        return True
    return False
`

const sophosOdd = `NAME = 'UTM Web Protection (Sophos)'

def is_waf(self):
    for x in range(3):
        return True
    return False
`

const outOfScope = `NAME = 'Cloudflare'

def is_waf(self):
    if self.matchHeader(('Server', 'cloudflare-test-server')):
        return True
    return False
`

func svc(status int, headers []ingest.Header, body string) *ingest.Service {
	resp := &ingest.Response{Status: status, Headers: headers}
	if body != "" {
		resp.Body = &ingest.Body{Data: body}
	}
	return &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{
		Request: &ingest.Request{Method: "GET", Path: "/"}, Response: resp}}}
}

// TestGenerate_Translates: the plugins' alternatives and schemas become
// rules that hold where wafw00f would name the product; weak alternatives
// (a vendor's bare name, short literals), plugins of other shapes and
// plugins out of scope are left out and counted.
func TestGenerate_Translates(t *testing.T) {
	fsys := fstest.MapFS{
		"p/fortiweb.py":   {Data: []byte(fortiwebPlugin)},
		"p/kemp.py":       {Data: []byte(kempPlugin)}, // out of scope since round AK
		"p/watchguard.py": {Data: []byte(watchguardPlugin)},
		"p/sophos.py":     {Data: []byte(sophosOdd)},
		"p/cloudflare.py": {Data: []byte(outOfScope)},
		"p/LICENSE":       {Data: []byte("x")},
	}
	out, st, err := Generate(fsys, "p")
	if err != nil {
		t.Fatal(err)
	}
	if st.Plugins != 5 || st.Rules != 2 || st.Skipped["plugin not in scope"] != 2 || st.Skipped["statement not read: for x in range(3):"] != 1 ||
		st.SkippedTells["weak alternative (short literal or only a vendor's name)"] != 2 {
		t.Fatalf("stats %+v\n%s", st, out)
	}
	rules, err := enrich.ParseRules(out, "66-wafw00f.yaml")
	if err != nil {
		t.Fatalf("generated rules do not load: %v\n%s", err, out)
	}
	h := func(k, v string) []ingest.Header { return []ingest.Header{{Name: k, Value: v}} }
	tests := []struct {
		name, vendor string
		s            *ingest.Service
	}{
		{"cookie", "Fortinet", svc(200, h("Set-Cookie", "FORTITESTSID=abc; path=/"), "")},
		{"schema: every part", "Fortinet", svc(403, nil, "test page blocked, url: /x")},
		{"schema: one part missing", "", svc(403, nil, "test page blocked")},
		{"vendor's name alone", "", svc(200, nil, "Fortinet Networks reseller page")},
		{"short header value", "", svc(200, h("Server", "FT"), "")},
		{"header and status", "WatchGuard", svc(403, h("X-ServedBy", "WG-TEST"), "")},
		{"header, other status", "", svc(200, h("X-ServedBy", "WG-TEST"), "")},
		{"a load balancer out of scope", "", svc(403, h("X-ServedBy", "KEMP-TEST"), "")},
		{"out of scope", "", svc(200, h("Server", "cloudflare-test-server"), "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp, ok := rules.Match(tt.s, nil)
			if fp.Vendor != tt.vendor || ok != (tt.vendor != "") {
				t.Errorf("got %+v %v, want vendor %q", fp, ok, tt.vendor)
			}
		})
	}
	if !strings.Contains(string(out), SourceURL("fortiweb.py")) {
		t.Errorf("no provenance in\n%s", out)
	}
}

// TestStrongLeaf: which expressions may name a vendor alone.
func TestStrongLeaf(t *testing.T) {
	tests := []struct {
		re   string
		want bool
	}{
		{"Request denied by WatchGuard Firewall", true},
		{`Barracuda.Networks`, false},
		{`www\.sophos\.com`, false},
		{`TS[a-fA-F0-9]{8}=.+`, false},
		{`^(keep alive|close)`, false},
		{`<(title|h\d{1})>Web Site Blocked`, true},
		{`(NS Transaction|AppFW Session) id`, true},
		{`Citrix\|NetScaler`, false},
		{`NS\-CACHE`, true},
		{`\/my\.logon\.php3`, true},
		{`h\d{1}>ab`, false},
	}
	for _, tt := range tests {
		if got := strongLeaf(tt.re); got != tt.want {
			t.Errorf("strongLeaf(%q) = %v, want %v", tt.re, got, tt.want)
		}
	}
}
