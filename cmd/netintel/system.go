package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/netintel/netintel/api"
	"github.com/netintel/netintel/api/ipapi"
	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/httpx"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/schedule"
	"github.com/netintel/netintel/internal/telemetry"
	"github.com/netintel/netintel/probe"
)

// System is one process's wiring: config, clients, and what each product
// module registered (routes, workers, scheduled jobs, start-up hooks).
// The role being run decides which of those start.
type System struct {
	Cfg     *config.Config
	Log     *slog.Logger
	Bus     *bus.Bus
	Store   objstore.Store
	Reg     *prometheus.Registry
	DataDir string
	Env     *Env
	// Embedded is true under `netintel run`.
	Embedded bool
	// IPState is the current IP intelligence state, set by the enrich
	// module's Setup; read it lazily (in workers and jobs), not in Setup.
	IPState ipmodel.State
	// IPAPI and TLD are the IP API service and the TLD checker, set by
	// their modules' Setup; the console reads them when it is mounted.
	IPAPI *ipapi.Service
	TLD   *probe.Service

	// listen is the --listen override of every product's address, if any.
	listen string
	// boundAt maps each listener's configured address to the one it bound.
	boundMu sync.Mutex
	boundAt map[string]string
	routes  map[string][]func(*http.ServeMux)
	// gates are listeners started before NATS was reached (external roles).
	gates    map[string]*api.Gate
	gateDone chan error
	workers  []namedRun
	jobs     []schedule.Job
	onStart  []namedRun
	health   func() any
	closers  []func()
	// addrLims is the per-address limiters of the API modules (AddrLimiters).
	addrOnce sync.Once
	addrLims httpx.AddrLimiters
}

type namedRun struct {
	name string
	run  func(ctx context.Context) error
}

// Module is a product's wiring: Setup registers its routes, workers and jobs.
type Module struct {
	Name  string
	Setup func(ctx context.Context, s *System) error
}

// moduleList is every product module in the order their Setup runs: the
// one place a module is added. No Setup reads what another sets (the
// state, the IP API and the TLD checker are read later, by workers, jobs
// and handlers), but the start-up hooks run in this order: the
// bootstrap's (ingest the samples, publish) first.
func moduleList() []Module {
	return []Module{bootstrapModule(), consoleModule(), gatewayModule(), ipapiModule(), pipelineModule(),
		probeModule(), publishModule(), secretpagesModule(), secretsModule()}
}

// Route mounts handlers for a product (ip, gateway, tld, secrets) on the
// listener configured for it.
func (s *System) Route(product string, mount func(*http.ServeMux)) {
	s.routes[product] = append(s.routes[product], mount)
}

// Worker registers a long-running worker; `netintel worker NAME` runs it alone.
func (s *System) Worker(name string, run func(ctx context.Context) error) {
	s.workers = append(s.workers, namedRun{name, run})
}

// Job registers a scheduled job under its name in pipeline.yaml's schedules;
// a job without a schedule entry is not scheduled.
func (s *System) Job(name string, run func(ctx context.Context) error) {
	s.JobRetry(name, 0, 0, run)
}

// JobRetry is Job for a job whose failed run is run again within its tick
// (schedule.Job's Retries and RetryWait).
func (s *System) JobRetry(name string, retries int, wait time.Duration, run func(ctx context.Context) error) {
	if spec, ok := s.Cfg.Schedules[name]; ok && strings.TrimSpace(spec) != "" && spec != "off" {
		s.jobs = append(s.jobs, schedule.Job{Name: name, Spec: spec, Run: run, Retries: retries, RetryWait: wait})
	}
}

// JobSpec registers a scheduled job with its own cron expression (for
// example an ingest source's schedule); "" or "off" disables it.
func (s *System) JobSpec(name, spec string, run func(ctx context.Context) error) {
	if strings.TrimSpace(spec) != "" && spec != "off" {
		s.jobs = append(s.jobs, schedule.Job{Name: name, Spec: spec, Run: run})
	}
}

// OnStart registers a hook that runs once everything is up (`netintel run` only).
func (s *System) OnStart(name string, run func(ctx context.Context) error) {
	s.onStart = append(s.onStart, namedRun{name, run})
}

// SetHealth replaces the /health body.
func (s *System) SetHealth(fn func() any) { s.health = fn }

// OnClose registers cleanup run after every worker and listener stopped.
func (s *System) OnClose(fn func()) { s.closers = append(s.closers, fn) }

// commonFlags are the flags every role shares.
type commonFlags struct {
	config    string
	dataDir   string
	natsURL   string
	logLevel  string
	logFormat string
}

