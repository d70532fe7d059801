package enrich

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/netintel/netintel/ingest"
)

// Partial evidence (docs/accuracy.md, "Partial evidence"): one answer of
// an appliance reaches public sources in pieces. A write-up quotes only
// the headers, another only the body or its first lines, a third the
// certificate; HTTP/2 tools print header names in lower case; a forum
// post drops the status line or the request; a scanner keeps the first
// KiB of a body. PartialVariants makes, from one capture, the
// observations such sources could have recorded, and EvaluatePartial
// measures what the rules name of them.

// Kinds of partial variant, in the order PartialVariants makes them.
const (
	VariantProbe        = "probe alone"    // one probe of several, without the scanner's identification
	VariantHeaders      = "headers only"   // the response's status and headers, no body and no certificate
	VariantBody         = "body only"      // the response's body (and the request), no status, headers or certificate
	VariantBody4K       = "body cut 4 KiB" // the response's body cut to its first 4 KiB
	VariantBody1K       = "body cut 1 KiB" // the response's body cut to its first 1 KiB
	VariantLowerHeaders = "headers lower-case"
	VariantNoStatus     = "no status line" // status, reason and protocol dropped
	VariantNoRequest    = "no request"     // request method, path and headers dropped
	VariantTLS          = "TLS alone"      // the probe's certificate and handshake alone
	VariantBanner       = "banner alone"   // the probe's raw banner alone
)

// VariantKinds lists the kinds of partial variant.
var VariantKinds = []string{VariantProbe, VariantHeaders, VariantBody, VariantBody4K, VariantBody1K,
	VariantLowerHeaders, VariantNoStatus, VariantNoRequest, VariantTLS, VariantBanner}

// Variant is one partial view of a capture's observation.
type Variant struct {
	Kind string
	// Probe is the index of the capture's probe the variant was made from.
	Probe       int
	Observation ingest.Observation
}

// PartialVariants returns the partial views of a service capture that
// another source could have recorded, each normalised as ingest would
// read it: each probe alone; of each probe its headers without the body,
// its body without status and headers, the body cut to 4 KiB and 1 KiB,
// header names lower-cased, the status line or the request dropped; the
// certificate alone and the banner alone. A variant identical to the
// capture, or to an earlier variant, is left out; so is one ingest would
// refuse.
func PartialVariants(c *Capture) []Variant {
	o := c.Observation
	if o.Service == nil || len(o.Service.Probes) == 0 {
		return nil
	}
	seen := map[string]bool{obsKey(&o): true}
	var out []Variant
	add := func(kind string, i int, p ingest.Probe) {
		// p shares its request, response and bodies with the capture: the
		// variant is a deep copy, so that normalising it leaves the
		// capture as it was.
		svc := *o.Service
		svc.Detected, svc.Probes = nil, []ingest.Probe{p}
		shallow := o
		shallow.Service = &svc
		v, err := cloneObservation(&shallow)
		if err != nil {
			return
		}
		if err := v.Normalize(); err != nil {
			return
		}
		k := obsKey(&v)
		if seen[k] {
			return
		}
		seen[k] = true
		out = append(out, Variant{Kind: kind, Probe: i, Observation: v})
	}
	for i, p := range o.Service.Probes {
		add(VariantProbe, i, p)
		if r := p.Response; r != nil {
			if len(r.Headers) > 0 && (r.Body != nil || r.Title != "") {
				h := *r
				h.Body, h.Title = nil, ""
				add(VariantHeaders, i, ingest.Probe{Name: p.Name, Request: p.Request, Response: &h})
			}
			if r.Body != nil && r.Body.Data != "" && (r.Status != 0 || len(r.Headers) > 0 || p.TLS != nil) {
				add(VariantBody, i, ingest.Probe{Name: p.Name, Request: p.Request, Response: &ingest.Response{Body: r.Body}})
			}
			for _, cut := range []struct {
				kind string
				n    int
			}{{VariantBody4K, 4 << 10}, {VariantBody1K, 1 << 10}} {
				if b, ok := cutBody(r.Body, cut.n); ok {
					q := p
					rr := *r
					rr.Body = b
					q.Response = &rr
					add(cut.kind, i, q)
				}
			}
			if len(r.Headers) > 0 {
				q := p
				rr := *r
				rr.Headers = make(ingest.Headers, len(r.Headers))
				for j, h := range r.Headers {
					h.Name = strings.ToLower(h.Name)
					rr.Headers[j] = h
				}
				q.Response = &rr
				add(VariantLowerHeaders, i, q)
			}
			if r.Status != 0 || r.Reason != "" || r.Protocol != "" {
				q := p
				rr := *r
				rr.Status, rr.Reason, rr.Protocol = 0, "", ""
				q.Response = &rr
				add(VariantNoStatus, i, q)
			}
		}
		if p.Request != nil && (p.Response != nil || p.TLS != nil || p.Banner != nil) {
			q := p
			q.Request = nil
			add(VariantNoRequest, i, q)
		}
		if p.TLS != nil && (p.Request != nil || p.Response != nil || p.Banner != nil) {
			add(VariantTLS, i, ingest.Probe{Name: p.Name, TLS: p.TLS})
		}
		if p.Banner != nil && (p.Request != nil || p.Response != nil || p.TLS != nil) {
			add(VariantBanner, i, ingest.Probe{Name: p.Name, Banner: p.Banner})
		}
	}
	return out
}

