package tldapi

import (
	"context"
	"encoding/csv"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/netintel/netintel/internal/httpx"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/probe"
)

// History routes (docs/tld-status.md, "History"): GET /api/history/{tld}
// and GET /api/changes?since=RUN|DATE, in JSON or CSV (?format=csv, or
// Accept: text/csv). They read the runs the probe keeps in the object
// store (probe.HistoryRuns); a run's results never change once published,
// so each is parsed once and cached.

// HistoryRun is one run in a TLD's history.
type HistoryRun struct {
	RunID string `json:"run_id"`
	// LastUpdate is when the run's results were published (Unix).
	LastUpdate int64 `json:"last_update"`
	// Result is the TLD's result in that run; null when the run did not
	// check the TLD.
	Result *probe.Result `json:"result"`
}

// History is the body of GET /api/history/{tld}.
type History struct {
	TLD string `json:"tld"`
	// Runs are the kept runs, oldest first.
	Runs []HistoryRun `json:"runs"`
	// Changes are the TLD's changes between consecutive runs, oldest first.
	Changes []probe.Change `json:"changes"`
	// RDAPLastChanged is the time (Unix) of the newest run whose RDAP
	// status (rdap_supported or rdap_working) differed from the run
	// before; null when it did not change within the kept runs.
	RDAPLastChanged *int64 `json:"rdap_last_changed"`
	// HistoryFrom is when the oldest kept run was published (Unix): the
	// history reaches back that far.
	HistoryFrom int64 `json:"history_from"`
}

// Changes is the body of GET /api/changes.
type Changes struct {
	// Since is the since parameter as given (null without one).
	Since *string `json:"since"`
	// Runs are the runs whose changes are listed (each against the run
	// before it), oldest first.
	Runs []string `json:"runs"`
	// Changes are oldest first, TLD by TLD within a run.
	Changes []probe.Change `json:"changes"`
}

