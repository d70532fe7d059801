// Package testutil starts the real servers that integration tests run
// against: an in-process nats-server with JetStream, and versitygw, an
// S3-compatible server, as a child process on a free loopback port.
package testutil

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
)

// Logger returns a logger that writes to the test log with -v; without
// it, the last logLimit bytes of what was logged (at Info and above) are
// kept and written to the test log only if the test fails, so that a
// failure in CI comes with the logs that explain it.
func Logger(t testing.TB) *slog.Logger {
	t.Helper()
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	b := &LockedBuffer{Limit: logLimit}
	t.Cleanup(func() {
		if t.Failed() {
			if out := b.String(); out != "" {
				t.Logf("the last of what was logged:\n%s", out)
			}
		}
	})
	return slog.New(slog.NewTextHandler(b, nil))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// logLimit is how much of its log a failing test shows.
const logLimit = 32 << 10

// NATS is an in-process nats-server with JetStream and a client connected to it.
type NATS struct {
	Server *server.Server
	NC     *nats.Conn
	JS     jetstream.JetStream
	URL    string
	stop   sync.Once
}

// StartNATS starts a JetStream server on a random loopback port with its
// store in t.TempDir(), and connects to it. Both stop at test cleanup.
func StartNATS(t testing.TB) *NATS {
	t.Helper()
	s, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: t.TempDir(), NoSigs: true, NoLog: true,
	})
	if err != nil {
		t.Fatalf("nats server: %v", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	nc, js := Connect(t, s.ClientURL())
	n := &NATS{Server: s, NC: nc, JS: js, URL: s.ClientURL()}
	t.Cleanup(n.Stop)
	return n
}

// Connect connects to the NATS server at url and opens JetStream on the
// connection, which closes at test cleanup if not before.
func Connect(t testing.TB, url string, opts ...nats.Option) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatalf("nats connect: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	return nc, js
}

// Stop closes the connection and shuts the server down, before the test
// ends where a test needs it gone (a benchmark measuring the next thing
// without this server's memory in the process). It is called at cleanup
// in any case; calls after the first do nothing.
func (n *NATS) Stop() {
	n.stop.Do(func() {
		n.NC.Close()
		n.Server.Shutdown()
		n.Server.WaitForShutdown()
	})
}

// Ensure creates the default streams, consumers and buckets on n.
func (n *NATS) Ensure(t testing.TB) *config.Config {
	t.Helper()
	cfg := config.Default()
	if err := bus.Ensure(context.Background(), n.JS, cfg, Logger(t)); err != nil {
		t.Fatalf("ensure: %v", err)
	}
	return cfg
}

// S3 is a running versitygw server.
type S3 struct {
	Endpoint  string // host:port
	AccessKey string
	SecretKey string
	Bucket    string
	Root      string // the posix folder behind it
	cmd       *exec.Cmd
}

// Config returns an object store config pointing at the server.
func (s *S3) Config() config.ObjectStore {
	return config.ObjectStore{Type: "s3", S3: config.S3{
		Endpoint: s.Endpoint, Bucket: s.Bucket, Region: "us-east-1",
		AccessKey: s.AccessKey, SecretKey: s.SecretKey, PartSize: 5 << 20, PresignTTL: time.Minute,
	}}
}

// NewBucket creates a fresh, empty bucket on the server (a folder under
// its posix root) and returns its name, for a test that needs a store of
// its own.
func (s *S3) NewBucket(t testing.TB) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := s.Bucket + "-" + hex.EncodeToString(b[:])
	if err := os.Mkdir(filepath.Join(s.Root, name), 0o755); err != nil {
		t.Fatal(err)
	}
	return name
}

