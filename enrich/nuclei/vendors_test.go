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

// TestVendorOf_NotInsideWords: a scope's word inside another product's
// name names nothing (round AC3 found Mailgard WebMail, a card-system
// entry and Polycom's favicon named Microsoft RD Web Access and Ubiquiti
// UniFi), while the products' own ids still are.
func TestVendorOf_NotInsideWords(t *testing.T) {
	tests := []struct {
		id, rel string
		vendor  string
	}{
		{"mailgard-webmail", "http/technologies/fingerprinthub-web-fingerprints.yaml", ""},
		{"golden-dragon-card-ecard-website-query-subsystem", "http/technologies/fingerprinthub-web-fingerprints.yaml", ""},
		{"unified-management-console-polycom", "http/technologies/favicon-detect.yaml", ""},
		{"rdweb-panel", "http/exposed-panels/rdweb-panel.yaml", "Microsoft"},
		{"rd-web-access", "http/technologies/favicon-detect.yaml", "Microsoft"},
		{"unifi-panel", "http/exposed-panels/unifi-panel.yaml", "Ubiquiti"},
		{"unifi-video-controller-airvision", "http/technologies/favicon-detect.yaml", "Ubiquiti"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			s, ok := vendorOf(&template{ID: tt.id}, tt.rel)
			if tt.vendor == "" {
				if ok {
					t.Errorf("named %q %q, want nothing", s.vendor, s.product)
				}
				return
			}
			if !ok || s.vendor != tt.vendor {
				t.Errorf("got %q (%v), want %q", s.vendor, ok, tt.vendor)
			}
		})
	}
}
