package enrich

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"os"
	pathpkg "path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/netintel/netintel/enrich/recog"
	"github.com/netintel/netintel/ingest"
)

//go:embed rules/*.yaml
var defaultRules embed.FS

// Version precisions of an asset.
const (
	PrecisionExact = "exact"
	PrecisionBand  = "band"
)

// RulesVersion is the rules format this code reads (docs/rules.md).
const RulesVersion = 2

// Rules is a compiled fingerprint rule set (docs/rules.md).
type Rules struct {
	rules []*rule
	// recog is Rapid7 Recog's database and recogMaps the entries that map
	// its vendors and products to rules (recogmap.go).
	recogMaps []*recogMap
	recogFPs  map[string][]*recog.Fingerprint
	// recogByRule are recogFPs narrowed to those a mapping of each rule
	// could accept, for the version a matched rule lacks.
	recogByRule map[*rule]map[string][]*recog.Fingerprint
	// files are the names the rules came from, in order.
	files []string
	// index rules out, per observation, the rules whose literals its text
	// lacks (ruleindex.go); nil when no rule has literals.
	index *ruleIndex
	// nmemo is the number of named conditions the rules share (memoCond):
	// the size of an evidence's memo.
	nmemo int
	// lenders[i] are the rules after rule i of its vendor that read a
	// version (otherVersion), worked out once at load.
	lenders [][]int
}

type rulesFile struct {
	Version int                  `yaml:"version"`
	Rules   []ruleSpec           `yaml:"rules"`
	Tables  map[string]tableSpec `yaml:"tables"`
	Recog   []recogSpec          `yaml:"recog"`
	// Conditions are named conditions any rule of any file may use
	// (`{use: NAME}`).
	Conditions map[string]yaml.Node `yaml:"conditions"`
	// Guard is a guard of every rule of the file, beside each rule's own.
	Guard yaml.Node `yaml:"guard"`
}

type ruleSpec struct {
	ID             string        `yaml:"id"`
	Vendor         string        `yaml:"vendor"`
	Product        string        `yaml:"product"`
	CPE            []string      `yaml:"cpe"`
	ProtocolFamily string        `yaml:"protocol_family"`
	Class          string        `yaml:"class"`
	Sources        []string      `yaml:"sources"`
	Notes          string        `yaml:"notes"`
	Match          yaml.Node     `yaml:"match"`
	Guard          yaml.Node     `yaml:"guard"`
	GuardVendor    bool          `yaml:"guard_vendor"`
	Versions       []versionSpec `yaml:"versions"`
}

type versionSpec struct {
	From      string `yaml:"from"`
	Path      string `yaml:"path"`
	Method    string `yaml:"method"`
	Regex     string `yaml:"regex"`
	Format    string `yaml:"format"`
	Precision string `yaml:"precision"`
	Table     string `yaml:"table"`
	Transform string `yaml:"transform"`
}

type tableSpec struct {
	Source string     `yaml:"source"`
	Notes  string     `yaml:"notes"`
	Rows   []tableRow `yaml:"rows"`
}

type tableRow struct {
	Key     string `yaml:"key"`
	From    string `yaml:"from"`
	To      string `yaml:"to"`
	Version string `yaml:"version"`
	Band    string `yaml:"band"`
	Source  string `yaml:"source"`
	Notes   string `yaml:"notes"`
}

type rule struct {
	ruleSpec
	file     string
	match    condition
	guard    condition
	versions []versionRule
}

type versionRule struct {
	spec  versionSpec
	from  field
	re    *pattern
	table *table
}

// table maps a value read from the evidence to a version or band.
type table struct {
	keys  map[string]tableValue
	dates []dateValue
}

type tableValue struct{ value, precision string }

type dateValue struct {
	from, to time.Time
	tableValue
}

// DefaultRules returns the built-in rule set (the files of enrich/rules/).
func DefaultRules() (*Rules, error) { return LoadRulesFS(defaultRules, "rules") }

