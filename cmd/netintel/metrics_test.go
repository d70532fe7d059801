package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/testutil"
)

// documentedMetrics lists every netintel_* name the docs and the README
// mention, histogram series suffixes folded into their metric.
func documentedMetrics(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	re := regexp.MustCompile(`\bnetintel_[a-z0-9_]*[a-z0-9]`)
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range re.FindAllString(string(b), -1) {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				n = strings.TrimSuffix(n, suffix)
			}
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	return names
}

// TestRun_MetricsFromStart is issue 34 item 4 on a fresh `netintel run`:
// before any event, /metrics lists every metric the docs name (with
// their label values at 0) and the per-job and snapshot gauges;
// `promtool check metrics` finds nothing to report; every route label is
// a path without a method.
func TestRun_MetricsFromStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startProc(t, runArgs(dir)...)
	waitReady(t, 60*time.Second, p)
	code, body := get(t, "http://"+p.addr+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	docs := documentedMetrics(t)
	if len(docs) < 24 {
		t.Fatalf("the docs name %d metrics: %v", len(docs), docs)
	}
	for _, name := range docs {
		if !strings.Contains(body, "\n# TYPE "+name+" ") {
			t.Errorf("documented metric %s is not on /metrics of a fresh system", name)
		}
	}
	// Every label value is there from start, under `netintel run` too (at
	// 0 unless the bootstrap already counted; the TLD check is off, so
	// its series stay 0).
	for _, series := range []string{
		`netintel_ingest_observations_total{format="nmap-xml"} `,
		`netintel_ingest_malformed_total{format="goflow2"} `,
		`netintel_tld_probe_requests_total{kind="rdap",outcome="ok"} 0`,
		`netintel_tld_probe_requests_total{kind="whois",outcome="transient"} 0`,
		`netintel_enrich_retries_total{reason="conflict"} `,
		`netintel_enrich_observations_total{type="flow"} `,
		`netintel_gateway_requests_total{option="a",outcome="rate_limited"} `,
		`netintel_secrets_requests_total{endpoint="saveFile",outcome="ok"} `,
		`netintel_job_runs_total{name="snapshot",outcome="failed"} `,
		`netintel_job_last_success_timestamp_seconds{name="snapshot"} `,
		`netintel_job_interval_seconds{name="snapshot"} 86400`,
		`netintel_job_interval_seconds{name="enrich-age"} 3600`,
		`netintel_http_requests_total{code="200",route="/metrics"} `,
		`netintel_ip_snapshot_age_seconds `,
	} {
		if !strings.Contains(body, "\n"+series) {
			t.Errorf("no series %s", series)
		}
	}
	if strings.Contains(body, `route="GET `) || strings.Contains(body, `route="POST `) {
		t.Error("a route label carries a method")
	}
	bin, err := testutil.ToolPath("promtool")
	if err != nil {
		t.Fatalf("promtool not installed (run `make tools`): %v", err)
	}
	cmd := exec.CommandContext(t.Context(), bin, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestDeploy_AlertRules checks deploy/prometheus/alerts.yml with
// `promtool check rules` and its unit tests (alerts_test.yml) with
// `promtool test rules`; the Grafana dashboard must be JSON; every metric
// either names is one the docs list (which TestRun_MetricsFromStart holds
// equal to /metrics).
func TestDeploy_AlertRules(t *testing.T) {
	t.Parallel()
	bin, err := testutil.ToolPath("promtool")
	if err != nil {
		t.Fatalf("promtool not installed (run `make tools`): %v", err)
	}
	rules := "../../deploy/prometheus/alerts.yml"
	if out, err := exec.CommandContext(t.Context(), bin, "check", "rules", rules).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	// The rules' own tests: each alert fires on the series it is for,
	// and not before its time.
	cmd := exec.CommandContext(t.Context(), bin, "test", "rules", "alerts_test.yml")
	cmd.Dir = "../../deploy/prometheus"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	docs := documentedMetrics(t)
	re := regexp.MustCompile(`\bnetintel_[a-z0-9_]*[a-z0-9]`)
	for _, f := range []string{rules, "../../deploy/grafana/netintel.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".json") && !json.Valid(b) {
			t.Errorf("%s is not JSON", f)
		}
		for _, n := range re.FindAllString(string(b), -1) {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				n = strings.TrimSuffix(n, suffix)
			}
			if !slices.Contains(docs, n) {
				t.Errorf("%s uses %s, which no doc lists", filepath.Base(f), n)
			}
		}
	}
}
