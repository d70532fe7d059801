// Package wappalyzer translates Wappalyzer's technology fingerprints, as
// ProjectDiscovery's wappalyzergo ships them (fingerprints_data.json; the
// excerpt kept under data/ with its licences), into netintel fingerprint
// rules (docs/rules.md, "Wappalyzer"). Only technologies of the scope
// table (scope.go) become rules, and only their tells that are distinctive
// enough to name a vendor alone. The generated file is
// enrich/rules/65-wappalyzer.yaml; TestGenerate_UpToDate fails when
// regenerating it gives anything else.
package wappalyzer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/netintel/netintel/enrich/internal/genrule"
)

// Commit is the wappalyzergo commit whose fingerprints_data.json the
// excerpt under data/ was cut from: the last weekly update (2023-01-22)
// before Wappalyzer's technologies went from MIT to GPL-3.0 (2023-01-25).
const Commit = "3957725c857d9d2bc74f939d1c1a4d54bfe5435f"

// SourceURL is where the data file of the commit is published.
const SourceURL = "https://github.com/projectdiscovery/wappalyzergo/blob/" + Commit + "/fingerprints_data.json"

// technology is one entry of fingerprints_data.json. Patterns are
// Wappalyzer's: a regular expression, then `\;version:\1` and
// `\;confidence:N` tags.
type technology struct {
	Cookies   map[string]string     `json:"cookies"`
	Headers   map[string]string     `json:"headers"`
	HTML      []string              `json:"html"`
	Script    []string              `json:"script"`
	ScriptSrc []string              `json:"scriptSrc"`
	Scripts   []string              `json:"scripts"`
	Meta      map[string]stringList `json:"meta"`
	JS        json.RawMessage       `json:"js"`
	DOM       json.RawMessage       `json:"dom"`
	CSS       json.RawMessage       `json:"css"`
	Implies   stringList            `json:"implies"`
	CPE       string                `json:"cpe"`
}

// stringList reads a JSON string or list of strings.
type stringList []string

func (s *stringList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("neither a string nor a list of strings: %w", err)
	}
	*s = many
	return nil
}

// Stats counts what was translated and why the rest was not.
type Stats struct {
	Technologies, Rules, Tells, Versions int
	// Skipped counts technologies not translated, by reason.
	Skipped map[string]int
	// SkippedTells counts tells of translated technologies left out, by
	// reason (weak alone, needs a browser, ...).
	SkippedTells map[string]int
}

// Generate reads a fingerprints_data.json ({"apps": {name: technology}}
// or {name: technology}) and returns the rules file and what was
// translated.
func Generate(data []byte) ([]byte, Stats, error) {
	st := Stats{Skipped: map[string]int{}, SkippedTells: map[string]int{}}
	var wrapped struct {
		Apps map[string]technology `json:"apps"`
	}
	if err := json.Unmarshal(data, &wrapped); err != nil {
		return nil, st, fmt.Errorf("read fingerprints: %w", err)
	}
	techs := wrapped.Apps
	if techs == nil {
		if err := json.Unmarshal(data, &techs); err != nil {
			return nil, st, fmt.Errorf("read fingerprints: %w", err)
		}
	}
	names := make([]string, 0, len(techs))
	for n := range techs {
		names = append(names, n)
	}
	sort.Strings(names)
	var rules []rule
	for _, n := range names {
		st.Technologies++
		t := techs[n]
		r, why := translate(n, &t, &st)
		if why != "" {
			st.Skipped[why]++
			continue
		}
		rules = append(rules, r)
	}
	st.Rules = len(rules)
	return render(rules, st), st, nil
}

// rule is one generated rule.
type rule struct {
	ID, Vendor, Product, Name, CPE string
	Tells                          []leaf
	Versions                       []version
}

// leaf is one tell: a field and its matcher, optionally on one path.
type leaf struct{ Field, Value string }

type version struct{ From, Regex string }

// pattern is a Wappalyzer pattern split into its expression and tags.
type pattern struct {
	re         string
	version    string // the tag's template, `\1` ...
	confidence int
}

