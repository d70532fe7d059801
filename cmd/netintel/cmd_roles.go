package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/internal/config"
)

func init() {
	register(&command{name: "run", summary: "run everything in one process on an embedded NATS server (what `make run` does)", run: cmdRun})
	register(&command{name: "api", summary: "serve the HTTP APIs of every product against external NATS and S3", run: cmdAPI})
	register(&command{name: "gateway", summary: "serve the customer gateway alone", run: cmdGateway})
	register(&command{name: "worker", summary: "run one or more workers by name (e.g. enrich, probe)", run: cmdWorker})
	register(&command{name: "scheduler", summary: "fire the cron jobs of pipeline.yaml (once per tick across copies)", run: cmdScheduler})
	register(&command{name: "validate", summary: "check a pipeline.yaml without touching the network", run: cmdValidate})
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
	fs.Usage = func() { fmt.Fprintln(env.Stderr, "usage: netintel worker [flags] NAME [NAME...]"); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("worker: name one or more workers")
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
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: netintel validate [--config] [FILE]   check pipeline.yaml (default ./pipeline.yaml) and say ok or what is wrong")
		fs.PrintDefaults()
	}
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
