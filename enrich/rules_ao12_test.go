package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_AO12Regional checks the classes the group AO12 round added
// (93-ao12-regional.yaml): FortiOS's get tables and config trees typed at its
// '<host> # ' prompt, PAN-OS's sw-version with an image tag, and RouterOS's
// safe mode, history legend and menu-level prompt; and what they must not
// name: a PAN-OS 'key: value' answer at its own prompt, FortiManager's config
// tree, a Panorama show system info, a bash prompt in brackets. The PAN-OS
// case wants the release, which only ao12-panos-cli-sw-version-image-tag reads
// (paloalto-panos-cli names the answer).
func TestRules_AO12Regional(t *testing.T) {
	const (
		fgt  = "ao12-fortios-cli-get-table-and-config-tree"
		mtik = "ao12-routeros-menu-prompt-safe-mode-history"
	)
	cli := func(s string) *ingest.Service { return bannerService(22, "tcp", s) }
	checkMatches(t, []matchCase{
		{"fortios get table", cli("FGT1 # get system console\nmode : line\nbaudrate : 9600\noutput : more\n"), wantMatch{Vendor: "Fortinet", Rule: fgt}},
		{"fortios config tree", cli("Infra # show vpn ssl web portal p1\nconfig vpn ssl web portal\n    edit \"p1\"\n        set tunnel-mode enable\n    next\nend\n"), wantMatch{Vendor: "Fortinet", Rule: fgt}},
		{"pan-os key: value at its prompt", cli("admin@PA-VM> show system info\nhostname: PA-VM\nfamily: vm\n"), wantMatch{}},
		{"fortimanager config tree", cli("FMG-VM64 # show system admin user\nconfig system admin user\n    edit \"admin\"\n        set profileid \"Super_User\"\n    next\nend\n"), wantMatch{}},
		{"pan-os eval image", cli("admin@PA-VM> show system info\nmodel: PA-VM\nsw-version: 10.0.4.vm_eval\n"), wantMatch{Vendor: "Palo Alto Networks", Version: "10.0.4"}},
		{"panorama eval image", cli("admin@Panorama> show system info\nmodel: Panorama\nsw-version: 10.0.4.vm_eval\n"), wantMatch{}},
		{"routeros safe mode", cli("[admin@MikroTik] ip route>\n[Safe Mode taken]\n\n[admin@MikroTik] ip route<SAFE> add\n"), wantMatch{Vendor: "MikroTik", Rule: mtik}},
		{"routeros v7 menu prompt", cli("[admin@gw1] /ip/firewall/filter> print\nFlags: X - disabled, I - invalid; D - dynamic\n 0 chain=forward action=drop\n"), wantMatch{Vendor: "MikroTik", Rule: mtik}},
		{"a bracketed shell prompt", cli("[user@host] ~> ls\nFlags: none\n"), wantMatch{}},
	})
}
