// Package nuclei translates ProjectDiscovery nuclei-templates' detection
// templates (MIT; the selected files are kept under templates/) into
// netintel fingerprint rules (docs/rules.md, "nuclei templates"). The
// generated file is enrich/rules/60-nuclei.yaml; TestGenerate_UpToDate
// fails when regenerating it gives anything else.
package nuclei

import (
	"bytes"
	"fmt"
	"io/fs"

	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/netintel/netintel/enrich/internal/genrule"
)

// Commit is the nuclei-templates commit the files under templates/ were
// taken from.
const Commit = "159879a59b662f102c84aab2d687cb66815c1e57"

// SourceURL is where a template of the commit is published.
func SourceURL(p string) string {
	return "https://github.com/projectdiscovery/nuclei-templates/blob/" + Commit + "/" + p
}

type template struct {
	ID   string `yaml:"id"`
	Info struct {
		Name           string         `yaml:"name"`
		Metadata       map[string]any `yaml:"metadata"`
		Classification struct {
			CPE string `yaml:"cpe"`
		} `yaml:"classification"`
	} `yaml:"info"`
	HTTP     []request `yaml:"http"`
	Requests []request `yaml:"requests"`
}

type request struct {
	Method     string      `yaml:"method"`
	Path       []string    `yaml:"path"`
	Raw        []string    `yaml:"raw"`
	Body       string      `yaml:"body"`
	Matchers   []matcher   `yaml:"matchers"`
	MatchCond  string      `yaml:"matchers-condition"`
	Extractors []extractor `yaml:"extractors"`
	ReqCond    bool        `yaml:"req-condition"`
}

type matcher struct {
	Type      string   `yaml:"type"`
	Name      string   `yaml:"name"`
	Part      string   `yaml:"part"`
	Words     []string `yaml:"words"`
	Regex     []string `yaml:"regex"`
	Status    []int    `yaml:"status"`
	DSL       []string `yaml:"dsl"`
	Condition string   `yaml:"condition"`
	Negative  bool     `yaml:"negative"`
	Hash      []string `yaml:"hash"`
	Internal  bool     `yaml:"internal"`
}

type extractor struct {
	Type     string   `yaml:"type"`
	Name     string   `yaml:"name"`
	Part     string   `yaml:"part"`
	Regex    []string `yaml:"regex"`
	Group    int      `yaml:"group"`
	Internal bool     `yaml:"internal"`
}

// Stats counts what was translated and why the rest was not.
type Stats struct {
	Templates, Rules, Versions int
	// Skipped counts templates (or favicon-detect entries) not
	// translated, by reason.
	Skipped map[string]int
	// SkippedMatchers counts matchers left out of a translated template.
	SkippedMatchers map[string]int
}

// Generate reads every .yaml template under dir of fsys and returns the
// rules file and what was translated.
func Generate(fsys fs.FS, dir string) ([]byte, Stats, error) {
	st := Stats{Skipped: map[string]int{}, SkippedMatchers: map[string]int{}}
	var files []string
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, st, fmt.Errorf("read templates: %w", err)
	}
	sort.Strings(files)
	var rules []rule
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, st, fmt.Errorf("read templates: %w", err)
		}
		var t template
		if err := yaml.Unmarshal(b, &t); err != nil {
			return nil, st, fmt.Errorf("%s: %w", f, err)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(f, dir), "/")
		st.Templates++
		rs, reason := translate(&t, rel, &st)
		if reason != "" {
			st.Skipped[reason]++
			continue
		}
		rules = append(rules, rs...)
	}
	st.Rules = len(rules)
	return render(rules, st), st, nil
}

// rule is one generated rule.
type rule struct {
	ID, Vendor, Product, Source, Notes string
	CPE                                string
	Match                              node
	Versions                           []version
}

type version struct{ From, Path, Regex, Format string }

// node is a condition of docs/rules.md being built.
type node struct {
	kind  string // leaf, all, any, not
	leaf  []kv
	kids  []node
	loose bool // holds without reading evidence (status only)
}

