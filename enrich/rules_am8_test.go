package enrich

import "testing"

// TestRules_AM8LogForms checks group AM8's log-line classes (78-logs.yaml
// loosened, 91-am8-logs.yaml): the families' own lines in the heads and
// layouts SIEM fixtures keep them (no syslog head, a bare BSD head, an
// anonymised serial or SD-ID number), and the look-alikes they must not
// name: Fortinet's other products in FortiOS's key=value layout, a
// FortiMail line, Cisco IOS, a Huawei USG, strongSwan on pfSense, and an
// OpenVPN client's PUSH_REPLY line.
func TestRules_AM8LogForms(t *testing.T) {
	checkMatches(t, []matchCase{
		namedSyslog("FortiOS traffic log without head or devid",
			`date=2019-05-10 time=11:37:47 logid="0000000013" type="traffic" subtype="forward" level="notice" vd="vdom1" srcip=10.1.100.11 action="close"`,
			"Fortinet", ""),
		namedSyslog("FortiOS UTM log with an anonymised devid and no logdesc",
			`<188>date=2020-04-23 time=12:17:48 devname="sw1" devid="somerouterid" logid="0316013056" type="utm" subtype="webfilter" eventtype="ftgd_blk" level="warning" vd="root" action="blocked"`,
			"Fortinet", "am8-fortios-kv-logid-type-subtype"),
		unnamedSyslog("FortiProxy's own line (devid FPX...)",
			`<189>date=2024-05-07 time=08:53:21 devname="PXY01" devid="FPXTESTPXY01" logid="0010000099" type="traffic" subtype="http-transaction" level="notice" vd="root" srcip=10.0.0.3`),
		unnamedSyslog("FortiMail kevent (log_id, device_id FE...)",
			`<190>date=2023-02-06,time=18:49:59.807,device_id=FEVM02TM23000064,log_id=0701002231,type=kevent,subtype=admin,pri=information, user=admin`),
		namedSyslog("FortiOS 4 device_id/log_id layout",
			`Dec 23 11:13:03 date=2011-07-24 time=10: 13:03 devname=Device_Name device_id=FGTXXXX9999999999 log_id=0038016004 type=traffic subtype=other pri=notice vd=root`,
			"Fortinet", "am8-fortios-4-legacy-kv"),
		namedSyslog("PAN-OS CSV behind a bare BSD head, short serial",
			`Nov 30 16:09:08 1,2021/03/02 09:55:42,12345678999,GLOBALPROTECT,0,2305,2021/03/02 09:55:39,vsys1,gateway-auth,login`,
			"Palo Alto Networks", "log-cef-paloalto"),
		namedSyslog("PAN-OS CSV, future-use 0, subtype N/A",
			`0,2021/07/15 11:58:58,1321564321,TRAFFIC,N/A,0,2021/07/15 11:59:02,10.210.0.84,192.0.2.1`,
			"Palo Alto Networks", "log-cef-paloalto"),
		namedSyslog("FTD message with its facility word",
			`Apr 15 2014 09:34:34 EDT: %FTD-session-5-106100: access-list acl_in permitted tcp inside/10.1.2.16(2241) -> outside/192.168.0.89(2000)`,
			"Cisco", "log-cisco-ftd"),
		unnamedSyslog("Cisco IOS message", `<190>9004: Dec 8 20:07:53.081: %TCP-6-BADAUTH: No MD5 digest from 192.168.0.1(64999) to 224.0.0.18(15448)`),
		namedSyslog("Junos SD-ID with an anonymised number",
			`<37>1 2023-05-09T15:00:06.756+10:00 fw sshd - SSHD_LOGIN_FAILED [junos@1111.1.1.1.1.111 username="a" source-address="192.0.2.1"]`,
			"Juniper Networks", "log-juniper-junos"),
		unnamedSyslog("strongSwan on pfSense in RFC 5424", `<30>1 2021-07-03T23:08:00.777042-05:00 pfSense.example.com charon 18610 - - 14[NET] <con1000|11> sending packet`),
		unnamedSyslog("a Huawei USG6300 line", `2018-10-05 10:52:13 USG6300 %%01SECLOG/6/SESSION_TEARDOWN(l):IPVer=4,Protocol=tcp,SourceIP=1.1.1.1`),
		namedSyslog("SonicOS header with gcat and a masked serial",
			`<134>  id=firewall sn=xxxxxxxxxxxxxxx time="2022-05-06 16:10:06" fw=192.168.255.6 pri=6 c=1024 gcat=6 m=537 msg="Connection Closed"`,
			"SonicWall", "log-sonicwall-sonicos"),
		namedSyslog("Pulse Secure message body without head",
			`2020-05-01 08:35:44 - ive - [192.0.2.9] user10(Realm)[Roles] - Login succeeded for user10/Realm (session:047a0c58) from 192.0.2.9`,
			"Ivanti", "am8-pulse-secure-standard-syslog"),
		namedSyslog("OpenVPN server's PUSH_REPLY",
			`Jun 21 11:17:33 host openvpn: demovpn/192.0.2.4:41445 SENT CONTROL [demovpn]: 'PUSH_REPLY,route-gateway 10.8.0.1,topology subnet' (status=1)`,
			"OpenVPN", "am8-openvpn-server-client-lines"),
		unnamedSyslog("OpenVPN client receiving PUSH_REPLY",
			`Jun 21 11:17:33 laptop openvpn[99]: PUSH: Received control message: 'PUSH_REPLY,route-gateway 10.8.0.1,topology subnet'`),
	})
}
