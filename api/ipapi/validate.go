package ipapi

import (
	"math"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
)

// Export limits (spec section 8).
const (
	DefaultRowLimit = 100_000
	MaxRowLimit     = 1_000_000
	// MaxBatch is the most addresses one batch request may carry.
	MaxBatch = 100
)

// Ranked values of the CVE filters, lowest first.
var (
	severityLevels   = []string{"low", "medium", "high", "critical"}
	confidenceLevels = []string{"low", "medium", "high"}
	exportClasses    = []string{ipmodel.ClassVPN, ipmodel.ClassProxy, ipmodel.ClassTor, ipmodel.ClassRelay, ipmodel.ClassHosting, ipmodel.ClassCDN}
	includeBlocks    = []string{"cves"}
)

// parseAddr parses an address for the API: IPv4 or IPv6 without a zone,
// IPv4-mapped IPv6 answered as IPv4. ok is false for anything else.
func parseAddr(s string) (netip.Addr, bool) {
	if len(s) == 0 || len(s) > 64 {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// query reads query parameters; as with most frameworks, a repeated
// parameter takes its last value.
type query struct {
	v    url.Values
	errs problems
}

func (q *query) get(name string) (string, bool) {
	vs, ok := q.v[name]
	if !ok || len(vs) == 0 {
		return "", false
	}
	return vs[len(vs)-1], true
}

func loc(name string) []any { return []any{"query", name} }

// number reads a float within [lo, hi].
func (q *query) number(name string, lo, hi, def float64) float64 {
	s, ok := q.get(name)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	switch {
	case err != nil && !isRangeErr(err):
		q.errs.add(ValidationItem{Loc: loc(name), Msg: "Input should be a valid number, unable to parse string as a number", Type: "float_parsing", Input: s})
	case math.IsNaN(f) || math.IsInf(f, 0):
		q.errs.add(ValidationItem{Loc: loc(name), Msg: "Input should be a finite number", Type: "finite_number", Input: s})
	case f < lo:
		q.errs.add(ValidationItem{Loc: loc(name), Msg: "Input should be greater than or equal to " + fmtNum(lo), Type: "greater_than_equal", Input: s, Ctx: map[string]any{"ge": lo}})
	case f > hi:
		q.errs.add(ValidationItem{Loc: loc(name), Msg: "Input should be less than or equal to " + fmtNum(hi), Type: "less_than_equal", Input: s, Ctx: map[string]any{"le": hi}})
	default:
		return f
	}
	return def
}

func isRangeErr(err error) bool {
	var ne *strconv.NumError
	if e, ok := err.(*strconv.NumError); ok {
		ne = e
	}
	return ne != nil && ne.Err == strconv.ErrRange
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// integer reads an integer within [lo, hi].
func (q *query) integer(name string, lo, hi, def int) int {
	s, ok := q.get(name)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	switch {
	case err != nil && !isRangeErr(err):
		q.errs.add(ValidationItem{Loc: loc(name), Msg: "Input should be a valid integer, unable to parse string as an integer", Type: "int_parsing", Input: s})
	case n < int64(lo):
		q.errs.add(ValidationItem{Loc: loc(name), Msg: "Input should be greater than or equal to " + strconv.Itoa(lo), Type: "greater_than_equal", Input: s, Ctx: map[string]any{"ge": lo}})
	case n > int64(hi):
		q.errs.add(ValidationItem{Loc: loc(name), Msg: "Input should be less than or equal to " + strconv.Itoa(hi), Type: "less_than_equal", Input: s, Ctx: map[string]any{"le": hi}})
	default:
		return int(n)
	}
	return def
}

// boolean reads true/false (also 1/0, yes/no, on/off, t/f, y/n), any case.
func (q *query) boolean(name string) bool {
	s, ok := q.get(name)
	if !ok {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes", "on", "t", "y":
		return true
	case "false", "0", "no", "off", "f", "n":
		return false
	}
	q.errs.add(ValidationItem{Loc: loc(name), Msg: "Input should be a valid boolean, unable to interpret input", Type: "bool_parsing", Input: s})
	return false
}

// enum reads one of allowed (case-sensitive); "" when absent. An empty
// value counts as absent, as for the spec's string|null parameters.
func (q *query) enum(name string, allowed []string) string {
	s, ok := q.get(name)
	if !ok || s == "" {
		return ""
	}
	if slices.Contains(allowed, s) {
		return s
	}
	q.errs.add(enumItem(loc(name), s, allowed))
	return ""
}

func enumItem(l []any, input any, allowed []string) ValidationItem {
	return ValidationItem{Loc: l, Msg: "Input should be " + expected(allowed), Type: "enum", Input: input, Ctx: map[string]any{"expected": expected(allowed)}}
}

// expected renders allowed values as "'a', 'b' or 'c'".
func expected(allowed []string) string {
	var b strings.Builder
	for i, a := range allowed {
		switch {
		case i == 0:
		case i == len(allowed)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString("'" + a + "'")
	}
	return b.String()
}

// list reads a comma-separated list of allowed values.
func (q *query) list(name string, allowed []string) []string {
	s, ok := q.get(name)
	if !ok {
		return nil
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !slices.Contains(allowed, part) {
			q.errs.add(enumItem(loc(name), s, allowed))
			return nil
		}
		out = append(out, part)
	}
	return out
}

// date reads a YYYY-MM-DD calendar day.
func (q *query) date(name string) (time.Time, bool) {
	s, ok := q.get(name)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || len(s) != len(time.DateOnly) {
		q.errs.add(ValidationItem{Loc: loc(name), Msg: "Input should be a valid date in the format YYYY-MM-DD", Type: "date_from_datetime_parsing", Input: s})
		return time.Time{}, false
	}
	return t, true
}

// lookupParams are the validated query parameters of the lookup.
type lookupParams struct {
	minConfidence float64
	cves          bool
	minSeverity   int // rank in severityLevels, -1 = any
	kevOnly       bool
	minDetection  int // rank in confidenceLevels, -1 = any
}

// defaultLookupParams are the lookup's parameters when none are given.
var defaultLookupParams = lookupParams{minSeverity: -1, minDetection: -1}

// parseLookupQuery validates the lookup's query; problems is empty when valid.
func parseLookupQuery(v url.Values) (lookupParams, problems) {
	q := query{v: v}
	p := defaultLookupParams
	p.minConfidence = q.number("min_confidence", 0, 1, 0)
	p.cves = slices.Contains(q.list("include", includeBlocks), "cves")
	p.minSeverity = slices.Index(severityLevels, q.enum("min_severity", severityLevels))
	p.kevOnly = q.boolean("kev_only")
	p.minDetection = slices.Index(confidenceLevels, q.enum("cve_min_confidence", confidenceLevels))
	return p, q.errs
}

// exportParams are the validated query parameters of the CSV export.
type exportParams struct {
	filter Filter
	limit  int
}

// Export filter parameter names (docs/ip-api.md).
const (
	paramClassification = "classification"
	paramMinConfidence  = "min_confidence"
	paramLastSeenAfter  = "last_seen_after"
	paramLimit          = "limit"
)

// parseExportQuery validates the export's query. limit is the applied cap
// even when other parameters are invalid.
func parseExportQuery(v url.Values) (exportParams, problems) {
	q := query{v: v}
	var p exportParams
	if c := q.enum(paramClassification, exportClasses); c != "" {
		p.filter.Class = classBit(c)
	}
	p.filter.MinConfidence = q.number(paramMinConfidence, 0, 1, 0)
	if d, ok := q.date(paramLastSeenAfter); ok {
		// "Only IPs last seen after this date": from the next day on.
		p.filter.LastSeenFrom = d.AddDate(0, 0, 1).Unix()
		p.filter.HasLastSeen = true
	}
	p.limit = q.integer(paramLimit, 1, MaxRowLimit, DefaultRowLimit)
	return p, q.errs
}