func parsePattern(s string) (pattern, error) {
	parts := strings.Split(s, `\;`)
	p := pattern{re: parts[0], confidence: 100}
	for _, tag := range parts[1:] {
		k, v, _ := strings.Cut(tag, ":")
		switch k {
		case "version":
			p.version = v
		case "confidence":
			n, err := strconv.Atoi(v)
			if err != nil {
				return p, fmt.Errorf("confidence %q: %w", v, err)
			}
			p.confidence = n
		}
	}
	if _, err := regexp.Compile("(?i)" + p.re); err != nil {
		return p, fmt.Errorf("expression %q: %w", p.re, err)
	}
	return p, nil
}

// translate turns one technology into a rule, or says why it cannot.
func translate(name string, t *technology, st *Stats) (rule, string) {
	s, ok := scopeOf(name)
	if !ok {
		return rule{}, "technology not in scope"
	}
	r := rule{ID: "wappalyzer-" + slug(name), Vendor: s.vendor, Product: s.product, Name: name, CPE: t.CPE}
	add := func(field string, raw string, wrap func(string) string, distinctive func(pattern) bool) {
		p, err := parsePattern(raw)
		if err != nil {
			st.SkippedTells["pattern that does not compile"]++
			return
		}
		if p.confidence < 100 {
			st.SkippedTells["tell of partial confidence"]++
			return
		}
		if !distinctive(p) {
			st.SkippedTells["weak tell alone (too short or generic)"]++
			return
		}
		re := p.re
		if wrap != nil {
			re = wrap(re)
		}
		r.Tells = append(r.Tells, leaf{field, re})
		if v, ok := versionRegex(re, p.version); ok {
			r.Versions = append(r.Versions, version{field, v})
		}
	}
	for _, k := range sortedKeys(t.Headers) {
		h := strings.ToLower(k)
		if t.Headers[k] == "" {
			if distinctiveHeaderName(h) {
				r.Tells = append(r.Tells, leaf{"header." + h, ""})
			} else {
				st.SkippedTells["weak tell alone (too short or generic)"]++
			}
			continue
		}
		add("header."+h, t.Headers[k], nil, strongPattern)
	}
	for _, k := range sortedKeys(t.Cookies) {
		c := strings.ToLower(k)
		if t.Cookies[k] == "" {
			if distinctiveCookie(c) {
				r.Tells = append(r.Tells, leaf{"cookie", "^" + regexp.QuoteMeta(c) + "$"})
			} else {
				st.SkippedTells["weak tell alone (too short or generic)"]++
			}
			continue
		}
		if !distinctiveCookie(c) {
			st.SkippedTells["weak tell alone (too short or generic)"]++
			continue
		}
		add("cookie."+c, t.Cookies[k], nil, func(pattern) bool { return true })
	}
	for _, h := range t.HTML {
		add("body", h, nil, strongPattern)
	}
	// A script's source or text is in the body of the page that loads it.
	for _, list := range [][]string{t.ScriptSrc, t.Scripts, t.Script} {
		for _, h := range list {
			add("body", h, unanchor, strongPattern)
		}
	}
	for _, k := range sortedKeys(t.Meta) {
		for _, m := range t.Meta[k] {
			add("body", m, metaTag(k), strongPattern)
		}
	}
	for _, raw := range []json.RawMessage{t.JS, t.DOM, t.CSS} {
		if len(raw) > 0 && string(raw) != "null" {
			st.SkippedTells["js, dom or css (needs a browser)"]++
		}
	}
	if len(r.Tells) == 0 {
		return rule{}, "no distinctive tell"
	}
	st.Tells += len(r.Tells)
	st.Versions += len(r.Versions)
	return r, ""
}

// versionRegex gives the expression whose first group is the version, for
// a `\;version:\N` tag that is a plain group reference.
func versionRegex(re, tag string) (string, bool) {
	m := regexp.MustCompile(`^\\(\d)$`).FindStringSubmatch(tag)
	if m == nil {
		return "", false
	}
	n, _ := strconv.Atoi(m[1])
	c, err := regexp.Compile(re)
	if err != nil || c.NumSubexp() < n || n != 1 {
		return "", false
	}
	return re, true
}

// unanchor drops the anchors of an expression written against a script
// URL alone, so it can be looked for inside a page.
func unanchor(re string) string {
	return strings.TrimSuffix(strings.TrimPrefix(re, "^"), "$")
}

