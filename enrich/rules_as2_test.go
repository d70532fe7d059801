package enrich

import "testing"

// TestRules_AS2VersionLines checks the classes group AS2 added
// (95-as2-versions.yaml): Junos show version's package lines with their
// release, PyEZ's facts of an SRX cluster cut before junos_info's text,
// wireguard-tools' and the backport module's release lines, the
// GlobalProtect app's PanGPS.log line naming a portal, and a GlobalProtect
// gateway's minimum-app refusal; and the look-alikes they must not name or
// read a release from: package lines with builder stamps only, another
// vendor's bracketed release, the mainline module's constant 1.0.0, another
// program's wg version line, a PanGPS line naming no portal or gateway,
// another product's minimum-version message.
func TestRules_AS2VersionLines(t *testing.T) {
	var cases caseList
	add := func(name string, port int, tr, text string, want wantMatch) {
		cases.add(name, bannerCase(port, tr, text), want)
	}
	add("junos ex member package lines", 22, "tcp", "fpc1:\n-----\nHostname: lab\nModel: ex4550-32f\nJUNOS EX  Software Suite [13.2X51-D35.3]\nJUNOS Web Management [13.2X51-D35.3]\n", wantMatch{Vendor: "Juniper Networks", Version: "13.2X51-D35.3"})
	add("junos base os boot line", 22, "tcp", "Hostname: r1\nJUNOS Base OS boot [14.2R4]\nJUNOS Base OS Software Suite [14.2R4]\n", wantMatch{Vendor: "Juniper Networks", Version: "14.2R4"})
	add("junos service release", 22, "tcp", "JUNOS Packet Forwarding Engine Support (M/T Common) [12.3R7-S2.1]\n", wantMatch{Vendor: "Juniper Networks", Version: "12.3R7-S2.1"})
	add("pyez facts of an srx cluster cut before the text", 830, "tcp", `"junos_info": {
    "node0": {
        "object": {
            "build": 2,
            "major": [`, wantMatch{Vendor: "Juniper Networks", StrictVersion: true})
	add("ansible facts model of a vsrx", 830, "tcp", `"ansible_net_model": "vsrx",`, wantMatch{Vendor: "Juniper Networks"})
	add("wg --version", 51820, "udp", "wireguard-tools v1.0.20210914 - https://git.zx2c4.com/wireguard-tools/\n", wantMatch{Vendor: "WireGuard", Version: "1.0.20210914"})
	add("backport module load line", 51820, "udp", "[   12.000001] wireguard: WireGuard 1.0.20220627 loaded. See www.wireguard.com for information.\n", wantMatch{Vendor: "WireGuard", Version: "1.0.20220627"})
	add("pangps line naming a gateway", 443, "tcp", "(P4120-T3052)Info ( 512): 03/14/24 09:01:02:123 Connected to gateway gw.example.com:443 successfully.", wantMatch{Vendor: "Palo Alto Networks"})
	add("minimum app refusal", 443, "tcp", "Please ensure the compatible GlobalProtect version is: 6.2.0 or above", wantMatch{Vendor: "Palo Alto Networks"})
	// look-alikes
	add("package lines with builder stamps only", 22, "tcp", "JUNOS OS libs [20180614.6c3f819_builder_stable_11]\nJUNOS OS runtime [20180614.6c3f819_builder_stable_11]\n", wantMatch{})
	add("another vendor's bracketed release", 22, "tcp", "EOS Software Suite [4.21.1F]\n", wantMatch{})
	add("mainline module constant", 51820, "udp", "wireguard: WireGuard 1.0.0 loaded. See www.wireguard.com for information.", wantMatch{Vendor: "WireGuard", StrictVersion: true})
	add("another program's version line", 22, "tcp", "wgtool v1.0.20210914 - https://example.com/wgtool/\n", wantMatch{})
	add("pangps line naming no portal", 443, "tcp", "(P4120-T3052)Debug( 210): 03/14/24 09:01:02:123 Service started.", wantMatch{})
	add("another product's minimum version", 443, "tcp", "Please ensure the compatible client version is: 6.1.4 or above", wantMatch{})
	checkMatches(t, cases)
}
