// Package genrule writes the rules that enrich's importers (nuclei,
// wafw00f, wappalyzer) generate from public fingerprint databases: each
// rule as one item of the rules file's `rules:` list (docs/rules.md), in
// the same key order whoever generates it.
package genrule

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Str is a string scalar, quoted where YAML needs it.
func Str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s, Tag: "!!str"} }

// Int is an integer scalar.
func Int(n int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.Itoa(n), Tag: "!!int"}
}

// Key is a mapping key.
func Key(k string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: k} }

// Rule is one generated rule. Every generated rule reads HTTPS answers and
// carries guard_vendor (the hand-written rules' look-alike guards apply).
type Rule struct {
	ID, Vendor, Product string
	CPE                 string // "" for none
	Sources             []string
	Notes               string
	Match               *yaml.Node
	// Versions are the rule's version extractors, each its keys and
	// values in order (written as a flow mapping of strings).
	Versions [][][2]string
}

// Write appends r to b as an item of the `rules:` list.
func Write(b *bytes.Buffer, r Rule) {
	doc := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) { doc.Content = append(doc.Content, Key(k), v) }
	add("id", Str(r.ID))
	add("vendor", Str(r.Vendor))
	add("product", Str(r.Product))
	if r.CPE != "" {
		add("cpe", &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{Str(r.CPE)}})
	}
	add("protocol_family", Str("https"))
	sources := &yaml.Node{Kind: yaml.SequenceNode}
	for _, s := range r.Sources {
		sources.Content = append(sources.Content, Str(s))
	}
	add("sources", sources)
	add("notes", Str(r.Notes))
	add("match", r.Match)
	add("guard_vendor", &yaml.Node{Kind: yaml.ScalarNode, Value: "true", Tag: "!!bool"})
	if len(r.Versions) > 0 {
		vs := &yaml.Node{Kind: yaml.SequenceNode}
		for _, v := range r.Versions {
			m := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
			for _, kv := range v {
				m.Content = append(m.Content, Key(kv[0]), Str(kv[1]))
			}
			vs.Content = append(vs.Content, m)
		}
		add("versions", vs)
	}
	out, err := yaml.Marshal(&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{doc}})
	if err != nil {
		panic(err) // a tree built above always marshals
	}
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if line != "" {
			b.WriteString("  " + line)
		}
	}
}

// Counts renders a header's tally of what was skipped and why, " reason
// (n);" in key order, or " none".
func Counts(m map[string]int) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var s strings.Builder
	for _, k := range ks {
		fmt.Fprintf(&s, " %s (%d);", k, m[k])
	}
	if s.Len() == 0 {
		return " none"
	}
	return s.String()
}
