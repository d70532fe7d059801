package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/testutil"
)

// testVersion is the version binPath is stamped with at link time.
const testVersion = "v9.8.7-test"

var (
	binPath string
	// testConfig is pipeline.yaml with the sample paths made absolute and
	// the TLD probe off, so that no test reaches beyond loopback.
	testConfig string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "netintel-bin-")
	if err != nil {
		panic(err)
	}
	binPath = filepath.Join(dir, "netintel")
	// Stamped as `make build` stamps it (TestCLI_Version reads it back):
	// one link serves every test.
	out, err := exec.Command("go", "build", "-ldflags", "-X github.com/netintel/netintel/internal/buildinfo.version="+testVersion, "-o", binPath, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build netintel: %v\n%s", err, out)
		os.Exit(1)
	}
	if testConfig, err = writeTestConfig(dir); err != nil {
		fmt.Fprintf(os.Stderr, "test config: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func writeTestConfig(dir string) (string, error) {
	b, err := os.ReadFile("../../pipeline.yaml")
	if err != nil {
		return "", err
	}
	root, _ := filepath.Abs("../..")
	s := strings.ReplaceAll(string(b), "path: samples/", "path: "+root+"/samples/")
	s = strings.ReplaceAll(s, "samples/cve/", root+"/samples/cve/")
	s = strings.ReplaceAll(s, "asn: [samples/", "asn: ["+root+"/samples/")
	s = regexp.MustCompile(`(?m)^  tld_probe: .*$`).ReplaceAllString(s, `  tld_probe: "off"`)
	if !strings.Contains(s, `tld_probe: "off"`) {
		return "", fmt.Errorf("no tld_probe schedule in pipeline.yaml")
	}
	p := filepath.Join(dir, "pipeline.test.yaml")
	return p, os.WriteFile(p, []byte(s), 0o600)
}

// runArgs is `run` with the test config and a fresh data dir unless given.
func runArgs(dataDir string, extra ...string) []string {
	return append([]string{"run", "--config", testConfig, "--data-dir", dataDir, "--listen", "127.0.0.1:0"}, extra...)
}

// proc is a running netintel process.
type proc struct {
	cmd    *exec.Cmd
	addr   string
	mu     sync.Mutex
	stderr bytes.Buffer
	stdout bytes.Buffer
	done   chan error
}

var listenRe = regexp.MustCompile(`listening on http://(\S+)`)

// startProc runs the binary and waits for it to print its address.
func startProc(t *testing.T, args ...string) *proc {
	t.Helper()
	return startProcDir(t, "", args...)
}

// startProcDir is startProc in the working folder dir ("" = this one).
func startProcDir(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(binPath, args...), done: make(chan error, 1)}
	p.cmd.Dir = dir
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, _ := p.cmd.StdoutPipe()
	p.cmd.Stderr = &lockedWriter{mu: &p.mu, w: &p.stderr}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.stdout.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if m := listenRe.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addrc <- m[1]:
				default:
				}
			}
		}
	}()
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	select {
	case p.addr = <-addrc:
	case err := <-p.done:
		t.Fatalf("netintel exited early: %v\n%s", err, p.logs())
	case <-time.After(60 * time.Second):
		t.Fatalf("netintel did not listen within 60s\n%s", p.logs())
	}
	return p
}

