package enrich

import "testing"

// TestRules_AQ3Classes checks the classes the group AQ3 round added
// (95-aq3-irlogs.yaml) and the look-alikes they must not name: Fireware's
// traffic record without its process tag against a record of the same words
// without the policy's -00 suffix and against another product's msg_id line;
// PAN-OS's audit op-command CSV against the same CSV with a non-XML command
// and against another log type; BIG-IP's Telemetry Streaming LTM event against
// the same category without a /Common/ object and a /Common/ path without the
// category.
func TestRules_AQ3Classes(t *testing.T) {
	checkMatches(t, []matchCase{
		{name: "fireware traffic record, message only", svc: bannerService(514, "udp", `msg_id="3000-0148" Deny Trusted External 60 tcp 20 64 10.0.0.5 203.0.113.9 51000 22 offset 10 S 123 win 64240  (Unhandled Internal Packet-00)`), want: wantMatch{Vendor: "WatchGuard", Rule: "aq3-watchguard-fireware-traffic-record-message-only"}},
		{name: "same words, no -00 policy", svc: bannerService(514, "udp", `msg_id="3000-0148" Allow Servers External 52 tcp 20 127 10.10.10.10 203.0.113.246 26450 443 (HTTPS)`), want: wantMatch{}},
		{name: "other product msg_id line", svc: bannerService(514, "udp", `msg_id="1234-0001" user admin logged in from 10.0.0.1 (web-00)`), want: wantMatch{}},
		{name: "panos audit op command", svc: bannerService(514, "udp", `Apr 11 20:06:15 fw1 012345678901,2024/04/11 20:06:15,audit,2561,cli-op,admin,"<show><system><info/></system></show>",success`), want: wantMatch{Vendor: "Palo Alto Networks", Rule: "aq3-panos-audit-op-command-csv"}},
		{name: "audit csv with a plain command", svc: bannerService(514, "udp", `Apr 11 20:06:15 host 012345678901,2024/04/11 20:06:15,audit,2561,cli-op,admin,"ls -la",success`), want: wantMatch{}},
		{name: "other csv type with xml", svc: bannerService(514, "udp", `Apr 11 20:06:15 host 012345678901,2024/04/11 20:06:15,export,2561,gui-op,admin,"<show><x/></show>",success`), want: wantMatch{}},
		{name: "bigip telemetry ltm event", svc: bannerService(6514, "tcp", `{"event_source":"request_logging","hostname":"bigip1","client_ip":"192.0.2.9","virtual_name":"/Common/web_vs","telemetryEventCategory":"LTM"}`), want: wantMatch{Vendor: "F5", Rule: "aq3-f5-telemetry-streaming-module-event-common-partition"}},
		{name: "category without partition object", svc: bannerService(6514, "tcp", `{"event_source":"request_logging","virtual_name":"web_vs","telemetryEventCategory":"LTM"}`), want: wantMatch{}},
		{name: "partition path without category", svc: bannerService(6514, "tcp", `{"virtual_name":"/Common/web_vs","category":"LTM"}`), want: wantMatch{}},
	})
}
