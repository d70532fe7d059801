package enrich

import "testing"

// TestRules_World checks the round AF5 rules (rules/82-af5-world.yaml):
// FortiOS's REST envelope cut to its serial and version, a localized
// FortiGate's login redirect, RouterOS's default-configuration notice and
// the Fireware CLI's version line, with the look-alikes that must stay
// unnamed.
func TestRules_World(t *testing.T) {
	json := func(path, body string) matchCase {
		return matchCase{name: path + " " + body, svc: tcpService(443, httpProbe("GET", path, 200, body, "Content-Type", "application/json"))}
	}
	redirect := func(location string) *matchCase {
		return &matchCase{svc: tcpService(443, httpProbe("GET", "/", 302, "", "Location", location))}
	}
	cases := []matchCase{}
	add := func(name string, c matchCase, w wantMatch) {
		c.name, c.want = name, w
		cases = append(cases, c)
	}
	add("fortios envelope, version before serial", json("/api/v2/monitor/system/status", `{"results":{"hostname":"FGT-60F"},"version":"v7.2.5","serial":"FGT60F123"}`),
		wantMatch{Vendor: "Fortinet", Rule: "af5-fortinet-fortios-api-serial-version", Version: "7.2.5"})
	add("fortios envelope, serial before version, no build", json("/api/v2/cmdb/system/global", `{"status":"success","serial":"FGVM02TM21000001","version":"v7.4.3"}`),
		wantMatch{Vendor: "Fortinet", Version: "7.4.3"})
	add("fortiwifi serial", json("/api/v2/monitor/system/status", `{"version":"v6.4.9","serial":"FWF60E4Q16000001"}`),
		wantMatch{Vendor: "Fortinet", Version: "6.4.9"})
	add("fortimanager serial", json("/jsonrpc", `{"version":"v7.2.5","serial":"FMG-VM0000000000"}`), wantMatch{})
	add("fortiweb serial", json("/api/v2.0/system/status", `{"version":"v7.0.2","serial":"FV-1KC3R11700094"}`), wantMatch{})
	add("another product's version and serial", json("/api/status", `{"version":"v7.2.5","serial":"SN123456789"}`), wantMatch{})
	for _, loc := range []string{"/remote/login?lang=x-sjis", "https://vpn.example.com/remote/login?lang=GB2312", "/remote/login?lang=big5", "/remote/login?lang=euc-kr"} {
		add("localized login redirect "+loc, *redirect(loc), wantMatch{Vendor: "Fortinet", Rule: "af5-redirect-fortinet-sslvpn-localized-lang", Product: "FortiGate SSL-VPN"})
	}
	add("english login redirect stays the redirect rule's", *redirect("/remote/login?lang=en"), wantMatch{Vendor: "Fortinet", Rule: "redirect-fortinet-sslvpn"})
	add("a traversal in the lang parameter", *redirect("/remote/login?lang=../../etc/passwd"), wantMatch{})
	defconf := "Welcome to RouterOS!\n   1) Set a strong router password in the System > Users menu\n   2) Upgrade the software in the System > Packages menu\n"
	add("routeros default-configuration notice", sshCase(defconf+"RouterMode:\n"), wantMatch{Vendor: "MikroTik", Rule: "af5-mikrotik-routeros-defconf-notice"})
	add("routeros default script's comment", sshCase("script: #| Welcome to RouterOS!\n                    #|    1) Set a strong router password in the System > Users menu\n"),
		wantMatch{Vendor: "MikroTik"})
	add("another system's welcome", sshCase("Welcome to Ubuntu 22.04.4 LTS (GNU/Linux 5.15.0-105-generic x86_64)\n"), wantMatch{})
	add("the welcome line alone", sshCase("Welcome to RouterOS!\n"), wantMatch{})
	add("fireware sysinfo", sshCase("Fireware OS Version: 12.7.2.B657832\nModel: M270\n"),
		wantMatch{Vendor: "WatchGuard", Rule: "af5-watchguard-fireware-os-version-line", Version: "12.7.2"})
	add("a firmware line that is not fireware", sshCase("Firmware Version: 12.7.2\nModel: M270\n"), wantMatch{})
	checkMatches(t, cases)
}
