package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at link time: go build -ldflags "-X main.version=v1.2.3"
// (`make build` passes `git describe`). Empty, the module version that
// `go install ...@v1.2.3` records is used, else the VCS revision, else
// "dev" (docs/operators.md, "Version").
var version string

// versionCommands returns the command of this file, for commandList.
func versionCommands() []*command {
	return []*command{
		&command{name: "version", summary: "print the version, commit and Go version",
			usage:    []string{"version", "--version"},
			desc:     "Print netintel's version, the commit it was built from and the Go version that built it, on one line.\nThe version comes from -ldflags \"-X main.version=...\" (make build), else from the module version go install recorded, else the VCS revision.",
			examples: []string{"netintel version", "netintel --version"},
			run:      cmdVersion},
	}
}

func cmdVersion(_ context.Context, env *Env, args []string) error {
	fs := newFlags(env, "version")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("version: unexpected argument %q", fs.Arg(0))}
	}
	v, commit := buildVersion()
	line := "netintel " + v
	if commit != "" {
		line += " (commit " + commit + ")"
	}
	fmt.Fprintf(env.Stdout, "%s %s %s/%s\n", line, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// buildVersion returns the version (the -ldflags value, else the module
// version, else "dev") and the VCS revision with "-dirty" when the tree had
// changes, "" when unknown.
func buildVersion() (v, commit string) {
	v = version
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if v == "" {
			v = "dev"
		}
		return v, ""
	}
	if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
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
	if v == "" {
		v = "dev"
	}
	return v, commit
}
