package enrich

import "testing"

// Group AQ2 (95-aq2-clients.yaml): client logs that name the gateway's product, each rule
// with a line of the same client that does not (the rule must not read the client alone).
func TestRules_AQ2ClientLogs(t *testing.T) {
	const snxRule = "aq2-checkpoint-snx-java-component-classes"
	const jvpnRule = "aq2-ivanti-jvpn-dsid-cookie-lines"
	const f5Rule = "aq2-f5-f5fpc-connection-status-logon-failed"
	const horizonRule = "aq2-horizon-client-log-adam-entry-names"
	const seRule = "aq2-softether-client-now-connected-session"
	const nattRule = "ap3-checkpoint-snx-rs-office-mode-no-session" // aq2-checkpoint-snx-rs-natt-reply, folded there
	const pendRule = "am8-openvpn-server-client-lines"
	checkMatches(t, []matchCase{
		{"snx java component frame", bannerService(443, "tcp", "java.net.ConnectException: Connection refused\n\tat SNXNMComponent.initPipe(SNXNMComponent.java:425)\n"), wantMatch{Vendor: "Check Point", Rule: snxRule}},
		{"snx java logger line", bannerService(443, "tcp", "14/12/2022 11:07:57 INFO [CpComponent] (CpComponent initPipe) Trying to create socket to 127.0.0.1:5555\n"), wantMatch{Vendor: "Check Point", Rule: snxRule}},
		{"a java stack trace of another program", bannerService(443, "tcp", "java.net.ConnectException: Connection refused\n\tat java.base/java.net.Socket.connect(Socket.java:609)\n\tat Client.connect(Client.java:138)\n"), wantMatch{}},
		{"jvpn dsid cookies", bannerService(443, "tcp", "Transfer went ok\nGot DSID=, dfirst=1441369008, dlast=1441369008\nUnable to get DSID, exiting\n"), wantMatch{Vendor: "Ivanti", Rule: jvpnRule}},
		{"jvpn transfer only", bannerService(443, "tcp", "Transfer went ok\n"), wantMatch{}},
		{"f5fpc logon failed", bannerService(443, "tcp", "Logon denied\nConnection Status: logon failed\nServer certificate verification failed.\n"), wantMatch{Vendor: "F5", Rule: f5Rule}},
		{"a lone connection status word", bannerService(443, "tcp", "Connection Status: connected\n"), wantMatch{}},
		{"horizon launch item", bannerService(443, "tcp", "vmware-view 33685| Launch:349: Start launching 'cn=vdi-outdoor,ou=applications,dc=vdi,dc=vmware,dc=int'.\n"), wantMatch{Vendor: "VMware", Rule: horizonRule}},
		{"another directory's dn", bannerService(443, "tcp", "bind dn cn=admin,ou=people,dc=example,dc=int\n"), wantMatch{}},
		{"softether client now connected", bannerService(443, "tcp", "VPN Connection Setting \"...\": Now connected. Session name: \"SID-####-1742\"\n"), wantMatch{Vendor: "SoftEther", Rule: seRule}},
		{"snx-rs natt reply", bannerService(443, "tcp", "DEBUG snxcore::tunnel::ipsec::natt: Received NAT-T reply from 192.0.2.74: srcport: 4500, dstport: 4500, hash: 4ae71336e44bf9bf79d2752e234818a5\n"), wantMatch{Vendor: "Check Point", Rule: nattRule}},
		{"snx-rs natt probe unanswered", bannerService(443, "tcp", "DEBUG snxcore::tunnel::ipsec::natt: Sending NAT-T probe to 192.0.2.74\n"), wantMatch{}},
		{"openvpn server sends auth pending", bannerService(1194, "udp", "SENT CONTROL [openvpn-login]: 'AUTH_PENDING,timeout 120' (status=1)\n"), wantMatch{Vendor: "OpenVPN", Rule: pendRule}},
		{"openvpn client receives auth pending", bannerService(1194, "udp", "2024-10-14 11:15:30.986467 [LOG] Auth pending request received, timeout: 120\n"), wantMatch{}},
		{"access server log of the same command", bannerService(1194, "udp", "2024-05-07T13:45:47-0500 [stdout#info] [OVPN 1] OUT: 'MANAGEMENT: CMD 'client-pending-auth 13 1 \"WEB_AUTH::x\" 120''\n"), wantMatch{Vendor: "OpenVPN Inc."}},
		{"softether client before the server answered", bannerService(443, "tcp", "VPN Connection Setting \"...\": Connection operation starting (this is now 1 times).\n"), wantMatch{}},
	})
}
