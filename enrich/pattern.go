package enrich

import (
	"encoding/binary"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// pattern is a rule's case-insensitive regular expression with, where the
// expression has them, literals one of which every match contains (one
// literal for `FortiGate`, one per branch for `USG|ATP|ZyWALL`). Most
// inputs a rule meets are another product's, and a search for the
// literals rules them out in a fraction of the time the expression takes
// to fail (BenchmarkPattern).
type pattern struct {
	re *regexp.Regexp
	// lits are the literals in ASCII lower case, none when there are none.
	lits []string
	// asciiOnly: a letter of a literal also folds to a rune outside ASCII
	// (k to the Kelvin sign, s to the long s), so the literals only rule
	// out inputs without those runes (hasFoldRune).
	asciiOnly bool
	// also are the other parts' literal sets of an expression that is a
	// sequence ("serial"..."version"..."build"): every match holds one
	// literal of each set too, so an input that lacks all of one set is
	// ruled out before the expression runs. A common word as the best
	// literal ("status") no longer sends every body that has it to the
	// regular-expression engine when a rarer part is missing.
	also [][]string
	// lead is the literal (ASCII lower case, 3 bytes or more) every match
	// begins with, and anchored the expression anchored at the start of its
	// input: a case-insensitive expression gets no literal-prefix search
	// from the regexp package, so it would run over a whole body; with a
	// lead, only the places the lead occurs are tried (leadSearch).
	lead         string
	anchored     *regexp.Regexp
	leadFoldsOut bool // lead has a letter that folds beyond ASCII (k, s)
}

// compilePattern compiles s as a case-insensitive expression; an error is
// added to errs, named by field.
func compilePattern(field, s string, errs *[]error) *pattern {
	re := compileRe(field, s, errs)
	if re == nil {
		return nil
	}
	p := &pattern{re: re}
	if parsed, err := syntax.Parse(re.String(), syntax.Perl); err == nil {
		if lead := leadingLiteral(parsed); len(lead) >= 3 && isASCII(lead) {
			if a, err := regexp.Compile(`\A(?:` + re.String() + `)`); err == nil {
				p.lead, p.anchored, p.leadFoldsOut = strings.ToLower(lead), a, foldsBeyondASCII(lead)
			}
		}
		p.lits = requiredLiterals(parsed)
		for _, l := range p.lits {
			p.asciiOnly = p.asciiOnly || foldsBeyondASCII(l)
		}
		if len(p.lits) > 0 {
			// The strongest other sets, a few: short or many literals are
			// found in most inputs and cost a search each.
			groups := literalGroups(parsed)
			slices.SortStableFunc(groups, func(a, b []string) int { return literalsScore(b) - literalsScore(a) })
			for _, g := range groups {
				if len(p.also) == maxAlsoGroups || literalsScore(g) < 3 {
					break
				}
				if slices.Equal(g, p.lits) {
					continue
				}
				for _, l := range g {
					p.asciiOnly = p.asciiOnly || foldsBeyondASCII(l)
				}
				p.also = append(p.also, g)
			}
		}
	}
	return p
}

// leadingLiteral is the literal every match of re begins with, "" when
// there is none (an expression that begins with a class, an assertion or
// an alternation).
func leadingLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune)
	case syntax.OpCapture:
		return leadingLiteral(re.Sub[0])
	case syntax.OpConcat:
		if len(re.Sub) > 0 {
			return leadingLiteral(re.Sub[0])
		}
	}
	return ""
}

// leadSearch calls try with s from each place its lead occurs (in any
// ASCII case), in order, until try says true.
func (p *pattern) leadSearch(s string, try func(string) bool) bool {
	for i := 0; i <= len(s)-len(p.lead); {
		k := indexFold(s[i:], p.lead)
		if k < 0 {
			return false
		}
		if try(s[i+k:]) {
			return true
		}
		i += k + 1
	}
	return false
}

// useLead reports whether s may be searched at its lead's places only:
// the lead's letters fold to ASCII alone in s.
func (p *pattern) useLead(s string) bool {
	return p.anchored != nil && (!p.leadFoldsOut || !hasFoldRune(s))
}

// foldsBeyondASCII reports whether a letter of lit matches, case
// insensitively, a rune outside ASCII.
func foldsBeyondASCII(lit string) bool {
	for _, r := range lit {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f >= utf8.RuneSelf {
				return true
			}
		}
	}
	return false
}

// requiredLiterals returns ASCII literals, in lower case, one of which
// every match of re contains, or none: for a concatenation the best of
// its parts' (the set whose shortest literal is longest), for an
// alternation one set from each branch, when every branch has one.
func requiredLiterals(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		if !isASCII(s) {
			return nil
		}
		return []string{strings.ToLower(s)}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []string
		for _, sub := range re.Sub {
			if l := requiredLiterals(sub); literalsScore(l) > literalsScore(best) {
				best = l
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			l := requiredLiterals(sub)
			if len(l) == 0 {
				return nil
			}
			all = append(all, l...)
		}
		if len(all) > 8 {
			return nil // more searches than a failing expression costs
		}
		return all
	}
	return nil
}

// maxAlsoGroups bounds the literal sets a pattern searches besides its
// best one.
const maxAlsoGroups = 6

// literalGroups returns the literal sets of re's parts when re is a
// sequence (each part's requiredLiterals, sequences inside it flattened),
// else re's own set: every match of re holds one literal of each set.
func literalGroups(re *syntax.Regexp) [][]string {
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return literalGroups(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return literalGroups(re.Sub[0])
		}
		return nil
	case syntax.OpConcat:
		var out [][]string
		for _, sub := range re.Sub {
			out = append(out, literalGroups(sub)...)
		}
		return out
	}
	if l := requiredLiterals(re); len(l) > 0 {
		return [][]string{l}
	}
	return nil
}

