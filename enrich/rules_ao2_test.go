package enrich

import "testing"

// TestRules_AO2Classes checks the classes the group AO2 round added
// (93-ao2-advisories.yaml): PAN-OS's sslvpn-access.log line for a
// GlobalProtect .esp request with its taskid/user tail, authd.log's pan_auth_*
// debug heads and its auth profile/vsys result line, and Sophos Firewall's
// advanced-shell service manager; and the look-alikes they must not name: a
// combined-format web log of the same path, a generic "failed authentication"
// line without PAN-OS's profile/vsys pair, another system's service status
// listing and an init script's "service x restart".
func TestRules_AO2Classes(t *testing.T) {
	checkMatches(t, []matchCase{
		{name: "gp sslvpn-access line", svc: bannerService(443, "tcp", "203.0.113.9 [2025-07-09 21:47:56.12421469 +0200 CEST] POST /global-protect/login.esp HTTP/1.1 134 512 11443, taskid 1094695, user jdoe\n"), want: wantMatch{Vendor: "Palo Alto Networks", Rule: "ao2-panos-globalprotect-sslvpn-access-log"}},
		{name: "gp gateway getconfig line", svc: bannerService(443, "tcp", "203.0.113.9 [2024-01-02 10:00:00.1 +0000 UTC] POST /ssl-vpn/getconfig.esp HTTP/1.1 512 200 443, taskid 77, user jdoe\n"), want: wantMatch{Vendor: "Palo Alto Networks", Rule: "ao2-panos-globalprotect-sslvpn-access-log"}},
		{name: "combined log of the same path", svc: bannerService(443, "tcp", "203.0.113.9 - - [09/Jul/2025:21:47:56 +0200] \"POST /global-protect/login.esp HTTP/1.1\" 200 512 \"-\" \"curl/8.0\"\n"), want: wantMatch{}},
		{name: "authd debug head", svc: bannerService(22, "tcp", "2025-07-10 08:47:04.458 +0200 debug: pan_auth_cache_user_is_allowed(pan_auth_cache_allowlist_n_grp.c:789): user \"XXX\" is NOT in allow list\n"), want: wantMatch{Vendor: "Palo Alto Networks", Rule: "ao2-panos-authd-log"}},
		{name: "authd result line", svc: bannerService(22, "tcp", "2025-07-10 08:47:04.459 +0200 failed authentication for user 'bob'. Reason: Invalid username or password. auth profile 'GP', vsys 'vsys1', From: 203.0.113.1.\n"), want: wantMatch{Vendor: "Palo Alto Networks", Rule: "ao2-panos-authd-log"}},
		{name: "generic failed authentication", svc: bannerService(22, "tcp", "Jul 10 08:47:04 host app[1]: failed authentication for user 'bob'. Reason: bad password\n"), want: wantMatch{}},
		{name: "sfos service action", svc: bannerService(22, "tcp", "# service strongswan:debug -ds nosync\n200 OK\n"), want: wantMatch{Vendor: "Sophos", Rule: "ao2-sophos-sfos-service-manager"}},
		{name: "sfos service list", svc: bannerService(22, "tcp", "# service -S | grep sslvpn\nsslvpn                RUNNING\n"), want: wantMatch{Vendor: "Sophos", Rule: "ao2-sophos-sfos-service-manager"}},
		{name: "linux service status", svc: bannerService(22, "tcp", "$ service --status-all\n [ + ]  ssh\n [ - ]  nginx\n"), want: wantMatch{}},
		{name: "init script restart", svc: bannerService(22, "tcp", "# service nginx restart\nRestarting nginx: nginx.\n"), want: wantMatch{}},
	})
}

// TestRules_AO2NetScalerAaad checks the aaad.debug class (batch 4): the AAA
// daemon's source-path prefix names NetScaler; a C program's own
// file[line] prefix without the netscaler/aaad path does not.
func TestRules_AO2NetScalerAaad(t *testing.T) {
	checkMatches(t, []matchCase{
		{name: "aaad ldap driver line", svc: bannerService(22, "tcp", "Mon Mar  4 10:00:01 2024 /home/build/rs_131_x/usr.src/usr.bin/nsaaad/../../netscaler/aaad/ldap_drv.c[612]: receive_ldap_user_search_event built group string for bob of:VPN\n"), want: wantMatch{Vendor: "Citrix", Rule: "ao2-netscaler-aaad-debug-source-path"}},
		{name: "another daemon's file[line] prefix", svc: bannerService(22, "tcp", "Mon Mar  4 10:00:01 2024 /src/app/auth/ldap_drv.c[612]: start_ldap_auth attempting to auth bob\n"), want: wantMatch{}},
	})
}
