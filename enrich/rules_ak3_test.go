package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_AK3Versions checks the group AK3 version classes
// (rules/89-ak3-versions.yaml): the release Junos names in the XML
// namespace of every rpc-reply (a band), RouterOS's resource record cut
// before its platform line, RouterOS API records in a client's quoted
// rendering (resource and package), and the FortiOS build days of
// ak3-fortios-build-days read from a FortiGate page's ETag. Look-alikes
// without the products' own keys name nothing.
func TestRules_AK3Versions(t *testing.T) {
	h := func(name, value string) ingest.Header { return ingest.Header{Name: name, Value: value} }
	const vpnRoot = "<html><script type=\"text/javascript\">\nif (window!=top) top.location=window.location;top.location=\"/remote/login\";\n</script></html>\n"
	checkMatches(t, []matchCase{
		{"junos rpc-reply namespace", bannerService(830, "tcp",
			`<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" xmlns:junos="http://xml.juniper.net/junos/18.4R3/junos" message-id="1"><rpc-error><error-message>syntax error</error-message></rpc-error></rpc-reply>`),
			wantMatch{Vendor: "Juniper Networks", Band: "18.4R3.x", StrictVersion: true}},
		{"junos namespace of an X release", bannerService(830, "tcp",
			`<rpc-reply xmlns:junos="http://xml.juniper.net/junos/12.1X44/junos"><chassis-inventory/></rpc-reply>`),
			wantMatch{Vendor: "Juniper Networks", Band: "12.1X44.x"}},
		{"a namespace of another host", bannerService(830, "tcp",
			`<rpc-reply xmlns:junos="http://xml.example.net/junos/18.4R3/junos"></rpc-reply>`),
			wantMatch{}},
		{"routeros resource record without its platform line", bannerService(22, "tcp",
			"                   uptime: 1d17h33m20s\n                  version: 7.16.2 (stable)\n               build-time: 2024-11-26 12:09:40\n         factory-software: 6.35.3\n        architecture-name: arm\n"),
			wantMatch{Vendor: "MikroTik", Version: "7.16.2"}},
		{"a version line and build time without factory-software", bannerService(22, "tcp",
			"version: 7.16.2 (stable)\nbuild-time: 2024-11-26 12:09:40\n"),
			wantMatch{}},
		{"routeros api resource dict", bannerService(8728, "tcp",
			"[{'uptime': '15h58m46s', 'version': '7.1.5 (stable)', 'build-time': 'Mar/22/2022 11:03:33', 'board-name': 'CHR', 'platform': 'MikroTik'}]"),
			wantMatch{Vendor: "MikroTik", Version: "7.1.5"}},
		{"routeros api package dicts", bannerService(8728, "tcp",
			"{'.id': '*6', 'name': 'system', 'version': '6.48.1', 'build-time': 'feb/03/2021 10:54:22', 'scheduled': '', 'disabled': False}\n{'.id': '*7', 'name': 'routing', 'version': '6.48.1', 'build-time': 'feb/03/2021 10:54:22', 'scheduled': '', 'disabled': False}"),
			wantMatch{Vendor: "MikroTik", Version: "6.48.1"}},
		{"another system's package record", bannerService(8728, "tcp",
			`{"name": "system", "version": "2.4.5", "build-time": "2021-02-03T10:54:22Z", "installed": true}`),
			wantMatch{}},
		// ETag mtimes 2023-01-31 12:00, 2025-02-10 09:00, 2025-09-24 15:30 UTC; the day after 7.2.4's build gives none
		{"fortios etag on 7.2.4's build day", tcpService(443, headerProbe("GET", "/", 200, vpnRoot, h("Server", "xxxxxxxx-xxxxx"), h("ETag", `"83-63d902c0"`))),
			wantMatch{Vendor: "Fortinet", Version: "7.2.4"}},
		{"fortios etag on 7.2.11's build day", tcpService(443, headerProbe("GET", "/", 200, vpnRoot, h("Server", "xxxxxxxx-xxxxx"), h("ETag", `"83-67a9c010"`))),
			wantMatch{Vendor: "Fortinet", Version: "7.2.11"}},
		{"fortios etag on 7.4.9's build day", tcpService(443, headerProbe("GET", "/", 200, vpnRoot, h("Server", "xxxxxxxx-xxxxx"), h("ETag", `"83-68d40e78"`))),
			wantMatch{Vendor: "Fortinet", Version: "7.4.9"}},
		{"fortios etag the day after", tcpService(443, headerProbe("GET", "/", 200, vpnRoot, h("Server", "xxxxxxxx-xxxxx"), h("ETag", `"83-63d9ffe0"`))),
			wantMatch{Vendor: "Fortinet", StrictVersion: true}},
	})
}
