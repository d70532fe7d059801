// Package recog reads Rapid7 Recog fingerprint databases
// (https://github.com/rapid7/recog, BSD-2-Clause) as data and matches
// scanner evidence (HTTP Server headers, HTML titles, certificate subjects,
// SSH banners, ...) against them.
//
// The XML databases are embedded from xml/ (see xml/SOURCE.md and
// docs/recog.md). Recog patterns are Ruby regular expressions; they are
// translated to Go's RE2 syntax where that is safe, and the few that cannot
// be are skipped and counted (DB.Skipped).
package recog

import (
	"embed"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:embed xml/*.xml
var embedded embed.FS

// Match is the result of a successful fingerprint match.
type Match struct {
	// DB is the database's matches key, e.g. "http_header.server".
	DB string
	// Description is the fingerprint's description.
	Description string
	// Params holds the asserted parameters (service.vendor, os.version,
	// service.cpe23, ...), with capture groups filled in and {param}
	// interpolation done. Captures that did not participate are absent.
	Params map[string]string
}

// Vendor returns the first non-empty of service.vendor, os.vendor, hw.vendor.
func (m Match) Vendor() string { return m.first("service.vendor", "os.vendor", "hw.vendor") }

// Product returns the first non-empty of service.product, os.product, hw.product.
func (m Match) Product() string { return m.first("service.product", "os.product", "hw.product") }

// Version returns the first non-empty of service.version, os.version, hw.version.
func (m Match) Version() string { return m.first("service.version", "os.version", "hw.version") }

// DeviceType returns the first non-empty of hw.device, os.device.
func (m Match) DeviceType() string { return m.first("hw.device", "os.device") }

func (m Match) first(keys ...string) string {
	for _, k := range keys {
		if v := m.Params[k]; v != "" {
			return v
		}
	}
	return ""
}

// Param is one <param> of a fingerprint: Pos 0 asserts the fixed Value
// (which may interpolate {other.param}); Pos N takes capture group N.
type Param struct {
	Pos   int
	Name  string
	Value string
}

// Example is one <example> of a fingerprint, decoded (base64 examples are
// decoded), with its expected parameters (the example's other attributes).
type Example struct {
	Text   string
	Expect map[string]string
}

// Fingerprint is one <fingerprint> of a database.
type Fingerprint struct {
	File        string // file name, e.g. "http_servers.xml"
	DB          string // the database's matches key
	Protocol    string // the database's protocol attribute
	Index       int    // position in the file, from 0
	Line        int    // line of the <fingerprint> element
	Description string
	Pattern     string   // the Recog (Ruby) pattern as written
	Flags       []string // e.g. REG_ICASE
	Certainty   string
	Params      []Param
	Examples    []Example
	// Skip is why the pattern could not be used (empty when usable).
	Skip string

	re        *regexp.Regexp
	captures  bool      // some param takes a capture group
	lits      []literal // any-of required literals (prefilter)
	hasInterp bool
}

// Supported reports whether the fingerprint's pattern compiled.
func (f *Fingerprint) Supported() bool { return f.re != nil }

// Regexp returns the compiled Go regular expression, nil when skipped.
func (f *Fingerprint) Regexp() *regexp.Regexp { return f.re }

// Database is one XML file.
type Database struct {
	File         string
	Matches      string
	Protocol     string
	DatabaseType string
	Preference   float64
	Fingerprints []*Fingerprint
}

// DB is a set of loaded Recog databases.
type DB struct {
	files   []*Database
	byField map[string][]*Fingerprint
	total   int
	skipped []*Fingerprint
}

// defaultPreference is Recog's DEFAULT_FP_PREFERENCE.
const defaultPreference = 0.10

var (
	defaultOnce sync.Once
	defaultDB   *DB
	defaultErr  error
)

// Default returns the embedded databases, loaded once and shared.
func Default() (*DB, error) {
	defaultOnce.Do(func() { defaultDB, defaultErr = Load() })
	return defaultDB, defaultErr
}

// Load parses and compiles every embedded xml/*.xml database.
func Load() (*DB, error) {
	sub, err := fs.Sub(embedded, "xml")
	if err != nil {
		return nil, err
	}
	return LoadFS(sub)
}

// LoadFS parses every *.xml file at the root of fsys, in name order.
func LoadFS(fsys fs.FS) (*DB, error) {
	names, err := fs.Glob(fsys, "*.xml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	db := &DB{byField: map[string][]*Fingerprint{}}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		d, err := ParseDatabase(name, data)
		if err != nil {
			return nil, err
		}
		db.add(d)
	}
	return db, nil
}

// New builds a DB from already parsed databases (in the given order).
func New(dbs ...*Database) *DB {
	db := &DB{byField: map[string][]*Fingerprint{}}
	for _, d := range dbs {
		db.add(d)
	}
	return db
}

func (db *DB) add(d *Database) {
	db.files = append(db.files, d)
	for _, f := range d.Fingerprints {
		db.total++
		if f.re == nil {
			db.skipped = append(db.skipped, f)
			continue
		}
		db.byField[d.Matches] = append(db.byField[d.Matches], f)
	}
}

// Databases returns the loaded databases in load order.
func (db *DB) Databases() []*Database { return db.files }

// Fields returns the matches keys that have usable fingerprints, sorted.
func (db *DB) Fields() []string {
	out := make([]string, 0, len(db.byField))
	for k := range db.byField {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Total is the number of fingerprints read, including skipped ones.
func (db *DB) Total() int { return db.total }

// Skipped is the number of fingerprints whose pattern could not be used.
func (db *DB) Skipped() int { return len(db.skipped) }

// SkippedFingerprints lists the skipped fingerprints; each has Skip set.
func (db *DB) SkippedFingerprints() []*Fingerprint { return db.skipped }

// Fingerprints returns the usable fingerprints for a matches key, in order.
func (db *DB) Fingerprints(field string) []*Fingerprint { return db.byField[field] }

// Match tries the fingerprints of the databases whose matches key is field,
// in file order, and returns the first that matches value.
func (db *DB) Match(field, value string) (Match, bool) {
	fps := db.byField[field]
	if len(fps) == 0 {
		return Match{}, false
	}
	in := input{s: value}
	for _, f := range fps {
		if !f.mayMatch(&in) {
			continue
		}
		if m, ok := f.Match(value); ok {
			return m, true
		}
	}
	return Match{}, false
}

// MatchAll returns every fingerprint for field that matches value, in order.
func (db *DB) MatchAll(field, value string) []Match {
	var out []Match
	in := input{s: value}
	for _, f := range db.byField[field] {
		if !f.mayMatch(&in) {
			continue
		}
		if m, ok := f.Match(value); ok {
			out = append(out, m)
		}
	}
	return out
}

// input caches a lower-cased copy of the matched value for the literal
// prefilter.
type input struct {
	s     string
	lower string
	done  bool
}

func (in *input) folded() string {
	if !in.done {
		in.lower = strings.ToLower(in.s)
		in.done = true
	}
	return in.lower
}

// mayMatch is a cheap necessary condition: the fingerprint's required
// literal occurs in the value.
func (f *Fingerprint) mayMatch(in *input) bool {
	if len(f.lits) == 0 {
		return true
	}
	for _, l := range f.lits {
		if l.fold {
			if strings.Contains(in.folded(), l.s) {
				return true
			}
		} else if strings.Contains(in.s, l.s) {
			return true
		}
	}
	return false
}

// MayMatch is a cheap necessary condition for Match: the fingerprint's
// required literal occurs in value.
func (f *Fingerprint) MayMatch(value string) bool {
	in := input{s: value}
	return f.mayMatch(&in)
}

// Match runs this one fingerprint against value.
func (f *Fingerprint) Match(value string) (Match, bool) {
	if f.re == nil {
		return Match{}, false
	}
	var idx []int
	if f.captures {
		idx = f.re.FindStringSubmatchIndex(value)
		if idx == nil {
			return Match{}, false
		}
	} else if !f.re.MatchString(value) {
		return Match{}, false
	}
	params := make(map[string]string, len(f.Params)+1)
	for _, p := range f.Params {
		if p.Pos == 0 {
			params[p.Name] = p.Value
			continue
		}
		if 2*p.Pos+1 < len(idx) && idx[2*p.Pos] >= 0 {
			params[p.Name] = value[idx[2*p.Pos]:idx[2*p.Pos+1]]
		}
	}
	if _, ok := params["service.protocol"]; !ok && f.Protocol != "" {
		params["service.protocol"] = f.Protocol
	}
	if f.hasInterp {
		interpolate(f.Params, params)
	}
	for k := range params {
		if strings.HasPrefix(k, "_tmp.") {
			delete(params, k)
		}
	}
	return Match{DB: f.DB, Description: f.Description, Params: params}, true
}

// interpRE finds {param} references in fixed values, as Recog does.
var interpRE = regexp.MustCompile(`\{([^\s{}]+)\}`)

// interpolate replaces {name} in fixed (pos 0) values with the value of
// param name. A reference to an absent param in a *.cpe23 value whose name
// ends in .version becomes "-" (the CPE "not applicable" value), as in
// Recog; any other reference to an absent param drops the param rather than
// assert a half-filled value.
func interpolate(ps []Param, params map[string]string) {
	for _, p := range ps {
		if p.Pos != 0 || !strings.Contains(p.Value, "{") {
			continue
		}
		ok := true
		v := interpRE.ReplaceAllStringFunc(p.Value, func(ref string) string {
			name := ref[1 : len(ref)-1]
			if r, found := params[name]; found {
				return r
			}
			if strings.HasSuffix(p.Name, ".cpe23") && strings.HasSuffix(name, ".version") {
				return "-"
			}
			ok = false
			return ref
		})
		if ok {
			params[p.Name] = v
		} else {
			delete(params, p.Name)
		}
	}
}

// ---- parsing ----

type xmlFingerprint struct {
	Pattern     *string      `xml:"pattern,attr"`
	Flags       string       `xml:"flags,attr"`
	Certainty   string       `xml:"certainty,attr"`
	Description string       `xml:"description"`
	Examples    []xmlExample `xml:"example"`
	Params      []xmlParam   `xml:"param"`
}

type xmlExample struct {
	Attrs []xml.Attr `xml:",any,attr"`
	Text  string     `xml:",chardata"`
}

type xmlParam struct {
	Pos   string `xml:"pos,attr"`
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// flagMap mirrors Recog's RegexpFactory::FLAG_MAP: the multiline variants
// map to Ruby's Regexp::MULTILINE, which means "dot matches newline" (Go's
// s flag); the case variants to IGNORECASE (Go's i flag).
var flagMap = map[string]byte{
	"REG_DOT_NEWLINE":   's',
	"REG_LINE_ANY_CRLF": 's',
	"REG_MULTILINE":     's',
	"REG_ICASE":         'i',
	"IGNORECASE":        'i',
}

// ParseDatabase parses one Recog XML database. Structural problems (bad XML,
// a fingerprint without a pattern, a bad param, an unknown flag, a bad
// base64 example, a capture param beyond the pattern's groups) are errors
// naming the file and fingerprint; patterns that are valid Ruby but have no
// RE2 equivalent are kept with Skip set.
func ParseDatabase(name string, data []byte) (*Database, error) {
	d := &Database{File: name, Preference: defaultPreference}
	dec := xml.NewDecoder(strings.NewReader(string(data)))
	lineAt := newLineIndex(data)
	root := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("recog: %s: %w", name, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if !root {
			if se.Name.Local != "fingerprints" {
				return nil, fmt.Errorf("recog: %s: root element is <%s>, want <fingerprints>", name, se.Name.Local)
			}
			root = true
			for _, a := range se.Attr {
				switch a.Name.Local {
				case "matches":
					d.Matches = a.Value
				case "protocol":
					d.Protocol = strings.ToLower(a.Value)
				case "database_type":
					d.DatabaseType = a.Value
				case "preference":
					v, err := strconv.ParseFloat(a.Value, 64)
					if err != nil {
						return nil, fmt.Errorf("recog: %s: bad preference %q", name, a.Value)
					}
					d.Preference = v
				}
			}
			if d.Matches == "" {
				d.Matches = strings.TrimSuffix(path.Base(name), ".xml")
			}
			continue
		}
		if se.Name.Local != "fingerprint" {
			if err := dec.Skip(); err != nil {
				return nil, fmt.Errorf("recog: %s: %w", name, err)
			}
			continue
		}
		line := lineAt(dec.InputOffset())
		var xf xmlFingerprint
		if err := dec.DecodeElement(&xf, &se); err != nil {
			return nil, fmt.Errorf("recog: %s: fingerprint #%d (line %d): %w", name, len(d.Fingerprints), line, err)
		}
		f, err := newFingerprint(d, &xf, len(d.Fingerprints), line)
		if err != nil {
			return nil, fmt.Errorf("recog: %s: fingerprint #%d (line %d, %q): %w", name, len(d.Fingerprints), line, f.Description, err)
		}
		d.Fingerprints = append(d.Fingerprints, f)
	}
	if !root {
		return nil, fmt.Errorf("recog: %s: no <fingerprints> element", name)
	}
	return d, nil
}

func newFingerprint(d *Database, xf *xmlFingerprint, index, line int) (*Fingerprint, error) {
	f := &Fingerprint{
		File:        d.File,
		DB:          d.Matches,
		Protocol:    d.Protocol,
		Index:       index,
		Line:        line,
		Description: strings.Join(strings.Fields(xf.Description), " "),
		Certainty:   xf.Certainty,
	}
	if xf.Pattern == nil {
		return f, errors.New("no pattern attribute")
	}
	f.Pattern = *xf.Pattern
	var opts []byte
	for _, fl := range strings.Split(xf.Flags, ",") {
		fl = strings.TrimSpace(fl)
		if fl == "" {
			continue
		}
		o, ok := flagMap[fl]
		if !ok {
			return f, fmt.Errorf("unsupported flag %q", fl)
		}
		f.Flags = append(f.Flags, fl)
		if !strings.ContainsRune(string(opts), rune(o)) {
			opts = append(opts, o)
		}
	}
	if err := f.readParams(xf.Params); err != nil {
		return f, err
	}
	if err := f.readExamples(xf.Examples); err != nil {
		return f, err
	}

	expr, err := translate(f.Pattern)
	if err != nil {
		f.Skip = err.Error()
		return f, nil
	}
	prefix := "(?m" + string(opts) + ")"
	re, err := regexp.Compile(prefix + expr)
	if err != nil {
		f.Skip = "RE2: " + err.Error()
		return f, nil
	}
	for _, p := range f.Params {
		if p.Pos > re.NumSubexp() {
			return f, fmt.Errorf("param %q takes group %d but the pattern has %d", p.Name, p.Pos, re.NumSubexp())
		}
	}
	f.re = re
	f.lits = requiredLiterals(prefix + expr)
	return f, nil
}

// readParams takes the fingerprint's params: a positive pos names a
// capture group, pos 0 a fixed value (which may interpolate others).
func (f *Fingerprint) readParams(params []xmlParam) error {
	seen := map[string]int{} // name -> index in f.Params
	for _, xp := range params {
		pos, err := strconv.Atoi(strings.TrimSpace(xp.Pos))
		if err != nil || pos < 0 {
			return fmt.Errorf("param %q: bad pos %q", xp.Name, xp.Pos)
		}
		if xp.Name == "" {
			return errors.New("param without a name")
		}
		if pos == 0 && xp.Value == "" {
			return fmt.Errorf("param %q: pos 0 without a value", xp.Name)
		}
		if pos > 0 {
			f.captures = true
		}
		if pos == 0 && strings.Contains(xp.Value, "{") {
			f.hasInterp = true
		}
		p := Param{Pos: pos, Name: xp.Name, Value: xp.Value}
		if i, dup := seen[xp.Name]; dup {
			// Recog (Ruby) keeps params in a hash: a repeated name
			// replaces the earlier one.
			f.Params[i] = p
			continue
		}
		seen[xp.Name] = len(f.Params)
		f.Params = append(f.Params, p)
	}
	return nil
}

// readExamples takes the fingerprint's examples, decoding base64 ones;
// an example kept in a file of Recog's tree is dropped (not embedded).
func (f *Fingerprint) readExamples(examples []xmlExample) error {
examples:
	for _, xe := range examples {
		ex := Example{Text: xe.Text}
		enc := ""
		for _, a := range xe.Attrs {
			switch a.Name.Local {
			case "_encoding":
				enc = a.Value
			case "_filename":
				continue examples
			default:
				if ex.Expect == nil {
					ex.Expect = map[string]string{}
				}
				ex.Expect[a.Name.Local] = a.Value
			}
		}
		switch enc {
		case "":
		case "base64":
			b, err := decodeBase64(xe.Text)
			if err != nil {
				return fmt.Errorf("base64 example: %w", err)
			}
			ex.Text = string(b)
		default:
			return fmt.Errorf("example with unknown _encoding %q", enc)
		}
		f.Examples = append(f.Examples, ex)
	}
	return nil
}

func decodeBase64(s string) ([]byte, error) {
	clean := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
	if b, err := base64.StdEncoding.DecodeString(clean); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(clean, "="))
}

// newLineIndex maps a byte offset in data to a 1-based line number.
func newLineIndex(data []byte) func(int64) int {
	var nl []int64
	for i, c := range data {
		if c == '\n' {
			nl = append(nl, int64(i))
		}
	}
	return func(off int64) int {
		return sort.Search(len(nl), func(i int) bool { return nl[i] >= off }) + 1
	}
}

// ---- literal prefilter ----

// literal is a string that strings.Contains can test; fold means it is
// lower-case and is to be looked for in the lower-cased input.
type literal struct {
	s    string
	fold bool
}

// maxAlternatives bounds the any-of literal sets built from alternations.
const maxAlternatives = 16

// requiredLiterals returns a set of literals at least one of which every
// match of expr must contain, or nil if none is known. It is only a
// necessary condition, used to skip regexes cheaply.
func requiredLiterals(expr string) []literal {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	return required(re.Simplify())
}

// score ranks a requirement: the length of its shortest alternative
// (longer is more selective), 0 when there is none.
func score(set []literal) int {
	if len(set) == 0 {
		return 0
	}
	m := len(set[0].s)
	for _, l := range set[1:] {
		m = min(m, len(l.s))
	}
	return m
}

// better reports whether requirement a is preferable to b.
func better(a, b []literal) bool {
	sa, sb := score(a), score(b)
	if sa != sb {
		return sa > sb
	}
	return len(a) > 0 && len(a) < len(b)
}

func required(re *syntax.Regexp) []literal {
	var best []literal
	switch re.Op {
	case syntax.OpLiteral:
		for _, l := range literalPieces(re) {
			if len(l.s) >= 2 && better([]literal{l}, best) {
				best = []literal{l}
			}
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if r := required(s); better(r, best) {
				best = r
			}
		}
	case syntax.OpCapture, syntax.OpPlus:
		best = required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			best = required(re.Sub[0])
		}
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			r := required(s)
			if len(r) == 0 || len(best)+len(r) > maxAlternatives {
				return nil
			}
			best = append(best, r...)
		}
	}
	return best
}

// literalPieces splits a literal node into runs that strings.Contains can
// test exactly. Case-folded literals are lower-cased and split at runes
// whose case folding reaches outside ASCII (k, s and non-ASCII letters),
// so that lower-casing the input is a sound test. U+FFFD is excluded since
// Go's regexp matches it against invalid UTF-8 bytes.
func literalPieces(re *syntax.Regexp) []literal {
	fold := re.Flags&syntax.FoldCase != 0
	var out []literal
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, literal{s: string(cur), fold: fold})
			cur = cur[:0]
		}
	}
	for _, r := range re.Rune {
		if r == 0xFFFD {
			flush()
			continue
		}
		if fold {
			if r >= 0x80 || r == 'k' || r == 'K' || r == 's' || r == 'S' {
				flush()
				continue
			}
			if r >= 'A' && r <= 'Z' {
				r += 'a' - 'A'
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}
