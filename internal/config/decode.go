package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// decodeStrict parses b into out: unknown keys are errors naming the field
// path and line; ${VAR} references are expanded in scalar values only; type
// errors carry the field path and line too.
func decodeStrict(b []byte, out any) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("parse yaml: %s", oneLine(err.Error()))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // empty file: defaults
	}
	root := doc.Content[0]
	var errs []error
	errs = append(errs, checkKnown(root, reflect.TypeOf(out).Elem(), "")...)
	errs = append(errs, expandEnv(root, "")...)
	if err := root.Decode(out); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			for _, m := range te.Errors {
				errs = append(errs, errors.New(describeTypeError(root, m)))
			}
			return errors.Join(errs...)
		}
		return errors.Join(append(errs, fmt.Errorf("decode: %s", oneLine(err.Error())))...)
	}
	return errors.Join(errs...)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

var durationType = reflect.TypeOf(time.Duration(0))

// checkKnown walks a mapping node against the struct type t and reports keys
// that the struct does not declare.
func checkKnown(n *yaml.Node, t reflect.Type, path string) []error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	var errs []error
	switch t.Kind() {
	case reflect.Struct:
		if t == durationType || reflect.PointerTo(t).Implements(reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()) {
			return nil
		}
		if n.Kind != yaml.MappingNode {
			return nil // the typed decode reports the mismatch
		}
		fields := map[string]reflect.Type{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			fields[name] = f.Type
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			ft, ok := fields[k.Value]
			if !ok {
				errs = append(errs, fmt.Errorf("%s (line %d): unknown key", p, k.Line))
				continue
			}
			errs = append(errs, checkKnown(v, ft, p)...)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			errs = append(errs, checkKnown(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value))...)
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, c := range n.Content {
			errs = append(errs, checkKnown(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return errs
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expandEnv replaces ${VAR} and ${VAR:-default} in scalar values. An unset
// variable without a default is an error naming the field.
func expandEnv(n *yaml.Node, path string) []error {
	var errs []error
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			errs = append(errs, expandEnv(n.Content[i+1], join(path, n.Content[i].Value))...)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			errs = append(errs, expandEnv(c, fmt.Sprintf("%s[%d]", path, i))...)
		}
	case yaml.ScalarNode:
		if !strings.Contains(n.Value, "${") {
			return nil
		}
		n.Value = envRef.ReplaceAllStringFunc(n.Value, func(m string) string {
			sub := envRef.FindStringSubmatch(m)
			if v, ok := os.LookupEnv(sub[1]); ok && (v != "" || sub[2] == "") {
				return v
			}
			if sub[2] != "" {
				return sub[3]
			}
			errs = append(errs, fmt.Errorf("%s (line %d): environment variable %s is not set", path, n.Line, sub[1]))
			return ""
		})
		// A value that came from the environment is a string unless it
		// reads as the node's target; let the typed decode resolve it.
		if n.Tag == "!!str" && n.Style == 0 {
			n.Tag = ""
		}
	}
	return errs
}

var lineRef = regexp.MustCompile(`^line (\d+): (.*)$`)

// describeTypeError turns yaml.v3's "line N: cannot unmarshal ..." into
// "path (line N): cannot unmarshal ...".
func describeTypeError(root *yaml.Node, msg string) string {
	m := lineRef.FindStringSubmatch(msg)
	if m == nil {
		return oneLine(msg)
	}
	line, _ := strconv.Atoi(m[1])
	if p := pathAtLine(root, "", line); p != "" {
		return fmt.Sprintf("%s (line %d): %s", p, line, m[2])
	}
	return fmt.Sprintf("line %d: %s", line, m[2])
}

func pathAtLine(n *yaml.Node, path string, line int) string {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			if v.Line == line && (v.Kind == yaml.ScalarNode || k.Line == line) {
				if v.Kind == yaml.ScalarNode {
					return p
				}
			}
			if r := pathAtLine(v, p, line); r != "" {
				return r
			}
			if k.Line == line {
				return p
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if c.Kind == yaml.ScalarNode && c.Line == line {
				return p
			}
			if r := pathAtLine(c, p, line); r != "" {
				return r
			}
		}
	}
	return ""
}
