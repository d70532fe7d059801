package config

import (
	"strings"
	"testing"
)

func TestLoopback(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true},
		{"127.0.0.2:0", true},
		{"[::1]:8080", true},
		{"localhost:8080", true},
		{":8080", false},
		{"0.0.0.0:8080", false},
		{"[::]:8443", false},
		{"192.0.2.10:8080", false},
		{"api.example.com:443", false},
		{"nohostport", false},
	}
	for _, tc := range tests {
		if got := Loopback(tc.addr); got != tc.want {
			t.Errorf("Loopback(%q) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

// Issue 31 item 7: a role listening beyond loopback with a published key
// refuses to start, naming the key and never its value.
func TestConfig_CheckExposedKeys(t *testing.T) {
	const own = "an-operator-secret-9f2c"
	tests := []struct {
		name        string
		internal    string
		hash        string
		products    []string
		addr        string
		wantErr     []string
		wantNoError bool
	}{
		{name: "loopback keeps dev keys", internal: "dev-internal-key-change-me", hash: "", products: Products, addr: "127.0.0.1:8080", wantNoError: true},
		{name: "own keys beyond loopback", internal: own, hash: own, products: Products, addr: "0.0.0.0:8080", wantNoError: true},
		{name: "empty internal key is not a dev key", internal: "", hash: own, products: Products, addr: ":8080", wantNoError: true},
		{name: "dev internal key on the backend", internal: "dev-internal-key-change-me", hash: own, products: []string{"ip"}, addr: "0.0.0.0:8080",
			wantErr: []string{"api.internal_key", "NETINTEL_INTERNAL_KEY", "0.0.0.0:8080"}},
		{name: "dev internal key on the gateway", internal: "dev-internal-key-change-me", hash: own, products: []string{"gateway"}, addr: "[::]:8443",
			wantErr: []string{"api.internal_key"}},
		{name: "shipped hash key", internal: own, hash: "dev-gateway-hash-key-change-me", products: Products, addr: ":8080",
			wantErr: []string{"gateway.hash_key", "NETINTEL_GATEWAY_HASH_KEY"}},
		{name: "empty hash key", internal: own, hash: "", products: []string{"gateway"}, addr: "192.0.2.1:8443",
			wantErr: []string{"gateway.hash_key"}},
		{name: "hash key unused without the gateway", internal: own, hash: "", products: []string{"ip", "tld", "secrets"}, addr: ":8080", wantNoError: true},
		{name: "both at once", internal: "dev-internal-key-change-me", hash: "netintel-dev-gateway-hash-key", products: Products, addr: ":8080",
			wantErr: []string{"api.internal_key", "gateway.hash_key"}},
		{name: "no listener", internal: "dev-internal-key-change-me", hash: "", products: nil, addr: ":8080", wantNoError: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			c.API.InternalKey, c.Gateway.HashKey = tc.internal, tc.hash
			err := c.CheckExposedKeys(tc.products, func(string) string { return tc.addr })
			if tc.wantNoError {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			for _, v := range []string{"dev-internal-key-change-me", "dev-gateway-hash-key-change-me", "netintel-dev-gateway-hash-key", own} {
				if strings.Contains(err.Error(), v) {
					t.Errorf("error shows a key value: %q", err)
				}
			}
		})
	}
}
