package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gw "github.com/netintel/netintel/gateway"
	"github.com/netintel/netintel/internal/testutil"
)

// startOut is startProc that also keeps every stdout line.
func startOut(t *testing.T, args ...string) (*proc, *lockedWriter, *bytes.Buffer) {
	t.Helper()
	p := &proc{cmd: exec.Command(binPath, args...), done: make(chan error, 1)}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, _ := p.cmd.StdoutPipe()
	p.cmd.Stderr = &lockedWriter{mu: &p.mu, w: &p.stderr}
	var outBuf bytes.Buffer
	out := &lockedWriter{mu: &sync.Mutex{}, w: &outBuf}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			_, _ = out.Write([]byte(sc.Text() + "\n"))
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
	return p, out, &outBuf
}

func cli(t *testing.T, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("netintel %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), stderr.String()
}

func call(t *testing.T, addr, path, key string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://"+addr+path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// Two gateway processes of the real binary on one NATS share quota and
// revocation.
func TestGateway_TwoInstancesShareQuotaAndRevocation(t *testing.T) {
	t.Parallel()
	n := testutil.StartNATS(t)
	var mu sync.Mutex
	var quotaSeen []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Internal-Key") != "it-internal-key" || r.Header.Get("Authorization") != "" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mu.Lock()
		quotaSeen = append(quotaSeen, r.Header.Get("X-Quota-Used"))
		mu.Unlock()
		fmt.Fprintf(w, `{"ip":"%s","assets":[]}`, strings.TrimPrefix(r.URL.Path, "/api/v1/shadow_vpn/lookup/"))
	}))
	t.Cleanup(backend.Close)
	cfg := filepath.Join(t.TempDir(), "pipeline.yaml")
	body := fmt.Sprintf(`api:
  internal_key: it-internal-key
gateway:
  backend_url: %s
  hash_key: it-hash-key
  last_used_interval: 100ms
  tiers:
    starter: {rate_per_minute: 1000, monthly_quota: 6}
`, backend.URL)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	common := []string{"--config", cfg, "--nats", n.URL}
	a := startProc(t, append([]string{"gateway", "--listen", "127.0.0.1:0", "--log-level", "debug"}, common...)...)
	b := startProc(t, append([]string{"gateway", "--listen", "127.0.0.1:0", "--log-level", "debug"}, common...)...)
	// A gateway listens at once and answers 503 until it has connected to
	// NATS; wait as a load balancer would.
	waitReady(t, 60*time.Second, a, b)

	key1, errOut := cli(t, append([]string{"keys", "create", "--user", "quota-user", "--tier", "starter", "--tag", "it"}, common...)...)
	id1, secret1, err := gw.ParseKey(key1)
	if err != nil {
		t.Fatalf("keys create printed %q: %v", key1, err)
	}
	if strings.Contains(errOut, secret1) || !strings.Contains(errOut, id1) {
		t.Fatalf("keys create stderr: %q", errOut)
	}

	// Quota 6 credits, shared: alternate instances.
	for i := range 6 {
		p := []*proc{a, b}[i%2]
		if code, _, body := call(t, p.addr, "/api/v1/vpn/ip/192.0.2.1", key1); code != 200 {
			t.Fatalf("request %d on %s: %d %s", i, p.addr, code, body)
		}
	}
	for _, p := range []*proc{a, b} {
		code, hdr, body := call(t, p.addr, "/api/v1/vpn/ip/192.0.2.1", key1)
		if code != 429 || !strings.Contains(body, "quota_exceeded") || hdr.Get("Retry-After") == "" {
			t.Fatalf("after 6 credits on %s: %d %s", p.addr, code, body)
		}
	}
	mu.Lock()
	if got := strings.Join(quotaSeen, ","); got != "1,2,3,4,5,6" {
		t.Errorf("backend saw X-Quota-Used %s, want 1..6", got)
	}
	mu.Unlock()

	// The per-key rate window is shared too: free is 2 per minute.
	freeKey, _ := cli(t, append([]string{"keys", "create", "--user", "rate-user", "--tier", "free"}, common...)...)
	if s := time.Now().Second(); s > 55 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
	for i, p := range []*proc{a, b} {
		if code, _, body := call(t, p.addr, "/api/v1/vpn/ip/192.0.2.1", freeKey); code != 200 {
			t.Fatalf("free request %d: %d %s", i, code, body)
		}
	}
	if code, hdr, body := call(t, a.addr, "/api/v1/vpn/ip/192.0.2.1", freeKey); code != 429 || !strings.Contains(body, "rate_limited") || hdr.Get("Retry-After") == "" {
		t.Fatalf("3rd free request in a minute across instances: %d %s", code, body)
	}

	// Revocation reaches both instances.
	key2, _ := cli(t, append([]string{"keys", "create", "--user", "rev-user", "--tier", "pro"}, common...)...)
	id2, secret2, _ := gw.ParseKey(key2)
	for _, p := range []*proc{a, b} {
		if code, _, body := call(t, p.addr, "/api/v1/vpn/ip/192.0.2.1", key2); code != 200 {
			t.Fatalf("new key on %s: %d %s", p.addr, code, body)
		}
	}
	out, _ := cli(t, append([]string{"keys", "revoke", id2}, common...)...)
	start := time.Now()
	if !strings.Contains(out, "revoked "+id2) {
		t.Fatalf("keys revoke printed %q", out)
	}
	seen := map[string]time.Duration{}
	for len(seen) < 2 {
		for _, p := range []*proc{a, b} {
			if _, ok := seen[p.addr]; ok {
				continue
			}
			if code, _, body := call(t, p.addr, "/api/v1/vpn/ip/192.0.2.1", key2); code == 401 && strings.Contains(body, "revoked_key") {
				seen[p.addr] = time.Since(start)
			}
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("revocation not seen by both instances within 30s: %v", seen)
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Logf("revocation seen by instance A after %s, B after %s (measured from the CLI's exit)", seen[a.addr], seen[b.addr])
	for addr, d := range seen {
		if d > 2*time.Second {
			t.Errorf("revocation reached %s after %s; aim is < 2s", addr, d)
		}
	}

	// keys list: ids, users, tiers, last use; never a secret or hash.
	time.Sleep(300 * time.Millisecond) // a last-used flush
	js, _ := cli(t, append([]string{"keys", "list", "--json"}, common...)...)
	var infos []gw.Info
	if err := json.Unmarshal([]byte(js), &infos); err != nil || len(infos) != 3 {
		t.Fatalf("keys list --json: %v %s", err, js)
	}
	for _, in := range infos {
		switch in.ID {
		case id1:
			if in.User != "quota-user" || in.Tier != "starter" || in.LastUsed == nil || in.Status != "active" || strings.Join(in.Tags, ",") != "it" {
				t.Errorf("key 1 listed as %+v", in)
			}
		case id2:
			if in.Status != "revoked" {
				t.Errorf("key 2 listed as %+v", in)
			}
		}
	}
	table, _ := cli(t, append([]string{"keys", "list"}, common...)...)
	if !regexp.MustCompile(`(?m)^` + id1 + `\s+quota-user\s+starter\s+it\s+\S+\s+\d{4}-`).MatchString(table) {
		t.Errorf("keys list table:\n%s", table)
	}
	for _, s := range []string{secret1, secret2} {
		if strings.Contains(js+table+a.logs()+b.logs(), s) {
			t.Fatal("a key secret appears in keys list or gateway logs")
		}
	}
	if !strings.Contains(a.logs()+b.logs(), id1) {
		t.Error("gateway debug logs never name the key id (the secret check would prove nothing)")
	}
}

// `netintel run` prints a dev key (the same one after a restart) that works
// through the gateway against whatever backend the binary has. The test
// config bundles the samples, so the first snapshot comes in seconds and
// the backend's own answer (200 or 404) is what the gateway passes on.
func TestRun_GatewayDevKeyEndToEnd(t *testing.T) {
	t.Parallel()
	cfg := testConfig
	data := filepath.Join(t.TempDir(), "data")
	devRe := regexp.MustCompile(`dev API key \(user dev, tier enterprise\): (svc_vpn_\S+)`)
	waitKey := func(buf *bytes.Buffer, w *lockedWriter) string {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			w.mu.Lock()
			m := devRe.FindStringSubmatch(buf.String())
			w.mu.Unlock()
			if m != nil {
				return m[1]
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatal("no dev key printed")
		return ""
	}
	p, w, buf := startOut(t, runArgs(data)...)
	key := waitKey(buf, w)

	// When the real backend is in the binary it refuses direct calls
	// without X-Internal-Key; then the gateway's answer is its answer (503
	// while its first snapshot loads).
	direct, _, _ := call(t, p.addr, "/api/v1/shadow_vpn/lookup/192.0.2.1", "")
	var code int
	var hdr http.Header
	var body string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		code, hdr, body = call(t, p.addr, "/api/v1/vpn/ip/192.0.2.1", key)
		if direct != 401 || code != 503 || time.Now().After(deadline) {
			break
		}
	}
	// The gateway's own refusals; anything else is the backend's answer.
	gatewayRefused := code == 401 || code == 403 || code == 429 || code == 502 ||
		(code == 503 && (strings.Contains(body, `"unavailable"`) || strings.Contains(body, "validation_unavailable")))
	if hdr.Get("X-Quota-Used") == "" || gatewayRefused {
		t.Fatalf("dev key through the gateway: %d %s %v", code, body, hdr)
	}
	switch {
	case direct == 401 && (code == 200 || code == 404):
		if !strings.Contains(hdr.Get("Content-Type"), "json") {
			t.Fatalf("backend answer through the gateway: %d %s", code, body)
		}
	case direct == 401:
		t.Logf("backend answered %d through the gateway (no snapshot published yet?): %s", code, body)
	default:
		t.Logf("no backend routes in this binary yet (direct call %d); gateway answered %d", direct, code)
	}
	if code, _, _ := call(t, p.addr, "/api/v1/vpn/ip/192.0.2.1", ""); code != 401 {
		t.Fatalf("no key: %d", code)
	}
	list, _ := cli(t, "keys", "list", "--config", cfg, "--data-dir", data)
	id, _, _ := gw.ParseKey(key)
	if !regexp.MustCompile(id + `\s+dev\s+enterprise`).MatchString(list) {
		t.Fatalf("keys list does not show the dev key:\n%s", list)
	}
	if _, err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("stop: %v\n%s", err, p.logs())
	}
	_, w2, buf2 := startOut(t, runArgs(data)...)
	if again := waitKey(buf2, w2); again != key {
		t.Fatalf("restart printed another dev key")
	}
}

