package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/internal/config"
)

// rolesCommands returns the commands of this file, for commandList.
func rolesCommands() []*command {
	return []*command{
		&command{name: "run", summary: "run everything in one process on an embedded NATS server (what `make run` does)",
			usage: []string{"run [--data-dir DIR] [--listen ADDR] [--config FILE]"},
			desc: `Run every product, worker and scheduled job in one process on an embedded
	NATS server and a folder object store under --data-dir (default data). On a
	fresh data folder it ingests the bundled samples (the configured sources
	whose files exist), publishes a first snapshot and prints requests to try.
	Without ./pipeline.yaml the built-in defaults are used; the WHOIS fallback
	table, the stealth RDAP candidates and the fingerprint rules are built into
	the binary, so it runs from any folder.`,
			examples: []string{"make run", "netintel run --data-dir data --listen 127.0.0.1:8080", "cd /tmp && netintel run --data-dir /var/lib/netintel"},
			run:      cmdRun},
		&command{name: "api", summary: "serve the HTTP APIs of every product against external NATS and S3",
			usage:    []string{"api [--products ip,gateway,tld,secrets] [--listen ADDR] [--nats URL]"},
			examples: []string{"netintel api --config pipeline.yaml --nats nats://nats:4222", "netintel api --products ip,tld --listen :8081"},
			run:      cmdAPI},
		&command{name: "gateway", summary: "serve the customer gateway alone",
			usage:    []string{"gateway [--listen ADDR] [--nats URL]"},
			examples: []string{"netintel gateway --config pipeline.yaml --nats nats://nats:4222 --listen :8080"},
			run:      cmdGateway},
		&command{name: "worker", summary: "run one or more workers by name (" + strings.Join(workerNames(), ", ") + ")",
			usage: []string{"worker [flags] NAME [NAME...]"},
			desc:  "Run the named workers against the NATS of a deployment (or the --data-dir of a running `netintel run`); each scales by running more copies.",
			notes: workerNotes(),
			examples: []string{"netintel worker --nats nats://nats:4222 enrich", "netintel worker --config pipeline.yaml enrich probe",
				"netintel --log-format json worker --data-dir data secrets-sweeper"},
			run: cmdWorker},
		&command{name: "scheduler", summary: "fire the cron jobs of pipeline.yaml (once per tick across copies)",
			usage:    []string{"scheduler [--nats URL]"},
			desc:     "Fire the jobs of pipeline.yaml's schedules (snapshot, tld_probe, ingest sources, catalog refresh, age-out); copies agree on one run per tick through the schedule bucket.",
			examples: []string{"netintel scheduler --config pipeline.yaml --nats nats://nats:4222"},
			run:      cmdScheduler},
		&command{name: "validate", summary: "check a pipeline.yaml without touching the network",
			usage:    []string{"validate [--config FILE | FILE]"},
			desc:     "Check a pipeline.yaml (default ./pipeline.yaml) and its fingerprint rules; print ok, or every problem, one line each naming the key.",
			examples: []string{"netintel validate", "netintel validate deploy/pipeline.prod.yaml"},
			run:      cmdValidate},
	}
}

// workers are the names `netintel worker` takes and what each does; a
// test checks them against what the modules register.
var workers = [][2]string{
	{"enrich", "merge observations into the IP state (the enrich consumer and its partitions)"},
	{"probe", "check TLDs' RDAP and WHOIS (the TLDWORK stream), and coordinate requested runs"},
	{"secrets-sweeper", "delete the stored objects of expired one-time secrets"},
}

func workerNames() []string {
	var out []string
	for _, w := range workers {
		out = append(out, w[0])
	}
	return out
}

func workerNotes() string {
	var b strings.Builder
	b.WriteString("Workers:\n")
	for _, w := range workers {
		fmt.Fprintf(&b, "  %-16s %s\n", w[0], w[1])
	}
	return b.String()
}

func cmdRun(ctx context.Context, env *Env, args []string) error {
	var cf commonFlags
	fs := newFlags(env, "run")
	cf.add(fs)
	listen := fs.String("listen", "", "listen address for every product (overrides api.listen)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cf.dataDir == "" {
		cf.dataDir = "data"
	}
	s, err := openSystem(ctx, env, &cf, roleOpts{embedded: true, ensure: true, store: true, products: config.Products, listen: *listen})
	if err != nil {
		return err
	}
	return s.serve(ctx, parts{products: config.Products, workers: []string{"*"}, jobs: true, onStart: true,
		bound: func(addr string) { fmt.Fprintf(env.Stdout, "netintel listening on http://%s\n", addr) }})
}

func cmdAPI(ctx context.Context, env *Env, args []string) error {
	var cf commonFlags
	fs := newFlags(env, "api")
	cf.add(fs)
	listen := fs.String("listen", "", "listen address for every product (overrides api.listen)")
	products := fs.String("products", strings.Join(config.Products, ","), "products to serve: "+strings.Join(config.Products, ", "))
	if err := fs.Parse(args); err != nil {
		return err
	}
	prods := strings.Split(*products, ",")
	s, err := openSystem(ctx, env, &cf, roleOpts{ensure: true, store: true, products: prods, listen: *listen})
	if err != nil {
		return err
	}
	return s.serve(ctx, parts{products: prods})
}

func cmdGateway(ctx context.Context, env *Env, args []string) error {
	var cf commonFlags
	fs := newFlags(env, "gateway")
	cf.add(fs)
	listen := fs.String("listen", "", "listen address (overrides api.listeners.gateway and api.listen)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := openSystem(ctx, env, &cf, roleOpts{ensure: true, products: []string{"gateway"}, listen: *listen})
	if err != nil {
		return err
	}
	return s.serve(ctx, parts{products: []string{"gateway"}})
}

func cmdWorker(ctx context.Context, env *Env, args []string) error {
	var cf commonFlags
	fs := newFlags(env, "worker")
	cf.add(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usageError{fmt.Errorf("worker: name one or more workers (%s)", strings.Join(workerNames(), ", "))}
	}
	for _, n := range fs.Args() {
		if !slices.Contains(workerNames(), n) {
			return usageError{fmt.Errorf("worker: unknown worker %q (have: %s)", n, strings.Join(workerNames(), ", "))}
		}
	}
	s, err := openSystem(ctx, env, &cf, roleOpts{ensure: true, store: true})
	if err != nil {
		return err
	}
	return s.serve(ctx, parts{workers: fs.Args()})
}

func cmdScheduler(ctx context.Context, env *Env, args []string) error {
	var cf commonFlags
	fs := newFlags(env, "scheduler")
	cf.add(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := openSystem(ctx, env, &cf, roleOpts{ensure: true, store: true})
	if err != nil {
		return err
	}
	return s.serve(ctx, parts{jobs: true})
}

func cmdValidate(_ context.Context, env *Env, args []string) error {
	fs := newFlags(env, "validate")
	cfgPath := fs.String("config", "pipeline.yaml", "path to pipeline.yaml (or give it as the argument)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	path := *cfgPath
	switch {
	case fs.NArg() > 1:
		return errors.New("validate: give one file")
	case fs.NArg() == 1:
		path = fs.Arg(0)
	}
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	// The fingerprint rules are part of the configuration: a file run
	// would refuse at start is refused here too.
	if _, err := enrich.LoadRules(cfg.Enrich.Rules); err != nil {
		return fmt.Errorf("enrich.rules: %w", err)
	}
	fmt.Fprintf(env.Stdout, "%s: ok\n", path)
	return nil
}
