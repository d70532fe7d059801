package enrich

import "testing"

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
	cli := func(s string) matchCase { return matchCase{svc: bannerService(22, "tcp", s)} }
	get := cli("FGT1 # get system console\nmode : line\nbaudrate : 9600\noutput : more\n")
	get.name, get.want = "fortios get table", wantMatch{Vendor: "Fortinet", Rule: fgt}
	tree := cli("Infra # show vpn ssl web portal p1\nconfig vpn ssl web portal\n    edit \"p1\"\n        set tunnel-mode enable\n    next\nend\n")
	tree.name, tree.want = "fortios config tree", wantMatch{Vendor: "Fortinet", Rule: fgt}
	panKV := cli("admin@PA-VM> show system info\nhostname: PA-VM\nfamily: vm\n")
	panKV.name = "pan-os key: value at its prompt"
	fmg := cli("FMG-VM64 # show system admin user\nconfig system admin user\n    edit \"admin\"\n        set profileid \"Super_User\"\n    next\nend\n")
	fmg.name = "fortimanager config tree"
	eval := cli("admin@PA-VM> show system info\nmodel: PA-VM\nsw-version: 10.0.4.vm_eval\n")
	eval.name, eval.want = "pan-os eval image", wantMatch{Vendor: "Palo Alto Networks", Version: "10.0.4"}
	pano := cli("admin@Panorama> show system info\nmodel: Panorama\nsw-version: 10.0.4.vm_eval\n")
	pano.name = "panorama eval image"
	safe := cli("[admin@MikroTik] ip route>\n[Safe Mode taken]\n\n[admin@MikroTik] ip route<SAFE> add\n")
	safe.name, safe.want = "routeros safe mode", wantMatch{Vendor: "MikroTik", Rule: mtik}
	v7 := cli("[admin@gw1] /ip/firewall/filter> print\nFlags: X - disabled, I - invalid; D - dynamic\n 0 chain=forward action=drop\n")
	v7.name, v7.want = "routeros v7 menu prompt", wantMatch{Vendor: "MikroTik", Rule: mtik}
	bash := cli("[user@host] ~> ls\nFlags: none\n")
	bash.name = "a bracketed shell prompt"
	checkMatches(t, []matchCase{get, tree, panKV, fmg, eval, pano, safe, v7, bash})
}
