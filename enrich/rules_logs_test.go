package enrich

import "testing"

// TestRules_Logs checks 78-logs.yaml's forms beyond the captures that found
// them (docs/rules.md, "The appliances' own logs"), and the look-alikes
// that must name nothing.
func TestRules_Logs(t *testing.T) {
	log := func(name, line string, want wantMatch) matchCase {
		return matchCase{name, bannerService(514, "udp", line), want}
	}
	checkMatches(t, []matchCase{
		log("fortigate cef with the model", "CEF:0|Fortinet|FortiGate-60F|v7.2.5|0100032001|event:system|3|deviceExternalId=FGT60F0000000000", wantMatch{Vendor: "Fortinet", Version: "7.2.5"}),
		log("fortigate cef product field", "CEF:0|Fortinet|Fortigate|v7.2.5|0100032001|event:system|3|", wantMatch{Vendor: "Fortinet", Version: "7.2.5"}),
		log("fortigate kv", `date=2024-01-01 time=10:00:00 devname="fw1" devid="FG100FTK20000000" logid="0100032001" type="event"`, wantMatch{Vendor: "Fortinet"}),
		log("pan csv", "1,2024/01/01 10:00:00,013201000000,TRAFFIC,end,2562,2024/01/01 10:00:00,10.0.0.1,", wantMatch{Vendor: "Palo Alto Networks"}),
		log("asa message", "<166>Jan 01 2024 10:00:00: %ASA-6-113039: Group <vpn> User <jdoe> IP <192.0.2.4> AnyConnect parent session started.", wantMatch{Vendor: "Cisco", Rule: "log-cisco-asa"}),
		log("ios message is not an asa", "<189>123: Jan 1 10:00:00: %SYS-5-CONFIG_I: Configured from console by vty0", wantMatch{}),
		log("netscaler ppe line", "01/01/2024:10:00:00 GMT ns01 0-PPE-1 : AAA LOGIN_FAILED 123 0 : User jdoe - Client_ip 192.0.2.4", wantMatch{Vendor: "Citrix"}),
		log("netscaler cef band", "CEF:0|Citrix|NetScaler|NS14.1|APPFW|APPFW_SQL|6|src=192.0.2.4", wantMatch{Vendor: "Citrix", Band: "14.1.x"}),
		log("f5 cef", "CEF:0|F5|ASM|17.1.0|Attack signature detected|Attack signature detected|5|", wantMatch{Vendor: "F5", Version: "17.1.0"}),
		log("check point exporter", `<134>1 2024-01-01T10:00:00Z gw CheckPoint 2190 - [action:"Accept"; origin:"192.0.2.1"]`, wantMatch{Vendor: "Check Point"}),
		log("junos rt_flow", `<14>1 2024-01-01T10:00:00.000Z srx RT_FLOW - RT_FLOW_SESSION_CLOSE [junos@2636.1.1.1.2.40 reason="idle Timeout"]`, wantMatch{Vendor: "Juniper Networks"}),
		log("screenos event", "ssg140: NetScreen device_id=ssg140  [Root]system-notification-00257(traffic): start_time=\"2024-01-01 10:00:00\"", wantMatch{Vendor: "Juniper Networks"}),
		log("sonicos kv", `id=firewall sn=2CB8ED000000 time="2024-01-01 10:00:00 UTC" fw=192.0.2.1 pri=6 c=1024 m=537 msg="Connection Closed"`, wantMatch{Vendor: "SonicWall"}),
		log("stormshield kv with a serial not sonicwall's", `id=firewall time="2024-01-01 10:00:00" fw="SN210A0000000000" tz=+0100 startime="2024-01-01 10:00:00" pri=5 c=1 m=2`, wantMatch{}),
		log("sma welf", `id=sslvpn sn=0017C5000000 time="2024-01-01 10:00:00" vp_time="2024-01-01 09:00:00 UTC" fw=192.0.2.1 pri=5 m=1 c=1 msg="User login successful"`, wantMatch{Vendor: "SonicWall"}),
		log("connect secure welf", `id=firewall time="2024-01-01 10:00:00" pri=6 fw=192.0.2.1 vpn=ics1 user=System realm="" roles="" type=mgmt proto= src=127.0.0.1 dst= dstname= sent= rcvd= msg="ADM24511: Status updated"`, wantMatch{Vendor: "Ivanti"}),
		log("cloudgen phibs", "Info     FW01 phibs: Authentication Login for peer=192.0.2.4 origin=SSLVPN", wantMatch{Vendor: "Barracuda"}),
		log("barracuda mail gateway", "mx1 inbound/pass1: host[198.51.100.41] 1400198954-06f4a338c062640001-BkZagu 1400198954 1400198958 SCAN", wantMatch{}),
		log("routeros export", "# 2025-01-01 10:00:00 by RouterOS 7.16.2\n# software id = ABCD-EFGH\n#\n/interface bridge\n", wantMatch{Vendor: "MikroTik", Version: "7.16.2"}),
		log("watchguard leef", "LEEF:1.0|WatchGuard|Firebox|12.11.1.B700000|3000148|policy=Allowed disp=Allow", wantMatch{Vendor: "WatchGuard", Version: "12.11.1"}),
		log("sfos kv", `device_model="XGS2100" device_serial_id="X21000000000000" log_id="010101600001" log_type="Firewall"`, wantMatch{Vendor: "Sophos"}),
		log("sophos endpoint av", "20160806 050000\tScan 'Sophos Cloud Scheduled Scan' started.", wantMatch{}),
		log("ocserv note line", "Nov 14 18:53:16 vpn ocserv[821184]: note: setting 'file' as supplemental config option", wantMatch{Vendor: "OpenConnect"}),
	})
}
