package enrich

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// builtinEndOfLifeCPE maps endoflife.date product names (file names and
// permalinks, so pan-os and panos) to the CPE products our rules name.
// endoflife.date covers FortiOS, PAN-OS, BIG-IP and Cisco IOS XE among the
// gateways we fingerprint; Cisco ASA, Ivanti Connect Secure, NetScaler,
// SonicOS and the rest are not there and stay in netintel's own table.
var builtinEndOfLifeCPE = map[string][]string{
	"fortios":      {"cpe:2.3:o:fortinet:fortios"},
	"pan-os":       {"cpe:2.3:o:paloaltonetworks:pan-os"},
	"panos":        {"cpe:2.3:o:paloaltonetworks:pan-os"},
	"big-ip":       {"cpe:2.3:a:f5:big-ip_access_policy_manager", "cpe:2.3:a:f5:big-ip_local_traffic_manager"},
	"cisco-ios-xe": {"cpe:2.3:o:cisco:ios_xe"},
	"pan-gp":       {"cpe:2.3:a:paloaltonetworks:globalprotect"},
	"pangp":        {"cpe:2.3:a:paloaltonetworks:globalprotect"},
}

// EndOfLifeCPE returns the built-in map from endoflife.date product names
// to CPE products with extra's entries added (an entry of extra replaces
// the built-in one of the same name).
func EndOfLifeCPE(extra map[string][]string) map[string][]string {
	m := maps.Clone(builtinEndOfLifeCPE)
	maps.Copy(m, extra)
	return m
}

// endOfLifePatterns are the files of an endoflife folder that are read.
var endOfLifePatterns = []string{"*.md", "*.json", "*.json.gz", "*.json.bz2", "*.json.zst"}