func TestKeys_BadInputOneLine(t *testing.T) {
	t.Parallel()
	n := testutil.StartNATS(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no user", []string{"create", "--tier", "pro"}, "--user is required"},
		{"no tier", []string{"create", "--user", "u"}, "--tier is required"},
		{"bad tier", []string{"create", "--user", "u", "--tier", "gold"}, `tier "gold": one of free, starter, pro, scale, business, enterprise`},
		{"bad user", []string{"create", "--user", "a b", "--tier", "pro"}, `user "a b"`},
		{"revoke without id", []string{"revoke"}, "name the key id"},
		{"revoke unknown", []string{"revoke", "0123456789abcdef"}, "key not found: 0123456789abcdef"},
		{"rotate unknown", []string{"rotate", "--overlap", "1h", "0123456789abcdef"}, "key not found"},
		{"unknown subcommand", []string{"frobnicate"}, `unknown subcommand "frobnicate"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oneLineFailure(t, tc.want, "", append(append([]string{"keys"}, tc.args...), "--nats", n.URL)...)
		})
	}
	// rotate through the CLI: both keys work until the overlap ends.
	old, _ := cli(t, "keys", "create", "--user", "rot", "--tier", "scale", "--nats", n.URL)
	id, _, _ := gw.ParseKey(old)
	nw, msg := cli(t, "keys", "rotate", id, "--overlap", "1h", "--nats", n.URL)
	if _, _, err := gw.ParseKey(nw); err != nil || nw == old || !strings.Contains(msg, "keeps working for 1h0m0s") {
		t.Fatalf("rotate printed %q / %q", nw, msg)
	}
	list, _ := cli(t, "keys", "list", "--nats", n.URL)
	if !strings.Contains(list, "active until ") || strings.Count(list, "rot ") != 2 {
		t.Fatalf("list after rotate:\n%s", list)
	}
}
