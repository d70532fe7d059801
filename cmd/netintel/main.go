// Command netintel is the one binary of netintel: IP intelligence, TLD
// RDAP/WHOIS status and one-time secrets on NATS JetStream and an object
// store. `netintel help` lists the subcommands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/netintel/netintel/internal/telemetry"
)

// Env is what a subcommand may touch of the outside world.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// LogFormat is the global --log-format given before the command.
	LogFormat string
	// help is set when the arguments ask for help (-h, --help): a command's
	// help then goes to Stdout, not Stderr.
	help bool
}

// command is one `netintel COMMAND`. Every command's help has the same
// parts, in this order (writeHelp): Usage, the description, Subcommands,
// Flags, the notes, Examples.
type command struct {
	name    string
	summary string
	// usage lines, each after "netintel "; the first is also the summary's.
	usage []string
	// desc is the description paragraph (defaults to the summary).
	desc string
	// subs are the subcommands: name and one line each.
	subs [][2]string
	// notes is text printed after the flags (formats, environment).
	notes string
	// examples are shell lines, each a whole `netintel ...` call.
	examples []string
	run      func(ctx context.Context, env *Env, args []string) error
}

// commandList is every command, the roles first: the one place a command
// is added (help lists them by name).
func commandList() []*command {
	return slices.Concat(rolesCommands(), ingestCommands(), publishCommands(), probeCommands(),
		stateCommands(), keysCommands(), secretCommands(), rulesCommands(), datasetCommands(), versionCommands())
}

// findCommand returns the command called name.
func findCommand(name string) (*command, bool) {
	i := slices.IndexFunc(commandList(), func(c *command) bool { return c.name == name })
	if i < 0 {
		return nil, false
	}
	return commandList()[i], true
}

// usageError is a command line that cannot be run as written: exit status 2.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode prints err (one line per problem, never a panic trace) and
// returns the exit status: 0 for none or a help request, 2 for a usage
// error, 1 otherwise.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ue usageError
	if errors.As(err, &ue) && ue.error == nil {
		return 2
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintln(stderr, "netintel: "+line)
	}
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

func run(ctx context.Context, env *Env, args []string) error {
	// Global flags come before the command.
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[0], "-"), "=")
		switch name {
		case "h", "help":
			usage(env.Stdout)
			return nil
		case "version":
			return cmdVersion(ctx, env, nil)
		case "log-format":
			if !hasVal {
				if len(args) < 2 {
					return usageError{errors.New("--log-format: give text or json")}
				}
				val, args = args[1], args[1:]
			}
			if !slices.Contains(telemetry.LogFormats, val) {
				return usageError{fmt.Errorf("--log-format: %q is not text or json", val)}
			}
			env.LogFormat = val
		default:
			usage(env.Stderr)
			return usageError{fmt.Errorf("unknown global flag %s (global flags: --log-format, --version, --help)", args[0])}
		}
		args = args[1:]
	}
	if len(args) == 0 {
		usage(env.Stderr)
		return usageError{}
	}
	if args[0] == "help" {
		if len(args) < 2 {
			usage(env.Stdout)
			return nil
		}
		// `help COMMAND` is `COMMAND -h`: the command builds its flags.
		args = []string{args[1], "-h"}
	}
	c, ok := findCommand(args[0])
	if !ok {
		usage(env.Stderr)
		return usageError{fmt.Errorf("unknown command %q", args[0])}
	}
	e := *env
	e.help = wantsHelp(args[1:])
	return c.run(ctx, &e, args[1:])
}

// wantsHelp reports whether args ask for help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage:
  netintel [--log-format text|json] COMMAND [flags] [ARGS]
  netintel help COMMAND
  netintel --version

netintel runs the IP intelligence pipeline, the TLD RDAP/WHOIS status and
one-time secrets on NATS JetStream and an object store; one binary, one
command per role or task.