// LoadRules reads a rules file, or every .yaml/.yml file of a folder in
// name order; an empty path means the built-in rules.
func LoadRules(path string) (*Rules, error) {
	if path == "" {
		return DefaultRules()
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	if st.IsDir() {
		return LoadRulesFS(os.DirFS(path), ".")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	return ParseRules(b, path)
}

// LoadRulesFS reads the .yaml and .yml files of dir in fsys, in name order.
func LoadRulesFS(fsys fs.FS, dir string) (*Rules, error) {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	var files []namedDoc
	for _, e := range ents {
		if e.IsDir() || !(strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			continue
		}
		name := pathpkg.Join(dir, e.Name())
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read rules: %w", err)
		}
		files = append(files, namedDoc{name, b})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("read rules: no .yaml files in %s", dir)
	}
	return parseDocs(files)
}

type namedDoc struct {
	name string
	data []byte
}

// ParseRules decodes (strictly) and compiles one rules document.
func ParseRules(b []byte, name string) (*Rules, error) {
	return parseDocs([]namedDoc{{name, b}})
}

// parseDocs compiles documents into one rule set: rules in document
// order, tables shared by all. Every problem is reported, each on its own
// line naming the file, the rule and the field.
func parseDocs(docs []namedDoc) (*Rules, error) {
	var errs []error
	type fileRules struct {
		name string
		f    rulesFile
	}
	var parsed []fileRules
	tables := map[string]*table{}
	tableFile := map[string]string{}
	named := map[string]*namedCond{}
	for _, d := range docs {
		var f rulesFile
		dec := yaml.NewDecoder(bytes.NewReader(d.data))
		dec.KnownFields(true)
		if err := dec.Decode(&f); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.name, err))
			continue
		}
		if f.Version != RulesVersion {
			errs = append(errs, fmt.Errorf("%s: version: want %d, got %d (docs/rules.md)", d.name, RulesVersion, f.Version))
			continue
		}
		names := make([]string, 0, len(f.Tables))
		for k := range f.Tables {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			if other, dup := tableFile[k]; dup {
				errs = append(errs, fmt.Errorf("%s: table %s: also defined in %s", d.name, k, other))
				continue
			}
			tableFile[k] = d.name
			tables[k] = compileTable(d.name, k, f.Tables[k], &errs)
		}
		for _, k := range slices.Sorted(maps.Keys(f.Conditions)) {
			if other, dup := named[k]; dup {
				errs = append(errs, fmt.Errorf("%s: conditions.%s: also defined in %s", d.name, k, other.file))
				continue
			}
			n := f.Conditions[k]
			named[k] = &namedCond{file: d.name, node: &n}
		}
		parsed = append(parsed, fileRules{d.name, f})
	}
	pats := map[string]*pattern{}
	checkNamed(named, pats, &errs)
	rs := &Rules{}
	memo := map[string]*memoCond{}
	ids := map[string]string{}
	for _, pf := range parsed {
		rs.files = append(rs.files, pf.name)
		for i, spec := range pf.f.Rules {
			where := fmt.Sprintf("%s: rule %s", pf.name, spec.ID)
			if spec.ID == "" {
				where = fmt.Sprintf("%s: rules[%d]", pf.name, i)
				errs = append(errs, fmt.Errorf("%s: id: required", where))
			} else if other, dup := ids[spec.ID]; dup {
				errs = append(errs, fmt.Errorf("%s: id: also used in %s", where, other))
			}
			ids[spec.ID] = pf.name
			r := &rule{ruleSpec: spec, file: pf.name}
			if spec.Vendor == "" || spec.Product == "" || spec.ProtocolFamily == "" {
				errs = append(errs, fmt.Errorf("%s: vendor, product and protocol_family are required", where))
			}
			if spec.Class != "" && !slices.Contains(ingest.RangeKinds, spec.Class) {
				errs = append(errs, fmt.Errorf("%s: class: unknown class %q", where, spec.Class))
			}
			cp := condParser{where: where, errs: &errs, named: named, pats: pats, memo: memo}
			if spec.Match.Kind == 0 {
				errs = append(errs, fmt.Errorf("%s: match: required", where))
			} else {
				r.match = cp.parse(&spec.Match, "match")
			}
			r.guard = cp.parse(&spec.Guard, "guard")
			if pf.f.Guard.Kind != 0 {
				fg := cp.parse(&pf.f.Guard, "file guard")
				if r.guard == nil {
					r.guard = fg
				} else {
					r.guard = anyOf{fg, r.guard}
				}
			}
			for j, v := range spec.Versions {
				r.versions = append(r.versions, compileVersion(where, fmt.Sprintf("versions[%d]", j), v, tables, &errs))
			}
			rs.rules = append(rs.rules, r)
		}
	}
	rs.nmemo = len(memo)
	rs.lenders = versionLenders(rs.rules)
	byID := map[string]*rule{}
	for _, r := range rs.rules {
		byID[r.ID] = r
	}
	vendorGuards(rs.rules)
	for _, pf := range parsed {
		for i, spec := range pf.f.Recog {
			rs.recogMaps = append(rs.recogMaps, compileRecog(pf.name, i, spec, byID, &errs))
		}
	}
	if len(rs.recogMaps) > 0 {
		db, err := recog.Default()
		if err != nil {
			errs = append(errs, fmt.Errorf("recog: %w", err))
		}
		if db != nil {
			rs.selectRecog(db)
		}
	}
	if len(errs) > 0 {
		return nil, joinErrs(errs)
	}
	rs.index = newRuleIndex(rs.rules)
	return rs, nil
}

