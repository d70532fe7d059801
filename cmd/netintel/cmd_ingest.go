package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
)

// ingestCommands returns the command of this file, for commandList.
func ingestCommands() []*command {
	return []*command{
		&command{name: "ingest", summary: "read feed files or URLs into the observation stream of a running system",
			usage: []string{"ingest --format FORMAT [--kind K --provider P] [--wait] [--data-dir DIR | --nats URL] FILE_OR_URL...",
				"ingest --format FORMAT --dry-run FILE_OR_URL... > observations.ndjson"},
			desc: `Read feed files or URLs of one format into the observation stream of a running
	system (` + "`netintel run`" + `, or the NATS of a deployment), one after the other: a file
	that fails is said and the others still go in. FILE_OR_URL may be gzip, bzip2
	or zstd compressed (recognised by its first bytes). A bar on a terminal (plain
	lines on a pipe) shows the bytes read, the rate and the time left; the
	closing line counts what was read and stored, with the time and the rate.
	With --wait the command returns only once the enrich workers have applied
	every observation it published to the IP state (their acknowledgement
	floor has passed the last sequence it published).

	With --dry-run no system is needed and nothing is published: the
	observations the files hold are written to stdout, one JSON line each,
	exactly as they would be stored (` + "`--format observations`" + ` reads them
	back), and the counts and problems go to stderr. It shows what a
	file of yours becomes before it goes in.`,
			examples: []string{
				"netintel ingest --data-dir data --format tor-exits samples/tor-exit-addresses",
				"netintel ingest --data-dir data --format cidr-list --kind cdn --provider Cloudflare --wait samples/cloudflare-ips-v4.txt",
				"netintel ingest --format nmap-xml --dry-run scan.xml | jq -c '.service.probes[0]'",
				"zstd feed.ndjson && netintel ingest --nats nats://10.0.0.5:4222 --format observations --wait --wait-timeout 10m feed.ndjson.zst",
			},
			notes: ingestNotes(),
			run:   cmdIngest},
	}
}

// ingestNotes lists the feed formats for the help.
func ingestNotes() string {
	var b strings.Builder
	b.WriteString("Formats:\n")
	for _, f := range config.IngestFormats {
		fmt.Fprintf(&b, "  %-19s %s\n", f, config.IngestFormatHelp[f])
	}
	return b.String()
}

