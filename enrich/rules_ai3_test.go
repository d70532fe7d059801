package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_AI3Logs checks the log classes the group AI3 round added
// (85-ai3-weak.yaml): Forcepoint NGFW's LEEF header, with its "LEEF:" tag,
// after a syslog header, or at a line's start without the tag, read as the
// sender's major.minor band; Sophos UTM's web application firewall access
// record; and the look-alikes they must not name: Forcepoint's web security
// product in LEEF, the NGFW header inside another record's free text, and a
// key=value access record of another product.
func TestRules_AI3Logs(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		text string
		want wantMatch
	}{
		{"leef with its tag", "LEEF:1.0|Forcepoint|Firewall|7.1.5|System_Engine-User_Command|devTimeFormat=MMM dd yyyy HH:mm:ss\tdevTime=Aug 05 2025 11:14:02\tusrName=admin\tsender=HOST_02 node 1", wantMatch{Vendor: "Forcepoint", Product: "Forcepoint NGFW", Band: "7.1.x"}},
		{"leef after a syslog header", "<134>Aug  6 15:24:14 smc LEEF:1.0|Forcepoint|Firewall|6.10.2|FW_DHCP-DHCP-Reply-Received|sender=fw node 1", wantMatch{Vendor: "Forcepoint", Band: "6.10.x"}},
		{"leef without its tag at a line's start", "1.0|Forcepoint|Firewall|7.2.1|Connection_Allowed|src=192.0.2.1", wantMatch{Vendor: "Forcepoint", Band: "7.2.x"}},
		{"stonesoft ips leef", "LEEF:1.0|Stonesoft|IPS|5.10.3|Inspection|x=y", wantMatch{Vendor: "Forcepoint", Band: "5.10.x"}},
		{"forcepoint web security in leef", "LEEF:1.0|Forcepoint|Security|8.5.4|transaction:permitted|cat=Search Engines", wantMatch{}},
		{"the header inside free text", "msg=forwarded record x1.0|Forcepoint|Firewall|7.1.5|y", wantMatch{}},
		{"utm waf access record", `2016:03:01-10:42:59 utm httpd[4242]: id="0299" srcip="192.0.2.7" localip="192.0.2.5" size="112" user="-" host="192.0.2.7" method="POST" statuscode="200" reason="-" extra="-" url="/owa/"`, wantMatch{Vendor: "Sophos", Product: "Sophos UTM"}},
		{"another product's access record", `id="0299" src="192.0.2.7" method="POST" statuscode="200"`, wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, bannerService(514, "udp", tt.text), tt.want)
		})
	}
}

// TestRules_AI3SoftEtherModuleLog checks the SoftEther server's protocol
// module log lines (85-ai3-weak.yaml): the IPsec client, IKE SA and ESP SA
// prefixes, the module's start line, the EtherIP / L2TPv3 and OpenVPN
// session prefixes and the PPP session line; and other VPN servers' logs of
// the same events, which it must not take (OpenVPN's own log stays OpenVPN's).
func TestRules_AI3SoftEtherModuleLog(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		text string
		want wantMatch
	}{
		{"ipsec client created", "LOG: IPsec Client 4 (69.***.***.**4:56426 -> 0.0.0.0:500): A new IPsec client is created.", wantMatch{Vendor: "SoftEther", Product: "SoftEther VPN Server"}},
		{"ike sa prefix", "2021-06-26 05:00:15.100 IPsec IKE Session (IKE SA) 4 (Client: 4) (192.0.2.4:4500 -> 198.51.100.1:4500): This IKE SA is established between the server and the client.", wantMatch{Vendor: "SoftEther"}},
		{"esp sa prefix", "IPsec ESP Session (IPsec SA) 7 (Client: 4) (192.0.2.4:4500 -> 198.51.100.1:4500): This IPsec SA is established between the server and the client.", wantMatch{Vendor: "SoftEther"}},
		{"module start", "2021-06-26 04:59:00.001 IPsec Module: The IPsec ver 2.0 (ISAKMP/IKEv1) processing module is started.", wantMatch{Vendor: "SoftEther"}},
		{"etherip session", "EtherIP / L2TPv3 Session 1 (192.0.2.9:0 -> 198.51.100.1:0): The connection from the EtherIP / L2TPv3 module to the Virtual Hub \"VPN\" succeeded.", wantMatch{Vendor: "SoftEther"}},
		{"openvpn module channel", "OpenVPN Session 2 (192.0.2.5:51194 -> 198.51.100.1:1194) Channel 0: The channel status is changed.", wantMatch{Vendor: "SoftEther"}},
		{"l2tp ppp session", "L2TP PPP Session [192.0.2.6:1701]: A new PPP session (Upper protocol: L2TP) is started. IP Address of PPP Client: 192.0.2.6 (Hostname: \"pc\")", wantMatch{Vendor: "SoftEther"}},
		{"strongswan ike sa", "charon: 09[IKE] IKE_SA ikev2-vpn[1] established between 198.51.100.1[vpn]...192.0.2.4[client]", wantMatch{}},
		{"openvpn community server", "client1/192.0.2.5:51194 MULTI_sva: pool returned IPv4=10.8.0.6, IPv6=(Not enabled)", wantMatch{Vendor: "OpenVPN"}},
		{"libreswan", "pluto[1234]: \"l2tp-psk\"[1] 192.0.2.4 #1: IKE SA established", wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, bannerService(514, "udp", tt.text), tt.want)
		})
	}
}

// TestRules_AI3SophosAPIRendered checks the SFOS XML API answer rendered as
// JSON or a Python dict (85-ai3-weak.yaml), and what it must not name:
// another product's JSON with an APIVersion key but no IPS_CAT_VER.
func TestRules_AI3SophosAPIRendered(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	answer := func(body string) *ingest.Service {
		return &ingest.Service{Port: 4444, Transport: "tcp", Probes: []ingest.Probe{httpProbe("POST", "/webconsole/APIController", 200, body)}}
	}
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"json", answer("{\n    \"Response\": {\n        \"@APIVersion\": \"1905.1\",\n        \"@IPS_CAT_VER\": \"1\",\n        \"Login\": {\n            \"status\": \"Authentication Successful\"\n        }\n    }\n}"), wantMatch{Vendor: "Sophos", Product: "Sophos Firewall"}},
		{"python dict", answer("{'Response': {'@APIVersion': '2000.2', '@IPS_CAT_VER': '1', 'Login': {'status': 'Authentication Successful'}}}"), wantMatch{Vendor: "Sophos"}},
		{"another api's version key", answer(`{"APIVersion": "2.1", "build": "1234"}`), wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, tt.want)
		})
	}
}
