package enrich

import "testing"

// TestRules_AO7Versions checks the version-bearing classes the group AO7
// round added (93-ao7-versions.yaml): the UniFi Network application's
// unauthenticated /status (old spaced and new compact JSON), the Omada
// controller's /api/info (with and without apiVer, with a masked id), an
// SRX chassis cluster's PyEZ facts and a UniFi OS console's SSH motd, each
// with its release; and what they must not name: another server's hello
// with a bare server_version, a "meta" object without "up", a controllerVer
// without omadacId, an MX's facts keyed re0/re1, and EdgeOS's greeting.
func TestRules_AO7Versions(t *testing.T) {
	const (
		unifi = "ao7-unifi-network-status-server-version"
		omada = "ao7-tplink-omada-api-info-controller-version"
		srx   = "ao7-junos-pyez-facts-srx-cluster-junos-info"
		uos   = "ao7-unifi-os-console-ssh-motd-firmware-version"
	)
	web := func(path, body string) matchCase {
		return matchCase{svc: tcpService(8443, httpProbe("GET", path, 200, body))}
	}
	named := func(name string, c matchCase, want wantMatch) matchCase {
		c.name, c.want = name, want
		return c
	}
	checkMatches(t, []matchCase{
		named("unifi status, spaced", web("/status", `{ "data" : [ ] , "meta" : { "rc" : "ok" , "server_version" : "5.7.23" , "up" : true , "uuid" : "0e727580-ffff-ffff-ffff-403dcd5a7bd4"}}`),
			wantMatch{Vendor: "Ubiquiti", Rule: unifi, Version: "5.7.23"}),
		named("unifi status, compact", web("/status", `{"meta":{"rc":"ok","server_version":"8.1.113","up":true},"data":[]}`),
			wantMatch{Vendor: "Ubiquiti", Rule: unifi, Version: "8.1.113"}),
		named("a websocket hello with server_version", web("/", `{"event":"hello","data":{"server_version":"9.11.0"},"seq":0}`), wantMatch{}),
		named("a meta object without up", web("/status", `{"meta":{"rc":"ok","server_version":"1.2.3"}}`), wantMatch{}),
		named("omada api info", web("/api/info", `{"errorCode":0,"msg":"Success.","result":{"controllerVer":"5.7.6","apiVer":"3","configured":true,"type":11,"supportApp":true,"omadacId":"00000000000000000000000000000000"}}`),
			wantMatch{Vendor: "TP-Link", Rule: omada, Version: "5.7.6"}),
		named("omada api info without apiVer", web("/api/info", `{"errorCode":0,"msg":"Success.","result":{"controllerVer":"5.13.30.20","omadacId":"00000000000000000000000000000000","configured":true}}`),
			wantMatch{Vendor: "TP-Link", Rule: omada, Version: "5.13.30.20"}),
		named("omada api info with a masked id", web("/api/info", "{\n  \"errorCode\": 0,\n  \"result\": {\n    \"controllerVer\": \"6.0.0.36\",\n    \"apiVer\": \"3\",\n    \"configured\": true,\n    \"omadacId\": \"xxxxxxxx\"\n  }\n}"),
			wantMatch{Vendor: "TP-Link", Rule: omada, Version: "6.0.0.36"}),
		named("controllerVer without omadacId", web("/api/info", `{"controllerVer":"1.0.0","status":"ok"}`), wantMatch{}),
		{name: "srx cluster pyez facts", svc: bannerService(830, "tcp", "\"junos_info\": {\n    \"node0\": {\n        \"object\": {\"build\": 4, \"major\": [15, 1], \"minor\": [49, \"D\", 80], \"type\": \"X\"},\n        \"text\": \"15.1X49-D80.4\"\n    },\n    \"node1\": {"),
			want: wantMatch{Vendor: "Juniper Networks", Rule: srx, Version: "15.1X49-D80.4"}},
		{name: "mx dual-re pyez facts", svc: bannerService(830, "tcp", "\"junos_info\": {\n    \"re0\": {\n        \"text\": \"21.4R3-S3.4\"\n    },\n    \"re1\": {")},
		{name: "udm pro ssh motd", svc: bannerService(22, "tcp", "Linux udm 4.19.152-ui-alpine #4.19.152 SMP Tue Dec 24 22:57:14 CST 2024 aarch64\n\nFirmware version: v4.1.13\n\n      Welcome to UniFi Dream Machine Pro!\n\nroot@udm:~# "),
			want: wantMatch{Vendor: "Ubiquiti", Rule: uos, Version: "4.1.13"}},
		{name: "edgeos greeting", svc: bannerService(22, "tcp", "Welcome to EdgeOS\n\nFirmware version: v2.0.9\n\nubnt@ubnt:~$ ")},
	})
}
