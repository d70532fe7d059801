package enrich

import "testing"

// 99-names-text.yaml: the product's own name with its release, model or
// serial where a unit states it of itself (a line's start, a field's
// value) names the vendor; the same words inside a sentence, on a UDP
// port, or beside another Fortinet product's serial do not.
func TestRules_NamesInText(t *testing.T) {
	var cases caseList
	ssh, add := sshCase, cases.add
	add("fortios release as a field", ssh("Firmware: FortiOS v7.4.3 build2573\n"), wantMatch{Vendor: "Fortinet", Rule: "names-text-fortinet-fortigate", Version: "7.4.3"})
	add("fortigate model at a line's start", ssh("FortiGate-60F (interim)\nuptime 3 days\n"), wantMatch{Vendor: "Fortinet", Rule: "names-text-fortinet-fortigate"})
	add("fortigate serial as a field", ssh("Serial-Number: FG100FTK20000000\n"), wantMatch{Vendor: "Fortinet", Rule: "names-text-fortinet-fortigate"})
	add("fortios release inside a sentence", ssh("we will upgrade to FortiOS v7.0.5 next week\n"), wantMatch{})
	add("a fortimanager record naming a managed fortigate", ssh("device_id=FMGVMSTM23000100 msg=\"connection to device\" device=FGVM02TM22028028\n"), wantMatch{})
	add("asa hardware line", ssh("Hardware:   ASA5516, 8192 MB RAM, CPU Atom C2000 series 2416 MHz, 1 CPU (8 cores)\n"), wantMatch{Vendor: "Cisco", Rule: "names-text-cisco-asa"})
	add("ivanti release as a field", ssh("Product: Ivanti Connect Secure 22.7R2.3\n"), wantMatch{Vendor: "Ivanti", Rule: "names-text-ivanti-connect-secure", Version: "22.7R2.3"})
	add("sonicwall model and release", ssh("SonicWall NSa 2700 SonicOS 7.0.1-5145\n"), wantMatch{Vendor: "SonicWall", Rule: "names-text-sonicwall"})
	add("arrayos release as a field", ssh("Version: ArrayOS AG 9.4.0.170\n"), wantMatch{Vendor: "Array Networks", Rule: "names-text-array", Version: "9.4.0.170"})
	add("the same line over udp", bannerCase(161, "udp", "Firmware: FortiOS v7.4.3 build2573\n"), wantMatch{})
	add("a check plugin's verdict about a unit's release", ssh("FortiOS v6.2.7 is up to date\n"), wantMatch{})
	add("a fortimanager's device record", ssh("{\"name\": \"branch\", \"platform_str\": \"FortiGate-60F\", \"sn\": \"FGT60FTK19000148\"}\n"), wantMatch{})
	add("a panorama naming pan-os", ssh("Panorama\nsw-version: PAN-OS 11.1.2\n"), wantMatch{})
	checkMatches(t, cases)
}
