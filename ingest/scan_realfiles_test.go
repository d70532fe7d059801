package ingest

import (
	"strings"
	"testing"
)

// TestScanAdapters_RealFileForms: forms real tool files take that the
// adapters refused or passed over unsaid (group AP14, from DefectDojo's
// and secureCodeBox's kept scanner outputs): nuclei's address written as
// a fully qualified name with the root's dot, Nikto's JSON record of a
// target it could not resolve, and a Nexpose node fingerprinted without
// an endpoint.
func TestScanAdapters_RealFileForms(t *testing.T) {
	t.Parallel()
	// nuclei: "ip":"10.10.10.10." (DefectDojo nuclei/issue_9201.json)
	r := runScan(t, "nuclei", `{"template-id":"favicon-detect","info":{"name":"favicon-detection","severity":"info"},"type":"http","host":"https://example.com","matched-at":"https://example.com/favicon.ico","ip":"10.10.10.10.","timestamp":"2023-03-13T11:05:07+03:00"}`+"\n")
	if len(r.obs) != 1 || len(r.bad) != 0 || r.obs[0].IP != "10.10.10.10" {
		t.Errorf("nuclei trailing dot: obs %s bad %v", mustJSON(t, r.obs), r.bad)
	}
	r = runScan(t, "nuclei", `{"template-id":"x","info":{"name":"x","severity":"info"},"type":"http","host":"https://example.com","matched-at":"https://example.com/","ip":"10.10.10.."}`+"\n")
	if len(r.obs) != 0 || len(r.bad) != 1 || !strings.Contains(r.bad[0].Err.Error(), "not an IP address") {
		t.Errorf("nuclei two dots: obs %d bad %v", len(r.obs), r.bad)
	}
	// Nikto: a target it never reached (secureCodeBox nikto unresolvable-host.json)
	r = runScan(t, "nikto", `[{"host":"","ip":"","port":"80","banner":"","vulnerabilities":[{"id":"0","method":"GET","url":"/","msg":"ERROR: Cannot resolve hostname 'unresolvable.example.com' because 'Name does not resolve'."}]}]`)
	if len(r.obs) != 0 || len(r.bad) != 0 || len(r.skipped) != 1 || !strings.Contains(r.skipped[0], "Cannot resolve hostname") {
		t.Errorf("nikto unresolvable: obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	r = runScan(t, "nikto", `[{"host":"","ip":"","port":"80","vulnerabilities":[{"id":"1","msg":"Server leaks inodes"}]}]`)
	if len(r.bad) != 1 || len(r.skipped) != 0 {
		t.Errorf("nikto record without an address and no error: bad %v skipped %v", r.bad, r.skipped)
	}
	// Nexpose: a node with its OS fingerprint and no endpoint (DefectDojo nexpose/report_auth.xml)
	r = runScan(t, "nexpose", `<?xml version="1.0"?><NexposeReport version="2.0"><nodes><node address="192.168.0.12" status="alive"><fingerprints><os certainty="1.00" vendor="Ubuntu" family="Linux" product="Linux" version="20.04"/></fingerprints></node></nodes></NexposeReport>`)
	if len(r.obs) != 0 || len(r.bad) != 0 || len(r.skipped) != 1 || r.skipped[0] != "nexpose: node without endpoints" {
		t.Errorf("nexpose os-only node: obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
}
