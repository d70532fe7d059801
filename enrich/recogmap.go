package enrich

import (
	"fmt"
	"slices"
	"strings"

	"github.com/netintel/netintel/enrich/recog"
	"github.com/netintel/netintel/ingest"
)

// Rapid7 Recog's fingerprints (enrich/recog, BSD-2-Clause) are read as
// data: a rules file's `recog` entries say which of Recog's vendors and
// products are which of our rules (docs/rules.md, "Recog"). Recog speaks
// when no rule of ours names the service, and gives the version when
// ours named the product but found none. Only mapped vendors are ever
// named, so Recog's knowledge of web servers and printers never puts a
// vendor on a service outside our families.

type recogSpec struct {
	Rule string `yaml:"rule"`
	// Vendor and Product are regular expressions over Recog's vendor and
	// product (service, then os, then hw); Product may be empty.
	Vendor  string `yaml:"vendor"`
	Product string `yaml:"product"`
	// Description and Unless are regular expressions over the Recog
	// fingerprint's description that must, and must not, match.
	Description string `yaml:"description"`
	Unless      string `yaml:"unless"`
	// Fields limits the Recog databases read ("http_header.server",
	// "x509.subject", ...); empty means all.
	Fields []string `yaml:"fields"`
	// Version says whether Recog's version is taken (default true).
	Version *bool `yaml:"version"`
}

type recogMap struct {
	rule                *rule
	vendor, product     *pattern
	description, unless *pattern
	fields              []string
	version             bool
}

// recogFields are the Recog databases the evidence feeds.
var recogFields = []string{"http_header.server", "html_title", "http_header.cookie", "http_header.wwwauth",
	"http_header.x-powered-by", "x509.subject", "x509.issuer", "ssh.banner", "tls.jarm", "favicon.md5",
	"ftp.banner", "smtp.banner", "telnet_banners", "snmp.sys_description"}

func compileRecog(file string, i int, spec recogSpec, byID map[string]*rule, errs *[]error) *recogMap {
	where := fmt.Sprintf("%s: recog[%d]", file, i)
	m := &recogMap{version: spec.Version == nil || *spec.Version, fields: spec.Fields}
	if m.rule = byID[spec.Rule]; m.rule == nil {
		*errs = append(*errs, fmt.Errorf("%s: rule: no rule %q", where, spec.Rule))
	}
	if spec.Vendor == "" {
		*errs = append(*errs, fmt.Errorf("%s: vendor: required", where))
	}
	m.vendor = compilePattern(where+": vendor", spec.Vendor, errs)
	m.product = compilePattern(where+": product", spec.Product, errs)
	m.description = compilePattern(where+": description", spec.Description, errs)
	m.unless = compilePattern(where+": unless", spec.Unless, errs)
	for _, f := range spec.Fields {
		if !slices.Contains(recogFields, f) {
			*errs = append(*errs, fmt.Errorf("%s: fields: unknown Recog field %q (one of %s)", where, f, strings.Join(recogFields, ", ")))
		}
	}
	return m
}

func (m *recogMap) accepts(field string, r recog.Match) bool {
	if len(m.fields) > 0 && !slices.Contains(m.fields, field) {
		return false
	}
	if !m.vendor.MatchString(r.Vendor()) {
		return false
	}
	if m.description != nil && !m.description.MatchString(r.Description) {
		return false
	}
	if m.unless != nil && m.unless.MatchString(r.Description) {
		return false
	}
	return m.product == nil || m.product.MatchString(r.Product())
}

