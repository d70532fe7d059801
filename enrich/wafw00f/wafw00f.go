// Package wafw00f translates the detection plugins of EnableSecurity's
// wafw00f (BSD-3-Clause; the plugins of edge products are kept, unchanged,
// under plugins/ with the licence) into netintel fingerprint rules
// (docs/rules.md, "wafw00f"). The plugins are small Python functions of
// one shape (`if self.matchContent(...): return True`, `if not
// self.matchCookie(...): return False`, schemas called from is_waf); that
// shape is read, anything else skips the plugin. The generated file is
// enrich/rules/66-wafw00f.yaml; TestGenerate_UpToDate fails when
// regenerating it gives anything else.
package wafw00f

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/netintel/netintel/enrich/internal/genrule"
)

// Commit is the wafw00f commit the plugins were taken from.
const Commit = "acf61041a632df15b9c65c3133c6c76bc8540ac5"

// SourceURL is where a plugin of the commit is published.
func SourceURL(file string) string {
	return "https://github.com/EnableSecurity/wafw00f/blob/" + Commit + "/wafw00f/plugins/" + file
}

// scope is a plugin of an edge product: the vendor as the hand-written
// rules spell it, and the product. Load balancers and WAFs of other
// makers (Kemp LoadMaster, Radware AppWall, Cisco's ACE XML Gateway) are
// not imported since round AK (2026-11-28): in front of a site they are
// the reverse proxies a held-out set takes as negatives, and none is a
// remote-access product.
type scope struct{ vendor, product string }

var scopes = map[string]scope{
	"barracuda":       {"Barracuda", "Barracuda WAF"},
	"f5bigipapm":      {"F5", "BIG-IP APM"},
	"f5bigipasm":      {"F5", "BIG-IP ASM"},
	"f5bigipltm":      {"F5", "BIG-IP LTM"},
	"f5firepass":      {"F5", "FirePass"},
	"f5trafficshield": {"F5", "TrafficShield"},
	"fortigate":       {"Fortinet", "FortiGate"},
	"fortiguard":      {"Fortinet", "FortiGate"},
	"fortiweb":        {"Fortinet", "FortiWeb"},
	"netscaler":       {"Citrix", "NetScaler"},
	"paloalto":        {"Palo Alto Networks", "PAN-OS"},
	"sonicwall":       {"SonicWall", "SonicOS"},
	"sophos":          {"Sophos", "UTM Web Protection"},
	"watchguard":      {"WatchGuard", "Firebox"},
}

// excluded are alternatives of in-scope plugins found to name a vendor
// for another product's page, each with the reason (docs/rules-sources.md).
var excluded = map[string]map[string]string{
	"sonicwall": {`<(title|h\d{1})>Web Site Blocked`: "the title of NETGEAR and SerComm routers' block pages too"},
}

// vendorWords are names that, with filler words, make a tell that only
// mentions a vendor ("Barracuda.Networks", "www.sophos.com"), which pages
// that are not the product say too.
var vendorWords = []string{"barracuda", "cisco", "f5", "bigip", "fortinet", "fortigate", "fortiweb", "fortiguard", "kemp", "citrix", "netscaler", "paloalto", "radware", "sonicwall", "dell", "sophos", "watchguard", "networks", "technologies", "systems", "software", "inc", "ltd", "corp", "www", "com", "net"}

// Stats counts what was translated and why the rest was not.
type Stats struct {
	Plugins, Rules int
	// Skipped counts plugins not translated, by reason.
	Skipped map[string]int
	// SkippedTells counts alternatives of translated plugins left out.
	SkippedTells map[string]int
}

