package enrich

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/testutil"
)

// patternInputs are the evidence strings of the sample observations, each
// also in upper case, with a Kelvin sign for every k and a long s for
// every s (which (?i) expressions match as k and s), and a few of our
// own.
func patternInputs(t testing.TB) []string {
	in := []string{"", "a", "K", "\u212a", "\u017f", "FortiGate", "fortigate", "FORTIGATE", "xfortix", "Cisco ASA \u212aey",
		"Pul\u017fe Secure", "GlobalProtect Portal", "ÄÖÜ GlobalProtect", "sslvpn", "SSLVPN\x00", "\xff\xfe",
		// a binary body holding the long s's two bytes by chance, with and
		// without a literal the long s completes
		"\x89PNG\r\n\x1a\n\xc5\xbf\x00\xff nothing here", "\x89PNG\xc5\xbf\xfe Pul\u017fe \u212aey \xc5"}
	for _, list := range sampleObs(t) {
		for _, o := range list {
			if s := o.Service; s != nil {
				in = append(in, probeStrings(s)...)
			}
		}
	}
	n := len(in)
	for _, s := range in[:n] {
		up := []rune{}
		kelvin := []rune{}
		for _, r := range s {
			switch r {
			case 'k', 'K':
				kelvin = append(kelvin, '\u212a')
			case 's', 'S':
				kelvin = append(kelvin, '\u017f')
			default:
				kelvin = append(kelvin, r)
			}
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			up = append(up, r)
		}
		in = append(in, string(up), string(kelvin))
	}
	return in
}

// probeStrings are the strings a service's probes hold.
func probeStrings(s *ingest.Service) []string {
	var out []string
	for _, p := range s.Probes {
		if r := p.Response; r != nil {
			out = append(out, r.Title, r.Reason, r.Body.Text())
			for _, h := range r.Headers {
				out = append(out, h.Value)
			}
		}
		if t := p.TLS; t != nil {
			out = append(out, dnString(t.Subject), dnString(t.Issuer))
		}
		if b := p.Banner; b != nil {
			out = append(out, b.Received.Text())
		}
	}
	return out
}

// patternSources are the expressions of the built-in rules and a few that
// exercise the literal's extraction.
func patternSources(t testing.TB) []string {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	src := []string{"fortigate", "forti(gate|net)", "^sslvpn$", "a+b", "(?:ab){2,}c", "x{0,3}pulse", "(?-i:Case)", "k8s",
		"secure|portal", "\u212aey", "ÄÖÜ", "[a-z]+vpn", "cisco (asa|ftd)", "\\bfortigate\\b", ".*"}
	// Each distinct expression once: the rules share one compiled pattern
	// per expression (a named condition's in every rule that uses it).
	seen := map[*pattern]bool{}
	add := func(p *pattern) {
		if !seen[p] {
			seen[p] = true
			src = append(src, strings.TrimPrefix(p.re.String(), "(?i)"))
		}
	}
	for _, r := range rules.rules {
		eachPattern(r.match, add)
		if r.guard != nil {
			eachPattern(r.guard, add)
		}
		for _, v := range r.versions {
			if v.re != nil {
				add(v.re)
			}
		}
	}
	return slices.DeleteFunc(src, func(s string) bool { return s == "" })
}

// A pattern matches exactly what its expression matches, and its literal
// rules out most of the inputs a rule meets.
func TestPattern_AgreesWithRegexp(t *testing.T) {
	inputs := patternInputs(t)
	withLiteral, ruledOut := 0, 0
	for _, src := range patternSources(t) {
		var errs []error
		p := compilePattern("test", src, &errs)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if len(p.lits) > 0 {
			withLiteral++
		}
		for _, s := range inputs {
			if got, want := p.MatchString(s), p.re.MatchString(s); got != want {
				t.Fatalf("pattern %q (literals %q) on %q: %v, the expression says %v", src, p.lits, s, got, want)
			}
			if !p.possible(s) {
				ruledOut++
			}
		}
	}
	for src, lits := range map[string]string{"FortiGate": "fortigate", "forti(gate|net)": "forti", "cisco (asa|ftd)": "cisco ",
		"secure|portal": "secure|portal", "USG|ATP|VPN|ZyWALL": "usg|atp|vpn|zywall", "a|(b|c)d": "a|d",
		"x|.*": "", "x{0,3}pulse": "pulse", "(?:ab){2,}c": "ab", ".*": "", "ÄÖÜ": "", "a|b|c|d|e|f|g|h|i": ""} {
		var errs []error
		if p := compilePattern("test", src, &errs); strings.Join(p.lits, "|") != lits {
			t.Errorf("literals of %q = %q, want %q", src, p.lits, lits)
		}
	}
	if withLiteral == 0 || ruledOut == 0 {
		t.Fatalf("%d patterns with a literal ruled out %d inputs", withLiteral, ruledOut)
	}
	t.Logf("%d inputs; %d patterns with a literal ruled out %d (pattern, input) pairs", len(inputs), withLiteral, ruledOut)
}

// BenchmarkPattern runs every expression of the built-in rules over the
// sample observations' evidence, with the literal first (pattern) and
// the expression alone (regexp).
func BenchmarkPattern(b *testing.B) {
	testutil.Micro(b)
	inputs := patternInputs(b)
	var pats []*pattern
	for _, src := range patternSources(b) {
		var errs []error
		pats = append(pats, compilePattern("bench", src, &errs))
	}
	for _, c := range []struct {
		name  string
		match func(p *pattern, s string) bool
	}{{"pattern", (*pattern).MatchString}, {"regexp", func(p *pattern, s string) bool { return p.re.MatchString(s) }}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				for _, p := range pats {
					for _, s := range inputs {
						c.match(p, s)
					}
				}
			}
		})
	}
}

