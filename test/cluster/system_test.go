package cluster

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish"
)

const (
	internalKey = "cluster-test-internal-key"
	// hashKey is gateway.hash_key, which deploy/pipeline.cluster.yaml
	// requires from the environment.
	hashKey = "cluster-test-hash-key"
)

// TestCluster_SystemSurvivesNodeLoss runs every role as its own process on
// a 3-node R3 cluster and S3, ingests 100,000 observations, and kills the
// node leading OBSERVATIONS (SIGKILL, then restarts it), one enrich worker
// and one API process in the middle. Then: the state equals the input's,
// a snapshot publishes and both API processes would serve it, lookups kept
// being answered, a secret saved before the kill is read exactly as often
// as its views allow, and a probe run spanning the kill publishes every TLD
// once.
func TestCluster_SystemSurvivesNodeLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test")
	}
	t.Parallel()  // each test has a cluster of its own
	go buildBin() // while the cluster elects its leaders
	ctx := context.Background()
	c := startCluster(t, 3)
	s3 := testutil.StartS3(t)
	_, js := c.connect()
	dir := t.TempDir()

	rdap := startRDAP(t, 700*time.Millisecond)
	tlds := make([]string, 40)
	for i := range tlds {
		tlds[i] = fmt.Sprintf("zq%c%c", 'a'+i/26, 'a'+i%26)
	}
	cfgPath := writeClusterConfig(t, dir, c.URLs(), rdap, tlds)
	env := []string{
		"S3_ENDPOINT=" + s3.Endpoint, "S3_BUCKET=" + s3.Bucket, "S3_ACCESS_KEY=" + s3.AccessKey,
		"S3_SECRET_KEY=" + s3.SecretKey, "S3_REGION=us-east-1", "NETINTEL_INTERNAL_KEY=" + internalKey,
		"NETINTEL_GATEWAY_HASH_KEY=" + hashKey,
	}
	common := []string{"--config", cfgPath, "--nats", c.URLs()}
	// Flags first: Go's flag package stops at the first positional argument.
	roleArgs := func(cmd string, rest ...string) []string {
		return append(append([]string{cmd}, common...), rest...)
	}

	apis := []*role{
		startRoleEnv(t, "api-1", env, true, roleArgs("api", "--listen", "127.0.0.1:0")...),
		startRoleEnv(t, "api-2", env, true, roleArgs("api", "--listen", "127.0.0.1:0")...),
	}
	enrichers := []*role{
		startRoleEnv(t, "enrich-1", env, false, roleArgs("worker", "enrich")...),
		startRoleEnv(t, "enrich-2", env, false, roleArgs("worker", "enrich")...),
	}
	schedulers := []*role{
		startRoleEnv(t, "scheduler-1", env, false, roleArgs("scheduler")...),
		startRoleEnv(t, "scheduler-2", env, false, roleArgs("scheduler")...),
	}
	for _, n := range []string{"probe-1", "probe-2"} {
		startRoleEnv(t, n, env, false, roleArgs("worker", "probe")...)
	}
	store, err := objstore.NewS3(ctx, s3.Config().S3)
	if err != nil {
		t.Fatal(err)
	}

	// A first, small ingest and its snapshot, so lookups have something to
	// answer before the failover.
	base := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	first := writeObservations(t, filepath.Join(dir, "first.ndjson"), 0, 100, base)
	runCLI(t, env, roleArgs("ingest", "--format", "observations", first)...)
	firstManifest := waitSnapshot(t, store, 100, time.Time{}, 120*time.Second)
	t.Logf("first snapshot %s with %d hosts", firstManifest.Key, firstManifest.Hosts)

	// Both API processes in service (/ready 200, a load balancer's health
	// check) before clients use them: an API role answers 503 until its
	// products are set up, which waits out a cluster still electing.
	for _, a := range apis {
		waitReady(t, a.addr)
	}

	// Lookups through the whole failover, each retried once at the other
	// API process as a client behind a load balancer would.
	lk := startLookups(t, apis, "198.18.0.1")

	// A secret saved before the kill.
	secretID, token := saveSecret(t, apis[0].addr, 3)

	// A probe run in progress when the node dies.
	probeDone := make(chan error, 1)
	go func() {
		probeDone <- runCLIErr(env, roleArgs("probe", "--timeout", "5m")...)
	}()

	// The big ingest: 25,000 addresses, 4 observations each.
	const hosts, perHost = 25_000, 4
	big := writeObservations(t, filepath.Join(dir, "big.ndjson"), 0, hosts, base)
	ingestDone := make(chan error, 1)
	go func() {
		ingestDone <- runCLIErr(env, roleArgs("ingest", "--format", "observations", big)...)
	}()

	// Kill the node leading OBSERVATIONS once the ingest is under way.
	leader := c.leaderOf(js, "OBSERVATIONS")
	waitStreamAtLeast(t, js, 20_000)
	t.Logf("kill -9 %s (OBSERVATIONS leader)", c.nodes[leader].name)
	c.kill(leader)
	enrichers[0].kill()
	apis[0].kill()
	time.Sleep(3 * time.Second)
	c.start(leader)
	t.Logf("%s restarted", c.nodes[leader].name)

	if err := <-ingestDone; err != nil {
		t.Fatalf("ingest: %v", err)
	}
	t.Log("ingest done")
	// Exactly the input in the stream: 100,000 observations, each once (the
	// first ingest's 400 are the same observations again: duplicates).
	waitStreamExactly(t, js, hosts*perHost)

	// Every observation applied: the enrich consumer has nothing pending.
	ictx, icancel := context.WithTimeout(context.Background(), 4*time.Minute)
	if err := enrich.WaitIdle(ictx, js); err != nil {
		t.Fatal(err)
	}
	icancel()
	idleAt := time.Now()
	t.Log("enrich idle")

	// A snapshot with every address, built (by whichever scheduler won the
	// tick) after the last observation was applied: one built earlier holds
	// every address but not yet all of their observations.
	final := waitSnapshot(t, store, hosts, idleAt, 4*time.Minute)
	checkSnapshotState(t, store, final, hosts, base)
	t.Logf("snapshot %s checked", final.Key)

	// The surviving API process serves the new snapshot.
	waitLookup(t, apis[1].addr, fmt.Sprintf("198.18.%d.%d", (hosts-1)/250, (hosts-1)%250+1), ipmodel.FormatTime(base.Add(3*time.Minute)))

	lk.stop()
	t.Logf("lookups: %d answered, %d retried at the other process, %d failed at both; longest failing stretch %s",
		lk.ok.Load(), lk.retried.Load(), lk.failed.Load(), lk.longest())
	if lk.longest() > 5*time.Second {
		t.Errorf("lookups failed for %s in a row, want <= 5s", lk.longest())
	}

	// The secret: exactly 3 reads, then no message.
	for i := 1; i <= 4; i++ {
		status := readSecret(t, apis[1].addr, secretID, token)
		want := "ok"
		if i == 4 {
			want = "no message"
		}
		if status != want {
			t.Fatalf("read %d of a 3-view secret = %q, want %q", i, status, want)
		}
	}

	// The probe run spanning the kill: every TLD once.
	if err := <-probeDone; err != nil {
		t.Fatalf("probe run: %v", err)
	}
	checkProbeResults(t, apis[1].addr, tlds)

	// Each scheduled tick ran once across both schedulers.
	checkTicksOnce(t, schedulers)
}