Commands:
`)
	cmds := commandList()
	slices.SortFunc(cmds, func(a, b *command) int { return strings.Compare(a.name, b.name) })
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Global flags:
  --log-format text|json   log lines as text or JSON (default: text on a terminal, JSON otherwise)
  --version                print the version and exit
  -h, --help               print this help

Examples:
  make run                                  # or: netintel run --data-dir data
  netintel ingest --data-dir data --format tor-exits --wait samples/tor-exit-addresses
  netintel help ingest
  netintel --log-format json worker enrich

`+"`netintel COMMAND -h` shows a command's usage, flags and examples.\n")
}

// writeHelp writes c's help, or that of its subcommand sub, with the flags
// of fs (nil: none listed).
func writeHelp(w io.Writer, c *command, sub string, fs *flag.FlagSet) {
	fmt.Fprintln(w, "Usage:")
	lines := c.usage
	if sub != "" {
		lines = nil
		for _, u := range c.usage {
			if hasWords(u, c.name+" "+sub) {
				lines = append(lines, u)
			}
		}
		if len(lines) == 0 {
			lines = []string{c.name + " " + sub + " [flags]"}
		}
	}
	if len(lines) == 0 {
		lines = []string{c.name + " [flags]"}
	}
	for _, u := range lines {
		fmt.Fprintln(w, "  netintel "+u)
	}
	desc := c.desc
	if desc == "" {
		desc = c.summary
	}
	if sub != "" {
		for _, s := range c.subs {
			if s[0] == sub {
				desc = s[1]
			}
		}
	}
	fmt.Fprintln(w, "\n"+strings.TrimSpace(desc))
	if len(c.subs) > 0 && sub == "" {
		fmt.Fprintln(w, "\nSubcommands:")
		for _, s := range c.subs {
			fmt.Fprintf(w, "  %-10s %s\n", s[0], s[1])
		}
	}
	if fs != nil {
		fmt.Fprintln(w, "\nFlags:")
		out := fs.Output()
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(out)
	}
	if c.notes != "" && sub == "" {
		fmt.Fprintln(w, "\n"+strings.TrimRight(c.notes, "\n"))
	}
	ex := c.examples
	if sub != "" {
		var mine []string
		for _, e := range ex {
			if i := strings.Index(e, "netintel "+c.name+" "+sub); i >= 0 && hasWords(e[i+len("netintel "):], c.name+" "+sub) {
				mine = append(mine, e)
			}
		}
		if len(mine) > 0 {
			ex = mine
		}
	}
	fmt.Fprintln(w, "\nExamples:")
	for _, e := range ex {
		fmt.Fprintln(w, "  "+e)
	}
}

// hasWords reports whether s starts with the words of prefix, whole.
func hasWords(s, prefix string) bool {
	return s == prefix || strings.HasPrefix(s, prefix+" ")
}

// newFlags returns a flag set that reports errors instead of exiting and
// whose -h prints the command's help. name is "COMMAND" or "COMMAND SUB".
func newFlags(env *Env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet("netintel "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	if env.help {
		fs.SetOutput(env.Stdout)
	}
	cname, sub, _ := strings.Cut(name, " ")
	fs.Usage = func() {
		if c, ok := findCommand(cname); ok {
			writeHelp(fs.Output(), c, sub, fs)
		}
	}
	return fs
}

// commandHelp prints c's help (no flags: c has subcommands) to stdout when
// help was asked for, or to stderr with a usage error when args name no
// subcommand.
func commandHelp(env *Env, c *command, args []string) (done bool, err error) {
	if len(args) > 0 && args[0] != "-h" && args[0] != "--help" && args[0] != "-help" && args[0] != "help" {
		return false, nil
	}
	if len(args) == 0 {
		writeHelp(env.Stderr, c, "", nil)
		return true, usageError{fmt.Errorf("%s: name a subcommand (%s)", c.name, subNames(c))}
	}
	writeHelp(env.Stdout, c, "", nil)
	return true, nil
}

func subNames(c *command) string {
	var out []string
	for _, s := range c.subs {
		out = append(out, s[0])
	}
	return strings.Join(out, ", ")
}

// unknownSub is the one-line error for a subcommand c does not have.
func unknownSub(_ *Env, c *command, sub string) error {
	return usageError{fmt.Errorf("%s: unknown subcommand %q (%s; `netintel %s -h` shows them)", c.name, sub, subNames(c), c.name)}
}
