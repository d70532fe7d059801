package enrich

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/bincodec"
	"github.com/netintel/netintel/internal/ipmodel"
)

// applyLines applies observations (JSON lines) to d in order, each with
// its own message id.
func applyLines(t *testing.T, d *doc, rules *Rules, lines ...string) {
	t.Helper()
	for i, line := range lines {
		var o ingest.Observation
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatal(err)
		}
		if err := o.Normalize(); err != nil {
			t.Fatal(err)
		}
		d.apply(&o, fmt.Sprintf("%032x", i+1), rules)
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// A range's country, region and city (a geofeed, the Private Relay
// list) are kept in the state and are on its record, in the stored form
// too; a cloud's region without a country is not geography; a view
// without the range's class has no trace of them.
func TestDoc_RangeGeography(t *testing.T) {
	tests := []struct {
		name                string
		lines               []string
		country, region, ci string
		freeSees            bool
	}{
		{"private relay", []string{
			`{"type":"range","network":"172.224.226.0/27","source":"private-relay","observed_at":"2026-11-20T00:00:00Z","range":{"kind":"relay","provider":"iCloud Private Relay","country":"GB","region":"GB-EN","city":"London","confidence":0.95}}`,
		}, "GB", "GB-EN", "London", true},
		{"cloud region is not geography", []string{
			`{"type":"range","network":"3.5.140.0/22","source":"aws-ranges","observed_at":"2026-11-20T00:00:00Z","range":{"kind":"hosting","provider":"Amazon Web Services","region":"ap-northeast-2"}}`,
		}, "<nil>", "<nil>", "<nil>", true},
		{"the surer source's place", []string{
			`{"type":"range","network":"198.51.100.0/24","source":"geo-a","observed_at":"2026-11-21T00:00:00Z","range":{"kind":"vpn","provider":"A","country":"DE","city":"Berlin","confidence":0.6}}`,
			`{"type":"range","network":"198.51.100.0/24","source":"geo-b","observed_at":"2026-11-20T00:00:00Z","range":{"kind":"vpn","provider":"B","country":"FR","region":"FR-IDF","city":"Paris","confidence":0.8}}`,
		}, "FR", "FR-IDF", "Paris", true},
		{"the newest listing of a source", []string{
			`{"type":"range","network":"198.51.100.0/24","source":"geo","observed_at":"2026-11-20T00:00:00Z","range":{"kind":"vpn","provider":"A","country":"DE","city":"Berlin"}}`,
			`{"type":"range","network":"198.51.100.0/24","source":"geo","observed_at":"2026-11-22T00:00:00Z","range":{"kind":"vpn","provider":"A","country":"NL","city":"Amsterdam"}}`,
		}, "NL", "<nil>", "Amsterdam", true},
		{"residential range hidden from free", []string{
			`{"type":"range","network":"203.0.113.0/24","source":"resi","observed_at":"2026-11-20T00:00:00Z","range":{"kind":"residential_proxy","provider":"ResiNet","country":"US","region":"US-TX","city":"Austin"}}`,
		}, "US", "US-TX", "Austin", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &doc{V: 1}
			applyLines(t, d, nil, tt.lines...)
			enc, err := encodeDoc(d)
			if err != nil {
				t.Fatal(err)
			}
			var back doc
			if err := decodeDoc(enc, &back); err != nil {
				t.Fatal(err)
			}
			r := back.record(newScorer(NewCatalog(), time.Now()))
			if got := [3]string{deref(r.Country), deref(r.Region), deref(r.City)}; got != [3]string{tt.country, tt.region, tt.ci} {
				t.Errorf("geography %v, want %v", got, [3]string{tt.country, tt.region, tt.ci})
			}
			free, ok := r.For(ipmodel.AudienceFree)
			if ok != tt.freeSees {
				t.Fatalf("free sees the range: %v, want %v", ok, tt.freeSees)
			}
			if ok && deref(free.Country) != tt.country {
				t.Errorf("free view country %s", deref(free.Country))
			}
		})
	}
}

