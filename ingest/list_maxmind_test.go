package ingest

import (
	"strings"
	"testing"
	"time"
)

// TestMaxMindAnonymous reads MaxMind's own test databases of GeoIP2
// Anonymous IP and GeoIP Anonymous Plus (ingest/testdata/SOURCES.md), and
// the CSV form.
func TestMaxMindAnonymous(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	kinds := func(r result) map[string][]string {
		out := map[string][]string{}
		for _, o := range r.obs {
			k := ""
			if o.Range != nil {
				k = o.Range.Kind
			} else {
				k = o.Signal.Kind
			}
			out[o.Key()] = append(out[o.Key()], k)
		}
		return out
	}
	t.Run("Anonymous IP", func(t *testing.T) {
		r := runAdapter(t, MaxMindAnonymous, readFile(t, "GeoIP2-Anonymous-IP-Test.mmdb"), Options{ObservedAt: at})
		if len(r.bad) != 0 || len(r.obs) < 10 {
			t.Fatalf("%d observations, bad %v", len(r.obs), r.bad)
		}
		k := kinds(r)
		if got := strings.Join(k["81.2.69.0/24"], ","); got != "vpn,proxy,tor,residential_proxy,hosting" {
			t.Errorf("81.2.69.0/24 = %q", got)
		}
		if got := strings.Join(k["1.124.213.1"], ","); got != "vpn_exit,tor_exit" {
			t.Errorf("1.124.213.1 = %q", got)
		}
		if got := strings.Join(k["71.160.223.0/24"], ","); got != "hosting" {
			t.Errorf("71.160.223.0/24 = %q", got)
		}
		if r.obs[0].ObservedAt != "2026-11-01T00:00:00Z" {
			t.Errorf("observed at %s", r.obs[0].ObservedAt)
		}
	})
	t.Run("Anonymous Plus: provider, confidence, last seen", func(t *testing.T) {
		r := runAdapter(t, MaxMindAnonymous, readFile(t, "GeoIP-Anonymous-Plus-Test.mmdb"), Options{ObservedAt: at})
		if len(r.bad) != 0 {
			t.Fatal(r.bad)
		}
		var seen bool
		for _, o := range r.obs {
			if o.Key() == "1.2.0.1" {
				seen = true
				if o.Signal.Kind != "vpn_exit" || o.Signal.Provider != "foo" || o.Signal.Confidence != 0.3 || o.ObservedAt != "2025-04-14T00:00:00Z" || o.Claims[0].OrgName != "foo" {
					t.Errorf("1.2.0.1 = %+v %+v", o, o.Signal)
				}
			}
		}
		if !seen {
			t.Error("1.2.0.1 not read")
		}
	})
	t.Run("CSV", func(t *testing.T) {
		in := "network,is_anonymous,is_anonymous_vpn,is_hosting_provider,is_public_proxy,is_tor_exit_node,is_residential_proxy\n" +
			"1.2.0.0/16,1,1,,,,\n81.2.69.0/24,1,1,1,1,1,1\nnot-a-network,1,1,,,,\n"
		r := runAdapter(t, MaxMindAnonymous, in, Options{ObservedAt: at})
		if len(r.obs) != 6 || len(r.bad) != 1 || r.bad[0].Line != 4 {
			t.Errorf("obs %d bad %v", len(r.obs), r.bad)
		}
	})
	t.Run("a cut database is reported, not read", func(t *testing.T) {
		r := runAdapter(t, MaxMindAnonymous, readFile(t, "GeoIP2-Anonymous-IP-Test.mmdb")[:100], Options{})
		if len(r.obs) != 0 || len(r.bad) != 1 {
			t.Errorf("obs %d bad %v", len(r.obs), r.bad)
		}
	})
}