// waitReady waits until each process's /ready answers 200, failing the
// test if one does not within the given time.
func waitReady(t *testing.T, within time.Duration, procs ...*proc) {
	t.Helper()
	for _, p := range procs {
		deadline := time.Now().Add(within)
		for {
			code, body := get(t, "http://"+p.addr+"/ready")
			if code == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s /ready = %d %s after %s\n%s", p.addr, code, body, within, p.logs())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func (p *proc) logs() string { p.mu.Lock(); defer p.mu.Unlock(); return p.stderr.String() }

func (p *proc) out() string { p.mu.Lock(); defer p.mu.Unlock(); return p.stdout.String() }

// stop sends sig and returns the exit error and how long the process took.
func (p *proc) stop(t *testing.T, sig os.Signal) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	_ = p.cmd.Process.Signal(sig)
	select {
	case err := <-p.done:
		return time.Since(start), err
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit 30s after %v\n%s", sig, p.logs())
	}
	return 0, nil
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestRun_ReadyThenCleanStop(t *testing.T) {
	t.Parallel()
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		t.Run(sig.String(), func(t *testing.T) {
			p := startProc(t, runArgs(t.TempDir())...)
			if code, body := get(t, "http://"+p.addr+"/ready"); code != 200 {
				t.Fatalf("/ready = %d %s", code, body)
			}
			if code, _ := get(t, "http://"+p.addr+"/health"); code != 200 {
				t.Fatalf("/health = %d", code)
			}
			if code, body := get(t, "http://"+p.addr+"/metrics"); code != 200 || !strings.Contains(body, "netintel_http_requests_total") {
				t.Fatalf("/metrics = %d, no request counter", code)
			}
			took, err := p.stop(t, sig)
			if err != nil {
				t.Fatalf("exit after %v: %v\n%s", sig, err, p.logs())
			}
			if took > 15*time.Second {
				t.Fatalf("stop took %s, want < 15s", took)
			}
		})
	}
}

func TestRun_SameDataDirRefusedOtherDirSideBySide(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := startProc(t, runArgs(dir)...)
	out, err := exec.Command(binPath, runArgs(dir)...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "in use by another netintel process") {
		t.Fatalf("second run on same dir: err=%v out=%s", err, out)
	}
	b := startProc(t, runArgs(t.TempDir())...)
	for _, p := range []*proc{a, b} {
		if code, _ := get(t, "http://"+p.addr+"/ready"); code != 200 {
			t.Fatalf("%s /ready = %d", p.addr, code)
		}
	}
}

func TestRun_RestartReusesData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startProc(t, runArgs(dir)...)
	u, err := bus.URLFromDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(u)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := nc.JetStream()
	if _, err := js.Publish("events.test.marker", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	if _, err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	startProc(t, runArgs(dir)...)
	u, _ = bus.URLFromDataDir(dir)
	nc, err = nats.Connect(u)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ = nc.JetStream()
	m, err := js.GetLastMsg("EVENTS", "events.test.marker")
	if err != nil || string(m.Data) != "kept" {
		t.Fatalf("message from before the restart: %v %v", m, err)
	}
}

// oneLineFailure runs the binary expecting exit 1 with a clear message.
func oneLineFailure(t *testing.T, want string, secret string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	out, err := cmd.CombinedOutput()
	// 1 for a failure, 2 for a command line that cannot run as written.
	ee, ok := err.(*exec.ExitError)
	if !ok || (ee.ExitCode() != 1 && ee.ExitCode() != 2) {
		t.Fatalf("exit = %v, want 1 or 2\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, want) {
		t.Fatalf("output does not say %q:\n%s", want, s)
	}
	for _, bad := range []string{"panic", "goroutine "} {
		if strings.Contains(s, bad) {
			t.Fatalf("output has %q:\n%s", bad, s)
		}
	}
	if secret != "" && strings.Contains(s, secret) {
		t.Fatalf("output leaks the secret:\n%s", s)
	}
}

func TestBadInput_ClearOneLineErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("broken yaml", func(t *testing.T) {
		oneLineFailure(t, "nats.embeded (line 2): unknown key", "", "run", "--config", write("b.yaml", "nats:\n  embeded: {}\n"), "--data-dir", t.TempDir())
	})
	t.Run("validate names the key, with --config or as the argument", func(t *testing.T) {
		bad := write("v.yaml", "api:\n  listen: nohostport\n")
		oneLineFailure(t, "api.listen", "", "validate", "--config", bad)
		oneLineFailure(t, "api.listen", "", "validate", bad)
		oneLineFailure(t, "give one file", "", "validate", bad, bad)
	})
	t.Run("validate and run refuse every bad config fixture alike", func(t *testing.T) {
		files, _ := filepath.Glob("../../internal/config/testdata/*.bad.yml")
		if len(files) < 5 {
			t.Fatalf("found %d bad fixtures", len(files))
		}
		for _, f := range files {
			out, err := exec.Command(binPath, "validate", f).CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Fatalf("validate %s: exit %v\n%s", f, err, out)
			}
			first, _, _ := strings.Cut(string(out), "\n")
			oneLineFailure(t, first, "", "run", "--config", f, "--data-dir", t.TempDir())
		}
	})
	t.Run("an unknown source class stops validate and run, naming the key", func(t *testing.T) {
		cfg := write("c.yaml", "ingest:\n  sources:\n    - {name: a, format: tor-exits, path: a}\n    - {name: b, format: tor-exits, path: b}\n    - {name: c, format: tor-exits, path: c}\n    - {name: sightings, format: observations, path: s, class: residental}\n")
		want := `ingest.sources[3].class: must be one of standard, residential, netflow, got "residental"`
		oneLineFailure(t, want, "", "validate", cfg)
		oneLineFailure(t, want, "", "run", "--config", cfg, "--data-dir", t.TempDir())
	})
	t.Run("a bad rules file stops validate and run, naming file, rule and field", func(t *testing.T) {
		rules := write("rules.yaml", "version: 2\nrules:\n  - {id: acme, vendor: A, product: G, protocol_family: f, match: {header.server: '(unclosed'}}\n")
		cfg := write("r.yaml", "enrich:\n  rules: "+rules+"\n")
		want := "enrich.rules: " + rules + ": rule acme: match.header.server: error parsing regexp"
		oneLineFailure(t, want, "", "validate", cfg)
		oneLineFailure(t, want, "", "run", "--config", cfg, "--data-dir", t.TempDir())
	})
	t.Run("unreachable nats", func(t *testing.T) {
		port, _ := bus.FreePort()
		cfg := write("n.yaml", "nats:\n  embedded: {enabled: false}\n  urls: [\"nats://u:natspw-secret@127.0.0.1:"+fmt.Sprint(port)+"\"]\n  connect_wait: 1s\n  connect_timeout: 200ms\n")
		oneLineFailure(t, "connect to nats", "natspw-secret", "api", "--config", cfg)
	})
	srv := testutil.StartS3(t)
	n := testutil.StartNATS(t)
	s3cfg := func(secret, bucket string) string {
		return write("s3-"+bucket+".yaml", fmt.Sprintf("object_store:\n  type: s3\n  s3:\n    endpoint: %s\n    bucket: %s\n    access_key: %s\n    secret_key: %s\n", srv.Endpoint, bucket, srv.AccessKey, secret))
	}
	t.Run("wrong s3 credential", func(t *testing.T) {
		oneLineFailure(t, "credentials refused", "wrong-s3-secret", "api", "--config", s3cfg("wrong-s3-secret", srv.Bucket), "--nats", n.URL)
	})
	t.Run("missing bucket", func(t *testing.T) {
		oneLineFailure(t, `bucket "absent-bucket" does not exist`, srv.SecretKey, "api", "--config", s3cfg(srv.SecretKey, "absent-bucket"), "--nats", n.URL)
	})
}

func TestAPI_WaitsForNATSWithReady503(t *testing.T) {
	t.Parallel()
	port, _ := bus.FreePort()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("nats:\n  embedded: {enabled: false}\n  urls: [\"nats://127.0.0.1:%d\"]\nobject_store:\n  file: {dir: %q}\n", port, filepath.Join(dir, "objects"))), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "api", "--config", cfg, "--listen", "127.0.0.1:0")
	code, body := get(t, "http://"+p.addr+"/ready")
	if code != 503 || !strings.Contains(body, "connecting to NATS") {
		t.Fatalf("/ready while NATS is down = %d %s", code, body)
	}
	if code, _ := get(t, "http://"+p.addr+"/health"); code != 200 {
		t.Fatalf("/health while NATS is down = %d", code)
	}
	// The server starts only once the process has said it is waiting:
	// /ready can answer 503 before the first connect attempt has failed,
	// and a server started in that gap is reached at the first try.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(p.logs(), "nats unreachable, retrying"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line about the wait:\n%s", p.logs())
		}
	}
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	waitReady(t, 30*time.Second, p)
}