// metaTag looks for the expression in the content of the meta tag name.
func metaTag(name string) func(string) string {
	return func(re string) string {
		return `<meta[^>]+name=["']?` + regexp.QuoteMeta(name) + `["']?[^>]+content=["']?` + strings.TrimPrefix(unanchor(re), "^")
	}
}

// strongPattern reports whether an expression is distinctive enough to
// name a vendor alone: a literal run of 6 or more characters, or a whole
// value (anchored at both ends) of 5 or more literal characters.
func strongPattern(p pattern) bool {
	// An escaped punctuation character (`\.`, `\/`) is a literal character
	// of the run; `\d` and the like are not.
	lits := reMeta.Split(reEscaped.ReplaceAllString(p.re, "x"), -1)
	best, total := 0, 0
	for _, l := range lits {
		best = max(best, len(l))
		total += len(l)
	}
	if strings.Contains(p.re, "|") {
		// An alternative may be the short one: only a run in every
		// alternative counts, which this rough reading cannot tell.
		return false
	}
	return best >= 6 || (strings.HasPrefix(p.re, "^") && strings.HasSuffix(p.re, "$") && total >= 5)
}

var (
	reMeta    = regexp.MustCompile(`\\[A-Za-z0-9]|[\[\](){}.*+?^$|\\]`)
	reEscaped = regexp.MustCompile(`\\[^A-Za-z0-9]`)
)

// genericCookies are cookie names many products set.
var genericCookies = []string{"session", "sessionid", "token", "userid", "username", "language", "locale", "login", "remember", "csrftoken"}

// distinctiveCookie reports whether a cookie's name alone may name a
// vendor: 5 characters or more and not a generic name.
func distinctiveCookie(name string) bool {
	return len(name) >= 5 && !slices.Contains(genericCookies, name)
}

// commonHeaders are headers whose mere presence says nothing.
var commonHeaders = []string{"server", "x-powered-by", "set-cookie", "location", "content-type", "content-security-policy", "strict-transport-security", "x-frame-options", "via", "x-cache", "www-authenticate", "x-generator"}

// distinctiveHeaderName reports whether a header's presence alone may
// name a vendor: a product's own header (6 characters or more, not a
// common one).
func distinctiveHeaderName(h string) bool {
	return len(h) >= 6 && !slices.Contains(commonHeaders, h)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

func slug(name string) string {
	return strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(name), "-"), "-")
}

// render writes the rules as a rules file of docs/rules.md.
func render(rules []rule, st Stats) []byte {
	var b bytes.Buffer
	b.WriteString("# GENERATED by enrich/wappalyzer (go test ./enrich/wappalyzer -run TestGenerate_UpToDate -update); do not edit.\n")
	fmt.Fprintf(&b, "# Source: Wappalyzer's technologies (MIT until 2023-01-25) as ProjectDiscovery wappalyzergo (MIT) ships them, at %s; the excerpt in enrich/wappalyzer/data/.\n", Commit)
	fmt.Fprintf(&b, "# %d technologies read, %d rules, %d tells, %d version patterns; skipped:%s\n# tells left out:%s\n",
		st.Technologies, st.Rules, st.Tells, st.Versions, genrule.Counts(st.Skipped), genrule.Counts(st.SkippedTells))
	b.WriteString("version: 2\nrules:\n")
	for _, r := range rules {
		any := &yaml.Node{Kind: yaml.SequenceNode}
		for _, l := range r.Tells {
			any.Content = append(any.Content, &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle,
				Content: []*yaml.Node{genrule.Key(l.Field), genrule.Str(l.Value)}})
		}
		match := any.Content[0]
		if len(any.Content) > 1 {
			match = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{genrule.Key("any"), any}}
		}
		g := genrule.Rule{ID: r.ID, Vendor: r.Vendor, Product: r.Product, CPE: r.CPE,
			Sources: []string{SourceURL},
			Notes:   fmt.Sprintf("generated by enrich/wappalyzer from technology %q of wappalyzergo %s", r.Name, Commit[:12]),
			Match:   match}
		for _, v := range r.Versions {
			g.Versions = append(g.Versions, [][2]string{{"from", v.From}, {"regex", v.Regex}, {"precision", "exact"}})
		}
		genrule.Write(&b, g)
	}
	if len(rules) == 0 {
		b.Truncate(b.Len() - len("rules:\n"))
		b.WriteString("rules: []\n")
	}
	return b.Bytes()
}
