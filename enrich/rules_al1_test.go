package enrich

import (
	"bytes"
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_AL1PPTPReplyVendor checks the raw PPTP Start-Control-Connection-
// Reply (90-al1-pcaps.yaml) as the pcap reader stores it: RouterOS's vendor
// field names MikroTik; Windows RRAS's "Microsoft" reply (nDPI's pptp.pcap
// layout), "MikroTik" outside a PPTP reply, and a request naming MikroTik
// name nothing.
func TestRules_AL1PPTPReplyVendor(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	// msg builds a 156-byte PPTP control message of type typ (RFC 2637 2.1/2.2)
	// with the host and vendor names in their 64-octet fields.
	msg := func(typ byte, host, vendor string) []byte {
		b := make([]byte, 156)
		copy(b, []byte{0x00, 0x9c, 0x00, 0x01, 0x1a, 0x2b, 0x3c, 0x4d, 0x00, typ, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00})
		copy(b[16:], []byte{0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0x00, 0x01})
		copy(b[28:92], host)
		copy(b[92:], vendor)
		return b
	}
	svc := func(port int, sent, got []byte) *ingest.Service {
		return &ingest.Service{Port: port, Transport: "tcp", Probes: []ingest.Probe{{Name: "pcap:banner", Banner: &ingest.Banner{Sent: ingest.BytesBody(sent), Received: ingest.BytesBody(got)}}}}
	}
	req := msg(1, "", "")
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"routeros reply", svc(1723, req, msg(2, "gw1", "MikroTik")), wantMatch{Vendor: "MikroTik"}},
		{"routeros reply, empty host name", svc(1723, req, msg(2, "", "MikroTik")), wantMatch{Vendor: "MikroTik"}},
		{"windows rras reply", svc(1723, req, msg(2, "", "Microsoft")), wantMatch{}},
		{"mikrotik in a text banner", svc(1723, nil, []byte("\x00MikroTik\x00 hello")), wantMatch{}},
		{"a request naming mikrotik", svc(1723, nil, msg(1, "", "MikroTik")), wantMatch{}},
		{"vendor field longer", svc(1723, req, msg(2, "", "MikroTikX")), wantMatch{}},
	}
	if !bytes.Contains(msg(2, "", "MikroTik"), []byte("\x00MikroTik\x00")) {
		t.Fatal("test message layout")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, tt.want)
		})
	}
}
