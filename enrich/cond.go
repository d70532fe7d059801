package enrich

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/netintel/netintel/ingest"
	"gopkg.in/yaml.v3"
)

// A condition of a rule (docs/rules.md): a leaf of fields that hold on one
// probe, or all / any / not of conditions.
type condition interface {
	holds(e *evidence) bool
}

type allOf []condition
type anyOf []condition
type notOf struct{ c condition }

func (a allOf) holds(e *evidence) bool {
	for _, c := range a {
		if !c.holds(e) {
			return false
		}
	}
	return true
}

func (a anyOf) holds(e *evidence) bool {
	for _, c := range a {
		if c.holds(e) {
			return true
		}
	}
	return false
}

func (n notOf) holds(e *evidence) bool { return !n.c.holds(e) }

// fieldKind is what a field reads.
type fieldKind int

const (
	fMethod fieldKind = iota
	fPath
	fPathPrefix
	fStatus
	fReason
	fHeader
	fHeaders
	fRequestHeader
	fRequestBody
	fCookie
	fCookieValue
	fTitle
	fBody
	fBodyHead
	fBodyTruncated
	fBodySHA256
	fBodyMD5
	fBodyMMH3
	fTLSSubject
	fTLSIssuer
	fTLSSAN
	fTLSSerial
	fTLSSHA256
	fTLSJARM
	fTLSJA3S
	fTLSJA4S
	fTLSVersion
	fTLSCipher
	fTLSNotBefore
	fTLSNotAfter
	fBanner
	fBannerSent
	fProbeName
	// Service-level fields from here on.
	fPort
	fTransport
	fDetectedService
	fDetectedProduct
	fDetectedVersion
	fDetectedInfo
	fDetectedCPE
	fFlow
)

// field is a parsed field name: its kind and argument (a header or
// cookie name, a DN attribute).
type field struct {
	kind fieldKind
	arg  string
	name string
}

func (f field) serviceLevel() bool { return f.kind >= fPort }

// readsEvidence reports whether the field reads what a service showed,
// rather than only where it was asked.
func (f field) readsEvidence() bool {
	switch f.kind {
	case fMethod, fPath, fPathPrefix, fStatus, fPort, fTransport, fBodyTruncated:
		return false
	}
	return true
}

var simpleFields = map[string]fieldKind{
	"method": fMethod, "path": fPath, "headers": fHeaders, "path_prefix": fPathPrefix, "status": fStatus, "reason": fReason,
	"cookie": fCookie, "title": fTitle, "body": fBody, "body.head": fBodyHead, "body.truncated": fBodyTruncated, "body.sha256": fBodySHA256, "body.md5": fBodyMD5, "body.mmh3": fBodyMMH3,
	"tls.san": fTLSSAN, "tls.serial": fTLSSerial, "tls.sha256": fTLSSHA256, "tls.jarm": fTLSJARM,
	"tls.ja3s": fTLSJA3S, "tls.ja4s": fTLSJA4S, "tls.version": fTLSVersion, "tls.cipher": fTLSCipher, "tls.not_before": fTLSNotBefore,
	"tls.not_after": fTLSNotAfter, "banner": fBanner, "banner.sent": fBannerSent, "request.body": fRequestBody, "probe": fProbeName,
	"port": fPort, "transport": fTransport, "detected.service": fDetectedService, "detected.product": fDetectedProduct,
	"detected.version": fDetectedVersion, "detected.info": fDetectedInfo, "detected.cpe": fDetectedCPE, "flow": fFlow,
}

var dnAttrs = []string{"cn", "o", "ou", "c", "st", "l", "email"}

// parseField reads a field name of docs/rules.md.
func parseField(name string) (field, error) {
	n := strings.ToLower(name)
	if k, ok := simpleFields[n]; ok {
		return field{kind: k, name: n}, nil
	}
	prefixed := []struct {
		prefix string
		kind   fieldKind
	}{{"header.", fHeader}, {"request.header.", fRequestHeader}, {"cookie.", fCookieValue}}
	for _, p := range prefixed {
		if arg, ok := strings.CutPrefix(n, p.prefix); ok && arg != "" {
			return field{kind: p.kind, arg: arg, name: n}, nil
		}
	}
	for _, p := range []struct {
		prefix string
		kind   fieldKind
	}{{"tls.subject", fTLSSubject}, {"tls.issuer", fTLSIssuer}} {
		if rest, ok := strings.CutPrefix(n, p.prefix); ok {
			if rest == "" {
				return field{kind: p.kind, name: n}, nil
			}
			if attr, ok := strings.CutPrefix(rest, "."); ok && slices.Contains(dnAttrs, attr) {
				return field{kind: p.kind, arg: attr, name: n}, nil
			}
		}
	}
	return field{}, fmt.Errorf("unknown field %q (docs/rules.md lists the fields)", name)
}

