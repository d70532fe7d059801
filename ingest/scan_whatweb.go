package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// whatwebRecord is one record of WhatWeb's --log-json output: the URL
// fetched, the status, and what each plugin found, its values by kind
// ("string", "version", "module", "os", "model", "firmware", "account",
// "filepath"; "certainty" a number).
type whatwebRecord struct {
	Target     string                                `json:"target"`
	HTTPStatus int                                   `json:"http_status"`
	Plugins    map[string]map[string]json.RawMessage `json:"plugins"`
}

// whatwebPlugin is one plugin's finding: its name and values by kind, or,
// from the brief text, its bracketed values in the order printed.
type whatwebPlugin struct {
	name    string
	kinds   map[string][]string // from JSON
	printed []string            // from the brief text
}

// str is the plugin's first "string" value.
func (p whatwebPlugin) str() string { return first(p.strs()) }

// strs are the plugin's "string" values. The brief text prints a
// plugin's values without their kinds, in whatwebKinds' order: the header
// plugins print the header's value alone, except HTTPServer, which prints
// the operating system it read in the Server header first
// ("HTTPServer[CentOS][Apache/2.2.15 (CentOS)]"): its value is the last.
func (p whatwebPlugin) strs() []string {
	switch {
	case p.kinds != nil:
		return p.kinds["string"]
	case p.name == "HTTPServer" && len(p.printed) > 1:
		return p.printed[len(p.printed)-1:]
	}
	return p.printed
}

// brief is the plugin as WhatWeb's brief output prints it: Name[v][v].
func (p whatwebPlugin) brief() string {
	vals := p.printed
	if p.kinds != nil {
		vals = nil
		for _, k := range whatwebKinds {
			vals = append(vals, p.kinds[k]...)
		}
	}
	var b strings.Builder
	b.WriteString(p.name)
	for _, v := range vals {
		b.WriteString("[" + v + "]")
	}
	return b.String()
}

// whatwebKinds are the kinds of a plugin's values in the order the brief
// output prints them.
var whatwebKinds = []string{"version", "os", "string", "account", "model", "firmware", "module", "filepath"}

// whatwebHeaders are the plugins that report a response header's value:
// the plugin's name, and the header's where they differ.
var whatwebHeaders = map[string]string{
	"HTTPServer": "Server", "RedirectLocation": "Location", "Via-Proxy": "Via",
	"X-Frame-Options": "", "X-XSS-Protection": "", "Strict-Transport-Security": "", "X-UA-Compatible": "",
	"X-Powered-By": "", "Content-Language": "", "Access-Control-Allow-Methods": "", "X-Backend": "", "Allow": "",
	"X-Cache": "", "X-Content-Type-Options": "", "Content-Security-Policy": "",
}

// whatwebPage holds the plugins that say something of the page or the
// address rather than name what the server is; they stay out of the
// scanner's identification (Detected.Info).
var whatwebPage = map[string]bool{"Country": true, "IP": true, "Title": true, "Cookies": true, "HttpOnly": true, "UncommonHeaders": true, "WWW-Authenticate": true}

