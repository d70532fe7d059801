package enrich

import (
	"bytes"
	_ "embed"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/netintel/netintel/ingest"
)

//go:embed rules.yaml
var defaultRules []byte

// Version precisions of an asset.
const (
	PrecisionExact = "exact"
	PrecisionBand  = "band"
)

// Rules is a compiled fingerprint rule set.
type Rules struct {
	rules []*rule
}

type rulesFile struct {
	Version int        `yaml:"version"`
	Rules   []ruleSpec `yaml:"rules"`
}

type ruleSpec struct {
	ID             string        `yaml:"id"`
	Vendor         string        `yaml:"vendor"`
	Product        string        `yaml:"product"`
	CPE            []string      `yaml:"cpe"`
	ProtocolFamily string        `yaml:"protocol_family"`
	Class          string        `yaml:"class"`
	Match          []condSpec    `yaml:"match"`
	Versions       []versionSpec `yaml:"versions"`
}

type condSpec struct {
	Header     string   `yaml:"header"`
	Value      string   `yaml:"value"`
	Cookie     string   `yaml:"cookie"`
	Title      string   `yaml:"title"`
	Body       string   `yaml:"body"`
	BodyPath   string   `yaml:"body_path"`
	Status     int      `yaml:"status"`
	TLSSubject string   `yaml:"tls_subject"`
	TLSIssuer  string   `yaml:"tls_issuer"`
	Banner     string   `yaml:"banner"`
	Favicon    []string `yaml:"favicon"`
	Flow       string   `yaml:"flow"`
	Port       []int    `yaml:"port"`
	Transport  string   `yaml:"transport"`
}

type versionSpec struct {
	From      string            `yaml:"from"`
	Regex     string            `yaml:"regex"`
	Format    string            `yaml:"format"`
	Precision string            `yaml:"precision"`
	Map       map[string]string `yaml:"map"`
	Dates     []dateRow         `yaml:"dates"`
}

type dateRow struct {
	From string `yaml:"from"`
	To   string `yaml:"to"`
	Band string `yaml:"band"`
}

type rule struct {
	ruleSpec
	conds    []cond
	versions []versionRule
}

type cond struct {
	spec                                               condSpec
	value, cookie, title, body, tlsSub, tlsIss, banner *pattern
}

type versionRule struct {
	spec  versionSpec
	re    *pattern
	dates []compiledDate
}

type compiledDate struct {
	from, to time.Time
	band     string
}

// DefaultRules returns the built-in rule set.
func DefaultRules() (*Rules, error) { return ParseRules(defaultRules, "built-in rules") }