// Generate reads every .py plugin under dir of fsys and returns the rules
// file and what was translated.
func Generate(fsys fs.FS, dir string) ([]byte, Stats, error) {
	st := Stats{Skipped: map[string]int{}, SkippedTells: map[string]int{}}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, st, fmt.Errorf("read plugins: %w", err)
	}
	var rules []rule
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".py") {
			continue
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, st, fmt.Errorf("read plugins: %w", err)
		}
		st.Plugins++
		r, why := translate(e.Name(), string(b), &st)
		if why != "" {
			st.Skipped[why]++
			continue
		}
		rules = append(rules, r)
	}
	sort.Slice(rules, func(i, j int) bool { return rules[i].ID < rules[j].ID })
	st.Rules = len(rules)
	return render(rules, st), st, nil
}

type rule struct {
	ID, Vendor, Product, Name, File string
	Match                           node
}

// node is a condition of docs/rules.md.
type node struct {
	kind string // leaf, all, any
	leaf [][2]string
	kids []node
	// status is a status code a leaf also asks for.
	status int
}

var (
	reName = regexp.MustCompile(`(?m)^NAME\s*=\s*['"](.+)['"]\s*$`)
	reDef  = regexp.MustCompile(`(?m)^def (\w+)\(self\):\s*$`)
	reCall = regexp.MustCompile(`^self\.(matchContent|matchHeader|matchCookie|matchStatus)\((.*)\)$`)
	reStr  = regexp.MustCompile(`^r?(?:'([^']*)'|"([^"]*)")$`)
)

// translate reads one plugin into a rule, or says why it cannot.
func translate(file, src string, st *Stats) (rule, string) {
	s, ok := scopes[strings.TrimSuffix(file, ".py")]
	if !ok {
		return rule{}, "plugin not in scope"
	}
	m := reName.FindStringSubmatch(src)
	if m == nil {
		return rule{}, "no NAME"
	}
	funcs := map[string][]string{}
	locs := reDef.FindAllStringSubmatchIndex(src, -1)
	for i, l := range locs {
		end := len(src)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		funcs[src[l[2]:l[3]]] = statements(src[l[1]:end])
	}
	c, why := function("is_waf", funcs, st, 0, excluded[strings.TrimSuffix(file, ".py")])
	if why != "" {
		return rule{}, why
	}
	if !strong(c) {
		return rule{}, "too loose: no literal of 6 or more characters that must be present"
	}
	return rule{ID: "wafw00f-" + strings.TrimSuffix(file, ".py"), Vendor: s.vendor, Product: s.product, Name: m[1], File: file, Match: c}, ""
}

