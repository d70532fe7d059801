package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/netintel/netintel/internal/objstore"
)

// History: every run's results stay in the object store under
// <prefix>runs/<run id>/ (results.json, results.csv, summary.json), the
// newest probe.history_runs of them (PruneHistory, after each publish).
// Changes compares a run's results with the run before it.

// RunsDir is the folder of the runs' results under the prefix.
const RunsDir = "runs/"

// runIDRe matches a run id: its start time in UTC, then 4 hex digits.
var runIDRe = regexp.MustCompile(`^\d{8}T\d{6}Z[0-9a-f]{4,16}$`)

// ValidRunID reports whether s has the shape of a run id
// (20261123T030000Z9f86).
func ValidRunID(s string) bool { return runIDRe.MatchString(s) }

// RunKey returns the object key of a file of a run's results.
func RunKey(prefix, runID, name string) string { return prefix + RunsDir + runID + "/" + name }

// HistoryRuns lists the runs whose results are in the store (those with a
// results.json), oldest first.
func HistoryRuns(ctx context.Context, st objstore.Store, prefix string) ([]string, error) {
	objs, err := st.List(ctx, prefix+RunsDir)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var ids []string
	for _, o := range objs {
		id, name, ok := strings.Cut(strings.TrimPrefix(o.Key, prefix+RunsDir), "/")
		if ok && name == "results.json" && ValidRunID(id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids) // ids sort by start time
	return ids, nil
}

// LoadRun reads a run's results.json.
func LoadRun(ctx context.Context, st objstore.Store, prefix, runID string) (Results, error) {
	key := RunKey(prefix, runID, "results.json")
	rc, _, err := st.Get(ctx, key, nil)
	if err != nil {
		return Results{}, fmt.Errorf("read %s: %w", key, err)
	}
	defer rc.Close()
	var res Results
	if err := json.NewDecoder(io.LimitReader(rc, 256<<20)).Decode(&res); err != nil {
		return Results{}, fmt.Errorf("decode %s: %w", key, err)
	}
	return res, nil
}

// PruneHistory deletes the results of every run but the newest keep ones
// (and never keepID, the run just published); it returns the runs
// deleted.
func PruneHistory(ctx context.Context, st objstore.Store, prefix string, keep int, keepID string) ([]string, error) {
	objs, err := st.List(ctx, prefix+RunsDir)
	if err != nil {
		return nil, fmt.Errorf("prune history: list: %w", err)
	}
	byRun := map[string][]string{}
	var complete []string
	for _, o := range objs {
		id, name, ok := strings.Cut(strings.TrimPrefix(o.Key, prefix+RunsDir), "/")
		if !ok || !ValidRunID(id) {
			continue
		}
		byRun[id] = append(byRun[id], o.Key)
		if name == "results.json" {
			complete = append(complete, id)
		}
	}
	slices.Sort(complete)
	keepSet := map[string]bool{keepID: true}
	for i := len(complete) - 1; i >= 0 && i >= len(complete)-max(keep, 1); i-- {
		keepSet[complete[i]] = true
	}
	newest := ""
	if len(complete) > 0 {
		newest = complete[len(complete)-1]
	}
	var pruned []string
	ids := make([]string, 0, len(byRun))
	for id := range byRun {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		// A run folder without results.json newer than the newest complete
		// run may be a publish under way: left alone.
		if keepSet[id] || id > newest {
			continue
		}
		keys := byRun[id]
		// results.json first: a half-deleted run is no longer listed.
		slices.SortFunc(keys, func(a, b string) int {
			return cmpBool(strings.HasSuffix(b, "/results.json"), strings.HasSuffix(a, "/results.json"))
		})
		for _, k := range keys {
			if err := st.Delete(ctx, k); err != nil && !errors.Is(err, objstore.ErrNotFound) {
				return pruned, fmt.Errorf("prune history: delete %s: %w", k, err)
			}
		}
		pruned = append(pruned, id)
	}
	return pruned, nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// Change kinds.
const (
	// ChangeRDAPGained: the TLD is now in the RDAP bootstrap (rdap_supported false -> true).
	ChangeRDAPGained = "rdap_gained"
	// ChangeRDAPLost: the TLD left the bootstrap (rdap_supported true -> false).
	ChangeRDAPLost = "rdap_lost"
	// ChangeWorkingFlipped: rdap_working changed (true, false or null).
	ChangeWorkingFlipped = "working_flipped"
	// ChangeStealthFound: stealth RDAP servers appeared (to: the new URLs).
	ChangeStealthFound = "stealth_found"
	// ChangeStealthLost: stealth RDAP servers disappeared (from: the URLs gone).
	ChangeStealthLost = "stealth_lost"
	// ChangeWhoisServer: whois_server changed.
	ChangeWhoisServer = "whois_server_changed"
	// ChangeTLDAdded and ChangeTLDRemoved: the TLD appeared in, or left, the checked list.
	ChangeTLDAdded   = "tld_added"
	ChangeTLDRemoved = "tld_removed"
)

// Change is one difference of a TLD between a run and the run before it.
// From and To are the values before and after, as text (lists joined by
// one space); nil is null (not tested, or none).
type Change struct {
	RunID         string `json:"run_id"`
	PreviousRunID string `json:"previous_run_id"`
	// Time is the Unix time the run's results were published (its results.json last_update).
	Time   int64   `json:"time"`
	TLD    string  `json:"tld"`
	Change string  `json:"change"`
	From   *string `json:"from"`
	To     *string `json:"to"`
}

// ChangeCSVHeader is the header row of the changes in CSV.
var ChangeCSVHeader = []string{"run_id", "previous_run_id", "time", "tld", "change", "from", "to"}

// CSVRow renders c as a CSV row (ChangeCSVHeader); null is an empty cell.
func (c Change) CSVRow() []string {
	return []string{c.RunID, c.PreviousRunID, strconv.FormatInt(c.Time, 10), c.TLD, c.Change, optStr(c.From), optStr(c.To)}
}

// RDAPChange reports whether the change is one of the TLD's RDAP status
// (supported or working).
func (c Change) RDAPChange() bool {
	return c.Change == ChangeRDAPGained || c.Change == ChangeRDAPLost || c.Change == ChangeWorkingFlipped
}

// Diff lists what changed from prev (run prevID) to cur (run curID), TLD
// by TLD in cur's order, then the TLDs cur no longer has.
func Diff(prevID string, prev Results, curID string, cur Results) []Change {
	old := make(map[string]*Result, len(prev.Results))
	for i := range prev.Results {
		old[prev.Results[i].TLD] = &prev.Results[i]
	}
	var out []Change
	seen := make(map[string]bool, len(cur.Results))
	for i := range cur.Results {
		n := &cur.Results[i]
		seen[n.TLD] = true
		out = append(out, DiffTLD(prevID, curID, cur.LastUpdate, n.TLD, old[n.TLD], n)...)
	}
	for i := range prev.Results {
		if !seen[prev.Results[i].TLD] {
			out = append(out, DiffTLD(prevID, curID, cur.LastUpdate, prev.Results[i].TLD, &prev.Results[i], nil)...)
		}
	}
	return out
}

// DiffTLD lists what changed for one TLD from o (run prevID) to n (run
// curID, published at t); nil is a run without the TLD.
func DiffTLD(prevID, curID string, t int64, tld string, o, n *Result) []Change {
	var out []Change
	add := func(kind string, from, to *string) {
		out = append(out, Change{RunID: curID, PreviousRunID: prevID, Time: t, TLD: tld, Change: kind, From: from, To: to})
	}
	switch {
	case o == nil && n == nil:
		return nil
	case o == nil:
		add(ChangeTLDAdded, nil, nil)
		return out
	case n == nil:
		add(ChangeTLDRemoved, nil, nil)
		return out
	}
	if o.RDAPSupported != n.RDAPSupported {
		kind := ChangeRDAPGained
		if !n.RDAPSupported {
			kind = ChangeRDAPLost
		}
		add(kind, urls(o.RDAPURLs), urls(n.RDAPURLs))
	}
	if !sameBool(o.RDAPWorking, n.RDAPWorking) {
		add(ChangeWorkingFlipped, boolText(o.RDAPWorking), boolText(n.RDAPWorking))
	}
	gone, found := listDiff(o.StealthURLs, n.StealthURLs)
	if len(found) > 0 {
		add(ChangeStealthFound, urls(o.StealthURLs), urls(found))
	}
	if len(gone) > 0 {
		add(ChangeStealthLost, urls(gone), urls(n.StealthURLs))
	}
	if !sameStr(o.WhoisServer, n.WhoisServer) {
		add(ChangeWhoisServer, o.WhoisServer, n.WhoisServer)
	}
	return out
}

func urls(l []string) *string {
	if len(l) == 0 {
		return nil
	}
	s := strings.Join(l, " ")
	return &s
}

func boolText(b *bool) *string {
	if b == nil {
		return nil
	}
	s := strconv.FormatBool(*b)
	return &s
}

func sameBool(a, b *bool) bool  { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
func sameStr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// listDiff returns what of a is not in b, and what of b is not in a.
func listDiff(a, b []string) (gone, found []string) {
	for _, x := range a {
		if !slices.Contains(b, x) {
			gone = append(gone, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			found = append(found, x)
		}
	}
	return gone, found
}
