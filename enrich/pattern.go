package enrich

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pattern is a rule's case-insensitive regular expression with, where the
// expression has one, a literal that every match contains. Most inputs a
// rule meets are another product's, and a search for the literal rules
// them out in a fraction of the time the expression takes to fail
// (BenchmarkPattern).
type pattern struct {
	re *regexp.Regexp
	// lit is the literal in ASCII lower case, "" when there is none.
	lit string
	// asciiOnly: a letter of lit also folds to a rune outside ASCII (k to
	// the Kelvin sign, s to the long s), so lit only rules out inputs that
	// are all ASCII.
	asciiOnly bool
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
		p.lit = requiredLiteral(parsed)
		p.asciiOnly = foldsBeyondASCII(p.lit)
	}
	return p
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

// requiredLiteral returns the longest ASCII literal, in lower case, that
// every match of re contains, or "".
func requiredLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		if !isASCII(s) {
			return ""
		}
		return strings.ToLower(s)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if l := requiredLiteral(sub); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return ""
}

// possible is false only when s cannot match.
func (p *pattern) possible(s string) bool {
	if p.lit == "" || (p.asciiOnly && !isASCII(s)) {
		return true
	}
	return containsFoldASCII(s, p.lit)
}

// FindStringSubmatch is the expression's FindStringSubmatch.
func (p *pattern) FindStringSubmatch(s string) []string {
	if !p.possible(s) {
		return nil
	}
	return p.re.FindStringSubmatch(s)
}

// MatchString reports whether s matches.
func (p *pattern) MatchString(s string) bool {
	return p.possible(s) && p.re.MatchString(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// containsFoldASCII reports whether s contains lit (ASCII lower case) in
// any mix of ASCII case.
func containsFoldASCII(s, lit string) bool {
	first, firstUpper := lit[0], lit[0]
	if 'a' <= first && first <= 'z' {
		firstUpper -= 'a' - 'A'
	}
	for i := 0; i+len(lit) <= len(s); i++ {
		if c := s[i]; c != first && c != firstUpper {
			continue
		}
		j := 1
		for ; j < len(lit); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lit[j] {
				break
			}
		}
		if j == len(lit) {
			return true
		}
	}
	return false
}