// Stop kills the server (to test an unreachable store).
func (s *S3) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// ToolPath finds a binary that `make tools` installed into .tools/bin at the
// module root, or on PATH.
func ToolPath(name string) (string, error) {
	if dir := os.Getenv("NETINTEL_TOOLS"); dir != "" {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	wd, _ := os.Getwd()
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(d, ".tools", "bin", name)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return exec.LookPath(name)
}

// StartS3 starts versitygw on a free loopback port with a fresh bucket in a
// temp folder. The test fails (not skips) when the binary is missing: `make
// test` installs it.
func StartS3(t testing.TB) *S3 {
	t.Helper()
	bin, err := ToolPath("versitygw")
	if err != nil {
		t.Fatalf("versitygw not installed (run `make tools`): %v", err)
	}
	root := t.TempDir()
	s := &S3{AccessKey: "testaccess", SecretKey: "testsecret-" + strconv.Itoa(os.Getpid()), Bucket: "netintel-test", Root: root}
	if err := os.Mkdir(filepath.Join(root, s.Bucket), 0o755); err != nil {
		t.Fatal(err)
	}
	for attempt := 0; attempt < 3; attempt++ {
		port, err := bus.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		s.Endpoint = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		cmd := exec.Command(bin, "--access", s.AccessKey, "--secret", s.SecretKey, "--port", s.Endpoint, "--quiet", "posix", root)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatalf("start versitygw: %v", err)
		}
		s.cmd = cmd
		if waitPort(s.Endpoint, 10*time.Second) == nil {
			t.Cleanup(s.Stop)
			return s
		}
		s.Stop()
	}
	t.Fatal("versitygw did not start")
	return nil
}

func waitPort(addr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s not listening after %s", addr, d)
}

// WaitPort waits until addr accepts TCP connections.
func WaitPort(addr string, d time.Duration) error { return waitPort(addr, d) }

// BenchPassEnv names the pass of `make bench` a benchmark runs in: the
// system pass runs every benchmark once (-benchtime 1x: system benchmarks
// size their own work), the micro pass runs the micro benchmarks listed in
// the Makefile's MICRO_BENCH for a fixed time each.
const BenchPassEnv = "NETINTEL_BENCH_PASS"

// Micro marks b as a micro benchmark (nanoseconds per operation): one
// iteration says nothing, so it skips itself in make bench's system pass
// and runs in the micro pass. Its name must match the Makefile's
// MICRO_BENCH.
func Micro(b *testing.B) {
	if os.Getenv(BenchPassEnv) == "system" {
		b.Skip("micro benchmark: make bench runs it in its micro pass (MICRO_BENCH)")
	}
}

// LockedBuffer is a buffer safe for concurrent writes, for what a server,
// a logger or a child process writes while a test reads it. With a Limit
// above 0 it keeps only about the last Limit bytes: String then gives at
// most Limit bytes, from the start of a line.
type LockedBuffer struct {
	Limit int
	mu    sync.Mutex
	b     bytes.Buffer
	cut   bool // bytes before the buffer's start were dropped
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.b.Write(p)
	if l.Limit > 0 && l.b.Len() > 2*l.Limit {
		l.b.Next(l.b.Len() - l.Limit)
		l.cut = true
	}
	return n, err
}

// String returns what has been written so far (its end, with a Limit).
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.b.Bytes()
	cut := l.cut
	if l.Limit > 0 && len(out) > l.Limit {
		out, cut = out[len(out)-l.Limit:], true
	}
	if cut {
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			out = out[i+1:]
		}
	}
	return string(out)
}

// GeneratedSection keeps the part of the document at path between the
// begin and end markers equal to content: it fails the test when they
// differ, naming regen (the command that rewrites it), or, with update
// set, rewrites that part. A document without the file is skipped.
func GeneratedSection(t testing.TB, path, begin, end, content string, update bool, regen string) {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no %s: %v", path, err)
	}
	s := string(doc)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %q ... %q markers", path, begin, end)
	}
	want := begin + "\n\n" + content + "\n" + end
	if s[i:j+len(end)] == want {
		return
	}
	if update {
		if err := os.WriteFile(path, []byte(s[:i]+want+s[j+len(end):]), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", path)
		return
	}
	t.Errorf("%s is out of date; run %s", path, regen)
}

// GeneratedFile is GeneratedSection for a file that is generated whole
// (the rules files the importers write): with update set it writes
// content to path, else it fails when the committed file differs, naming
// the command (regen) that rewrites it.
func GeneratedFile(t testing.TB, path string, content []byte, update bool, regen string) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(content, want) {
		t.Fatalf("%s is out of date: run %s", path, regen)
	}
}
