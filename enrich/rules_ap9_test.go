package enrich

import "testing"

// TestRules_AP9Classes checks the classes the group AP9 round added
// (94-ap9-advisories.yaml) and the look-alikes they must not name: the VPN
// 3000 Concentrator's SEV=/RPT= event form against a generic syslog line with
// a severity word; Check Point's fw log record with a Check Point product
// field against the same record shape naming another product; BIG-IP's tmsh
// audit and restjavad-audit records against a Linux auditd line; ICS's
// integrity-scan codes against the texts without their codes; the ICS REST
// uwsgi line against another uwsgi application's /api/v1/ request; ScreenOS's
// event-log ids against an ordinary dated line; NetScaler's portal scripts
// answered 200 against the same request answered 404; NetScaler's crontab,
// monitors and bash log against a FreeBSD crontab; FortiOS's internal user.
func TestRules_AP9Classes(t *testing.T) {
	checkMatches(t, []matchCase{
		{name: "vpn3000 auth rejected", svc: bannerService(514, "udp", "Jan  8 09:10:37 vpn.example.com 11504 01/08/2007 09:10:37.780 SEV=3 AUTH/5 RPT=124 192.0.2.1  Authentication rejected: Reason = Unspecified handle = 805, server = auth.example.com, user = bob, domain = <not specified>"), want: wantMatch{Vendor: "Cisco", Rule: "ap9-cisco-vpn3000-event-log"}},
		{name: "generic syslog with severity", svc: bannerService(514, "udp", "Jan  8 09:10:37 host app[12]: 01/08/2007 09:10:37 SEV=3 auth failure for bob"), want: wantMatch{}},
		{name: "checkpoint fw log via logger", svc: bannerService(514, "udp", "Apr 11 11:04:48 gw Checkpoint: 21Aug2007 12:00:00 accept 10.0.0.2 >eth0 rule: 100; service_id: http; src: 10.0.0.3; dst: 10.0.0.4; proto: tcp; product: VPN-1 & FireWall-1; service: 80; s_port: 1111;"), want: wantMatch{Vendor: "Check Point", Rule: "ap9-checkpoint-fw-log-ftnp-syslog"}},
		{name: "same record shape, other product", svc: bannerService(514, "udp", "Apr 11 11:04:48 gw fwlog: 21Aug2007 12:00:00 accept 10.0.0.2 >eth0 rule: 100; src: 10.0.0.3; dst: 10.0.0.4; proto: tcp; product: AcmeWall; service: 80;"), want: wantMatch{}},
		{name: "bigip tmsh audit", svc: bannerService(514, "udp", "Mar  3 10:25:53 bigip1 notice icrd_child[7097]: AUDIT - pid=7097 user=admin folder=/Common module=(tmos)# status=[Command OK] cmd_data=list sys version"), want: wantMatch{Vendor: "F5", Rule: "ap9-f5-bigip-restjavad-and-tmsh-audit"}},
		{name: "bigip restjavad audit", svc: bannerService(514, "udp", `[I][2211][03 Mar 2022 10:25:53 UTC][ForwarderPassThroughWorker] {"user":"local/admin","method":"GET","uri":"http://localhost:8100/mgmt/tm/sys/version","status":200,"from":"192.0.2.5"}`), want: wantMatch{Vendor: "F5", Rule: "ap9-f5-bigip-restjavad-and-tmsh-audit"}},
		{name: "linux auditd line", svc: bannerService(514, "udp", "type=USER_CMD msg=audit(1646302753.123:456): pid=7097 uid=0 auid=1000 ses=3 msg='cwd=\"/root\" cmd=6964 terminal=pts/0 res=success'"), want: wantMatch{}},
		{name: "ics integrity scan result", svc: bannerService(514, "udp", "2024-12-29 07:48:41\t350626\tSYS32100\tvc0\tRoot\tuid_x\tIntegrity Scan Results : Matched Files 23872\n"), want: wantMatch{Vendor: "Ivanti", Rule: "ap9-ivanti-ics-integrity-scan-events"}},
		{name: "scan text without ICS code", svc: bannerService(514, "udp", "2024-12-29 07:48:41 filewatch[3]: Periodic Scan Started!\n"), want: wantMatch{}},
		{name: "ics rest uwsgi line", svc: bannerService(514, "udp", "[pid: 100|app: 0|req: 1/1] 192.0.2.4 () {34 vars in 581 bytes} [Wed Jul 30 19:57:42 2025] GET /api/v1/totp/user-backup-code/../../system/system-information => generated 300 bytes in 10 msecs (HTTP/1.1 200) 2 headers in 71 bytes (1 switches on core 0)\n"), want: wantMatch{Vendor: "Ivanti", Rule: "ap9-ivanti-ics-rest-uwsgi-log"}},
		{name: "another uwsgi api request", svc: bannerService(514, "udp", "[pid: 100|app: 0|req: 1/1] 192.0.2.4 () {34 vars in 581 bytes} [Wed Jul 30 19:57:42 2025] GET /api/v1/users => generated 300 bytes in 10 msecs (HTTP/1.1 200) 2 headers in 71 bytes (1 switches on core 0)\n"), want: wantMatch{}},
		{name: "screenos event log id", svc: bannerService(514, "udp", "[00002] 2006-06-30 13:11:41 [Root]system-critical-00040: VPN 'hq' from 192.0.2.7 is up."), want: wantMatch{Vendor: "Juniper Networks", Rule: "ap9-screenos-event-log-vsys-message-id"}},
		{name: "ordinary dated line", svc: bannerService(514, "udp", "[00002] 2006-06-30 13:11:41 [main] system check ok"), want: wantMatch{}},
		{name: "netscaler portal script 200", svc: bannerService(22, "tcp", "192.0.2.4 - - [12/Jan/2020:11:26:03 +0000] \"POST /vpn/../vpns/portal/scripts/newbm.pl HTTP/1.1\" 200 15 \"-\"\n"), want: wantMatch{Vendor: "Citrix", Rule: "ap9-netscaler-httpaccess-vpns-portal-scripts"}},
		{name: "portal script 404 elsewhere", svc: bannerService(22, "tcp", "192.0.2.4 - - [12/Jan/2020:11:26:03 +0000] \"POST /vpn/../vpns/portal/scripts/newbm.pl HTTP/1.1\" 404 196 \"-\"\n"), want: wantMatch{}},
		{name: "netscaler crontab", svc: bannerService(22, "tcp", "SHELL=/bin/sh\n*       *       *       *       *       root    nsfsyncd -p\n"), want: wantMatch{Vendor: "Citrix", Rule: "ap9-netscaler-shell-daemons-monitors-bash-log"}},
		{name: "netscaler bash log", svc: bannerService(22, "tcp", "<Local7.notice> ns bash[3632]: nsroot on /dev/pts/0 shell_command=\"ls /var\""), want: wantMatch{Vendor: "Citrix", Rule: "ap9-netscaler-shell-daemons-monitors-bash-log"}},
		{name: "freebsd crontab", svc: bannerService(22, "tcp", "SHELL=/bin/sh\n0       *       *       *       *       root    newsyslog\n1,31    0-5     *       *       *       root    adjkerntz -a\n"), want: wantMatch{}},
		{name: "fortios internal user", svc: bannerService(514, "udp", `date=2022-10-10 time=10:00:00 logid="0100032001" type="event" subtype="system" user="Local_Process_Access" ui="GUI(127.0.0.1)"`), want: wantMatch{Vendor: "Fortinet"}},
		{name: "another internal user name", svc: bannerService(514, "udp", `Oct 10 10:00:00 host app[1]: user="Local_Process" action=login`), want: wantMatch{}},
	})
}
