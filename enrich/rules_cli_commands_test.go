package enrich

import "testing"

// 99-cli-commands.yaml: a command that exists in one vendor's CLI only,
// typed at a line's start (after an optional prompt), names that vendor;
// the same words inside a sentence, commands other vendors' CLIs share,
// Fortinet's other products and Panorama do not.
func TestRules_CLICommands(t *testing.T) {
	var cases caseList
	ssh, add := sshCase, cases.add
	add("fortios diagnose vpn tunnel at a prompt", ssh("FGT # diagnose vpn tunnel list\nlist all ipsec tunnel in vd 0\n------------------------------------------------------\nname=HUB_0 ver=1 serial=4\n"), wantMatch{Vendor: "Fortinet", Rule: "cli-commands-fortios"})
	add("fortios diag sys session without a prompt", ssh("diag sys session list\nsession info: proto=6\n"), wantMatch{Vendor: "Fortinet", Rule: "cli-commands-fortios"})
	add("fortios get system performance status", ssh("FW01 # get system performance status\nCPU states: 0% user\n"), wantMatch{Vendor: "Fortinet", Rule: "cli-commands-fortios"})
	add("fortios get system status is shared with fortinet's other products", ssh("FW01 # get system status\nHostname: FW01\n"), wantMatch{})
	add("fortimanager prompt with a fortios command", ssh("FMG-VM64 # diagnose debug application ike -1\n"), wantMatch{})
	add("fortios command inside a sentence", ssh("then you run diagnose vpn tunnel list to see the tunnels\n"), wantMatch{})
	add("srx show security flow session", ssh("root@srx> show security flow session\nSession ID: 1, Policy name: p1/4\n"), wantMatch{Vendor: "Juniper Networks", Rule: "cli-commands-junos-srx"})
	add("srx chassis cluster failover", ssh("admin@fw> request chassis cluster failover redundancy-group 1 node 1\nnode1:\n--------------------------------------------------------------------------\nInitiated manual failover for redundancy group 1\n"), wantMatch{Vendor: "Juniper Networks", Rule: "cli-commands-junos-srx"})
	add("junos show security pki is shared with mx", ssh("admin@mx> show security pki local-certificate\n"), wantMatch{})
	add("panos show session all", ssh("admin@fw> show session all\n--------------------------------------------------------------------------------\nID          Application    State   Type Flag  Src[Sport]/Zone/Proto (translated IP[Port])\n"), wantMatch{Vendor: "Palo Alto Networks", Rule: "cli-commands-panos"})
	add("show system info is panorama's too", ssh("admin@mgmt01> show system info\n\nhostname: mgmt01\n"), wantMatch{})
	add("another cli's lower-case command at a vpn server prompt", ssh("VPN Server>show users\n"), wantMatch{})
	add("panos test security-policy-match", ssh("admin@fw> test security-policy-match from trust to untrust protocol 6\n\"allow-web; index: 3\" {\n        from trust;\n"), wantMatch{Vendor: "Palo Alto Networks", Rule: "cli-commands-panos"})
	add("panos model as default host name", ssh("admin@PA-410> show jobs id 3\n\nEnqueued              Dequeued           ID  Type  Status Result Completed\n"), wantMatch{Vendor: "Palo Alto Networks", Rule: "cli-commands-panos"})
	add("panorama's cli", ssh("admin@Panorama> show system info\n"), wantMatch{})
	add("asa show vpn-sessiondb", ssh("fw01# sh vpn-sessiondb summary\n---------------------------------------------------------------------------\nVPN Session Summary\n"), wantMatch{Vendor: "Cisco", Rule: "cli-commands-cisco-asa"})
	add("asa show xlate", ssh("FW1(config)# show xlate\n1 in use, 1 most used\n"), wantMatch{Vendor: "Cisco", Rule: "cli-commands-cisco-asa"})
	add("ios show ip interface brief is not asa's own", ssh("router# show ip interface brief\n"), wantMatch{})
	add("check point cpstat fw", ssh("gw01> cpstat fw\n\nPolicy name: Standard\nInstall time: Mon Jan 01 00:00:00 2024\n"), wantMatch{Vendor: "Check Point", Rule: "cli-commands-checkpoint"})
	add("f5 tmsh list ltm", ssh("lb01 # tmsh list ltm virtual\nltm virtual vs_web {\n    destination 192.0.2.10:https\n"), wantMatch{Vendor: "F5", Rule: "cli-commands-f5-tmsh"})
	add("mikrotik firewall filter print", ssh("/ip firewall filter print\nFlags: X - disabled, I - invalid, D - dynamic\n"), wantMatch{Vendor: "MikroTik", Rule: "cli-commands-mikrotik-routeros"})
	add("a web path is not a routeros command", ssh("GET /ip/address/print HTTP/1.1\n"), wantMatch{})
	add("softether vpncmd", ssh("C:\\> vpncmd /server localhost /cmd ServerStatusGet\nItem                              |Value\n"), wantMatch{Vendor: "SoftEther", Rule: "cli-commands-softether-vpncmd"})
	add("ocserv occtl", ssh("# occtl show users\n      id     user    vhost             ip         vpn-ip device   since    dtls-cipher    status\n   41345   alice  default    198.51.100.7  192.168.1.100  vpns0  1h:05m  (no-dtls)  connected\n"), wantMatch{Vendor: "OpenConnect", Rule: "cli-commands-ocserv-occtl"})
	add("wireguard wg show on udp", bannerCase(51820, "udp", "# wg show\ninterface: wg0\n"), wantMatch{Vendor: "WireGuard", Rule: "cli-commands-wireguard"})
	add("openvpn as sacli", ssh("./sacli ConfigQuery\n{\n  \"admin_ui.https.ip_address\": \"all\",\n"), wantMatch{Vendor: "OpenVPN Inc.", Rule: "cli-commands-openvpn-as-sacli"})
	add("a fortios command on udp", bannerCase(514, "udp", "FGT # diagnose vpn tunnel list\n"), wantMatch{})
	// group AS5: the command written out without a unit's answer (a guide, notes, a script)
	add("fortios commands alone, a troubleshooting list", ssh("# Phase 2 Issues\ndiagnose vpn tunnel list\ndiagnose vpn ipsec stats\n\n# Debug VPN\ndiagnose debug application ike -1\ndiagnose debug enable\n"), wantMatch{})
	add("asa command at a prompt, then the code block closes", ssh("   ```text\n   fw01# show vpn-sessiondb anyconnect\n   ```\n\nVerify the sessions above.\n"), wantMatch{})
	add("srx commands with trailing descriptions", ssh("show security flow session                       # live session table\nshow security zones                             # zones + bound interfaces\n"), wantMatch{})
	add("a shell script's shebang", ssh("#!/bin/bash\n./sacli --key \"vpn.server.daemon.enable\" --value \"false\" ConfigPut\nStatus: ok\n"), wantMatch{})
	add("a shell script's loop", ssh("while true; do\n  vpncmd localhost /SERVER /CMD HubCreate $HUBNAME\n  SecureNatEnable\ndone\n"), wantMatch{})
	add("commands in an indented markdown block, then the next section", ssh("### 4.2 Session\n\n    diagnose sys session list\n    diagnose sys top\n\n### 4.3 Sniffer\n\nIn many deployments the sniffer runs on port1.\n"), wantMatch{})
	add("asa commands behind a prompt, none answered", ssh("ASA# show vpn-sessiondb anyconnect\nASA# show vpn-sessiondb summary\nASA# show webvpn statistics\n"), wantMatch{})
	add("fortios command in a source code string", ssh("  'BERLIN-BK # diagnose sys session list',\n  'sdwan_mbr_seq=1',\n].join('\\n');\nconst SDWAN_COMBINED_BODY = [\n"), wantMatch{})
	add("fortios commands at two prompts, then the answer", ssh("FGT # diagnose debug application ike -1\nFGT # diagnose debug enable\nike 0: comes 198.51.100.2:500->203.0.113.2:500,ifindex=10\n"), wantMatch{Vendor: "Fortinet", Rule: "cli-commands-fortios"})
	add("wireguard output quoted as comments", ssh("wg show\n# interface: wg0\n#   listening port: 51820\n"), wantMatch{Vendor: "WireGuard", Rule: "cli-commands-wireguard"})
	checkMatches(t, cases)
}
