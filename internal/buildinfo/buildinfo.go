// Package buildinfo names the netintel build: its version, stamped by
// `make build` (-ldflags "-X .../internal/buildinfo.version=...") or read
// from the module's build information. Published files carry it (Parquet
// created_by).
package buildinfo

import "runtime/debug"

// version is set at link time by the Makefile (git describe); empty in a
// plain `go build`.
var version string

// Version is the build's version: the one stamped at link time, else the
// module version `go install ...@vX` recorded, else "devel".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// CreatedBy is the application string of files netintel writes, in the
// Parquet created_by form "netintel version VERSION".
func CreatedBy() string { return "netintel version " + Version() }
