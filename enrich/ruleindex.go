package enrich

import (
	"strconv"
	"strings"
)

// ruleIndex rules out, for one observation and in one pass over its text,
// the rules that cannot match it. Each rule that has them gets the
// literals one of which must be in the observation's text for its match
// to hold (from its expressions' required literals and its exact values,
// see requiredRuleLiterals); the literals of all rules are searched
// together with one automaton (Aho-Corasick, ASCII case folded) over the
// bodies, header blocks, titles, favicon hashes and banners of the
// probes. A rule with no such literals is always tried. Without it every
// rule searched the body for its own literals: hundreds of generated
// rules cost hundreds of searches of every body (BenchmarkRulesMatch).
type ruleIndex struct {
	class  [256]uint8
	nclass int
	// delta is the automaton: a state is the offset of its row (its
	// number times nclass), delta[state+class] the next state. States
	// that end a literal are numbered last, from firstOut on, so the
	// search tells them by one comparison.
	delta    []int32
	firstOut int32
	out      [][]int32 // literal ids found on reaching a state, by state number
	// lits holds, per rule, the ids of its literals, or nil when it has
	// none; asciiOnly, per rule, that they rule it out only in text
	// without the runes that fold to ASCII letters.
	lits      [][]int32
	asciiOnly []bool
	nlits     int
}

// indexable reports whether a field's values are in the text the index
// searches, so a literal of a test on it must be found there.
func indexable(f field) bool {
	switch f.kind {
	case fBody, fBodyHead, fHeader, fHeaders, fCookie, fCookieValue, fTitle, fBodyMMH3, fBanner:
		return true
	}
	return false
}

// requiredRuleLiterals returns literals (ASCII lower case) one of which
// the indexed text holds whenever c holds, or nil when there are none.
// asciiOnly: a letter of a literal also folds to a rune outside ASCII (k,
// s), so the literals rule c out only when the text lacks those runes.
func requiredRuleLiterals(c condition) (lits []string, asciiOnly bool) {
	switch c := c.(type) {
	case allOf:
		for _, s := range c {
			if l, a := requiredRuleLiterals(s); l != nil && (lits == nil || literalsScore(l) > literalsScore(lits)) {
				lits, asciiOnly = l, a
			}
		}
		return lits, asciiOnly
	case anyOf:
		for _, s := range c {
			l, a := requiredRuleLiterals(s)
			if l == nil {
				return nil, false
			}
			lits = append(lits, l...)
			asciiOnly = asciiOnly || a
		}
		return lits, asciiOnly
	case *gated:
		return requiredRuleLiterals(c.c)
	case *memoCond:
		return requiredRuleLiterals(c.c)
	case *leaf:
		for _, t := range c.probe {
			if !indexable(t.f) {
				continue
			}
			var l []string
			a := false
			switch {
			case t.m.re != nil:
				l, a = t.m.re.lits, t.m.re.asciiOnly
			case len(t.m.eq) > 0 && !t.m.prefix:
				for _, v := range t.m.eq {
					if v == "" || !isASCII(v) {
						l = nil
						break
					}
					l = append(l, strings.ToLower(v))
					a = a || foldsBeyondASCII(v)
				}
			}
			if len(l) > 0 && (lits == nil || literalsScore(l) > literalsScore(lits)) {
				lits, asciiOnly = l, a
			}
		}
		return lits, asciiOnly
	}
	return nil, false
}

