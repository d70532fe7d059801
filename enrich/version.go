package enrich

import (
	"iter"
	"strconv"
	"strings"
)

// vtok is one token of a version: a number, a word, or +infinity (the open
// end of a band such as 7.0.x).
type vtok struct {
	num  int64
	str  string
	kind uint8 // 0 number, 1 word, 2 infinity
}

// version is a tokenized version string. Separators are ignored and
// letters are compared case-insensitively, so "9.1R11", "9.1:r11" (a CPE
// version with its update field) and "9.1r11" are equal, and Citrix's
// "13.1-37.164" orders as 13.1.37.164.
type version []vtok

func parseVersion(s string) version {
	var v version
	for t := range versionTokens(strings.ToLower(s)) {
		v = append(v, t)
	}
	return v
}

// versionTokens yields the tokens of s: runs of digits and runs of ASCII
// letters (in the case s has them), skipping everything else.
func versionTokens(s string) iter.Seq[vtok] {
	letter := func(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
	return func(yield func(vtok) bool) {
		for i := 0; i < len(s); {
			c, j := s[i], i
			var t vtok
			switch {
			case c >= '0' && c <= '9':
				for j < len(s) && s[j] >= '0' && s[j] <= '9' {
					j++
				}
				t = vtok{num: versionNumber(s[i:j])}
			case letter(c):
				for j < len(s) && letter(s[j]) {
					j++
				}
				t = vtok{str: s[i:j], kind: 1}
			default:
				i++
				continue
			}
			if !yield(t) {
				return
			}
			i = j
		}
	}
}

// versionNumber is the value of a run of digits; one too large for
// int64 counts as larger than any other.
func versionNumber(digits string) int64 {
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 1<<62 - 1
	}
	return n
}

func cmpTok(a, b vtok) int {
	if a.kind != b.kind {
		// word < number < infinity: "9.1r1" sorts before "9.1.1".
		rank := func(t vtok) int { return [3]int{1, 0, 2}[t.kind] }
		return rank(a) - rank(b)
	}
	switch a.kind {
	case 0:
		switch {
		case a.num < b.num:
			return -1
		case a.num > b.num:
			return 1
		}
	case 1:
		return strings.Compare(a.str, b.str)
	}
	return 0
}

func cmpVersion(a, b version) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := cmpTok(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// interval is a set of versions between two bounds; a nil bound is open.
type interval struct {
	lo, hi       version
	loInc, hiInc bool
}

// point is the interval holding exactly v.
func point(v version) interval { return interval{lo: v, hi: v, loInc: true, hiInc: true} }

// bandInterval reads a version band: "7.0.x" (every 7.0 release),
// "6.4.0..6.4.8" (inclusive range), "10.2.4,11.0.1" (one of these
// releases, as a table row gives a day several releases share: read as
// the range from the lowest to the highest) or a single version.
func bandInterval(band string) (interval, bool) {
	band = strings.TrimSpace(band)
	if band == "" {
		return interval{}, false
	}
	if strings.Contains(band, ",") {
		var lo, hi version
		for m := range strings.SplitSeq(band, ",") {
			v := parseVersion(m)
			if len(v) == 0 {
				continue
			}
			if lo == nil || cmpVersion(v, lo) < 0 {
				lo = v
			}
			if hi == nil || cmpVersion(v, hi) > 0 {
				hi = v
			}
		}
		if lo == nil {
			return interval{}, false
		}
		return interval{lo: lo, hi: hi, loInc: true, hiInc: true}, true
	}
	if lo, hi, ok := strings.Cut(band, ".."); ok {
		return interval{lo: parseVersion(lo), hi: parseVersion(hi), loInc: true, hiInc: true}, true
	}
	if p, ok := strings.CutSuffix(strings.ToLower(band), ".x"); ok {
		lo := parseVersion(p)
		hi := append(append(version{}, lo...), vtok{kind: 2})
		return interval{lo: lo, hi: hi, loInc: true, hiInc: true}, true
	}
	return point(parseVersion(band)), true
}

// overlaps reports whether a and b share at least one version.
func (a interval) overlaps(b interval) bool {
	below := func(lo version, loInc bool, hi version, hiInc bool) bool {
		// lo <= hi with inclusivity; nil = open end.
		if lo == nil || hi == nil {
			return true
		}
		c := cmpVersion(lo, hi)
		return c < 0 || (c == 0 && loInc && hiInc)
	}
	return below(a.lo, a.loInc, b.hi, b.hiInc) && below(b.lo, b.loInc, a.hi, a.hiInc)
}

// contains reports whether v lies in a.
func (a interval) contains(v version) bool { return a.overlaps(point(v)) }

// within reports whether every version of b lies in a.
func (b interval) within(a interval) bool {
	if a.lo != nil {
		if b.lo == nil {
			return false
		}
		if c := cmpVersion(a.lo, b.lo); c > 0 || (c == 0 && !a.loInc && b.loInc) {
			return false
		}
	}
	if a.hi != nil {
		if b.hi == nil {
			return false
		}
		if c := cmpVersion(b.hi, a.hi); c > 0 || (c == 0 && b.hiInc && !a.hiInc) {
			return false
		}
	}
	return true
}

// minorBand returns the "major.minor.x" band of an exact version: its
// first two numbers, before any word ("7.2.x" of "7.2.5", "10.x" of "10"),
// or "" when it has none. Only a version with non-ASCII bytes is lower-cased
// first, as parseVersion does, since that maps some non-ASCII letters to
// ASCII ones (the Kelvin sign to k); the tokens of an ASCII one do not
// depend on its case.
func minorBand(exact string) string {
	if !isASCII(exact) {
		exact = strings.ToLower(exact)
	}
	var buf [48]byte
	b, n := buf[:0], 0
	for t := range versionTokens(exact) {
		if t.kind != 0 {
			break
		}
		if n > 0 {
			b = append(b, '.')
		}
		b = strconv.AppendInt(b, t.num, 10)
		if n++; n == 2 {
			break
		}
	}
	if n == 0 {
		return ""
	}
	return string(append(b, ".x"...))
}
