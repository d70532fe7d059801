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
	"sort"
	"strings"
	"syscall"
)

// Env is what a subcommand may touch of the outside world.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *Env, args []string) error
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}, os.Args[1:])
	stop()
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		// One line per problem, never a panic trace.
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintln(os.Stderr, "netintel: "+line)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.Stdout)
		return nil
	}
	c, ok := commands[args[0]]
	if !ok {
		usage(env.Stderr)
		return fmt.Errorf("unknown command %q", args[0])
	}
	return c.run(ctx, env, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: netintel COMMAND [flags]\n\ncommands:")
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\n`netintel COMMAND -h` shows a command's flags.")
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(env *Env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet("netintel "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	return fs
}