// WhatWeb reads WhatWeb's output: --log-json (a JSON array with a record
// a line, as WhatWeb writes it, or the records as JSON lines) and the
// brief text it prints and writes with --log-brief ("URL [200 OK]
// Plugin[value], ..."). Each URL fetched is an HTTP probe at its path;
// the records of one address and port (a redirect and the page it leads
// to) are one service. The header plugins (HTTPServer, RedirectLocation,
// X-Frame-Options, ...) give the response's headers, Title its title,
// Cookies and HttpOnly the cookies' names (WhatWeb keeps no value),
// UncommonHeaders the other headers' names; every other plugin (the
// products WhatWeb recognised) is Detected{By: "whatweb"}, its Info the
// plugins as the brief output prints them. WhatWeb keeps no body.
func WhatWeb(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("whatweb")
	var order []string
	svcs := map[string]*whatwebService{}
	add := func(n int, target string, status int, plugins []whatwebPlugin) *Observation {
		o, key, err := whatwebProbe(target, status, plugins)
		if err != nil {
			bad(LineError{n, err})
			return nil
		}
		if s, ok := svcs[key]; ok {
			s.o.Service.Probes = append(s.o.Service.Probes, o.Service.Probes...)
			s.detected = append(s.detected, o.Service.Detected.Info)
			return &s.o
		}
		o.Source, o.ObservedAt = src, opt.when(opt.ObservedAt)
		svcs[key] = &whatwebService{line: n, o: o, detected: []string{o.Service.Detected.Info}}
		order = append(order, key)
		return &svcs[key].o
	}
	br, first, err := peekFirstByte(r, "whatweb")
	if err != nil {
		return err
	}
	if head, _ := br.Peek(1024); bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n\ufeff"), []byte(whatwebVerbosePrefix)) {
		err = whatwebVerbose(br, opt, bad, add)
	} else if first != 0 && first != '[' && first != '{' { // the brief text, not JSON
		err = opt.nonBlankLines(br, "whatweb", bad, func(n int, line []byte) error {
			target, status, plugins, err := parseWhatWebBrief(string(line))
			if err != nil {
				bad(LineError{n, err})
				return nil
			}
			add(n, target, status, plugins)
			return nil
		})
	} else {
		err = opt.jsonRecords(br, "whatweb", bad, nil, func(n int, b []byte) error {
			var rec whatwebRecord
			if err := scanUnmarshal(b, &rec); err != nil {
				bad(LineError{n, fmt.Errorf("json: %w", err)})
				return nil
			}
			if rec.Target == "" || rec.Plugins == nil {
				bad(LineError{n, errors.New(`not a WhatWeb record: want "target" and "plugins"`)})
				return nil
			}
			add(n, rec.Target, rec.HTTPStatus, rec.plugins())
			return nil
		})
	}
	if err != nil {
		return err
	}
	for _, k := range order {
		s := svcs[k]
		s.o.Service.Detected.Info = strings.Join(slices.Compact(slices.DeleteFunc(s.detected, func(v string) bool { return v == "" })), "; ")
		if s.o.Service.Detected.Info == "" {
			s.o.Service.Detected = nil
		}
		if err := emitChecked(s.line, s.o, emit, bad); err != nil {
			return err
		}
	}
	return nil
}

type whatwebService struct {
	line     int
	o        Observation
	detected []string
}

func (rec *whatwebRecord) plugins() []whatwebPlugin {
	var out []whatwebPlugin
	for _, name := range slices.Sorted(maps.Keys(rec.Plugins)) {
		p := whatwebPlugin{name: name, kinds: map[string][]string{}}
		for k, raw := range rec.Plugins[name] {
			var vals []any
			if json.Unmarshal(raw, &vals) != nil {
				var v any
				if json.Unmarshal(raw, &v) != nil {
					continue
				}
				vals = []any{v}
			}
			for _, v := range vals {
				switch x := v.(type) {
				case string:
					p.kinds[k] = append(p.kinds[k], x)
				case float64:
					p.kinds[k] = append(p.kinds[k], strconv.FormatFloat(x, 'f', -1, 64))
				}
			}
		}
		out = append(out, p)
	}
	return out
}

