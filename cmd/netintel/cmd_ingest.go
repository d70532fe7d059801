package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/telemetry"
)

func init() {
	register(&command{name: "ingest", summary: "read one feed file or URL into the observation stream of a running system", run: cmdIngest})
}

func cmdIngest(ctx context.Context, env *Env, args []string) error {
	var cf commonFlags
	fs := newFlags(env, "ingest")
	cf.add(fs)
	format := fs.String("format", "", "feed format: "+strings.Join(config.IngestFormats, ", "))
	kind := fs.String("kind", "", "cidr-list: classification claimed (vpn, proxy, tor, relay, hosting, cdn, residential_proxy)")
	provider := fs.String("provider", "", "cidr-list: provider claimed (e.g. Cloudflare)")
	source := fs.String("source", "", "source name in the observations (default: the format)")
	confidence := fs.Float64("confidence", 0, "confidence 0..1 of the feed's claims (default: the format's)")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: netintel ingest --format FORMAT [--kind K --provider P] [--data-dir DIR | --nats URL] FILE_OR_URL")
		fmt.Fprintln(env.Stderr, "formats:")
		for _, f := range config.IngestFormats {
			fmt.Fprintf(env.Stderr, "  %-13s %s\n", f, config.IngestFormatHelp[f])
		}
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("ingest: name exactly one FILE_OR_URL")
	}
	if *format == "" {
		return errors.New("ingest: --format is required (" + strings.Join(config.IngestFormats, ", ") + ")")
	}
	if !slices.Contains(config.IngestFormats, *format) {
		return fmt.Errorf("ingest: unknown format %q: use one of %s", *format, strings.Join(config.IngestFormats, ", "))
	}
	if *format == "cidr-list" {
		if *kind == "" {
			return errors.New("ingest: --kind is required with --format cidr-list")
		}
		if !slices.Contains(config.IngestKinds, *kind) {
			return fmt.Errorf("ingest: --kind must be one of %s, got %q", strings.Join(config.IngestKinds, ", "), *kind)
		}
	} else if *kind != "" || *provider != "" {
		return fmt.Errorf("ingest: --kind and --provider apply only to --format cidr-list (%s carries its own)", *format)
	}
	if *confidence < 0 || *confidence > 1 {
		return errors.New("ingest: --confidence must be 0..1")
	}
	cfg, err := cf.loadConfig()
	if err != nil {
		return err
	}
	ncfg := cfg.NATS
	switch {
	case cf.natsURL != "":
		ncfg.URLs = strings.Split(cf.natsURL, ",")
	case cf.dataDir != "":
		u, err := bus.URLFromDataDir(cf.dataDir)
		if err != nil {
			return err
		}
		ncfg.URLs = []string{u}
	case len(cfg.NATS.URLs) == 0:
		return errors.New("ingest: no NATS to reach: pass --nats URL or --data-dir DIR of a running `netintel run`, or set nats.urls")
	}
	log := telemetry.NewLogger(env.Stderr, cf.logLevel)
	b, err := bus.Connect(ctx, ncfg, log)
	if err != nil {
		return err
	}
	defer b.Close()
	in := ingest.New(b.JS, log, nil, cfg.Ingest.MaxInFlight, cfg.Ingest.FetchTimeout)
	st, err := in.IngestFile(ctx, *format, fs.Arg(0), ingest.Options{Source: *source, Kind: *kind, Provider: *provider,
		Confidence: *confidence, MaxLineBytes: cfg.Ingest.MaxLineBytes})
	for _, le := range st.Malformed {
		fmt.Fprintf(env.Stderr, "%s: %v (skipped)\n", fs.Arg(0), le)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, st)
	return nil
}
