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
		// round AT: openconnect's CONNECT answer with the server's timers
		// (the ASA's DPD 30 / keepalive 20 after 200 OK, ocserv's keepalive
		// 32400 after 200 CONNECTED); a refused CONNECT names nothing
		{"openconnect-asa-connect-sydney.txt", "Cisco", ""},
		{"openconnect-nm-syslog-asa-tuebingen.txt", "Cisco", ""},
		{"openconnect-ocserv-8443-connected-guide.txt", "OpenConnect", ""},
		{"openconnect-journal-ocserv-401-streisand.txt", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			fps := matchFile(t, rules, ingest.Transcript, "testdata/transcript/"+tt.file)
			if len(fps) != 1 {
				t.Fatalf("%d services, want 1", len(fps))
			}
			if fp := fps[0]; fp.Vendor != tt.vendor || fp.ExactVersion != tt.version {
				t.Errorf("%q %q (rule %s), want %q %q", fp.Vendor, fp.ExactVersion, fp.RuleID, tt.vendor, tt.version)
			}
		})
	}
}

// TestTranscript_RulesClientLogs runs openconnect's logs as users pasted
// them into its issue trackers (group AJ7 kept them raw: timestamped
// OpenConnect-GUI lines, answers whose request only the fetched URL
// names, a reconnect to the same address) through the adapter and the
// rules: one service per address and port, named where the answers carry
// the product's tells; the two whose only tell was a redirect chain the
// log does not print name nothing.
func TestTranscript_RulesClientLogs(t *testing.T) {
	t.Parallel()
	rules, err := enrich.DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ file, vendor string }{
		{"gitlab-openconnect-245-nc-dssignin.txt", "Ivanti"},
		{"gitlab-openconnect-459-pulse-ift-101.txt", "Ivanti"},
		{"gitlab-openconnect-673-asa-context-cscou.txt", ""},
		{"gitlab-openconnect-724-asa-404-object-moved.txt", "Cisco"},
		{"gitlab-openconnect-825-asa-200-coop.txt", "Cisco"},
		{"openconnect-gui-372-asa-404-upgrade.txt", "Cisco"},
		{"pastebin-0kPwFYJ0-openconnect-juniper-nc.txt", ""},
	} {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			fps := matchFile(t, rules, ingest.Transcript, "../testdata/scans/aj7/"+tt.file)
			if len(fps) != 1 || fps[0].Vendor != tt.vendor {
				var got []string
				for _, fp := range fps {
					got = append(got, fp.Vendor+" ("+fp.RuleID+")")
				}
				t.Errorf("services %q, want one named %q", got, tt.vendor)
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
			var got []string
			for _, fp := range matchFile(t, rules, ingest.IKEScan, "testdata/ikescan/"+tt.file) {
				got = append(got, fp.Vendor)
			}
			if strings.Join(got, "|") != strings.Join(tt.vendors, "|") {
				t.Errorf("vendors %q, want %q", got, tt.vendors)
			}
		})
	}
}

// matchFile reads a file with an adapter, as `netintel rules match` does,
// and returns what the rules name for each service, in order; a bad
// record fails the test.
func matchFile(t *testing.T, rules *enrich.Rules, read ingest.Adapter, path string) []enrich.Fingerprint {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var fps []enrich.Fingerprint
	err = read(f, ingest.Options{}, func(_ int, o ingest.Observation) error {
		fp, _ := rules.Match(o.Service, o.Flow)
		fps = append(fps, fp)
		return nil
	}, func(le ingest.LineError) { t.Errorf("bad record: %v", le) })
	if err != nil {
		t.Fatal(err)
	}
	return fps
}
