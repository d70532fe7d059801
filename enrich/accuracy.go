package enrich

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/netintel/netintel/ingest"
)

// Capture is one real capture of a service with what it is
// (testdata/fingerprints/README.md): the accuracy harness's unit.
type Capture struct {
	ID         string     `json:"id"`
	Family     string     `json:"family"`
	Provenance Provenance `json:"provenance"`
	Expect     Expect     `json:"expect"`
	// Negative says no vendor may be named: a look-alike, a plain login
	// page, a reverse proxy, a honeypot.
	Negative    bool   `json:"negative,omitempty"`
	LookalikeOf string `json:"lookalike_of,omitempty"`
	// Copy, on a negative, says why no observation can tell it from the
	// product: a honeypot, decoy or tarpit that sends the product's own
	// tells byte for byte (its Server header, its SSH identification, the
	// signature a scanner matches). A named copy is counted apart
	// (Report.CopiesNamed), not failed; every other negative named is.
	Copy        string             `json:"copy,omitempty"`
	Observation ingest.Observation `json:"observation"`

	file string
}

// Provenance says where a capture was published and what was changed.
type Provenance struct {
	URL       string `json:"url"`
	Retrieved string `json:"retrieved"`
	What      string `json:"what"`
	Trimmed   string `json:"trimmed"`
	// Note says anything else a reader should know (why a negative is one).
	Note string `json:"note,omitempty"`
}

// Expect is what a capture is: its vendor and product, and its version or
// version band where the source establishes one.
type Expect struct {
	Vendor  *string `json:"vendor"`
	Product string  `json:"product,omitempty"`
	Version string  `json:"version,omitempty"`
	Band    string  `json:"band,omitempty"`
}

// LoadCaptures reads every .json capture under dir (one folder a family);
// a capture that does not parse, lacks its provenance or expectation, or
// whose observation is invalid, and a member the format does not know,
// are an error naming its file: the repository's corpus is held to the
// format exactly.
func LoadCaptures(dir string) ([]Capture, error) {
	caps, problems, err := LoadCapturesLenient(dir)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return caps, nil
}

// LoadCapturesLenient reads the captures under dir as LoadCaptures does,
// but a capture that cannot be read is left out and named in problems,
// and one with a member the format does not know is read without it (the
// member named in problems): one bad file does not stop the evaluation of
// a folder of someone else's captures (`netintel rules eval`).
func LoadCapturesLenient(dir string) (caps []Capture, problems []error, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".json") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var c Capture
		dropped, err := ingest.DecodeKeepingKnown(b, &c)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", path, err))
			return nil
		}
		if len(dropped) > 0 {
			problems = append(problems, fmt.Errorf("%s: %s", path, ingest.UnknownMembersWarning(dropped)))
		}
		c.file = path
		if err := c.checkMeta(); err != nil {
			// Someone else's capture may lack what only the repository's
			// corpus must carry: its id is then its file's name, its
			// family its folder's, and a missing provenance is named.
			problems = append(problems, fmt.Errorf("%s: %w", path, err))
			if c.ID == "" {
				c.ID = strings.TrimSuffix(filepath.Base(path), ".json")
			}
			if c.Family == "" && !c.Negative {
				c.Family = filepath.Base(filepath.Dir(path))
			}
		}
		if err := c.checkEvidence(); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w (left out)", path, err))
			return nil
		}
		caps = append(caps, c)
		return nil
	})
	if err != nil {
		return nil, problems, fmt.Errorf("read captures: %w", err)
	}
	if len(caps) == 0 {
		if len(problems) > 0 {
			return nil, problems, fmt.Errorf("read captures: none of the captures under %s could be read: %w", dir, errors.Join(problems...))
		}
		return nil, nil, fmt.Errorf("read captures: no .json captures under %s", dir)
	}
	return caps, problems, nil
}

// checkMeta holds what the repository's corpus must carry beside the
// evidence: an id, the provenance, a positive's family.
func (c *Capture) checkMeta() error {
	switch {
	case c.ID == "":
		return errors.New("id: required")
	case c.Provenance.URL == "" || c.Provenance.Retrieved == "":
		return errors.New("provenance: url and retrieved are required")
	case !c.Negative && c.Family == "":
		return errors.New("family: required")
	}
	return nil
}

// checkEvidence holds what an evaluation cannot do without: an
// expectation that says what the capture is, and a valid observation.
func (c *Capture) checkEvidence() error {
	switch {
	case c.Negative && c.Expect.Vendor != nil && *c.Expect.Vendor != "":
		return errors.New("expect.vendor: a negative names no vendor")
	case !c.Negative && (c.Expect.Vendor == nil || *c.Expect.Vendor == ""):
		return errors.New("expect.vendor: required (or negative: true)")
	case c.Copy != "" && !c.Negative:
		return errors.New("copy: only a negative is a copy of a product")
	}
	if err := c.Observation.Normalize(); err != nil {
		return fmt.Errorf("observation: %w", err)
	}
	if c.Observation.Type != ingest.TypeService && c.Observation.Type != ingest.TypeFlow {
		return fmt.Errorf("observation.type: want service or flow, got %q", c.Observation.Type)
	}
	return nil
}

