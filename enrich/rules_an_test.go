package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_RoundANProducts checks the product lines round AN's merge set
// apart from the family they share an API with: a BIG-IQ's iControl REST
// answers and its /VERSION file are named BIG-IQ (not BIG-IP, whose CVEs it
// does not share), a Panorama's XML API answer names nothing (the
// management server, not a firewall), while the firewall's and the
// BIG-IP's own answers keep their names and releases.
func TestRules_RoundANProducts(t *testing.T) {
	slots := func(product, version string) string {
		return `{"kind":"shared:resolver:device-groups:restdeviceresolverdevicestate","slots":[{"volume":"HD1.1","product":"` + product + `","version":"` + version + `","build":"0.0.1490","isActive":true}],"generation":3,"lastUpdateMicros":1525977026342300}`
	}
	panos := func(model, version string) string {
		return `<response status="success"><result><system><hostname>fw</hostname><model>` + model + `</model><sw-version>` + version + `</sw-version></system></result></response>`
	}
	get := func(path, body string) *ingest.Service {
		return tcpService(443, headerProbe("GET", path, 200, body))
	}
	shell := func(text string) *ingest.Service { return bannerService(22, "tcp", text) }
	const sysInfo = "/api/?type=op&cmd=<show><system><info></info></system></show>"
	checkMatches(t, []matchCase{
		{"big-iq slots", get("/mgmt/shared/resolver/device-groups/cm-bigip-allDevices/devices", slots("BIG-IQ", "6.0.0")), wantMatch{Vendor: "F5", Product: "BIG-IQ", Version: "6.0.0", StrictVersion: true}},
		{"big-iq add-node task", get("/mgmt/cm/shared/esmgmt/add-node", `{"address":"192.0.2.7","bigIqUsername":"admin","status":"STARTED","generation":1,"lastUpdateMicros":1525977026342300,"kind":"cm:shared:esmgmt:add-node:esaddnodetaskstate"}`), wantMatch{Vendor: "F5", Product: "BIG-IQ"}},
		{"big-ip slots", get("/mgmt/shared/identified-devices/config/device-info", slots("BIG-IP", "14.1.0.5")), wantMatch{Vendor: "F5", Product: "BIG-IP"}},
		{"pan-os firewall system info", get(sysInfo, panos("PA-3050", "9.1.4")), wantMatch{Vendor: "Palo Alto Networks", Version: "9.1.4", StrictVersion: true}},
		{"panorama system info", get(sysInfo, panos("Panorama", "9.0.6")), wantMatch{}},
		{"m-series panorama system info", get("/api/?type=version", panos("M-200", "10.1.3")), wantMatch{}},
		// the /VERSION file in a shell session names the product it describes
		{"big-iq cat /VERSION", shell("Product: BIG-IQ\nVersion: 8.2.0\nBuild: 0.0.310\nEdition: Final\n"), wantMatch{Vendor: "F5", Product: "BIG-IQ", Version: "8.2.0", StrictVersion: true}},
		{"big-ip cat /VERSION", shell("Product: BIG-IP\nVersion: 15.1.2.1\nBuild: 0.0.10\nEdition: Final\n"), wantMatch{Vendor: "F5", Product: "BIG-IP", Version: "15.1.2.1", StrictVersion: true}},
	})
}