type kv struct {
	k string
	v any
}

func leaf(kvs ...kv) node { return node{kind: "leaf", leaf: kvs} }

// translate turns one template into rules, or says why it cannot.
func translate(t *template, rel string, st *Stats) ([]rule, string) {
	reqs := t.HTTP
	if len(reqs) == 0 {
		reqs = t.Requests
	}
	if len(reqs) == 0 {
		return nil, "no http request"
	}
	if tables[t.ID] {
		return tableRules(t, rel, st), ""
	}
	v, ok := vendorOf(t, rel)
	if !ok {
		return nil, "vendor not in scope"
	}
	if why, excluded := excluded[t.ID]; excluded {
		return nil, "excluded: " + why
	}
	if len(reqs) > 1 {
		return nil, "several requests"
	}
	r := reqs[0]
	if r.ReqCond {
		return nil, "req-condition"
	}
	method, paths, why := requestPaths(r)
	if why != "" {
		return nil, why
	}
	var alts []node
	for _, p := range paths {
		c, why := matchers(r, p, method, st)
		if why != "" {
			return nil, why
		}
		alts = append(alts, c)
	}
	match := alts[0]
	if len(alts) > 1 {
		match = node{kind: "any", kids: alts}
	}
	if !strong(match) {
		return nil, "too loose: no literal of 6 or more characters, or hash, that must be present"
	}
	ru := rule{ID: "nuclei-" + t.ID, Vendor: v.vendor, Product: productOf(t, v), Source: SourceURL(rel), CPE: t.Info.Classification.CPE, Match: match,
		Notes: "generated by enrich/nuclei from " + rel + " at nuclei-templates " + Commit[:12]}
	for _, e := range r.Extractors {
		ru.Versions = append(ru.Versions, versionsOf(e, t.ID, paths)...)
	}
	st.Versions += len(ru.Versions)
	return []rule{ru}, ""
}

var rawLine = regexp.MustCompile(`^([A-Z]+) (\S+) HTTP/`)

// requestPaths reads the request's method and the paths it asks.
func requestPaths(r request) (string, []string, string) {
	method := strings.ToUpper(r.Method)
	var paths []string
	for _, p := range r.Path {
		p = strings.TrimPrefix(p, "{{BaseURL}}")
		if p == "" {
			p = "/"
		}
		if strings.Contains(p, "{{") {
			return "", nil, "path with variables"
		}
		paths = append(paths, p)
	}
	for _, raw := range r.Raw {
		m := rawLine.FindStringSubmatch(strings.TrimSpace(raw))
		if m == nil || strings.Contains(m[2], "{{") {
			return "", nil, "raw request not a plain line"
		}
		method = m[1]
		paths = append(paths, m[2])
	}
	if len(paths) == 0 {
		return "", nil, "no path"
	}
	if method == "" {
		method = "GET"
	}
	return method, paths, ""
}

// matchers translates the request's matchers for one path.
func matchers(r request, p, method string, st *Stats) (node, string) {
	and := r.MatchCond == "and"
	var kids []node
	var status []int
	for _, m := range r.Matchers {
		if m.Internal {
			continue
		}
		if m.Type == "status" {
			if m.Negative {
				return node{}, "negative status matcher"
			}
			if !and && len(r.Matchers) > 1 {
				st.SkippedMatchers["status alone as an alternative (too loose)"]++
				continue
			}
			status = append(status, m.Status...)
			continue
		}
		c, why := matcherNode(m)
		if why != "" {
			if and {
				return node{}, why
			}
			st.SkippedMatchers[why]++
			continue
		}
		if m.Negative {
			c = node{kind: "not", kids: []node{c}}
		}
		kids = append(kids, c)
	}
	if len(kids) == 0 {
		return node{}, "no translatable matcher"
	}
	var c node
	switch {
	case len(kids) == 1:
		c = kids[0]
	case and:
		c = node{kind: "all", kids: kids}
	default:
		c = node{kind: "any", kids: kids}
	}
	var base []kv
	if p != "/" {
		base = append(base, kv{"path", p})
	}
	if method != "GET" {
		base = append(base, kv{"method", method})
	}
	if len(status) > 0 {
		base = append(base, kv{"status", status})
	}
	return attach(c, base), ""
}