// each calls fn with each value of the field on probe v (or, for a
// service-level field, of the observation) until fn says true.
func (f field) each(e *evidence, v *probeView, fn func(string) bool) bool {
	if f.serviceLevel() {
		return f.eachService(e, fn)
	}
	if v == nil {
		return false
	}
	p := v.p
	switch f.kind {
	case fMethod:
		m := v.method()
		return m != "" && fn(m)
	case fPath, fPathPrefix:
		s := v.path()
		return s != "" && fn(s)
	case fProbeName:
		return p.Name != "" && fn(p.Name)
	case fRequestHeader:
		return p.Request != nil && eachHeader(p.Request.Headers, f.arg, fn)
	case fRequestBody:
		return p.Request != nil && p.Request.Body != nil && fn(p.Request.Body.Text())
	case fBanner:
		return p.Banner != nil && p.Banner.Received != nil && fn(v.bannerText())
	case fBannerSent:
		return p.Banner != nil && p.Banner.Sent != nil && fn(v.sentText())
	}
	if f.kind >= fTLSSubject && f.kind <= fTLSNotAfter {
		return p.TLS != nil && f.eachTLS(p.TLS, fn)
	}
	return p.Response != nil && f.eachResponse(v, p.Response, fn)
}

// eachService is each for the fields of the service or flow as a whole:
// port, transport, flow protocol and the scanner's own identification.
func (f field) eachService(e *evidence, fn func(string) bool) bool {
	switch f.kind {
	case fPort:
		if e.svc != nil {
			return fn(itoa(e.svc.Port))
		}
		return e.flow != nil && fn(itoa(e.flow.Port))
	case fTransport:
		if e.svc != nil {
			return fn(e.svc.Transport)
		}
		return e.flow != nil && fn(e.flow.Transport)
	case fFlow:
		return e.flow != nil && fn(e.flow.Protocol)
	}
	if e.detected == nil {
		return false
	}
	d := e.detected
	switch f.kind {
	case fDetectedService:
		return d.Service != "" && fn(d.Service)
	case fDetectedProduct:
		return d.Product != "" && fn(d.Product)
	case fDetectedVersion:
		return d.Version != "" && fn(d.Version)
	case fDetectedInfo:
		return d.Info != "" && fn(d.Info)
	}
	for _, c := range d.CPE {
		if fn(c) {
			return true
		}
	}
	return false
}

// eachTLS is each for the fields of a probe's TLS handshake.
func (f field) eachTLS(t *ingest.TLS, fn func(string) bool) bool {
	nonEmpty := func(s string) bool { return s != "" && fn(s) }
	switch f.kind {
	case fTLSSubject:
		return eachDNAttr(t.Subject, f.arg, fn)
	case fTLSIssuer:
		return eachDNAttr(t.Issuer, f.arg, fn)
	case fTLSSAN:
		for _, s := range t.SANs {
			if fn(s) {
				return true
			}
		}
		return false
	case fTLSSerial:
		return nonEmpty(t.Serial)
	case fTLSSHA256:
		return nonEmpty(t.SHA256)
	case fTLSJARM:
		return nonEmpty(t.JARM)
	case fTLSJA3S:
		return nonEmpty(t.JA3S)
	case fTLSJA4S:
		return nonEmpty(t.JA4S)
	case fTLSVersion:
		return nonEmpty(t.Version)
	case fTLSCipher:
		return nonEmpty(t.Cipher)
	case fTLSNotBefore:
		return nonEmpty(t.NotBefore)
	case fTLSNotAfter:
		return nonEmpty(t.NotAfter)
	}
	return false
}