// statements joins continued lines and drops comments and blank lines.
func statements(body string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(body, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if strings.HasSuffix(t, `\`) {
			cur.WriteString(strings.TrimSuffix(t, `\`) + " ")
			continue
		}
		cur.WriteString(t)
		out = append(out, cur.String())
		cur.Reset()
	}
	return out
}

// function reads a plugin function: either alternatives (`if X: return
// True` ... `return False`) or a conjunction (`if not X: return False`
// ... `return True`).
func function(name string, funcs map[string][]string, st *Stats, depth int, ex map[string]string) (node, string) {
	body, ok := funcs[name]
	if !ok || depth > 3 {
		return node{}, "calls an unknown function"
	}
	var anyOf, allOf []node
	for i := 0; i < len(body); i++ {
		stmt := body[i]
		switch {
		case strings.HasPrefix(stmt, "if ") && strings.HasSuffix(stmt, ":") && i+1 < len(body):
			cond := strings.TrimSuffix(strings.TrimPrefix(stmt, "if "), ":")
			ret := body[i+1]
			i++
			if neg, ok := strings.CutPrefix(cond, "not "); ok && ret == "return False" {
				c, why := condition(neg, funcs, st, depth, ex)
				if why != "" {
					return node{}, why
				}
				allOf = append(allOf, c)
				continue
			}
			if ret != "return True" {
				return node{}, "statement not read: " + stmt
			}
			c, why := condition(cond, funcs, st, depth, ex)
			if why != "" {
				st.SkippedTells[why]++
				continue
			}
			if c.kind == "leaf" && ex[c.leaf[0][1]] != "" {
				st.SkippedTells["excluded: "+ex[c.leaf[0][1]]]++
				continue
			}
			if !strong(c) {
				st.SkippedTells["weak alternative (short literal or only a vendor's name)"]++
				continue
			}
			anyOf = append(anyOf, c)
		case stmt == "return True" && i == len(body)-1 && len(anyOf) == 0 && len(allOf) > 0:
			return node{kind: "all", kids: allOf}, ""
		case stmt == "return False" && i == len(body)-1 && len(allOf) == 0:
			if len(anyOf) == 0 {
				return node{}, "no alternative strong enough"
			}
			if len(anyOf) == 1 {
				return anyOf[0], ""
			}
			return node{kind: "any", kids: anyOf}, ""
		default:
			return node{}, "statement not read: " + stmt
		}
	}
	return node{}, "function without a final return"
}

// condition reads `A and B ...` of calls.
func condition(cond string, funcs map[string][]string, st *Stats, depth int, ex map[string]string) (node, string) {
	var kids []node
	status := 0
	for _, part := range strings.Split(cond, " and ") {
		part = strings.TrimSpace(part)
		if m := regexp.MustCompile(`^(\w+)\(self\)$`).FindStringSubmatch(part); m != nil {
			c, why := function(m[1], funcs, st, depth+1, ex)
			if why != "" {
				return node{}, why
			}
			kids = append(kids, c)
			continue
		}
		m := reCall.FindStringSubmatch(part)
		if m == nil {
			return node{}, "condition not read: " + part
		}
		args := strings.TrimSpace(regexp.MustCompile(`,\s*attack\s*=\s*(True|False)\s*$`).ReplaceAllString(m[2], ""))
		switch m[1] {
		case "matchStatus":
			n, err := strconv.Atoi(args)
			if err != nil {
				return node{}, "status not a number"
			}
			status = n
		case "matchContent":
			re, ok := pyString(args)
			if !ok {
				return node{}, "argument not a string"
			}
			kids = append(kids, node{kind: "leaf", leaf: [][2]string{{"body", re}}})
		case "matchCookie":
			re, ok := pyString(args)
			if !ok {
				return node{}, "argument not a string"
			}
			kids = append(kids, node{kind: "leaf", leaf: [][2]string{{"header.set-cookie", re}}})
		case "matchHeader":
			inner := strings.TrimSuffix(strings.TrimPrefix(args, "("), ")")
			h, v, ok := strings.Cut(inner, ",")
			hn, ok1 := pyString(strings.TrimSpace(h))
			re, ok2 := pyString(strings.TrimSpace(v))
			if !ok || !ok1 || !ok2 {
				return node{}, "header argument not read"
			}
			kids = append(kids, node{kind: "leaf", leaf: [][2]string{{"header." + strings.ToLower(hn), re}}})
		}
	}
	for _, k := range kids {
		for _, l := range k.leaf {
			if _, err := regexp.Compile("(?i)" + l[1]); err != nil {
				return node{}, "expression that does not compile in RE2"
			}
		}
	}
	if len(kids) == 0 {
		return node{}, "status alone"
	}
	if status != 0 {
		// The status is of the same response: put it on every leaf.
		for i := range kids {
			if kids[i].kind == "leaf" {
				kids[i].status = status
			}
		}
	}
	if len(kids) == 1 {
		return kids[0], ""
	}
	return node{kind: "all", kids: kids}, ""
}

// pyString reads a Python string literal (raw or not; the plugins'
// escapes are regular-expression escapes either way).
func pyString(s string) (string, bool) {
	m := reStr.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	return m[1] + m[2], true
}

var reMeta = regexp.MustCompile(`\\[A-Za-z0-9]|[\[\](){}.*+?^$|=\\]`)
var nonLetter = regexp.MustCompile(`[^a-z]+`)

// strongLeaf reports whether an expression alone may name a vendor: a
// literal run of 6 or more characters, which is not only a vendor's name
// with filler words, in every top-level alternative. Character classes
// and repetition counts are not literals.
func strongLeaf(re string) bool {
	if alts := topAlternatives(re); len(alts) > 1 {
		return !slices.ContainsFunc(alts, func(a string) bool { return !strongLeaf(a) })
	}
	// A group of alternatives: every way of reading it must be strong.
	if loc := reAltGroup.FindStringSubmatchIndex(re); loc != nil {
		for _, alt := range strings.Split(re[loc[2]:loc[3]], "|") {
			if !strongLeaf(re[:loc[0]] + alt + re[loc[1]:]) {
				return false
			}
		}
		return true
	}
	re = reClass.ReplaceAllString(re, " ")
	best := 0
	// An escaped punctuation character (`\.`, `\/`, `\-`) is a literal
	// character of the run; `\d` and the like are not.
	for _, run := range reMeta.Split(reEscaped.ReplaceAllString(re, "x"), -1) {
		best = max(best, len(run))
	}
	if best < 6 {
		return false
	}
	rest := nonLetter.ReplaceAllString(strings.ToLower(reMeta.ReplaceAllString(re, " ")), " ")
	for _, w := range strings.Fields(rest) {
		if !slices.Contains(vendorWords, w) {
			return true
		}
	}
	return false
}

var reAltGroup = regexp.MustCompile(`\((?:\?:)?([^()\\]*\|[^()\\]*)\)`)

var reEscaped = regexp.MustCompile(`\\[^A-Za-z0-9]`)

var reClass = regexp.MustCompile(`\[(?:\\.|[^\]])*\]|\{[0-9,]*\}`)

// topAlternatives splits an expression at its top-level |.
func topAlternatives(re string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(re); i++ {
		switch re[i] {
		case '\\':
			i++
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '|':
			if depth == 0 {
				out = append(out, re[start:i])
				start = i + 1
			}
		}
	}
	return append(out, re[start:])
}

// strong reports whether every way c can hold needs a strong literal.
func strong(c node) bool {
	switch c.kind {
	case "leaf":
		return slices.ContainsFunc(c.leaf, func(kv [2]string) bool { return strongLeaf(kv[1]) })
	case "all":
		return slices.ContainsFunc(c.kids, strong)
	case "any":
		return len(c.kids) > 0 && !slices.ContainsFunc(c.kids, func(k node) bool { return !strong(k) })
	}
	return false
}

func render(rules []rule, st Stats) []byte {
	var b bytes.Buffer
	b.WriteString("# GENERATED by enrich/wafw00f (go test ./enrich/wafw00f -run TestGenerate_UpToDate -update); do not edit.\n")
	fmt.Fprintf(&b, "# Source: EnableSecurity wafw00f (BSD-3-Clause) at %s, the plugins under enrich/wafw00f/plugins/.\n", Commit)
	fmt.Fprintf(&b, "# %d plugins read, %d rules; skipped:%s\n# alternatives left out:%s\n", st.Plugins, st.Rules, genrule.Counts(st.Skipped), genrule.Counts(st.SkippedTells))
	b.WriteString("version: 2\nrules:\n")
	for _, r := range rules {
		genrule.Write(&b, genrule.Rule{ID: r.ID, Vendor: r.Vendor, Product: r.Product,
			Sources: []string{SourceURL(r.File)},
			Notes:   fmt.Sprintf("generated by enrich/wafw00f from plugins/%s (%s) at wafw00f %s", r.File, r.Name, Commit[:12]),
			Match:   yamlOf(r.Match)})
	}
	return b.Bytes()
}

func yamlOf(c node) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	if c.kind == "leaf" {
		m.Style = yaml.FlowStyle
		if c.status != 0 {
			m.Content = append(m.Content, genrule.Key("status"), genrule.Int(c.status))
		}
		for _, kv := range c.leaf {
			m.Content = append(m.Content, genrule.Key(kv[0]), genrule.Str(kv[1]))
		}
		return m
	}
	s := &yaml.Node{Kind: yaml.SequenceNode}
	for _, k := range c.kids {
		s.Content = append(s.Content, yamlOf(k))
	}
	m.Content = append(m.Content, genrule.Key(c.kind), s)
	return m
}