// attach adds the probe constraints to every positive leaf.
func attach(c node, base []kv) node {
	if len(base) == 0 {
		return c
	}
	switch c.kind {
	case "leaf":
		c.leaf = append(slices.Clone(base), c.leaf...)
	case "all", "any":
		kids := make([]node, len(c.kids))
		for i, k := range c.kids {
			kids[i] = attach(k, base)
		}
		c.kids = kids
	case "not":
		// A negative matcher is about the same response: the path (not
		// the status) narrows what it rules out.
		var nb []kv
		for _, b := range base {
			if b.k != "status" {
				nb = append(nb, b)
			}
		}
		c.kids = []node{attach(c.kids[0], nb)}
	}
	return c
}

// partFields maps nuclei's response parts to our fields.
func partFields(part string) ([]string, bool) {
	switch part {
	case "", "body":
		return []string{"body"}, true
	case "header", "all_headers":
		return []string{"headers"}, true
	case "all", "response", "raw":
		return []string{"headers", "body"}, true
	case "location":
		return []string{"header.location"}, true
	case "title":
		return []string{"title"}, true
	}
	return nil, false
}

func matcherNode(m matcher) (node, string) {
	switch m.Type {
	case "word", "regex":
		fields, ok := partFields(m.Part)
		if !ok {
			return node{}, "part " + m.Part
		}
		var pats []string
		if m.Type == "word" {
			for _, w := range m.Words {
				if strings.Contains(w, "{{") {
					return node{}, "word with variables"
				}
				pats = append(pats, regexp.QuoteMeta(w))
			}
		} else {
			for _, re := range m.Regex {
				if _, err := regexp.Compile("(?i)" + re); err != nil {
					return node{}, "regex that does not compile"
				}
				pats = append(pats, re)
			}
		}
		if len(pats) == 0 {
			return node{}, "empty matcher"
		}
		return fieldsNode(fields, pats, m.Condition == "and"), ""
	case "dsl":
		var ks []node
		for _, d := range m.DSL {
			c, why := parseDSL(d)
			if why != "" {
				return node{}, why
			}
			ks = append(ks, c)
		}
		if len(ks) == 1 {
			return ks[0], ""
		}
		if m.Condition == "and" {
			return node{kind: "all", kids: ks}, ""
		}
		return node{kind: "any", kids: ks}, ""
	case "favicon":
		var ks []node
		for _, h := range m.Hash {
			n, err := strconv.Atoi(h)
			if err != nil {
				return node{}, "favicon hash that is not mmh3"
			}
			ks = append(ks, leaf(kv{"body.mmh3", n}))
		}
		if len(ks) == 1 {
			return ks[0], ""
		}
		return node{kind: "any", kids: ks}, ""
	}
	return node{}, "matcher type " + m.Type
}

// strong reports whether c can hold only on evidence with a literal of
// 6 or more characters or a hash: every way it can hold needs one.
func strong(c node) bool {
	switch c.kind {
	case "leaf":
		for _, p := range c.leaf {
			switch p.k {
			case "body.mmh3":
				return true
			case "body", "headers", "title", "header.location":
				if s, ok := p.v.(string); ok && longestLiteral(s) >= 6 {
					return true
				}
			}
		}
		return false
	case "all":
		return slices.ContainsFunc(c.kids, strong)
	case "any":
		return len(c.kids) > 0 && !slices.ContainsFunc(c.kids, func(k node) bool { return !strong(k) })
	}
	return false
}

var reMeta = regexp.MustCompile(`\\.|[\[\](){}.*+?^$|]`)

// longestLiteral is a rough length of the longest run of plain
// characters of an expression whose alternatives all must have one.
func longestLiteral(re string) int {
	shortest := -1
	for _, alt := range splitTopAlternatives(re) {
		best := 0
		for _, run := range reMeta.Split(alt, -1) {
			best = max(best, len(run))
		}
		if shortest < 0 || best < shortest {
			shortest = best
		}
	}
	return max(shortest, 0)
}

