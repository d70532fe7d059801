package probe

import (
	"slices"
	"strings"
	"testing"

	"github.com/netintel/netintel/internal/config"
)

// TestBuiltin_ConfigNamesAreEmbedded: the built-in inputs the config
// names are in the binary, and an unknown name is a clear error.
func TestBuiltin_ConfigNamesAreEmbedded(t *testing.T) {
	for _, name := range []string{config.BuiltinWhoisFallback, config.BuiltinStealthCandidates} {
		b, err := fetch(t.Context(), nil, "", name)
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %v", name, err)
		}
		if !slices.Contains(BuiltinNames(), strings.TrimPrefix(name, BuiltinPrefix)) {
			t.Errorf("%s not listed in %v", name, BuiltinNames())
		}
	}
	if _, err := fetch(t.Context(), nil, "", "builtin:nope.tsv"); err == nil || !strings.Contains(err.Error(), "no such built-in input") {
		t.Errorf("unknown built-in: %v", err)
	}
}
