package ingest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
)

// TestShadowserver_Rules runs each Shadowserver report of testdata through
// the adapter and the built-in rules, as `netintel rules match --format
// shadowserver` does: the appliances' rows are named by their own
// evidence (FortiGate and FortiWiFi certificates, ZyWALL/USG default
// certificates and DNS proxy, MikroTik's telnet greeting and SNMP
// sysDescr, Cisco's SSH identification line) or by Shadowserver's device
// identification (device_id's Fortinet FortiGate, read as detected); the
// other rows name nothing.
func TestShadowserver_Rules(t *testing.T) {
	t.Parallel()
	rules, err := enrich.DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	const (
		fgt    = "Fortinet/fortinet-fortigate-sslvpn"
		zyxel  = "Zyxel/zyxel-usg"
		mtik   = "MikroTik/ai1-mikrotik-telnet-greeting-pipe-separated"
		none   = "/"
		device = "Fortinet/detected-fortinet-fortigate"
	)
	tests := []struct {
		file     string
		want     []string // per service, "vendor/rule id prefix"
		versions []string // the exact versions named, in order
	}{
		{"shadowserver-scan_ssl.csv", []string{fgt, none, fgt}, nil},
		{"shadowserver-scan_ssl_poodle.csv", []string{zyxel, none, none, none, "Fortinet/ai1-fortigate-self-signed-issuer-serial", fgt}, nil},
		{"shadowserver-scan_ssl_freak.csv", []string{none, "Zyxel/zyxel-uag-default-certificate-model-mac", none, "Zyxel/ai1-zyxel-default-certificate-model-mac", none, zyxel}, nil},
		{"shadowserver-scan_dns.csv", []string{none, none, zyxel, none, none}, nil},
		{"shadowserver-scan_telnet.csv", []string{mtik, mtik}, []string{"6.5", "6.45.3"}},
		{"shadowserver-scan6_telnet.csv", []string{mtik, mtik}, []string{"6.5", "6.45.3"}},
		{"shadowserver-scan_snmp.csv", []string{none, "MikroTik/mikrotik-routeros-snmp", none}, nil},
		{"shadowserver-scan_ssh.csv", []string{none, none, "Cisco/cisco-ssh"}, nil},
		{"shadowserver-device_id.csv", []string{device, device, device}, nil},
		{"shadowserver-scan_http.csv", []string{none, none}, nil},
		{"shadowserver-scan_http_vulnerable.csv", []string{none, none, none}, nil},
		{"shadowserver-scan_exchange.csv", []string{none, none, none, none, none, none, none}, nil},
		{"shadowserver-scan_isakmp.csv", []string{none, none}, nil},
		{"shadowserver-scan_vnc.csv", []string{none, none}, nil},
		{"shadowserver-scan_rdp.csv", []string{none, none}, nil},
		{"shadowserver-scan_ftp.csv", []string{none, none}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			f, err := os.Open("testdata/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			var got, versions []string
			err = ingest.Adapters()["shadowserver"](f, ingest.Options{}, func(_ int, o ingest.Observation) error {
				fp, _ := rules.Match(o.Service, o.Flow)
				got = append(got, fp.Vendor+"/"+fp.RuleID)
				if fp.ExactVersion != "" {
					versions = append(versions, fp.ExactVersion)
				}
				return nil
			}, func(le ingest.LineError) { t.Errorf("bad record: %v", le) })
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(versions, ",") != strings.Join(tt.versions, ",") {
				t.Errorf("versions %q, want %q", versions, tt.versions)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d services %q, want %d", len(got), got, len(tt.want))
			}
			for i, g := range got {
				if vendor, _, _ := strings.Cut(tt.want[i], "/"); !strings.HasPrefix(g, tt.want[i]) || (vendor == "" && g != none) {
					t.Errorf("service %d: %q, want %q", i+1, g, tt.want[i])
				}
			}
		})
	}
}