// recogValues calls fn with each value of the evidence for each Recog
// field, until fn says true.
func (e *evidence) recogValues(fn func(field, value string) bool) bool {
	for i := range e.probes {
		v := &e.probes[i]
		p := v.p
		if r := p.Response; r != nil {
			for _, h := range r.Headers {
				var f string
				switch {
				case strings.EqualFold(h.Name, "Server"):
					f = "http_header.server"
				case strings.EqualFold(h.Name, "Set-Cookie"):
					f = "http_header.cookie"
				case strings.EqualFold(h.Name, "WWW-Authenticate"):
					f = "http_header.wwwauth"
				case strings.EqualFold(h.Name, "X-Powered-By"):
					f = "http_header.x-powered-by"
				default:
					continue
				}
				if fn(f, h.Value) {
					return true
				}
			}
			if t := v.titleText(); t != "" && fn("html_title", t) {
				return true
			}
			if b := r.Body; b != nil && (strings.HasSuffix(strings.ToLower(v.path()), "favicon.ico") || strings.EqualFold(p.Name, "favicon")) {
				// the scanner's published MD5 (Censys, nmap), else the whole icon's
				if sum := bodyMD5(b); sum != "" && fn("favicon.md5", sum) {
					return true
				}
			}
		}
		if t := p.TLS; t != nil {
			if t.Subject != nil && (fn("x509.subject", recogDN(t.Subject)) || (t.Subject.DN != "" && fn("x509.subject", t.Subject.DN))) {
				return true
			}
			if t.Issuer != nil && (fn("x509.issuer", recogDN(t.Issuer)) || (t.Issuer.DN != "" && fn("x509.issuer", t.Issuer.DN))) {
				return true
			}
			if t.JARM != "" && fn("tls.jarm", t.JARM) {
				return true
			}
		}
		if b := p.Banner; b != nil && b.Received != nil {
			text := v.bannerText()
			if s, ok := sshSoftware(text); ok && fn("ssh.banner", s) {
				return true
			}
			if e.recogBanner(v, text, fn) {
				return true
			}
		}
	}
	return false
}

// recogBanner feeds a raw answer to Recog's protocol banner databases as
// Recog writes their values: an FTP or SMTP greeting without its reply
// code ("220 FTP Server (ZyWALL USG 20)" is "FTP Server (ZyWALL USG 20)"),
// a telnet service's text before the login prompt without the option
// negotiation, and an SNMP agent's sysDescr value out of the forms
// snmpwalk, nmap and masscan print it in. A greeting is read on any port
// (its 220 says what it is) and on the protocol's ports without its code;
// telnet and SNMP text only on their ports or probes named for them.
func (e *evidence) recogBanner(v *probeView, text string, fn func(field, value string) bool) bool {
	port, udp := 0, false
	if e.svc != nil {
		port, udp = e.svc.Port, strings.EqualFold(e.svc.Transport, "udp")
	}
	name := strings.ToLower(v.p.Name)
	first, _, _ := strings.Cut(text, "\n")
	first = strings.TrimRight(first, "\r")
	if len(first) > 4 && strings.HasPrefix(first, "220") && (first[3] == ' ' || first[3] == '-') {
		g := first[4:]
		if fn("ftp.banner", g) || fn("smtp.banner", g) {
			return true
		}
	} else if first != "" {
		switch {
		case port == 21 || strings.Contains(name, "ftp"):
			if fn("ftp.banner", first) {
				return true
			}
		case port == 25 || port == 587 || strings.Contains(name, "smtp"):
			if fn("smtp.banner", first) {
				return true
			}
		}
	}
	if (!udp && (port == 23 || port == 2323)) || strings.Contains(name, "telnet") {
		if t := stripTelnetOptions(text); t != "" && fn("telnet_banners", t) {
			return true
		}
	}
	if (udp && port == 161) || strings.Contains(name, "snmp") {
		if d, ok := sysDescr(text); ok && fn("snmp.sys_description", d) {
			return true
		}
	}
	return false
}

// stripTelnetOptions drops the telnet option negotiation (IAC, RFC 854:
// 0xff, a command byte and, for WILL/WONT/DO/DONT, an option byte; a
// subnegotiation up to IAC SE) a server sends before its text.
func stripTelnetOptions(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != 0xff || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch c := s[i+1]; {
		case c >= 251 && c <= 254: // WILL, WONT, DO, DONT + option
			i += 2
		case c == 250: // SB ... IAC SE
			j := strings.Index(s[i+2:], "\xff\xf0")
			if j < 0 {
				return b.String()
			}
			i += 2 + j + 1
		case c == 255: // an escaped 0xff
			b.WriteByte(0xff)
			i++
		default:
			i++
		}
	}
	return b.String()
}