// eachResponse is each for the fields of a probe's response.
func (f field) eachResponse(v *probeView, r *ingest.Response, fn func(string) bool) bool {
	switch f.kind {
	case fStatus:
		return r.Status != 0 && fn(itoa(r.Status))
	case fReason:
		return r.Reason != "" && fn(r.Reason)
	case fHeader:
		return eachHeader(r.Headers, f.arg, fn)
	case fHeaders:
		return len(r.Headers) > 0 && fn(v.headerBlock())
	case fCookie:
		for _, c := range v.cookieList() {
			if fn(c.name) {
				return true
			}
		}
	case fCookieValue:
		for _, c := range v.cookieList() {
			if strings.EqualFold(c.name, f.arg) && fn(c.value) {
				return true
			}
		}
	case fTitle:
		t := v.titleText()
		return t != "" && fn(t)
	case fBody:
		return r.Body != nil && fn(v.bodyText())
	case fBodyTruncated:
		return r.Body != nil && fn(strconv.FormatBool(r.Body.Truncated))
	case fBodyHead:
		if r.Body == nil {
			return false
		}
		b := v.bodyText()
		if len(b) > bodyHeadLen {
			b = b[:bodyHeadLen]
		}
		return fn(b)
	case fBodySHA256:
		return r.Body != nil && r.Body.SHA256 != "" && fn(r.Body.SHA256)
	case fBodyMD5:
		sum := bodyMD5(r.Body)
		return sum != "" && fn(sum)
	case fBodyMMH3:
		return r.Body != nil && r.Body.MMH3 != nil && fn(strconv.Itoa(int(*r.Body.MMH3)))
	}
	return false
}

// bodyMD5 is a body's MD5 (hex): the one the scanner published, else the
// whole body's; "" for a cut body without one, or no body.
func bodyMD5(b *ingest.Body) string {
	switch {
	case b == nil:
		return ""
	case b.MD5 != "":
		return b.MD5
	case b.Data == "" || b.Truncated:
		return ""
	}
	sum := md5.Sum(b.Bytes())
	return hex.EncodeToString(sum[:])
}

// bodyHeadLen is how much of a body `body.head` reads: a redirect page,
// an error page's opening or a document's head, without the cost of an
// expression over a page of megabytes.
const bodyHeadLen = 4096

// matcher tests one value of a field.
type matcher struct {
	re     *pattern // a regular expression; nil with eq
	eq     []string // values compared case-insensitively
	prefix bool     // eq holds prefixes (path_prefix)
	any    bool     // "" : the field only has to be present
}

func (m *matcher) test(s string) bool {
	switch {
	case m.any:
		return true
	case m.re != nil:
		return m.re.MatchString(s)
	}
	for _, w := range m.eq {
		if m.prefix {
			if len(s) >= len(w) && strings.EqualFold(s[:len(w)], w) {
				return true
			}
		} else if strings.EqualFold(s, w) {
			return true
		}
	}
	return false
}

type fieldTest struct {
	f field
	m matcher
	// anyStatus: a status test (of registered statuses) holds on a
	// response whose status was not recorded (hand-made or converted
	// evidence that quotes an answer's headers and body without its
	// status line); a status that names the server (GlobalProtect's 512)
	// is evidence, and an unknown status never gives it.
	anyStatus bool
	// codes are a status test's listed codes as numbers, compared as
	// such (a status list gates many conditions cheaply).
	codes []int
}

// holds says the test holds on probe v.
func (t *fieldTest) holds(e *evidence, v *probeView) bool {
	if t.anyStatus && v.p.Response != nil && v.p.Response.Status == 0 {
		return true
	}
	if t.codes != nil {
		r := v.p.Response
		return r != nil && r.Status != 0 && slices.Contains(t.codes, r.Status)
	}
	return t.f.each(e, v, t.m.test)
}

// statusCodes are a status matcher's listed codes as numbers; nil for an
// expression or anything that is not a list of numbers.
func statusCodes(m matcher) []int {
	if m.re != nil || m.any || m.prefix || len(m.eq) == 0 {
		return nil
	}
	codes := make([]int, 0, len(m.eq))
	for _, s := range m.eq {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || strconv.Itoa(n) != s {
			return nil
		}
		codes = append(codes, n)
	}
	return codes
}

// leaf holds when its service-level tests hold and, if it has probe
// tests, one probe passes all of them.
type leaf struct {
	service, probe []fieldTest
	paths          []string // the probe must be at one of these paths (path field)
}

func (l *leaf) holds(e *evidence) bool {
	for i := range l.service {
		t := &l.service[i]
		if !t.f.each(e, nil, t.m.test) {
			return false
		}
	}
	if len(l.probe) == 0 && len(l.paths) == 0 {
		return true
	}
probes:
	for i := range e.probes {
		v := &e.probes[i]
		if len(l.paths) > 0 && !slices.ContainsFunc(l.paths, v.pathMatches) {
			continue
		}
		for j := range l.probe {
			if !l.probe[j].holds(e, v) {
				continue probes
			}
		}
		return true
	}
	return false
}

