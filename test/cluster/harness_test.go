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
func launchCluster(t testing.TB, n int, prefix string, start func(c *natsCluster, i int)) *natsCluster {
	t.Helper()
	bin, err := testutil.ToolPath("nats-server")
	if err != nil {
		t.Fatalf("nats-server not installed (run `make tools`): %v", err)
	}
	c := &natsCluster{t: t, bin: bin, name: fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), time.Now().UnixNano()%1e6)}
	for i := 0; i < n; i++ {
		p, _ := bus.FreePort()
		cp, _ := bus.FreePort()
		c.nodes = append(c.nodes, &natsNode{name: fmt.Sprintf("n%d", i+1), port: p, cport: cp, dir: t.TempDir()})
	}
	for i := range c.nodes {
		start(c, i)
	}
	for _, nd := range c.nodes {
		if err := testutil.WaitPort(fmt.Sprintf("127.0.0.1:%d", nd.port), 20*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	c.waitJetStream()
	t.Cleanup(func() {
		for i := range c.nodes {
			c.kill(i)
		}
	})
	return c
}

func (c *natsCluster) start(i int) {
	nd := c.nodes[i]
	var routes []string
	for _, o := range c.nodes {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", o.cport))
	}
	cmd := exec.Command(c.bin, "-a", "127.0.0.1", "-p", strconv.Itoa(nd.port),
		"--server_name", nd.name, "--cluster_name", c.name,
		"--cluster", fmt.Sprintf("nats://127.0.0.1:%d", nd.cport), "--routes", strings.Join(routes, ","),
		"-js", "-sd", nd.dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("start %s: %v", nd.name, err)
	}
	nd.cmd = cmd
	nd.done = make(chan struct{})
	go func() { _ = cmd.Wait(); close(nd.done) }()
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

// waitJetStream waits until the cluster has a meta leader.
func (c *natsCluster) waitJetStream() {
	c.t.Helper()
	nc, js := c.connect()
	defer nc.Close()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := js.AccountInfo(ctx)
		cancel()
		if err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.t.Fatal("jetstream cluster did not elect a meta leader in 60s")
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
