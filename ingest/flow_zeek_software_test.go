package ingest

import (
	"strings"
	"testing"
)

// TestZeek_SoftwareAndKnownCerts reads Zeek 6.2's software.log and
// known_certs.log (brimdata/zed-sample-data, SOURCES.md): each server's
// software as the protocol carries it, each known certificate a TLS probe;
// clients' software skipped.
func TestZeek_SoftwareAndKnownCerts(t *testing.T) {
	t.Parallel()
	skipped := 0
	r := runAdapter(t, Zeek, readFile(t, "zeek-6.2-software.log")+readFile(t, "zeek-6.2-known_certs.log"), Options{Skipped: func(int, string) { skipped++ }})
	if len(r.bad) != 0 {
		t.Fatalf("bad %v", r.bad)
	}
	byKey := map[string][]Observation{}
	for _, o := range r.obs {
		byKey[o.Key()] = append(byKey[o.Key()], o)
	}
	if len(r.obs) != 10+8 || skipped != 3 {
		t.Errorf("%d observations, %d skipped; want 18, 3 (two browsers, an SSH client)", len(r.obs), skipped)
	}
	first := r.obs[0]
	if h := first.Service.Probes[0].Response.Headers[0]; first.IP != "10.47.27.80" || first.Service.Port != 8080 || h.Name != "Server" ||
		h.Value != "Microsoft-IIS/7.5" || first.ObservedAt != "2018-03-24T17:15:20Z" {
		t.Errorf("first = %s %+v %+v", first.ObservedAt, first.Service, first.Service.Probes[0].Response)
	}
	if h := r.obs[3].Service.Probes[0].Response.Headers[0]; h.Name != "X-Powered-By" || h.Value != "SharePoint/15.0.0.4420" {
		t.Errorf("appserver = %+v", h)
	}
	ssh := byKey["10.47.8.50"]
	if len(ssh) != 1 || ssh[0].Service.Port != 22 || string(ssh[0].Service.Probes[0].Banner.Received.Data) != "SSH-2.0-OpenSSH_7.4p1 Raspbian-10+deb9u3" {
		t.Errorf("ssh server = %+v", ssh)
	}
	var esx *TLS
	for _, o := range byKey["10.47.3.200"] {
		if o.Service.Port == 443 {
			esx = o.Service.Probes[0].TLS
		}
	}
	if esx == nil || !strings.Contains(esx.Subject.DN, "VMware ESX Server Default Certificate") || esx.Subject.CN != "localhost.localdomain" {
		t.Fatalf("known cert = %+v", esx)
	}
	bitnami := byKey["10.47.27.80"]
	if len(bitnami) != 2 || bitnami[1].Service.Port != 443 || bitnami[1].Service.Probes[0].TLS.Serial != "ef97295fa8532cba" || !bitnami[1].Service.Probes[0].TLS.SelfSigned {
		t.Errorf("bitnami = %+v", bitnami)
	}
}
