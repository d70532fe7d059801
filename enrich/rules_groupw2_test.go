package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupW2BlockPages checks the group W2 tells: the block and deny
// pages the appliances serve in place of a filtered site (rules
// 20-sonicwall, 35-watchguard, 35-sophos, 45-forcepoint), as OONI's
// blocking-fingerprints list records them. Text that only quotes them (a
// help page's placeholder address, an escaped quotation, another port)
// names nothing.
func TestRules_GroupW2BlockPages(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	page := func(body string, headers ...ingest.Header) *ingest.Service {
		return &ingest.Service{Port: 80, Transport: "tcp", Probes: []ingest.Probe{headerProbe("GET", "/", 200, body, headers...)}}
	}
	redirect := func(location string) *ingest.Service {
		return &ingest.Service{Port: 80, Transport: "tcp", Probes: []ingest.Probe{headerProbe("GET", "/", 302, "", ingest.Header{Name: "Location", Value: location})}}
	}
	tests := []struct {
		name   string
		svc    *ingest.Service
		vendor string
	}{
		{"sonicwall cfs block page title", page("<html><head><title>SonicWALL - Web Site Blocked</title></head>"), "SonicWall"},
		{"sonicwall cfs rating dispute link", page(`If you believe the above web site is rated incorrectly click <a href="http://cfssupport.sonicwall.com/">here</a>`), "SonicWall"},
		{"sonicwall cfs link quoted as escaped text", page(`rated incorrectly click &lt;a href="http://cfssupport.sonicwall.com/"&gt;`), ""},
		{"watchguard proxy response denied", page("<html><head><title>Response denied by WatchGuard HTTP Proxy</title>"), "WatchGuard"},
		{"watchguard proxy request denied", page(`<p class="red">Request denied by WatchGuard HTTP Proxy.</p>`), "WatchGuard"},
		{"watchguard proxy denial in prose", page("my requests were denied by WatchGuard HTTP Proxy today"), ""},
		{"cyberoam block page", page("<td>Cyberoam is securing you. Click here to know more.</td>"), "Sophos"},
		{"websense block page redirect on 15871", redirect("http://10.0.0.5:15871/cgi-bin/blockpage.cgi"), "Forcepoint"},
		{"websense block message redirect on 15871", redirect("http://filter.example.net:15871/cgi-bin/block_message.cgi?ws-session=1"), "Forcepoint"},
		{"websense block page iframe", page(`<iframe src="http://10.0.0.5:15871/cgi-bin/block_message.cgi?ws-session=-1016803316"></iframe>`), "Forcepoint"},
		{"help page placeholder address", page("The block page URL looks something like this:\n\nhttp://<ipaddress>:15871/cgi-bin/blockpage.cgi?ws- session=....."), ""},
		{"same path on another port", redirect("http://10.0.0.5:8080/cgi-bin/blockpage.cgi"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor})
		})
	}
}
