package enrich

import (
	"crypto/md5"
	"encoding/hex"
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
	"http_header.x-powered-by", "x509.subject", "x509.issuer", "ssh.banner", "tls.jarm", "favicon.md5"}

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
			if b := r.Body; b != nil && !b.Truncated && strings.HasSuffix(strings.ToLower(v.path()), "favicon.ico") && b.Data != "" {
				sum := md5.Sum(b.Bytes())
				if fn("favicon.md5", hex.EncodeToString(sum[:])) {
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
			if s, ok := sshSoftware(v.bannerText()); ok && fn("ssh.banner", s) {
				return true
			}
		}
	}
	return false
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