func cmdIngest(ctx context.Context, env *Env, args []string) error {
	var cf commonFlags
	fs := newFlags(env, "ingest")
	cf.add(fs)
	format := fs.String("format", "", "feed format (listed below)")
	kind := fs.String("kind", "", "cidr-list, geofeed: classification claimed ("+strings.Join(config.IngestKinds, ", ")+"); ip2proxy: the classification of PX1 rows (which carry no proxy type); proxy-list: protocol ("+strings.Join(config.IngestProxyKinds, ", ")+")")
	provider := fs.String("provider", "", "cidr-list, geofeed: provider claimed (e.g. Cloudflare)")
	source := fs.String("source", "", "source name in the observations (default: the format)")
	confidence := fs.Float64("confidence", 0, "confidence 0..1 of the feed's claims (default: the format's)")
	wait := fs.Bool("wait", false, "return only when enrichment has applied every observation published")
	waitTimeout := fs.Duration("wait-timeout", 0, "with --wait: give up after this long (0 = no limit); the observations stay queued")
	dryRun := fs.Bool("dry-run", false, "publish nothing: write the observations to stdout as JSON lines (no running system needed)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 {
		fs.Usage()
		return usageError{errors.New("ingest: name a FILE_OR_URL (or several, of one format)")}
	}
	if *format == "" {
		return errors.New("ingest: --format is required (" + strings.Join(config.IngestFormats, ", ") + ")")
	}
	if !slices.Contains(config.IngestFormats, *format) {
		return fmt.Errorf("ingest: unknown format %q: use one of %s", *format, strings.Join(config.IngestFormats, ", "))
	}
	if msg := config.CheckIngestKind(*format, *kind, *provider); msg != "" {
		msg = strings.NewReplacer("a kind", "--kind", "a provider", "--provider").Replace(msg)
		return fmt.Errorf("ingest: --format %s: %s", *format, msg)
	}
	if *confidence < 0 || *confidence > 1 {
		return errors.New("ingest: --confidence must be 0..1")
	}
	if *dryRun && *wait {
		return usageError{errors.New("ingest: --wait and --dry-run do not go together: a dry run publishes nothing to wait for")}
	}
	cfg, err := cf.loadConfig()
	if err != nil {
		return err
	}
	opt := ingest.Options{Source: *source, Kind: *kind, Provider: *provider, Confidence: *confidence, MaxLineBytes: cfg.Ingest.MaxLineBytes}
	if *dryRun {
		log, err := cf.logger(env)
		if err != nil {
			return err
		}
		_, err = ingestFiles(ctx, env, ingest.NewDryRun(env.Stdout, log, cfg.Ingest.FetchTimeout), *format, fs.Args(), opt, true)
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
	log, err := cf.logger(env)
	if err != nil {
		return err
	}
	b, err := bus.Connect(ctx, ncfg, log)
	if err != nil {
		return err
	}
	defer b.Close()
	in := ingest.New(b.JS, log, nil, cfg.Ingest.MaxInFlight, cfg.Ingest.FetchTimeout)
	all, err := ingestFiles(ctx, env, in, *format, fs.Args(), opt, false)
	if err != nil {
		return err
	}
	if !*wait {
		return nil
	}
	return waitApplied(ctx, env, b.JS, all, *waitTimeout)
}

// ingestFiles reads paths in format one after the other: a file that
// fails is said and the others still go in (the command then fails). A
// dry run's counts go to stderr, its stdout being the observations.
func ingestFiles(ctx context.Context, env *Env, in *ingest.Ingester, format string, paths []string, opt ingest.Options, dry bool) (ingest.Stats, error) {
	var errs []error
	all := ingest.Stats{LastSeq: map[string]uint64{}}
	say := env.Stdout
	if dry {
		say = env.Stderr
	}
	for _, path := range paths {
		m := newMeter(env, "ingest "+filepath.Base(path), "", 0)
		o := opt
		o.Progress = m.set
		st, err := in.IngestFile(ctx, format, path, o)
		took := m.done()
		if err == nil && st.Read == 0 && len(st.Malformed) > 0 {
			// Nothing in the file fit: most likely the wrong --format. One line
			// says so, rather than one per record.
			errs = append(errs, fmt.Errorf("ingest: nothing in %s reads as %s: first record that did not fit: %v", path, format, st.Malformed[0]))
			continue
		}
		for _, le := range st.Malformed {
			fmt.Fprintf(env.Stderr, "%s: %v (skipped)\n", path, le)
		}
		for _, le := range st.Warnings {
			fmt.Fprintf(env.Stderr, "%s: %v\n", path, le)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		el := time.Since(m.start)
		name := ""
		if len(paths) > 1 {
			name = path + ": "
		}
		summary := st.String()
		if dry {
			summary = strings.Replace(summary, " stored, 0 duplicates,", " written (dry run: nothing published),", 1)
		}
		fmt.Fprintf(say, "%s%s; %s read %s (%.1f observations/s)\n", name, summary, humanBytes(st.Bytes), took, float64(st.Read)/max(el.Seconds(), 1e-3))
		for subj, seq := range st.LastSeq {
			all.LastSeq[subj] = max(all.LastSeq[subj], seq)
		}
	}
	return all, errors.Join(errs...)
}

// waitApplied waits until enrichment has applied what st published
// (enrich.WaitApplied), showing how many enrich consumers are through.
func waitApplied(ctx context.Context, env *Env, js jetstream.JetStream, st ingest.Stats, timeout time.Duration) error {
	if len(st.LastSeq) == 0 {
		fmt.Fprintln(env.Stdout, "nothing published: nothing to wait for")
		return nil
	}
	ctx, cancel := bus.RunContext(ctx, timeout)
	defer cancel()
	var m *meter
	err := enrich.WaitApplied(ctx, js, st.LastSeq, func(a enrich.Applied) {
		if m == nil {
			m = newMeter(env, "enrich: consumers through", "consumers", int64(a.Consumers))
		}
		m.set(int64(a.Done), int64(a.Consumers))
	})
	took := ""
	if m != nil {
		took = m.done()
	}
	if err != nil {
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return fmt.Errorf("ingest --wait: enrichment has not applied the feed within --wait-timeout %s: is an enrich worker running? (the observations stay queued)", timeout)
		}
		return err
	}
	fmt.Fprintf(env.Stdout, "enrichment applied every observation published (through stream sequence %d) %s\n", slices.Max(slices.Collect(maps.Values(st.LastSeq))), strings.SplitN(took, ",", 2)[0])
	return nil
}
