package enrich

import "testing"

// TestRules_AP12Classes checks the class the group AP12 round added
// (94-ap12-versions.yaml): OpenVPN Access Server's installer and
// package-manager answers and the release each form names (the installer's
// closing line, dpkg's "Setting up openvpn-as (<release>-<hash>-<distro>)",
// rpm's "1:openvpn-as-0:<release>-<distro>"), against look-alikes that must
// stay unnamed: the community OpenVPN package's dpkg lines, the Access
// Server's bundled-clients package alone, and another product installed under
// /usr/local; and TP-Link Omada Controller's installer answers (dpkg's
// "omadac (<release>)" lines, the post-install script's lines) against another
// Debian package's dpkg lines and another controller's success line.
func TestRules_AP12Classes(t *testing.T) {
	checkMatches(t, []matchCase{
		{name: "as installer closing line", svc: bannerService(22, "tcp", "Access Server 2.13.1 has been successfully installed in /usr/local/openvpn_as\nConfiguration log file has been written to /usr/local/openvpn_as/init.log\n"), want: wantMatch{Vendor: "OpenVPN Inc.", Rule: "ap12-openvpn-as-installer", Version: "2.13.1", StrictVersion: true}},
		{name: "as dpkg build hash", svc: bannerService(22, "tcp", "Setting up openvpn-as (2.10.2-3383e1e5-Ubuntu18) ...\nBeginning with OpenVPN AS 2.6.0 compression is disabled by default and on upgrades as security patch.\n"), want: wantMatch{Vendor: "OpenVPN Inc.", Rule: "ap12-openvpn-as-installer", Version: "2.10.2", StrictVersion: true}},
		{name: "as older installer with dpkg", svc: bannerService(22, "tcp", "Unpacking openvpn-as (2.0.25-Ubuntu14) ...\nSetting up openvpn-as (2.0.25-Ubuntu14) ...\nThe Access Server has been successfully installed in /usr/local/openvpn_as\n"), want: wantMatch{Vendor: "OpenVPN Inc.", Rule: "ap12-openvpn-as-installer", Version: "2.0.25", StrictVersion: true}},
		{name: "as rpm progress", svc: bannerService(22, "tcp", "Updating / installing...\n   1:openvpn-as-0:2.0.10-CentOSrelease################################# [100%]\n"), want: wantMatch{Vendor: "OpenVPN Inc.", Rule: "ap12-openvpn-as-installer", Version: "2.0.10", StrictVersion: true}},
		{name: "community openvpn dpkg", svc: bannerService(22, "tcp", "Unpacking openvpn (2.4.4-2ubuntu1.7) ...\nSetting up openvpn (2.4.4-2ubuntu1.7) ...\n"), want: wantMatch{}},
		{name: "bundled clients alone", svc: bannerService(22, "tcp", "Setting up openvpn-as-bundled-clients (22) ...\n"), want: wantMatch{}},
		{name: "other product under /usr/local", svc: bannerService(22, "tcp", "Acme Server 2.1.0 has been successfully installed in /usr/local/acme\n"), want: wantMatch{}},
		{name: "omada dpkg install", svc: bannerService(22, "tcp", "Preparing to unpack Omada_SDN_Controller_v5.14.26.1_linux_x64.deb ...\nUnpacking omadac (5.14.26.1) ...\nSetting up omadac (5.14.26.1) ...\nInstall Omada Controller succeeded!\n"), want: wantMatch{Vendor: "TP-Link", Rule: "ap12-tplink-omada-controller-installer", Version: "5.14.26.1", StrictVersion: true}},
		{name: "omada install.sh", svc: bannerService(22, "tcp", "======================\nInstallation start ...\nInstall Omada Controller succeeded!\n"), want: wantMatch{Vendor: "TP-Link", Rule: "ap12-tplink-omada-controller-installer"}},
		{name: "another debian package", svc: bannerService(22, "tcp", "Unpacking omada-tools (1.2.3) ...\nSetting up omada-tools (1.2.3) ...\n"), want: wantMatch{}},
		{name: "another controller's success line", svc: bannerService(22, "tcp", "Install UniFi Controller succeeded!\n"), want: wantMatch{}},
	})
}
