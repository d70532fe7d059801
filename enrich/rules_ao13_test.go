package enrich

import "testing"

// TestRules_AO13ThinLogs checks the classes the group AO13 round added
// (93-ao13-thin-cli.yaml): Barracuda CloudGen box service lines, Check Point's
// escaped SIC name and LEA quoted export, NetScaler's SSL VPN Context events,
// bash.log, httpaccess.log and AAA daemon lines, BIG-IP's RFC 5424 form and
// F5's structured-data id, and Pulse's pipe layout; and what they must not
// name: another firewall's login line, an unescaped key=value log without a
// SIC name, a web server's access log, a syslog line of another vendor's
// structured data, a pipe log of another product.
func TestRules_AO13ThinLogs(t *testing.T) {
	const (
		bar   = "log-barracuda-cloudgen"
		cp    = "log-checkpoint"
		ns    = "log-netscaler"
		apm   = "ao13-f5-apm-rfc5424-procid-field"
		f5    = "ao13-f5-bigip-sd-id-12276"
		pulse = "ao13-pulse-secure-pipe-layout"
	)
	syslog := func(line string) matchCase {
		return bannerCase(514, "udp", line)
	}
	c := func(name, line, vendor, rule string) matchCase {
		m := syslog(line)
		m.name = name
		if vendor != "" {
			m.want = wantMatch{Vendor: vendor, Rule: rule}
		}
		return m
	}
	checkMatches(t, []matchCase{
		c("cloudgen login attempt", "Security MACHINE-F380 LOGIN ATTEMPT: Login from 203.0.113.4: Denied: Firewall Rule RULENAME", "Barracuda", bar),
		c("cloudgen ktina", "Warning  MACHINE-F380 [5647250.628103] KTINA-WARN: IPSEC-v2-EXAMPLE doesn't have a transport", "Barracuda", bar),
		c("cloudgen phion path", "Info     MACHINE-F380 [master@203.0.113.4_29010]  Commit operation: 0 Execute: /opt/phion/modules/box/boxsrv/bsyslog/bin/activate", "Barracuda", bar),
		c("another firewall's login line", "sshd[123]: LOGIN ATTEMPT from 203.0.113.4 refused", "", ""),
		c("log exporter escaped sic", "time=1613022553|hostname=gw-1|product=Mobile Access|ifdir=outbound|originsicname=cn\\=cp_mgmt,o\\=gw-1..abcd|version=5", "Check Point", cp),
		c("lea quoted export", `"21" "10Dec2019" "23:44:49" "eth1" "HOST-01" "Log" "Drop" "58339" "46193"`, "Check Point", cp),
		c("key=value without a sic name", "time=1613022553|hostname=gw-1|product=Something|message=cn\\=x", "", ""),
		c("sslvpn context without ppe", "<12> 01/10/2001:01:01:01 GMT netscaler ABC-D : SSLVPN HTTPREQUEST 1234567 : Context user@192.0.2.1 - SessionId: 12345- example.com", "Citrix", ns),
		c("netscaler bash.log", `root on /dev/pts/0 shell_command="PATH=/netscaler:/bin"`, "Citrix", ns),
		c("netscaler httpaccess", `203.0.113.4 -> 203.0.113.5 - - [10/Jun/2024:23:07:11 +0530] [1571] "GET /nitro/v1/config/route6 HTTP/1.1" 200 1162 "-" "-" "Time: 9797 microsecs"`, "Citrix", ns),
		c("a web server's access log", `203.0.113.4 - - [10/Jun/2024:23:07:11 +0530] "GET / HTTP/1.1" 200 1162 "-" "-"`, "", ""),
		c("big-ip rfc5424 apmd", "<141>1 2020-04-14T14:39:05Z bigip apmd 7389 01490248:5: /RAS/x:ras:a7860e5: Received client info", "F5", apm),
		c("f5 sd-id", `<141>1 2020-04-14T14:39:05Z bigip mcpd 7389 - [F5@12276 hostname="bigip"] hello`, "F5", f5),
		c("another vendor's sd-id", `<141>1 2020-04-14T14:39:05Z host app 7389 - [origin@32473 ip="192.0.2.1"] hello`, "", ""),
		c("pulse pipe layout", "PulseSecure: - - - ive | 2020-09-16 18:10:53 | ADM100 | info | 10.251.0.1 |  | 172.30.0.21 | username | Ace Admin |  |  | Admin user 'username' has accepted Pulse EULA", "Ivanti", pulse),
		c("another pipe log", "app | 2020-09-16 18:10:53 | ADM100 | info | hello", "", ""),
	})
}
