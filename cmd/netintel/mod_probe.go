package main

import (
	"context"
	"strings"

	"github.com/netintel/netintel/api/tldapi"
	"github.com/netintel/netintel/probe"
)

func init() {
	registerModule(Module{Name: "probe", Setup: setupProbe})
}

// setupProbe wires the TLD RDAP/WHOIS status product: its API routes and
// /health body, the probe worker, the tld_probe job, and under `netintel
// run` a first check at start when nothing was published yet.
func setupProbe(ctx context.Context, s *System) error {
	svc, err := probe.New(ctx, s.Cfg.Probe, s.Bus.JS, s.Store, s.Log)
	if err != nil {
		return err
	}
	if err := svc.RegisterMetrics(s.Reg); err != nil {
		return err
	}
	h := tldapi.New(svc, s.Store, tldapi.Options{Prefix: s.Cfg.Probe.Prefix, RatePerMinute: s.Cfg.Probe.RatePerMinute, TrustProxy: s.Cfg.API.TrustProxyHeaders}, s.Log)
	s.Route("tld", h.Mount)
	s.SetHealth(h.Health)
	s.Worker("probe", svc.RunWorker)
	s.Job("tld_probe", svc.RunNow)
	// The first check at start follows the schedule: "off" disables both
	// (tests run `netintel run` without reaching IANA).
	if s.Embedded && strings.TrimSpace(s.Cfg.Schedules["tld_probe"]) != "off" && s.Cfg.Schedules["tld_probe"] != "" {
		s.OnStart("tld_probe_first", func(ctx context.Context) error {
			if err := svc.FirstRun(ctx); err != nil {
				// Logged with its reason; the system keeps serving the last results.
				s.Log.Warn("first TLD check did not complete", "err", err)
			}
			return nil
		})
	}
	return nil
}
