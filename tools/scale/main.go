// Command scale is the scale benchmark behind `make scale` (issue 33,
// docs/benchmarks/scale.md): it runs N addresses through the pipeline
// with every role as its own process on loopback and reports what each
// process and store costs.
//
// It starts nats-server (one node, or three in a JetStream cluster with
// every stream and bucket at R3), one `netintel worker enrich` and one
// `netintel api --products ip` on a fresh data folder, ingests N
// generated observations (one signal each: an HTTP service, a WireGuard
// or OpenVPN flow, a web server; 90 % IPv4, 10 % IPv6) through the
// observations adapter, waits until enrichment is idle, runs `netintel
// publish`, waits until the API has loaded the snapshot, and writes one
// table (to stdout and to SCALE_REPORT) with every process's peak and
// final RSS (/proc/PID/status VmHWM and VmRSS, sampled every 500 ms), the
// enrich rate, the publish's wall time and peak RSS, the API's load time
// and Go heap, and the disk of the JetStream store and the object store.
// Heap profiles of nats-server, the enrich worker and the API are saved
// beside the report. Every process it starts is stopped when it ends (and
// killed with it: Pdeathsig).
//
// Settings (environment): SCALE_N addresses (default 10,000,000);
// SCALE_MODE single or cluster (3 nodes, R3; SCALE_REPLICAS=1 for R1, its
// nodes then tagged shard:0..2 and the shards placed on them, shard j on
// shard:(j mod 3)); SCALE_SHARDS, when set,
// becomes enrich.shards in the config (a build that does not know the key
// is detected and reported, and the run goes on without it); SCALE_DIR the
// work folder (default a new one under the system temp dir, removed at the
// end unless SCALE_KEEP=1); SCALE_REPORT the report file (default
// scale-report.md); SCALE_BIN the netintel binary (default ./netintel);
// SCALE_NATS_SERVER the nats-server binary (default
// $NETINTEL_TOOLS/nats-server); SCALE_TIMEOUT the limit of the whole run
// (default 2h).
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

// settings are the run's parameters, from the environment.
type settings struct {
	n          int
	mode       string
	shards     int
	dir        string
	keep       bool
	report     string
	bin        string
	natsServer string
	timeout    time.Duration
	// settle is a wait after enrichment before the next measurement (the
	// dedupe window and the server's per-block caches expiring).
	settle time.Duration
	// duplicates overrides the OBSERVATIONS stream's dedupe window.
	duplicates string
	// replicas of every stream and bucket in cluster mode (3 unless
	// SCALE_REPLICAS says 1). With R1 and shards, node i is tagged
	// shard:i and shard j placed on tag shard:(j mod 3).
	replicas int
}

func loadSettings() (settings, error) {
	s := settings{n: 10_000_000, mode: "single", report: "scale-report.md", bin: "./netintel", timeout: 2 * time.Hour}
	var err error
	if v := os.Getenv("SCALE_N"); v != "" {
		if s.n, err = strconv.Atoi(strings.ReplaceAll(v, "_", "")); err != nil || s.n < 1 {
			return s, fmt.Errorf("SCALE_N=%q: want a positive number of addresses", v)
		}
	}
	if v := os.Getenv("SCALE_MODE"); v != "" {
		if v != "single" && v != "cluster" {
			return s, fmt.Errorf("SCALE_MODE=%q: want single or cluster", v)
		}
		s.mode = v
	}
	if v := os.Getenv("SCALE_SHARDS"); v != "" {
		if s.shards, err = strconv.Atoi(v); err != nil || s.shards < 1 {
			return s, fmt.Errorf("SCALE_SHARDS=%q: want a positive number", v)
		}
	}
	if v := os.Getenv("SCALE_TIMEOUT"); v != "" {
		if s.timeout, err = time.ParseDuration(v); err != nil {
			return s, fmt.Errorf("SCALE_TIMEOUT=%q: %w", v, err)
		}
	}
	if v := os.Getenv("SCALE_SETTLE"); v != "" {
		if s.settle, err = time.ParseDuration(v); err != nil {
			return s, fmt.Errorf("SCALE_SETTLE=%q: %w", v, err)
		}
	}
	if v := os.Getenv("SCALE_DUPLICATES"); v != "" {
		if _, err = time.ParseDuration(v); err != nil {
			return s, fmt.Errorf("SCALE_DUPLICATES=%q: %w", v, err)
		}
		s.duplicates = v
	}
	if v := os.Getenv("SCALE_REPLICAS"); v != "" {
		if s.replicas, err = strconv.Atoi(v); err != nil || (s.replicas != 1 && s.replicas != 3) {
			return s, fmt.Errorf("SCALE_REPLICAS=%q: want 1 or 3", v)
		}
	}
	s.dir = os.Getenv("SCALE_DIR")
	s.keep = os.Getenv("SCALE_KEEP") == "1"
	if v := os.Getenv("SCALE_REPORT"); v != "" {
		s.report = v
	}
	if v := os.Getenv("SCALE_BIN"); v != "" {
		s.bin = v
	}
	s.natsServer = os.Getenv("SCALE_NATS_SERVER")
	if s.natsServer == "" {
		s.natsServer = filepath.Join(os.Getenv("NETINTEL_TOOLS"), "nats-server")
	}
	for _, p := range []*string{&s.bin, &s.natsServer} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return s, err
		}
		if _, err := os.Stat(abs); err != nil {
			return s, fmt.Errorf("%s: %w (make scale builds it)", abs, err)
		}
		*p = abs
	}
	return s, nil
}

