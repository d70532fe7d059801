package enrich

import "testing"

// TestRules_AI3Logs checks the log classes the group AI3 round added
// (85-ai3-weak.yaml): Forcepoint NGFW's LEEF header, with its "LEEF:" tag,
// after a syslog header, or at a line's start without the tag, read as the
// sender's major.minor band; Sophos UTM's web application firewall access
// record; and the look-alikes they must not name: Forcepoint's web security
// product in LEEF, the NGFW header inside another record's free text, and a
// key=value access record of another product.
func TestRules_AI3Logs(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		text string
		want wantMatch
	}{
		{"leef with its tag", "LEEF:1.0|Forcepoint|Firewall|7.1.5|System_Engine-User_Command|devTimeFormat=MMM dd yyyy HH:mm:ss\tdevTime=Aug 05 2025 11:14:02\tusrName=admin\tsender=HOST_02 node 1", wantMatch{Vendor: "Forcepoint", Product: "Forcepoint NGFW", Band: "7.1.x"}},
		{"leef after a syslog header", "<134>Aug  6 15:24:14 smc LEEF:1.0|Forcepoint|Firewall|6.10.2|FW_DHCP-DHCP-Reply-Received|sender=fw node 1", wantMatch{Vendor: "Forcepoint", Band: "6.10.x"}},
		{"leef without its tag at a line's start", "1.0|Forcepoint|Firewall|7.2.1|Connection_Allowed|src=192.0.2.1", wantMatch{Vendor: "Forcepoint", Band: "7.2.x"}},
		{"stonesoft ips leef", "LEEF:1.0|Stonesoft|IPS|5.10.3|Inspection|x=y", wantMatch{Vendor: "Forcepoint", Band: "5.10.x"}},
		{"forcepoint web security in leef", "LEEF:1.0|Forcepoint|Security|8.5.4|transaction:permitted|cat=Search Engines", wantMatch{}},
		{"the header inside free text", "msg=forwarded record x1.0|Forcepoint|Firewall|7.1.5|y", wantMatch{}},
		{"utm waf access record", `2016:03:01-10:42:59 utm httpd[4242]: id="0299" srcip="192.0.2.7" localip="192.0.2.5" size="112" user="-" host="192.0.2.7" method="POST" statuscode="200" reason="-" extra="-" url="/owa/"`, wantMatch{Vendor: "Sophos", Product: "Sophos UTM"}},
		{"another product's access record", `id="0299" src="192.0.2.7" method="POST" statuscode="200"`, wantMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, bannerService(514, "udp", tt.text), tt.want)
		})
	}
}
