package enrich

import "testing"

// TestRules_AT4Versions checks the classes group AT4 added
// (95-at4-versions.yaml): SFOS WebAdmin's Cyberoam page variables and the
// FortiOS build days 6.4.15 and 7.2.8 read from a FortiGate page's ETag or
// Last-Modified; and the look-alikes they must not name or read a release
// from: a monitoring plugin's verdict quoting FortiOS's firmware string (a
// negative by the AR14 convention), a parser's list of the variable names,
// a build day no table holds.
func TestRules_AT4Versions(t *testing.T) {
	var cases caseList
	cases.add("sfos webadmin page variables", matchCase{svc: tcpService(4444, httpProbe("GET", "/webconsole/webpages/index.jsp", 200,
		"<script>\nCyberoam.displayModel = 'SF01V';\nCyberoam.displayVersion = 'SFOS 22.0.0 GA-Build411';\nCyberoam.firmwareVersionOrgFormat = '22.0.0.411';\n</script>"))},
		wantMatch{Vendor: "Sophos", Rule: "at4-sfos-webadmin-cyberoam-vars", Version: "22.0.0.411"})
	fortiPage := func(etag string) matchCase {
		return matchCase{svc: tcpService(443, httpProbe("GET", "/remote/login", 200, "<html></html>", "Server", "xxxxxxxx-xxxxx", "ETag", etag))}
	}
	cases.add("fortigate page built 2024-03-13", fortiPage(`"1f4-65f17920"`), wantMatch{Vendor: "Fortinet", Version: "7.2.8"})
	cases.add("fortigate page built 2024-01-29", fortiPage(`"1f4-65b77720"`), wantMatch{Vendor: "Fortinet", Version: "6.4.15"})
	// look-alikes
	cases.add("a check plugin's verdict quoting a fortiwifi's firmware", bannerCase(5666, "tcp", "FortiOS OK FortiWiFi-40F v7.2.8,build1639,240313 (GA.M) |\n"), wantMatch{})
	cases.add("a parser's list of the variable names", matchCase{svc: tcpService(8080, httpProbe("GET", "/", 200,
		"_SAFE_INTERESTING_INDEX_VARS = (\n    \"Cyberoam.displayModel\",\n    \"Cyberoam.displayVersion\",\n    \"Cyberoam.firmwareVersionOrgFormat\",\n)"))}, wantMatch{})
	cases.add("fortigate page built on a day no table holds", fortiPage(`"1f4-65f41c20"`), wantMatch{Vendor: "Fortinet", StrictVersion: true})
	checkMatches(t, cases)
}