func (c *commonFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", "pipeline.yaml", "path to pipeline.yaml")
	fs.StringVar(&c.dataDir, "data-dir", "", "data folder (embedded NATS store and folder object store)")
	fs.StringVar(&c.natsURL, "nats", "", "NATS URL(s), comma-separated; overrides nats in the config")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "", "text or json (default: text on a terminal, JSON otherwise; also a global flag)")
}

// logger returns the logger the flags ask for, on env's stderr: the
// command's --log-format, else the global one, else by terminal.
func (c *commonFlags) logger(env *Env) (*slog.Logger, error) {
	f := cmp.Or(c.logFormat, env.LogFormat)
	if f != "" && !slices.Contains(telemetry.LogFormats, f) {
		return nil, usageError{fmt.Errorf("--log-format: %q is not text or json", f)}
	}
	switch strings.ToLower(c.logLevel) {
	case "", "debug", "info", "warn", "error":
	default:
		return nil, usageError{fmt.Errorf("--log-level: %q is not debug, info, warn or error", c.logLevel)}
	}
	if c.logFormat != "" {
		env.LogFormat = c.logFormat // the command's meters follow it
	}
	return telemetry.NewLogger(env.Stderr, c.logLevel, f), nil
}

// loadConfig loads the config file; a missing default file means defaults.
func (c *commonFlags) loadConfig() (*config.Config, error) {
	if c.config == "pipeline.yaml" {
		if _, err := os.Stat(c.config); errors.Is(err, os.ErrNotExist) {
			return config.Default(), nil
		}
	}
	return config.Load(c.config)
}

type roleOpts struct {
	embedded bool // start the embedded server (netintel run)
	ensure   bool // create streams and buckets
	store    bool // open the object store
	// products, when set for an external role, are listened for at once:
	// /ready answers 503 with the reason until NATS and the store are up.
	products []string
	listen   string
}

