package main

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/netintel/netintel/api/tldapi"
	"github.com/netintel/netintel/probe"
)

// probeModule is the probe product module, for moduleList.
func probeModule() Module {
	return Module{Name: "probe", Setup: setupProbe}
}

// setupProbe wires the TLD RDAP/WHOIS status product: its API routes and
// /health body, the probe worker, the tld_probe job, and under `netintel
// run` a first check at start when nothing was published yet.
func setupProbe(ctx context.Context, s *System) error {
	svc, err := probe.New(ctx, s.Cfg.Probe, s.Bus.JS, s.Store, s.Log)
	if err != nil {
		return err
	}
	s.TLD = svc
	if err := svc.RegisterMetrics(s.Reg); err != nil {
		return err
	}
	h := tldapi.New(svc, s.Store, tldapi.Options{Prefix: s.Cfg.Probe.Prefix, RatePerMinute: s.Cfg.Probe.RatePerMinute, TrustProxy: s.Cfg.API.TrustProxyHeaders, Limiters: s.AddrLimiters(ctx),
		HistoryRuns: s.Cfg.Probe.HistoryRuns}, s.Log)
	s.Route("tld", h.Mount)
	s.SetHealth(h.Health)
	s.Worker("probe", svc.RunWorker)
	// A failed run (inputs unreachable) is run again within its tick,
	// with a growing wait, rather than 48 hours later.
	s.JobRetry("tld_probe", s.Cfg.Probe.RunRetries, s.Cfg.Probe.RunRetryWait, svc.RunNow)
	// The first check at start follows the schedule: "off" disables both
	// (tests run `netintel run` without reaching IANA).
	if s.Embedded && strings.TrimSpace(s.Cfg.Schedules["tld_probe"]) != "off" && s.Cfg.Schedules["tld_probe"] != "" {
		s.OnStart("tld_probe_first", func(ctx context.Context) error {
			if err := retryRun(ctx, s.Cfg.Probe.RunRetries, s.Cfg.Probe.RunRetryWait, s.Log, svc.FirstRun); err != nil {
				// Logged with its reason; the system keeps serving the last
				// results. Offline, the probe's warning said it all.
				if probe.Offline(err) {
					s.Log.Info("first TLD check did not complete: the internet is unreachable")
				} else {
					s.Log.Warn("first TLD check did not complete", "err", err)
				}
			}
			return nil
		})
	}
	return nil
}

// retryRun runs run, and after a failure runs it again up to retries
// times, waiting wait, then twice that, and so on (the scheduler does the
// same for a tick; this is for the first check at start, which no tick
// covers). It returns the last error, or nil.
func retryRun(ctx context.Context, retries int, wait time.Duration, log *slog.Logger, run func(context.Context) error) error {
	err := run(ctx)
	for attempt := 1; err != nil && attempt <= retries && wait > 0; attempt++ {
		if probe.Offline(err) {
			// The probe logged the one warning; this is the plan.
			log.Info("TLD check will be retried", "retry", attempt, "of", retries, "in", wait)
		} else {
			log.Warn("TLD check failed, retrying", "retry", attempt, "of", retries, "in", wait, "err", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		err = run(ctx)
		wait *= 2
	}
	return err
}
