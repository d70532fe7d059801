package publish

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"github.com/oschwald/maxminddb-golang"

	"github.com/netintel/netintel/internal/ipmodel"
)

// fixedState is a State of a few records.
type fixedState struct{ hosts, ranges []ipmodel.Record }

func (s fixedState) Hosts(_ context.Context, fn func(ipmodel.Record) error) error {
	for _, r := range s.hosts {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func (s fixedState) Ranges(_ context.Context, fn func(ipmodel.Record) error) error {
	for _, r := range s.ranges {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// A host inside a cloud's range, looked up in the MMDB (what the IP API
// reads), carries the range's attribution on itself and on each of its
// assets, beside its own; the range's other addresses carry the range's.
func TestMMDB_HostInsideClaimedRange(t *testing.T) {
	t.Parallel()
	asn := ipmodel.Attribution{OrgName: "AMAZON-02 - Amazon.com, Inc.", SignalSource: "ip2asn", SignalConfidence: 0.7, ObservedAt: "2026-11-26T00:00:00Z"}
	aws := ipmodel.Attribution{OrgName: "Amazon.com, Inc.", SignalSource: "aws-ranges", SignalConfidence: 0.95, ObservedAt: "2026-11-26T01:00:00Z"}
	scan := ipmodel.Attribution{OrgName: "Example Logistics Ltd", SignalSource: "scan-a", SignalConfidence: 0.6, ObservedAt: "2026-11-25T00:00:00Z"}
	rng := ipmodel.Record{IP: "3.5.140.0", Network: "3.5.140.0/22", Classifications: []string{"hosting"}, Provider: strPtr("Amazon Web Services"),
		Confidence: 0.95, FirstSeen: "2025-07-24T20:23:14Z", LastSeen: "2026-11-26T01:00:00Z", Sources: []string{"aws-ranges"}, Assets: []ipmodel.Asset{},
		ASN: 16509, Attributions: []ipmodel.Attribution{aws, asn}}
	hostASN := asn
	hostASN.OrgName = "AMAZON-02 - Amazon.com, Inc. (host)"
	host := ipmodel.Record{IP: "3.5.140.10", Classifications: []string{"vpn"}, Confidence: 0.9, FirstSeen: "2026-11-25T00:00:00Z", LastSeen: "2026-11-25T00:00:00Z",
		Sources: []string{"scan-a"}, ASN: 16509, Attributions: []ipmodel.Attribution{hostASN},
		Assets: []ipmodel.Asset{{Port: 443, ProtocolFamily: "ssl-vpn", ConfidenceBand: "low", EvidenceSources: []string{"scan-a"},
			FirstSeen: "2026-11-25T00:00:00Z", LastSeen: "2026-11-25T00:00:00Z", Attributions: []ipmodel.Attribution{hostASN, scan}}}}
	for _, hostsFirst := range []bool{false, true} {
		var buf bytes.Buffer
		w, err := newMMDBWriter(&buf, t.TempDir(), time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		st := fixedState{hosts: []ipmodel.Record{host}, ranges: []ipmodel.Record{rng}}
		write := func(isRange bool) func(ipmodel.Record) error {
			return func(r ipmodel.Record) error {
				p, err := recordPrefix(&r, isRange)
				if err != nil {
					return err
				}
				return w.Write(&r, p)
			}
		}
		steps := []func() error{func() error { return st.Ranges(t.Context(), write(true)) }, func() error { return st.Hosts(t.Context(), write(false)) }}
		if hostsFirst {
			steps[0], steps[1] = steps[1], steps[0]
		}
		for _, s := range steps {
			if err := s(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		db, err := maxminddb.FromBytes(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		var got ipmodel.Record
		if err := db.Lookup(net.ParseIP("3.5.140.10"), &got); err != nil {
			t.Fatal(err)
		}
		want := []ipmodel.Attribution{aws, hostASN} // by signal source; the host's own AS wins
		if got.ASN != 16509 || !sameAttrs(got.Attributions, want) {
			t.Errorf("hostsFirst=%v: host attributions %+v asn %d", hostsFirst, got.Attributions, got.ASN)
		}
		if len(got.Assets) != 1 || !sameAttrs(got.Assets[0].Attributions, []ipmodel.Attribution{aws, hostASN, scan}) {
			t.Errorf("hostsFirst=%v: asset attributions %+v", hostsFirst, got.Assets)
		}
		var other ipmodel.Record
		if err := db.Lookup(net.ParseIP("3.5.140.11"), &other); err != nil {
			t.Fatal(err)
		}
		if !sameAttrs(other.Attributions, []ipmodel.Attribution{aws, asn}) || other.ASN != 16509 {
			t.Errorf("hostsFirst=%v: range address attributions %+v", hostsFirst, other.Attributions)
		}
		db.Close()
	}
}

func sameAttrs(a, b []ipmodel.Attribution) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func strPtr(s string) *string { return &s }