func compileTable(file, name string, spec tableSpec, errs *[]error) *table {
	t := &table{keys: map[string]tableValue{}}
	for i, row := range spec.Rows {
		where := fmt.Sprintf("%s: table %s: rows[%d]", file, name, i)
		if row.Source == "" && spec.Source == "" {
			*errs = append(*errs, fmt.Errorf("%s: source: every row needs a public source (its own or the table's)", where))
		}
		var val tableValue
		switch {
		case row.Version != "" && row.Band == "":
			val = tableValue{row.Version, PrecisionExact}
		case row.Band != "" && row.Version == "":
			val = tableValue{row.Band, PrecisionBand}
		default:
			*errs = append(*errs, fmt.Errorf("%s: want exactly one of version and band", where))
			continue
		}
		switch {
		case row.Key != "" && row.From == "" && row.To == "":
			k := strings.ToLower(row.Key)
			if _, dup := t.keys[k]; dup {
				*errs = append(*errs, fmt.Errorf("%s: key: %q is in the table twice", where, row.Key))
			}
			t.keys[k] = val
		case row.Key == "" && row.From != "" && row.To != "":
			from, err1 := time.Parse(time.DateOnly, row.From)
			to, err2 := time.Parse(time.DateOnly, row.To)
			if err1 != nil || err2 != nil || !from.Before(to) {
				*errs = append(*errs, fmt.Errorf("%s: from, to: want from < to, as YYYY-MM-DD", where))
				continue
			}
			t.dates = append(t.dates, dateValue{from, to, val})
		default:
			*errs = append(*errs, fmt.Errorf("%s: want a key, or from and to", where))
		}
	}
	return t
}

