package ingest

import (
	"os"
	"strings"
	"testing"
)

// TestIKEScan_Files reads ike-scan 1.9.5's output over the responses its
// own test suite recorded (run here with --readpktfromfile) and the
// examples of its README: each responder one UDP service on port 500
// with its lines as a banner, the fields -M prints on lines of their own
// joined to their host, a multi-homed answer filed under the address that
// answered, and the backoff table's guess and first receive time on its
// host.
func TestIKEScan_Files(t *testing.T) {
	t.Parallel()
	type svc struct {
		ip, banner, at string // banner: text the banner must hold; at: observed_at ("" = the file's)
		lines          int
	}
	tests := []struct {
		file string
		want []svc
	}{
		{"checkpoint-ngx-main-mode.txt", []svc{{"127.0.0.1", "VID=f4ed19e0c114eb516faaac0ee37daf2807b4381f000000010000138d459becd70000000018000000 (Firewall-1 NGX or later)", "", 1}}},
		{"netscreen-aggressive-multiline.txt", []svc{{"127.0.0.1", "VID=166f932d55eb64d8e4df4fd37e2313f0d0fd84510000000000000000 (Netscreen-15)", "", 10}}},
		{"checkpoint-notify-9101.txt", []svc{{"127.0.0.1", `Notify message 9101 (Firewall-1) Message="User testing unknown.\000" HDR=(CKY-R=0000000000000000)`, "", 1}}},
		{"notify-14.txt", []svc{{"127.0.0.1", "Notify message 14 (NO-PROPOSAL-CHOSEN)", "", 1}}},
		{"ikev2-sa-init-multiline.txt", []svc{{"127.0.0.1", "SA=(Encr=AES_CBC,KeyLength=128 Integ=HMAC_SHA1_96 Prf=HMAC_SHA1 DH_Group=14:modp2048)", "", 5}}},
		{"readme-examples.txt", []svc{
			{"10.0.1.98", "Implementation guess: Cisco IOS / PIX", "2003-01-14T13:00:09Z", 2},
			{"10.0.1.22", "Notify message 14 (NO-PROPOSAL-CHOSEN)", "", 1},
			{"10.0.1.130", "Notify message 9101 (No common authentication method with Firewall.)", "", 1},
			{"172.16.2.2", "Implementation guess: Firewall-1 4.1/NG", "2003-01-14T13:00:09Z", 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			f, err := os.Open("testdata/ikescan/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var got []Observation
			err = IKEScan(f, Options{}, func(_ int, o Observation) error {
				got = append(got, o)
				return nil
			}, func(e LineError) { t.Errorf("bad record: %v", e) })
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d services, want %d", len(got), len(tt.want))
			}
			for i, w := range tt.want {
				o := got[i]
				if o.IP != w.ip || o.Service.Port != 500 || o.Service.Transport != "udp" || len(o.Service.Probes) != 1 {
					t.Fatalf("service %d: %s %d/%s with %d probes, want %s 500/udp with 1", i, o.IP, o.Service.Port, o.Service.Transport, len(o.Service.Probes), w.ip)
				}
				p := o.Service.Probes[0]
				text := p.Banner.Received.Data
				if p.Name != "ike-scan" || !strings.Contains(text, w.banner) || strings.Count(text, "\n")+1 != w.lines {
					t.Errorf("service %d: probe %q banner %q, want it to hold %q in %d lines", i, p.Name, text, w.banner, w.lines)
				}
				if w.at != "" && o.ObservedAt != w.at {
					t.Errorf("service %d: observed_at %s, want %s", i, o.ObservedAt, w.at)
				}
			}
		})
	}
}

// TestIKEScan_Bad: a responder line whose host is not an address is
// reported by its line and the host; text that is not ike-scan output is
// refused.
func TestIKEScan_Bad(t *testing.T) {
	t.Parallel()
	var bad []string
	n := 0
	in := "Starting ike-scan 1.9.5 with 2 hosts (http://www.nta-monitor.com/tools/ike-scan/)\nvpn.example.com\tMain Mode Handshake returned HDR=(CKY-R=00)\n192.0.2.7\tNotify message 14 (NO-PROPOSAL-CHOSEN)\n"
	if err := IKEScan(strings.NewReader(in), Options{}, func(int, Observation) error { n++; return nil }, func(e LineError) { bad = append(bad, e.Error()) }); err != nil {
		t.Fatal(err)
	}
	if n != 1 || len(bad) != 1 || !strings.Contains(bad[0], `line 2`) || !strings.Contains(bad[0], `host "vpn.example.com": not an IP address`) {
		t.Errorf("%d services, errors %q; want 1 and one naming line 2 and the host", n, bad)
	}
	bad = nil
	if err := IKEScan(strings.NewReader("PORT STATE SERVICE\n500/udp open isakmp\n"), Options{}, func(int, Observation) error { n++; return nil }, func(e LineError) { bad = append(bad, e.Error()) }); err != nil {
		t.Fatal(err)
	}
	if len(bad) != 1 || !strings.Contains(bad[0], "not ike-scan output") {
		t.Errorf("errors %q, want the file refused", bad)
	}
	// A blog's paste reflowed into running text: the header is there, the
	// result is inside a line; nothing is read, and the line is named.
	bad, n = nil, 0
	reflowed := "Starting ike-scan 1.9 with 1 hosts (http://www.nta-monitor.com/tools/ike-scan/)\nThe scan: 192.0.2.1 Main Mode Handshake returned HDR=(CKY-R=1234) SA=(Enc=3DES Hash=SHA1) VID=afcad71368a1f1c96b8696fc77570100 (Dead Peer Detection v1.0) Ending ike-scan 1.9: 1 hosts scanned\n"
	if err := IKEScan(strings.NewReader(reflowed), Options{}, func(int, Observation) error { n++; return nil }, func(e LineError) { bad = append(bad, e.Error()) }); err != nil {
		t.Fatal(err)
	}
	if n != 0 || len(bad) != 1 || !strings.Contains(bad[0], "line 2") || !strings.Contains(bad[0], "not at the start of a line") {
		t.Errorf("%d services, errors %q; want none and one naming line 2", n, bad)
	}
	// the whole run flowed into its header line
	bad, n = nil, 0
	oneLine := strings.ReplaceAll(strings.Replace(reflowed, "The scan: ", "", 1), "\n", " ")
	if err := IKEScan(strings.NewReader(oneLine), Options{}, func(int, Observation) error { n++; return nil }, func(e LineError) { bad = append(bad, e.Error()) }); err != nil {
		t.Fatal(err)
	}
	if n != 0 || len(bad) != 1 || !strings.Contains(bad[0], "line 1") || !strings.Contains(bad[0], "not at the start of a line") {
		t.Errorf("%d services, errors %q; want none and one naming line 1", n, bad)
	}
}