// sysDescr is the sysDescr value in an SNMP answer as a scanner or a
// person records it: the value of a "sysDescr.0 = STRING: ...",
// ".1.3.6.1.2.1.1.1.0 = STRING: ...", "snmp-sysdescr: ..." or
// "sysDescr.0:..." line, or the whole text when it is no such listing
// (the bare value, as Shodan and Recog keep it).
func sysDescr(text string) (string, bool) {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(line, " \t|_"))
		low := strings.ToLower(line)
		// "sysdescr" also finds nmap's "snmp-sysdescr:" and masscan's "sysDescr:"
		for _, key := range []string{"sysdescr.0", "sysdescr", "1.3.6.1.2.1.1.1.0", "iso.3.6.1.2.1.1.1.0"} {
			i := strings.Index(low, key)
			if i < 0 {
				continue
			}
			rest := strings.TrimSpace(line[i+len(key):])
			rest = strings.TrimSpace(strings.TrimLeft(rest, "=:"))
			if r, ok := strings.CutPrefix(rest, "STRING:"); ok {
				rest = strings.TrimSpace(r)
			}
			rest = strings.Trim(rest, `"`)
			return rest, rest != ""
		}
	}
	t := strings.TrimSpace(text)
	if t == "" || strings.Contains(t, " = ") {
		return "", false
	}
	return t, true
}

// sshSoftware is the part of an SSH identification line that Recog's
// ssh_banners.xml matches, the "softwareversion SP comments" after
// "SSH-protoversion-" (RFC 4253 section 4.2): "SSH-2.0-ROSSSH\r\n" is
// "ROSSSH". ok is false for a banner that is not an SSH identification.
func sshSoftware(banner string) (string, bool) {
	rest, ok := strings.CutPrefix(banner, "SSH-")
	if !ok {
		return "", false
	}
	if line, _, found := strings.Cut(rest, "\n"); found {
		rest = line
	}
	_, sw, ok := strings.Cut(strings.TrimRight(rest, "\r"), "-")
	return sw, ok && sw != ""
}

// recogDN writes a name as Recog's x509 examples do: CN, OU, O, L, ST, C,
// joined by commas without spaces.
func recogDN(d *ingest.DN) string { return d.Join(",", false) }

// staticVendor is the vendor a fingerprint asserts whatever it matches,
// "" when it takes the vendor from the value (or names none), in the
// order Match.Vendor reads them.
func staticVendor(f *recog.Fingerprint) (string, bool) {
	for _, name := range []string{"service.vendor", "os.vendor", "hw.vendor"} {
		for _, p := range f.Params {
			if p.Name == name {
				return p.Value, p.Pos == 0 && !strings.Contains(p.Value, "{")
			}
		}
	}
	return "", true
}

// selectRecog keeps, per Recog field, the fingerprints a mapping could
// accept: those whose fixed vendor one of the mappings' vendor
// expressions takes, and those that read their vendor from the value.
// Recog has some 2,000 fingerprints and a service meets a few dozen of
// them at most; the rest would only cost time.
func (rs *Rules) selectRecog(db *recog.DB) {
	rs.recogFPs = map[string][]*recog.Fingerprint{}
	rs.recogByRule = map[*rule]map[string][]*recog.Fingerprint{}
	for _, field := range recogFields {
		for _, f := range db.Fingerprints(field) {
			v, static := staticVendor(f)
			var rules []*rule // the rules a mapping of which could accept f
			for _, m := range rs.recogMaps {
				if (!static || (v != "" && m.vendor != nil && m.vendor.MatchString(v))) && !slices.Contains(rules, m.rule) {
					rules = append(rules, m.rule)
				}
			}
			if len(rules) == 0 {
				continue
			}
			rs.recogFPs[field] = append(rs.recogFPs[field], f)
			for _, r := range rules {
				if rs.recogByRule[r] == nil {
					rs.recogByRule[r] = map[string][]*recog.Fingerprint{}
				}
				rs.recogByRule[r][field] = append(rs.recogByRule[r][field], f)
			}
		}
	}
}

// recogMatch finds the first (evidence value, Recog fingerprint, mapping)
// that names one of our rules; only names rule want when want is not nil.
func (rs *Rules) recogMatch(e *evidence, want *rule) (*recogMap, recog.Match, bool) {
	fps := rs.recogFPs
	if want != nil {
		// Only the fingerprints a mapping of want could accept: a rule
		// no mapping names costs no walk of the evidence at all.
		fps = rs.recogByRule[want]
	}
	if len(fps) == 0 {
		return nil, recog.Match{}, false
	}
	var found *recogMap
	var hit recog.Match
	e.recogValues(func(field, value string) bool {
		for _, f := range fps[field] {
			if !f.MayMatch(value) {
				continue
			}
			r, ok := f.Match(value)
			if !ok {
				continue
			}
			for _, m := range rs.recogMaps {
				if (want == nil || m.rule == want) && m.accepts(field, r) {
					found, hit = m, r
					return true
				}
			}
		}
		return false
	})
	return found, hit, found != nil
}