func run(ctx context.Context) error {
	st, err := loadSettings()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, st.timeout)
	defer cancel()
	if st.dir == "" {
		if st.dir, err = os.MkdirTemp("", "netintel-scale-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(st.dir, 0o755); err != nil {
		return err
	}
	if !st.keep {
		defer os.RemoveAll(st.dir)
	}
	reportDir := filepath.Dir(st.report)
	h := &harness{st: st, log: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	defer h.saveLogs(filepath.Dir(st.report))
	defer h.stopAll()
	r, err := h.run(ctx)
	if r == nil {
		return err
	}
	r.err = err
	out := r.markdown()
	fmt.Print(out)
	if werr := os.WriteFile(st.report, []byte(out), 0o644); werr != nil {
		return errors.Join(err, werr)
	}
	h.log.Info("report written", "file", st.report, "profiles", reportDir)
	return err
}

// harness holds the processes of one run.
type harness struct {
	st    settings
	log   *slog.Logger
	mu    sync.Mutex
	procs []*proc
}

// proc is one process the harness started, with its sampled memory.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	// pprof is the address of its /debug/pprof, if any.
	pprof string

	mu   sync.Mutex
	logs []string
	// peak is the largest VmHWM seen, last the latest VmRSS (KiB).
	peak, last int64
	// at holds VmRSS at named moments (KiB), heap the Go heap in use
	// after a collection (bytes) where the process serves pprof.
	at, heap map[string]int64
}

func (p *proc) sample() {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return
	}
	hwm, rss := statusKiB(string(b), "VmHWM:"), statusKiB(string(b), "VmRSS:")
	p.mu.Lock()
	p.peak = max(p.peak, hwm, rss)
	if rss > 0 {
		p.last = rss
	}
	p.mu.Unlock()
}

func (p *proc) mark(moment string) {
	p.sample()
	p.mu.Lock()
	if p.at == nil {
		p.at = map[string]int64{}
	}
	p.at[moment] = p.last
	p.mu.Unlock()
}

// markHeap records the live heap at moment (a GC first: ?gc=1).
func (p *proc) markHeap(ctx context.Context, moment string) {
	if p.pprof == "" {
		return
	}
	v := pprofHeapInuse(ctx, p.pprof)
	p.mu.Lock()
	if p.heap == nil {
		p.heap = map[string]int64{}
	}
	p.heap[moment] = v
	p.mu.Unlock()
}

func (p *proc) output() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.logs...)
}

// statusKiB reads one "Name:   123 kB" line of /proc/PID/status.
func statusKiB(status, field string) int64 {
	for _, line := range strings.Split(status, "\n") {
		if strings.HasPrefix(line, field) {
			f := strings.Fields(strings.TrimPrefix(line, field))
			if len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				return v
			}
		}
	}
	return 0
}

// start runs a process with the repository root as its folder, keeps its
// output lines (the last 20,000) and samples its memory until it exits.
func (h *harness) start(ctx context.Context, name string, env []string, args ...string) (*proc, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.logs = append(p.logs, sc.Text())
			if len(p.logs) > 20000 {
				p.logs = p.logs[len(p.logs)-10000:]
			}
			p.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				p.sample()
			}
		}
	}()
	go func() { _ = cmd.Wait(); pw.Close(); close(p.done) }()
	h.mu.Lock()
	h.procs = append(h.procs, p)
	h.mu.Unlock()
	return p, nil
}

// stopAll stops every process still running: SIGTERM, SIGKILL after 20 s.
func (h *harness) stopAll() {
	h.mu.Lock()
	procs := append([]*proc(nil), h.procs...)
	h.mu.Unlock()
	// Clients first, NATS last.
	for i := len(procs) - 1; i >= 0; i-- {
		p := procs[i]
		select {
		case <-p.done:
			continue
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
		}
	}
}

// saveLogs writes each process's output (its last lines) beside the report.
func (h *harness) saveLogs(dir string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.procs {
		name := strings.NewReplacer(" ", "-", "(", "", ")", "").Replace(p.name)
		_ = os.WriteFile(filepath.Join(dir, "scale-"+name+".log"), []byte(strings.Join(p.output(), "\n")+"\n"), 0o644)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitPort(ctx context.Context, addr string, p *proc) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited: %s", p.name, tail(p.output(), 20))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not listen on %s in 60 s", p.name, addr)
}

