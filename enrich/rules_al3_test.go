package enrich

import (
	"strings"
	"testing"
)

// sccrp builds a PPTP Start-Control-Connection-Reply as RFC 2637 (2.2) lays
// it out and a packet capture keeps it: 156 octets, Length 0x009c, Message
// Type 1, Magic Cookie 0x1a2b3c4d, Control Message Type 2, then version,
// result and error codes, framing and bearer capabilities, maximum channels
// and firmware revision, then Host Name and Vendor String, 64 octets each,
// NUL-padded. The fixed fields are those of PacketLife's capture
// (PPTP_negotiation.cap, a Cisco router's reply).
func sccrp(host, vendor string) string {
	field := func(s string) string { return s + strings.Repeat("\x00", 64-len(s)) }
	head := "\x00\x9c\x00\x01\x1a\x2b\x3c\x4d\x00\x02\x00\x00" +
		"\x01\x00\x01\x00\x00\x00\x00\x03\x00\x00\x00\x03\x00\x00\x12\x00"
	return head + field(host) + field(vendor)
}

// TestRules_AL3PPTPReplyVendor checks the raw PPTP reply tell
// (90-al3-collections.yaml): RouterOS's vendor string "MikroTik" in the
// reply's Vendor String field names RouterOS; another vendor's string, a
// host name that says MikroTik beside another vendor's string, and the
// vendor text outside a control-connection reply name nothing.
func TestRules_AL3PPTPReplyVendor(t *testing.T) {
	if got := len(sccrp("a", "b")); got != 156 {
		t.Fatalf("sccrp builds %d octets, want 156", got)
	}
	checkMatches(t, []matchCase{
		{"routeros reply", bannerService(1723, "tcp", sccrp("gw-branch1", "MikroTik")), wantMatch{Vendor: "MikroTik", Rule: "al3-mikrotik-routeros-pptp-sccrp-vendor"}},
		{"routeros reply with the default identity", bannerService(1723, "tcp", sccrp("MikroTik", "MikroTik")), wantMatch{Vendor: "MikroTik"}},
		{"cisco router reply", bannerService(1723, "tcp", sccrp("ixro-smdev-r1", "Cisco Systems, Inc.")), wantMatch{}},
		{"identity MikroTik, another vendor", bannerService(1723, "tcp", sccrp("MikroTik", "Linux")), wantMatch{}},
		{"request, not reply", bannerService(1723, "tcp", strings.Replace(sccrp("ixia", "MikroTik"), "\x00\x02", "\x00\x01", 1)), wantMatch{}},
		{"the words on another protocol", bannerService(1723, "tcp", "220 MikroTik"), wantMatch{}},
		// group AL1 found the same tell in its captures at the same time:
		// its look-alikes (nDPI's Windows RRAS reply) and edges
		{"routeros reply, empty host name", bannerService(1723, "tcp", sccrp("", "MikroTik")), wantMatch{Vendor: "MikroTik"}},
		{"windows rras reply", bannerService(1723, "tcp", sccrp("", "Microsoft")), wantMatch{}},
		{"vendor field longer", bannerService(1723, "tcp", sccrp("", "MikroTikX")), wantMatch{}},
		{"mikrotik in a text banner", bannerService(1723, "tcp", "\x00MikroTik\x00 hello"), wantMatch{}},
	})
}
