package enrich

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/netintel/netintel/ingest"
)

// generator makes a realistic mix of observations in memory, from the
// sample observations as templates: about 55% fingerprintable services
// from three scanners, 20% anonymity signals, 12% flow attributions, 8%
// ranges and 5% services no rule knows, over nHosts addresses and nRanges
// ranges, spread over a week.
type generator struct {
	byType        map[string][]ingest.Observation
	unknown       []ingest.Observation
	nHosts        int
	nRanges       int
	base          time.Time
	scanners      []string
	signalSources []string
}

func newGenerator(t testing.TB, nHosts, nRanges int) *generator {
	t.Helper()
	g := &generator{byType: map[string][]ingest.Observation{}, nHosts: nHosts, nRanges: nRanges,
		base: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), scanners: []string{"scan-a", "scan-b", "scan-c"},
		signalSources: []string{"tor-exits", "resi-sightings", "x4bnet-vpn", "proxy-scan"}}
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	obs := sampleObs(t)
	for _, k := range slices.Sorted(maps.Keys(obs)) {
		for _, o := range obs[k] {
			if o.Type == ingest.TypeService {
				if _, ok := rules.Match(o.Service, nil); !ok {
					g.unknown = append(g.unknown, o)
					continue
				}
			}
			g.byType[o.Type] = append(g.byType[o.Type], o)
		}
	}
	return g
}

func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// obs returns observation i; the same i always gives the same observation.
func (g *generator) obs(i int) ingest.Observation {
	r := mix64(uint64(i))
	pick := func(list []ingest.Observation) ingest.Observation { return list[int((r>>16)%uint64(len(list)))] }
	var o ingest.Observation
	switch p := r % 100; {
	case p < 55:
		o = pick(g.byType[ingest.TypeService])
		o.Source = g.scanners[(r>>40)%3]
	case p < 75:
		o = pick(g.byType[ingest.TypeSignal])
		o.Source = g.signalSources[(r>>40)%4]
	case p < 87:
		o = pick(g.byType[ingest.TypeFlow])
	case p < 95:
		o = pick(g.byType[ingest.TypeRange])
		n := int((r >> 24) % uint64(g.nRanges))
		o.Network = fmt.Sprintf("172.%d.%d.0/24", 16+n>>8, n&255)
	default:
		o = pick(g.unknown)
	}
	if o.Type != ingest.TypeRange {
		h := int((r >> 24) % uint64(g.nHosts))
		o.IP = fmt.Sprintf("10.%d.%d.%d", h>>16&255, h>>8&255, h&255)
	}
	o.ObservedAt = g.base.Add(time.Duration(i%604800) * time.Second).Format(time.RFC3339)
	if err := o.Normalize(); err != nil {
		panic(err)
	}
	return o
}

// publish sends observations [from, to) and returns how many the stream stored.
func (g *generator) publish(ctx context.Context, t testing.TB, pub *ingest.Publisher, from, to int) int {
	t.Helper()
	before := pub.Published
	for i := from; i < to; i++ {
		o := g.obs(i)
		if err := pub.Publish(ctx, &o); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return pub.Published - before
}
