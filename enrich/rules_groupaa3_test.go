package enrich

import "testing"

// TestRules_GroupAA3 checks the CLI and console answers group AA3 added
// (docs/rules-sources.md, "Group AA3"): each form as its public example
// prints it, the other forms of the same answer the sources name (SonicOS
// 6/7's show version, SFOS's short release, the VPN-1/FireWall-1 fw ver,
// Junos's "built" line, a RouterOS beta), and the look-alikes that must
// name nothing: a honeypot printing RouterOS's banner before its login
// prompt, a web page quoting fw ver, another vendor's version answer.
func TestRules_GroupAA3(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	text := bannerService
	const logo = "  MMM      MMM       KKK                          TTTTTTTTTTT      KKK\n  MMMM    MMMM       KKK                          TTTTTTTTTTT      KKK\n"
	tests := []struct {
		name string
		port int
		tr   string
		s    string
		want wantMatch
	}{
		{name: "routeros post-login banner", port: 22, tr: "tcp", s: logo + "\n  MikroTik RouterOS 6.35.2 (c) 1999-2016       http://www.mikrotik.com/\n\n[?]             Gives the list of available commands", want: wantMatch{Vendor: "MikroTik", Version: "6.35.2"}},
		{name: "routeros beta banner", port: 22, tr: "tcp", s: logo + "\n  MikroTik RouterOS 7.1rc3 (c) 1999-2021       https://www.mikrotik.com/\n\nPress F1 for help\n", want: wantMatch{Vendor: "MikroTik", Version: "7.1rc3"}},
		{name: "routeros console prompt without v", port: 23, tr: "tcp", s: "MikroTik 6.40 (stable)\nMikroTik Login: ", want: wantMatch{Vendor: "MikroTik", Version: "6.40"}},
		{name: "routeros mndp listing", port: 5678, tr: "udp", s: "00:00:5e:00:53:01  gateway\n    board     RB2011UiAS\n    version   7.24.1 (stable)\n", want: wantMatch{Vendor: "MikroTik", Version: "7.24.1"}},
		{name: "routeros package update print", port: 22, tr: "tcp", s: "            channel: long-term\n  installed-version: 6.49.12\n", want: wantMatch{Vendor: "MikroTik", Version: "6.49.12"}},
		{name: "honeypot logo before login names nothing", port: 23, tr: "tcp", s: "\r\n\r\n" + logo + "\r\n  MikroTik RouterOS 6.49.7\r\n\r\nLogin: ", want: wantMatch{}},
		{name: "installed-version alone names nothing", port: 22, tr: "tcp", s: "installed-version: 2.4.1\n", want: wantMatch{}},
		{name: "sonicos 5 show status", port: 22, tr: "tcp", s: "Model: NSA 240\nFirmware Version: SonicOS Enhanced 5.8.1.0-30o\nROM Version: SonicROM 5.0.2.12\n", want: wantMatch{Vendor: "SonicWall", Version: "5.8.1.0-30o"}},
		{name: "sonicos 6 show version", port: 22, tr: "tcp", s: "firmware-version \"SonicOS Enhanced 6.5.4.4-44n\"\nrom-version \"SonicROM 6.5.0.0\"\nmodel \"NSA 2650\"\n", want: wantMatch{Vendor: "SonicWall", Version: "6.5.4.4-44n"}},
		{name: "sonicos 7 show version", port: 22, tr: "tcp", s: "firmware-version \"SonicOS 7.1.2-7019\"\nproduct-name \"TZ 570\"\n", want: wantMatch{Vendor: "SonicWall", Version: "7.1.2-7019"}},
		{name: "sfos console menu", port: 22, tr: "tcp", s: "Sophos Firmware Version SFOS 19.5.3 MR-3-Build652\n\nMain Menu\n\n    1.  Network  Configuration\n", want: wantMatch{Vendor: "Sophos", Version: "19.5.3"}},
		{name: "sfos console menu short release", port: 22, tr: "tcp", s: "Sophos Firmware Version SFOS 18.0 GA-Build339\n\nMain Menu\n", want: wantMatch{Vendor: "Sophos", Version: "18.0.0"}},
		{name: "check point fw ver", port: 22, tr: "tcp", s: "[Expert@gw:0]# fw ver\nThis is Check Point's software version R81.20 - Build 631\n", want: wantMatch{Vendor: "Check Point", Version: "R81.20"}},
		{name: "check point fw ver vpn-1 wording", port: 22, tr: "tcp", s: "This is Check Point VPN-1(TM) & FireWall-1(R) R65 - Build 022\n", want: wantMatch{Vendor: "Check Point", Version: "R65"}},
		{name: "check point fwm ver", port: 22, tr: "tcp", s: "This is Check Point Security Management Server R81.10 - Build 004\n", want: wantMatch{Vendor: "Check Point", Version: "R81.10"}},
		{name: "junos login line built", port: 22, tr: "tcp", s: "--- JUNOS 12.1X46-D40.2 built 2015-09-24 11:15:41 UTC\nroot@srx> ", want: wantMatch{Vendor: "Juniper Networks", Version: "12.1X46-D40.2"}},
		{name: "junos login line kernel", port: 22, tr: "tcp", s: "--- JUNOS 19.3R2.9 Kernel 64-bit XEN JNPR-11.0-20191120.0ebd4bf_buil\nlab@vsrx> ", want: wantMatch{Vendor: "Juniper Networks", Version: "19.3R2.9"}},
		{name: "zld show version four-letter code", port: 22, tr: "tcp", s: "Zyxel Communications Corp.\nmodel            : USG FLEX 100\nfirmware version : V5.37(ABUH.0)\n", want: wantMatch{Vendor: "Zyxel", Version: "5.37"}},
		{name: "zld show version three-letter code", port: 22, tr: "tcp", s: "model           : ZyWALL USG 110\nfirmware version: 2.20(AQQ.0)b3\n", want: wantMatch{Vendor: "Zyxel", Version: "2.20"}},
		{name: "zyxel switch show version names nothing", port: 22, tr: "tcp", s: "Boot Version     : V0.0.0.0 | 01/01/2000\nFirmware Version : V2.90(AAHH.2) | 05/07/2026\n", want: wantMatch{}},
		{name: "sonicos 7 ssh greeting", port: 22, tr: "tcp", s: "\nCopyright (c) 2024 SonicWall, Inc.\n\nUsing username 'admin'.\nPassword: ", want: wantMatch{Vendor: "SonicWall"}},
		{name: "sonicos serial prompt", port: 22, tr: "tcp", s: "admin@0017C5123456> show interfaces\n", want: wantMatch{Vendor: "SonicWall"}},
		{name: "putty's own using-username line names nothing", port: 22, tr: "tcp", s: "Using username \"admin\".\nadmin@host's password: ", want: wantMatch{}},
		{name: "gaia clish message id", port: 22, tr: "tcp", s: "gw-a> set static-route default nexthop gateway address 192.0.2.1 on\nCLINFR0771  Config lock is owned by admin. Use the command 'lock database override' to acquire the lock.\n", want: wantMatch{Vendor: "Check Point"}},
		{name: "gaia expert prompt with show version all", port: 22, tr: "tcp", s: "[Expert@gw-a:0]# clish -c \"show version all\"\nProduct version Check Point Gaia R81.10\nOS build 335\n", want: wantMatch{Vendor: "Check Point", Version: "R81.10"}},
		{name: "srx cluster show version keeps its release", port: 22, tr: "tcp", s: "node0:\n--------------------------------------------------------------------------\nHostname: fw-a\nModel: srx1500\nJunos: 19.4R3-S1.3\n\n{primary:node0}\nadmin@fw-a> ", want: wantMatch{Vendor: "Juniper Networks", Version: "19.4R3-S1.3"}},
		{name: "gaia expert prompt", port: 22, tr: "tcp", s: "[Expert@gw-a:0]# cpstat fw\n", want: wantMatch{Vendor: "Check Point"}},
		{name: "srx cluster secondary node", port: 22, tr: "tcp", s: "{secondary:node1}\nadmin@srx-b> ", want: wantMatch{Vendor: "Juniper Networks"}},
		{name: "mx dual routing engine names nothing", port: 22, tr: "tcp", s: "{master}\nadmin@mx240-re0> ", want: wantMatch{}},
		{name: "stormshield getversion names nothing", port: 22, tr: "tcp", s: "SN910A17A1711A7>getversion\nFirewall software version 4.1.5\n", want: wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, text(tt.port, tt.tr, tt.s), tt.want)
		})
	}
	t.Run("a web page quoting fw ver names nothing", func(t *testing.T) {
		page := tcpService(443, httpProbe("GET", "/sk/fw-ver", 200, "<html><head><title>How to check the version</title></head><body><pre>[Expert@gw:0]# fw ver\nThis is Check Point's software version R81.20 - Build 631</pre></body></html>"))
		checkMatch(t, rules, page, wantMatch{})
	})
}