// How sure a flow was of its protocol counts: a WireGuard asset that one
// exporter guessed from the port (0.5) is graded low and counts 0.5 in
// the record's confidence, one whose source named the protocol medium
// (0.75), and two port guesses are still one guess; a scan that backs
// the asset lifts the cap. Kept through the stored form.
func TestDoc_FlowConfidence(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	flow := func(src, basis string, conf float64) string {
		extra := ""
		if basis != "" {
			extra = fmt.Sprintf(`,"basis":%q`, basis)
		}
		if conf > 0 {
			extra += fmt.Sprintf(`,"confidence":%g`, conf)
		}
		return fmt.Sprintf(`{"type":"flow","ip":"192.0.2.7","source":%q,"observed_at":"2026-11-20T10:00:00Z","flow":{"port":51820,"transport":"udp","protocol":"wireguard"%s}}`, src, extra)
	}
	scan := `{"v":2,"type":"service","ip":"192.0.2.7","source":"scans","observed_at":"2026-11-20T11:00:00Z","service":{"port":51820,"transport":"udp","probes":[{"name":"wireguard","banner":{"sent":{"encoding":"base64","data":"AQAAAA=="},"received":{"encoding":"base64","data":"AgAAAA=="}}}]}}`
	tests := []struct {
		name  string
		lines []string
		band  string
		conf  float64
	}{
		{"labelled", []string{flow("edge", "", 0)}, "medium", 0.75},
		{"port guess", []string{flow("edge", "port", 0.5)}, "low", 0.5},
		{"port guess, default confidence", []string{flow("edge", "port", 0)}, "low", 0.5},
		{"port and size", []string{flow("edge", "port+size", 0.85)}, "medium", 0.75},
		{"two port guesses", []string{flow("edge", "port", 0.5), flow("core", "port", 0.5)}, "low", 0.75},
		{"two handshakes by size", []string{flow("edge", "size", 0.7), flow("core", "port+size", 0.85)}, "medium", 0.925},
		{"a labelled flow and a guess", []string{flow("edge", "", 0), flow("core", "port", 0.5)}, "high", 0.95},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &doc{V: 1}
			applyLines(t, d, rules, tt.lines...)
			enc, err := encodeDoc(d)
			if err != nil {
				t.Fatal(err)
			}
			var back doc
			if err := decodeDoc(enc, &back); err != nil {
				t.Fatal(err)
			}
			r := back.record(newScorer(NewCatalog(), time.Now()))
			if len(r.Assets) != 1 {
				t.Fatalf("assets %+v", r.Assets)
			}
			if r.Assets[0].ConfidenceBand != tt.band || r.Confidence != tt.conf {
				t.Errorf("band %s confidence %v, want %s %v", r.Assets[0].ConfidenceBand, r.Confidence, tt.band, tt.conf)
			}
		})
	}
	// A scan of the same port backs the guess: the flows no longer cap
	// the band, but the guess itself still counts 0.5.
	d := &doc{V: 1}
	applyLines(t, d, rules, flow("edge", "port", 0.5), scan)
	r := d.record(newScorer(NewCatalog(), time.Now()))
	if len(r.Assets) != 1 || r.Assets[0].ConfidenceBand != "high" {
		t.Fatalf("scan and guess: %+v", r.Assets)
	}
	if want := 1 - (1-0.9)*(1-0.5); r.Confidence != want {
		t.Errorf("scan and guess: confidence %v, want %v", r.Confidence, want)
	}
}