var (
	tldRe  = regexp.MustCompile(`^[a-z0-9-]{1,63}$`)
	dateRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

// runCache keeps parsed runs, at most max of them.
type runCache struct {
	mu    sync.Mutex
	max   int
	m     map[string]probe.Results
	order []string
}

func (c *runCache) get(id string) (probe.Results, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[id]
	return r, ok
}

func (c *runCache) put(id string, r probe.Results) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[id]; ok {
		return
	}
	if c.m == nil {
		c.m = map[string]probe.Results{}
	}
	c.m[id] = r
	c.order = append(c.order, id)
	for len(c.order) > c.max {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
}

// loadRuns returns the kept runs' ids and results, oldest first.
func (h *Handler) loadRuns(ctx context.Context) ([]string, []probe.Results, error) {
	ids, err := probe.HistoryRuns(ctx, h.store, h.opt.Prefix)
	if err != nil {
		return nil, nil, err
	}
	res := make([]probe.Results, 0, len(ids))
	kept := ids[:0:0]
	for _, id := range ids {
		r, ok := h.cache.get(id)
		if !ok {
			r, err = probe.LoadRun(ctx, h.store, h.opt.Prefix, id)
			if errors.Is(err, objstore.ErrNotFound) {
				continue // pruned since it was listed
			}
			if err != nil {
				return nil, nil, err
			}
			h.cache.put(id, r)
		}
		kept = append(kept, id)
		res = append(res, r)
	}
	return kept, res, nil
}

// wantCSV reads ?format= (json, csv) and Accept, or returns the 400.
func wantCSV(r *http.Request) (bool, error) {
	switch f := r.URL.Query().Get("format"); f {
	case "csv":
		return true, nil
	case "json":
		return false, nil
	case "":
		return strings.Contains(r.Header.Get("Accept"), "text/csv"), nil
	default:
		return false, invalidParameter("format: want json or csv, got " + strconv.Quote(truncate(f, 20)))
	}
}

func invalidParameter(msg string) *httpx.Error {
	return &httpx.Error{Status: http.StatusBadRequest, Code: "invalid_parameter", Message: msg}
}

// runs reads the kept runs for what (a route, for the log), or returns the
// failure to answer.
func (h *Handler) runs(ctx context.Context, what string) ([]string, []probe.Results, error) {
	if h.store == nil {
		return nil, nil, h.unavailable(what, errNoStore)
	}
	ids, runs, err := h.loadRuns(ctx)
	if err != nil {
		return nil, nil, h.unavailable(what, err)
	}
	return ids, runs, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func (h *Handler) history(w http.ResponseWriter, r *http.Request) error {
	tld := strings.ToLower(strings.TrimPrefix(r.PathValue("tld"), "."))
	if !tldRe.MatchString(tld) {
		return invalidParameter("tld: want a TLD without the dot (letters, digits, hyphens, e.g. com or xn--p1ai), got " + strconv.Quote(truncate(tld, 70)))
	}
	asCSV, err := wantCSV(r)
	if err != nil {
		return err
	}
	ids, runs, err := h.runs(r.Context(), "history")
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return errNoResults
	}
	out := History{TLD: tld, Runs: make([]HistoryRun, len(ids)), Changes: []probe.Change{}, HistoryFrom: runs[0].LastUpdate}
	known := false
	var prev *probe.Result
	for i := range ids {
		var cur *probe.Result
		for k := range runs[i].Results {
			if runs[i].Results[k].TLD == tld {
				cur = &runs[i].Results[k]
				break
			}
		}
		known = known || cur != nil
		out.Runs[i] = HistoryRun{RunID: ids[i], LastUpdate: runs[i].LastUpdate, Result: cur}
		if i > 0 {
			for _, c := range probe.DiffTLD(ids[i-1], ids[i], runs[i].LastUpdate, tld, prev, cur) {
				out.Changes = append(out.Changes, c)
				if c.RDAPChange() {
					t := c.Time
					out.RDAPLastChanged = &t
				}
			}
		}
		prev = cur
	}
	if !known {
		return &httpx.Error{Status: http.StatusNotFound, Code: "unknown_tld",
			Message: "no kept run checked " + strconv.Quote(tld) + " (the history holds the last " + strconv.Itoa(len(ids)) + " runs)"}
	}
	if !asCSV {
		httpx.WriteJSON(w, http.StatusOK, out)
		return nil
	}
	rows := [][]string{append([]string{"run_id", "last_update"}, probe.CSVHeader...)}
	for _, run := range out.Runs {
		row := []string{run.RunID, strconv.FormatInt(run.LastUpdate, 10)}
		if run.Result != nil {
			row = append(row, probe.CSVRow(*run.Result)...)
		} else {
			row = append(row, tld)
			row = append(row, make([]string, len(probe.CSVHeader)-1)...)
		}
		rows = append(rows, row)
	}
	writeCSV(w, "tld_history_"+tld+".csv", rows)
	return nil
}

func (h *Handler) changes(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	since, hasSince := q.Get("since"), q.Has("since")
	var sinceTime int64
	isDate := false
	switch {
	case !hasSince:
	case probe.ValidRunID(since):
	case dateRe.MatchString(since):
		t, err := time.Parse("2006-01-02", since)
		if err != nil {
			return invalidParameter("since: " + strconv.Quote(since) + " is not a calendar day")
		}
		sinceTime, isDate = t.Unix(), true
	default:
		return invalidParameter("since: want a run id (e.g. 20261123T030000Z9f86) or a date YYYY-MM-DD, got " + strconv.Quote(truncate(since, 40)))
	}
	asCSV, err := wantCSV(r)
	if err != nil {
		return err
	}
	ids, runs, err := h.runs(r.Context(), "changes")
	if err != nil {
		return err
	}
	first := 1 // the first run with a run before it
	if hasSince && !isDate {
		i := -1
		for k, id := range ids {
			if id == since {
				i = k
			}
		}
		if i < 0 {
			msg := "run " + since + " is not in the history"
			if len(ids) > 0 {
				msg += " (it holds the last " + strconv.Itoa(len(ids)) + " runs, the oldest " + ids[0] + "); use a date instead"
			}
			return &httpx.Error{Status: http.StatusNotFound, Code: "unknown_run", Message: msg}
		}
		first = i + 1
	}
	out := Changes{Runs: []string{}, Changes: []probe.Change{}}
	if hasSince {
		out.Since = &since
	}
	for i := max(first, 1); i < len(ids); i++ {
		if isDate && runs[i].LastUpdate < sinceTime {
			continue
		}
		out.Runs = append(out.Runs, ids[i])
		out.Changes = append(out.Changes, probe.Diff(ids[i-1], runs[i-1], ids[i], runs[i])...)
	}
	if !asCSV {
		httpx.WriteJSON(w, http.StatusOK, out)
		return nil
	}
	rows := [][]string{probe.ChangeCSVHeader}
	for _, c := range out.Changes {
		rows = append(rows, c.CSVRow())
	}
	writeCSV(w, "tld_changes.csv", rows)
	return nil
}

// writeCSV answers rows as an RFC 4180 CSV attachment.
func writeCSV(w http.ResponseWriter, filename string, rows [][]string) {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+filename+`"`)
	cw := csv.NewWriter(w)
	_ = cw.WriteAll(rows)
}