// openSystem loads config, connects to NATS (embedded or external), ensures
// streams, opens the object store and runs every module's Setup.
func openSystem(ctx context.Context, env *Env, cf *commonFlags, o roleOpts) (*System, error) {
	cfg, err := cf.loadConfig()
	if err != nil {
		return nil, err
	}
	log, err := cf.logger(env)
	if err != nil {
		return nil, err
	}
	if env.Getenv != nil {
		if err := startPprof(env.Getenv(pprofEnv), log); err != nil {
			return nil, err
		}
	}
	s := &System{Cfg: cfg, Log: log, Reg: telemetry.NewRegistry(), DataDir: cf.dataDir, Env: env, Embedded: o.embedded, listen: o.listen, routes: map[string][]func(*http.ServeMux){}}
	if err := s.resolveInternalKey(o.embedded); err != nil {
		return nil, err
	}
	if err := cfg.CheckExposedKeys(o.products, s.listenAddr); err != nil {
		return nil, err
	}
	if len(o.products) > 0 && !o.embedded {
		s.earlyListen(ctx, o.products)
	}
	ncfg := cfg.NATS
	switch {
	case o.embedded:
		ncfg.Embedded.Enabled = true
		if s.DataDir == "" {
			return nil, errors.New("--data-dir is required")
		}
	case cf.natsURL != "":
		ncfg.Embedded.Enabled = false
		ncfg.URLs = strings.Split(cf.natsURL, ",")
	case cf.dataDir != "" && (cfg.NATS.Embedded.Enabled || len(cfg.NATS.URLs) == 0):
		u, err := bus.URLFromDataDir(cf.dataDir)
		if err != nil {
			return nil, err
		}
		ncfg.Embedded.Enabled = false
		ncfg.URLs = []string{u}
	case len(cfg.NATS.URLs) > 0:
		ncfg.Embedded.Enabled = false
	default:
		return nil, errors.New("no NATS to reach: pass --nats URL or --data-dir DIR of a running `netintel run`, or set nats.urls")
	}
	b, err := bus.Open(ctx, ncfg, s.DataDir, log)
	if err != nil {
		return nil, err
	}
	s.Bus = b
	if o.ensure {
		if err := bus.Ensure(ctx, b.JS, cfg, log); err != nil {
			s.close()
			return nil, err
		}
	}
	if o.store {
		st, err := objstore.Open(ctx, cfg.ObjectStore, s.DataDir)
		if err != nil {
			s.close()
			return nil, err
		}
		s.Store = st
	}
	for _, m := range moduleList() {
		if err := m.Setup(ctx, s); err != nil {
			s.close()
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	return s, nil
}

// resolveInternalKey: under `netintel run` an api.internal_key that is
// empty or a published development value is replaced by the data folder's
// own random key (generated once, mode 0600, reused on restart), so the
// shipped config never opens the backend. Another role given the --data-dir
// of a running `netintel run` takes that folder's key the same way, so a
// gateway started beside it reaches its backend. The key is never logged.
func (s *System) resolveInternalKey(embedded bool) error {
	k := s.Cfg.API.InternalKey
	if k != "" && !config.IsDevInternalKey(k) {
		return nil
	}
	key := ""
	if s.DataDir != "" {
		var err error
		if embedded {
			key, err = api.EnsureInternalKey(s.DataDir)
		} else {
			key, err = api.ReadInternalKey(s.DataDir)
		}
		if err != nil {
			return err
		}
	}
	if key == "" {
		if k != "" {
			s.Log.Warn("api.internal_key is the published development value: anyone who can reach the backend can use it; set NETINTEL_INTERNAL_KEY")
		}
		return nil
	}
	s.Cfg.API.InternalKey = key
	s.Log.Info("api.internal_key not configured: using the data folder's own key", "file", filepath.Join(s.DataDir, api.InternalKeyFile))
	return nil
}

func (s *System) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	if s.Bus != nil {
		s.Bus.Close()
	}
}

// ready is the /ready check: NATS connected, streams present, store reachable.
func (s *System) ready(ctx context.Context) error {
	var names []string
	for _, st := range s.Cfg.Streams {
		names = append(names, st.Name)
	}
	if err := s.Bus.Ready(ctx, names); err != nil {
		return err
	}
	if s.Store != nil {
		if err := s.Store.Ping(ctx); err != nil {
			return fmt.Errorf("object store: %w", err)
		}
	}
	return nil
}

// serve runs the selected parts until ctx ends, then stops them in order:
// listeners and workers first (in-flight work finishes), then NATS.
type parts struct {
	products []string // products whose routes to serve; nil = none
	workers  []string // worker names; ["*"] = all
	jobs     bool
	onStart  bool
	// bound is called with each listener's address once it listens.
	bound func(addr string)
}

func (s *System) serve(ctx context.Context, p parts) error {
	defer s.close() // after every part has stopped (the deferred stop below runs first)
	for _, want := range p.workers {
		if want != "*" && !slices.ContainsFunc(s.workers, func(w namedRun) bool { return w.name == want }) {
			return fmt.Errorf("unknown worker %q (have: %s)", want, strings.Join(s.workerNames(), ", "))
		}
	}
	g := newPartGroup(ctx)
	defer func() {
		// The API takes up to shutdown_timeout to finish its requests;
		// every part gets that, and stopGrace more, to return.
		if !g.stop(s.shutdownTimeout() + stopGrace) {
			s.Log.Warn("some parts did not stop in time")
		}
		s.Log.Info("stopped")
	}()
	ran := 0
	for _, w := range s.workers {
		if slices.Contains(p.workers, "*") || slices.Contains(p.workers, w.name) {
			g.start("worker "+w.name, w.run)
			ran++
		}
	}
	if p.jobs && len(s.jobs) > 0 {
		kv, err := bus.OpenKV(g.ctx, s.Bus.JS, s.Log, "schedule")
		if err != nil {
			return fmt.Errorf("scheduler: kv bucket schedule: %w", err)
		}
		sched, err := schedule.New(kv, s.Log, s.jobs)
		if err != nil {
			return err
		}
		// Each job's last outcome, for the console and operators.
		if sched.Status, err = bus.OpenOrCreateKV(g.ctx, s.Bus.JS, s.Log, s.Cfg.KVDecl(schedule.StatusBucket)); err != nil {
			return fmt.Errorf("scheduler: %w", err)
		}
		if err := sched.RegisterMetrics(s.Reg); err != nil {
			return fmt.Errorf("scheduler: %w", err)
		}
		g.start("scheduler", sched.Run)
		ran++
	}
	up := make(chan struct{})
	if len(p.products) > 0 {
		s.startAPI(g, p, up)
		ran++
	} else {
		close(up)
	}
	if ran == 0 {
		return errors.New("nothing to run")
	}
	if p.onStart {
		for _, h := range s.onStart {
			g.start("start "+h.name, func(ctx context.Context) error {
				select {
				case <-up:
				case <-ctx.Done():
					return nil
				}
				return h.run(ctx)
			})
		}
	}
	select {
	case <-g.ctx.Done():
		return nil
	case err := <-g.errc:
		s.Log.Error("stopping after failure", "err", err)
		return err
	}
}

// startAPI serves the products' listeners; up is closed once every
// listener is bound, so that start-up hooks print addresses that answer
// (port 0 resolved).
func (s *System) startAPI(g *partGroup, p parts, up chan struct{}) {
	ls := s.listeners(p.products)
	if s.gates != nil {
		close(up) // bound by earlyListen
		for _, l := range ls {
			s.gates[l.Addr].Open(l.Handler)
		}
		g.start("api", func(ctx context.Context) error {
			select {
			case err := <-s.gateDone:
				return err
			case <-ctx.Done():
				return <-s.gateDone
			}
		})
		return
	}
	var n int
	bound := func(configured, addr string) {
		s.recordBound(configured, addr)
		if p.bound != nil {
			p.bound(addr)
		}
		if n++; n == len(ls) {
			close(up)
		}
	}
	g.start("api", func(ctx context.Context) error { return api.Serve(ctx, s.Log, ls, s.shutdownTimeout(), bound) })
}

// stopGrace is how long the parts get to return beyond the API's
// shutdown timeout (a worker acknowledging what it finished).
const stopGrace = 2 * time.Second

// partGroup runs the parts of a role, each in its own goroutine under one
// context, and stops them together: the first part to fail ends the others.
type partGroup struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errc   chan error
}

