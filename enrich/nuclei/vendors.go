package nuclei

import (
	"fmt"
	"regexp"
	"strings"
)

// scope is a vendor (spelled as the hand-written rules spell it, so one
// vendor is never named two ways) and the templates or favicon entries
// of its remote-access and edge products, by id, path or entry name.
type scope struct {
	re      *regexp.Regexp
	vendor  string
	product string // used when the template names none
}

var scopes = []scope{
	{regexp.MustCompile(`fortigate|fortios|fortinet-panel|fortiweb|fortiadc`), "Fortinet", "FortiGate"},
	{regexp.MustCompile(`globalprotect|panos|pan-os|paloalto`), "Palo Alto Networks", "PAN-OS"},
	{regexp.MustCompile(`meraki`), "Cisco", "Meraki"},
	{regexp.MustCompile(`cisco-asa|anyconnect|cisco-firepower`), "Cisco", "ASA"},
	{regexp.MustCompile(`citrix-adc|citrix-vpn|netscaler|citrix-gateway|citrix-access-gateway`), "Citrix", "NetScaler"},
	{regexp.MustCompile(`pulse-secure|ivanti-connect-secure|ivanti-csa`), "Ivanti", "Connect Secure"},
	{regexp.MustCompile(`juniper`), "Juniper Networks", "Junos"},
	{regexp.MustCompile(`sonicwall`), "SonicWall", "SonicOS"},
	{regexp.MustCompile(`sophos|cyberoam`), "Sophos", "Firewall"},
	{regexp.MustCompile(`watchguard`), "WatchGuard", "Firebox"},
	{regexp.MustCompile(`zyxel`), "Zyxel", "Zyxel device"},
	{regexp.MustCompile(`barracuda`), "Barracuda", "Barracuda appliance"},
	{regexp.MustCompile(`bigip|big-ip|f5-admin|f5-next|f5-big`), "F5", "BIG-IP"},
	{regexp.MustCompile(`^checkpoint|[/ ]checkpoint|check-point|ssl-network-extender`), "Check Point", "Check Point gateway"},
	{regexp.MustCompile(`openvpn-admin|openvpn-connect|openvpn-access`), "OpenVPN Inc.", "OpenVPN Access Server"},
	{regexp.MustCompile(`mikrotik`), "MikroTik", "RouterOS"},
	{regexp.MustCompile(`softether`), "SoftEther", "SoftEther VPN"},
	// not inside a word: "mailgard-webmail" and "...-card-website-..." (FingerprintHub entries) hold "rd-web"
	{regexp.MustCompile(`(^|[^a-z])rd-?web`), "Microsoft", "RD Web Access"},
	{regexp.MustCompile(`forcepoint`), "Forcepoint", "Forcepoint appliance"},
	{regexp.MustCompile(`kemp|loadmaster`), "Progress Kemp", "LoadMaster"},
	{regexp.MustCompile(`vigor|draytek`), "DrayTek", "Vigor"},
	// not "unified" (the favicon entry "unified-management-console-polycom" is Polycom's)
	{regexp.MustCompile(`unifi($|[^e])`), "Ubiquiti", "UniFi"},
	{regexp.MustCompile(`netgear`), "Netgear", "Netgear device"},
	{regexp.MustCompile(`qnap-qts`), "QNAP", "QTS"},
	{regexp.MustCompile(`vmware-horizon`), "VMware", "Horizon"},
	{regexp.MustCompile(`guacamole`), "Apache", "Guacamole"},
}

// versionTemplates are the templates whose unnamed extractors read the
// product's version without saying so (docs/rules.md, "nuclei templates"),
// each with what it reads.
var versionTemplates = map[string]string{
	"mikrotik-routeros":     "RouterOS's version on the WebFig and old configuration pages (<h1>RouterOS v6.49</h1>)",
	"mikrotik-routeros-old": "RouterOS's version on the old configuration page",
}

