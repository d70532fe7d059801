package enrich

import "testing"

// TestRules_AQ4Classes checks the boot and start-up lines group AQ4 added
// (95-aq4-boot.yaml): ASA's Lina console lines, a FortiGate's BIOS banner and
// loader lines, a vSRX's kernel-module list, occtl's socket error, the Access
// Server's ovpn-init licence text and PAN-OS's SWInstall job, against
// look-alikes that must stay unnamed: another Fortinet appliance's BIOS
// banner, the loader line alone, a plain FreeBSD module list, another tool's
// socket error, another product's licence text and another system's install
// job.
func TestRules_AQ4Classes(t *testing.T) {
	checkMatches(t, []matchCase{
		{name: "asav lina console", svc: bannerService(22, "tcp", "info: Running in kvm virtual environment.\nLina to use serial port /dev/ttyS0 for console IO\nConfiguring packages on first boot....\n"), want: wantMatch{Vendor: "Cisco", Rule: "aq4-asa-lina-boot-console"}},
		{name: "linaro toolchain line", svc: bannerService(22, "tcp", "Linux version 4.9.0 (gcc version 7.3.1 (Linaro GCC 7.3-2018.05))\nLinaro to use serial port /dev/ttyS0\n"), want: wantMatch{}},
		{name: "asa rommon platform", svc: bannerService(22, "tcp", "Cisco Systems ROMMON Version (1.0(12)11) #4: Thu May  1 14:50:05 PDT 2008\n\nPlatform ASA5505\n\nUse BREAK or ESC to interrupt boot.\n"), want: wantMatch{Vendor: "Cisco", Rule: "aq4-asa-rommon-platform"}},
		{name: "asa newer rommon platform", svc: bannerService(22, "tcp", "Cisco Systems ROMMON, Version 1.1.18, RELEASE SOFTWARE\nPlatform ASA5516 with 8192 Mbytes of main memory\nUse BREAK or ESC to interrupt boot.\n"), want: wantMatch{Vendor: "Cisco", Rule: "aq4-asa-rommon-platform"}},
		{name: "asa smfw lina", svc: bannerService(22, "tcp", "SMFW PID: 512, created member ASA BLOB, PID=514\n"), want: wantMatch{Vendor: "Cisco", Rule: "aq4-asa-lina-boot-console"}},
		{name: "platform line of another maker", svc: bannerService(22, "tcp", "Platform AS5300 with 256 Mbytes of main memory\nUse BREAK or ESC to interrupt boot.\n"), want: wantMatch{}},
		{name: "ios rommon", svc: bannerService(22, "tcp", "System Bootstrap, Version 15.0(1r)M16, RELEASE SOFTWARE (fc1)\nCISCO2911/K9 platform with 524288 Kbytes of main memory\nReadonly ROMMON initialized\n"), want: wantMatch{}},
		{name: "fortigate bios two lines", svc: bannerService(22, "tcp", "FortiGate-92D (17:35-08.07.2014)\nVer:05000005\nSerial number:FGT\nTotal RAM: 2048MB\n"), want: wantMatch{Vendor: "Fortinet", Rule: "aq4-fortigate-bios-boot-banner"}},
		{name: "fortigate bios one line", svc: bannerService(22, "tcp", "FortiGate-60F (23:24-08.29.2019) Ver:05000006 Serial number: FGT60FTKxxxxxx CPU: 1200MHz Total RAM: 2 GB Initializing boot device...\n"), want: wantMatch{Vendor: "Fortinet", Rule: "aq4-fortigate-bios-boot-banner"}},
		{name: "fortigate loader lines", svc: bannerService(22, "tcp", "Reading boot image 1422060 bytes.\nInitializing firewall...\n"), want: wantMatch{Vendor: "Fortinet", Rule: "aq4-fortigate-bios-boot-banner"}},
		{name: "fortianalyzer bios", svc: bannerService(22, "tcp", "FortiAnalyzer-400E (09:51-06.18.2019)\nVer:05000009\nSerial number:FAZ\n"), want: wantMatch{}},
		{name: "loader line alone", svc: bannerService(22, "tcp", "Reading boot image 1422060 bytes.\n"), want: wantMatch{}},
		{name: "vsrx kld list", svc: bannerService(22, "tcp", "kld platform: fileassoc if_em if_em_vjx if_vtnet if_vtnet_vsrx virtio virtio_blk\n"), want: wantMatch{Vendor: "Juniper Networks", Rule: "aq4-vsrx-kld-driver-list"}},
		{name: "plain freebsd kld list", svc: bannerService(22, "tcp", "kld platform: fileassoc if_em if_vtnet virtio virtio_blk\n"), want: wantMatch{}},
		{name: "occtl socket error", svc: bannerService(443, "tcp", "daemon.err uhttpd[1753]: error connecting to ocserv socket '/var/run/occtl.socket': No such file or directory\n"), want: wantMatch{Vendor: "OpenConnect", Rule: "ocserv-log"}},
		{name: "another socket error", svc: bannerService(443, "tcp", "error connecting to socket '/var/run/acme.socket': No such file or directory\n"), want: wantMatch{}},
		{name: "ovpn-init eula", svc: bannerService(22, "tcp", "       a license exception, please file a support ticket in the OpenVPN Access\n       Server ticketing system. A staff member will be responsible for determining\n"), want: wantMatch{Vendor: "OpenVPN Inc.", Rule: "aq4-openvpn-as-ovpn-init-eula"}},
		{name: "ovpn-init eula container prefix", svc: bannerService(22, "tcp", "openvpn-as    |        licenses, as well as requests that substantively deviate from the OpenVPN\nopenvpn-as    |        Access Server product line. Tickets related to the open source version of\n"), want: wantMatch{Vendor: "OpenVPN Inc.", Rule: "aq4-openvpn-as-ovpn-init-eula"}},
		{name: "another licence text", svc: bannerService(22, "tcp", "please file a support ticket in the Acme Server ticketing system.\n"), want: wantMatch{}},
		{name: "panos swinstall job", svc: bannerService(22, "tcp", "admin@PA-410> show jobs id 3\nDetails:Failed to install 10.2.0 with the following errors.\nFailed to install   version  10.2.0  type  panos\n"), want: wantMatch{Vendor: "Palo Alto Networks", Rule: "aq4-panos-swinstall-job"}},
		{name: "another install job", svc: bannerService(22, "tcp", "Failed to install   version  1.2.3  type  firmware\n"), want: wantMatch{}},
	})
}
