// Package probe is the TLD RDAP/WHOIS status check with stealth RDAP
// discovery. A coordinator (one at a time, under a lease in the locks
// bucket) loads the IANA inputs, queues one work item per TLD on the
// TLDWORK stream, follows progress through the per-TLD results that workers
// write to the tldprogress bucket, and publishes results.json, results.csv
// and summary.json to the object store. Workers (any number, in any process)
// pull work items and run the RDAP, WHOIS and stealth checks of one TLD.
package probe

import (
	"errors"
	"strings"
)

// Result is the spec's TLD result.
type Result struct {
	TLD            string   `json:"tld"`
	RDAPSupported  bool     `json:"rdap_supported"`
	RDAPURLs       []string `json:"rdap_urls"`
	RDAPWorking    *bool    `json:"rdap_working"`
	WorkingURL     *string  `json:"working_url"`
	WhoisAvailable *bool    `json:"whois_available"`
	WhoisServer    *string  `json:"whois_server"`
	StealthRDAP    bool     `json:"stealth_rdap"`
	StealthURLs    []string `json:"stealth_urls"`
}

// StealthMetadata is the spec's stealth_metadata.
type StealthMetadata struct {
	TotalTLDsProbed    int   `json:"total_tlds_probed"`
	StealthTLDsFound   int   `json:"stealth_tlds_found"`
	DiscoveryTimestamp int64 `json:"discovery_timestamp"`
	MaxTLDsConfigured  *int  `json:"max_tlds_configured"`
}

// Results is the spec's Results document (GET /api/results, results.json).
type Results struct {
	Results         []Result        `json:"results"`
	LastUpdate      int64           `json:"last_update"`
	TotalTLDs       int             `json:"total_tlds"`
	StealthMetadata StealthMetadata `json:"stealth_metadata"`
}

// Summary is summary.json: totals of one run (the spec leaves its fields to us).
type Summary struct {
	RunID           string            `json:"run_id"`
	GeneratedAt     int64             `json:"generated_at"`
	StartedAt       int64             `json:"started_at"`
	FinishedAt      int64             `json:"finished_at"`
	DurationSeconds float64           `json:"duration_seconds"`
	TotalTLDs       int               `json:"total_tlds"`
	RDAPSupported   int               `json:"rdap_supported"`
	RDAPWorking     int               `json:"rdap_working"`
	RDAPNotWorking  int               `json:"rdap_not_working"`
	WhoisAvailable  int               `json:"whois_available"`
	WhoisNoServer   int               `json:"whois_no_server"`
	StealthFound    int               `json:"stealth_found"`
	StealthURLs     int               `json:"stealth_urls"`
	ByType          map[string]Totals `json:"by_type"`
	Stealth         StealthMetadata   `json:"stealth_metadata"`
}

// Totals are the counts of one TLD type (generic, country-code, idn).
type Totals struct {
	TLDs           int `json:"tlds"`
	RDAPSupported  int `json:"rdap_supported"`
	RDAPWorking    int `json:"rdap_working"`
	WhoisAvailable int `json:"whois_available"`
	StealthFound   int `json:"stealth_found"`
}

// Progress is the live state of the checker, kept in the tldprogress bucket
// under KeyProgress. Status is idle, running, completed or failed.
type Progress struct {
	Status        string `json:"status"`
	CurrentStep   string `json:"current_step"`
	TotalTLDs     int    `json:"total_tlds"`
	ProcessedTLDs int    `json:"processed_tlds"`
	LastUpdate    int64  `json:"last_update"`
	RunID         string `json:"run_id,omitempty"`
}

// Published describes the latest published results (KeyPublished).
type Published struct {
	RunID            string `json:"run_id"`
	LastUpdate       int64  `json:"last_update"`
	ResultsAvailable int    `json:"results_available"`
	StealthCount     int    `json:"stealth_count"`
}

// Run is the plan of one run (KeyRun): what a resuming coordinator needs.
type Run struct {
	ID        string   `json:"id"`
	State     string   `json:"state"` // running, completed, failed
	StartedAt int64    `json:"started_at"`
	TLDs      []string `json:"tlds"`
	// Queued is true once every work item was published.
	Queued bool `json:"queued"`
	// Stealth is whether this run does stealth discovery.
	Stealth bool `json:"stealth"`
	// StealthMax is the discovery limit this run used (0 = unlimited).
	StealthMax int `json:"stealth_max"`
}

// Work is one work item on the TLDWORK stream.
type Work struct {
	RunID string `json:"run_id"`
	TLD   string `json:"tld"`
	// RDAPURLs are the bootstrap's base URLs for the TLD.
	RDAPURLs []string `json:"rdap_urls"`
	// WhoisFallback is the fallback table's server, used when discovery has none.
	WhoisFallback string `json:"whois_fallback,omitempty"`
	// Stealth turns discovery on for this TLD.
	Stealth bool `json:"stealth"`
	// Candidates are stealth base URLs known for this TLD from the candidates file.
	Candidates []string `json:"candidates,omitempty"`
	// Requeued marks an item queued again (resume, stall): its TLD may be done already.
	Requeued bool `json:"requeued,omitempty"`
}

// Progress statuses.
const (
	StatusIdle      = "idle"
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// StepCompleted is the current_step text of a finished check.
const StepCompleted = "TLD check completed"

// Keys in the tldprogress bucket.
const (
	KeyProgress  = "progress"
	KeyPublished = "published"
	KeyRun       = "run"
	KeyRequest   = "request"
	// LockKey is the run lease in the locks bucket.
	LockKey = "tld_probe"
)

// ResultKey is the tldprogress key of one TLD's result in a run.
func ResultKey(runID, tld string) string { return "result." + runID + "." + tld }

// Object names under the configured prefix.
const (
	LatestJSON    = "latest/results.json"
	LatestCSV     = "latest/results.csv"
	LatestSummary = "latest/summary.json"
)

// Errors.
var (
	// ErrBusy means another instance holds the run lease.
	ErrBusy = errors.New("a TLD probe run is already in progress")
	// ErrBadInput is a malformed input file (TLD list, bootstrap, table).
	ErrBadInput = errors.New("bad input")
	// errLeaseLost means another owner holds the run lease, or nobody does.
	errLeaseLost = errors.New("run lease lost")
)

// TLDType classifies a TLD for the summary: idn (xn--), country-code (two
// letters) or generic.
func TLDType(tld string) string {
	switch {
	case strings.HasPrefix(tld, "xn--"):
		return "idn"
	case len(tld) == 2:
		return "country-code"
	}
	return "generic"
}

func ptr[T any](v T) *T { return &v }
