package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/netintel/netintel/enrich"
)

// rulesCommands returns the command of this file, for commandList.
func rulesCommands() []*command {
	return []*command{
		&command{name: "rules", summary: "check fingerprint rules, measure them on captures (check, eval)",
			usage: []string{"rules check [--rules FILE_OR_DIR]", "rules eval [--rules FILE_OR_DIR] [--json] [--mistakes] DIR"},
			desc:  "Check the fingerprint rules (the built-in ones, or FILE_OR_DIR), or measure them on captures (docs/accuracy.md).",
			subs: [][2]string{
				{"check", "load the rules (the built-in ones, or FILE_OR_DIR) and report every problem, one line each naming the file, rule and field"},
				{"eval", "run the rules over the captures under DIR and print precision and recall per family and version accuracy; exits non-zero when a vendor is wrong or a negative is named"},
			},
			examples: []string{
				"netintel rules check --rules ./my-rules/",
				"netintel rules eval testdata/fingerprints",
				"netintel rules eval --mistakes --rules ./my-rules/ ./captures",
			},
			run: cmdRules},
	}
}

func cmdRules(_ context.Context, env *Env, args []string) error {
	if done, err := commandHelp(env, rulesCommands()[0], args); done {
		return err
	}
	sub := args[0]
	if sub != "check" && sub != "eval" {
		return unknownSub(env, rulesCommands()[0], sub)
	}
	fs := newFlags(env, "rules "+sub)
	rulesPath := fs.String("rules", "", "a rules file or folder (default: the built-in rules)")
	asJSON := fs.Bool("json", false, "eval: print the report as JSON")
	mistakes := fs.Bool("mistakes", false, "eval: also list every miss and wrong version")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	rules, err := enrich.LoadRules(*rulesPath)
	if err != nil {
		return err
	}
	switch sub {
	case "check":
		if fs.NArg() != 0 {
			return errors.New("rules check: takes no arguments (use --rules)")
		}
		fmt.Fprintf(env.Stdout, "ok: %d files\n", len(rules.Files()))
		return nil
	case "eval":
		if fs.NArg() != 1 {
			return errors.New("rules eval: want one folder of captures")
		}
		caps, err := enrich.LoadCaptures(fs.Arg(0))
		if err != nil {
			return err
		}
		rep := enrich.Evaluate(rules, caps)
		wrong, misses := rep.Mistakes()
		if *asJSON {
			b, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				return err
			}
			fmt.Fprintln(env.Stdout, string(b))
		} else {
			fmt.Fprint(env.Stdout, rep.Table())
			if *mistakes && len(misses) > 0 {
				fmt.Fprintln(env.Stdout, "\nmisses:\n  "+strings.Join(misses, "\n  "))
			}
		}
		if len(wrong) > 0 {
			return fmt.Errorf("rules eval: %d wrong:\n%s", len(wrong), strings.Join(wrong, "\n"))
		}
		return nil
	}
	return unknownSub(env, rulesCommands()[0], sub)
}