// cutBody returns b cut to its first n bytes, as a scanner that keeps the
// top of a page records it (no hashes of the whole, which it would not
// have computed), and false when b is no longer than n.
func cutBody(b *ingest.Body, n int) (*ingest.Body, bool) {
	if b == nil {
		return nil, false
	}
	raw := b.Bytes()
	if len(raw) <= n {
		return nil, false
	}
	c := &ingest.Body{Truncated: true, Length: int64(len(raw))}
	if b.Encoding == ingest.EncodingBase64 {
		c.Encoding, c.Data = ingest.EncodingBase64, base64.StdEncoding.EncodeToString(raw[:n])
	} else {
		c.Data = strings.ToValidUTF8(b.Data[:n], "")
	}
	return c, true
}

func cloneObservation(o *ingest.Observation) (ingest.Observation, error) {
	var v ingest.Observation
	b, err := jsonv2.Marshal(o)
	if err != nil {
		return v, fmt.Errorf("clone observation: %w", err)
	}
	if err := jsonv2.Unmarshal(b, &v, ingest.DecodeOptions); err != nil {
		return v, fmt.Errorf("clone observation: %w", err)
	}
	return v, nil
}

func obsKey(o *ingest.Observation) string {
	b, err := jsonv2.Marshal(o.Service, jsonv2.Deterministic(true))
	if err != nil {
		return ""
	}
	return string(b)
}

// variantRight reports whether a variant of positive c was given its
// vendor. The IVE line is labelled by what its evidence names
// (testdata/fingerprints/README.md): a capture labelled Juniper Networks
// because one piece names Juniper (nmap's "Juniper Networks Secure Access"
// or the SA title) has pieces without that name, such as a bare
// /dana-na/ redirect, which the corpus labels Ivanti; Ivanti is right for
// those.
func variantRight(c *Capture, fp Fingerprint) bool {
	want := *c.Expect.Vendor
	if SameVendor(fp.Vendor, want) {
		return true
	}
	return c.Family == "ivanti-connect-secure" && SameVendor(want, "Juniper Networks") && SameVendor(fp.Vendor, "Ivanti")
}

// PartialScore counts the variants of one family or of one kind.
type PartialScore struct {
	Name string
	// Variants of positives, how many got the right vendor, how many
	// another vendor.
	Variants, Right, Wrong int
	// NegVariants are variants of plain negatives, NegNamed those named;
	// CopyVariants and CopyNamed the same of negatives marked `copy`.
	NegVariants, NegNamed, CopyVariants, CopyNamed int
}

// PartialReport is what the rules named of the partial variants of a
// corpus.
type PartialReport struct {
	Total    PartialScore
	Kinds    []PartialScore
	Families []PartialScore
	// Lost counts, by rule, the positives that rule named whole while no
	// variant of them got the right vendor.
	Lost map[string]int
	// LostBy counts, by kind of variant and rule, the variants of that
	// kind that got no right vendor of positives the rule named whole.
	LostBy map[string]map[string]int
	// Missed lists each variant of a positive named whole that got no
	// vendor.
	Missed []string
	// Wrong lists each variant of a positive given another vendor, and
	// each variant of a plain negative given a vendor; Copies each
	// variant of a copy given one.
	Wrong, Copies []string
}

