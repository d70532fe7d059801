package ingest

import (
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// httpx's plain text output (runner.go), what it prints and writes with
// -o without -json: the URL, then one bracketed column per flag in a
// fixed order: status code (the redirect chain's codes with -fr),
// location, method, content length, content type, title, server, ...,
// vhost, ip, cname, cdn, response time, tech, final URL, favicon, hashes.
// A column's flag is not printed, so a column is known only by its place
// among the others and by its shape. What a line tells unambiguously:
//
//   - the first column when it is status-shaped ("200", "301,200", "")
//     is the status (the first code: the URL's own answer);
//   - a column that is an IP literal is the address (-ip);
//   - "vhost" marks a virtual host; a URL column is the final URL or
//     location; digits alone are a content length; "type/subtype" is the
//     Content-Type; a duration is the response time;
//   - of the free-text columns before the vhost/ip/URL columns, the first
//     is the title (httpx prints -title's column first; v1.1 prints an
//     empty title as [], later versions leave it out, and a line written
//     with -web-server but without -title reads its server as the title);
//     a comma-separated list, or the third free column, is -tech-detect's
//     list; with three free columns the second is the Server header;
//     another single free column (a server or one technology: httpx's
//     text does not tell which) is kept in detected.info as "httpx text:".

var (
	httpxStatusCol   = regexp.MustCompile(`^(\d{3})?(,\d{3})*,?$`)
	httpxContentType = regexp.MustCompile(`^[a-z]+/[\w.+-]+(;.*)?$`)
	httpxDuration    = regexp.MustCompile(`^\d+(\.\d+)?(ns|µs|us|ms|s|m|h)$`)
	httpxMethod      = regexp.MustCompile(`^(GET|POST|HEAD|PUT|DELETE|OPTIONS|PATCH|TRACE|CONNECT)$`)
)

// httpxTextLine reads one text line into an observation. skip says the
// line is not a result but httpx's banner or a log line.
func httpxTextLine(line string, src string, opt Options) (o Observation, skip string, err error) {
	line = strings.TrimSpace(ansiEscape.ReplaceAllString(line, ""))
	if isToolBanner(line) {
		return o, "httpx banner line", nil
	}
	if g, _ := leadingGroups(line); len(g) > 0 && nucleiLogLevels[g[0]] {
		return o, "httpx log line", nil
	}
	target, rest, _ := strings.Cut(line, " ")
	u, err := url.Parse(target)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return o, "", fmt.Errorf("not an httpx result line: want a URL then [columns], got %q", clipForError(target, 200))
	}
	cols, tail := leadingGroups(rest)
	if strings.TrimSpace(tail) != "" {
		return o, "", fmt.Errorf("not an httpx result line: text after the columns: %q", clipForError(tail, 200))
	}
	resp := &Response{}
	var ipCol, info []string
	var pre, post []string
	anchored := false
	for i, c := range cols {
		c = strings.TrimSpace(c)
		switch {
		case i == 0 && httpxStatusCol.MatchString(c):
			if code, _, _ := strings.Cut(c, ","); code != "" {
				resp.Status, _ = strconv.Atoi(code)
			}
		case isIPLiteral(c):
			ipCol = append(ipCol, c)
			anchored = true
		case c == "vhost":
			anchored = true
		case strings.HasPrefix(c, "http://") || strings.HasPrefix(c, "https://"):
			anchored = true
		case httpxMethod.MatchString(c), httpxDuration.MatchString(c), c != "" && strings.Trim(c, "0123456789") == "":
		case httpxContentType.MatchString(c):
			resp.Headers = append(resp.Headers, Header{Name: "Content-Type", Value: c})
		case anchored:
			post = append(post, c)
		default:
			pre = append(pre, c)
		}
	}
	var tech []string
	if len(pre) > 0 {
		resp.Title = pre[0]
	}
	for i, c := range pre {
		switch {
		case i == 0:
		case strings.Contains(c, ",") || (len(pre) >= 3 && i == 2):
			tech = append(tech, splitList(c)...)
		case len(pre) >= 3 && i == 1:
			if c != "" {
				resp.Headers = append(resp.Headers, Header{Name: "Server", Value: c})
			}
		case c != "":
			info = append(info, "httpx text: "+c)
		}
	}
	for _, c := range post {
		switch {
		case strings.Contains(c, ","):
			tech = append(tech, splitList(c)...)
		case c != "":
			info = append(info, "httpx text: "+c)
		}
	}
	ip, name := netip.Addr{}, ""
	if a, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil {
		ip = a.Unmap()
	} else {
		name = strings.ToLower(u.Hostname())
		if len(ipCol) == 1 {
			ip, _ = netip.ParseAddr(ipCol[0])
			ip = ip.Unmap()
		}
	}
	if !ip.IsValid() {
		return o, "httpx text result whose host is a name (no -ip column; netintel does not resolve names)", nil
	}
	port, err := harPort(u, u.Scheme)
	if err != nil {
		return o, "", fmt.Errorf("url: %w", err)
	}
	o = Observation{Type: TypeService, IP: ip.String(), Source: src, ObservedAt: opt.when(opt.ObservedAt)}
	if name != "" {
		o.Hostnames = []string{name}
	}
	s := &Service{Port: port, Transport: "tcp"}
	if resp.Status > 0 || resp.Title != "" || len(resp.Headers) > 0 {
		s.Probes = []Probe{{Request: &Request{Method: "GET", Path: pathOf(target), Host: name}, Response: resp}}
	}
	if len(tech) > 0 {
		info = append([]string{"tech: " + strings.Join(tech, ", ")}, info...)
	}
	if len(info) > 0 || len(s.Probes) > 0 {
		s.Detected = &Detected{By: "httpx", Service: u.Scheme, Info: strings.Join(info, "; ")}
	}
	if len(s.Probes) == 0 && len(info) == 0 {
		return o, "httpx text result with no status, title or other column to keep", nil
	}
	o.Service = s
	return o, "", nil
}

func isIPLiteral(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// splitList splits a comma-separated column, its items trimmed.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
