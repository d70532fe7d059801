package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/publish"
)

// bootstrapModule is the bootstrap product module, for moduleList.
func bootstrapModule() Module {
	return Module{Name: "bootstrap", Setup: setupBootstrap}
}

// setupBootstrap makes `netintel run` on a fresh data dir useful at once:
// it ingests the bundled sample feeds (the ingest sources whose path exists),
// waits for the enrich workers to store them, publishes a first snapshot and
// prints a few example requests. A data dir that already has a snapshot is
// left alone.
func setupBootstrap(_ context.Context, s *System) error {
	if !s.Embedded || s.Store == nil {
		return nil
	}
	s.OnStart("bootstrap", func(ctx context.Context) error {
		if err := bootstrap(ctx, s); err != nil && ctx.Err() == nil {
			s.Log.Error("bootstrap: first snapshot not published", "err", err)
		}
		return nil
	})
	return nil
}

func bootstrap(ctx context.Context, s *System) error {
	if _, err := publish.ReadPointer(ctx, s.Store); err == nil {
		printExamples(s)
		return nil
	} else if !errors.Is(err, publish.ErrNoSnapshot) {
		return err
	}
	in := ingest.New(s.Bus.JS, s.Log, nil, s.Cfg.Ingest.MaxInFlight, s.Cfg.Ingest.FetchTimeout)
	var n int
	// Every bundled sample is listed as seen at this start, scanner output
	// and flow records too (whose own times are years old): the demo's
	// rows then live retention_days from the first start, and the list
	// feeds' scheduled re-reads keep theirs (docs/ingest-enrich.md,
	// "Freshness").
	listed := time.Now().UTC().Truncate(time.Second)
	for _, src := range s.Cfg.Ingest.Sources {
		if src.Path == "" {
			continue
		}
		if _, err := os.Stat(src.Path); err != nil {
			continue
		}
		opt := ingest.SourceOptions(src, s.Cfg.Ingest)
		opt.ListedAt = listed
		if _, err := in.IngestFile(ctx, src.Format, src.Path, opt); err != nil {
			return fmt.Errorf("ingest sample %s: %w", src.Name, err)
		}
		n++
	}
	if n == 0 {
		// Nothing to start from (no pipeline.yaml with the samples): not
		// an error, the state fills as feeds are ingested.
		s.Log.Info("bootstrap: no sample feed configured or found; the IP state starts empty (feed it with `netintel ingest`)")
		return nil
	}
	wctx, cancel := bus.RunContext(ctx, 5*time.Minute)
	defer cancel()
	if err := enrich.WaitIdle(wctx, s.Bus.JS); err != nil {
		return fmt.Errorf("wait for enrich: %w", bus.RunErr(wctx, err))
	}
	res, err := publishSnapshot(ctx, s, "")
	if err != nil {
		return err
	}
	s.Log.Info("bootstrap: first snapshot published from the bundled samples", "sources", n, "date", res.Manifest.SnapshotDate)
	printExamples(s)
	return nil
}

func printExamples(s *System) {
	keyFile := filepath.Join(s.DataDir, "dev-api-key")
	base := s.baseURL("gateway")
	fmt.Fprintf(s.Env.Stdout, `
Try it (the dev key is in %[1]s):
  KEY=$(cat %[1]s)
  curl -H "Authorization: Bearer $KEY" %[2]s/api/v1/vpn/ip/185.220.101.4
  curl -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -d '{"ips":["185.220.101.4","8.8.8.8"]}' %[2]s/api/v1/vpn/batch
  curl -H "Authorization: Bearer $KEY" '%[2]s/api/v1/vpn/export/csv?classification=tor&limit=5'
  curl %[2]s/public/v1/lookup/185.220.101.4
  curl %[2]s/api/status
  open %[2]s/ to share a one-time secret
`, keyFile, base)
	if s.Cfg.Console.Enabled {
		fmt.Fprintf(s.Env.Stdout, "  open %s/console/ for the operator console (lookups, snapshots, TLD status, pipeline)\n", s.baseURL("console"))
	}
}