// excluded templates are in scope but too loose to name a vendor, or
// name a product that is none of the remote-access and edge lines the
// rules name (docs/rules.md, "What the rules name"), each with the reason
// (docs/rules-sources.md). The second kind, found by group AK4 (Ivanti's
// Cloud Services Appliance console named Ivanti on a negative): a
// management console, a mail or web gateway, a NAS or a home router of a
// family's vendor is a plain login page to someone who asks which
// remote-access appliance answers, and naming its vendor there is naming
// a vendor on a negative.
var excluded = map[string]string{
	"cisco-firepower-panel":                          notRemoteAccess + " (Firepower Management Center, a management console)",
	"f5-next-central-manager":                        notRemoteAccess + " (BIG-IP Next Central Manager, a management console)",
	"netscaler-console-panel":                        notRemoteAccess + " (NetScaler Console, formerly ADM, a management console)",
	"paloalto-expedition-panel":                      notRemoteAccess + " (Expedition, a configuration migration tool)",
	"sonicwall-analyzer-login":                       notRemoteAccess + " (SonicWall Analyzer, a reporting console)",
	"ivanti-csa-panel":                               notRemoteAccess + " (Cloud Services Appliance, an endpoint-management gateway; a negative in group AK4)",
	"sophos-mobile-panel":                            notRemoteAccess + " (Sophos Mobile, device management)",
	"sophos-web-appliance":                           notRemoteAccess + " (Sophos Web Appliance, a web proxy)",
	"sonicwall-email-security-detect":                notRemoteAccess + " (SonicWall Email Security, a mail gateway)",
	"forcepoint":                                     notRemoteAccess + " (Forcepoint Email Security's login)",
	"forcepoint-applicance":                          notRemoteAccess + " (the Forcepoint Appliance manager of the web and mail security appliances; the NGFW's console is the SMC)",
	"fortiadc-panel":                                 notRemoteAccess + " (FortiADC, an application delivery controller without a VPN)",
	"kemp-loadmaster-panel":                          notRemoteAccess + " (Kemp LoadMaster, a load balancer)",
	"qnap-qts-panel":                                 notRemoteAccess + " (QNAP QTS, a NAS)",
	"netgear-version-detect":                         notRemoteAccess + " (a Netgear home router)",
	"zyxel-router-panel":                             notRemoteAccess + " (a Zyxel home router, not a ZyWALL/USG)",
	"zyxel-vmg1312b10d-login":                        notRemoteAccess + " (a Zyxel DSL modem, not a ZyWALL/USG)",
	"zyxel-vsg1432b101-login":                        notRemoteAccess + " (a Zyxel DSL modem, not a ZyWALL/USG)",
	"nuclei-favicon-ubiquiti-unms":                   notRemoteAccess + " (Ubiquiti UNMS, a network management console)",
	"nuclei-favicon-netgear":                         notRemoteAccess + " (a Netgear device's favicon: routers, switches, NAS)",
	"nuclei-favicon-netgear-readynas":                notRemoteAccess + " (Netgear ReadyNAS)",
	"nuclei-favicon-netgear-network":                 notRemoteAccess + " (a Netgear switch's or router's favicon)",
	"nuclei-fingerprinthub-teamviewer":               notRemoteAccess + " (a page naming TeamViewer, not an appliance)",
	"nuclei-fingerprinthub-tp_link-omada-controller": notRemoteAccess + " (TP-Link Omada, a network management console)",
	"nuclei-fingerprinthub-ubiquiti-unms":            notRemoteAccess + " (Ubiquiti UNMS, a network management console)",
}

// notRemoteAccess begins the reason of an exclusion for its product.
const notRemoteAccess = "not a remote-access or edge product line the rules name"

func vendorOf(t *template, rel string) (scope, bool) {
	key := strings.ToLower(t.ID + " " + rel)
	for _, s := range scopes {
		if s.re.MatchString(key) {
			return s, true
		}
	}
	return scope{}, false
}

var detectSuffix = regexp.MustCompile(`(?i)\s*[-–]\s*(detect(ion)?|panel detect|version detect)$|\s+(login\s+)?(panel|detect(ion)?|login)$`)

func productOf(t *template, s scope) string {
	name := strings.TrimSpace(detectSuffix.ReplaceAllString(strings.TrimSpace(t.Info.Name), ""))
	name = strings.TrimRight(strings.TrimSpace(detectSuffix.ReplaceAllString(name, "")), " -–")
	if name != "" {
		return name
	}
	if p, ok := t.Info.Metadata["product"].(string); ok && p != "" {
		return strings.ReplaceAll(p, "_", " ")
	}
	return s.product
}

