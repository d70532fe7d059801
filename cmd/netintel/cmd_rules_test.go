package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runRules(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var o, e bytes.Buffer
	env := &Env{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
	err := run(t.Context(), env, append([]string{"rules"}, args...))
	return o.String(), e.String(), err
}

func TestRulesCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("rules/a.yaml", `version: 2
rules:
  - {id: acme, vendor: Acme, product: Gate, protocol_family: ssl-vpn, class: vpn, match: {header.server: '^AcmeGate'}}
`)
	bad := write("bad.yaml", "version: 2\nrules:\n  - {id: x, vendor: v, product: p, protocol_family: f, match: {body: '(', hedaer.server: x}}\n")
	obs := func(server string) string {
		return `"observation":{"type":"service","ip":"192.0.2.1","source":"t","observed_at":"2026-11-01T00:00:00Z","service":{"port":443,"transport":"tcp","probes":[{"response":{"headers":[{"name":"Server","value":"` + server + `"}]}}]}}`
	}
	prov := `"provenance":{"url":"https://example.org/x","retrieved":"2026-11-26"}`
	write("caps/acme/1.json", `{"id":"1","family":"acme",`+prov+`,"expect":{"vendor":"Acme"},`+obs("AcmeGate/2")+`}`)
	write("caps/acme/2.json", `{"id":"2","family":"acme",`+prov+`,"expect":{"vendor":"Acme"},`+obs("nginx")+`}`)
	write("caps/negatives/3.json", `{"id":"3","negative":true,`+prov+`,"expect":{"vendor":null},`+obs("Apache")+`}`)

	if out, _, err := runRules(t, "check", "--rules", filepath.Dir(good)); err != nil || out != "ok: 1 files\n" {
		t.Errorf("check good: %q %v", out, err)
	}
	_, _, err := runRules(t, "check", "--rules", bad)
	if err == nil || !strings.Contains(err.Error(), "bad.yaml: rule x: match.body: error parsing regexp") || !strings.Contains(err.Error(), "rule x: match.hedaer.server: unknown field") {
		t.Errorf("check bad: %v", err)
	}
	out, _, err := runRules(t, "eval", "--mistakes", "--rules", filepath.Dir(good), filepath.Join(dir, "caps"))
	if err != nil || !strings.Contains(out, "| acme | 2 | 1 | 50% | 1 | 0 | 100% |") || !strings.Contains(out, "2.json: no vendor") {
		t.Errorf("eval: %v\n%s", err, out)
	}
	// A vendor on a negative fails the run and names the capture.
	write("caps/negatives/4.json", `{"id":"4","negative":true,`+prov+`,"expect":{"vendor":null},`+obs("AcmeGate")+`}`)
	if _, _, err := runRules(t, "eval", "--rules", filepath.Dir(good), filepath.Join(dir, "caps")); err == nil || !strings.Contains(err.Error(), `4.json: negative named "Acme"`) {
		t.Errorf("eval with a named negative: %v", err)
	}
	if _, _, err := runRules(t, "frobnicate"); err == nil || !strings.Contains(err.Error(), "unknown subcommand") {
		t.Errorf("unknown subcommand: %v", err)
	}
}