func compileVersion(where, path string, v versionSpec, tables map[string]*table, errs *[]error) versionRule {
	fail := func(field, format string, args ...any) {
		*errs = append(*errs, fmt.Errorf("%s: %s.%s: %s", where, path, field, fmt.Sprintf(format, args...)))
	}
	vr := versionRule{spec: v}
	f, err := parseField(v.From)
	if err != nil {
		fail("from", "%v", err)
	}
	vr.from = f
	if v.Regex != "" {
		var rerrs []error
		vr.re = compilePattern("regex", v.Regex, &rerrs)
		for _, e := range rerrs {
			fail("regex", "%v", strings.TrimPrefix(e.Error(), "regex: "))
		}
	}
	switch {
	case v.Table != "":
		t, ok := tables[v.Table]
		if !ok {
			fail("table", "no table %q", v.Table)
		}
		vr.table = t
		if v.Precision != "" {
			fail("precision", "a table row gives the precision; leave it out")
		}
	case v.Precision != PrecisionExact && v.Precision != PrecisionBand:
		fail("precision", "must be exact or band, got %q", v.Precision)
	}
	if v.Transform != "" && v.Transform != "gzip_mtime" && v.Transform != "hex_epoch" && v.Transform != "hex_epoch_us" && v.Transform != "epoch" {
		fail("transform", "must be gzip_mtime, hex_epoch, hex_epoch_us or epoch, got %q", v.Transform)
	}
	if v.Method != "" {
		vr.spec.Method = strings.ToUpper(v.Method)
	}
	return vr
}

// Files returns the names of the files the rules came from, in order.
func (rs *Rules) Files() []string { return rs.files }

// Fingerprint is what a rule concluded about a service.
type Fingerprint struct {
	RuleID           string   `json:"rule,omitempty"`
	Vendor           string   `json:"vendor,omitempty"`
	Product          string   `json:"product,omitempty"`
	CPE              []string `json:"cpe,omitempty"`
	ProtocolFamily   string   `json:"protocol_family,omitempty"`
	Class            string   `json:"class,omitempty"`
	ExactVersion     string   `json:"exact_version,omitempty"`
	VersionBand      string   `json:"version_band,omitempty"`
	VersionPrecision string   `json:"version_precision,omitempty"`
}

// Match returns the fingerprint of the first rule whose match holds and
// whose guard does not on a service or flow observation, and false when
// none does.
func (rs *Rules) Match(svc *ingest.Service, flow *ingest.Flow) (Fingerprint, bool) {
	e := newEvidence(svc, flow)
	defer e.release()
	e.memo = slices.Grow(e.memo[:0], rs.nmemo)[:rs.nmemo]
	clear(e.memo)
	var found []bool
	if rs.index != nil {
		found = e.literalSet(rs.index.nlits + 1)
		rs.index.scan(e, found)
	}
	for i, r := range rs.rules {
		if found != nil && !rs.index.possible(i, found) {
			continue
		}
		if !r.match.holds(e) || r.guarded(e) {
			continue
		}
		fp := r.fingerprint()
		r.setVersionFrom(e, &fp)
		if fp.VersionPrecision == "" {
			rs.otherVersion(e, found, i, &fp)
		}
		if fp.VersionPrecision == "" {
			if m, hit, ok := rs.recogMatch(e, r); ok && m.version && hit.Version() != "" {
				fp.setVersion(hit.Version(), PrecisionExact)
			}
		}
		return fp, true
	}
	if m, hit, ok := rs.recogMatch(e, nil); ok && !m.rule.guarded(e) {
		fp := m.rule.fingerprint()
		fp.RuleID += "+recog"
		if m.version && hit.Version() != "" {
			fp.setVersion(hit.Version(), PrecisionExact)
		}
		return fp, true
	}
	return Fingerprint{}, false
}

// vendorGuards gives every rule with guard_vendor the guards of the
// other rules of its vendor (those without guard_vendor) too: a
// look-alike guarded against once is guarded against by every rule of
// the vendor it imitates, the generated ones included.
func vendorGuards(rules []*rule) {
	for _, r := range rules {
		if !r.GuardVendor {
			continue
		}
		var gs anyOf
		if r.guard != nil {
			gs = append(gs, r.guard)
		}
		for _, o := range rules {
			if o != r && !o.GuardVendor && o.guard != nil && strings.EqualFold(o.Vendor, r.Vendor) {
				gs = append(gs, o.guard)
			}
		}
		if len(gs) > 0 {
			r.guard = gs
		}
	}
}

func (r *rule) guarded(e *evidence) bool { return r.guard != nil && r.guard.holds(e) }

