package buildinfo

import (
	"runtime/debug"
	"testing"
)

// Version is the stamped version when there is one, else the module's
// recorded version, else "dev" (a test binary records "(devel)" or none).
func TestVersion(t *testing.T) {
	stamped := version
	t.Cleanup(func() { version = stamped })
	version = ""
	want := "dev"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		want = bi.Main.Version
	}
	if got := Version(); got != want {
		t.Errorf("unstamped: %q, want %q", got, want)
	}
	version = "v1.2.3-stamped"
	if got := Version(); got != "v1.2.3-stamped" {
		t.Errorf("stamped: %q", got)
	}
}
