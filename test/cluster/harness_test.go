// Package cluster runs netintel the way production does: three nats-server
// processes forming a JetStream cluster on loopback (the nats-server binary
// built by `make tools` at the same version as the embedded one), the real
// S3 server, and every role as its own netintel process.
package cluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/testutil"
)

// natsCluster is three nats-server processes with JetStream on loopback.
type natsCluster struct {
	t     testing.TB
	bin   string
	name  string
	nodes []*natsNode
}

type natsNode struct {
	name        string
	port, cport int
	dir         string
	cmd         *exec.Cmd
	done        chan struct{}
	out         *tailBuffer
}

// startCluster starts an n-node cluster of nats-server processes.
func startCluster(t testing.TB, n int) *natsCluster {
	t.Helper()
	return launchCluster(t, n, "nt", (*natsCluster).start)
}

// launchCluster starts n nodes, each with start, under a cluster name of
// its own (prefix, pid, time): a stray server of an earlier run that
// reused a port can never join. It waits for every port and for
// JetStream, and kills the nodes at the test's end.
//
// A port found free can be taken before nats-server binds it (another
// test's outgoing connection, say): a node that exits or does not listen
// is reported with its own output, and the cluster is started again on
// fresh ports, up to three times.
func launchCluster(t testing.TB, n int, prefix string, start func(c *natsCluster, i int)) *natsCluster {
	t.Helper()
	bin, err := testutil.ToolPath("nats-server")
	if err != nil {
		t.Fatalf("nats-server not installed (run `make tools`): %v", err)
	}
	const attempts = 3
	for a := 1; ; a++ {
		c := &natsCluster{t: t, bin: bin, name: fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), time.Now().UnixNano()%1e6)}
		ports := freePorts(t, 2*n)
		for i := 0; i < n; i++ {
			c.nodes = append(c.nodes, &natsNode{name: fmt.Sprintf("n%d", i+1), port: ports[2*i], cport: ports[2*i+1], dir: t.TempDir()})
		}
		for i := range c.nodes {
			start(c, i)
		}
		err := c.waitListening(20 * time.Second)
		if err == nil {
			err = c.waitJetStream(60 * time.Second)
		}
		if err == nil {
			t.Cleanup(func() {
				for i := range c.nodes {
					c.kill(i)
				}
			})
			return c
		}
		for i := range c.nodes {
			c.kill(i)
		}
		if a == attempts {
			t.Fatalf("cluster did not start in %d attempts; the last: %v", attempts, err)
		}
		t.Logf("cluster start %d of %d failed, starting again on fresh ports: %v", a, attempts, err)
	}
}

// freePorts is n distinct loopback ports free when asked.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	seen := map[int]bool{}
	var ports []int
	for len(ports) < n {
		p, err := bus.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if !seen[p] {
			seen[p] = true
			ports = append(ports, p)
		}
	}
	return ports
}

