package nuclei

import (
	"regexp"
	"strconv"
	"strings"
)

// parseDSL translates the part of nuclei's DSL that recorded evidence can
// answer: &&, ||, !, parentheses over status_code==N, contains(X, "s")
// (X body, header, all_headers, response, tolower of those),
// contains_any / contains_all, regex("re", X), and the favicon hash
// mmh3(base64_py(body)) == "N". Anything else is not translated.
func parseDSL(s string) (node, string) {
	p := &dslParser{s: s}
	c, ok := p.or()
	p.space()
	if !ok || p.i != len(p.s) {
		return node{}, "dsl beyond status, contains, regex and mmh3"
	}
	if c.loose {
		return node{}, "dsl on status alone"
	}
	return c, ""
}

type dslParser struct {
	s string
	i int
}

func (p *dslParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *dslParser) eat(tok string) bool {
	p.space()
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

func (p *dslParser) or() (node, bool) {
	var kids []node
	for {
		c, ok := p.and()
		if !ok {
			return node{}, false
		}
		kids = append(kids, c)
		if !p.eat("||") {
			break
		}
	}
	if len(kids) == 1 {
		return kids[0], true
	}
	// A status-only alternative would make the whole condition hold on
	// any such response: leave it out (the condition gets stricter).
	var keep []node
	for _, k := range kids {
		if !k.loose {
			keep = append(keep, k)
		}
	}
	if len(keep) == 0 {
		return node{loose: true}, true
	}
	if len(keep) == 1 {
		return keep[0], true
	}
	return node{kind: "any", kids: keep}, true
}

func (p *dslParser) and() (node, bool) {
	var kids []node
	var status []int
	for {
		c, st, ok := p.unary()
		if !ok {
			return node{}, false
		}
		if st != 0 {
			status = append(status, st)
		} else {
			kids = append(kids, c)
		}
		if !p.eat("&&") {
			break
		}
	}
	if len(kids) == 0 {
		return node{loose: true}, true
	}
	var c node
	if len(kids) == 1 {
		c = kids[0]
	} else {
		c = node{kind: "all", kids: kids}
	}
	if len(status) == 1 {
		c = attach(c, []kv{{"status", status}})
	} else if len(status) > 1 {
		return node{}, false
	}
	return c, true
}

var (
	statusRe = regexp.MustCompile(`^status_code\s*==\s*(\d{3})`)
	mmh3Re   = regexp.MustCompile(`^(?:"(-?\d+)"\s*==\s*mmh3\(base64_py\(body\)\)|mmh3\(base64_py\(body\)\)\s*==\s*"?(-?\d+)"?)`)
	funcRe   = regexp.MustCompile(`^(contains_any|contains_all|contains|regex)\(`)
)

// unary reads one atom; st is a status code when the atom is only that.
func (p *dslParser) unary() (node, int, bool) {
	p.space()
	if p.eat("!") {
		c, st, ok := p.unary()
		if !ok || st != 0 || c.loose {
			return node{}, 0, false
		}
		return node{kind: "not", kids: []node{c}}, 0, true
	}
	if p.eat("(") {
		c, ok := p.or()
		if !ok || !p.eat(")") {
			return node{}, 0, false
		}
		return c, 0, true
	}
	rest := p.s[p.i:]
	if m := statusRe.FindStringSubmatch(rest); m != nil {
		p.i += len(m[0])
		n, _ := strconv.Atoi(m[1])
		return node{}, n, true
	}
	if m := mmh3Re.FindStringSubmatch(rest); m != nil {
		p.i += len(m[0])
		h := m[1]
		if h == "" {
			h = m[2]
		}
		n, err := strconv.Atoi(h)
		if err != nil {
			return node{}, 0, false
		}
		return leaf(kv{"body.mmh3", n}), 0, true
	}
	m := funcRe.FindStringSubmatch(rest)
	if m == nil {
		return node{}, 0, false
	}
	p.i += len(m[0])
	fn := m[1]
	var fields []string
	readPart := func() bool {
		p.space()
		lower := false
		if p.eat("tolower(") {
			lower = true
		}
		p.space()
		j := p.i
		for j < len(p.s) && (p.s[j] == '_' || p.s[j] >= 'a' && p.s[j] <= 'z' || p.s[j] >= '0' && p.s[j] <= '9') {
			j++
		}
		part := p.s[p.i:j]
		p.i = j
		if lower && !p.eat(")") {
			return false
		}
		f, ok := partFields(part)
		fields = f
		return ok && part != ""
	}
	var args []string
	if fn == "regex" {
		s, ok := p.str()
		if !ok || !p.eat(",") || !readPart() || !p.eat(")") {
			return node{}, 0, false
		}
		if _, err := regexp.Compile("(?i)" + s); err != nil {
			return node{}, 0, false
		}
		return fieldsNode(fields, []string{s}, false), 0, true
	}
	if !readPart() {
		return node{}, 0, false
	}
	for p.eat(",") {
		s, ok := p.str()
		if !ok {
			return node{}, 0, false
		}
		args = append(args, regexp.QuoteMeta(s))
	}
	if !p.eat(")") || len(args) == 0 {
		return node{}, 0, false
	}
	return fieldsNode(fields, args, fn == "contains_all"), 0, true
}

// fieldsNode: any (or, with all, every) of pats on any of fields.
func fieldsNode(fields, pats []string, all bool) node {
	one := func(pat string) node {
		if len(fields) == 1 {
			return leaf(kv{fields[0], pat})
		}
		var ks []node
		for _, f := range fields {
			ks = append(ks, leaf(kv{f, pat}))
		}
		return node{kind: "any", kids: ks}
	}
	if len(pats) == 1 {
		return one(pats[0])
	}
	if all {
		var ks []node
		for _, p := range pats {
			ks = append(ks, one(p))
		}
		return node{kind: "all", kids: ks}
	}
	return one("(?:" + strings.Join(pats, ")|(?:") + ")")
}

// str reads a quoted string ("..." or '...').
func (p *dslParser) str() (string, bool) {
	p.space()
	if p.i >= len(p.s) || (p.s[p.i] != '"' && p.s[p.i] != '\'') {
		return "", false
	}
	q := p.s[p.i]
	var b strings.Builder
	for j := p.i + 1; j < len(p.s); j++ {
		c := p.s[j]
		if c == '\\' && j+1 < len(p.s) {
			b.WriteByte(p.s[j+1])
			j++
			continue
		}
		if c == q {
			p.i = j + 1
			return b.String(), true
		}
		b.WriteByte(c)
	}
	return "", false
}
