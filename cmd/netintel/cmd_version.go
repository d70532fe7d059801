package main

import (
	"context"
	"fmt"
	"runtime"

	"github.com/netintel/netintel/internal/buildinfo"
)

// versionCommands returns the command of this file, for commandList.
func versionCommands() []*command {
	return []*command{
		&command{name: "version", summary: "print the version, commit and Go version",
			usage:    []string{"version", "--version"},
			desc:     "Print netintel's version, the commit it was built from and the Go version that built it, on one line.\nThe version comes from -ldflags \"-X github.com/netintel/netintel/internal/buildinfo.version=...\" (make build), else from the module version go install recorded, else the VCS revision.",
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
	v, commit := buildinfo.Version(), buildinfo.Commit()
	line := "netintel " + v
	if commit != "" {
		line += " (commit " + commit + ")"
	}
	fmt.Fprintf(env.Stdout, "%s %s %s/%s\n", line, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