// encodeV4 writes d as format version 4 did: no range geography, no
// flow confidence.
func encodeV4(d *doc) []byte {
	e := bincodec.Encoder{}
	e.Int(d.V)
	e.Str(d.IP)
	e.Str(d.Network)
	e.Str(d.FirstSeen)
	e.Str(d.LastSeen)
	e.Count(len(d.Signals))
	for i := range d.Signals {
		s := &d.Signals[i]
		encodeKey(&e, s.appendKey(nil))
		e.Str(s.Class)
		e.Str(s.Source)
		e.Str(s.Provider)
		e.F64(s.Conf)
		e.Str(s.FirstSeen)
		e.Str(s.LastSeen)
		e.Str(s.Win)
		e.Int(int(s.DC))
	}
	encodeClaims(&e, d.Claims)
	e.Count(len(d.Assets))
	for i := range d.Assets {
		a := &d.Assets[i]
		encodeKey(&e, a.appendKey(nil))
		e.Int(a.Port)
		e.Str(a.Family)
		e.Str(a.FirstSeen)
		e.Str(a.LastSeen)
		encodeWinner(&e, a.Svc)
		encodeWinner(&e, a.Flow)
		e.Count(len(a.Sources))
		for _, s := range a.Sources {
			e.Str(s.Source)
			e.Str(s.Vendor)
			e.Str(s.Win)
			e.Int(int(s.DC))
			e.Str(s.First)
			e.Str(s.Last)
		}
		encodeClaims(&e, a.Claims)
	}
	return append([]byte{binMark, 4}, s2.Encode(nil, e.B)...)
}

// Records stored in format version 4 (before range geography and flow
// confidence) still read, with their data classes, and without a place
// or a flow cap: a flow of then reads as it was graded then.
func TestDocCodec_ReadsVersion4(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	host := &doc{V: 1, IP: "192.0.2.9"}
	applyLines(t, host, rules,
		`{"type":"signal","ip":"192.0.2.9","source":"sightings","observed_at":"2026-11-20T10:00:00Z","signal":{"kind":"residential_proxy","provider":"ResiNet"},"claims":[{"org_name":"ResiOrg"}]}`,
		`{"type":"flow","ip":"192.0.2.9","source":"edge","observed_at":"2026-11-20T10:00:00Z","flow":{"port":51820,"transport":"udp","protocol":"wireguard","basis":"port","confidence":0.5}}`,
	)
	rng := &doc{V: 1}
	applyLines(t, rng, nil,
		`{"type":"range","network":"172.224.226.0/27","source":"private-relay","observed_at":"2026-11-20T00:00:00Z","range":{"kind":"relay","provider":"iCloud Private Relay","country":"GB","city":"London","confidence":0.95}}`)
	for _, d := range []*doc{host, rng} {
		var back doc
		if err := decodeDoc(encodeV4(d), &back); err != nil {
			t.Fatal(err)
		}
		// What version 4 did not store reads as unknown.
		for i := range d.Signals {
			d.Signals[i].Country, d.Signals[i].Region, d.Signals[i].City = "", "", ""
		}
		for i := range d.Assets {
			for j := range d.Assets[i].Sources {
				d.Assets[i].Sources[j].Flow = 0
			}
		}
		want, _ := json.Marshal(d)
		got, _ := json.Marshal(&back)
		if !bytes.Equal(got, want) {
			t.Fatalf("decoded\n%s\nwant\n%s", got, want)
		}
	}
	var back doc
	if err := decodeDoc(encodeV4(host), &back); err != nil {
		t.Fatal(err)
	}
	r := back.record(newScorer(NewCatalog(), time.Now()))
	if r.Assets[0].ConfidenceBand != "medium" {
		t.Errorf("version 4 flow graded %s, want medium (no cap)", r.Assets[0].ConfidenceBand)
	}
	if free, ok := r.For(ipmodel.AudienceFree); ok {
		t.Errorf("free sees a version 4 record of residential and flow pieces only: %+v", free)
	}
	if pro, ok := r.For(ipmodel.AudiencePro); !ok || !slices.Equal(pro.Classifications, []string{"residential_proxy"}) {
		t.Errorf("pro view %+v", pro)
	}
}