// TestRun_BootstrapServesLookupThroughGateway is what a newcomer sees after
// `make run` on a fresh data dir: the bundled samples are ingested, enriched
// and published, and a lookup with the printed dev key answers through the
// gateway.
func TestRun_BootstrapServesLookupThroughGateway(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startProc(t, runArgs(dir)...)
	deadline := time.Now().Add(120 * time.Second)
	key := waitDevKey(t, p, dir)
	var code int
	var body string
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest("GET", "http://"+p.addr+"/api/v1/vpn/ip/203.0.113.10?include=cves", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		code, body = resp.StatusCode, string(b)
		if code == 200 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if code != 200 || !strings.Contains(body, `"ip":"203.0.113.10"`) || !strings.Contains(body, `"vendor":"Fortinet"`) {
		t.Fatalf("lookup after bootstrap = %d %s\n%s", code, body, p.logs())
	}
	// The README's first example, a Tor exit with no asset: the
	// single-IP route answers its classification (issue 30), and the
	// asset lookup keeps its 404.
	for _, c := range []struct {
		path string
		code int
		want string
	}{{"/api/v1/vpn/ip/185.220.101.4", 200, `"classifications":["tor"]`}, {"/api/v1/vpn/shadow_vpn/lookup/185.220.101.4", 404, `"not_found"`}} {
		req, _ := http.NewRequest("GET", "http://"+p.addr+c.path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || !strings.Contains(string(b), c.want) {
			t.Errorf("%s = %d %s, want %d with %s", c.path, resp.StatusCode, b, c.code, c.want)
		}
	}
	// CVE findings, computed from the bundled catalog when the snapshot
	// read the state.
	if !strings.Contains(body, `"cve_id":"CVE-`) || !strings.Contains(body, `"kev_added_at":"`) {
		t.Errorf("lookup after bootstrap has no CVE findings from the catalog: %s", body)
	}
	// The printed examples name the address the process listens on (it was
	// started with port 0), and the public one answers.
	var urls []string
	for time.Now().Before(deadline) {
		// Two blocks, in either order: the bootstrap's and the IP API's.
		if out := p.out(); strings.Contains(out, "Try it") && strings.Contains(out, "openapi.json") {
			urls = regexp.MustCompile(`http://[^\s'/]+`).FindAllString(out, -1)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(urls) < 6 {
		t.Fatalf("no examples printed:\n%s", p.out())
	}
	for _, u := range urls {
		if u != "http://"+p.addr {
			t.Fatalf("example names %s, the process listens on %s:\n%s", u, p.addr, p.out())
		}
	}
	if code, body := get(t, "http://"+p.addr+"/public/v1/lookup/185.220.101.4"); code != 200 {
		t.Fatalf("printed public example = %d %s", code, body)
	}
	if strings.Contains(p.logs(), key) {
		t.Fatal("the dev key appears in the logs")
	}
	// Issue 31 item 7: the shipped config's internal key opened the
	// backend on the shared listener. Now the data folder has its own
	// random key (0600), which never reaches the logs or the output.
	req, _ := http.NewRequest("GET", "http://"+p.addr+"/api/v1/shadow_vpn/lookup/203.0.113.10", nil)
	req.Header.Set("X-Internal-Key", "dev-internal-key-change-me")
	req.Header.Set("X-Tier", "enterprise")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the published internal key on the shared listener: %d, want 401", resp.StatusCode)
	}
	fi, err := os.Stat(filepath.Join(dir, "internal-key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("data folder's internal key: %v, mode %v", err, fi.Mode().Perm())
	}
	ik, _ := os.ReadFile(filepath.Join(dir, "internal-key"))
	if k := strings.TrimSpace(string(ik)); len(k) != 64 || strings.Contains(p.logs(), k) || strings.Contains(p.out(), k) {
		t.Fatalf("internal key: %d characters, or it was printed", len(k))
	}
}

// Issue 31 item 7: a role listening beyond loopback with a published key
// refuses to start, naming the key (before it listens or reaches NATS).
func TestRoles_RefuseDevKeysBeyondLoopback(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := filepath.Join(dir, "old.yaml")
	if err := os.WriteFile(old, []byte("api:\n  internal_key: dev-internal-key-change-me\ngateway:\n  hash_key: an-own-hash-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("api with the old shipped internal key", func(t *testing.T) {
		oneLineFailure(t, "api.internal_key: the published development value, and this role listens beyond loopback on 0.0.0.0:0",
			"dev-internal-key-change-me", "api", "--config", old, "--nats", "nats://127.0.0.1:1", "--listen", "0.0.0.0:0")
	})
	t.Run("run with the shipped hash key", func(t *testing.T) {
		oneLineFailure(t, "gateway.hash_key", "dev-gateway-hash-key-change-me", runArgs(t.TempDir(), "--listen", "0.0.0.0:0")...)
	})
	t.Run("gateway with the built-in hash key", func(t *testing.T) {
		oneLineFailure(t, "gateway.hash_key", "", "gateway", "--config", write0600(t, dir, "g.yaml", "api:\n  listen: \":0\"\n"), "--nats", "nats://127.0.0.1:1")
	})
}

func write0600(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
