package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/publish"
)

// errNoIPState is returned when publishing without the enrich module's state.
var errNoIPState = errors.New("no IP intelligence state to publish: the enrich module did not set it (System.IPState is nil)")

// publishModule is the publish product module, for moduleList.
func publishModule() Module {
	return Module{Name: "publish", Setup: setupPublish}
}

// setupPublish registers the daily snapshot job (schedules.snapshot). The
// state is read when the job runs, not here: the enrich module sets it.
func setupPublish(_ context.Context, s *System) error {
	if s.Store == nil {
		return nil // a role without the object store (gateway) never publishes
	}
	s.JobRetry("snapshot", s.Cfg.Publish.RunRetries, s.Cfg.Publish.RunRetryWait, func(ctx context.Context) error {
		_, err := publishSnapshot(ctx, s, "")
		return err
	})
	return nil
}

// publishSnapshot builds and publishes the snapshot of date ("" = today).
func publishSnapshot(ctx context.Context, s *System, date string) (*publish.Result, error) {
	if s.IPState == nil {
		return nil, errNoIPState
	}
	if s.Store == nil {
		return nil, errors.New("publish: no object store opened")
	}
	cfg := s.Cfg.Publish
	if cfg.WorkDir == "" && s.DataDir != "" {
		cfg.WorkDir = filepath.Join(s.DataDir, "tmp")
	}
	if cfg.WorkDir != "" {
		if err := os.MkdirAll(cfg.WorkDir, 0o750); err != nil {
			return nil, fmt.Errorf("publish.work_dir: %w", err)
		}
	}
	var js jetstream.JetStream
	if s.Bus != nil {
		js = s.Bus.JS
	}
	return publish.New(cfg, s.Store, js, s.Log).Run(ctx, s.IPState, date)
}