// parseWhatWebBrief reads one line of the brief output: the URL, the
// status in brackets, then the plugins, comma-separated, each with its
// bracketed values (which may hold commas and brackets of their own).
func parseWhatWebBrief(line string) (target string, status int, plugins []whatwebPlugin, err error) {
	line = strings.TrimSpace(line)
	target, rest, ok := strings.Cut(line, " ")
	if !ok || !(strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://")) {
		return "", 0, nil, errors.New(`not a WhatWeb brief line: want "URL [status] plugins"`)
	}
	rest = strings.TrimSpace(rest)
	if !strings.HasPrefix(rest, "[") {
		return "", 0, nil, errors.New("whatweb brief: no [status] after the URL")
	}
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return "", 0, nil, errors.New("whatweb brief: [status] not closed")
	}
	code, _, _ := strings.Cut(rest[1:end], " ")
	if status, err = strconv.Atoi(code); err != nil {
		return "", 0, nil, fmt.Errorf("whatweb brief: status: not a number: %q", code)
	}
	rest = rest[end+1:]
	for len(strings.TrimSpace(rest)) > 0 {
		rest = strings.TrimLeft(rest, " ,")
		i := strings.IndexAny(rest, "[,")
		if i < 0 {
			plugins = append(plugins, whatwebPlugin{name: strings.TrimSpace(rest)})
			break
		}
		p := whatwebPlugin{name: strings.TrimSpace(rest[:i])}
		rest = rest[i:]
		// Bracketed values: each closes at the ']' that ends its nesting
		// and is followed by '[', ',' or the line's end.
		for strings.HasPrefix(rest, "[") {
			depth, j := 0, 0
			for j = 0; j < len(rest); j++ {
				if rest[j] == '[' {
					depth++
				} else if rest[j] == ']' {
					depth--
					if depth == 0 && (j+1 == len(rest) || rest[j+1] == '[' || rest[j+1] == ',') {
						break
					}
				}
			}
			if j >= len(rest) {
				p.printed = append(p.printed, rest[1:])
				rest = ""
				break
			}
			p.printed = append(p.printed, rest[1:j])
			rest = rest[j+1:]
		}
		if p.name != "" {
			plugins = append(plugins, p)
		}
	}
	return target, status, plugins, nil
}

// whatwebProbe is the observation of one WhatWeb record, and the key of
// its service (address, port).
func whatwebProbe(target string, status int, plugins []whatwebPlugin) (Observation, string, error) {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return Observation{}, "", fmt.Errorf("target: not an http(s) URL: %q", target)
	}
	byName := map[string]whatwebPlugin{}
	for _, p := range plugins {
		byName[p.name] = p
	}
	host := u.Hostname()
	a, err := netip.ParseAddr(host)
	var hostnames []string
	if err != nil {
		if a, err = netip.ParseAddr(byName["IP"].str()); err != nil {
			return Observation{}, "", fmt.Errorf("target: %q is a name and the record has no IP plugin", target)
		}
		hostnames = []string{host}
	}
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			return Observation{}, "", fmt.Errorf("target: port: must be 1..65535, got %q", p)
		}
	}
	resp := &Response{Status: status, Title: byName["Title"].str()}
	if status < 100 || status > 999 {
		resp.Status = 0
	}
	for _, p := range plugins {
		name, ok := whatwebHeaders[p.name]
		if !ok {
			continue
		}
		if name == "" {
			name = p.name
		}
		for _, v := range p.strs() {
			resp.Headers = append(resp.Headers, Header{Name: name, Value: v})
		}
	}
	if p, ok := byName["WWW-Authenticate"]; ok {
		scheme := first(p.kinds["module"])
		realm := p.str()
		if p.kinds == nil && len(p.printed) > 0 { // brief: [realm][scheme]
			realm, scheme = p.printed[0], ""
			if len(p.printed) > 1 {
				scheme = p.printed[1]
			}
		}
		v := strings.TrimSpace(scheme)
		if realm != "" {
			v = strings.TrimSpace(v + ` realm="` + realm + `"`)
		}
		if v != "" {
			resp.Headers = append(resp.Headers, Header{Name: "WWW-Authenticate", Value: v})
		}
	}
	httpOnly := map[string]bool{}
	for _, c := range byName["HttpOnly"].strs() {
		for _, n := range strings.Split(c, ",") {
			httpOnly[strings.TrimSpace(n)] = true
		}
	}
	for _, c := range byName["Cookies"].strs() {
		for _, n := range strings.Split(c, ",") {
			if n = strings.TrimSpace(n); n == "" {
				continue
			}
			v := n + "="
			if httpOnly[n] {
				v += "; HttpOnly"
			}
			resp.Headers = append(resp.Headers, Header{Name: "Set-Cookie", Value: v})
		}
	}
	for _, h := range byName["UncommonHeaders"].strs() {
		for _, n := range strings.Split(h, ",") {
			if n = strings.TrimSpace(n); n != "" {
				resp.Headers = append(resp.Headers, Header{Name: canonicalHeader(n)})
			}
		}
	}
	var ident []string
	for _, p := range plugins {
		if _, hdr := whatwebHeaders[p.name]; !hdr && !whatwebPage[p.name] {
			ident = append(ident, p.brief())
		}
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	q := &Request{Method: "GET", Path: path}
	if hostnames != nil {
		q.Host = u.Host
	}
	s := &Service{Port: port, Transport: "tcp", Probes: []Probe{{Request: q, Response: resp}},
		Detected: &Detected{By: "whatweb", Service: u.Scheme, Info: strings.Join(ident, ", ")}}
	ip := a.Unmap().String()
	o := Observation{Type: TypeService, IP: ip, Hostnames: hostnames, Service: s}
	return o, ip + " " + strconv.Itoa(port), nil
}