// EvaluatePartial runs the rules over every partial variant of every
// service capture.
func EvaluatePartial(rules *Rules, caps []Capture) *PartialReport {
	rep := &PartialReport{Lost: map[string]int{}, LostBy: map[string]map[string]int{}}
	kinds := map[string]*PartialScore{}
	for _, k := range VariantKinds {
		kinds[k] = &PartialScore{Name: k}
	}
	fams := map[string]*PartialScore{}
	for i := range caps {
		c := &caps[i]
		vs := PartialVariants(c)
		if len(vs) == 0 {
			continue
		}
		fam := c.Family
		if c.Negative {
			fam = "negatives"
		}
		if fams[fam] == nil {
			fams[fam] = &PartialScore{Name: fam}
		}
		whole, wholeOK := rules.Match(c.Observation.Service, c.Observation.Flow)
		anyRight := false
		for _, v := range vs {
			fp, ok := rules.Match(v.Observation.Service, v.Observation.Flow)
			for _, s := range []*PartialScore{&rep.Total, kinds[v.Kind], fams[fam]} {
				switch {
				case c.Negative && c.Copy != "":
					s.CopyVariants++
					if ok {
						s.CopyNamed++
					}
				case c.Negative:
					s.NegVariants++
					if ok {
						s.NegNamed++
					}
				default:
					s.Variants++
					if ok && variantRight(c, fp) {
						s.Right++
					} else if ok {
						s.Wrong++
					}
				}
			}
			wholeRight := !c.Negative && wholeOK && SameVendor(whole.Vendor, *c.Expect.Vendor)
			if wholeRight && !(ok && variantRight(c, fp)) {
				if rep.LostBy[v.Kind] == nil {
					rep.LostBy[v.Kind] = map[string]int{}
				}
				rep.LostBy[v.Kind][whole.RuleID]++
				if !ok {
					rep.Missed = append(rep.Missed, fmt.Sprintf("%s: %s (probe %d) unnamed, whole named by %s", c.file, v.Kind, v.Probe, whole.RuleID))
				}
			}
			if !ok {
				continue
			}
			line := fmt.Sprintf("%s: %s (probe %d) named %q (rule %s)", c.file, v.Kind, v.Probe, fp.Vendor, fp.RuleID)
			switch {
			case c.Negative && c.Copy != "":
				rep.Copies = append(rep.Copies, line)
			case c.Negative:
				rep.Wrong = append(rep.Wrong, line+" on a negative")
			case variantRight(c, fp):
				anyRight = true
			default:
				rep.Wrong = append(rep.Wrong, line+fmt.Sprintf(", want %q", *c.Expect.Vendor))
			}
		}
		if !c.Negative && wholeOK && SameVendor(whole.Vendor, *c.Expect.Vendor) && !anyRight {
			rep.Lost[whole.RuleID]++
		}
	}
	for _, k := range VariantKinds {
		rep.Kinds = append(rep.Kinds, *kinds[k])
	}
	for _, f := range fams {
		rep.Families = append(rep.Families, *f)
	}
	slices.SortFunc(rep.Families, func(a, b PartialScore) int { return strings.Compare(a.Name, b.Name) })
	return rep
}

// Table writes the report as Markdown: one table by kind of variant, one
// by family, and the rules that named a capture none of whose variants
// got its vendor.
func (r *PartialReport) Table() string {
	var b bytes.Buffer
	row := func(s PartialScore) {
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %d | %d of %d | %d of %d |\n", s.Name, s.Variants, s.Right, pct(s.Right, s.Variants), s.Wrong,
			s.NegNamed, s.NegVariants, s.CopyNamed, s.CopyVariants)
	}
	head := func(first string) {
		fmt.Fprintf(&b, "| %s | variants of positives | right vendor | share | wrong vendor | plain negatives' variants named | copies' variants named |\n", first)
		b.WriteString("|---|---|---|---|---|---|---|\n")
	}
	head("kind of variant")
	for _, k := range r.Kinds {
		row(k)
	}
	t := r.Total
	t.Name = "**all**"
	row(t)
	b.WriteString("\n")
	head("family")
	for _, f := range r.Families {
		row(f)
	}
	if len(r.Lost) > 0 {
		ids := make([]string, 0, len(r.Lost))
		for id := range r.Lost {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, func(a, b string) int {
			if r.Lost[a] != r.Lost[b] {
				return r.Lost[b] - r.Lost[a]
			}
			return strings.Compare(a, b)
		})
		b.WriteString("\nRules that named a capture whole but none of its variants (captures):")
		for _, id := range ids {
			fmt.Fprintf(&b, " %s (%d)", id, r.Lost[id])
		}
		b.WriteString("\n")
	}
	return b.String()
}