// newRuleIndex builds the index of rules; nil when no rule has literals.
// The branches of every any: that have literals of their own are gated
// by them (gated): a rule that is always tried, because one branch has
// no literal, still skips its other branches whose literals the text
// lacks.
func newRuleIndex(rules []*rule) *ruleIndex {
	ix := &ruleIndex{lits: make([][]int32, len(rules)), asciiOnly: make([]bool, len(rules))}
	ids := map[string]int32{}
	var lits []string
	idsOf := func(ls []string) []int32 {
		var out []int32
		for _, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = int32(len(lits))
				ids[l] = id
				lits = append(lits, l)
			}
			out = append(out, id)
		}
		return out
	}
	var gates []*gated
	for i, r := range rules {
		rl, a := requiredRuleLiterals(r.match)
		ix.asciiOnly[i] = a
		ix.lits[i] = idsOf(rl)
		r.match = gateBranches(r.match, func(c condition) condition {
			l, a := requiredRuleLiterals(c)
			if l == nil {
				return c
			}
			g := &gated{ids: idsOf(l), asciiOnly: a, c: c}
			gates = append(gates, g)
			return g
		})
	}
	if len(lits) == 0 || !ix.setClasses(lits) {
		return nil // the gates keep n 0: they gate nothing
	}
	ix.nlits = len(lits)
	for _, g := range gates {
		g.n = ix.nlits + 1
	}
	nodes := ix.trie(lits)
	ix.link(nodes)
	ix.renumber(nodes)
	return ix
}

// acNode is a state of the Aho-Corasick automaton while it is built.
type acNode struct {
	next map[uint8]int32
	fail int32
	out  []int32
}

// setClasses gives each distinct (lower-cased) byte of the literals a
// class, and every other byte class 0; false when there are more than 255.
func (ix *ruleIndex) setClasses(lits []string) bool {
	ix.nclass = 1
	for _, l := range lits {
		for j := 0; j < len(l); j++ {
			if ix.class[l[j]] == 0 {
				if ix.nclass == 256 {
					return false
				}
				ix.class[l[j]] = uint8(ix.nclass)
				ix.nclass++
			}
		}
	}
	for b := 'A'; b <= 'Z'; b++ {
		ix.class[b] = ix.class[b+'a'-'A']
	}
	return true
}

// trie builds the literals' trie over byte classes, each literal's id in
// the output of the state it ends at.
func (ix *ruleIndex) trie(lits []string) []acNode {
	nodes := []acNode{{next: map[uint8]int32{}}}
	for id, l := range lits {
		s := int32(0)
		for j := 0; j < len(l); j++ {
			c := ix.class[l[j]]
			n, ok := nodes[s].next[c]
			if !ok {
				n = int32(len(nodes))
				nodes = append(nodes, acNode{next: map[uint8]int32{}})
				nodes[s].next[c] = n
			}
			s = n
		}
		nodes[s].out = append(nodes[s].out, int32(id))
	}
	return nodes
}