func newPartGroup(ctx context.Context) *partGroup {
	ctx, cancel := context.WithCancel(ctx)
	return &partGroup{ctx: ctx, cancel: cancel, errc: make(chan error, 64)}
}

// start runs f; its error, unless the group is stopping, is the group's.
func (g *partGroup) start(name string, f func(context.Context) error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := f(g.ctx); err != nil && g.ctx.Err() == nil {
			select {
			case g.errc <- fmt.Errorf("%s: %w", name, err):
			default: // the group is failing already
			}
		}
	}()
}

// stop cancels every part and waits up to d for them to return; it
// reports whether they all did.
func (g *partGroup) stop(d time.Duration) bool {
	g.cancel()
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

func (s *System) shutdownTimeout() time.Duration {
	if s.Cfg.API.ShutdownTimeout > 0 {
		return s.Cfg.API.ShutdownTimeout
	}
	return 10 * time.Second
}

// earlyListen binds the role's addresses now, behind gates that answer 503
// until serve opens them.
func (s *System) earlyListen(ctx context.Context, products []string) {
	s.gates = map[string]*api.Gate{}
	var ls []api.Listener
	for _, a := range s.addrs(products) {
		g := api.NewGate("connecting to NATS")
		s.gates[a] = g
		ls = append(ls, api.Listener{Addr: a, Handler: g})
	}
	s.gateDone = make(chan error, 1)
	bound := func(configured, addr string) {
		s.recordBound(configured, addr)
		fmt.Fprintf(s.Env.Stdout, "netintel listening on http://%s\n", addr)
	}
	go func() { s.gateDone <- api.Serve(ctx, s.Log, ls, s.shutdownTimeout(), bound) }()
}

func (s *System) recordBound(configured, addr string) {
	s.boundMu.Lock()
	defer s.boundMu.Unlock()
	if s.boundAt == nil {
		s.boundAt = map[string]string{}
	}
	s.boundAt[configured] = addr
}

// baseURL is the http:// address a user on this machine reaches product
// at: the --listen override, else api.listeners or api.listen, with a
// wildcard host made loopback, and port 0 as bound once it listens.
func (s *System) baseURL(product string) string {
	addr := s.listenAddr(product)
	s.boundMu.Lock()
	if b, ok := s.boundAt[addr]; ok {
		addr = b
	}
	s.boundMu.Unlock()
	return "http://" + dialable(addr)
}

// listenAddr is where product listens: the --listen override, else
// api.listeners or api.listen.
func (s *System) listenAddr(product string) string {
	if s.listen != "" {
		return s.listen
	}
	return s.Cfg.ListenFor(product)
}

// dialable turns a listen address into one a local client can dial: an
// empty or wildcard host (0.0.0.0, ::) becomes 127.0.0.1.
func dialable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err == nil && (host == "" || host == "0.0.0.0" || host == "::") {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// addrs returns the distinct listen addresses of products, in order.
func (s *System) addrs(products []string) []string {
	var out []string
	for _, prod := range products {
		a := s.listenAddr(prod)
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

func (s *System) workerNames() []string {
	var out []string
	for _, w := range s.workers {
		out = append(out, w.name)
	}
	return out
}

// listeners groups the products' routes by listen address.
func (s *System) listeners(products []string) []api.Listener {
	metrics := api.NewMetrics(s.Reg)
	metrics.Zero("/health", "/ready", "/metrics")
	byAddr := map[string]*http.ServeMux{}
	var order []string
	for _, prod := range products {
		addr := s.listenAddr(prod)
		mux, ok := byAddr[addr]
		if !ok {
			mux = http.NewServeMux()
			api.MountProbes(mux, api.Probes{Ready: s.ready, Health: s.health}, s.Reg)
			byAddr[addr] = mux
			order = append(order, addr)
		}
		for _, mount := range s.routes[prod] {
			mount(mux)
		}
	}
	var ls []api.Listener
	for _, a := range order {
		ls = append(ls, api.Listener{Addr: a, Handler: metrics.Wrap(byAddr[a])})
	}
	return ls
}
