package ingest

import "testing"

// TestCipherName: suites crypto/tls names, the ones it does not that
// appliances negotiate (DHE, and the PSK suites of ocserv's DTLS), and
// codes nobody named keep their hex form; a code beyond 16 bits is none.
func TestCipherName(t *testing.T) {
	t.Parallel()
	for code, want := range map[uint64]string{
		0xc02f:  "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
		0x0039:  "TLS_DHE_RSA_WITH_AES_256_CBC_SHA",
		0x00a9:  "TLS_PSK_WITH_AES_256_GCM_SHA384",
		0xccab:  "TLS_PSK_WITH_CHACHA20_POLY1305_SHA256",
		0xfafa:  "0xfafa",
		0x10000: "",
	} {
		if got := cipherName(code); got != want {
			t.Errorf("cipherName(%#x) = %q, want %q", code, got, want)
		}
	}
}
