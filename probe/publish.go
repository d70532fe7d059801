package probe

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// CSVHeader is the header row of results.csv.
var CSVHeader = []string{"tld", "rdap_supported", "rdap_urls", "rdap_working", "working_url", "whois_available", "whois_server", "stealth_rdap", "stealth_urls"}

// BuildResults assembles the Results document of a run, in the run's TLD order.
func BuildResults(run Run, results map[string]Result, finished time.Time) Results {
	out := Results{Results: make([]Result, 0, len(run.TLDs)), LastUpdate: finished.Unix()}
	probed, found := 0, 0
	for i, t := range run.TLDs {
		r, ok := results[t]
		if !ok {
			continue
		}
		out.Results = append(out.Results, r)
		if run.Stealth && (run.StealthMax == 0 || i < run.StealthMax) {
			probed++
		}
		if r.StealthRDAP {
			found++
		}
	}
	out.TotalTLDs = len(out.Results)
	out.StealthMetadata = StealthMetadata{TotalTLDsProbed: probed, StealthTLDsFound: found, DiscoveryTimestamp: run.StartedAt}
	if run.StealthMax > 0 {
		out.StealthMetadata.MaxTLDsConfigured = ptr(run.StealthMax)
	}
	return out
}

// BuildSummary computes summary.json from a Results document.
func BuildSummary(run Run, res Results, finished time.Time) Summary {
	sum := Summary{RunID: run.ID, GeneratedAt: finished.Unix(), StartedAt: run.StartedAt, FinishedAt: finished.Unix(),
		DurationSeconds: finished.Sub(time.Unix(run.StartedAt, 0)).Seconds(), TotalTLDs: res.TotalTLDs,
		ByType: map[string]Totals{}, Stealth: res.StealthMetadata}
	for _, r := range res.Results {
		t := sum.ByType[TLDType(r.TLD)]
		t.TLDs++
		if r.RDAPSupported {
			sum.RDAPSupported++
			t.RDAPSupported++
		}
		if r.RDAPWorking != nil {
			if *r.RDAPWorking {
				sum.RDAPWorking++
				t.RDAPWorking++
			} else {
				sum.RDAPNotWorking++
			}
		}
		if r.WhoisServer == nil {
			sum.WhoisNoServer++
		}
		if r.WhoisAvailable != nil && *r.WhoisAvailable {
			sum.WhoisAvailable++
			t.WhoisAvailable++
		}
		if r.StealthRDAP {
			sum.StealthFound++
			t.StealthFound++
			sum.StealthURLs += len(r.StealthURLs)
		}
		sum.ByType[TLDType(r.TLD)] = t
	}
	return sum
}

// WriteCSV renders results as RFC 4180 CSV with a header row. Lists are
// space-separated; null is an empty cell.
func WriteCSV(res Results) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.UseCRLF = true // RFC 4180 line breaks, as every CSV netintel writes
	_ = w.Write(CSVHeader)
	for _, r := range res.Results {
		_ = w.Write(CSVRow(r))
	}
	w.Flush()
	return buf.Bytes()
}

// CSVRow renders one result as a row of results.csv (CSVHeader).
func CSVRow(r Result) []string {
	return []string{r.TLD, strconv.FormatBool(r.RDAPSupported), strings.Join(r.RDAPURLs, " "), optBool(r.RDAPWorking), optStr(r.WorkingURL),
		optBool(r.WhoisAvailable), optStr(r.WhoisServer), strconv.FormatBool(r.StealthRDAP), strings.Join(r.StealthURLs, " ")}
}

func optBool(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}

func optStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// publish writes the run's files: the dated copies first (the run's
// history), then the latest ones, then the published record the API
// reads; then it prunes the history to probe.history_runs runs.
func (s *Service) publish(ctx context.Context, run Run, results map[string]Result) error {
	if s.store == nil {
		return fmt.Errorf("no object store")
	}
	finished := s.now()
	res := BuildResults(run, results, finished)
	sum := BuildSummary(run, res, finished)
	resJSON, err := json.Marshal(res)
	if err != nil {
		return err
	}
	sumJSON, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	files := []struct {
		name, ctype string
		data        []byte
	}{
		{"results.json", "application/json", resJSON},
		{"results.csv", "text/csv; charset=utf-8", WriteCSV(res)},
		{"summary.json", "application/json", sumJSON},
	}
	for _, dir := range []string{"runs/" + run.ID + "/", "latest/"} {
		for _, f := range files {
			key := s.cfg.Prefix + dir + f.name
			if _, err := s.store.Put(ctx, key, bytes.NewReader(f.data), int64(len(f.data)), f.ctype); err != nil {
				return fmt.Errorf("put %s: %w", key, err)
			}
		}
	}
	if err := s.putJSON(ctx, KeyPublished, Published{RunID: run.ID, LastUpdate: finished.Unix(), ResultsAvailable: res.TotalTLDs, StealthCount: res.StealthMetadata.StealthTLDsFound}); err != nil {
		return err
	}
	// History: the newest history_runs runs stay. A failure here leaves a
	// few runs too many until the next publish; the run itself is done.
	pruned, err := PruneHistory(ctx, s.store, s.cfg.Prefix, s.cfg.HistoryRuns, run.ID)
	if err != nil {
		s.log.Warn("tld history not pruned", "err", err)
	} else if len(pruned) > 0 {
		s.log.Info("tld history pruned", "runs", len(pruned), "oldest_kept_after", pruned[len(pruned)-1])
	}
	return nil
}