// endOfLifeName is the product name of an endoflife.date location: its
// last path element without extension (products/fortios.md,
// https://endoflife.date/api/fortios.json, .../api/v1/products/fortios/).
func endOfLifeName(loc string) string {
	loc = strings.TrimRight(strings.ReplaceAll(loc, `\`, "/"), "/")
	if i := strings.IndexAny(loc, "?#"); i >= 0 {
		loc = loc[:i]
	}
	base := path.Base(loc)
	for _, ext := range []string{".gz", ".bz2", ".zst"} {
		base = strings.TrimSuffix(base, ext)
	}
	return strings.TrimSuffix(strings.TrimSuffix(base, ".json"), ".md")
}

// eolDate is endoflife.date's union field: a YYYY-MM-DD date, or true
// (ended, no date) / false (not ended).
type eolDate struct {
	end   time.Time
	ended bool
	set   bool
}

func (d *eolDate) parse(s string) error {
	switch s {
	case "true":
		*d = eolDate{ended: true, set: true}
	case "false":
		*d = eolDate{set: true}
	default:
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return fmt.Errorf("want YYYY-MM-DD, true or false, got %q", s)
		}
		*d = eolDate{end: t, set: true}
	}
	return nil
}

// UnmarshalYAML reads a date or a boolean.
func (d *eolDate) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a date or a boolean", n.Line)
	}
	if err := d.parse(n.Value); err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	return nil
}

// UnmarshalJSON reads a "date" or a boolean.
func (d *eolDate) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		s = string(b)
	}
	return d.parse(s)
}

// eolRelease is a release cycle in any of endoflife.date's formats: the
// repository's releaseCycle, API v0's cycle, API v1's name and eolFrom.
type eolRelease struct {
	ReleaseCycle string  `yaml:"releaseCycle" json:"-"`
	Cycle        string  `yaml:"-" json:"cycle"`
	Name         string  `yaml:"-" json:"name"`
	EOL          eolDate `yaml:"eol" json:"eol"`
	IsEOL        *bool   `yaml:"-" json:"isEol"`
	EOLFrom      *string `yaml:"-" json:"eolFrom"`
}

func (r eolRelease) cycleName() string {
	for _, s := range []string{r.ReleaseCycle, r.Cycle, r.Name} {
		if s != "" {
			return s
		}
	}
	return ""
}

// LoadEndOfLife reads the release cycles of the endoflife.date product
// name from one of its formats, recognised by the first byte:
//   - `---`: the repository's products/<name>.md, YAML front matter with
//     releases[] {releaseCycle, eol} and identifiers[] (its cpe entries
//     add to the product's CPEs);
//   - `[`: API v0, https://endoflife.date/api/<name>.json, [{cycle, eol}];
//   - `{`: API v1, https://endoflife.date/api/v1/products/<name>/,
//     {result: {name, identifiers, releases[] {name, isEol, eolFrom}}}.
//
// eol is a date, or true/false when the product gives no date. cpes maps
// product names to CPE products (EndOfLifeCPE); a product with no CPE from
// either source is an error, so a file is never silently unused.
func (c *Catalog) LoadEndOfLife(name string, r io.Reader, cpes map[string][]string) error {
	br := bufio.NewReader(r)
	first, err := firstByte(br)
	if err != nil {
		return err
	}
	var (
		releases []eolRelease
		ids      []string
	)
	switch first {
	case '-':
		releases, ids, err = readEndOfLifeMarkdown(br)
	case '[':
		err = json.NewDecoder(br).Decode(&releases)
	case '{':
		var doc struct {
			Result *struct {
				Name        string `json:"name"`
				Identifiers []struct {
					ID   string `json:"id"`
					Type string `json:"type"`
				} `json:"identifiers"`
				Releases []eolRelease `json:"releases"`
			} `json:"result"`
		}
		if err = json.NewDecoder(br).Decode(&doc); err == nil {
			if doc.Result == nil {
				return errors.New("want an API v1 product response with result")
			}
			if doc.Result.Name != "" {
				name = doc.Result.Name
			}
			for _, id := range doc.Result.Identifiers {
				if id.Type == "cpe" {
					ids = append(ids, id.ID)
				}
			}
			releases = doc.Result.Releases
		}
	default:
		return fmt.Errorf("want a products/*.md file or API JSON, got %q first", first)
	}
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	prods := map[string]bool{}
	for _, p := range cpes[name] {
		prods[p] = true
	}
	for _, id := range ids {
		if strings.HasPrefix(id, "cpe:2.3:") {
			if p, _, ok := splitCPE(id + ":*"); ok {
				prods[p] = true
			}
		}
	}
	if len(prods) == 0 {
		return fmt.Errorf("no CPE product for endoflife.date product %q: add it under endoflife_cpe", name)
	}
	if len(releases) == 0 {
		return fmt.Errorf("product %q: no releases", name)
	}
	cycles := make([]eolCycle, 0, len(releases))
	for i, rel := range releases {
		cn := rel.cycleName()
		if cn == "" {
			return fmt.Errorf("releases[%d]: no cycle name", i)
		}
		end := rel.EOL
		if rel.IsEOL != nil { // API v1
			end = eolDate{ended: *rel.IsEOL, set: true}
			if rel.EOLFrom != nil {
				t, err := time.Parse(time.DateOnly, *rel.EOLFrom)
				if err != nil {
					return fmt.Errorf("releases[%d].eolFrom: want YYYY-MM-DD, got %q", i, *rel.EOLFrom)
				}
				end.end = t
			}
		}
		if !end.set {
			return fmt.Errorf("releases[%d] (%s): no eol", i, cn)
		}
		cycles = append(cycles, eolCycle{cycle: parseVersion(cn), end: end.end, ended: end.ended})
	}
	for p := range prods {
		c.eol[p] = append(c.eol[p], cycles...)
	}
	return nil
}

// readEndOfLifeMarkdown reads the YAML front matter of an endoflife.date
// products/*.md file.
func readEndOfLifeMarkdown(br *bufio.Reader) ([]eolRelease, []string, error) {
	line, err := br.ReadString('\n')
	if strings.TrimSpace(line) != "---" {
		return nil, nil, fmt.Errorf("line 1: want ---, got %q (%v)", line, err)
	}
	var fm strings.Builder
	for {
		line, err := br.ReadString('\n')
		if strings.TrimSpace(line) == "---" {
			break
		}
		fm.WriteString(line)
		if err != nil {
			return nil, nil, errors.New("front matter not closed by ---")
		}
	}
	var doc struct {
		Identifiers []map[string]string `yaml:"identifiers"`
		Releases    []eolRelease        `yaml:"releases"`
	}
	// Not strict: the front matter has many keys for the site.
	if err := yaml.Unmarshal([]byte(fm.String()), &doc); err != nil {
		return nil, nil, err
	}
	var ids []string
	for _, m := range doc.Identifiers {
		if v, ok := m["cpe"]; ok {
			ids = append(ids, v)
		}
	}
	return doc.Releases, ids, nil
}