// condParser compiles condition nodes; problems go to errs, each named
// by where.
type condParser struct {
	where string // "rules/x.yaml: rule ID"
	errs  *[]error
	// named are the rule set's named conditions; using holds those being
	// expanded, so a condition that uses itself is refused, not looped.
	named map[string]*namedCond
	using []string
	// pats are the expressions compiled so far for the rule set, by
	// source: a pattern is immutable once compiled, so a named condition
	// used by many rules (honeypot-tells) and an expression written again
	// are compiled once and shared (nil compiles each use).
	pats map[string]*pattern
	// memo holds the named conditions compiled so far: each is compiled
	// once and shared by every use, and remembers its answer for the
	// evidence at hand (memoCond); nil compiles each use.
	memo map[string]*memoCond
}

// memoCond is a named condition as its uses share it: compiled once, and
// evaluated at most once per Match however many rules and guards use it
// (honeypot-tells guards most web rules, and guard_vendor repeats a
// vendor's guards in every rule of that vendor). Its answer for the
// evidence at hand is kept in the evidence's memo at its id.
type memoCond struct {
	id int
	c  condition
}

func (m *memoCond) holds(e *evidence) bool {
	if m.id >= len(e.memo) {
		return m.c.holds(e)
	}
	switch e.memo[m.id] {
	case memoFalse:
		return false
	case memoTrue:
		return true
	}
	ok := m.c.holds(e)
	e.memo[m.id] = memoFalse
	if ok {
		e.memo[m.id] = memoTrue
	}
	return ok
}

// An evidence's memo of a named condition: not evaluated yet, or its answer.
const (
	memoUnknown uint8 = iota
	memoFalse
	memoTrue
)

// namedCond is a condition defined once under a file's `conditions:` and
// used by name (`{use: NAME}`) in any rule.
type namedCond struct {
	file string
	node *yaml.Node
	bad  bool // its own problems are already reported
}

// checkNamed compiles every named condition once on its own, so one that
// no rule uses is still checked, its problems named by its file and name.
func checkNamed(named map[string]*namedCond, pats map[string]*pattern, errs *[]error) {
	for _, k := range slices.Sorted(maps.Keys(named)) {
		nc := named[k]
		before := len(*errs)
		cp := condParser{where: nc.file + ": conditions." + k, errs: errs, named: named, using: []string{k}, pats: pats}
		c := cp.parse(nc.node, "condition")
		nc.bad = c == nil || len(*errs) > before
	}
}

func (cp *condParser) fail(path, format string, args ...any) {
	*cp.errs = append(*cp.errs, fmt.Errorf("%s: %s: %s", cp.where, path, fmt.Sprintf(format, args...)))
}

// parse compiles the condition at n, whose place is path ("match", "match.any[2]").
func (cp *condParser) parse(n *yaml.Node, path string) condition {
	if n == nil || n.Kind == 0 {
		return nil
	}
	if n.Kind == yaml.SequenceNode {
		// A bare list is any of its conditions.
		return cp.list(n, path, false)
	}
	if n.Kind != yaml.MappingNode {
		cp.fail(path, "want a mapping of fields, or all/any/not/use")
		return nil
	}
	if len(n.Content) == 2 {
		switch n.Content[0].Value {
		case "all", "any":
			v := n.Content[1]
			if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
				cp.fail(path+"."+n.Content[0].Value, "want a non-empty list of conditions")
				return nil
			}
			return cp.list(v, path+"."+n.Content[0].Value, n.Content[0].Value == "all")
		case "not":
			c := cp.parse(n.Content[1], path+".not")
			if c == nil {
				return nil
			}
			return notOf{c}
		case "use":
			return cp.use(n.Content[1], path+".use")
		}
	}
	return cp.leaf(n, path)
}

// use compiles the named condition v names, in place.
func (cp *condParser) use(v *yaml.Node, path string) condition {
	name := v.Value
	nc, ok := cp.named[name]
	switch {
	case v.Kind != yaml.ScalarNode || name == "":
		cp.fail(path, "want the name of a condition defined under conditions:")
		return nil
	case !ok:
		cp.fail(path, "no condition named %q (conditions: of any rules file)", name)
		return nil
	case slices.Contains(cp.using, name):
		cp.fail(path, "condition %q uses itself (%s)", name, strings.Join(append(cp.using, name), " -> "))
		return nil
	case nc.bad:
		// Its problems are reported once, under conditions:; start-up
		// stops on them.
		return nil
	}
	if m, ok := cp.memo[name]; ok {
		return m
	}
	cp.using = append(cp.using, name)
	defer func() { cp.using = cp.using[:len(cp.using)-1] }()
	c := cp.parse(nc.node, path+"("+name+")")
	if c == nil || cp.memo == nil {
		return c
	}
	m := &memoCond{id: len(cp.memo), c: c}
	cp.memo[name] = m
	return m
}

