package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_AO10Newest checks the classes the group AO10 round added
// (93-ao10-newest.yaml): GlobalProtect's gateway login jnlp read by the
// position of its vsysN argument when the cookies are redacted, the FortiOS
// SSL-VPN daemon's debug line naming a /remote/ URI without the console
// prefix, the SRX's IKE SA and flow session tables, vSRX's srxpfe in
// show system memory, and the Gaia API's show-cluster-state; and what they
// must not name: a Java Web Start file, a debug line of another daemon on
// another URI, a Linux memory table, a cluster answer without its members.
func TestRules_AO10Newest(t *testing.T) {
	const (
		gp   = "ao10-globalprotect-login-jnlp-vsys-configuration-argument"
		fgt  = "ao10-fortios-sslvpnd-debug-uri-remote"
		srx  = "ao10-srx-security-ike-sa-and-flow-session-tables"
		vsrx = "ao10-vsrx-show-system-memory-srxpfe"
		gaia = "ao10-checkpoint-gaia-api-show-cluster-state"
	)
	web := func(method, path, body string) *ingest.Service {
		return tcpService(443, httpProbe(method, path, 200, body))
	}
	checkMatches(t, []matchCase{
		{name: "gp login jnlp, cookies redacted", svc: web("POST", "/ssl-vpn/login.esp", "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n    <jnlp>\n    <application-desc>\n    <argument></argument>\n    <argument>REDACTED</argument>\n    <argument>REDACTED</argument>\n    <argument>GlobalProtect_External_Gateway-N</argument>\n    <argument>[REDACTED]</argument>\n    <argument>CIE-Auth-Profile</argument>\n    <argument>vsys1</argument>\n    <argument>(empty_domain)</argument>\n"),
			want: wantMatch{Vendor: "Palo Alto Networks", Rule: gp}},
		{name: "java web start jnlp", svc: web("GET", "/app.jnlp", "<?xml version=\"1.0\"?>\n<jnlp spec=\"1.0+\" codebase=\"http://example.com/\">\n<application-desc main-class=\"Main\">\n<argument>a</argument><argument>b</argument><argument>c</argument><argument>d</argument><argument>e</argument><argument>f</argument><argument>vsys1</argument>\n</application-desc></jnlp>")},
		{name: "sslvpnd http validation without prefix", svc: bannerService(22, "tcp", "do_http_validate:447 Content-Length (11) on uri (/remote/login) not allowed.\n"),
			want: wantMatch{Vendor: "Fortinet", Rule: fgt}},
		{name: "sslvpnd http validation with prefix", svc: bannerService(22, "tcp", "[1234:root:0]do_http_validate:447 Content-Length (11) on uri (/remote/logincheck) not allowed.\n"),
			want: wantMatch{Vendor: "Fortinet"}},
		{name: "another daemon on another uri", svc: bannerService(22, "tcp", "handle_request:12 refused uri (/api/login) from 10.0.0.1\n")},
		{name: "srx ike sa table", svc: bannerService(22, "tcp", "Index   State  Initiator cookie  Responder cookie  Mode           Remote Address\n10827715 UP    ccb95f0882a044a8  67c1a3d54ae8f069  IKEv2          198.51.100.83\n"),
			want: wantMatch{Vendor: "Juniper Networks", Rule: srx}},
		{name: "srx flow session", svc: bannerService(22, "tcp", "Session ID: 17179902569, Policy name: allow-out/270, HA State: Active, Timeout: 18, Session State: Valid\n  In: 192.168.99.201/18277 --> 198.51.100.95/722;icmp, Conn Tag: 0x0, If: reth1.1000, Pkts: 1, Bytes: 84,\n"),
			want: wantMatch{Vendor: "Juniper Networks", Rule: srx}},
		{name: "srx flow session, older release", svc: bannerService(22, "tcp", "Session ID: 1, Policy name: self-traffic-policy/1, Timeout: 1800, Valid\n"),
			want: wantMatch{Vendor: "Juniper Networks", Rule: srx}},
		{name: "vsrx memory with srxpfe", svc: bannerService(22, "tcp", "System memory usage distribution:\n        Total memory: 16715220 Kbytes (100%)\nPid     VM-Kbytes(  %  ) Resident(  %  ) Process-name\n  17402  14018780(83.87)  12968400(77.59) srxpfe\n"),
			want: wantMatch{Vendor: "Juniper Networks", Rule: vsrx}},
		{name: "a linux memory table", svc: bannerService(22, "tcp", "System memory usage distribution:\n  17402  14018780(83.87)  12968400(77.59) nginx\n")},
		{name: "gaia show-cluster-state", svc: web("POST", "/gaia_api/show-cluster-state", `{"additional-info": "", "cluster-status": "ok", "message": "Cluster Active", "mode": "high-availability", "other-cluster-members": [{"load": 0, "name": "GW02", "peer-id": 2, "status": "standby"}], "this-cluster-member": {"load": 100, "name": "GW01", "peer-id": 1, "status": "active"}}`),
			want: wantMatch{Vendor: "Check Point", Rule: gaia}},
		{name: "a cluster answer without members", svc: web("GET", "/health", `{"cluster-status": "ok", "nodes": 3}`)},
	})
}