func tail(lines []string, n int) string {
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// node is one nats-server.
type node struct {
	p           *proc
	port, prof  int
	dir         string
	clusterPort int
}

// tagged reports whether the cluster's nodes carry shard tags: R1 shards
// in cluster mode, placed one tag a node.
func (h *harness) tagged() bool {
	return h.st.mode == "cluster" && h.st.replicas == 1 && h.st.shards > 1
}

// startNATS starts one node, or three in a cluster.
func (h *harness) startNATS(ctx context.Context) ([]*node, error) {
	count := 1
	if h.st.mode == "cluster" {
		count = 3
	}
	var nodes []*node
	for i := 0; i < count; i++ {
		nd := &node{dir: filepath.Join(h.st.dir, fmt.Sprintf("nats-n%d", i+1))}
		var err error
		if nd.port, err = freePort(); err != nil {
			return nil, err
		}
		if nd.prof, err = freePort(); err != nil {
			return nil, err
		}
		if nd.clusterPort, err = freePort(); err != nil {
			return nil, err
		}
		nodes = append(nodes, nd)
	}
	var routes []string
	for _, nd := range nodes {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", nd.clusterPort))
	}
	for i, nd := range nodes {
		args := []string{h.st.natsServer, "-a", "127.0.0.1", "-p", strconv.Itoa(nd.port), "-js", "-sd", nd.dir,
			"--server_name", fmt.Sprintf("n%d", i+1), "--profile", strconv.Itoa(nd.prof)}
		if h.tagged() {
			// The command line has no server_tags: a one-line config file.
			conf := filepath.Join(h.st.dir, fmt.Sprintf("nats-n%d.conf", i+1))
			if err := os.WriteFile(conf, []byte(fmt.Sprintf("server_tags: [\"shard:%d\"]\n", i)), 0o600); err != nil {
				return nil, err
			}
			args = append(args, "-c", conf)
		}
		if count > 1 {
			args = append(args, "--cluster_name", fmt.Sprintf("scale-%d", os.Getpid()),
				"--cluster", fmt.Sprintf("nats://127.0.0.1:%d", nd.clusterPort), "--routes", strings.Join(routes, ","))
		}
		p, err := h.start(ctx, fmt.Sprintf("nats-server n%d", i+1), nil, args...)
		if err != nil {
			return nil, err
		}
		nd.p = p
		p.pprof = fmt.Sprintf("127.0.0.1:%d", nd.prof)
	}
	for _, nd := range nodes {
		if err := waitPort(ctx, fmt.Sprintf("127.0.0.1:%d", nd.port), nd.p); err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

func natsURLs(nodes []*node) string {
	var u []string
	for _, nd := range nodes {
		u = append(u, fmt.Sprintf("nats://127.0.0.1:%d", nd.port))
	}
	return strings.Join(u, ",")
}

// writeConfig derives the run's config from the repository's pipeline.yaml:
// external NATS, replicas 1 or 3, no schedules, the object store and the
// publish work folder under the run's folder, and enrich.shards if asked.
func (h *harness) writeConfig(urls string, shards int) (string, error) {
	b, err := os.ReadFile("pipeline.yaml")
	if err != nil {
		return "", fmt.Errorf("read pipeline.yaml (run from the repository root): %w", err)
	}
	s := string(b)
	replace := func(re, with string) error {
		r := regexp.MustCompile(re)
		loc := r.FindStringIndex(s)
		if loc == nil {
			return fmt.Errorf("pipeline.yaml: no line matches %s", re)
		}
		s = s[:loc[0]] + with + s[loc[1]:]
		return nil
	}
	var quoted []string
	for _, u := range strings.Split(urls, ",") {
		quoted = append(quoted, strconv.Quote(u))
	}
	replicas := "1"
	if h.st.mode == "cluster" && h.st.replicas != 1 {
		replicas = "3"
	}
	for _, e := range [][2]string{
		{`(?m)^    enabled: true.*$`, "    enabled: false"},
		{`(?m)^  urls: \[\].*$`, "  urls: [" + strings.Join(quoted, ", ") + "]"},
		{`(?m)^    dir: "".*$`, "    dir: " + strconv.Quote(filepath.Join(h.st.dir, "objects"))},
		{`(?m)^  work_dir: "".*$`, "  work_dir: " + strconv.Quote(filepath.Join(h.st.dir, "work"))},
		{`(?m)^  snapshot: .*$`, `  snapshot: "off"`},
		{`(?m)^  tld_probe: .*$`, `  tld_probe: "off"`},
	} {
		if err := replace(e[0], e[1]); err != nil {
			return "", err
		}
	}
	if h.st.duplicates != "" {
		if err := replace(`(?m)^    duplicates: .*$`, "    duplicates: "+h.st.duplicates); err != nil {
			return "", err
		}
	}
	s = regexp.MustCompile(`replicas: 1\b`).ReplaceAllString(s, "replicas: "+replicas)
	if shards > 0 {
		if err := replace(`(?m)^  shards: .*$`, fmt.Sprintf("  shards: %d", shards)); err != nil {
			// A build from before the key was in pipeline.yaml.
			s = strings.Replace(s, "\nenrich:\n", fmt.Sprintf("\nenrich:\n  shards: %d\n", shards), 1)
		}
		if h.tagged() {
			if err := replace(`(?m)^  shard_placement: .*$`, `  shard_placement: [{tags: ["shard:0"]}, {tags: ["shard:1"]}, {tags: ["shard:2"]}]`); err != nil {
				return "", err
			}
		}
	}
	p := filepath.Join(h.st.dir, "pipeline.yaml")
	return p, os.WriteFile(p, []byte(s), 0o600)
}

// roleEnv is what every netintel role gets: the keys a role beyond
// `netintel run` must be given.
var roleEnv = []string{"NETINTEL_INTERNAL_KEY=scale-internal-key", "NETINTEL_GATEWAY_HASH_KEY=scale-hash-key"}

var listenRe = regexp.MustCompile(`"msg":"http listening","addr":"([^"]+)"|listening on http://(\S+)`)

func (h *harness) waitLog(ctx context.Context, p *proc, from int, re *regexp.Regexp, limit time.Duration) ([]string, int, error) {
	deadline := time.Now().Add(limit)
	for {
		lines := p.output()
		for i := from; i < len(lines); i++ {
			if m := re.FindStringSubmatch(lines[i]); m != nil {
				return m, i, nil
			}
		}
		select {
		case <-p.done:
			return nil, 0, fmt.Errorf("%s exited:\n%s", p.name, tail(lines, 30))
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, 0, fmt.Errorf("%s: no line matching %s in %s:\n%s", p.name, re, limit, tail(lines, 30))
		}
	}
}

// report is what one run measured.
type report struct {
	st          settings
	start       time.Time
	host        string
	shardsNote  string
	procs       []*proc
	apiHeap     int64
	ingestTime  time.Duration
	enrichTime  time.Duration
	observ      int
	skipped     map[string]int
	publishWall time.Duration
	publishPeak int64
	publishLine string
	// publishFailures are the failed publish attempts before the last.
	publishFailures []string
	apiLoad         time.Duration // until the snapshot answers lookups
	apiTable        time.Duration // until its export table is built
	apiRows         int64
	jsDisk          map[string]int64
	objDisk         int64
	streams         []streamRow
	profiles        []string
	err             error
}

type streamRow struct {
	name     string
	msgs     uint64
	bytes    uint64
	subjects int
	replicas []string
}

func (h *harness) run(ctx context.Context) (*report, error) {
	r := &report{st: h.st, start: time.Now().UTC(), jsDisk: map[string]int64{}}
	r.host = hostInfo()
	nodes, err := h.startNATS(ctx)
	if err != nil {
		return nil, err
	}
	for _, nd := range nodes {
		r.procs = append(r.procs, nd.p)
	}
	urls := natsURLs(nodes)
	cfg, err := h.config(ctx, r, urls)
	if err != nil {
		return nil, err
	}
	common := []string{"--config", cfg, "--nats", urls, "--log-format", "json"}
	enr, api, apiAddr, err := h.startRoles(ctx, r, common)
	if err != nil {
		return r, err
	}
	nc, err := nats.Connect(urls, nats.MaxReconnects(-1))
	if err != nil {
		return r, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return r, err
	}
	if err := h.waitConsumer(ctx, js, enr); err != nil {
		return r, err
	}
	for _, p := range r.procs {
		p.mark("start")
	}
	if err := h.ingestAndEnrich(ctx, r, js, nodes, enr); err != nil {
		return r, err
	}
	apiFrom := len(api.output())
	if err := h.publish(ctx, r, common); err != nil {
		return r, err
	}
	if err := h.apiLoaded(ctx, r, api, apiFrom, apiAddr); err != nil {
		return r, err
	}
	for _, nd := range nodes {
		r.jsDisk[nd.p.name] = diskUsage(nd.dir)
	}
	r.objDisk = diskUsage(filepath.Join(h.st.dir, "objects"))
	return r, nil
}

// config writes the run's config, with enrich.shards when asked and the
// build takes it (else it says so in the report and uses one bucket).
func (h *harness) config(ctx context.Context, r *report, urls string) (string, error) {
	cfg, err := h.writeConfig(urls, h.st.shards)
	if err != nil {
		return "", err
	}
	if h.st.shards > 0 {
		out, err := exec.CommandContext(ctx, h.st.bin, "validate", cfg).CombinedOutput()
		if err != nil {
			// This build does not know enrich.shards: say so and go on
			// with the state in one bucket.
			r.shardsNote = fmt.Sprintf("enrich.shards: %d refused by `netintel validate` (%s); the run used one state bucket",
				h.st.shards, strings.TrimSpace(strings.ReplaceAll(string(out), "\n", "; ")))
			h.log.Warn("enrich.shards not accepted by this build; going on without it", "validate", strings.TrimSpace(string(out)))
			if cfg, err = h.writeConfig(urls, 0); err != nil {
				return "", err
			}
		} else {
			r.shardsNote = fmt.Sprintf("enrich.shards: %d", h.st.shards)
		}
	}
	return cfg, nil
}

// startRoles starts the enrich worker and the IP API, and returns them with
// the API's address once it listens.
func (h *harness) startRoles(ctx context.Context, r *report, common []string) (enr, api *proc, apiAddr string, err error) {
	enrichPort, err := freePort()
	if err != nil {
		return nil, nil, "", err
	}
	apiPprof, err := freePort()
	if err != nil {
		return nil, nil, "", err
	}
	enr, err = h.start(ctx, "netintel worker enrich", append([]string{fmt.Sprintf("NETINTEL_PPROF=127.0.0.1:%d", enrichPort)}, roleEnv...),
		append(append([]string{h.st.bin, "worker"}, common...), "enrich")...)
	if err != nil {
		return nil, nil, "", err
	}
	enr.pprof = fmt.Sprintf("127.0.0.1:%d", enrichPort)
	api, err = h.start(ctx, "netintel api (ip)", append([]string{fmt.Sprintf("NETINTEL_PPROF=127.0.0.1:%d", apiPprof)}, roleEnv...),
		append(append([]string{h.st.bin, "api"}, common...), "--products", "ip", "--listen", "127.0.0.1:0")...)
	if err != nil {
		return nil, nil, "", err
	}
	api.pprof = fmt.Sprintf("127.0.0.1:%d", apiPprof)
	r.procs = append(r.procs, enr, api)
	m, _, err := h.waitLog(ctx, api, 0, listenRe, 2*time.Minute)
	if err != nil {
		return nil, nil, "", err
	}
	return enr, api, m[1] + m[2], nil
}

// waitConsumer waits for the enrich worker to create the streams and its
// consumer.
func (h *harness) waitConsumer(ctx context.Context, js jetstream.JetStream, enr *proc) error {
	// The enrich worker creates the streams and its consumer. Each
	// request has a timeout of its own: a cluster still electing may not
	// answer one.
	waitUntil := time.Now().Add(10 * time.Minute)
	for {
		rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := js.Consumer(rctx, enrich.Stream, enrich.ConsumerName)
		rcancel()
		if err == nil {
			break
		}
		if time.Now().After(waitUntil) {
			return fmt.Errorf("the enrich worker did not create its consumer in 10 minutes: %w", err)
		}
		select {
		case <-enr.done:
			return fmt.Errorf("enrich worker exited:\n%s", tail(enr.output(), 30))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// ingestAndEnrich feeds the generated observations and waits until the
// enrich consumers are idle, marking memory and taking heap profiles.
func (h *harness) ingestAndEnrich(ctx context.Context, r *report, js jetstream.JetStream, nodes []*node, enr *proc) error {
	h.log.Info("ingesting", "addresses", h.st.n, "mode", h.st.mode)
	in := ingest.New(js, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, 0, 0)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(generate(ctx, pw, h.st.n)) }()
	progressDone := make(chan struct{})
	go h.progress(ctx, js, r.procs, progressDone)
	start := time.Now()
	stats, err := in.Ingest(ctx, "observations", pr, ingest.Options{})
	if err != nil {
		close(progressDone)
		return fmt.Errorf("ingest: %w", err)
	}
	r.ingestTime = time.Since(start)
	r.observ = stats.Published
	r.skipped = stats.Skipped
	if len(stats.Malformed) > 0 {
		return fmt.Errorf("ingest: %s; first: %s", stats.String(), firstMalformed(stats))
	}
	h.log.Info("ingested", "published", stats.Published, "summary", stats.String(), "malformed_first", firstMalformed(stats), "took", r.ingestTime.Round(time.Millisecond))
	if err := enrich.WaitIdle(ctx, js); err != nil {
		close(progressDone)
		return err
	}
	r.enrichTime = time.Since(start)
	close(progressDone)
	h.log.Info("enriched", "took", r.enrichTime.Round(time.Millisecond), "obs/s", int(float64(r.observ)/r.enrichTime.Seconds()))
	for _, p := range r.procs {
		p.mark("enriched")
		p.markHeap(ctx, "enriched")
	}
	r.streams = streamRows(ctx, js)
	for _, nd := range nodes {
		r.profiles = append(r.profiles, h.heapProfile(ctx, nd.p, "enriched"))
	}
	r.profiles = append(r.profiles, h.heapProfile(ctx, enr, "enriched"))
	if h.st.settle > 0 {
		h.log.Info("settling", "for", h.st.settle)
		select {
		case <-time.After(h.st.settle):
		case <-ctx.Done():
			return ctx.Err()
		}
		for _, p := range r.procs {
			p.mark("settled")
			p.markHeap(ctx, "settled")
		}
		for _, nd := range nodes {
			r.profiles = append(r.profiles, h.heapProfile(ctx, nd.p, "settled"))
		}
	}
	return nil
}

// publish runs `netintel publish` to success, up to three attempts.
func (h *harness) publish(ctx context.Context, r *report, common []string) error {
	// A failed run is run again twice, as the scheduler does
	// (publish.run_retries); the failures are reported.
	var pub *proc
	var err error
	for attempt := 1; ; attempt++ {
		h.log.Info("publishing", "attempt", attempt)
		if pub, err = h.start(ctx, "netintel publish", roleEnv, append([]string{h.st.bin, "publish"}, common...)...); err != nil {
			return err
		}
		pstart := time.Now()
		select {
		case <-pub.done:
		case <-ctx.Done():
			_ = pub.cmd.Process.Signal(syscall.SIGTERM)
			<-pub.done
			return ctx.Err()
		}
		r.publishWall = time.Since(pstart)
		if ru, ok := pub.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.publishPeak = max(pub.peak, ru.Maxrss)
		}
		if pub.cmd.ProcessState.Success() {
			break
		}
		msg := tail(pub.output(), 1)
		r.publishFailures = append(r.publishFailures, fmt.Sprintf("attempt %d failed after %.1f s: %s", attempt, r.publishWall.Seconds(), msg))
		h.log.Warn("publish failed", "attempt", attempt, "err", msg)
		if attempt == 3 {
			return fmt.Errorf("publish failed:\n%s", tail(pub.output(), 30))
		}
	}
	for _, l := range pub.output() {
		if strings.HasPrefix(l, "published ") {
			r.publishLine = l
		}
	}
	h.log.Info("published", "took", r.publishWall.Round(time.Millisecond), "peak_rss_mib", r.publishPeak/1024)
	return nil
}

// apiLoaded waits for the API to serve the new snapshot and measures it.
func (h *harness) apiLoaded(ctx context.Context, r *report, api *proc, apiFrom int, apiAddr string) error {
	// The API answers lookups once the MMDBs are mapped ("snapshot
	// loaded"); the export table follows ("export table built"). A build
	// from before that split logs the rows with "snapshot loaded".
	m, _, err := h.waitLog(ctx, api, apiFrom, regexp.MustCompile(`"msg":"snapshot loaded".*"took":("[^"]*"|[0-9.e+-]+)`), 60*time.Minute)
	if err != nil {
		return err
	}
	r.apiLoad = parseDuration(m[1])
	if old := regexp.MustCompile(`"rows":(\d+)`).FindStringSubmatch(m[0]); old != nil {
		r.apiRows, _ = strconv.ParseInt(old[1], 10, 64)
		r.apiTable = r.apiLoad
	} else {
		m, _, err = h.waitLog(ctx, api, apiFrom, regexp.MustCompile(`"msg":"export table built".*"rows":(\d+).*"took":("[^"]*"|[0-9.e+-]+)`), 60*time.Minute)
		if err != nil {
			return err
		}
		r.apiRows, _ = strconv.ParseInt(m[1], 10, 64)
		r.apiTable = parseDuration(m[2])
	}
	time.Sleep(2 * time.Second)
	r.apiHeap = metricValue(ctx, "http://"+apiAddr+"/metrics", "go_memstats_heap_inuse_bytes")
	r.profiles = append(r.profiles, h.heapProfile(ctx, api, "loaded"))
	for _, p := range r.procs {
		p.mark("final")
		p.markHeap(ctx, "final")
	}
	return nil
}

// progress logs the stream, the consumer's pending count and every
// process's RSS every 15 s.
func (h *harness) progress(ctx context.Context, js jetstream.JetStream, procs []*proc, done chan struct{}) {
	t := time.NewTicker(15 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		args := []any{}
		if s, err := js.Stream(ctx, enrich.Stream); err == nil {
			args = append(args, "stream_msgs", s.CachedInfo().State.Msgs)
		}
		var pending uint64
		for _, name := range enrich.ConsumerNames() {
			if c, err := js.Consumer(ctx, enrich.Stream, name); err == nil {
				pending += c.CachedInfo().NumPending + uint64(c.CachedInfo().NumAckPending)
			}
		}
		args = append(args, "enrich_pending", pending)
		for _, p := range procs {
			p.sample()
			p.mu.Lock()
			args = append(args, p.name+"_rss_mib", p.last/1024)
			p.mu.Unlock()
		}
		h.log.Info("progress", args...)
	}
}

// generate writes n observations, one per address, one signal each.
func generate(ctx context.Context, w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	base := time.Now().UTC().Truncate(time.Hour).Add(-2 * time.Hour)
	for i := 0; i < n; i++ {
		if i%65536 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		var ip string
		if i%10 == 9 {
			ip = fmt.Sprintf("2a02:c7f:%x:%x::%x", i>>16&0xffff, i&0xffff, i%251+1)
		} else {
			a := uint32(0x0b000000) + uint32(i)*37 // from 11.0.0.0, spread over 22 /8s
			ip = fmt.Sprintf("%d.%d.%d.%d", a>>24, a>>16&0xff, a>>8&0xff, a&0xff)
		}
		at := base.Add(time.Duration(i%3600) * time.Second).Format(time.RFC3339)
		var err error
		switch i % 4 {
		case 0:
			_, err = fmt.Fprintf(bw, `{"v":1,"type":"service","ip":%q,"source":"scan-a","observed_at":%q,"service":{"port":443,"transport":"tcp","http":{"status":200,"title":"GlobalProtect Portal","cookies":[]}}}`+"\n", ip, at)
		case 1:
			_, err = fmt.Fprintf(bw, `{"v":2,"type":"flow","ip":%q,"source":"netflow","observed_at":%q,"flow":{"port":51820,"transport":"udp","protocol":"wireguard","packets":1200,"bytes":640000},"claims":[{"org_name":"Example Hosting AS64500","signal_confidence":0.6}]}`+"\n", ip, at)
		case 2:
			_, err = fmt.Fprintf(bw, `{"v":1,"type":"service","ip":%q,"source":"scan-b","observed_at":%q,"service":{"port":80,"transport":"tcp","http":{"status":200,"title":"Welcome to nginx!","cookies":[]}}}`+"\n", ip, at)
		default:
			_, err = fmt.Fprintf(bw, `{"v":2,"type":"flow","ip":%q,"source":"netflow","observed_at":%q,"flow":{"port":1194,"transport":"udp","protocol":"openvpn","packets":900,"bytes":420000}}`+"\n", ip, at)
		}
		if err != nil {
			return err
		}
	}
	return bw.Flush()
}

func streamRows(ctx context.Context, js jetstream.JetStream) []streamRow {
	var rows []streamRow
	l := js.ListStreams(ctx)
	for info := range l.Info() {
		sr := streamRow{name: info.Config.Name, msgs: info.State.Msgs, bytes: info.State.Bytes, subjects: int(info.State.NumSubjects)}
		if info.Cluster != nil {
			sr.replicas = append(sr.replicas, info.Cluster.Leader+"*")
			for _, p := range info.Cluster.Replicas {
				sr.replicas = append(sr.replicas, p.Name)
			}
		}
		rows = append(rows, sr)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].bytes > rows[j].bytes })
	return rows
}

// heapProfile saves the process's heap profile beside the report.
func (h *harness) heapProfile(ctx context.Context, p *proc, moment string) string {
	if p.pprof == "" {
		return ""
	}
	name := strings.NewReplacer(" ", "-", "(", "", ")", "").Replace(p.name)
	path := filepath.Join(filepath.Dir(h.st.report), fmt.Sprintf("scale-%s-%s.heap.pb.gz", name, moment))
	b, err := httpGet(ctx, "http://"+p.pprof+"/debug/pprof/heap?gc=1")
	if err != nil {
		h.log.Warn("heap profile", "process", p.name, "err", err)
		return ""
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		h.log.Warn("heap profile", "process", p.name, "err", err)
		return ""
	}
	return path
}

// pprofHeapInuse reads HeapInuse from the text heap profile's MemStats.
func pprofHeapInuse(ctx context.Context, addr string) int64 {
	b, err := httpGet(ctx, "http://"+addr+"/debug/pprof/heap?debug=1&gc=1")
	if err != nil {
		return 0
	}
	m := regexp.MustCompile(`# HeapInuse = (\d+)`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return v
}

func metricValue(ctx context.Context, url, name string) int64 {
	b, err := httpGet(ctx, url)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, name+" ") {
			v, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, name)), 64)
			return int64(v)
		}
	}
	return 0
}

