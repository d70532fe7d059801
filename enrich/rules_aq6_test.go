package enrich

import "testing"

// TestRules_AQ6LogAndShellTells checks the classes group AQ6 added
// (95-aq6-control.yaml): any ocserv syslog line under its ident and pid,
// occtl's missing-socket error, wireguard-go's per-peer log with the
// abbreviated key, and the Sophos UTM loginuser/root shell prompt; and the
// look-alikes they must not name: another daemon's line that mentions
// ocserv, the ocserv word without a pid, a peer log without the abbreviated
// key, a plain Linux root prompt and a home directory that merely starts
// with /home/login.
func TestRules_AQ6LogAndShellTells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		port int
		tr   string
		text string
		want wantMatch
	}{
		{"ocserv plain auth line", 443, "tcp", "ocserv[18851]: error in plain authentication; cannot open: /etc/ocserv/ocpasswd\n", wantMatch{Vendor: "OpenConnect"}},
		{"occtl missing socket", 443, "tcp", "daemon.err uhttpd[1753]: error connecting to ocserv socket '/var/run/occtl.socket': No such file or directory\n", wantMatch{Vendor: "OpenConnect"}},
		{"another daemon mentions ocserv", 443, "tcp", "sshd[812]: user ocserv logged in\n", wantMatch{}},
		{"ocserv without a pid", 443, "tcp", "ocserv: configuration written\n", wantMatch{}},
		{"wireguard-go retry", 51820, "udp", "2021-02-10 16:08:58.676514: [TUN] [client] peer(LW3Y…OqDE) - Handshake did not complete after 5 seconds, retrying (try 2)\n", wantMatch{Vendor: "WireGuard"}},
		{"wireguard-go keepalive", 51820, "udp", "peer(AbC+…9xY/) - Sending keepalive packet\n", wantMatch{Vendor: "WireGuard"}},
		{"peer log without the abbreviated key", 51820, "udp", "peer(alice) - Sending keepalive packet\n", wantMatch{}},
		{"UTM root shell", 22, "tcp", "gatekeeper:/home/login # iptables -L PSD_ACTION -v\nChain PSD_ACTION (1 references)\n", wantMatch{Vendor: "Sophos"}},
		{"UTM loginuser shell", 22, "tcp", "loginuser@utm:/home/login> su\nPassword:\n", wantMatch{Vendor: "Sophos"}},
		{"plain Linux root prompt", 22, "tcp", "server:/root # iptables -L\n", wantMatch{}},
		{"another home directory", 22, "tcp", "host:/home/loginsvc # ls\n", wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, bannerService(tt.port, tt.tr, tt.text), tt.want)
		})
	}
}