func splitTopAlternatives(re string) []string {
	re = strings.TrimPrefix(re, "(?:")
	re = strings.TrimSuffix(re, ")")
	return strings.Split(re, ")|(?:")
}

// versionsOf translates a regex extractor into version entries, one a
// regex, when it reads the product's version: it is named for a version,
// or unnamed in a template whose id or the extractor's own expression
// says "version", or its template is one of versionTemplates. Other
// extractors (a model, a cookie, a copyright year, a library's version)
// are not versions of the product and are dropped.
func versionsOf(e extractor, id string, paths []string) []version {
	if e.Type != "regex" || len(e.Regex) == 0 || e.Group < 1 || e.Internal {
		return nil
	}
	named := strings.Contains(strings.ToLower(e.Name), "version")
	if !named && e.Name != "" {
		return nil
	}
	_, listed := versionTemplates[id]
	fields, ok := partFields(e.Part)
	if !ok || len(fields) != 1 {
		return nil
	}
	var out []version
	for _, re := range e.Regex {
		if !named && !listed && !strings.Contains(id, "version") && !strings.Contains(strings.ToLower(re), "version") {
			continue
		}
		if _, err := regexp.Compile(re); err != nil {
			continue
		}
		v := version{From: fields[0], Regex: re, Format: "{" + strconv.Itoa(e.Group) + "}"}
		if len(paths) == 1 && paths[0] != "/" {
			v.Path = paths[0]
		}
		out = append(out, v)
	}
	return out
}

// render writes the rules as a rules file of docs/rules.md.
func render(rules []rule, st Stats) []byte {
	var b bytes.Buffer
	b.WriteString("# GENERATED by enrich/nuclei (go test ./enrich/nuclei -run TestGenerate_UpToDate -update); do not edit.\n")
	fmt.Fprintf(&b, "# Source: ProjectDiscovery nuclei-templates (MIT) at %s, the templates under enrich/nuclei/templates/.\n", Commit)
	fmt.Fprintf(&b, "# %d templates read, %d rules, %d version extractors; skipped:", st.Templates, st.Rules, st.Versions)
	keys := make([]string, 0, len(st.Skipped))
	for k := range st.Skipped {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s (%d);", k, st.Skipped[k])
	}
	b.WriteString("\nversion: 2\nrules:\n")
	for _, r := range rules {
		g := genrule.Rule{ID: r.ID, Vendor: r.Vendor, Product: r.Product, CPE: r.CPE,
			Sources: []string{r.Source}, Notes: r.Notes, Match: yamlOf(r.Match)}
		for _, v := range r.Versions {
			kvs := [][2]string{{"from", v.From}}
			if v.Path != "" {
				kvs = append(kvs, [2]string{"path", v.Path})
			}
			g.Versions = append(g.Versions, append(kvs, [2]string{"regex", v.Regex}, [2]string{"format", v.Format}, [2]string{"precision", "exact"}))
		}
		genrule.Write(&b, g)
	}
	return b.Bytes()
}

func yamlOf(c node) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	switch c.kind {
	case "leaf":
		m.Style = yaml.FlowStyle
		for _, p := range c.leaf {
			var v *yaml.Node
			switch x := p.v.(type) {
			case string:
				v = genrule.Str(x)
			case int:
				v = genrule.Int(x)
			case []int:
				v = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
				for _, n := range x {
					v.Content = append(v.Content, genrule.Int(n))
				}
			}
			m.Content = append(m.Content, genrule.Key(p.k), v)
		}
	case "not":
		m.Content = append(m.Content, genrule.Key("not"), yamlOf(c.kids[0]))
	default:
		s := &yaml.Node{Kind: yaml.SequenceNode}
		for _, k := range c.kids {
			s.Content = append(s.Content, yamlOf(k))
		}
		m.Content = append(m.Content, genrule.Key(c.kind), s)
	}
	return m
}
