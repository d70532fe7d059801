package ingest

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// nuclei's plain text output (pkg/output/format_screen.go), what it
// prints and writes with -o without -j:
//
//	[2022-09-01 05:54:26] [template-id:matcher] [matched] [http] [info] https://192.0.2.1/path ["extracted",...] [LN: 1] [key="value"]
//
// The time stamp (-timestamp, and by default before v2.9), the
// matcher-status ([matched]/[failed], -ms) and [global] are optional; the
// protocol and severity come in either order; extracted results are
// quoted (v2.9 on) or not. Colour codes (aurora's ANSI escapes) are
// removed first.

// ansiEscape matches the colour codes nuclei prints on a terminal.
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// nucleiTimestamp matches the -timestamp group.
var nucleiTimestamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}`)

var (
	nucleiProtocols  = map[string]bool{"http": true, "headless": true, "tcp": true, "network": true, "javascript": true, "ssl": true, "dns": true, "file": true, "code": true, "whois": true, "websocket": true, "workflow": true, "offlinehttp": true, "multi": true}
	nucleiSeverities = map[string]bool{"info": true, "low": true, "medium": true, "high": true, "critical": true, "unknown": true}
	// nucleiLogLevels are the prefixes of nuclei's log lines ([INF] Templates loaded ...).
	nucleiLogLevels = map[string]bool{"INF": true, "WRN": true, "ERR": true, "FTL": true, "DBG": true, "VER": true}
)

// errNucleiNotText is a text line that is not a result.
var errNucleiNotText = errors.New(`not a nuclei result line: want "[template-id] [protocol] [severity] target" (or a JSON result)`)

// nucleiTextLine reads one text line into the fields the JSON result
// would carry. skip says the line is not a result but nuclei's banner or
// a log line (nothing lost).
func nucleiTextLine(line string) (x nucleiResult, skip string, err error) {
	line = strings.TrimSpace(ansiEscape.ReplaceAllString(line, ""))
	if line == "" {
		return x, "", nil
	}
	if isToolBanner(line) {
		return x, "nuclei banner line", nil
	}
	groups, rest := leadingGroups(line)
	if len(groups) > 0 && nucleiLogLevels[groups[0]] {
		return x, "nuclei log line", nil
	}
	if len(groups) > 0 && nucleiTimestamp.MatchString(groups[0]) {
		x.Timestamp = groups[0]
		groups = groups[1:]
	}
	if len(groups) < 3 || rest == "" {
		return x, "", errNucleiNotText
	}
	id, sub, _ := strings.Cut(groups[0], ":")
	if id == "" || strings.ContainsAny(id, " \t") {
		return x, "", errNucleiNotText
	}
	x.TemplateID, x.MatcherName = id, sub
	for _, g := range groups[1:] {
		lg := strings.ToLower(g)
		switch {
		case lg == "matched":
			t := true
			x.MatcherStatus = &t
		case lg == "failed":
			f := false
			x.MatcherStatus = &f
		case lg == "global":
		case nucleiProtocols[lg] && x.Type == "":
			x.Type = lg
		case nucleiSeverities[lg] && x.Info == nil:
			x.Info = &nucleiInfo{Severity: lg}
		default:
			return x, "", errNucleiNotText
		}
	}
	if x.Type == "" || x.Info == nil {
		return x, "", errNucleiNotText
	}
	target, tail, _ := strings.Cut(rest, " ")
	x.MatchedAt, x.Host = target, target
	if tail = strings.TrimSpace(tail); tail != "" {
		after, _ := leadingGroups(tail)
		if len(after) > 0 && !strings.HasPrefix(after[0], "LN: ") && !nucleiMetadata.MatchString(after[0]) {
			x.Extracted = nucleiExtracted(after[0])
		}
	}
	return x, "", nil
}

// nucleiMetadata matches a group of template metadata (key="value",...).
var nucleiMetadata = regexp.MustCompile(`^[A-Za-z_][\w-]*="`)

// leadingGroups reads the bracketed groups at the start of s ("[a] [b:c]
// rest"), brackets nested inside a group (and inside its quotes) kept,
// and returns them with what follows them.
func leadingGroups(s string) (groups []string, rest string) {
	for {
		s = strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(s, "[") {
			return groups, s
		}
		end := closingBracket(s)
		if end < 0 {
			return groups, s
		}
		groups = append(groups, s[1:end])
		s = s[end+1:]
	}
}

// closingBracket is the index of the ']' that closes the '[' at s[0],
// -1 when there is none.
func closingBracket(s string) int {
	depth, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '[':
			depth++
		case c == ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// nucleiExtracted reads the extracted results: "a","b" (each quoted by
// strconv.QuoteToASCII with its inner quotes then unescaped, v2.9 on) or
// a,b (earlier).
func nucleiExtracted(g string) []string {
	g = strings.TrimSpace(g)
	if g == "" {
		return nil
	}
	if !strings.HasPrefix(g, `"`) || !strings.HasSuffix(g, `"`) || len(g) < 2 {
		var out []string
		for _, v := range strings.Split(g, ",") {
			if v = strings.TrimSpace(v); v != "" {
				out = append(out, v)
			}
		}
		return out
	}
	var out []string
	for _, v := range strings.Split(g[1:len(g)-1], `","`) {
		if u, err := strconv.Unquote(`"` + strings.ReplaceAll(v, `"`, `\"`) + `"`); err == nil {
			v = u
		}
		out = append(out, v)
	}
	return out
}

// isToolBanner tells the lines of ProjectDiscovery's start-up banner (the
// ASCII art, "projectdiscovery.io", the caution notice) from records.
func isToolBanner(line string) bool {
	if strings.Contains(line, "projectdiscovery.io") || strings.HasPrefix(line, "Use with caution.") || strings.HasPrefix(line, "Developers assume no liability") {
		return true
	}
	return strings.Trim(line, " _/\\|.()-`',v0123456789") == "" && strings.ContainsAny(line, "_/\\|")
}

// nucleiVersionLike matches an extracted result that is a version: a
// dotted number first ("9.16(3)19", "v6.49.7", "4.6.6deb5ubuntu0.5"), or
// one word and a dotted number ("Hugo 0.101.0"); not a banner that holds
// one ("SSH-2.0-OpenSSH_4.3", "Apache/2.4.6 (CentOS) PHP/7.2.33").
var nucleiVersionLike = regexp.MustCompile(`^(?:[vV]?\d+(?:\.\d+)+|[A-Za-z][\w-]* [vV]?\d+(?:\.\d+)+$)`)

// extractedVersion is the template's one extracted result when it carries
// a version: detected.version for the rules that read one.
func extractedVersion(ex []string) string {
	if len(ex) != 1 {
		return ""
	}
	v := strings.TrimSpace(ex[0])
	if len(v) > 100 || !nucleiVersionLike.MatchString(v) {
		return ""
	}
	return v
}
