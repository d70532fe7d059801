package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupU4Tells checks the group U4 tells of the Sophos, WatchGuard,
// Zyxel, Forcepoint, OpenVPN and WireGuard rules (rules/25-openvpn.yaml,
// 30-wireguard.yaml, 35-sophos.yaml, 35-watchguard.yaml, 40-zyxel.yaml,
// 45-forcepoint.yaml): the appliances' own syslog lines (key=value, CEF,
// LEEF) with the versions their headers carry, a web filter's block page,
// an OpenVPN client's log of a server on 1194, WireGuard's kernel and
// wg-quick lines, and the look-alikes that must name nothing.
func TestRules_GroupU4Tells(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	type hdr = ingest.Header
	probe := headerProbe
	svc := tcpService
	line := func(s string) *ingest.Service {
		return svc(514, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody(s)}})
	}
	tests := []struct {
		name          string
		svc           *ingest.Service
		vendor        string
		version, band string
	}{
		{"forcepoint cef syslog", line(`<6>Sep 14 14:12:51 10.0.0.143 CEF:0|FORCEPOINT|Firewall|6.8.6|70018|Connection_Allowed|0|deviceExternalId=NGFW1 node 1 dvc=10.0.0.143 act=Allow`), "Forcepoint", "", "6.8.x"},
		{"stonesoft cef of an ips", line(`CEF:0|Stonesoft|IPS|5.10.2|70019|Connection_Discarded|0|deviceExternalId=IPS node 1`), "Forcepoint", "", "5.10.x"},
		{"smc log export", line(`Timestamp="2013-11-21 00:00:00",LogId="1615132411",NodeId="10.1.0.2",Facility="Cluster protocol",SenderType="Firewall",SituationId="2011",Situation="System_Cluster-Protocol-Event"`), "Forcepoint", "", ""},
		{"websense cef", line(`<13>Mar 06 12:55:48 192.0.2.1 CEF:0|Forcepoint|Security|7.7.0|9|Transaction permitted|1| act=permitted app=http`), "Forcepoint", "7.7.0", ""},
		{"websense block page", svc(80, probe("GET", "/", 200, `<iframe src="http://10.2.4.211:15871/cgi-bin/block_message.cgi?ws-session=-1016803316" name="ws_block"></iframe>`)), "Forcepoint", "", ""},
		{"sfos syslog up to 19", line(`device="SFW" date=2023-03-17 time=11:37:27 timezone="-03" device_name="SG125w" device_id=S1601E12D739F8F log_id=020804407002 log_type="IDP" log_component="Signatures"`), "Sophos", "", ""},
		{"sfos syslog 19.5 and later", line(`<30>device_name="SFW" timestamp="2026-09-28T10:20:11+0200" device_model="XGS2100" device_serial_id="X21001ABCD" log_id="050902616002" log_type="Content Filtering" log_component="HTTP"`), "Sophos", "", ""},
		{"cyberoam syslog", line(`date=2013-09-13 time=10:00:00 timezone="IST" device_name="CR25ia" device_id=C070100126-ABCDEF log_id=010302602002 log_type="Firewall" log_component="Appliance Access"`), "Sophos", "", ""},
		{"utm packet filter line", line(`2017:03:01-02:30:05 sg135 ulogd[4824]: id="2001" severity="info" sys="SecureNet" sub="packetfilter" name="Packet dropped"`), "Sophos", "", ""},
		{"utm time stamp alone", line("2016:01:19-22:26:58 UTM openvpn[2222]: TLS Error: TLS handshake failed"), "Sophos", "", ""},
		{"fireware traffic log", line(`Mar 21 23:01:42 FW-125852 FVE1032175935 firewall: msg_id="3000-0148" Allow Trusted Firebox 60 icmp`), "WatchGuard", "", ""},
		{"fireware leef with the release", line(`<142>Feb 25 12:49:50 hostname LEEF:1.0|WatchGuard|XTM|12.6.2.B631387|2CFF0000|serial=ABC123 policy=HTTPS-proxy-00`), "WatchGuard", "12.6.2", ""},
		{"fireware loggerd start line", line("loggerd: Watchguard loggerd v12.6.2.B630388 (C) 1996-2020 WatchGuard Technologies Inc."), "WatchGuard", "12.6.2", ""},
		{"fireware wgapi daemon line", line("sessiond[2539]: receive wgapi message: cmd=5 xpath=NULL from=0x3b400915 serial=FVE10271A42A5"), "WatchGuard", "", ""},
		{"zld key value log", line(`<142>May 22 17:24:04 2026 usgflex700h src="0.0.0.0:68" dst="255.255.255.255:67" msg="Match default rule DROP" note="ACCESS BLOCK" user="" devID="f44d5c94f517" cat="Security Policy Control"`), "Zyxel", "", ""},
		{"zld cef with the firmware", line(`Jan 19 18:45:26 192.168.20.1 CEF:0|ZyXEL|USG FLEX 200|5.39(ABUI.1)|0|Traffic Log|4|devID=d8xxxxx40`), "Zyxel", "5.39", ""},
		{"openvpn client log of a server on 1194", line("2024-05-27 09:57:24 TLS: Initial packet from [AF_INET]198.51.100.160:1194, sid=aa9b9eab d8fd5ded"), "OpenVPN", "", ""},
		{"openvpn server log with its release", line("Mon Jul 29 14:24:53 2024 OpenVPN 2.5.1 x86_64-pc-linux-gnu [SSL (OpenSSL)] [LZO] [LZ4] [EPOLL] [PKCS11] [MH/PKTINFO] [AEAD] built on May 14 2021\nMon Jul 29 14:24:53 2024 UDPv4 link local (bound): [AF_INET][undef]:1194\nMon Jul 29 14:24:53 2024 MULTI: multi_init called, r=256 v=256\nMon Jul 29 14:24:53 2024 IFCONFIG POOL IPv4: base=10.8.0.2 size=252"), "OpenVPN", "2.5.1", ""},
		{"openvpn server's client-instance line", line("Dec 22 12:01:36 host srv[1659541]: alice/198.51.100.21 MULTI: no free --ifconfig-pool addresses are available"), "OpenVPN", "", ""},
		{"wg-quick in the journal", line("Jan 01 00:00:00 host wg-quick[123]: [#] ip link add wg0 type wireguard"), "WireGuard", "", ""},
		{"sfos mib walk with its release", svc(161, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("1.3.6.1.2.1.1.1.0|4|Linux fw 4.14.38 #2 SMP\n1.3.6.1.4.1.2604.5.1.1.2.0|4|SFVH_SO01_SFOS\n1.3.6.1.4.1.2604.5.1.1.3.0|4|18.0.1 MR-1-Build396\n")}}), "Sophos", "18.0.1", ""},
		{"sfos mib by name", svc(161, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("SFOS-FIREWALL-MIB::sfosDeviceFWVersion.0 = STRING: \"19.5.3 MR-3-Build652\"\n")}}), "Sophos", "19.5.3", ""},
		{"cyberoam mib on sfos 17", svc(161, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("1.3.6.1.2.1.1.1.0|4|Cyberoam cloud partitio\n1.3.6.1.4.1.21067.2.1.1.3.0|4|SFOS 17.5.5 MR-5\n")}}), "Sophos", "17.5.5", ""},
		{"fireware software version in its mib", svc(161, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("WATCHGUARD-SYSTEM-STATISTICS-MIB::wgSoftwareVersion.0 = STRING: \"12.8.2.B665765\"\n")}}), "WatchGuard", "12.8.2", ""},
		{"forcepoint engine version in its mib", svc(161, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("1.3.6.1.2.1.1.1.0|4|Forcepoint NGFW Firewall/VPN\n1.3.6.1.4.1.1369.5.2.1.1.0|4|Forcepoint NGFW version 6.10.10.26506\n")}}), "Forcepoint", "6.10.10", ""},
		{"zyxel es-common walk of a usg flex", svc(161, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("1.3.6.1.2.1.1.1.0|4|USG FLEX 100H\n1.3.6.1.4.1.890.1.15.3.1.6.0|4|1.31(ABXF.0)\n1.3.6.1.4.1.890.1.15.3.1.11.0|4|USG FLEX 100H\n")}}), "Zyxel", "1.31", ""},
		{"wireguard module load", line("[    5.123456] wireguard: WireGuard 1.0.0 loaded. See www.wireguard.com for information."), "WireGuard", "", ""},
		{"wg-quick up", line("[#] ip link add wg0 type wireguard\n[#] wg setconf wg0 /dev/fd/63\n[#] ip -4 address add 10.8.0.1/24 dev wg0\n"), "WireGuard", "", ""},
		{"zywall telnet greeting", svc(23, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("Welcome to ZyWALL USG 60\r\nUser name: ")}}), "Zyxel", "", ""},
		{"zywall version.bind", svc(53, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("\x0aZyWALL DNS")}}), "Zyxel", "", ""},
		{"zld firmware string on a zld page", svc(443, probe("GET", "/", 200, `<script src="/ext-js/app/common/zld_product_spec.js"></script><script src="/zyFunction.js"></script><div>Firmware Version: V5.38(ABZH.0)</div>`)), "Zyxel", "5.38", ""},
		{"fireware version comment", svc(443, probe("GET", "/auth/login", 200, "<!-- Fireware v12.5.9 --><title>Fireware Web UI</title>")), "WatchGuard", "12.5.9", ""},
		{"softether dynamic dns certificate", svc(443, ingest.Probe{TLS: &ingest.TLS{Subject: &ingest.DN{CN: "vpn123456789.softether.net"}}}), "SoftEther", "", ""},
		// look-alikes: name nothing
		{"zyxel walk with the model in sysdescr only", svc(161, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("1.3.6.1.2.1.1.1.0|4|ATP200\n1.3.6.1.4.1.890.1.15.3.1.6.0|4|5.38(ABFW.0)\n")}}), "Zyxel", "5.38", ""},
		{"zyxel switch firmware string", svc(161, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody("1.3.6.1.4.1.890.1.15.3.1.6.0|4|V4.80(ABML.1)\n1.3.6.1.4.1.890.1.15.3.1.11.0|4|XGS2220-30\n")}}), "", "", ""},
		{"softether project web host", svc(443, ingest.Probe{TLS: &ingest.TLS{Subject: &ingest.DN{CN: "www.softether.net"}}}), "", "", ""},
		{"zyxel access point cef", line(`CEF:0|Zyxel|NWA130BE|7.30|0|WLAN|5|msg=Station: connected`), "", "", ""},
		{"another vendor's cef", line(`<189> Jun 18 10:55:50 host CEF:0|Elastic|Vaporware|1.0.0-alpha|18|Web request|low|eventId=3457 msg=hello`), "", "", ""},
		{"key value log of another device", line(`device="FGT" date=2024-01-01 log_id=010101600001 log_type="traffic"`), "", "", ""},
		{"access server log wrapping the daemon", line("2024-01-01T00:00:00+0000 [stdout#info] MULTI: multi_init called, r=256 v=256"), "", "", ""},
		{"pfsense's openvpn server log", line("openvpn 41400 - - MANAGEMENT: Client connected from /var/etc/openvpn/server4/sock\nopenvpn 41400 - - alice/10.20.0.196:55311 MULTI_sva: pool returned IPv4=10.0.8.2"), "", "", ""},
		{"openvpn client log of a server on 443", line("TLS: Initial packet from [AF_INET]198.51.100.7:443, sid=aa9b9eab d8fd5ded"), "", "", ""},
		{"openvpn client log of a firebox on 1194", line("TLS: Initial packet from [AF_INET]198.51.100.7:1194, sid=aa9b9eab d8fd5ded\nVERIFY OK: depth=0, O=WatchGuard_Technologies, OU=Fireware, CN=Fireware SSLVPN Server"), "", "", ""},
		{"honeypot's sfos portal under aiohttp", svc(443, probe("GET", "/userportal/webpages/myaccount/login.jsp", 200, "<title>Sophos Firewall - vpn</title><form method=\"post\" action=\"/svpn/index.cgi\">", hdr{Name: "Server", Value: "xxxx"}, hdr{Name: "Content-Type", Value: "text/html; charset=utf-8"})), "", "", ""},
		{"sfos portal under its own content type", svc(443, probe("GET", "/userportal/webpages/myaccount/login.jsp", 200, "<html></html>", hdr{Name: "Server", Value: "xxxx"}, hdr{Name: "Content-Type", Value: "text/html;charset=utf-8"})), "Sophos", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, wantMatch{Vendor: tt.vendor, Version: tt.version, Band: tt.band, StrictVersion: true})
		})
	}
}
