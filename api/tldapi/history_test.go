package tldapi

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/probe"
)

func ptrTo[T any](v T) *T { return &v }

// historyRuns are three runs as the probe publishes them: com's RDAP
// stops working in the second, net gains RDAP in the third, org's stealth
// server appears in the second, and io leaves the list in the third.
func historyRuns() (ids []string, runs []probe.Results) {
	t0 := time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)
	ids = []string{"20261120T030000Za1b2", "20261122T030000Zc3d4", "20261124T030000Ze5f6"}
	whois := ptrTo("whois.nic.test")
	mk := func(comWorking bool, netRDAP bool, orgStealth []string, io bool) []probe.Result {
		rs := []probe.Result{
			{TLD: "com", RDAPSupported: true, RDAPURLs: []string{"https://rdap.com.test/"}, RDAPWorking: ptrTo(comWorking), WhoisServer: whois, StealthURLs: []string{}},
			{TLD: "net", RDAPSupported: netRDAP, RDAPURLs: []string{}, WhoisServer: whois, StealthURLs: []string{}},
			{TLD: "org", RDAPURLs: []string{}, WhoisServer: whois, StealthURLs: orgStealth, StealthRDAP: len(orgStealth) > 0},
		}
		if netRDAP {
			rs[1].RDAPURLs, rs[1].RDAPWorking = []string{"https://rdap.net.test/"}, ptrTo(true)
		}
		if io {
			rs = append(rs, probe.Result{TLD: "io", RDAPURLs: []string{}, StealthURLs: []string{}})
		}
		return rs
	}
	for i, rs := range [][]probe.Result{mk(true, false, []string{}, true), mk(false, false, []string{"https://rdap.nic.org/"}, true), mk(false, true, []string{"https://rdap.nic.org/"}, false)} {
		runs = append(runs, probe.Results{Results: rs, LastUpdate: t0.Add(time.Duration(i) * 48 * time.Hour).Unix(), TotalTLDs: len(rs)})
	}
	return ids, runs
}

