package main

import (
	"bytes"
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/netintel/netintel/api/apigw"

	"github.com/netintel/netintel/api/console"
	"github.com/netintel/netintel/api/ipapi"
	"github.com/netintel/netintel/enrich"
	gw "github.com/netintel/netintel/gateway"
	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/schedule"
)

// consoleModule is the console product module, for moduleList.
func consoleModule() Module {
	return Module{Name: "console", Setup: setupConsole}
}

// setupConsole mounts the operator web console (docs/console.md) on the
// console listener (api.listeners.console, else api.listen). What it
// needs is taken when it is mounted, in processes that serve it: the IP
// API (in process when it shares the listener, else over HTTP with the
// internal key), the TLD checker, the object store, NATS, and for
// console.allow keys a watched copy of the gateway's keys.
func setupConsole(ctx context.Context, s *System) error {
	cc := s.Cfg.Console
	if !cc.Enabled {
		return nil
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	s.OnClose(func() { cancel(); wg.Wait() })
	var once sync.Once
	s.Route("console", func(mux *http.ServeMux) {
		opt := console.Options{
			Allow: cc.Allow, KeyTag: cc.KeyTag, TrustProxy: s.Cfg.API.TrustProxyHeaders,
			InternalKey: s.Cfg.API.InternalKey,
			Store:       s.Store, TLDPrefix: s.Cfg.Probe.Prefix,
			JS: s.Bus.JS, Log: s.Log,
			Jobs: func() []console.Job { return consoleJobs(s.jobs) },
		}
		opt.IPBase, opt.IPClient = consoleIPBackend(s, mux)
		if s.IPAPI != nil {
			svc := s.IPAPI
			opt.Records = func(addr netip.Addr) (*ipmodel.Record, string, bool, error) {
				snap := svc.Current()
				if snap == nil {
					return nil, "", false, nil
				}
				rec, ok, err := snap.Complete().Index.Lookup(addr, false)
				return rec, snap.Manifest.SnapshotDate, ok, err
			}
			opt.Examples = func(ctx context.Context) []string { return snapshotExamples(ctx, svc.Current()) }
		}
		if s.TLD != nil {
			opt.TLD = s.TLD
		}
		if s.Store != nil {
			opt.History = console.StoreHistory{Store: s.Store, Prefix: s.Cfg.Probe.Prefix}
		}
		for _, st := range s.Cfg.Streams {
			opt.Streams = append(opt.Streams, st.Name)
		}
		opt.Sampler = console.NewSampler(s.Bus.JS, console.SamplerOptions{Stream: enrich.Stream, Consumers: enrich.ConsumerNames(),
			DeadStream: deadStream(s), Interval: cc.SampleInterval, Size: cc.Samples})
		if kv, err := bus.OpenOrCreateKV(runCtx, s.Bus.JS, s.Log, s.Cfg.KVDecl(schedule.StatusBucket)); err == nil {
			opt.JobStatus = kv
		} else {
			s.Log.Warn("console: job status bucket", "err", err)
		}
		var keys *gw.Keys
		if slices.Contains(cc.Allow, console.AllowKeys) {
			if kv, err := bus.OpenOrCreateKV(runCtx, s.Bus.JS, s.Log, s.Cfg.KVDecl(gw.KeysBucket)); err == nil {
				keys = gw.NewKeys(kv, gw.NewHasher(s.Cfg.Gateway.HashKey), s.Log)
				opt.Keys = keys
			} else {
				s.Log.Warn("console: operator keys cannot be checked", "err", err)
			}
		}
		once.Do(func() {
			wg.Add(1)
			go func() { defer wg.Done(); _ = opt.Sampler.Run(runCtx) }()
			if keys != nil {
				wg.Add(1)
				go func() { defer wg.Done(); _ = keys.Run(runCtx, s.Cfg.Gateway.LastUsedInterval) }()
			}
		})
		console.New(opt).Mount(mux)
	})
	return nil
}

// consoleIPBackend is where the console's lookups go: the IP routes on
// the same mux, in process, when this listener serves them; else the ip
// listener over HTTP (a wildcard host made loopback).
func consoleIPBackend(s *System, mux *http.ServeMux) (string, *http.Client) {
	probe, _ := http.NewRequest(http.MethodGet, "http://local/api/v1/ip/192.0.2.1", nil)
	if _, pattern := mux.Handler(probe); strings.Contains(pattern, "/api/v1/ip/") {
		return "http://in-process", &http.Client{Transport: apigw.HandlerTransport(mux), Timeout: 30 * time.Second}
	}
	u := url.URL{Scheme: "http", Host: dialable(s.listenAddr("ip"))}
	return u.String(), &http.Client{Timeout: 30 * time.Second}
}

// deadStream is the configured stream that takes dlq.> ("" when none).
func deadStream(s *System) string {
	for _, st := range s.Cfg.Streams {
		if slices.Contains(st.Subjects, "dlq.>") {
			return st.Name
		}
	}
	return ""
}

// consoleJobs lists the scheduled jobs with their next tick.
func consoleJobs(jobs []schedule.Job) []console.Job {
	out := make([]console.Job, 0, len(jobs))
	now := time.Now()
	for _, j := range jobs {
		cj := console.Job{Name: j.Name, Spec: j.Spec}
		if sched, err := schedule.Parse(j.Spec); err == nil {
			cj.Next = sched.Next(now)
		}
		out = append(out, cj)
	}
	return out
}

// snapshotExamples picks addresses of the loaded snapshot worth a lookup:
// a host with services, then the first Tor exit, VPN and hosting address.
// While the snapshot's export table is still being built (the API serves
// lookups before it, docs/ip-api.md) there are none yet: the console's
// page never waits for the build.
func snapshotExamples(ctx context.Context, snap *ipapi.Snapshot) []string {
	if snap == nil {
		return nil
	}
	rows := snap.Complete().Rows
	if !rows.Ready() {
		return nil
	}
	var out []string
	add := func(ip string) {
		if ip != "" && !slices.Contains(out, ip) {
			out = append(out, ip)
		}
	}
	add(rows.Example())
	for _, class := range []string{ipmodel.ClassTor, ipmodel.ClassVPN, ipmodel.ClassHosting} {
		var buf bytes.Buffer
		if n, err := rows.WriteCSV(ctx, &buf, ipapi.Filter{Class: 1 << slices.Index(ipmodel.Classes, class)}, 1); err != nil || n == 0 {
			continue
		}
		_, row, _ := strings.Cut(buf.String(), "\n")
		ip, _, _ := strings.Cut(row, ",")
		add(ip)
	}
	return out
}