// LoadRules reads a rules file; an empty path means the built-in rules.
func LoadRules(path string) (*Rules, error) {
	if path == "" {
		return DefaultRules()
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	return ParseRules(b, path)
}

func compileRe(field, s string, errs *[]error) *regexp.Regexp {
	if s == "" {
		return nil
	}
	re, err := regexp.Compile("(?i)" + s)
	if err != nil {
		*errs = append(*errs, fmt.Errorf("%s: %w", field, err))
	}
	return re
}

// ParseRules decodes (strictly) and compiles a rules document; every
// problem is reported with the rule's position.
func ParseRules(b []byte, name string) (*Rules, error) {
	var f rulesFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("%s: version: want 1, got %d", name, f.Version)
	}
	var errs []error
	rs := &Rules{}
	ids := map[string]bool{}
	for i, spec := range f.Rules {
		p := fmt.Sprintf("%s: rules[%d]", name, i)
		r := &rule{ruleSpec: spec}
		if spec.ID == "" || ids[spec.ID] {
			errs = append(errs, fmt.Errorf("%s.id: missing or duplicate %q", p, spec.ID))
		}
		ids[spec.ID] = true
		if spec.Vendor == "" || spec.Product == "" || spec.ProtocolFamily == "" {
			errs = append(errs, fmt.Errorf("%s: vendor, product and protocol_family are required", p))
		}
		if spec.Class != "" && !slices.Contains(ingest.RangeKinds, spec.Class) {
			errs = append(errs, fmt.Errorf("%s.class: unknown class %q", p, spec.Class))
		}
		if len(spec.Match) == 0 {
			errs = append(errs, fmt.Errorf("%s.match: at least one condition", p))
		}
		for j, c := range spec.Match {
			cp := fmt.Sprintf("%s.match[%d]", p, j)
			cc := cond{spec: c,
				value: compilePattern(cp+".value", c.Value, &errs), cookie: compilePattern(cp+".cookie", c.Cookie, &errs),
				title: compilePattern(cp+".title", c.Title, &errs), body: compilePattern(cp+".body", c.Body, &errs),
				tlsSub: compilePattern(cp+".tls_subject", c.TLSSubject, &errs), tlsIss: compilePattern(cp+".tls_issuer", c.TLSIssuer, &errs),
				banner: compilePattern(cp+".banner", c.Banner, &errs)}
			if c.Value != "" && c.Header == "" {
				errs = append(errs, fmt.Errorf("%s.value: needs header", cp))
			}
			if c.Header == "" && c.Cookie == "" && c.Title == "" && c.Body == "" && c.TLSSubject == "" && c.TLSIssuer == "" &&
				c.Banner == "" && len(c.Favicon) == 0 && c.Flow == "" {
				errs = append(errs, fmt.Errorf("%s: empty condition matches everything", cp))
			}
			r.conds = append(r.conds, cc)
		}
		for j, v := range spec.Versions {
			vp := fmt.Sprintf("%s.versions[%d]", p, j)
			vr := versionRule{spec: v, re: compilePattern(vp+".regex", v.Regex, &errs)}
			if v.Precision != PrecisionExact && v.Precision != PrecisionBand {
				errs = append(errs, fmt.Errorf("%s.precision: must be exact or band, got %q", vp, v.Precision))
			}
			if !(v.From == "body" || v.From == "banner" || v.From == "title" || v.From == "tls_subject" ||
				strings.HasPrefix(v.From, "header:") || strings.HasPrefix(v.From, "body:")) {
				errs = append(errs, fmt.Errorf("%s.from: must be header:NAME, body, body:/path, banner, title or tls_subject, got %q", vp, v.From))
			}
			if v.Regex == "" && len(v.Dates) == 0 {
				errs = append(errs, fmt.Errorf("%s: needs regex or dates", vp))
			}
			for k, d := range v.Dates {
				from, err1 := time.Parse(time.DateOnly, d.From)
				to, err2 := time.Parse(time.DateOnly, d.To)
				if err1 != nil || err2 != nil || !from.Before(to) || d.Band == "" {
					errs = append(errs, fmt.Errorf("%s.dates[%d]: want from < to (YYYY-MM-DD) and a band", vp, k))
				}
				vr.dates = append(vr.dates, compiledDate{from, to, d.Band})
			}
			r.versions = append(r.versions, vr)
		}
		rs.rules = append(rs.rules, r)
	}
	if len(errs) > 0 {
		return nil, joinErrs(errs)
	}
	return rs, nil
}

// Fingerprint is what a rule concluded about a service.
type Fingerprint struct {
	RuleID           string   `json:"rule,omitempty"`
	Vendor           string   `json:"vendor,omitempty"`
	Product          string   `json:"product,omitempty"`
	CPE              []string `json:"cpe,omitempty"`
	ProtocolFamily   string   `json:"protocol_family,omitempty"`
	Class            string   `json:"class,omitempty"`
	ExactVersion     string   `json:"exact_version,omitempty"`
	VersionBand      string   `json:"version_band,omitempty"`
	VersionPrecision string   `json:"version_precision,omitempty"`
}

// evidence is the view of an observation the conditions read, for one
// Match: the joined body snippets, which several rules read, are built
// once.
type evidence struct {
	svc    *ingest.Service
	flow   *ingest.Flow
	bodies *string // every snippet joined, once built
}

// noHTTP stands for the HTTP evidence of a service that has none; it is
// only read.
var noHTTP ingest.HTTPEvidence

func (e *evidence) http() *ingest.HTTPEvidence {
	if e.svc != nil && e.svc.HTTP != nil {
		return e.svc.HTTP
	}
	return &noHTTP
}