func (r *rule) fingerprint() Fingerprint {
	return Fingerprint{RuleID: r.ID, Vendor: r.Vendor, Product: r.Product, CPE: r.CPE, ProtocolFamily: r.ProtocolFamily, Class: r.Class}
}

// setVersionFrom sets fp's version from the first of r's version entries
// that yields one; it reports whether one did.
func (r *rule) setVersionFrom(e *evidence, fp *Fingerprint) bool {
	for i := range r.versions {
		if val, prec, ok := r.versions[i].extract(e); ok {
			fp.setVersion(val, prec)
			return true
		}
	}
	return false
}

// otherVersion gives fp, named by rule named with no version, the version
// of a later rule of the same vendor that holds on the same evidence and
// reads one: from the scanner's own identification (70-detected.yaml reads
// a detected.version or a CPE's release beside the page that named the
// product), from a banner (a walk's sysDescr beside the sysObjectID that
// named the device, a CLI's version line) or, since round AF, from the
// answer itself (Check Point's Gaia portal named by its CPWS Server header
// carries var version='R81.20', which the later Gaia rule reads). A rule of
// another vendor never lends its version.
//
// A lender's version is read before its condition is: most services named
// without a version carry none for any lender to read, and reading a
// version is one expression over one field where a condition is many, so
// the lenders cost little where there is nothing to lend.
func (rs *Rules) otherVersion(e *evidence, found []bool, named int, fp *Fingerprint) {
	for _, i := range rs.lenders[named] {
		if found != nil && !rs.index.possible(i, found) {
			continue
		}
		r := rs.rules[i]
		var v Fingerprint
		if r.setVersionFrom(e, &v) && r.match.holds(e) && !r.guarded(e) {
			fp.ExactVersion, fp.VersionBand, fp.VersionPrecision = v.ExactVersion, v.VersionBand, v.VersionPrecision
			return
		}
	}
}

// versionLenders lists, for each rule, the later rules of its vendor
// that read a version: the lenders otherVersion asks.
func versionLenders(rules []*rule) [][]int {
	out := make([][]int, len(rules))
	for i, r := range rules {
		for j := i + 1; j < len(rules); j++ {
			if o := rules[j]; strings.EqualFold(o.Vendor, r.Vendor) && len(o.versions) > 0 {
				out[i] = append(out[i], j)
			}
		}
	}
	return out
}

// setVersion records a version; an exact one loses a leading "v" before
// a digit ("v6.49.7", as RouterOS and others write it, is 6.49.7).
func (fp *Fingerprint) setVersion(val, precision string) {
	if precision == PrecisionExact {
		val = dropV(val)
		fp.ExactVersion, fp.VersionBand = val, minorBand(val)
	} else {
		fp.VersionBand = strings.TrimSpace(val)
	}
	fp.VersionPrecision = precision
}

// extract reads the version from the first value of its field (on the
// probes its path and method allow) that yields one.
func (v *versionRule) extract(e *evidence) (val, precision string, ok bool) {
	try := func(s string) bool {
		val, precision, ok = v.value(s)
		return ok
	}
	if v.from.serviceLevel() {
		v.from.each(e, nil, try)
		return
	}
	for i := range e.probes {
		p := &e.probes[i]
		if v.spec.Path != "" && !p.pathMatches(v.spec.Path) {
			continue
		}
		if v.spec.Method != "" && p.method() != v.spec.Method {
			continue
		}
		if v.from.each(e, p, try) {
			return
		}
	}
	return "", "", false
}

