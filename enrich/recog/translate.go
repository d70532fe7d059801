package recog

import (
	"fmt"
	"strings"
)

// translate rewrites a Recog (Ruby/Onigmo) regular expression into Go's RE2
// syntax. It returns an error describing the first construct that has no
// safe RE2 equivalent; such fingerprints are skipped, not fatal.
//
// Semantics handled:
//
//   - Ruby's ^ and $ always match at line boundaries, so the caller compiles
//     with (?m); \A and \z are the same in both and are kept.
//   - \Z (end of string or before a final newline) becomes (?:\n?\z).
//   - \h / \H (hex digit) become [0-9A-Fa-f] / [^0-9A-Fa-f].
//   - \uHHHH becomes \x{HHHH}; \e becomes \x1B.
//   - (?<name>...) becomes (?P<name>...). In Ruby, once a pattern has named
//     groups its plain (...) groups no longer capture, so those become (?:...).
//   - Ruby's inline option m (dot matches newline) becomes s; x is refused.
//
// Refused: lookahead/lookbehind, atomic groups, possessive quantifiers,
// backreferences (\1, \k<..>), subexpression calls (\g<..>), \G \K \R \X,
// class intersection (&&) and nested character classes.
func translate(p string) (string, error) {
	named := hasNamedGroup(p)
	var b strings.Builder
	b.Grow(len(p) + 8)
	inClass := false // inside [...]
	classStart := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' {
			if i+1 >= len(p) {
				return "", fmt.Errorf("trailing backslash")
			}
			var err error
			if i, err = translateEscape(&b, p, i+1, inClass); err != nil {
				return "", err
			}
			classStart = false
			continue
		}
		if inClass {
			switch {
			case c == ']' && !classStart:
				inClass = false
			case c == '[':
				if i+1 < len(p) && p[i+1] == ':' {
					// POSIX class [:alpha:]; copy through the closing :]
					end := strings.Index(p[i:], ":]")
					if end < 0 {
						return "", fmt.Errorf("unterminated POSIX class")
					}
					b.WriteString(p[i : i+end+2])
					i += end + 1
					classStart = false
					continue
				}
				return "", fmt.Errorf("nested character class")
			case c == '&' && i+1 < len(p) && p[i+1] == '&':
				return "", fmt.Errorf("character class intersection &&")
			}
			if !(classStart && c == '^') {
				classStart = false
			}
			b.WriteByte(c)
			continue
		}
		switch c {
		case '[':
			inClass = true
			classStart = true
			b.WriteByte(c)
		case '(':
			var err error
			if i, err = translateGroup(&b, p, i, named); err != nil {
				return "", err
			}
		case '*', '+', '?', '}':
			b.WriteByte(c)
			if i+1 < len(p) && p[i+1] == '+' {
				return "", fmt.Errorf("possessive quantifier %c+", c)
			}
		default:
			b.WriteByte(c)
		}
	}
	if inClass {
		return "", fmt.Errorf("unterminated character class")
	}
	return b.String(), nil
}

// translateEscape writes the Go form of the escape whose letter is p[i]
// and returns the index of its last byte.
func translateEscape(b *strings.Builder, p string, i int, inClass bool) (int, error) {
	n := p[i]
	switch {
	case n == 'h' || n == 'H':
		if inClass {
			if n == 'H' {
				return i, fmt.Errorf(`\H inside a character class`)
			}
			b.WriteString("0-9A-Fa-f")
		} else if n == 'h' {
			b.WriteString("[0-9A-Fa-f]")
		} else {
			b.WriteString("[^0-9A-Fa-f]")
		}
	case n == 'Z' && !inClass:
		b.WriteString(`(?:\n?\z)`)
	case n == 'e':
		b.WriteString(`\x1B`)
	case n == 'u':
		if i+4 < len(p) && isHex(p[i+1:i+5]) {
			b.WriteString(`\x{` + p[i+1:i+5] + `}`)
			return i + 4, nil
		}
		return i, fmt.Errorf(`unsupported \u escape`)
	case n >= '1' && n <= '9' && !inClass:
		return i, fmt.Errorf("backreference \\%c", n)
	case n == 'k' || n == 'g':
		return i, fmt.Errorf("backreference or subexpression call \\%c", n)
	case n == 'G' || n == 'K' || n == 'R' || n == 'X':
		return i, fmt.Errorf("unsupported escape \\%c", n)
	default:
		b.WriteByte('\\')
		b.WriteByte(n)
	}
	return i, nil
}

// translateGroup writes the Go form of the group that opens at p[i] and
// returns the index of the last byte it consumed. With named groups in the
// pattern, plain groups do not capture (as in Ruby).
func translateGroup(b *strings.Builder, p string, i int, named bool) (int, error) {
	if i+1 >= len(p) || p[i+1] != '?' {
		if named {
			b.WriteString("(?:")
		} else {
			b.WriteByte('(')
		}
		return i, nil
	}
	rest := p[i+2:]
	switch {
	case strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "!"):
		return i, fmt.Errorf("lookahead")
	case strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, "<!"):
		return i, fmt.Errorf("lookbehind")
	case strings.HasPrefix(rest, ">"):
		return i, fmt.Errorf("atomic group")
	case strings.HasPrefix(rest, "#"):
		return i, fmt.Errorf("comment group")
	case strings.HasPrefix(rest, "<"), strings.HasPrefix(rest, "P<"):
		b.WriteString("(?P<")
		if rest[0] == 'P' {
			i++
		}
		return i + 2, nil
	case strings.HasPrefix(rest, "'"):
		return i, fmt.Errorf("quoted group name")
	}
	// inline options (?imx-imx) or (?imx-imx:...)
	j := 0
	for j < len(rest) && strings.IndexByte("imx-", rest[j]) >= 0 {
		j++
	}
	if j == len(rest) || (rest[j] != ')' && rest[j] != ':') {
		return i, fmt.Errorf("unsupported group (?%.3s", rest)
	}
	opts := rest[:j]
	if strings.IndexByte(opts, 'x') >= 0 {
		return i, fmt.Errorf("extended (x) option")
	}
	b.WriteString("(?")
	b.WriteString(strings.ReplaceAll(opts, "m", "s"))
	return i + 1 + j, nil
}

func hasNamedGroup(p string) bool {
	for i := 0; i+3 < len(p); i++ {
		if p[i] == '\\' {
			i++
			continue
		}
		if p[i] == '(' && p[i+1] == '?' && (p[i+2] == '<' && p[i+3] != '=' && p[i+3] != '!' || p[i+2] == 'P' && p[i+3] == '<') {
			return true
		}
	}
	return false
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
