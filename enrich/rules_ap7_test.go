package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_AP7DTLSPSK checks ap7-ocserv-dtls-psk (94-ap7-recorded.yaml):
// a DTLS 1.2 handshake on the SSL VPN's port settled with a PSK suite is
// ocserv's (its dtls-psk); the ASA's certificate suites, CoAP's PSK suite
// on its own port, and a PSK suite over TLS on TCP are not.
func TestRules_AP7DTLSPSK(t *testing.T) {
	const rule = "ap7-ocserv-dtls-psk"
	dtls := func(port int, transport, version, cipher string) *ingest.Service {
		return &ingest.Service{Port: port, Transport: transport, Probes: []ingest.Probe{{Name: "pcap:dtls", TLS: &ingest.TLS{Version: version, Cipher: cipher}}}}
	}
	checkMatches(t, []matchCase{
		{"ocserv dtls-psk aes-256-gcm", dtls(443, "udp", "DTLSv1.2", "TLS_PSK_WITH_AES_256_GCM_SHA384"), wantMatch{Vendor: "OpenConnect", Rule: rule}},
		{"ocserv dtls-psk chacha20", dtls(443, "udp", "DTLSv1.2", "TLS_PSK_WITH_CHACHA20_POLY1305_SHA256"), wantMatch{Vendor: "OpenConnect", Rule: rule}},
		{"asa dtls 1.2 ecdhe", dtls(443, "udp", "DTLSv1.2", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"), wantMatch{}},
		{"coap dtls-psk ccm8", dtls(5684, "udp", "DTLSv1.2", "TLS_PSK_WITH_AES_128_CCM_8"), wantMatch{}},
		{"psk over tls on tcp", dtls(443, "tcp", "TLSv1.2", "TLS_PSK_WITH_AES_256_GCM_SHA384"), wantMatch{}},
		{"unnamed psk code", dtls(443, "udp", "DTLSv1.2", "0x00a9"), wantMatch{}},
	})
}