// value turns one value of the field into a version.
func (v *versionRule) value(src string) (string, string, bool) {
	if v.spec.Transform == "gzip_mtime" {
		src = gzipMTime(src)
	}
	if src == "" {
		return "", "", false
	}
	val := src
	if v.re != nil {
		m := v.re.FindStringSubmatch(src)
		if m == nil {
			return "", "", false
		}
		format := v.spec.Format
		if format == "" {
			format = "{1}"
		}
		if len(m) == 1 {
			m = append(m, m[0])
		}
		for i := len(m) - 1; i >= 1; i-- {
			format = strings.ReplaceAll(format, placeholder(i), m[i])
		}
		val = format
	}
	switch v.spec.Transform {
	case "hex_epoch":
		if val = epochTime(val, 16, 1); val == "" {
			return "", "", false
		}
	case "hex_epoch_us":
		if val = epochTime(val, 16, 1e6); val == "" {
			return "", "", false
		}
	case "epoch":
		if val = epochTime(val, 10, 1); val == "" {
			return "", "", false
		}
	}
	if v.table == nil {
		if v.spec.Precision == PrecisionExact && isBuildHash(val) {
			// a build hash read where a release was expected (nuclei's
			// sophos-fw-version-detect takes SFOS 18+'s ?version=<32 hex>):
			// not a version; a table may still map it
			return "", "", false
		}
		return val, v.spec.Precision, val != ""
	}
	if tv, ok := v.table.keys[strings.ToLower(strings.TrimSpace(val))]; ok {
		return tv.value, tv.precision, true
	}
	// A date (an HTTP date such as Last-Modified) is also looked up as
	// the RFC 3339 time the key rows of a timestamp table are written in.
	if len(v.table.keys) > 0 {
		if t, ok := parseLooseDate(val); ok {
			if tv, ok := v.table.keys[strings.ToLower(t.UTC().Format(time.RFC3339))]; ok {
				return tv.value, tv.precision, true
			}
		}
	}
	if len(v.table.dates) > 0 {
		if t, ok := parseLooseDate(val); ok {
			for _, d := range v.table.dates {
				if !t.Before(d.from) && t.Before(d.to) {
					return d.value, d.precision, true
				}
			}
		}
	}
	return "", "", false
}

// isBuildHash reports whether an extracted value is a hexadecimal digest
// (16 or more hex digits and nothing else) rather than a release: asset
// URLs carry such hashes where older builds carried the release.
func isBuildHash(s string) bool {
	if len(s) < 16 {
		return false
	}
	letter := false
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= 'a' && c <= 'f':
			letter = true
		case c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return letter
}

func compileRe(field, s string, errs *[]error) *regexp.Regexp {
	if s == "" {
		return nil
	}
	re, err := regexp.Compile("(?i)" + s)
	if err != nil {
		*errs = append(*errs, fmt.Errorf("%s: %w", field, err))
	}
	return re
}

// placeholders are the {N} of a version format, for the common N.
var placeholders = [...]string{"{0}", "{1}", "{2}", "{3}", "{4}", "{5}", "{6}", "{7}", "{8}", "{9}"}

func placeholder(i int) string {
	if i < len(placeholders) {
		return placeholders[i]
	}
	return fmt.Sprintf("{%d}", i)
}

// dropV drops a leading "v" before a digit ("v6.49.7" is 6.49.7), and
// the spaces around s.
func dropV(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 1 && (s[0] == 'v' || s[0] == 'V') && s[1] >= '0' && s[1] <= '9' {
		return s[1:]
	}
	return s
}

// epochTime reads s as a Unix time written in base (16: the hexadecimal
// time some servers put in an ETag, a build or file date; 10: a decimal
// one, as a cache-busting query string), counted in 1/per seconds (1:
// seconds, 1e6: microseconds, as Apache's "inode-size-mtime" ETags on
// BIG-IP), as RFC 3339, or "" when it is not one between 1995 and 2100.
func epochTime(s string, base int, per int64) string {
	n, err := strconv.ParseInt(strings.TrimSpace(s), base, 64)
	if err == nil {
		n /= per
	}
	if err != nil || n < 788918400 || n > 4102444800 {
		return ""
	}
	return time.Unix(n, 0).UTC().Format(time.RFC3339)
}

func parseLooseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := http.ParseTime(s); err == nil {
		return t, true
	}
	for _, layout := range []string{time.RFC3339, time.DateOnly, time.DateTime} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
