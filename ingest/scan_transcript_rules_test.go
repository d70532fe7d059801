package ingest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
)

// TestTranscript_Rules runs each client transcript through the adapter
// and the built-in rules, as `netintel rules match --format
// http-transcript` does: the FortiGate replay is named Fortinet by every
// client that kept the factory certificate or the login redirect page
// (curl's certificate lines, openconnect's and openfortivpn's dumped
// bodies, openfortivpn's certificate block alone), and the version from
// the page's ETag where the client printed the headers; wget's headers
// alone, which honeypots copy, name nothing; the public transcripts of
// other servers name nothing.
func TestTranscript_Rules(t *testing.T) {
	t.Parallel()
	rules, err := enrich.DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ file, vendor, version string }{ // version: the exact version
		{"curl-v-h2-replay.txt", "Fortinet", "7.2.6"},
		{"curl-iv-h2-replay.txt", "Fortinet", "7.2.6"},
		{"curl-Iv-h1-replay.txt", "Fortinet", "7.2.6"},
		{"openconnect-fortinet-replay.txt", "Fortinet", "7.2.6"},
		{"openfortivpn-vv-replay.txt", "Fortinet", "7.2.6"},
		{"openfortivpn-untrusted-replay.txt", "Fortinet", ""},
		{"openssl-s_client-replay.txt", "Fortinet", ""},
		{"wget-S-replay.txt", "", ""},
		{"curl-Iv-lab-rzd-http.txt", "", ""},
		{"curl-Iv-lab-rzd-https.txt", "", ""},
		{"curl-v-galah-example.txt", "", ""},
		{"wget-mdda-blog.txt", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			f, err := os.Open("testdata/transcript/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			n := 0
			err = ingest.Transcript(f, ingest.Options{}, func(_ int, o ingest.Observation) error {
				n++
				fp, _ := rules.Match(o.Service, o.Flow)
				if fp.Vendor != tt.vendor || fp.ExactVersion != tt.version {
					t.Errorf("%s %d: %q %q (rule %s), want %q %q", o.IP, o.Service.Port, fp.Vendor, fp.ExactVersion, fp.RuleID, tt.vendor, tt.version)
				}
				return nil
			}, func(le ingest.LineError) { t.Errorf("bad record: %v", le) })
			if err != nil || n != 1 {
				t.Fatalf("%d services, err %v", n, err)
			}
		})
	}
}

// TestIKEScan_Rules runs ike-scan's output through the built-in rules: the
// vendor IDs (58-ike.yaml), the Firewall-1 notify types and the backoff
// guesses that name one vendor (58-ike-scan.yaml); a bare notify 14 and an
// IKEv2 answer without vendor IDs name nothing.
func TestIKEScan_Rules(t *testing.T) {
	t.Parallel()
	rules, err := enrich.DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file    string
		vendors []string
	}{
		{"checkpoint-ngx-main-mode.txt", []string{"Check Point"}},
		{"netscreen-aggressive-multiline.txt", []string{"Juniper Networks"}},
		{"checkpoint-notify-9101.txt", []string{"Check Point"}},
		{"notify-14.txt", []string{""}},
		{"ikev2-sa-init-multiline.txt", []string{""}},
		{"readme-examples.txt", []string{"Cisco", "", "Check Point", "Check Point"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			f, err := os.Open("testdata/ikescan/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var got []string
			err = ingest.IKEScan(f, ingest.Options{}, func(_ int, o ingest.Observation) error {
				fp, _ := rules.Match(o.Service, o.Flow)
				got = append(got, fp.Vendor)
				return nil
			}, func(le ingest.LineError) { t.Errorf("bad record: %v", le) })
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != strings.Join(tt.vendors, "|") {
				t.Errorf("vendors %q, want %q", got, tt.vendors)
			}
		})
	}
}
