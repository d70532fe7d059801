package main

import (
	"context"
	"fmt"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
)

// pipelineModule is the pipeline product module, for moduleList.
func pipelineModule() Module {
	return Module{Name: "pipeline", Setup: setupPipeline}
}

// setupPipeline wires the IP observation pipeline: the enrich worker, the
// state reader the snapshot uses, catalog refresh and age-out jobs, and one
// scheduled job per configured ingest source.
func setupPipeline(_ context.Context, s *System) error {
	cfg := s.Cfg.Enrich // config.Validate held it to the declared bucket and consumer
	rules, err := enrich.LoadRules(cfg.Rules)
	if err != nil {
		return fmt.Errorf("enrich.rules: %w", err)
	}
	w, err := enrich.NewWorker(s.Bus.JS, cfg, rules, nil, s.Log, s.Reg)
	if err != nil {
		return err
	}
	// The state scores records against the CVE catalog when they are
	// read (a snapshot, a lookup of the state), loading it then: roles
	// that never read the state, the enrich workers among them, never
	// fetch it. Where it is loaded, it follows every refresh.
	s.IPState = w.State()
	if err := w.FollowCatalog(); err != nil {
		return fmt.Errorf("follow catalog refreshes: %w", err)
	}
	s.Worker("enrich", w.Run)
	s.JobSpec("enrich-catalog", cfg.Catalog.Schedule, w.RefreshCatalog)
	s.JobSpec("enrich-age", cfg.AgeSchedule, w.Age)
	in := ingest.New(s.Bus.JS, s.Log, s.Reg, s.Cfg.Ingest.MaxInFlight, s.Cfg.Ingest.FetchTimeout)
	for _, src := range s.Cfg.Ingest.Sources {
		loc := src.URL
		if loc == "" {
			loc = src.Path
		}
		opt := ingest.SourceOptions(src, s.Cfg.Ingest)
		format := src.Format
		s.JobSpec("ingest-"+src.Name, src.Schedule, func(ctx context.Context) error {
			_, err := in.IngestFile(ctx, format, loc, opt)
			return err
		})
	}
	return nil
}
