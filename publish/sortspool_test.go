package publish

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"strconv"
	"testing"

	"github.com/netintel/netintel/internal/ipmodel"
)

// TestSortSpool_Each checks the external merge sort: every record comes
// back once, in the byte order of its IP, records of one IP in the order
// they were added, across many runs and within one.
func TestSortSpool_Each(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		n        int
		runBytes int
	}{{"one run", 500, sortSpoolRun}, {"many runs", 5000, 4096}, {"a run per record", 50, 1}, {"empty", 0, 4096}} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := newSortSpool(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			s.runBytes = tt.runBytes
			r := rand.New(rand.NewPCG(1, 2))
			type added struct {
				ip  string
				seq int
			}
			var want []added
			for i := range tt.n {
				var ip string
				if r.IntN(3) == 0 {
					ip = netip.AddrFrom16([16]byte{0x20, 0x01, 0xd, 0xb8, 15: byte(r.IntN(40))}).String()
				} else {
					ip = netip.AddrFrom4([4]byte{byte(r.IntN(20)), 0, 0, byte(r.IntN(20))}).String()
				}
				seq := strconv.Itoa(i)
				rec := ipmodel.Record{IP: ip, Provider: &seq, FirstSeen: "2026-11-20T00:00:00Z", Classifications: []string{"vpn"}}
				if err := s.Add(&rec); err != nil {
					t.Fatal(err)
				}
				want = append(want, added{ip, i})
			}
			slices.SortStableFunc(want, func(a, b added) int {
				switch {
				case a.ip < b.ip:
					return -1
				case a.ip > b.ip:
					return 1
				}
				return 0
			})
			var got []added
			if err := s.Each(func(rec *ipmodel.Record) error {
				seq, _ := strconv.Atoi(*rec.Provider)
				if rec.FirstSeen != "2026-11-20T00:00:00Z" || !slices.Equal(rec.Classifications, []string{"vpn"}) {
					t.Fatalf("record %d came back as %+v", seq, rec)
				}
				got = append(got, added{rec.IP, seq})
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%d records back, want %d in order; first difference at %d", len(got), len(want), firstDiff(got, want))
			}
			if tt.runBytes < sortSpoolRun && tt.n > 100 && len(s.runs) < 10 {
				t.Errorf("%d runs: the merge was not exercised", len(s.runs))
			}
		})
	}
}

func firstDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
