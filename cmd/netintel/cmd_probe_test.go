package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/testutil"
)

// probeWorld is a loopback RDAP server that answers for every host and a
// WHOIS server answering every query, plus input files for three TLDs.
func probeWorld(t *testing.T) (cfgPath string) {
	t.Helper()
	rdap := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rdap+json")
		_, name, ok := strings.Cut(r.URL.Path, "/domain/")
		if !ok || !strings.HasPrefix(r.Host, "rdap.nic.stealth") && !strings.HasPrefix(r.Host, "rdap.listed") {
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"rdapConformance":["rdap_level_0"],"errorCode":404}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"rdapConformance": []string{"rdap_level_0"}, "objectClassName": "domain", "ldhName": name})
	}))
	t.Cleanup(rdap.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				q, _ := bufio.NewReader(c).ReadString('\n')
				fmt.Fprintf(c, "domain: %s\nwhois: whois.nic.%s\n", strings.TrimSpace(q), strings.TrimSpace(q))
			}()
		}
	}()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tlds := write("tlds.txt", "# test\nLISTED\nSTEALTH\nXN--P1AI\n")
	boot := write("dns.json", `{"services":[[["listed","xn--p1ai"],["http://rdap.listed.test/"]]]}`)
	cfg := fmt.Sprintf(`probe:
  tld_list: %s
  rdap_bootstrap: %s
  whois_discovery: whois.iana.test:43
  whois_fallback: ""
  stealth:
    candidates: ["http://rdap.nic.<tld>/"]
    candidates_file: ""
    scheme: http
  timeout: 2s
  whois_timeout: 2s
  retries: 0
  poll: 200ms
  resolve:
    "*:80": %q
    "*:43": %q
`, tlds, boot, rdap.Listener.Addr().String(), l.Addr().String())
	return write("pipeline.yaml", cfg)
}