func httpGet(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// parseDuration reads a logged duration: seconds as a number (the
// project's JSON logs) or a quoted Go duration.
func parseDuration(s string) time.Duration {
	if u, err := strconv.Unquote(s); err == nil {
		d, _ := time.ParseDuration(u)
		return d
	}
	sec, _ := strconv.ParseFloat(s, 64)
	return time.Duration(sec * float64(time.Second))
}

func firstMalformed(st ingest.Stats) string {
	if len(st.Malformed) == 0 {
		return ""
	}
	return fmt.Sprint(st.Malformed[0])
}

// diskUsage is the space the files under dir take on disk (du).
func diskUsage(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			} else {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func hostInfo() string {
	cpu := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				cpu = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		mem = fmt.Sprintf("%.0f GiB", float64(statusKiB(string(b), "MemTotal:"))/(1<<20))
	}
	load := ""
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return fmt.Sprintf("%d vCPU %s, %s, load average at start %s", runtime.NumCPU(), cpu, mem, load)
}

func mib(kib int64) string { return fmt.Sprintf("%s MiB", thousands(kib/1024)) }

func mibBytes(b int64) string { return fmt.Sprintf("%s MiB", thousands(b>>20)) }

func thousands(v int64) string {
	s := strconv.FormatInt(v, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []string
	for len(s) > 3 {
		out = append([]string{s[len(s)-3:]}, out...)
		s = s[:len(s)-3]
	}
	out = append([]string{s}, out...)
	r := strings.Join(out, ",")
	if neg {
		r = "-" + r
	}
	return r
}

func (r *report) markdown() string {
	var b strings.Builder
	mode := "one nats-server, R1"
	if r.st.mode == "cluster" {
		mode = "3-node nats-server cluster, R3"
		if r.st.replicas == 1 {
			mode = "3-node nats-server cluster, R1, node i tagged shard:i"
		}
	}
	fmt.Fprintf(&b, "## make scale: %s addresses, %s\n\n", thousands(int64(r.st.n)), mode)
	fmt.Fprintf(&b, "%s UTC; %s.\n", r.start.Format("2006-01-02 15:04"), r.host)
	if r.st.duplicates != "" {
		fmt.Fprintf(&b, "OBSERVATIONS dedupe window (duplicates): %s.\n", r.st.duplicates)
	}
	if r.shardsNote != "" {
		fmt.Fprintf(&b, "%s.\n", r.shardsNote)
	}
	if r.err != nil {
		fmt.Fprintf(&b, "\n**The run failed:** %s\n", strings.SplitN(r.err.Error(), "\n", 2)[0])
	}
	r.processTable(&b)
	r.figureTable(&b)
	return b.String()
}

// processTable writes each process's RSS and heap at the run's moments.
func (r *report) processTable(b *strings.Builder) {
	moments := []string{"enriched"}
	if r.st.settle > 0 {
		moments = append(moments, "settled")
	}
	moments = append(moments, "final")
	titles := map[string]string{"enriched": "after enrichment", "settled": "after " + r.st.settle.String() + " more", "final": "at the end"}
	b.WriteString("\n| process | peak RSS (VmHWM) |")
	for _, m := range moments {
		fmt.Fprintf(b, " RSS %s | live heap %s |", titles[m], titles[m])
	}
	b.WriteString(" RSS per address (end) |\n|---|---|")
	b.WriteString(strings.Repeat("---|---|", len(moments)) + "---|\n")
	totals := map[string]int64{}
	for _, p := range r.procs {
		p.mu.Lock()
		fmt.Fprintf(b, "| %s | %s |", p.name, mib(p.peak))
		for _, m := range moments {
			heap := ""
			if v := p.heap[m]; v > 0 {
				heap = mibBytes(v)
			}
			fmt.Fprintf(b, " %s | %s |", mib(p.at[m]), heap)
			totals[m] += p.at[m]
		}
		fmt.Fprintf(b, " %s |\n", perAddr(p.at["final"]*1024, r.st.n))
		p.mu.Unlock()
	}
	b.WriteString("| **all of the above** | |")
	for _, m := range moments {
		fmt.Fprintf(b, " %s | |", mib(totals[m]))
	}
	fmt.Fprintf(b, " %s |\n", perAddr(totals["final"]*1024, r.st.n))
	fmt.Fprintf(b, "| netintel publish | %s |%s |\n", mib(r.publishPeak), strings.Repeat(" |", 2*len(moments)))
}

// figureTable writes the run's figures, the streams and the profiles.
func (r *report) figureTable(b *strings.Builder) {
	b.WriteString("\n| figure | value |\n|---|---|\n")
	if r.enrichTime > 0 {
		fmt.Fprintf(b, "| observations ingested | %s (ingest done in %.1f s) |\n", thousands(int64(r.observ)), r.ingestTime.Seconds())
		if len(r.skipped) > 0 {
			fmt.Fprintf(b, "| observations skipped by the adapter | %v |\n", r.skipped)
		}
		fmt.Fprintf(b, "| enrich rate, end to end | %s observations/s (%.1f s to idle) |\n", thousands(int64(float64(r.observ)/r.enrichTime.Seconds())), r.enrichTime.Seconds())
	}
	if r.publishWall > 0 {
		fmt.Fprintf(b, "| publish wall time | %.1f s |\n| publish peak RSS | %s |\n", r.publishWall.Seconds(), mib(r.publishPeak))
	}
	for _, f := range r.publishFailures {
		fmt.Fprintf(b, "| publish failure | %s |\n", strings.ReplaceAll(f, "|", "/"))
	}
	if r.publishLine != "" {
		fmt.Fprintf(b, "| publish summary | %s |\n", r.publishLine)
	}
	if r.apiLoad > 0 {
		fmt.Fprintf(b, "| API snapshot load: answers lookups after | %.2f s |\n", r.apiLoad.Seconds())
		fmt.Fprintf(b, "| API export table built after | %.2f s (%s rows) |\n", r.apiTable.Seconds(), thousands(r.apiRows))
		fmt.Fprintf(b, "| API Go heap in use (go_memstats_heap_inuse_bytes) | %s |\n", mibBytes(r.apiHeap))
	}
	names := make([]string, 0, len(r.jsDisk))
	for k := range r.jsDisk {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(b, "| JetStream store on disk, %s | %s (%s per address) |\n", k, mibBytes(r.jsDisk[k]), perAddr(r.jsDisk[k], r.st.n))
	}
	if r.objDisk > 0 {
		fmt.Fprintf(b, "| object store on disk | %s |\n", mibBytes(r.objDisk))
	}
	if len(r.streams) > 0 {
		b.WriteString("\n| stream | messages | bytes | subjects | replicas (* leader) |\n|---|---|---|---|---|\n")
		for _, s := range r.streams {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", s.name, thousands(int64(s.msgs)), mibBytes(int64(s.bytes)), thousands(int64(s.subjects)), strings.Join(s.replicas, " "))
		}
	}
	var profs []string
	for _, p := range r.profiles {
		if p != "" {
			profs = append(profs, filepath.Base(p))
		}
	}
	if len(profs) > 0 {
		fmt.Fprintf(b, "\nHeap profiles: %s (`go tool pprof -top -sample_index=inuse_space FILE`).\n", strings.Join(profs, ", "))
	}
}

func perAddr(bytes int64, n int) string {
	if n == 0 || bytes == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f B", float64(bytes)/float64(n))
}
