// Package buildinfo names the netintel build: its version, stamped by
// `make build` (-ldflags "-X github.com/netintel/netintel/internal/buildinfo.version=...")
// or read from the module's build information, and the commit it was built
// from. `netintel version` prints them; published files carry the version
// (Parquet created_by); the secret client sends it as its User-Agent.
package buildinfo

import "runtime/debug"

// version is set at link time by the Makefile (git describe); empty in a
// plain `go build`.
var version string

// Version is the build's version: the one stamped at link time, else the
// module version `go install ...@vX` recorded, else "dev".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// Commit is the VCS revision the binary was built from (12 hex digits),
// with "-dirty" when the tree had changes; "" when unknown.
func Commit() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var commit string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
			if len(commit) > 12 {
				commit = commit[:12]
			}
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if commit != "" && dirty {
		commit += "-dirty"
	}
	return commit
}

// CreatedBy is the application string of files netintel writes, in the
// Parquet created_by form "netintel version VERSION".
func CreatedBy() string { return "netintel version " + Version() }