// waitListening waits until every node accepts connections on its client
// port; a node that exits first is an error at once, with its output.
func (c *natsCluster) waitListening(d time.Duration) error {
	deadline := time.Now().Add(d)
	for _, nd := range c.nodes {
		addr := fmt.Sprintf("127.0.0.1:%d", nd.port)
		for {
			if err := c.exited(); err != nil {
				return err
			}
			if conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
				conn.Close()
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s not listening on %s after %s: %s", nd.name, addr, d, nd.output())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

func (c *natsCluster) start(i int) { c.run(i) }

// run starts node i's nats-server with the cluster's flags and args
// before them; its output is kept (the last 8 KiB) for a failure to quote.
func (c *natsCluster) run(i int, args ...string) {
	nd := c.nodes[i]
	var routes []string
	for _, o := range c.nodes {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", o.cport))
	}
	args = append(args, "-a", "127.0.0.1", "-p", strconv.Itoa(nd.port),
		"--server_name", nd.name, "--cluster_name", c.name,
		"--cluster", fmt.Sprintf("nats://127.0.0.1:%d", nd.cport), "--routes", strings.Join(routes, ","),
		"-js", "-sd", filepath.Join(nd.dir, "js"))
	cmd := exec.Command(c.bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	nd.out = &tailBuffer{max: 8 << 10}
	cmd.Stdout, cmd.Stderr = nd.out, nd.out
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("start %s: %v", nd.name, err)
	}
	nd.cmd = cmd
	nd.done = make(chan struct{})
	go func() { _ = cmd.Wait(); close(nd.done) }()
}

// output is the tail of the node's log, its last lines first trimmed.
func (nd *natsNode) output() string {
	if nd.out == nil {
		return "(no output)"
	}
	s := strings.TrimSpace(nd.out.String())
	if s == "" {
		return "(no output)"
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 6 {
		lines = lines[len(lines)-6:]
	}
	return strings.Join(lines, " | ")
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *tailBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > w.max {
		w.b = append(w.b[:0], w.b[len(w.b)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}

// kill sends SIGKILL to node i and waits for it to die.
func (c *natsCluster) kill(i int) {
	nd := c.nodes[i]
	if nd.cmd == nil {
		return
	}
	_ = nd.cmd.Process.Signal(syscall.SIGKILL)
	<-nd.done
	nd.cmd = nil
}

// URLs is every node's client URL, comma-separated.
func (c *natsCluster) URLs() string {
	var u []string
	for _, nd := range c.nodes {
		u = append(u, fmt.Sprintf("nats://127.0.0.1:%d", nd.port))
	}
	return strings.Join(u, ",")
}

func (c *natsCluster) connect() (*nats.Conn, jetstream.JetStream) {
	c.t.Helper()
	nc, err := nats.Connect(c.URLs(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		c.t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(nc.Close)
	return nc, js
}

// waitJetStream waits until the cluster has a meta leader and every node
// still runs (a node may listen for clients and then fail on its route
// port).
func (c *natsCluster) waitJetStream(d time.Duration) error {
	nc, err := nats.Connect(c.URLs(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(d)
	for {
		if err := c.exited(); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := js.AccountInfo(ctx)
		cancel()
		if err == nil {
			return c.exited()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("jetstream cluster did not elect a meta leader in %s: %v", d, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// exited is an error naming the first node that has exited, with its
// output.
func (c *natsCluster) exited() error {
	for _, nd := range c.nodes {
		select {
		case <-nd.done:
			return fmt.Errorf("%s (127.0.0.1:%d) exited: %s", nd.name, nd.port, nd.output())
		default:
		}
	}
	return nil
}

// leaderOf returns the index of the node leading stream.
func (c *natsCluster) leaderOf(js jetstream.JetStream, stream string) int {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		s, err := js.Stream(ctx, stream)
		cancel()
		if err == nil && s.CachedInfo().Cluster != nil {
			for i, nd := range c.nodes {
				if nd.name == s.CachedInfo().Cluster.Leader {
					return i
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.t.Fatalf("no leader for stream %s", stream)
	return -1
}

// netintelBin builds the binary once per test run.
var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// buildBin builds the binary unless it is built; a test may start it in a
// goroutine of its own to overlap the build with its cluster's start.
func buildBin() {
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "netintel-cluster-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "netintel")
		out, err := exec.Command("go", "build", "-o", binPath, "../../cmd/netintel").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
}

func netintelBin(t testing.TB) string {
	t.Helper()
	buildBin()
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// execCommand is the built binary with args (netintelBin must have run).
func execCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(binPath, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// role is one netintel process.
type role struct {
	name string
	args []string
	env  []string
	cmd  *exec.Cmd
	addr string
	mu   sync.Mutex
	logs bytes.Buffer
	done chan struct{}
}

var listenRe = regexp.MustCompile(`listening on http://(\S+)|"msg":"http listening","addr":"([^"]+)"`)

func (r *role) start(t testing.TB, waitListen bool) {
	t.Helper()
	r.cmd = exec.Command(netintelBin(t), r.args...)
	r.cmd.Env = append(os.Environ(), r.env...)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pr, pw := io.Pipe()
	r.cmd.Stdout, r.cmd.Stderr = pw, pw
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			r.mu.Lock()
			r.logs.WriteString(line + "\n")
			r.mu.Unlock()
			if m := listenRe.FindStringSubmatch(line); m != nil {
				a := m[1] + m[2]
				select {
				case addrc <- a:
				default:
				}
			}
		}
	}()
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", r.name, err)
	}
	r.done = make(chan struct{})
	cmd := r.cmd
	go func() { _ = cmd.Wait(); pw.Close(); close(r.done) }()
	if !waitListen {
		return
	}
	select {
	case r.addr = <-addrc:
	case <-r.done:
		t.Fatalf("%s exited early:\n%s", r.name, r.output())
	case <-time.After(90 * time.Second):
		t.Fatalf("%s did not listen in 90s:\n%s", r.name, r.output())
	}
}

func (r *role) output() string { r.mu.Lock(); defer r.mu.Unlock(); return r.logs.String() }

func (r *role) kill() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Signal(syscall.SIGKILL)
		<-r.done
	}
}

// TestCluster_StartAgainOnATakenPort: a node whose port was taken after it
// was found free exits; the cluster starts again on fresh ports and the
// failed attempt is reported with the node's own words.
func TestCluster_StartAgainOnATakenPort(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test")
	}
	t.Parallel()
	var held net.Listener
	calls := 0
	rec := &logRecorder{TB: t}
	c := launchCluster(rec, 3, "nt-taken", func(c *natsCluster, i int) {
		calls++
		if calls == 1 {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", c.nodes[i].cport))
			if err != nil {
				t.Fatal(err)
			}
			held = l
		}
		c.start(i)
	})
	defer held.Close()
	if calls != 6 {
		t.Errorf("start called %d times, want 6 (3 nodes, twice)", calls)
	}
	if len(rec.logs) != 1 || !strings.Contains(rec.logs[0], "Error listening on router port") || !strings.Contains(rec.logs[0], "n1") {
		t.Errorf("logs %q, want one failed start quoting n1's own error", rec.logs)
	}
	nc, _ := c.connect()
	if !nc.IsConnected() {
		t.Error("not connected to the second attempt's cluster")
	}
}

// logRecorder keeps what Logf is given.
type logRecorder struct {
	testing.TB
	logs []string
}

func (r *logRecorder) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
	r.TB.Logf(format, args...)
}
