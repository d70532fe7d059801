package probe

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
)

func TestDiff(t *testing.T) {
	tr, fa := true, false
	whoisA, whoisB := "whois.a.test", "whois.b.test"
	base := Result{TLD: "x", RDAPSupported: true, RDAPURLs: []string{"https://r.test/"}, RDAPWorking: &tr, WhoisServer: &whoisA, StealthURLs: []string{"https://s1.test/"}}
	tests := []struct {
		name string
		o, n *Result
		want []string // change:from>to
	}{
		{"same", &base, &base, nil},
		{"rdap lost", &base, &Result{TLD: "x", WhoisServer: &whoisA, StealthURLs: base.StealthURLs}, []string{"rdap_lost:https://r.test/>null", "working_flipped:true>null"}},
		{"rdap gained", &Result{TLD: "x", WhoisServer: &whoisA, StealthURLs: base.StealthURLs}, &base, []string{"rdap_gained:null>https://r.test/", "working_flipped:null>true"}},
		{"working flipped", &base, func() *Result { r := base; r.RDAPWorking = &fa; return &r }(), []string{"working_flipped:true>false"}},
		{"stealth found and lost", &base, func() *Result { r := base; r.StealthURLs = []string{"https://s2.test/"}; return &r }(),
			[]string{"stealth_found:https://s1.test/>https://s2.test/", "stealth_lost:https://s1.test/>https://s2.test/"}},
		{"stealth all lost", &base, func() *Result { r := base; r.StealthURLs = []string{}; return &r }(), []string{"stealth_lost:https://s1.test/>null"}},
		{"whois server", &base, func() *Result { r := base; r.WhoisServer = &whoisB; return &r }(), []string{"whois_server_changed:whois.a.test>whois.b.test"}},
		{"whois server gone", &base, func() *Result { r := base; r.WhoisServer = nil; return &r }(), []string{"whois_server_changed:whois.a.test>null"}},
		{"tld added", nil, &base, []string{"tld_added:null>null"}},
		{"tld removed", &base, nil, []string{"tld_removed:null>null"}},
	}
	s := func(p *string) string {
		if p == nil {
			return "null"
		}
		return *p
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range DiffTLD("a", "b", 7, "x", tt.o, tt.n) {
				if c.RunID != "b" || c.PreviousRunID != "a" || c.Time != 7 || c.TLD != "x" {
					t.Errorf("change %+v", c)
				}
				got = append(got, c.Change+":"+s(c.From)+">"+s(c.To))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	// Diff over whole results: cur's order, then the TLDs cur dropped.
	prev := Results{Results: []Result{{TLD: "a"}, {TLD: "b"}}}
	cur := Results{Results: []Result{{TLD: "c"}, {TLD: "a", RDAPSupported: true}}, LastUpdate: 9}
	var got []string
	for _, c := range Diff("p", prev, "q", cur) {
		got = append(got, c.TLD+":"+c.Change)
	}
	if want := []string{"c:tld_added", "a:rdap_gained", "b:tld_removed"}; !slices.Equal(got, want) {
		t.Errorf("Diff = %v, want %v", got, want)
	}
}

func TestPruneHistory(t *testing.T) {
	stores := map[string]func(t *testing.T) objstore.Store{
		"folder": func(t *testing.T) objstore.Store { return folderStore(t) },
		"s3": func(t *testing.T) objstore.Store {
			s3 := testutil.StartS3(t)
			st, err := objstore.Open(t.Context(), s3.Config(), "")
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			put := func(key string) {
				if _, err := st.Put(t.Context(), key, bytes.NewReader([]byte("{}")), 2, "application/json"); err != nil {
					t.Fatal(err)
				}
			}
			var ids []string
			for i := 0; i < 5; i++ {
				id := fmt.Sprintf("202611%02dT030000Zab%02d", 20+i, i)
				ids = append(ids, id)
				for _, f := range []string{"results.json", "results.csv", "summary.json"} {
					put(RunKey("tld/", id, f))
				}
			}
			// A run still publishing (no results.json yet), newer than all:
			// not touched. A foreign key: not touched.
			put(RunKey("tld/", "20261130T030000Zffff", "results.csv"))
			put("tld/runs/notes.txt")
			pruned, err := PruneHistory(t.Context(), st, "tld/", 2, ids[4])
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pruned, ids[:3]) {
				t.Fatalf("pruned %v, want %v", pruned, ids[:3])
			}
			left, err := HistoryRuns(t.Context(), st, "tld/")
			if err != nil || !slices.Equal(left, ids[3:]) {
				t.Fatalf("runs left %v %v, want %v", left, err, ids[3:])
			}
			objs, _ := st.List(t.Context(), "tld/runs/")
			if len(objs) != 2*3+2 {
				var keys []string
				for _, o := range objs {
					keys = append(keys, o.Key)
				}
				t.Fatalf("objects left: %v", keys)
			}
		})
	}
}