// tables are templates that are lists of products, one or more named
// matchers per product (favicon hashes, FingerprintHub's keywords): each
// in-scope product becomes a rule of its own.
var tables = map[string]bool{"favicon-detect": true, "fingerprinthub-web-fingerprints": true}

// entryScopes name the table entries of remote-access and edge products
// with no template of their own in scope above.
var entryScopes = []scope{
	{regexp.MustCompile(`^array-vpn$`), "Array Networks", "Array SSL VPN"},
	{regexp.MustCompile(`^barracuda-ssl-vpn$`), "Barracuda", "SSL VPN"},
	{regexp.MustCompile(`^ciscovpn$`), "Cisco", "ASA"},
	{regexp.MustCompile(`^(juniper-vpn|pulsesecure-ssl-vpn)$`), "Ivanti", "Connect Secure"},
	{regexp.MustCompile(`^(h3c-ssl-vpn|h3c-er3100|h3cer3200|h3cer6300g2)$`), "H3C", "H3C gateway"},
	{regexp.MustCompile(`^hillstone-stoneos$`), "Hillstone Networks", "StoneOS"},
	{regexp.MustCompile(`^(huawei-ssl-vpn|huawei-vpn|huawei-anyoffice)$`), "Huawei", "Huawei VPN gateway"},
	{regexp.MustCompile(`^netgear-prosafe-vpn-firewall`), "Netgear", "ProSafe VPN firewall"},
	{regexp.MustCompile(`^nsfocus-vpn$`), "NSFOCUS", "NSFOCUS VPN"},
	{regexp.MustCompile(`^(sangfor-ssl-vpn|sangfor-ipsec-vpn)$`), "Sangfor", "Sangfor VPN"},
	{regexp.MustCompile(`^sophos-(cyberoam-ssl-?vpn|utm-web-protection)$`), "Sophos", "Sophos firewall"},
	{regexp.MustCompile(`^teamviewer$`), "TeamViewer", "TeamViewer"},
	{regexp.MustCompile(`^tp_link-omada-controller$`), "TP-Link", "Omada Controller"},
	{regexp.MustCompile(`^ubiquiti-unms$`), "Ubiquiti", "UNMS"},
}

// tableRules turns a table template's entries of in-scope products into
// one rule per product (its matchers, any of them).
func tableRules(t *template, rel string, st *Stats) []rule {
	r := t.HTTP[0]
	type entry struct {
		s    scope
		kids []node
	}
	entries := map[string]*entry{}
	var order []string
	for _, m := range r.Matchers {
		s, ok := scopeOfName(m.Name)
		if !ok {
			st.Skipped["table entry of a product not in scope"]++
			continue
		}
		c, why := matcherNode(m)
		if why != "" || !strong(c) {
			st.Skipped["table entry too loose or not translatable"]++
			continue
		}
		if m.Negative {
			st.Skipped["table entry too loose or not translatable"]++
			continue
		}
		e := entries[m.Name]
		if e == nil {
			e = &entry{s: s}
			entries[m.Name] = e
			order = append(order, m.Name)
		}
		e.kids = append(e.kids, c)
	}
	prefix := "nuclei-favicon-"
	if t.ID != "favicon-detect" {
		prefix = "nuclei-" + strings.TrimSuffix(t.ID, "-web-fingerprints") + "-"
	}
	var out []rule
	for _, name := range order {
		e := entries[name]
		if why, ex := excluded[prefix+name]; ex {
			st.Skipped["excluded: "+why]++
			continue
		}
		c := e.kids[0]
		if len(e.kids) > 1 {
			c = node{kind: "any", kids: e.kids}
		}
		out = append(out, rule{ID: prefix + name, Vendor: e.s.vendor, Product: e.s.product, Source: SourceURL(rel), Match: c,
			Notes: fmt.Sprintf("generated by enrich/nuclei from %s entry %s at nuclei-templates %s", rel, name, Commit[:12])})
	}
	return out
}

func scopeOfName(name string) (scope, bool) {
	n := strings.ToLower(name)
	for _, s := range entryScopes {
		if s.re.MatchString(n) {
			return s, true
		}
	}
	for _, s := range scopes {
		if s.re.MatchString(n) {
			return s, true
		}
	}
	return scope{}, false
}
