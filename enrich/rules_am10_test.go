package enrich

import "testing"

// TestRules_AM10LogForms checks group AM10's log-line classes (anchors
// loosened in 78-logs.yaml, 91-am6 and 91-am8; 91-am10-logs.yaml): the
// forms Sekoia.io's intake tests and Datadog's pipeline tests keep (a CEF
// record with its prefix stripped or a space after "CEF:", a FortiGate CEF
// version with its build, FortiOS's CSV layout, an ASA message id without
// its colon, the ASA's VPN bodies without tag, Log Exporter's
// origin_sic_name, Pulse's LIC codes, SFOS's log_id layout without
// device=, CloudGen's activity log, PAN-OS's Cortex Data Lake CEF and the
// custom key=value format) and the look-alikes they must not name:
// Prisma Access's own CEF, Stormshield's WELF, a FortiMail log_id line, an
// OpenVPN client's cipher line, a Meraki MX's AnyConnect event.
func TestRules_AM10LogForms(t *testing.T) {
	checkMatches(t, []matchCase{
		namedSyslog("FortiOS CSV (comma-separated) key=value",
			`date=2016-02-12,time=14:10:42,logid=0720018433,type=anomaly,subtype=anomaly,level=alert,vd="vdom1",severity=critical,srcip=198.51.100.9`,
			"Fortinet", "am8-fortios-kv-logid-type-subtype"),
		namedSyslog("ASA message id without its colon",
			`%ASA-5-111010 User 'admin', running 'CLI' from IP 198.51.100.18, executed 'ping 198.51.100.19'`,
			"Cisco", "log-cisco-asa"),
		namedSyslog("ASA 113019 body without tag",
			`Group = EXAMPLE, Username = u, IP = 198.51.100.25, Session disconnected. Session Type: SSL, Duration: 6h:33m:18s, Bytes xmt: 2208`,
			"Cisco", "am10-cisco-asa-vpn-body-without-tag"),
		namedSyslog("Check Point CEF with a space after CEF:",
			`CEF: 0|Check Point|HTTPS Inspection|Check Point|Log|Log|Unknown|act=HTTPS Bypass deviceDirection=0`,
			"Check Point", "log-checkpoint"),
		namedSyslog("Check Point Log Exporter syslog with origin_sic_name",
			`syslog[action:"Key Install"; flags:"2304"; ifdir:"inbound"; origin_sic_name:"CN=HOSTBAR,O=Foo.prj.fr.mnkqvz"; scheme::"IKE"; ]`,
			"Check Point", "log-checkpoint"),
		namedSyslog("Pulse WELF with a LIC code and ivs=",
			`id=firewall time="2023-10-17 18:18:12" pri=6 fw=198.51.100.30 vpn=EX023-V6 ivs=Root user=System realm="" roles="" type=mgmt proto= src=198.51.100.31 dst= dstname= sent= rcvd= msg="LIC30499: Leased 0 units"`,
			"Ivanti", "am6-ivanti-welf-with-ivs"),
		unnamedSyslog("Stormshield SNS WELF",
			`id=firewall time="2023-07-03 18:20:02" fw="SN12345678912345" tz=+0200 startime="2023-07-03 18:20:02" pri=5 src=198.51.100.1 msg="Phase 2 established"`),
		namedSyslog("SFOS log without device=",
			`date=2023-12-01 time=14:43:23 timezone="CET" device_name="mydevice" device_id=D11111X222 log_id=000000000001 log_type="Firewall" log_component="Invalid Traffic" log_subtype="Denied"`,
			"Sophos", "am10-sophos-sfos-log-id-component"),
		unnamedSyslog("FortiMail event (log_id with ten digits, no log_component)",
			`time=17:07:46.124 device_id=FEVM020000087260 log_id=0003014907 type=event subtype=smtp pri=information user=mail ui=mail action=NONE`),
		namedSyslog("CloudGen firewall activity, values only",
			`Info     MACHINE-F380 Allow: LOUT|UDP|bond0.603|198.51.100.68|61988|00:11:22:33:44:55|198.51.100.69|53|domain||RULENAME|0`,
			"Barracuda", "am10-barracuda-cloudgen-activity-event"),
		namedSyslog("PAN-OS Cortex Data Lake CEF of a firewall",
			`CEF:0|Palo Alto Networks|LF|2.0|GLOBALPROTECT|globalprotect|3|ProfileToken=xxxxx dtz=UTC PanOSVirtualSystem=vsys1 PanOSDeviceName=PA-VM`,
			"Palo Alto Networks", "am10-panos-cortex-data-lake-cef"),
		unnamedSyslog("Prisma Access's own CEF through Cortex Data Lake",
			`CEF:0|Palo Alto Networks|LF|2.0|TRAFFIC|end|3|ProfileToken=xxxxx dtz=UTC PanOSIsPrismaNetworks=true PanOSIsPrismaUsers=false PanOSVirtualSystem=vsys1`),
		namedSyslog("PAN-OS custom key=value pipe format",
			`<190>Jan 18 12:46:54 PA-VM serial=42808DUMMY733|type=TRAFFIC|subtype=end|src=198.51.100.1|vsys=vsys1|from=LAN|act=allow|actflag=0x0|sessionendreason=tcp-rst-from-server|dvc=PA-VM`,
			"Palo Alto Networks", "am10-panos-custom-kv-pipe-format"),
		namedSyslog("OpenVPN server's data channel line with the peer prefix",
			`Tue Aug 12 08:26:30 2025 us=340080 192.0.2.12:65244 Incoming Data Channel: Cipher 'AES-256-GCM' initialized with 256 bit key`,
			"OpenVPN", "am8-openvpn-server-client-lines"),
		unnamedSyslog("OpenVPN client's data channel line",
			`Tue Aug 12 08:26:30 2025 Incoming Data Channel: Cipher 'AES-256-GCM' initialized with 256 bit key`),
		namedSyslog("Check Point Log Exporter JSON",
			`{"action": "Log In","identity_src": "AD Query","loguid": "{0x1abcde0,0x1abcde0,0x1abcde0,0x1abcde0}","originsicname": "cn=ab_mgmt,o=ab-12e3ba..2ab6cd","product": "Identity Awareness"}`,
			"Check Point", "log-checkpoint"),
		namedSyslog("Ivanti Connect Secure JSON syslog",
			`577 <134>1 2024-12-04T01:18:24-05:00 test.com PulseSecure: - - - {"message_id":"ADM22668","date":"2024-12-04","opaque_id":"2304","user":"user@test.com","realm_name":"","roles":"","raw_message":"Login succeeded for adminuser/System Local"}`,
			"Ivanti", "am10-ivanti-ics-json-syslog"),
		unnamedSyslog("Meraki MX AnyConnect event",
			`1673614753.814828766 FW_MX_01 events anyconnect_vpn_connect user id 'john.doe@example.com' local ip 10.0.0.4 connected from 198.51.100.7`),
	})
}