// whatwebVerbosePrefix opens each report of WhatWeb's verbose output (-v).
const whatwebVerbosePrefix = "WhatWeb report for "

// whatwebVerbose reads WhatWeb's verbose output (-v, what AutoRecon keeps
// as its whatweb files): per URL a "WhatWeb report for URL" block with
// "Status : 200 OK", "Title : ...", "IP : ..." and "Summary : " (the
// plugins as the brief output prints them), the plugins' descriptions
// under "Detected Plugins:", and, under "HTTP Headers:", the response's
// status line and headers as the server sent them, which stand for the
// header plugins' values in the probe.
func whatwebVerbose(r io.Reader, opt Options, bad func(LineError), add func(int, string, int, []whatwebPlugin) *Observation) error {
	type report struct {
		line              int
		target, title, ip string
		status            int
		summary           string
		statusLine        string
		headers           Headers
	}
	var cur *report
	section := ""
	flush := func() {
		if cur == nil {
			return
		}
		rep := cur
		cur = nil
		_, _, plugins, err := parseWhatWebBrief(rep.target + " [" + strconv.Itoa(rep.status) + "] " + rep.summary)
		if err != nil {
			bad(LineError{rep.line, err})
			return
		}
		if rep.title != "" {
			plugins = append(plugins, whatwebPlugin{name: "Title", printed: []string{rep.title}})
		}
		if rep.ip != "" {
			plugins = append(plugins, whatwebPlugin{name: "IP", printed: []string{rep.ip}})
		}
		o := add(rep.line, rep.target, rep.status, plugins)
		if o == nil || rep.statusLine == "" {
			return
		}
		resp := o.Service.Probes[len(o.Service.Probes)-1].Response
		proto, rest, _ := strings.Cut(rep.statusLine, " ")
		_, reason, _ := strings.Cut(rest, " ")
		resp.Protocol, resp.Reason, resp.Headers = proto, reason, rep.headers
	}
	err := opt.nonBlankLines(r, "whatweb", bad, func(n int, b []byte) error {
		line := string(b)
		if target, ok := strings.CutPrefix(line, whatwebVerbosePrefix); ok {
			flush()
			cur, section = &report{line: n, target: strings.TrimSpace(target)}, ""
			return nil
		}
		if cur == nil {
			bad(LineError{n, errors.New(`whatweb verbose: a line before the first "WhatWeb report for"`)})
			return nil
		}
		switch line {
		case "Detected Plugins:", "HTTP Headers:":
			section = line
			return nil
		}
		if section == "HTTP Headers:" {
			if cur.statusLine == "" && strings.HasPrefix(line, "HTTP/") {
				cur.statusLine = line
			} else if name, value, ok := strings.Cut(line, ":"); ok && cur.statusLine != "" {
				cur.headers = append(cur.headers, Header{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
			}
			return nil
		}
		if section != "" {
			return nil
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil
		}
		value = strings.TrimSpace(value)
		switch strings.TrimSpace(key) {
		case "Status":
			code, _, _ := strings.Cut(value, " ")
			cur.status, _ = strconv.Atoi(code)
		case "Title":
			if value != "<None>" { // WhatWeb's word for a page without one
				cur.title = value
			}
		case "IP":
			if value != "<Unknown>" {
				cur.ip = value
			}
		case "Summary":
			cur.summary = value
		}
		return nil
	})
	flush()
	return err
}
