package ingest

import "testing"

// TestTLSVersionText: every tool's spelling of a protocol version reads
// as the probes write it; what is no TLS or SSL version stays as it is.
func TestTLSVersionText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"TLS_1_2": "TLSv1.2", "SSL_2_0": "SSLv2", "SSL_3_0": "SSLv3", "TLS_1_0": "TLSv1.0", // sslyze
		"tls12": "TLSv1.2", "tls13": "TLSv1.3", "ssl30": "SSLv3", "tls10": "TLSv1.0", // tlsx, nuclei
		"TLSv12": "TLSv1.2", "TLSv11": "TLSv1.1", // Zeek
		"TLSv1_2": "TLSv1.2", "tlsv1_3": "TLSv1.3", "TLSv1": "TLSv1.0", "sslv3": "SSLv3", // Censys
		"TLS1.3": "TLSv1.3", "TLS1": "TLSv1.0", "TLSv1.2": "TLSv1.2", "SSLv2": "SSLv2", "tls 1": "TLSv1.0", // testssl.sh, openconnect
		"TLS 1.3": "TLSv1.3", "SSL 3.0": "SSLv3", // a browser's HAR
		"DTLSv12": "DTLSv12", "QUIC": "QUIC", "TLS1.4": "TLS1.4", "": "", "unknown": "unknown",
	} {
		if got := tlsVersionText(in); got != want {
			t.Errorf("tlsVersionText(%q) = %q, want %q", in, got, want)
		}
	}
}