// literalsScore is how well a set of literals rules inputs out: the
// length of its shortest, less one for every further literal to search.
func literalsScore(lits []string) int {
	if len(lits) == 0 {
		return 0
	}
	shortest := len(lits[0])
	for _, l := range lits[1:] {
		shortest = min(shortest, len(l))
	}
	return shortest - (len(lits) - 1)
}

// possible is false only when s cannot match.
func (p *pattern) possible(s string) bool {
	if len(p.lits) == 0 || p.literalsIn(s) {
		return true
	}
	// A literal with a letter that folds beyond ASCII (k to the Kelvin
	// sign, s to the long s) rules out only an input without those runes;
	// checked last, as most inputs lack them. An input with them (a binary
	// body holds the long s's two bytes about once in 64 KiB by chance) is
	// asked again with them folded.
	return p.asciiOnly && hasFoldRune(s) && p.literalsIn(foldedRunes(s))
}

// literalsIn reports whether s holds one of the pattern's literals and
// one of each further group (p.also), in any ASCII case.
func (p *pattern) literalsIn(s string) bool {
	if !anyFold(s, p.lits) {
		return false
	}
	for _, g := range p.also {
		if !anyFold(s, g) {
			return false
		}
	}
	return true
}

// foldRunes writes the Kelvin sign as k and the long s as s: with them so
// written, an ASCII literal occurs in an input under Unicode's simple case
// folding exactly when it occurs under ASCII's.
var foldRunes = strings.NewReplacer("\u212a", "k", "\u017f", "s")

// foldedCache keeps the last input foldedRunes wrote out (held, so that
// its memory is not another string's while it is compared), as the
// patterns of one observation ask it of the same body one after another.
var foldedCache struct {
	sync.Mutex
	src, folded string
}

// foldedRunes is s with foldRunes applied, the last answer reused.
func foldedRunes(s string) string {
	foldedCache.Lock()
	defer foldedCache.Unlock()
	if len(s) == len(foldedCache.src) && unsafe.StringData(s) == unsafe.StringData(foldedCache.src) {
		return foldedCache.folded
	}
	f := foldRunes.Replace(s)
	foldedCache.src, foldedCache.folded = s, f
	return f
}

// anyFold reports whether s contains one of lits (ASCII lower case) in any
// ASCII case.
func anyFold(s string, lits []string) bool {
	for _, l := range lits {
		if containsFoldASCII(s, l) {
			return true
		}
	}
	return false
}

// hasFoldRune reports whether s holds one of the two runes outside ASCII
// that fold to an ASCII letter (U+212A KELVIN SIGN to k, U+017F LATIN
// SMALL LETTER LONG S to s): without them, a case-insensitive match of an
// ASCII literal is a match of ASCII bytes.
func hasFoldRune(s string) bool {
	return !isASCII(s) && (strings.Contains(s, "\u212a") || strings.Contains(s, "\u017f"))
}

// FindStringSubmatch is the expression's FindStringSubmatch.
func (p *pattern) FindStringSubmatch(s string) []string {
	if !p.possible(s) {
		return nil
	}
	if p.useLead(s) {
		// the leftmost match begins at the first place the anchored
		// expression matches from
		var m []string
		p.leadSearch(s, func(t string) bool {
			m = p.anchored.FindStringSubmatch(t)
			return m != nil
		})
		return m
	}
	return p.re.FindStringSubmatch(s)
}

// MatchString reports whether s matches.
func (p *pattern) MatchString(s string) bool {
	if !p.possible(s) {
		return false
	}
	if p.useLead(s) {
		return p.leadSearch(s, p.anchored.MatchString)
	}
	return p.re.MatchString(s)
}

// isASCII reports whether every byte of s is below 0x80, eight bytes at
// a time: the prefilter asks it of whole bodies.
func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if binary.LittleEndian.Uint64([]byte(s[i:i+8]))&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// containsFoldASCII reports whether s contains lit (ASCII lower case) in
// any mix of ASCII case.
func containsFoldASCII(s, lit string) bool { return indexFold(s, lit) >= 0 }

// indexFold is the index of the first lit (ASCII lower case, not empty)
// in s in any mix of ASCII case, or -1. Candidates are found with
// strings.IndexByte (vectorised) for the first byte's lower and upper
// case, each position searched for once, so a long body that lacks the
// literal costs two fast scans rather than a loop over every byte.
func indexFold(s, lit string) int {
	lo, up := lit[0], lit[0]
	if 'a' <= lo && lo <= 'z' {
		up -= 'a' - 'A'
	}
	last := len(s) - len(lit) // the last position a match can start at
	nextLo, nextUp := -1, -1  // the next position of each case, from i on
	if lo == up {
		nextUp = len(s)
	}
	for i := 0; i <= last; {
		if nextLo < i {
			if k := strings.IndexByte(s[i:], lo); k >= 0 {
				nextLo = i + k
			} else {
				nextLo = len(s)
			}
		}
		if nextUp < i {
			if k := strings.IndexByte(s[i:], up); k >= 0 {
				nextUp = i + k
			} else {
				nextUp = len(s)
			}
		}
		i = min(nextLo, nextUp)
		if i > last {
			return -1
		}
		if restEqualFold(s[i+1:i+len(lit)], lit[1:]) {
			return i
		}
		i++
	}
	return -1
}

// restEqualFold reports whether s equals lit (ASCII lower case, as long
// as s) in any mix of ASCII case.
func restEqualFold(s, lit string) bool {
	for j := 0; j < len(lit); j++ {
		c := s[j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lit[j] {
			return false
		}
	}
	return true
}