// Runs through the real service (NATS, versitygw) keep their results;
// the changes between two runs are what the world changed, and the
// history keeps history_runs runs.
func TestService_KeepsHistory(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	s3 := testutil.StartS3(t)
	store, err := objstore.Open(t.Context(), s3.Config(), "")
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	w.rdapHosts = map[string]string{"rdap.good.test": "good", "rdap.html.test": "html", "rdap.nic.stealthy": "good"}
	cfg := w.config()
	cfg.HistoryRuns = 2
	tlds := []string{"good", "html", "nf", "stealthy"}
	run := func(boot map[string][]string, whois map[string]string) string {
		t.Helper()
		c := cfg
		c.WhoisServers = whois
		writeInputs(t, &c, tlds, boot)
		s := newTestService(t, n, store, c)
		stop := startWorker(t, s)
		defer stop()
		// Run ids sort by their start second.
		time.Sleep(1100 * time.Millisecond)
		if err := s.RunNow(t.Context()); err != nil {
			t.Fatal(err)
		}
		p, _, err := s.Published(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return p.RunID
	}
	r1 := run(map[string][]string{"good": {"http://rdap.good.test/"}, "html": {"http://rdap.html.test/"}}, nil)
	w.mu.Lock()
	w.rdapHosts["rdap.html.test"] = "good" // html's RDAP starts working
	delete(w.rdapHosts, "rdap.nic.stealthy")
	w.mu.Unlock()
	r2 := run(map[string][]string{"good": {"http://rdap.good.test/"}, "html": {"http://rdap.html.test/"}, "nf": {"http://rdap.good.test/"}},
		map[string]string{"good": "whois.other.test"})
	ids, err := HistoryRuns(t.Context(), store, cfg.Prefix)
	if err != nil || !slices.Equal(ids, []string{r1, r2}) {
		t.Fatalf("history %v %v, want [%s %s]", ids, err, r1, r2)
	}
	a, err := LoadRun(t.Context(), store, cfg.Prefix, r1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadRun(t.Context(), store, cfg.Prefix, r2)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range Diff(r1, a, r2, b) {
		got = append(got, c.TLD+":"+c.Change)
	}
	slices.Sort(got)
	want := []string{"good:whois_server_changed", "html:working_flipped", "nf:rdap_gained", "nf:working_flipped", "stealthy:stealth_lost"}
	if !slices.Equal(got, want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
	// A third run: the oldest is pruned, two stay.
	r3 := run(map[string][]string{"good": {"http://rdap.good.test/"}, "html": {"http://rdap.html.test/"}, "nf": {"http://rdap.good.test/"}},
		map[string]string{"good": "whois.other.test"})
	ids, err = HistoryRuns(t.Context(), store, cfg.Prefix)
	if err != nil || !slices.Equal(ids, []string{r2, r3}) {
		t.Fatalf("history after a third run %v %v, want [%s %s]", ids, err, r2, r3)
	}
	objs, _ := store.List(t.Context(), cfg.Prefix+RunsDir+r1)
	if len(objs) != 0 {
		t.Fatalf("run %s left %d objects", r1, len(objs))
	}
}