func TestHistory_Routes(t *testing.T) {
	stores := map[string]func(t *testing.T) objstore.Store{
		"folder": func(t *testing.T) objstore.Store {
			st, err := objstore.NewFolder(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
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
			h := New(&fakeState{}, st, Options{Prefix: "tld/", RatePerMinute: 1000, HistoryRuns: 30}, testutil.Logger(t))
			mux := http.NewServeMux()
			h.Mount(mux)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)

			// Before any run: history 404 no_results, changes empty.
			if resp, b := get(t, srv.URL+"/api/history/com"); resp.StatusCode != 404 || !strings.Contains(string(b), "no_results") {
				t.Fatalf("history before any run: %d %s", resp.StatusCode, b)
			}
			if resp, b := get(t, srv.URL+"/api/changes"); resp.StatusCode != 200 || !strings.Contains(string(b), `"changes":[]`) {
				t.Fatalf("changes before any run: %d %s", resp.StatusCode, b)
			}
			ids, runs := historyRuns()
			for i, id := range ids {
				b, _ := json.Marshal(runs[i])
				if _, err := st.Put(t.Context(), probe.RunKey("tld/", id, "results.json"), bytes.NewReader(b), int64(len(b)), "application/json"); err != nil {
					t.Fatal(err)
				}
			}

			t.Run("history json", func(t *testing.T) {
				resp, b := get(t, srv.URL+"/api/history/COM")
				if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
					t.Fatalf("%d %s", resp.StatusCode, b)
				}
				var hist History
				if err := json.Unmarshal(b, &hist); err != nil {
					t.Fatal(err)
				}
				if hist.TLD != "com" || len(hist.Runs) != 3 || hist.Runs[1].Result == nil || *hist.Runs[1].Result.RDAPWorking || hist.HistoryFrom != runs[0].LastUpdate {
					t.Fatalf("history %s", b)
				}
				if len(hist.Changes) != 1 || hist.Changes[0].Change != probe.ChangeWorkingFlipped || *hist.Changes[0].From != "true" || *hist.Changes[0].To != "false" || hist.Changes[0].RunID != ids[1] {
					t.Fatalf("changes %s", b)
				}
				if hist.RDAPLastChanged == nil || *hist.RDAPLastChanged != runs[1].LastUpdate {
					t.Fatalf("rdap_last_changed %v, want %d", hist.RDAPLastChanged, runs[1].LastUpdate)
				}
				// A TLD gone from the last run: null result there, and tld_removed.
				_, b = get(t, srv.URL+"/api/history/io")
				if err := json.Unmarshal(b, &hist); err != nil || hist.Runs[2].Result != nil || len(hist.Changes) != 1 || hist.Changes[0].Change != probe.ChangeTLDRemoved || hist.RDAPLastChanged != nil {
					t.Fatalf("io history %s", b)
				}
			})
			t.Run("history csv", func(t *testing.T) {
				for _, how := range []struct{ query, accept string }{{"?format=csv", ""}, {"", "text/csv"}} {
					req, _ := http.NewRequest("GET", srv.URL+"/api/history/net"+how.query, nil)
					if how.accept != "" {
						req.Header.Set("Accept", how.accept)
					}
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					rows, err := csv.NewReader(resp.Body).ReadAll()
					resp.Body.Close()
					if err != nil || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" || !strings.Contains(resp.Header.Get("Content-Disposition"), "tld_history_net.csv") {
						t.Fatalf("%+v: %v %v", how, err, resp.Header)
					}
					if len(rows) != 4 || !slices.Equal(rows[0][:3], []string{"run_id", "last_update", "tld"}) || rows[3][0] != ids[2] || rows[3][3] != "true" || rows[1][3] != "false" {
						t.Fatalf("%+v: rows %v", how, rows)
					}
				}
			})
			t.Run("changes", func(t *testing.T) {
				cases := []struct {
					query string
					runs  []string
					want  []string // tld:change
				}{
					{"", ids[1:], []string{"com:working_flipped", "org:stealth_found", "net:rdap_gained", "net:working_flipped", "io:tld_removed"}},
					{"?since=" + ids[0], ids[1:], []string{"com:working_flipped", "org:stealth_found", "net:rdap_gained", "net:working_flipped", "io:tld_removed"}},
					{"?since=" + ids[1], ids[2:], []string{"net:rdap_gained", "net:working_flipped", "io:tld_removed"}},
					{"?since=" + ids[2], []string{}, []string{}},
					{"?since=2026-11-22", ids[1:], []string{"com:working_flipped", "org:stealth_found", "net:rdap_gained", "net:working_flipped", "io:tld_removed"}},
					{"?since=2026-11-23", ids[2:], []string{"net:rdap_gained", "net:working_flipped", "io:tld_removed"}},
					{"?since=2026-12-01", []string{}, []string{}},
				}
				for _, tc := range cases {
					resp, b := get(t, srv.URL+"/api/changes"+tc.query)
					var c Changes
					if resp.StatusCode != 200 || json.Unmarshal(b, &c) != nil {
						t.Fatalf("%s: %d %s", tc.query, resp.StatusCode, b)
					}
					got := []string{}
					for _, ch := range c.Changes {
						got = append(got, ch.TLD+":"+ch.Change)
					}
					if !slices.Equal(c.Runs, tc.runs) || !slices.Equal(got, tc.want) {
						t.Errorf("%s: runs %v changes %v, want %v %v", tc.query, c.Runs, got, tc.runs, tc.want)
					}
				}
				resp, b := get(t, srv.URL+"/api/changes?since="+ids[1]+"&format=csv")
				rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
				if err != nil || resp.StatusCode != 200 || !slices.Equal(rows[0], probe.ChangeCSVHeader) || len(rows) != 4 ||
					!slices.Equal(rows[1], []string{ids[2], ids[1], "1795489200", "net", "rdap_gained", "", "https://rdap.net.test/"}) {
					t.Fatalf("csv: %d %v %v", resp.StatusCode, rows, err)
				}
			})
			t.Run("bad input", func(t *testing.T) {
				cases := []struct {
					method, path string
					status       int
					code         string
				}{
					{"GET", "/api/history/no_such!", 400, "invalid_parameter"},
					{"GET", "/api/history/zz", 404, "unknown_tld"},
					{"GET", "/api/history/com?format=xml", 400, "invalid_parameter"},
					{"GET", "/api/changes?since=yesterday", 400, "invalid_parameter"},
					{"GET", "/api/changes?since=2026-02-30", 400, "invalid_parameter"},
					{"GET", "/api/changes?since=20261101T030000Zabcd", 404, "unknown_run"},
					{"POST", "/api/changes", 405, "method_not_allowed"},
					{"DELETE", "/api/history/com", 405, "method_not_allowed"},
				}
				for _, tc := range cases {
					req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					var e struct {
						Error struct{ Code, Message string } `json:"error"`
					}
					_ = json.NewDecoder(resp.Body).Decode(&e)
					resp.Body.Close()
					if resp.StatusCode != tc.status || e.Error.Code != tc.code || e.Error.Message == "" {
						t.Errorf("%s %s: %d %+v, want %d %s", tc.method, tc.path, resp.StatusCode, e, tc.status, tc.code)
					}
				}
			})
		})
	}
}