// link sets the failure links breadth first and fills the dense
// transitions (ix.delta, by state and class); a state's output gains its
// failure state's.
func (ix *ruleIndex) link(nodes []acNode) {
	ix.delta = make([]int32, len(nodes)*ix.nclass)
	queue := []int32{}
	for c := 0; c < ix.nclass; c++ {
		if n, ok := nodes[0].next[uint8(c)]; ok {
			ix.delta[c] = n
			queue = append(queue, n)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		nodes[s].out = append(nodes[s].out, nodes[nodes[s].fail].out...)
		for c := 0; c < ix.nclass; c++ {
			if n, ok := nodes[s].next[uint8(c)]; ok {
				nodes[n].fail = ix.delta[int(nodes[s].fail)*ix.nclass+c]
				ix.delta[int(s)*ix.nclass+c] = n
				queue = append(queue, n)
			} else {
				ix.delta[int(s)*ix.nclass+c] = ix.delta[int(nodes[s].fail)*ix.nclass+c]
			}
		}
	}
}

// renumber puts the states without output first, then those with (one
// comparison tells whether a state outputs), and addresses rows by offset.
func (ix *ruleIndex) renumber(nodes []acNode) {
	num := make([]int32, len(nodes))
	next := int32(0)
	for pass := 0; pass < 2; pass++ {
		for i := range nodes {
			if (len(nodes[i].out) > 0) == (pass == 1) {
				num[i] = next
				next++
			}
		}
		if pass == 0 {
			ix.firstOut = next * int32(ix.nclass)
		}
	}
	delta := make([]int32, len(ix.delta))
	ix.out = make([][]int32, len(nodes))
	for i := range nodes {
		row := int(num[i]) * ix.nclass
		for c := 0; c < ix.nclass; c++ {
			delta[row+c] = num[ix.delta[i*ix.nclass+c]] * int32(ix.nclass)
		}
		ix.out[num[i]] = nodes[i].out
	}
	ix.delta = delta
}

// scan marks in found (of nlits+1 marks) the literals present in the
// observation's text, and in found[nlits] that some text holds a rune
// that folds to an ASCII letter (hasFoldRune). The header block is fed
// header by header, the automaton's state carried across, so no block
// is built. The title is searched too: one taken from the body has its
// white space folded, so it may hold a literal the body does not.
func (ix *ruleIndex) scan(e *evidence, found []bool) {
	var num [24]byte
	for i := range e.probes {
		v := &e.probes[i]
		if r := v.p.Response; r != nil {
			st := int32(0)
			for _, h := range r.Headers {
				st = ix.search(st, h.Name, found)
				st = ix.search(st, ": ", found)
				st = ix.search(st, h.Value, found)
				st = ix.search(st, "\r\n", found)
			}
			if r.Body != nil {
				ix.search(0, v.bodyText(), found)
				if r.Body.MMH3 != nil {
					ix.search(0, string(strconv.AppendInt(num[:0], int64(*r.Body.MMH3), 10)), found)
				}
			}
			if t := v.titleText(); t != "" {
				ix.search(0, t, found)
			}
		}
		if v.p.Banner != nil && v.p.Banner.Received != nil {
			ix.search(0, v.bannerText(), found)
		}
	}
}

// search runs the automaton over s from state st and returns the state
// it ends in.
func (ix *ruleIndex) search(st int32, s string, found []bool) int32 {
	if !found[ix.nlits] && hasFoldRune(s) {
		found[ix.nlits] = true
	}
	delta, class, first := ix.delta, &ix.class, ix.firstOut
	for i := 0; i < len(s); i++ {
		st = delta[st+int32(class[s[i]])]
		if st >= first {
			for _, id := range ix.out[st/int32(ix.nclass)] {
				found[id] = true
			}
		}
	}
	return st
}

// possible reports whether rule i can match, given the literals found.
func (ix *ruleIndex) possible(i int, found []bool) bool {
	l := ix.lits[i]
	if l == nil {
		return true
	}
	for _, id := range l {
		if found[id] {
			return true
		}
	}
	return ix.asciiOnly[i] && found[ix.nlits]
}

// gated is a branch of an any: with literals of its own (newRuleIndex):
// it cannot hold when the observation's text has none of them, which the
// index's scan has marked in the evidence's literal set.
type gated struct {
	ids       []int32
	asciiOnly bool
	// n is the length of the literal set the index marks (its literals
	// and the fold-rune flag); a set of another length (none, or one
	// marked by other rules) gates nothing.
	n int
	c condition
}

func (g *gated) holds(e *evidence) bool {
	if f := e.found; len(f) == g.n && g.n > 0 {
		ok := g.asciiOnly && f[g.n-1]
		for _, id := range g.ids {
			if ok {
				break
			}
			ok = f[id]
		}
		if !ok {
			return false
		}
	}
	return g.c.holds(e)
}

// gateBranches rewrites c, giving every branch of an any: (at any depth)
// to wrap, which gates it.
func gateBranches(c condition, wrap func(condition) condition) condition {
	switch c := c.(type) {
	case anyOf:
		out := make(anyOf, len(c))
		for i, s := range c {
			out[i] = wrap(gateBranches(s, wrap))
		}
		return out
	case allOf:
		out := make(allOf, len(c))
		for i, s := range c {
			out[i] = gateBranches(s, wrap)
		}
		return out
	case notOf:
		return notOf{gateBranches(c.c, wrap)}
	}
	return c
}
