package enrich

import "testing"

// openvpnPortCase is a case of text kept on OpenVPN's own port (1194/udp).
func openvpnPortCase(text string) matchCase { return bannerCase(1194, "udp", text) }

// TestRules_OpenVPNStartLineEnd: the daemon's start line gives the
// server's release only in a server's log; in a client's log on the
// server's port it is the client's release, so the service is named
// without it, and a client the OpenVPN GUI held is not named.
func TestRules_OpenVPNStartLineEnd(t *testing.T) {
	const start = "Mon Jun 8 14:14:34 2020 OpenVPN 2.4.7 x86_64-pc-linux-gnu [SSL (OpenSSL)] [LZO] [LZ4] [EPOLL] built on Sep 5 2019\n"
	var cases caseList
	cases.add("start line alone is the server's", openvpnPortCase(start+"Mon Jun 8 14:14:34 2020 library versions: OpenSSL 1.1.1f\n"),
		wantMatch{Vendor: "OpenVPN", Rule: "openvpn-daemon-start", Version: "2.4.7"})
	cases.add("server log with a client's push request in it", openvpnPortCase(start+"Mon Jun 8 14:14:35 2020 MULTI: multi_create_instance called\nMon Jun 8 14:14:36 2020 client1/192.0.2.7:51000 PUSH: Received control message: 'PUSH_REQUEST'\n"),
		wantMatch{Vendor: "OpenVPN", Version: "2.4.7"})
	cases.add("client log: no release", openvpnPortCase(start+"Mon Jun 8 14:14:34 2020 TCP/UDP: Preserving recently used remote address: [AF_INET]192.0.2.1:1194\n"),
		wantMatch{Vendor: "OpenVPN", Rule: "openvpn-client-log-peer", StrictVersion: true, StrictBand: true})
	cases.add("client log with the pushed options", openvpnPortCase(start+"Mon Jun 8 14:14:36 2020 SENT CONTROL [server]: 'PUSH_REQUEST' (status=1)\nMon Jun 8 14:14:36 2020 PUSH: Received control message: 'PUSH_REPLY,ping 10'\n"),
		wantMatch{Vendor: "OpenVPN", Rule: "openvpn-client-log-peer", StrictVersion: true, StrictBand: true})
	cases.add("client held by the openvpn gui", openvpnPortCase(start+"Mon Jun 8 14:14:34 2020 Need hold release from management interface, waiting...\n"), wantMatch{})
	cases.add("client log against a peer certificate naming another maker", openvpnPortCase(start+"Mon Jun 8 14:14:34 2020 TCP/UDP: Preserving recently used remote address: [AF_INET]192.0.2.1:1194\nMon Jun 8 14:14:35 2020 VERIFY OK: depth=1, O=WatchGuard_Technologies, CN=Fireware\n"), wantMatch{})
	checkMatches(t, cases)
}

// TestRules_OpenVPNPushReplyOrder: SoftEther's OpenVPN clone builds its
// PUSH_REPLY with ifconfig before the DHCP options and route-gateway;
// OpenVPN's own server appends ifconfig after its push list.
func TestRules_OpenVPNPushReplyOrder(t *testing.T) {
	var cases caseList
	se := wantMatch{Vendor: "SoftEther", Rule: "softether-openvpn-clone-push-reply"}
	cases.add("softether net30 pair and securenat", openvpnPortCase("PUSH: Received control message: 'PUSH_REPLY,ping 3,ping-restart 10,ifconfig 192.168.30.13 192.168.30.14,dhcp-option DNS 192.168.30.1,route-gateway 192.168.30.14,redirect-gateway def1'\n"), se)
	cases.add("softether subnet topology", openvpnPortCase("PUSH: Received control message: 'PUSH_REPLY,ping 3,ping-restart 10,topology subnet,ifconfig 10.0.0.20 255.255.255.0,dhcp-option DNS 10.0.0.1,route-gateway 10.0.0.1,redirect-gateway def1,block-outside-dns'\n"), se)
	cases.add("softether l2 dummy address", openvpnPortCase("PUSH: Received control message: 'PUSH_REPLY,ping 3,ping-restart 10,ifconfig 192.0.0.8 255.255.255.240,block-outside-dns'\n"), se)
	cases.add("openvpn server with a push list", openvpnPortCase("PUSH: Received control message: 'PUSH_REPLY,redirect-gateway def1 bypass-dhcp,dhcp-option DNS 10.8.0.1,route-gateway 10.8.0.1,topology subnet,ping 10,ping-restart 120,ifconfig 10.8.0.2 255.255.255.0,peer-id 0,cipher AES-256-GCM'\n"), wantMatch{})
	cases.add("openvpn server with keepalive only", openvpnPortCase("PUSH: Received control message: 'PUSH_REPLY,ping 10,ping-restart 120,ifconfig 10.8.0.6 10.8.0.5,peer-id 0,cipher AES-256-GCM'\n"), wantMatch{})
	// group AS7's shapes (Proto_OpenVPN.c): classless routes right after
	// ifconfig, the L2 mode's RFC 7600 dummy; and OpenVPN's own orders
	cases.add("softether routes after ifconfig", openvpnPortCase("PUSH: Received control message: 'PUSH_REPLY,ping 3,ping-restart 30,topology subnet,ifconfig 192.168.30.10 255.255.255.0,route 10.0.0.0 255.0.0.0 192.168.30.1,block-outside-dns'\n"), se)
	cases.add("softether l2 dummy without block-outside-dns", openvpnPortCase("PUSH: Received control message: 'PUSH_REPLY,ping 3,ping-restart 10,ifconfig 192.0.0.8 255.255.255.240'\n"), se)
	cases.add("openvpn subnet order", openvpnPortCase("PUSH: Received control message: 'PUSH_REPLY,route 10.0.0.0 255.0.0.0,route-gateway 10.8.0.1,topology subnet,ping 10,ping-restart 120,ifconfig 10.8.0.2 255.255.255.0,peer-id 0,cipher AES-256-GCM'\n"), wantMatch{})
	cases.add("openvpn keepalive and net30 alone", openvpnPortCase("PUSH: Received control message: 'PUSH_REPLY,ping 10,ping-restart 120,ifconfig 10.8.0.6 10.8.0.5'\n"), wantMatch{})
	cases.add("openvpn keepalive then protocol flags", openvpnPortCase("PUSH: Received control message: 'PUSH_REPLY,ping 10,ping-restart 60,ifconfig 10.8.0.6 10.8.0.5,peer-id 1,cipher AES-256-GCM,protocol-flags cc-exit tls-ekm'\n"), wantMatch{})
	checkMatches(t, cases)
}
