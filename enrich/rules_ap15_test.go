package enrich

import "testing"

// TestRules_AP15Classes checks the class the group AP15 round added
// (94-ap15-netlogs.yaml): JUNIPER-MIB's chassis tables (jnxOperatingDescr,
// jnxContentsDescr, by name or OID) naming an SRX<model> component, against
// look-alikes that must stay unnamed: the same objects on an EX switch and an
// MX router, and another object whose value names an SRX.
func TestRules_AP15Classes(t *testing.T) {
	checkMatches(t, []matchCase{
		{name: "srx jnxOperatingDescr by name", svc: bannerService(161, "udp", "jnxOperatingDescr.1.1.0.0 = midplane\njnxOperatingDescr.4.1.0.0 = SRX240 PowerSupply fan 1\n"), want: wantMatch{Vendor: "Juniper Networks", Rule: "juniper-srx-jnx-chassis-walk"}},
		{name: "srx jnxContentsDescr by oid", svc: bannerService(161, "udp", ".1.3.6.1.4.1.2636.3.1.8.1.6.4.1.0.0 = STRING: \"SRX345 Fan Tray 0 Fan 1\"\n"), want: wantMatch{Vendor: "Juniper Networks", Rule: "juniper-srx-jnx-chassis-walk"}},
		{name: "ex switch components", svc: bannerService(161, "udp", "jnxOperatingDescr.4.1.0.0 = FAN 0\njnxOperatingDescr.7.1.0.0 = FPC: EX4200-48T, 8 POE @ 0/*/*\n"), want: wantMatch{}},
		{name: "mx router components", svc: bannerService(161, "udp", ".1.3.6.1.4.1.2636.3.1.13.1.5.9.1.0.0 = STRING: \"Routing Engine 0\"\n.1.3.6.1.4.1.2636.3.1.13.1.5.7.1.0.0 = STRING: \"FPC: MPC7E 3D 40XGE @ 0/*/*\"\n"), want: wantMatch{}},
		{name: "srx in another object", svc: bannerService(161, "udp", "SNMPv2-MIB::sysLocation.0 = STRING: SRX240 rack\n"), want: wantMatch{}},
	})
}
