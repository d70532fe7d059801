package ingest_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
)

// pcapSeen is one observation the pcap adapter read from a real capture,
// with what the built-in rules made of it.
type pcapSeen struct {
	o      ingest.Observation
	vendor string
}

func (s pcapSeen) String() string {
	what := ""
	switch {
	case s.o.Flow != nil:
		what = "flow " + s.o.Flow.Protocol
	case s.o.Service != nil:
		what = s.o.Service.Probes[0].Name
	}
	return s.o.IP + " " + what + " -> " + s.vendor
}

// readCapture runs a capture of testdata/pcap through the pcap adapter and
// the built-in rules, as `netintel rules match --format pcap` does.
func readCapture(t *testing.T, rules *enrich.Rules, file string) []pcapSeen {
	t.Helper()
	f, err := os.Open("testdata/pcap/" + file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var out []pcapSeen
	err = ingest.Pcap(f, ingest.Options{}, func(_ int, o ingest.Observation) error {
		if err := o.Normalize(); err != nil {
			t.Errorf("invalid observation: %v", err)
		}
		fp, _ := rules.Match(o.Service, o.Flow)
		out = append(out, pcapSeen{o, fp.Vendor})
		return nil
	}, func(le ingest.LineError) { t.Errorf("bad record: %v", le) })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPcap_RealCaptures reads real captures of public test suites
// (testdata/SOURCES.md) and checks what each yields against what nDPI,
// Zeek and Suricata found in them: the remote-access protocols by their
// packets on any port, the certificates, banners, vendor IDs and
// sysDescr as probes the rules read; and no VPN where there is none.
func TestPcap_RealCaptures(t *testing.T) {
	t.Parallel()
	rules, err := enrich.DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file string
		// want are the observations' "ip what -> vendor" lines, in any order.
		want []string
		// check looks further into the observations.
		check func(t *testing.T, got []pcapSeen)
	}{
		// nDPI: WireGuard 10.9.0.2:51820 with its handshake, and
		// 139.162.192.157:51820 taken up in its transport data.
		{"wireguard.pcap", []string{"10.9.0.2 flow wireguard -> WireGuard", "10.9.0.2 pcap:wireguard -> WireGuard", "139.162.192.157 flow wireguard -> WireGuard"},
			func(t *testing.T, got []pcapSeen) {
				f := got[0].o.Flow
				if f.Port != 51820 || f.Transport != "udp" || f.Basis != "" || f.Confidence != 0.95 {
					t.Errorf("flow %+v", f)
				}
				b := got[1].o.Service.Probes[0].Banner
				if b.Sent.Length != 148 || b.Received.Length != 92 {
					t.Errorf("handshake banner %d/%d bytes", b.Sent.Length, b.Received.Length)
				}
			}},
		// nDPI: WireGuard.Mullvad on UDP 5060 (SIP's port, where flow
		// inference by sizes does not look).
		{"mullvad_wireguard.pcap", []string{"198.54.131.98 flow wireguard -> WireGuard"}, func(t *testing.T, got []pcapSeen) {
			if f := got[0].o.Flow; f.Port != 5060 || f.Confidence != 0.8 {
				t.Errorf("flow %+v", f)
			}
		}},
		// nDPI: OpenVPN over TCP 1194 and 443 (one on loopback), UDP 13680
		// (twice), 1194, 443 and 1234.
		{"openvpn.pcap", []string{"10.251.71.30 flow openvpn -> OpenVPN", "46.101.231.218 flow openvpn -> OpenVPN", "127.0.0.1 flow openvpn -> OpenVPN",
			"139.59.151.137 flow openvpn -> OpenVPN", "139.59.151.137 flow openvpn -> OpenVPN", "85.134.13.165 flow openvpn -> OpenVPN",
			"107.161.86.131 flow openvpn -> OpenVPN", "217.138.197.43 flow openvpn -> OpenVPN",
			// the TLS handshakes the control channels carry (TLS 1.3's
			// certificate encrypted): named on OpenVPN's own port 1194
			// only (ap7-openvpn-control-channel-tls), where elsewhere the
			// speaker may be an appliance's SSL VPN or SoftEther's clone
			"10.251.71.30 pcap:openvpn-tls -> OpenVPN", "46.101.231.218 pcap:openvpn-tls -> ", "139.59.151.137 pcap:openvpn-tls -> ",
			"85.134.13.165 pcap:openvpn-tls -> OpenVPN", "107.161.86.131 pcap:openvpn-tls -> ", "217.138.197.43 pcap:openvpn-tls -> "}, func(t *testing.T, got []pcapSeen) {
			var ports, certs []string
			for _, s := range got {
				if s.o.Flow != nil {
					ports = append(ports, s.o.Flow.Transport+"/"+strconv.Itoa(s.o.Flow.Port))
					continue
				}
				tl := s.o.Service.Probes[0].TLS
				cn := "-"
				if tl.Subject != nil {
					cn = tl.Subject.CN + " by " + tl.Issuer.CN
				}
				certs = append(certs, fmt.Sprintf("%s/%d %s %s", s.o.Service.Transport, s.o.Service.Port, tl.Version, cn))
			}
			slices.Sort(ports)
			slices.Sort(certs)
			if strings.Join(ports, " ") != "tcp/1194 tcp/443 tcp/443 udp/1194 udp/1234 udp/13680 udp/13680 udp/443" {
				t.Errorf("ports %v", ports)
			}
			if want := "tcp/1194 TLSv1.0 PRO3 by PRO3|tcp/443 TLSv1.0 OpenVPN Server by OpenVPN CA|udp/1194 TLSv1.2 openvpn2.vpnunlimitedapp.com by server.vpnunlimitedapp.com|" +
				"udp/1234 TLSv1.3 -|udp/13680 TLSv1.2 OpenVPN Server by OpenVPN CA|udp/443 TLSv1.3 -"; strings.Join(certs, "|") != want {
				t.Errorf("control channel TLS %q, want %q", strings.Join(certs, "|"), want)
			}
		}},
		{"openvpn_nohmac_tcp.pcapng", []string{"10.251.71.30 flow openvpn -> OpenVPN", "10.251.71.30 pcap:openvpn-tls -> OpenVPN"}, nil},
		// tls-crypt hides the session id: the layout alone, on IPv6 loopback.
		{"openvpn-tlscrypt.pcap", []string{"::1 flow openvpn -> OpenVPN"}, func(t *testing.T, got []pcapSeen) {
			if c := got[0].o.Flow.Confidence; c != 0.8 {
				t.Errorf("confidence %v", c)
			}
		}},
		// Suricata's IKEv1 main mode: the responder's vendor IDs, Cisco Unity
		// among them.
		{"suricata-ikev1-isakmp-main-mode.pcap", []string{"192.168.12.2 flow ikev2 -> ", "192.168.12.2 pcap:isakmp -> Cisco"}, func(t *testing.T, got []pcapSeen) {
			if r := got[1].o.Service.Probes[0].Banner.Received.Text(); !strings.Contains(r, "vendor_ids: ") || !strings.Contains(r, "12f5f28c457168a9702d9fe274cc0100") {
				t.Errorf("banner %q", r)
			}
		}},
		// nDPI's IPsec capture (trimmed): IKEv2 on 500 and NAT-T on 4500,
		// the responders sending no vendor ID.
		{"ipsec_isakmp_esp-ike.pcap", []string{"109.237.187.193 flow ipsec -> ", "109.237.187.193 flow ikev2 -> ", "109.237.187.195 flow ipsec -> ",
			"109.237.187.195 flow ikev2 -> ", "109.237.187.194 flow ikev2 -> ", "109.237.187.225 flow ikev2 -> ", "109.237.187.131 flow ikev2 -> "}, nil},
		// Zeek's snmpwalk: the agent's sysDescr.
		{"zeek-snmpwalk-short.pcap", []string{"138.68.10.203 pcap:snmp -> "}, func(t *testing.T, got []pcapSeen) {
			s := got[0].o.Service
			if s.Port != 161 || s.Transport != "udp" || !strings.HasPrefix(s.Probes[0].Banner.Received.Text(), "Linux ubuntu-512mb-sfo2-01 4.4.0-31-generic") {
				t.Errorf("service %+v %q", s, s.Probes[0].Banner.Received.Text())
			}
		}},
		// nDPI's SNMP capture has no sysDescr answer (sysName, sysContact,
		// v3 reports): nothing.
		{"snmp.pcap", nil, nil},
		// nDPI: SSH servers on 22 and 8000.
		{"ssh.pcap", []string{"172.16.238.168 pcap:ssh -> ", "127.0.0.1 pcap:ssh -> "}, func(t *testing.T, got []pcapSeen) {
			if b := got[0].o.Service.Probes[0].Banner.Received.Text(); b != "SSH-2.0-OpenSSH_5.3\r\n" {
				t.Errorf("banner %q", b)
			}
			if b, p := got[1].o.Service.Probes[0].Banner.Received.Text(), got[1].o.Service.Port; b != "SSH-2.0-APACHE-SSHD-2.5.0\r\n" || p != 8000 {
				t.Errorf("banner %q on %d", b, p)
			}
		}},
		// A FortiGate's SSL-VPN on 10443 (nDPI's forticlient capture, one
		// connection): its default certificate names the vendor.
		{"forticlient-one-handshake.pcap", []string{"82.81.46.13 pcap:tls -> Fortinet"}, func(t *testing.T, got []pcapSeen) {
			tl := got[0].o.Service.Probes[0].TLS
			if got[0].o.Service.Port != 10443 || tl.Issuer == nil || !slices.Contains(tl.Issuer.O, "Fortinet") || tl.Version != "TLSv1.2" || tl.JA3S == "" || tl.SHA256 == "" {
				t.Errorf("TLS %+v", tl)
			}
		}},
		// nDPI's AnyConnect capture: the gateway's TLS (its operator's
		// Entrust certificate, the same on every connection: stored once),
		// a Code42 server, Slack (TLS taken up after the certificate) and
		// plain HTTP; nothing in clear says Cisco, and nothing is a VPN
		// by its packets. The DTLS tunnel on UDP 443 opens with Cisco's
		// pre-standard DTLS (0x0100) resuming the TLS session: its
		// ServerHello, no certificate.
		{"anyconnect-vpn.pcap", []string{"8.37.102.91 pcap:tls -> ", "8.37.102.91 pcap:dtls -> ", "99.86.34.156 pcap:tls -> ", "8.37.96.194 pcap:tls -> ",
			"184.25.56.77 pcap:http -> ", "184.25.56.77 pcap:http -> ", "10.0.0.149 pcap:http -> ", "10.0.0.151 pcap:http -> "}, func(t *testing.T, got []pcapSeen) {
			for _, s := range got {
				if s.o.Service != nil && s.o.Service.Probes[0].Name == "pcap:dtls" {
					if d := s.o.Service.Probes[0].TLS; s.o.Service.Transport != "udp" || s.o.Service.Port != 443 || d.Version != "DTLSv0.9" || d.Cipher != "TLS_DHE_RSA_WITH_AES_256_CBC_SHA" || d.Subject != nil {
						t.Errorf("DTLS %s %+v", s.o.Service.Transport, d)
					}
				}
			}
			tl := got[0].o.Service.Probes[0].TLS
			if tl.Subject == nil || tl.Subject.CN != "*.pandion.viasat.com" || tl.Cipher != "TLS_RSA_WITH_AES_256_CBC_SHA" || tl.JA3S != "82f0d8a75fa483d1cfe4b7085b784d7e" ||
				!slices.Contains(tl.SANs, "pandion.viasat.com") || tl.NotBefore != "2019-02-05T21:43:58Z" {
				t.Errorf("TLS %+v", tl)
			}
			if h := got[1].o.Hostnames; len(h) != 1 || h[0] != "slack.com" {
				t.Errorf("SNI %v", h)
			}
		}},
		// Negatives: HTTPS, HTTP over IPv6 and v4, RDP, Citrix ICA: services,
		// no VPN.
		{"http_ipv6.pcap", []string{"2a02:26f0:ad:197::236 pcap:tls -> "}, nil},
		{"http.pcapng", []string{"216.58.208.142 pcap:http -> "}, func(t *testing.T, got []pcapSeen) {
			r := got[0].o.Service.Probes[0].Response
			if r.Status != 301 || r.Body.Length != 219 || !strings.Contains(r.Body.Text(), "301 Moved") {
				t.Errorf("response %+v", r)
			}
		}},
		{"tls_1.2_unidirectional_server.pcapng", []string{"216.58.209.42 pcap:tls -> "}, nil},
		{"rdp.pcap", []string{"192.168.2.142 pcap:banner -> "}, nil},
		{"citrix.pcap", []string{"22.0.0.7 pcap:banner -> "}, nil},
		// SoftEther's client POSTs to its DDNS server, which does not answer
		// in the capture; its UDP 5004 sessions are SoftEther's own protocol:
		// nothing.
		{"softether.pcap", nil, nil},
		// DTLS: certificates sent in several fragments (joined), and a
		// server's lone datagram (a ServerHello names its sender the
		// server although the client's side was not captured).
		{"dtls_certificate_fragments.pcap", []string{"35.210.59.134 pcap:dtls -> ", "104.153.87.149 pcap:dtls -> "}, func(t *testing.T, got []pcapSeen) {
			for _, s := range got {
				d := s.o.Service.Probes[0].TLS
				switch s.o.IP {
				case "35.210.59.134":
					if d.Version != "DTLSv1.0" || d.Subject.CN != "*.opera-mini.net" || s.o.Service.Port != 44443 || s.o.Service.Transport != "udp" {
						t.Errorf("opera %+v", d)
					}
				case "104.153.87.149":
					if d.Version != "DTLSv1.2" || d.Subject.CN != "*.discord.gg" || d.Issuer.CN != "Sectigo RSA Domain Validation Secure Server CA" {
						t.Errorf("discord %+v", d)
					}
				}
			}
		}},
		// A client's SSLv2-format hello upgraded to TLS 1.0: the server's
		// handshake is read (NetScreen's signature server, not an
		// appliance: named by nothing).
		{"suricata-sslv2-tls-upgrade.pcap", []string{"10.157.4.11 pcap:tls -> "}, func(t *testing.T, got []pcapSeen) {
			if d := got[0].o.Service.Probes[0].TLS; d.Version != "TLSv1.0" || d.Subject.CN != "sigdb.secteam.netscreen.com" {
				t.Errorf("TLS %+v", d)
			}
		}},
		// STARTTLS: the greeting as the banner, and the handshake after
		// the plain exchange as a TLS probe of the same service.
		{"zeek-smtp-starttls.pcap", []string{"74.125.142.26 pcap:banner -> "}, func(t *testing.T, got []pcapSeen) {
			ps := got[0].o.Service.Probes
			if len(ps) != 2 || !strings.HasPrefix(ps[0].Banner.Received.Text(), "220 mx.google.com ESMTP") || ps[1].Name != "pcap:tls" ||
				ps[1].TLS.Subject == nil || ps[1].TLS.Subject.CN != "mx.google.com" {
				t.Errorf("probes %+v", ps)
			}
		}},
		{"dtls_certificate.pcapng", []string{"191.62.60.190 pcap:dtls -> "}, func(t *testing.T, got []pcapSeen) {
			if d := got[0].o.Service.Probes[0].TLS; d.Subject.CN != "www.update.microsoft.com" || d.Version != "DTLSv1.2" {
				t.Errorf("DTLS %+v", d)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			got := readCapture(t, rules, tt.file)
			var lines []string
			for _, s := range got {
				lines = append(lines, s.String())
			}
			want := slices.Clone(tt.want)
			slices.Sort(lines)
			slices.Sort(want)
			if !slices.Equal(lines, want) {
				t.Fatalf("got\n  %s\nwant\n  %s", strings.Join(lines, "\n  "), strings.Join(want, "\n  "))
			}
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}
