package probe

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"
)

// BuiltinPrefix marks an input that ships inside the binary: probe
// configuration values such as "builtin:tld-whois.tsv" name a file of
// probe/defaults/ (docs/config-probe.md), found from any working folder.
const BuiltinPrefix = "builtin:"

//go:embed defaults/tld-whois.tsv defaults/supplemental-cctld-rdap.json
var builtinFiles embed.FS

// BuiltinNames lists the inputs that ship inside the binary.
func BuiltinNames() []string {
	ents, _ := fs.ReadDir(builtinFiles, "defaults")
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// readBuiltin returns the embedded input src ("builtin:NAME").
func readBuiltin(src string) ([]byte, error) {
	name := strings.TrimPrefix(src, BuiltinPrefix)
	b, err := builtinFiles.ReadFile("defaults/" + name)
	if err != nil {
		return nil, fmt.Errorf("%s: no such built-in input (have %s)", src, strings.Join(BuiltinNames(), ", "))
	}
	return b, nil
}