// Outcome is what the rules said of one capture.
type Outcome struct {
	Capture *Capture
	Got     Fingerprint
	Named   bool
	// VendorRight: a positive got its vendor. WrongVendor: a positive got
	// another vendor. OnNegative: a negative got a vendor; OnCopy: a
	// negative marked as an exact copy did (and OnNegative is false).
	VendorRight, WrongVendor, OnNegative, OnCopy bool
	// HasVersion: the capture carries a version or band; VersionRight:
	// the rules gave it (an exact version equal to it, or a band holding it).
	HasVersion, VersionRight bool
}

// FamilyScore is the accuracy over one family's captures.
type FamilyScore struct {
	Family string
	// Positives are the family's captures; Right got the vendor; Named is
	// how often the family was named, WrongNamed of those wrongly.
	Positives, Right, Named, WrongNamed int
	Versioned, VersionRight             int
}

// Precision is right namings over all namings of the family (1 when never named).
func (f FamilyScore) Precision() float64 {
	if f.Named == 0 {
		return 1
	}
	return float64(f.Named-f.WrongNamed) / float64(f.Named)
}

// Recall is the share of the family's captures that got the right vendor.
func (f FamilyScore) Recall() float64 {
	if f.Positives == 0 {
		return 1
	}
	return float64(f.Right) / float64(f.Positives)
}

// Report is the accuracy of a rule set over a corpus.
type Report struct {
	Outcomes []Outcome
	Families []FamilyScore
	// Totals over the corpus.
	Positives, Negatives, Right, WrongVendors, OnNegatives, Versioned, VersionRight int
	// Copies are the negatives marked as exact copies of a product,
	// CopiesNamed those given a vendor (not in OnNegatives).
	Copies, CopiesNamed int
}

// Evaluate runs the rules over every capture.
func Evaluate(rules *Rules, caps []Capture) *Report {
	rep := &Report{}
	fams := map[string]*FamilyScore{}
	fam := func(name string) *FamilyScore {
		if fams[name] == nil {
			fams[name] = &FamilyScore{Family: name}
		}
		return fams[name]
	}
	for i := range caps {
		c := &caps[i]
		o := c.Observation
		fp, ok := rules.Match(o.Service, o.Flow)
		out := Outcome{Capture: c, Got: fp, Named: ok}
		namedFam := strings.TrimSuffix(fp.RuleID, "+recog")
		switch {
		case c.Negative && c.Copy != "":
			rep.Negatives++
			rep.Copies++
			out.OnCopy = ok
			if ok {
				rep.CopiesNamed++
			}
		case c.Negative:
			rep.Negatives++
			out.OnNegative = ok
			if ok {
				rep.OnNegatives++
				f := fam(namedFam)
				f.Named++
				f.WrongNamed++
			}
		default:
			rep.Positives++
			f := fam(c.Family)
			f.Positives++
			want := *c.Expect.Vendor
			out.VendorRight = ok && SameVendor(fp.Vendor, want)
			out.WrongVendor = ok && !out.VendorRight
			if out.VendorRight {
				rep.Right++
				f.Right++
			}
			if ok {
				n := fam(namedFam)
				n.Named++
				if out.WrongVendor {
					n.WrongNamed++
					rep.WrongVendors++
				}
			}
			if c.Expect.Version != "" || c.Expect.Band != "" {
				out.HasVersion = true
				rep.Versioned++
				f.Versioned++
				if out.VendorRight && versionAgrees(c.Expect, fp) {
					out.VersionRight = true
					rep.VersionRight++
					f.VersionRight++
				}
			}
		}
		rep.Outcomes = append(rep.Outcomes, out)
	}
	for _, f := range fams {
		rep.Families = append(rep.Families, *f)
	}
	slices.SortFunc(rep.Families, func(a, b FamilyScore) int { return strings.Compare(a.Family, b.Family) })
	return rep
}