func (e *evidence) header(name string) (string, bool) {
	for k, v := range e.http().Headers {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// body returns the snippet of path, or every snippet joined when path is "".
func (e *evidence) body(path string) string {
	h := e.http()
	if path != "" {
		return h.Bodies[path]
	}
	if e.bodies != nil {
		return *e.bodies
	}
	keys := make([]string, 0, len(h.Bodies))
	for k := range h.Bodies {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(h.Bodies[k])
		b.WriteByte('\n')
	}
	joined := b.String()
	e.bodies = &joined
	return joined
}

func (c *cond) matches(e *evidence) bool {
	s := &c.spec
	if s.Flow != "" && (e.flow == nil || !strings.EqualFold(e.flow.Protocol, s.Flow)) {
		return false
	}
	if s.Flow == "" && e.svc == nil {
		return false
	}
	port, transport := 0, ""
	if e.svc != nil {
		port, transport = e.svc.Port, e.svc.Transport
	} else if e.flow != nil {
		port, transport = e.flow.Port, e.flow.Transport
	}
	if len(s.Port) > 0 && !slices.Contains(s.Port, port) {
		return false
	}
	if s.Transport != "" && !strings.EqualFold(s.Transport, transport) {
		return false
	}
	h := e.http()
	if s.Status != 0 && h.Status != s.Status {
		return false
	}
	if s.Header != "" {
		v, ok := e.header(s.Header)
		if !ok || (c.value != nil && !c.value.MatchString(v)) {
			return false
		}
	}
	if c.cookie != nil && !slices.ContainsFunc(h.Cookies, c.cookie.MatchString) {
		return false
	}
	if c.title != nil && !c.title.MatchString(h.Title) {
		return false
	}
	if c.body != nil && !c.body.MatchString(e.body(s.BodyPath)) {
		return false
	}
	var tls ingest.TLSEvidence
	var banner string
	if e.svc != nil {
		banner = e.svc.Banner
		if e.svc.TLS != nil {
			tls = *e.svc.TLS
		}
	}
	if c.tlsSub != nil && !c.tlsSub.MatchString(tls.Subject) {
		return false
	}
	if c.tlsIss != nil && !c.tlsIss.MatchString(tls.Issuer) {
		return false
	}
	if c.banner != nil && !c.banner.MatchString(banner) {
		return false
	}
	if len(s.Favicon) > 0 && !slices.Contains(s.Favicon, h.FaviconHash) {
		return false
	}
	return true
}

// matches reports whether any of r's conditions holds.
func (r *rule) matches(e *evidence) bool {
	for i := range r.conds {
		if r.conds[i].matches(e) {
			return true
		}
	}
	return false
}

// Match returns the fingerprint of the first rule matching a service or
// flow observation, and false when none does.
func (rs *Rules) Match(svc *ingest.Service, flow *ingest.Flow) (Fingerprint, bool) {
	e := &evidence{svc: svc, flow: flow}
	for _, r := range rs.rules {
		if !r.matches(e) {
			continue
		}
		fp := Fingerprint{RuleID: r.ID, Vendor: r.Vendor, Product: r.Product, CPE: r.CPE, ProtocolFamily: r.ProtocolFamily, Class: r.Class}
		for _, v := range r.versions {
			if val, ok := v.extract(e); ok {
				if v.spec.Precision == PrecisionExact {
					fp.ExactVersion, fp.VersionBand = val, minorBand(val)
				} else {
					fp.VersionBand = val
				}
				fp.VersionPrecision = v.spec.Precision
				break
			}
		}
		return fp, true
	}
	return Fingerprint{}, false
}

func (v *versionRule) extract(e *evidence) (string, bool) {
	var src string
	switch f := v.spec.From; {
	case strings.HasPrefix(f, "header:"):
		src, _ = e.header(strings.TrimPrefix(f, "header:"))
	case f == "body":
		src = e.body("")
	case strings.HasPrefix(f, "body:"):
		src = e.body(strings.TrimPrefix(f, "body:"))
	case f == "banner" && e.svc != nil:
		src = e.svc.Banner
	case f == "title":
		src = e.http().Title
	case f == "tls_subject" && e.svc != nil && e.svc.TLS != nil:
		src = e.svc.TLS.Subject
	}
	if src == "" {
		return "", false
	}
	val := src
	if v.re != nil {
		m := v.re.FindStringSubmatch(src)
		if m == nil {
			return "", false
		}
		format := v.spec.Format
		if format == "" {
			format = "{1}"
		}
		if len(m) == 1 {
			m = append(m, m[0])
		}
		for i := len(m) - 1; i >= 1; i-- {
			format = strings.ReplaceAll(format, placeholder(i), m[i])
		}
		val = format
	}
	if v.spec.Map != nil {
		mapped, ok := v.spec.Map[strings.ToLower(val)]
		if !ok {
			return "", false
		}
		val = mapped
	}
	if len(v.dates) > 0 {
		t, ok := parseLooseDate(val)
		if !ok {
			return "", false
		}
		for _, d := range v.dates {
			if !t.Before(d.from) && t.Before(d.to) {
				return d.band, true
			}
		}
		return "", false
	}
	return val, val != ""
}

// placeholders are the {N} of a version format, for the common N.
var placeholders = [...]string{"{0}", "{1}", "{2}", "{3}", "{4}", "{5}", "{6}", "{7}", "{8}", "{9}"}

func placeholder(i int) string {
	if i < len(placeholders) {
		return placeholders[i]
	}
	return fmt.Sprintf("{%d}", i)
}

func parseLooseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := http.ParseTime(s); err == nil {
		return t, true
	}
	for _, layout := range []string{time.RFC3339, time.DateOnly, time.DateTime} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