func (cp *condParser) list(n *yaml.Node, path string, all bool) condition {
	var cs []condition
	for i, c := range n.Content {
		if cc := cp.parse(c, fmt.Sprintf("%s[%d]", path, i)); cc != nil {
			cs = append(cs, cc)
		}
	}
	if len(cs) != len(n.Content) {
		return nil
	}
	if all {
		return allOf(cs)
	}
	return anyOf(cs)
}

func (cp *condParser) leaf(n *yaml.Node, path string) condition {
	l := &leaf{}
	ok, evidence := true, false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		fp := path + "." + k.Value
		if k.Value == "all" || k.Value == "any" || k.Value == "not" || k.Value == "use" {
			cp.fail(fp, "all, any, not and use stand alone in their mapping")
			ok = false
			continue
		}
		f, err := parseField(k.Value)
		if err != nil {
			cp.fail(fp, "%v", err)
			ok = false
			continue
		}
		m, good := cp.matcher(f, v, fp)
		if !good {
			ok = false
			continue
		}
		evidence = evidence || f.readsEvidence() || f.kind == fStatus && unregisteredStatuses(m)
		switch {
		case f.kind == fPath:
			l.paths = append(l.paths, m.eq...)
		case f.serviceLevel():
			l.service = append(l.service, fieldTest{f: f, m: m})
		default:
			t := fieldTest{f: f, m: m}
			if f.kind == fStatus {
				t.anyStatus, t.codes = !unregisteredStatuses(m), statusCodes(m)
			}
			l.probe = append(l.probe, t)
		}
	}
	if !ok {
		return nil
	}
	if !evidence {
		cp.fail(path, "a condition needs a field that reads evidence, not only method, path, status, port or transport")
		return nil
	}
	return l
}

// unregisteredStatuses reports whether a status matcher lists only codes
// outside the HTTP status registry (RFC 9110 and the IANA registry's
// additions), such as GlobalProtect's 512 and 513: a server's own
// codes, which say what the server is as a header would.
func unregisteredStatuses(m matcher) bool {
	if m.re != nil || m.any || len(m.eq) == 0 {
		return false
	}
	for _, s := range m.eq {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 || n > 599 || http.StatusText(n) != "" || n == 306 {
			return false
		}
	}
	return true
}

// matcher reads a field's matcher: a regular expression, a number, or a
// list of values.
func (cp *condParser) matcher(f field, v *yaml.Node, path string) (matcher, bool) {
	exact := f.kind == fPath || f.kind == fPathPrefix || f.kind == fMethod
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			cp.fail(path, "no value")
			return matcher{}, false
		}
		if v.Tag == "!!str" && !exact {
			if v.Value == "" {
				return matcher{any: true}, true
			}
			if p, ok := cp.pats[v.Value]; ok {
				return matcher{re: p}, true
			}
			var errs []error
			p := compilePattern(path, v.Value, &errs)
			if len(errs) > 0 {
				cp.fail(path, "%v", strings.TrimPrefix(errs[0].Error(), path+": "))
				return matcher{}, false
			}
			if cp.pats != nil {
				cp.pats[v.Value] = p
			}
			return matcher{re: p}, true
		}
		return matcher{eq: []string{v.Value}, prefix: f.kind == fPathPrefix}, true
	case yaml.SequenceNode:
		if len(v.Content) == 0 {
			cp.fail(path, "empty list")
			return matcher{}, false
		}
		m := matcher{prefix: f.kind == fPathPrefix}
		for _, e := range v.Content {
			if e.Kind != yaml.ScalarNode || e.Tag == "!!null" {
				cp.fail(path, "a list of strings or numbers")
				return matcher{}, false
			}
			m.eq = append(m.eq, e.Value)
		}
		return m, true
	}
	cp.fail(path, "want a regular expression, a number or a list")
	return matcher{}, false
}

// eachPattern calls fn with every regular expression of c.
func eachPattern(c condition, fn func(*pattern)) {
	switch c := c.(type) {
	case allOf:
		for _, s := range c {
			eachPattern(s, fn)
		}
	case anyOf:
		for _, s := range c {
			eachPattern(s, fn)
		}
	case notOf:
		eachPattern(c.c, fn)
	case *memoCond:
		eachPattern(c.c, fn)
	case *leaf:
		for _, ts := range [][]fieldTest{c.service, c.probe} {
			for _, t := range ts {
				if t.m.re != nil {
					fn(t.m.re)
				}
			}
		}
	}
}
