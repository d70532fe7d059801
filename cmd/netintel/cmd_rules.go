package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/decompress"
)

// rulesCommands returns the command of this file, for commandList.
func rulesCommands() []*command {
	return []*command{
		&command{name: "rules", summary: "check fingerprint rules, measure them on captures (check, eval)",
			usage: []string{"rules check [--rules FILE_OR_DIR]", "rules eval [--rules FILE_OR_DIR] [--json] [--mistakes] [--partial] DIR",
				"rules match [--rules FILE_OR_DIR] [--format FORMAT] [--json] FILE"},
			desc: "Check the fingerprint rules (the built-in ones, or FILE_OR_DIR), measure them on captures (docs/accuracy.md), or run them over a scan file offline.",
			subs: [][2]string{
				{"check", "load the rules (the built-in ones, or FILE_OR_DIR) and report every problem, one line each naming the file, rule and field"},
				{"eval", "run the rules over the captures under DIR and print precision and recall per family and version accuracy; exits non-zero when a vendor is wrong or a negative is named"},
				{"match", "read FILE as an ingest format (default observations; any scanner format of netintel ingest) without a running system and print what the rules name for each service: address, port, vendor, product, version or band, rule"},
			},
			examples: []string{
				"netintel rules check --rules ./my-rules/",
				"netintel rules eval testdata/fingerprints",
				"netintel rules eval --mistakes --rules ./my-rules/ ./captures",
				"netintel rules eval --partial testdata/fingerprints",
				"netintel rules match --format nmap-xml scan.xml",
				"netintel rules match --format shodan --json banners.json.gz",
			},
			run: cmdRules},
	}
}

func cmdRules(_ context.Context, env *Env, args []string) error {
	if done, err := commandHelp(env, rulesCommands()[0], args); done {
		return err
	}
	sub := args[0]
	if sub != "check" && sub != "eval" && sub != "match" {
		return unknownSub(env, rulesCommands()[0], sub)
	}
	fs := newFlags(env, "rules "+sub)
	rulesPath := fs.String("rules", "", "a rules file or folder (default: the built-in rules)")
	asJSON := fs.Bool("json", false, "eval: print the report as JSON; match: one JSON object a service")
	format := fs.String("format", "observations", "match: the ingest format of FILE (netintel ingest --help lists them)")
	mistakes := fs.Bool("mistakes", false, "eval: also list every miss and wrong version")
	partial := fs.Bool("partial", false, "eval: also score each capture's partial variants (a piece alone: headers, body, certificate; docs/accuracy.md \"Partial evidence\")")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if sub == "match" {
		if _, ok := ingest.Adapters()[*format]; !ok {
			return fmt.Errorf("rules match: --format: unknown format %q (netintel ingest --help lists them)", *format)
		}
		if fs.NArg() != 1 {
			return errors.New("rules match: want one file")
		}
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
		caps, problems, err := enrich.LoadCapturesLenient(fs.Arg(0))
		if err != nil {
			return err
		}
		for _, p := range problems {
			fmt.Fprintf(env.Stderr, "rules eval: %v\n", p)
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
		if *partial && !*asJSON {
			prep := enrich.EvaluatePartial(rules, caps)
			fmt.Fprint(env.Stdout, "\npartial variants:\n\n"+prep.Table())
			if *mistakes && len(prep.Wrong)+len(prep.Copies) > 0 {
				fmt.Fprintln(env.Stdout, "\nvariants named wrongly or on negatives:\n  "+strings.Join(append(prep.Wrong, prep.Copies...), "\n  "))
			}
		}
		if len(wrong) > 0 {
			return fmt.Errorf("rules eval: %d wrong:\n%s", len(wrong), strings.Join(wrong, "\n"))
		}
		return nil
	case "match":
		return rulesMatch(env, rules, *format, fs.Arg(0), *asJSON)
	}
	return unknownSub(env, rulesCommands()[0], sub)
}

// matchLine is what rules match prints for one service or flow.
type matchLine struct {
	Line      int    `json:"line"`
	IP        string `json:"ip"`
	Port      int    `json:"port"`
	Transport string `json:"transport"`
	Named     bool   `json:"named"`
	Rule      string `json:"rule,omitempty"`
	Vendor    string `json:"vendor,omitempty"`
	Product   string `json:"product,omitempty"`
	Version   string `json:"version,omitempty"`
	Band      string `json:"version_band,omitempty"`
	Precision string `json:"version_precision,omitempty"`
}

// rulesMatch reads path with the adapter of format and prints what the
// rules name for each service and flow it holds; malformed records are
// reported on stderr (line and reason) and skipped, as ingest does.
func rulesMatch(env *Env, rules *enrich.Rules, format, path string, asJSON bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("rules match: %w", err)
	}
	defer f.Close()
	r, err := decompress.Reader(f)
	if err != nil {
		return fmt.Errorf("rules match: %s: %w", path, err)
	}
	defer r.Close()
	services, named, bad := 0, 0, 0
	enc := json.NewEncoder(env.Stdout)
	emit := func(n int, o ingest.Observation) error {
		var port int
		var transport string
		switch {
		case o.Service != nil:
			port, transport = o.Service.Port, o.Service.Transport
		case o.Flow != nil:
			port, transport = o.Flow.Port, o.Flow.Transport
		default:
			return nil
		}
		services++
		fp, ok := rules.Match(o.Service, o.Flow)
		if ok {
			named++
		}
		m := matchLine{Line: n, IP: o.IP, Port: port, Transport: transport, Named: ok, Rule: fp.RuleID, Vendor: fp.Vendor,
			Product: fp.Product, Version: fp.ExactVersion, Band: fp.VersionBand, Precision: fp.VersionPrecision}
		if asJSON {
			return enc.Encode(m)
		}
		if !ok {
			_, err := fmt.Fprintf(env.Stdout, "%s\t%d/%s\t-\n", m.IP, m.Port, m.Transport)
			return err
		}
		version := m.Version
		if version == "" {
			version = m.Band
		}
		if version == "" {
			version = "-"
		}
		_, err := fmt.Fprintf(env.Stdout, "%s\t%d/%s\t%s\t%s\t%s\t%s\n", m.IP, m.Port, m.Transport, m.Vendor, m.Product, version, m.Rule)
		return err
	}
	report := func(e ingest.LineError) {
		bad++
		fmt.Fprintf(env.Stderr, "%s: %v\n", path, e)
	}
	warn := func(line int, msg string) { fmt.Fprintf(env.Stderr, "%s: line %d: %s\n", path, line, msg) }
	if err := ingest.Adapters()[format](r, ingest.Options{Warn: warn}, emit, report); err != nil {
		return fmt.Errorf("rules match: %s: %w", path, err)
	}
	fmt.Fprintf(env.Stderr, "%d services, %d named, %d malformed records skipped\n", services, named, bad)
	if services == 0 && bad > 0 {
		return fmt.Errorf("rules match: %s: nothing read as %s", path, format)
	}
	return nil
}