// indexFold finds what a search of the lower-cased input finds.
func TestIndexFold_AgreesWithLowerIndex(t *testing.T) {
	alphabet := "aAbBkK-0 <>\"é"
	rng := rand.New(rand.NewPCG(1, 2))
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 20000 {
		s, lit := word(rng.IntN(40)), strings.ToLower(word(1+rng.IntN(4)))
		if !isASCII(lit) {
			continue
		}
		want := -1
		if isASCII(s) {
			want = strings.Index(strings.ToLower(s), lit)
		} else {
			// ToLower of a non-ASCII string may change byte offsets; fold
			// ASCII letters only.
			b := []byte(s)
			for i, c := range b {
				if 'A' <= c && c <= 'Z' {
					b[i] = c + 'a' - 'A'
				}
			}
			want = strings.Index(string(b), lit)
		}
		if got := indexFold(s, lit); got != want {
			t.Fatalf("indexFold(%q, %q) = %d, want %d", s, lit, got, want)
		}
	}
}

// A sequence's other parts' literals rule an input out too: the best
// literal present is not enough when another part's are all missing, and
// the answer is always the expression's own.
func TestPattern_AlsoGroups(t *testing.T) {
	var errs []error
	p := compilePattern("test", `"serial"\s*:\s*"FG[A-Z0-9]+"[\s\S]{0,80}"version"\s*:\s*"v\d+"[\s\S]{0,40}"(build|revision)"`, &errs)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(p.also) < 2 {
		t.Fatalf("literals %q, other parts %q: want the other parts' sets", p.lits, p.also)
	}
	for _, tt := range []struct {
		in       string
		possible bool
	}{
		{`{"serial": "FGT60F0000000000", "version": "v7", "build": 1}`, true},
		{`{"serial": "FGT60F0000000000", "version": "v7", "revision": 1}`, true},
		{`{"serial": "FGT60F0000000000", "version": "v7"}`, false}, // no build nor revision
		{`{"version": "v7", "build": 1, "name": "x"}`, false},      // no serial
		{`{"SERIAL": "FGT", "VERSION": "v7", "BUILD": 2}`, true},   // the expression is case-insensitive, so are its literals
	} {
		if got := p.possible(tt.in); got != tt.possible {
			t.Errorf("possible(%q) = %v, want %v", tt.in, got, tt.possible)
		}
		if got, want := p.MatchString(tt.in), p.re.MatchString(tt.in); got != want {
			t.Errorf("MatchString(%q) = %v, the expression says %v", tt.in, got, want)
		}
	}
}

// TestPattern_LeadSearch: an expression that begins with a literal is
// searched from the places that literal occurs only, and finds what the
// whole expression finds: the same answer and the same leftmost
// submatches, over the rules' expressions and inputs built to trip it
// (the lead several times, in other cases, a Kelvin sign folding to k).
func TestPattern_LeadSearch(t *testing.T) {
	inputs := append(patternInputs(t),
		"status: no; STATUS\":{\"success\":true, \"info\":[{\"level\":\"error\",\"code\":\"E_UNAUTHORIZED\"}]}",
		"<TITLE>x</title><title>FortiGate</title>", "xx fortiGATE-60F yy fortigate", "\u212aey: kelvin", "topLocation top.location=\"/remote/login\"")
	withLead := 0
	for _, src := range append(patternSources(t), `key\w+`, `status\s*=\s*(\d+)`, `title>([^<]+)<`) {
		var errs []error
		p := compilePattern("test", src, &errs)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if p.anchored == nil {
			continue
		}
		withLead++
		for _, s := range inputs {
			if got, want := p.MatchString(s), p.re.MatchString(s); got != want {
				t.Fatalf("pattern %q (lead %q) on %q: %v, the expression says %v", src, p.lead, s, got, want)
			}
			if got, want := p.FindStringSubmatch(s), p.re.FindStringSubmatch(s); !slices.Equal(got, want) {
				t.Fatalf("pattern %q (lead %q) on %q: submatches %q, the expression's %q", src, p.lead, s, got, want)
			}
		}
	}
	if withLead < 100 {
		t.Errorf("only %d expressions begin with a literal", withLead)
	}
	t.Logf("%d expressions searched from their lead", withLead)
}

// TestPattern_BinaryBodyRuledOut: a binary body that holds the long s's two
// bytes by chance (about once in 64 KiB) is still ruled out by a pattern's
// literals when it lacks them, rather than read by the expression: the
// cost that made one pcap capture's images take 37 ms against 3.
func TestPattern_BinaryBodyRuledOut(t *testing.T) {
	var errs []error
	p := compilePattern("test", `(?i)FortiGuard Intrusion Prevention - Access Blocked`, &errs)
	if len(errs) > 0 || !p.asciiOnly {
		t.Fatalf("%v, asciiOnly %v", errs, p.asciiOnly)
	}
	body := make([]byte, 64<<10)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range body {
		body[i] = byte(rnd.IntN(256))
	}
	copy(body[1000:], "\xc5\xbf")
	if s := string(body); !hasFoldRune(s) || p.possible(s) {
		t.Errorf("binary body: hasFoldRune %v, possible %v; want true, false", hasFoldRune(s), p.possible(s))
	}
	// The long s completing the literal: possible, and the expression agrees.
	s := string(body) + "FortiGuard Intru\u017fion Prevention - Acce\u017f\u017f Blocked"
	if !p.possible(s) || !p.MatchString(s) {
		t.Errorf("long s in the literal: possible %v, match %v", p.possible(s), p.MatchString(s))
	}
}
