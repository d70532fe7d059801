package nuclei

import "testing"

// TestVendorOf_ProductLines: a template or favicon entry is given the
// product line it names, not a sibling line of the same vendor (the
// Meraki Dashboard's favicon is not an ASA).
func TestVendorOf_ProductLines(t *testing.T) {
	tests := []struct{ id, vendor, product string }{
		{"cisco-meraki", "Cisco", "Meraki"},
		{"cisco-meraki-dashboard", "Cisco", "Meraki"},
		{"cisco-asa-panel", "Cisco", "ASA"},
		{"cisco-anyconnect", "Cisco", "ASA"},
		{"fortinet-fortigate-panel", "Fortinet", "FortiGate"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			s, ok := vendorOf(&template{ID: tt.id}, "http/technologies/favicon-detect.yaml")
			if !ok || s.vendor != tt.vendor || s.product != tt.product {
				t.Errorf("got %q %q (%v), want %q %q", s.vendor, s.product, ok, tt.vendor, tt.product)
			}
		})
	}
}