func TestProbe_CommandOnRunningSystem(t *testing.T) {
	t.Parallel()
	cfg := probeWorld(t)
	data := t.TempDir()
	p := startProc(t, "run", "--config", cfg, "--data-dir", data, "--listen", "127.0.0.1:0")
	base := "http://" + p.addr
	// `netintel run` checks once at start when nothing was published.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, body := get(t, base+"/api/status")
		if strings.Contains(body, `"tld_check_status":"completed"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("first check did not complete: %s\n%s", body, p.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, err := exec.Command(binPath, "probe", "--config", cfg, "--data-dir", data).CombinedOutput()
	if err != nil {
		t.Fatalf("netintel probe: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "TLD check requested") || !strings.Contains(string(out), "published 3 TLD results, 1 with stealth RDAP") {
		t.Errorf("probe output:\n%s", out)
	}
	code, body := get(t, base+"/api/results")
	var res struct {
		Results []struct {
			TLD         string   `json:"tld"`
			RDAPWorking *bool    `json:"rdap_working"`
			StealthURLs []string `json:"stealth_urls"`
		} `json:"results"`
		TotalTLDs int `json:"total_tlds"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil || code != 200 || res.TotalTLDs != 3 {
		t.Fatalf("results %d %s", code, body)
	}
	if res.Results[1].TLD != "stealth" || len(res.Results[1].StealthURLs) != 1 || res.Results[2].TLD != "xn--p1ai" || res.Results[2].RDAPWorking == nil || !*res.Results[2].RDAPWorking {
		t.Errorf("results %s", body)
	}
	_, health := get(t, base+"/health")
	if !strings.Contains(health, `"stealth_count":1`) || !strings.Contains(health, `"status":"healthy"`) {
		t.Errorf("health %s", health)
	}
	code, csv := get(t, base+"/download/csv")
	if code != 200 || !strings.HasPrefix(csv, "tld,rdap_supported,rdap_urls,rdap_working,working_url,whois_available,whois_server,stealth_rdap,stealth_urls\r\n") {
		t.Errorf("csv %d %s", code, csv)
	}
}

func TestProbe_UnreachableIANAFailsGracefully(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := l.Addr().String()
	l.Close()
	cfg := filepath.Join(dir, "pipeline.yaml")
	body := fmt.Sprintf("probe:\n  tld_list: http://data.iana.test/TLD/tlds-alpha-by-domain.txt\n  rdap_bootstrap: http://data.iana.test/rdap/dns.json\n  poll: 200ms\n  resolve: {\"*\": %q}\n", closed)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	p := startProc(t, "run", "--config", cfg, "--data-dir", data, "--listen", "127.0.0.1:0")
	base := "http://" + p.addr
	deadline := time.Now().Add(20 * time.Second)
	var status string
	for {
		_, status = get(t, base+"/api/status")
		if strings.Contains(status, `"failed"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failure recorded: %s", status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(status, `"results_available":0`) || !strings.Contains(status, "TLD list: connection refused") || !strings.Contains(status, `"last_update":"1970-01-01 00:00:00"`) {
		t.Errorf("status %s", status)
	}
	// The reason shows no internal address: not the one dialled (nor a
	// resolver's); the log has them.
	if host, _, _ := net.SplitHostPort(closed); strings.Contains(status, host) {
		t.Errorf("status shows an internal address: %s", status)
	}
	if code, body := get(t, base+"/api/results"); code != 200 || !strings.Contains(body, `"results":[]`) {
		t.Errorf("results %d %s", code, body)
	}
	if code, _ := get(t, base+"/health"); code != 200 {
		t.Errorf("health %d", code)
	}
	if !strings.Contains(p.logs(), "tld probe run failed") {
		t.Errorf("no logged reason:\n%s", p.logs())
	}
	// `netintel probe` reports the failure with its reason, once.
	out, err := exec.Command(binPath, "probe", "--config", cfg, "--data-dir", data, "--pickup", "10s").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "TLD check failed") || !strings.Contains(string(out), "TLD list: connection refused") {
		t.Errorf("netintel probe: %v\n%s", err, out)
	}
	// Still serving, not spinning: exactly the two runs were attempted.
	time.Sleep(time.Second)
	if n := strings.Count(p.logs(), "tld probe run failed"); n != 2 {
		t.Errorf("%d failed runs logged, want 2 (start + request)", n)
	}
}

// TestProbe_FailedRunRetried: the tld_probe job runs a failed run again
// within its tick (probe.run_retries after probe.run_retry_wait, doubling),
// as the snapshot job does, instead of waiting 48 hours; and so does the
// first check at start.
func TestProbe_FailedRunRetried(t *testing.T) {
	t.Parallel()
	s, _ := openTestSystem(t, func(dir string) string { return "probe:\n  run_retries: 3\n  run_retry_wait: 2m\n" })
	j, ok := job(s, "tld_probe")
	if !ok {
		t.Fatal("tld_probe job not registered")
	}
	if j.Retries != 3 || j.RetryWait != 2*time.Minute {
		t.Fatalf("tld_probe job retries %d after %s, want probe.run_retries 3 after 2m", j.Retries, j.RetryWait)
	}
	var calls []time.Time
	fail := errors.New("inputs unreachable")
	err := retryRun(t.Context(), 3, 20*time.Millisecond, testutil.Logger(t), func(context.Context) error {
		if calls = append(calls, time.Now()); len(calls) < 3 {
			return fail
		}
		return nil
	})
	if err != nil || len(calls) != 3 {
		t.Fatalf("first check: %d runs, %v; want success on the third", len(calls), err)
	}
	if d1, d2 := calls[1].Sub(calls[0]), calls[2].Sub(calls[1]); d1 < 20*time.Millisecond || d2 < 40*time.Millisecond {
		t.Errorf("waits %s, %s; want 20ms then 40ms", d1, d2)
	}
	calls = nil
	if err := retryRun(t.Context(), 2, time.Millisecond, testutil.Logger(t), func(context.Context) error {
		calls = append(calls, time.Now())
		return fail
	}); !errors.Is(err, fail) || len(calls) != 3 {
		t.Fatalf("always failing: %d runs, %v; want 1 + 2 retries and the error", len(calls), err)
	}
}
