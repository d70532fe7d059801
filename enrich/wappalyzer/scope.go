package wappalyzer

// scope is a Wappalyzer technology of a remote-access or edge product,
// with the vendor spelled as the hand-written rules spell it (so one
// vendor is never named two ways) and the product.
type scope struct {
	vendor, product string
}

// scopes maps Wappalyzer's technology names to our vendors. Technologies
// of other products (web servers, proxies such as Envoy, server BMCs such
// as HP iLO, NAS such as Synology DiskStation) name nothing.
var scopes = map[string]scope{
	"F5 BigIP":     {"F5", "BIG-IP"},
	"Pulse Secure": {"Ivanti", "Connect Secure"},
	// The later data (Fortinet FortiGate's FGTServer cookie, Citrix's
	// ctxs.core.min.js, GlobalProtect's portal stylesheet) comes from
	// Wappalyzer's GPL-3.0 forks and is not read (docs/rules-sources.md).
}

func scopeOf(name string) (scope, bool) {
	s, ok := scopes[name]
	return s, ok
}