// versionAgrees: an expected exact version is given exactly, or lies in
// the band given; an expected band is given, or holds the version given,
// or holds the whole of the (narrower) band given.
//
// Versions compare as their digit and letter runs, as people write one
// version differently ("9.18(1)" and "9.18.1", "v7.0.12" and "7.0.12",
// "13.1-59.19" and "13.1.59.19"); an exact version that goes further than
// the expected one ("7.2.5.1517" for "7.2.5") is right. An expected band
// may be written "7.0.x", "7.0.*", "7.0" or "7.x".
func versionAgrees(want Expect, fp Fingerprint) bool {
	norm := func(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
	want.Band = wantBand(want.Band)
	if want.Version != "" {
		if fp.ExactVersion != "" {
			return norm(fp.ExactVersion) == norm(want.Version) || versionPrefix(want.Version, fp.ExactVersion)
		}
		if fp.VersionBand != "" {
			if norm(fp.VersionBand) == norm(want.Band) {
				return true
			}
			if iv, ok := bandInterval(fp.VersionBand); ok {
				return iv.contains(parseVersion(want.Version))
			}
		}
		return false
	}
	if fp.VersionBand != "" && norm(fp.VersionBand) == norm(want.Band) {
		return true
	}
	if iv, ok := bandInterval(want.Band); ok {
		if fp.ExactVersion != "" {
			return iv.contains(parseVersion(fp.ExactVersion))
		}
		// a narrower band inside the expected one ("22.7R2.x" in "22.7.x")
		if got, ok := bandInterval(fp.VersionBand); ok {
			return got.within(iv)
		}
	}
	return false
}

// versionPrefix reports whether the version runs of want begin those of
// got (the leading "v" of either dropped), want having at least two.
func versionPrefix(want, got string) bool {
	w, g := parseVersion(dropV(want)), parseVersion(dropV(got))
	return len(w) >= 2 && len(g) >= len(w) && cmpVersion(w, g[:len(w)]) == 0
}

// wantBand writes an expected band the way bandInterval reads bands: a
// trailing ".*" or a bare "7.0" (not a range or list) becomes "7.0.x".
func wantBand(b string) string {
	b = dropV(b)
	if b == "" || strings.ContainsAny(b, ",") || strings.Contains(b, "..") {
		return b
	}
	if p, ok := strings.CutSuffix(b, ".*"); ok {
		return p + ".x"
	}
	if !strings.HasSuffix(strings.ToLower(b), ".x") {
		return b + ".x"
	}
	return b
}

func pct(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(d))
}

// Table writes the report as a Markdown table, one row a family and a
// row of totals.
func (r *Report) Table() string {
	var b bytes.Buffer
	b.WriteString("| family | captures | right vendor | recall | named | wrong | precision | with version | right version |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, f := range r.Families {
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %d | %d | %s | %d | %s |\n", f.Family, f.Positives, f.Right, pct(f.Right, f.Positives),
			f.Named, f.WrongNamed, pct(f.Named-f.WrongNamed, f.Named), f.Versioned, pct(f.VersionRight, f.Versioned))
	}
	named := r.Right + r.WrongVendors + r.OnNegatives
	fmt.Fprintf(&b, "| **all** | %d (+%d negatives) | %d | %s | %d | %d | %s | %d | %s |\n", r.Positives, r.Negatives, r.Right, pct(r.Right, r.Positives),
		named, r.WrongVendors+r.OnNegatives, pct(r.Right, named), r.Versioned, pct(r.VersionRight, r.Versioned))
	if r.Copies > 0 {
		fmt.Fprintf(&b, "\nExact copies among the negatives (honeypots, decoys, tarpits that send the product's own tells; `copy` in the capture): %d, of which %d named. They are not in the table's counts of named and wrong.\n", r.Copies, r.CopiesNamed)
	}
	return b.String()
}

// Mistakes lists the wrong vendors, vendors on negatives and misses, one
// line each with the capture's file.
func (r *Report) Mistakes() (wrong, misses []string) {
	for _, o := range r.Outcomes {
		c := o.Capture
		switch {
		case o.WrongVendor:
			wrong = append(wrong, fmt.Sprintf("%s: wrong vendor %q (rule %s), want %q", c.file, o.Got.Vendor, o.Got.RuleID, *c.Expect.Vendor))
		case o.OnNegative:
			wrong = append(wrong, fmt.Sprintf("%s: negative named %q (rule %s)", c.file, o.Got.Vendor, o.Got.RuleID))
		case o.OnCopy:
			misses = append(misses, fmt.Sprintf("%s: exact copy named %q (rule %s): %s", c.file, o.Got.Vendor, o.Got.RuleID, c.Copy))
		case !c.Negative && !o.Named:
			misses = append(misses, fmt.Sprintf("%s: no vendor, want %q", c.file, *c.Expect.Vendor))
		case o.HasVersion && !o.VersionRight && o.VendorRight:
			misses = append(misses, fmt.Sprintf("%s: version %q band %q, want %q band %q", c.file, o.Got.ExactVersion, o.Got.VersionBand, c.Expect.Version, c.Expect.Band))
		}
	}
	return wrong, misses
}

// MarshalJSON is the report as data (netintel rules eval --json).
func (r *Report) MarshalJSON() ([]byte, error) {
	type fam struct {
		FamilyScore
		Precision, Recall float64
	}
	out := struct {
		Families                                               []fam
		Positives, Negatives, Right, WrongVendors, OnNegatives int
		Versioned, VersionRight, Copies, CopiesNamed           int
	}{Positives: r.Positives, Negatives: r.Negatives, Right: r.Right, WrongVendors: r.WrongVendors, OnNegatives: r.OnNegatives,
		Versioned: r.Versioned, VersionRight: r.VersionRight, Copies: r.Copies, CopiesNamed: r.CopiesNamed}
	for _, f := range r.Families {
		out.Families = append(out.Families, fam{f, f.Precision(), f.Recall()})
	}
	return json.Marshal(out)
}
