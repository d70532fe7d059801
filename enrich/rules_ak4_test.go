package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_AK4Guards checks the group AK4 guard class
// (rules/89-ak4-guards.yaml): a SonicPoint access point's realm, which
// also says SonicWALL, names nothing, while a SonicWall firewall's realm
// still names SonicWall through names-sonicwall-sonicos; Ivanti's Cloud
// Services Appliance console names nothing, while a Connect Secure page
// still names Ivanti.
func TestRules_AK4Guards(t *testing.T) {
	h := func(name, value string) ingest.Header { return ingest.Header{Name: name, Value: value} }
	checkMatches(t, []matchCase{
		{"sonicpoint realm", tcpService(80, headerProbe("GET", "/", 401, "", h("WWW-Authenticate", `Basic realm="DELL | SonicWALL SonicPoint ACe/ACi/N2"`))),
			wantMatch{}},
		{"sonicpoint realm, another model", tcpService(443, headerProbe("GET", "/", 401, "", h("WWW-Authenticate", `Basic realm="SonicWALL SonicPoint N"`))),
			wantMatch{}},
		{"sonicwall firewall realm", tcpService(80, headerProbe("GET", "/", 401, "", h("WWW-Authenticate", `Basic realm="SonicWALL"`))),
			wantMatch{Vendor: "SonicWall"}},
		{"ivanti csa console", tcpService(443, headerProbe("GET", "/", 200, "<html><head><title>Ivanti(R) Cloud Services Appliance</title></head><body></body></html>")),
			wantMatch{}},
		{"ivanti connect secure welcome", tcpService(443, headerProbe("GET", "/dana-na/auth/url_default/welcome.cgi", 200, "<html><head><title>Ivanti Connect Secure</title></head><body><form name=\"frmLogin\" action=\"login.cgi\"></form></body></html>")),
			wantMatch{Vendor: "Ivanti"}},
	})
}