func startRoleEnv(t testing.TB, name string, env []string, waitListen bool, args ...string) *role {
	t.Helper()
	r := &role{name: name, args: args, env: env}
	r.start(t, waitListen)
	t.Cleanup(func() {
		r.kill()
		if t.Failed() {
			t.Logf("---- %s output (tail) ----\n%s", name, tail(r.output(), 40))
		}
	})
	return r
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// runCLIErr runs one CLI command; it is killed after 6 minutes so a hang
// fails the test instead of the whole package timing out.
func runCLIErr(env []string, args ...string) error {
	cmd := execCommand(args...)
	timer := time.AfterFunc(6*time.Minute, func() {
		if cmd.Process != nil {
			_ = cmd.Process.Signal(syscall.SIGQUIT) // Go prints every goroutine's stack
		}
	})
	defer timer.Stop()
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("netintel %s: %v\n%s", args[0], err, tail(string(out), 20))
	}
	return nil
}

func runCLI(t *testing.T, env []string, args ...string) {
	t.Helper()
	if err := runCLIErr(env, args...); err != nil {
		t.Fatal(err)
	}
}

// writeClusterConfig derives the test config from deploy/pipeline.cluster.yaml:
// the same streams and buckets at R3, S3 without TLS, schedules tight enough
// for a test, and a probe pointed at a loopback RDAP world.
func writeClusterConfig(t testing.TB, dir, urls, rdap string, tlds []string) string {
	t.Helper()
	b, err := os.ReadFile("../../deploy/pipeline.cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	// The production sources and catalogs are public URLs: the test has
	// no internet, so it drops them and names local samples below.
	s = regexp.MustCompile(`(?m)^(ingest|enrich):\n(?:[ #].*\n|\n)*`).ReplaceAllString(s, "")
	s = regexp.MustCompile(`(?m)^  urls: .*$`).ReplaceAllString(s, "  urls: ["+quoteList(strings.Split(urls, ","))+"]")
	s = regexp.MustCompile(`(?m)^  creds_file: .*$`).ReplaceAllString(s, "")
	s = strings.Replace(s, "    tls: true", "    tls: false", 1)
	// A snapshot every 10s: the test waits for two (each after its ingest);
	// more often, builds of a half-ingested state would compete with the
	// ingest for the CPU.
	s = regexp.MustCompile(`(?m)^  snapshot: .*$`).ReplaceAllString(s, `  snapshot: "@every 10s"`)
	// The observations a killed enrich worker held come back after the
	// consumer's ack wait: 30s in production, 10s here.
	ackWait := regexp.MustCompile(`(name: enrich,[^}\n]*ack_wait: )\w+`)
	if !ackWait.MatchString(s) {
		t.Fatal("deploy/pipeline.cluster.yaml: no ack_wait on the enrich consumer")
	}
	s = ackWait.ReplaceAllString(s, "${1}10s")
	s = regexp.MustCompile(`(?m)^  tld_probe: .*$`).ReplaceAllString(s, `  tld_probe: "off"`)
	root, _ := filepath.Abs("../..")
	tldFile := filepath.Join(dir, "tlds.txt")
	bootstrap := filepath.Join(dir, "dns.json")
	if err := os.WriteFile(tldFile, []byte("# Version 2026112300\n"+strings.ToUpper(strings.Join(tlds, "\n"))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bs, _ := json.Marshal(map[string]any{"version": "1.0", "publication": "2026-11-23T00:00:00Z", "services": [][][]string{{tlds, {rdap + "/"}}}})
	if err := os.WriteFile(bootstrap, bs, 0o600); err != nil {
		t.Fatal(err)
	}
	s += fmt.Sprintf(`
enrich:
  catalog:
    nvd: [%[1]s/samples/cve/nvd]
    kev: %[1]s/samples/cve/kev.json
    epss: %[1]s/samples/cve/epss.csv
    eol: %[1]s/samples/cve/eol.yaml
    endoflife: [%[1]s/samples/cve/endoflife]
    euvd: [%[1]s/samples/cve/euvd.json]
    jvn: [%[1]s/samples/cve/jvn.rdf]
probe:
  tld_list: %[2]s
  rdap_bootstrap: %[3]s
  whois_discovery: ""
  whois_fallback: ""
  stealth: {enabled: false}
  timeout: 5s
  concurrency: 8
  per_host: 2
  rate: 0
  lock_ttl: 5s
  stall_timeout: 20s
  poll: 1s
`, root, tldFile, bootstrap)
	p := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func quoteList(xs []string) string {
	for i, x := range xs {
		xs[i] = `"` + x + `"`
	}
	return strings.Join(xs, ", ")
}

// writeObservations writes perHost=4 service observations for each of n
// addresses 198.18.x.y starting at index from: two sources, minutes 0..3.
func writeObservations(t testing.TB, path string, from, n int, base time.Time) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := from; i < from+n; i++ {
		ip := fmt.Sprintf("198.18.%d.%d", i/250, i%250+1)
		for k := 0; k < 4; k++ {
			src := []string{"scan-a", "scan-b"}[k%2]
			fmt.Fprintf(w, `{"v":1,"type":"service","ip":%q,"source":%q,"observed_at":%q,"service":{"port":443,"transport":"tcp","http":{"status":200,"title":"GlobalProtect Portal","cookies":[]}}}`+"\n",
				ip, src, ipmodel.FormatTime(base.Add(time.Duration(k)*time.Minute)))
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

func streamMsgs(js jetstream.JetStream, name string) (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, name)
	if err != nil {
		return 0, err
	}
	return st.CachedInfo().State.Msgs, nil
}

func waitStreamAtLeast(t *testing.T, js jetstream.JetStream, n uint64) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if got, err := streamMsgs(js, "OBSERVATIONS"); err == nil && got >= n {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("OBSERVATIONS never reached %d messages", n)
}

func waitStreamExactly(t *testing.T, js jetstream.JetStream, n uint64) {
	t.Helper()
	var got uint64
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var err error
		if got, err = streamMsgs(js, "OBSERVATIONS"); err == nil && got == n {
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("OBSERVATIONS holds %d messages, want exactly %d (none lost, none doubled)", got, n)
}

// waitSnapshot waits until the latest snapshot holds at least hosts hosts.
// waitSnapshot waits for a latest snapshot with at least hosts addresses
// whose build started in a later second than builtAfter (zero: any).
func waitSnapshot(t *testing.T, store objstore.Store, hosts int64, builtAfter time.Time, d time.Duration) *publish.Manifest {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		m, err := publish.Latest(context.Background(), store)
		if err == nil && m.Hosts >= hosts {
			bt, perr := time.Parse(time.RFC3339, m.BuildTime)
			if builtAfter.IsZero() || perr == nil && bt.After(builtAfter.Truncate(time.Second)) {
				return m
			}
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("no snapshot with %d hosts built after %s within %s", hosts, builtAfter.Format(time.RFC3339), d)
	return nil
}

// checkSnapshotState reads the snapshot's NDJSON and compares every record
// of the big ingest with what the input implies.
func checkSnapshotState(t *testing.T, store objstore.Store, m *publish.Manifest, hosts int, base time.Time) {
	t.Helper()
	var f *publish.File
	for i := range m.Files {
		if m.Files[i].Format == "ndjson" {
			f = &m.Files[i]
		}
	}
	if f == nil {
		t.Fatalf("manifest has no ndjson file: %+v", m.Files)
	}
	var buf bytes.Buffer
	if err := publish.Download(context.Background(), store, *f, &buf); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	wantFirst, wantLast := ipmodel.FormatTime(base), ipmodel.FormatTime(base.Add(3*time.Minute))
	bad := 0
	for sc.Scan() {
		var r ipmodel.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.IP, "198.18.") {
			continue
		}
		if seen[r.IP] {
			t.Fatalf("%s twice in the snapshot", r.IP)
		}
		seen[r.IP] = true
		if len(r.Assets) != 1 || r.Assets[0].Port != 443 || r.Assets[0].FirstSeen != wantFirst || r.Assets[0].LastSeen != wantLast ||
			strings.Join(r.Assets[0].EvidenceSources, ",") != "scan-a,scan-b" {
			if bad++; bad <= 3 {
				t.Errorf("%s: assets %+v, want one on 443 seen %s..%s by scan-a,scan-b", r.IP, r.Assets, wantFirst, wantLast)
			}
		}
	}
	if len(seen) != hosts {
		t.Fatalf("snapshot has %d of the %d ingested addresses", len(seen), hosts)
	}
	if bad > 0 {
		t.Fatalf("%d addresses differ from the input", bad)
	}
}

func apiGet(addr, path string) (int, []byte, error) {
	req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
	req.Header.Set("X-Internal-Key", internalKey)
	req.Header.Set("X-Tier", "enterprise")
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func waitReady(t *testing.T, addr string) {
	t.Helper()
	var body []byte
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		code, b, err := apiGet(addr, "/ready")
		if err == nil && code == 200 {
			return
		}
		body = b
	}
	t.Fatalf("%s never ready: %s", addr, body)
}

func waitLookup(t *testing.T, addr, ip, wantLast string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var body []byte
	for time.Now().Before(deadline) {
		code, b, err := apiGet(addr, "/api/v1/shadow_vpn/lookup/"+ip)
		body = b
		if err == nil && code == 200 && bytes.Contains(b, []byte(`"last_seen":"`+wantLast+`"`)) {
			return
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("%s never served %s with last_seen %s: %s", addr, ip, wantLast, body)
}

type lookups struct {
	ok, retried, failed atomic.Int64
	mu                  sync.Mutex
	failStart           time.Time
	maxStretch          time.Duration
	done                chan struct{}
	wg                  sync.WaitGroup
}

func startLookups(t *testing.T, apis []*role, ip string) *lookups {
	l := &lookups{done: make(chan struct{})}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for i := 0; ; i++ {
			select {
			case <-l.done:
				return
			default:
			}
			a, b := apis[i%2], apis[(i+1)%2]
			okAt := func(r *role) bool {
				code, _, err := apiGet(r.addr, "/api/v1/shadow_vpn/lookup/"+ip)
				return err == nil && code == 200
			}
			now := time.Now()
			switch {
			case okAt(a):
				l.ok.Add(1)
				l.endStretch(now)
			case okAt(b):
				l.ok.Add(1)
				l.retried.Add(1)
				l.endStretch(now)
			default:
				l.failed.Add(1)
				l.mu.Lock()
				if l.failStart.IsZero() {
					l.failStart = now
				}
				l.mu.Unlock()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return l
}

func (l *lookups) endStretch(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.failStart.IsZero() {
		l.maxStretch = max(l.maxStretch, now.Sub(l.failStart))
		l.failStart = time.Time{}
	}
}

func (l *lookups) stop() {
	close(l.done)
	l.wg.Wait()
	l.endStretch(time.Now())
}

func (l *lookups) longest() time.Duration { l.mu.Lock(); defer l.mu.Unlock(); return l.maxStretch }

func post(t *testing.T, addr, path string, body any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post("http://"+addr+path+"?src=clustertest", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// saveSecret stores an opaque ciphertext with a random read token.
func saveSecret(t *testing.T, addr string, views int) (id, token string) {
	t.Helper()
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	token = hex.EncodeToString(raw)
	sum := sha256.Sum256([]byte(token))
	out := post(t, addr, "/api/saveSecret", map[string]any{
		"secretMessage": "AAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB", "readTokenHash": hex.EncodeToString(sum[:]),
		"v": 3, "views": views, "duration": 3600,
	})
	if out["status"] != "ok" {
		t.Fatalf("saveSecret: %v", out)
	}
	return out["newId"].(string), token
}

func readSecret(t *testing.T, addr, id, token string) string {
	t.Helper()
	for attempt := 0; attempt < 20; attempt++ {
		out := post(t, addr, "/api/get", map[string]any{"id": id, "hashedKey": token})
		if out["status"] != "retry" {
			return fmt.Sprint(out["status"])
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "retry"
}

// startRDAP is a loopback RDAP server that answers any domain query with
// RDAP JSON after a delay, so a probe run lasts long enough to span a kill.
func startRDAP(t *testing.T, delay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		name := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		w.Header().Set("Content-Type", "application/rdap+json")
		fmt.Fprintf(w, `{"rdapConformance":["rdap_level_0"],"objectClassName":"domain","ldhName":%q}`, name)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func checkProbeResults(t *testing.T, addr string, tlds []string) {
	t.Helper()
	code, b, err := apiGet(addr, "/api/results")
	if err != nil || code != 200 {
		t.Fatalf("/api/results = %d %v", code, err)
	}
	var res struct {
		Results []struct {
			TLD         string `json:"tld"`
			RDAPWorking *bool  `json:"rdap_working"`
		} `json:"results"`
		TotalTLDs int `json:"total_tlds"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, r := range res.Results {
		count[r.TLD]++
		if r.RDAPWorking == nil || !*r.RDAPWorking {
			t.Errorf("%s: rdap_working = %v, want true", r.TLD, r.RDAPWorking)
		}
	}
	for _, tld := range tlds {
		if count[tld] != 1 {
			t.Errorf("TLD %s in results %d times, want once", tld, count[tld])
		}
	}
	if res.TotalTLDs != len(tlds) || len(res.Results) != len(tlds) {
		t.Fatalf("results: total_tlds %d, %d rows; want %d", res.TotalTLDs, len(res.Results), len(tlds))
	}
}

var startedRe = regexp.MustCompile(`"msg":"job started".*"job":"([^"]+)".*"tick":"([^"]+)"`)

// checkTicksOnce reads both schedulers' logs: no job tick started twice.
func checkTicksOnce(t *testing.T, schedulers []*role) {
	t.Helper()
	seen := map[string]string{}
	total := 0
	for _, s := range schedulers {
		for _, line := range strings.Split(s.output(), "\n") {
			m := startedRe.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			total++
			k := m[1] + "@" + m[2]
			if other, dup := seen[k]; dup {
				t.Errorf("tick %s started by %s and %s", k, other, s.name)
			}
			seen[k] = s.name
		}
	}
	if total == 0 {
		t.Fatal("no scheduled job started at all")
	}
	t.Logf("%d job ticks across 2 schedulers, each started once", total)
}
