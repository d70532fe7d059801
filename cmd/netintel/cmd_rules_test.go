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
	// --partial scores each capture's partial variants too (here the
	// headers lower-cased, as an HTTP/2 client prints them).
	out, _, err = runRules(t, "eval", "--partial", "--rules", filepath.Dir(good), filepath.Join(dir, "caps"))
	if err != nil || !strings.Contains(out, "partial variants:") || !strings.Contains(out, "| headers lower-case | 2 | 1 | 50% | 0 | 0 of 1 | 0 of 0 |") {
		t.Errorf("eval --partial: %v\n%s", err, out)
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

// rules match reads a scan file with any ingest adapter, offline, and
// prints what the rules name for each service (a table, or JSON lines);
// malformed records are reported on stderr and skipped; an unknown format
// or a file nothing of which reads is an error naming it.
func TestRulesCommand_Match(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	obs := filepath.Join(dir, "obs.ndjson")
	lines := `{"ip":"192.0.2.1","source":"t","observed_at":"2026-11-20T10:00:00Z","service":{"port":443,"transport":"tcp","probes":[{"response":{"status":200,"headers":{"Server":"xxxxxxxx-xxxxx"},"body":"<title>SSL VPN</title>"}}]}}
{"ip":"192.0.2.2","source":"t","observed_at":"2026-11-20T10:00:00Z","service":{"port":22,"probes":[{"banner":"SSH-2.0-OpenSSH_9.6"}]}}
{"ip":"192.0.2.3","source":"t","observed_at":"2026-11-20T10:00:00Z","service":{"port":"22","transport":"tcp","probes":[{"banner":"Version: FortiGate-60F v7.2.5,build1517,230606 (GA.F)"}]}}
not json
`
	if err := os.WriteFile(obs, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runRules(t, "match", obs)
	if err != nil {
		t.Fatalf("match: %v (%s)", err, errOut)
	}
	want := "192.0.2.1\t443/tcp\tFortinet\tFortiGate SSL-VPN\t-\tfortinet-fortigate-sslvpn\n192.0.2.2\t22/tcp\t-\n192.0.2.3\t22/tcp\tFortinet\tFortiGate\t7.2.5\tfortinet-fortigate-cli\n"
	if out != want {
		t.Errorf("table:\n%s\nwant\n%s", out, want)
	}
	if !strings.Contains(errOut, "line 4:") || !strings.Contains(errOut, "3 services, 2 named, 1 malformed records skipped") {
		t.Errorf("stderr: %q", errOut)
	}
	out, _, err = runRules(t, "match", "--json", obs)
	if err != nil || !strings.Contains(out, `{"line":3,"ip":"192.0.2.3","port":22,"transport":"tcp","named":true,"rule":"fortinet-fortigate-cli","vendor":"Fortinet","product":"FortiGate","version":"7.2.5","version_band":"7.2.x","version_precision":"exact"}`) {
		t.Errorf("json: %v\n%s", err, out)
	}
	nmap := filepath.Join(dir, "scan.xml")
	if err := os.WriteFile(nmap, []byte(`<?xml version="1.0"?><nmaprun><host><address addr="192.0.2.9" addrtype="ipv4"/><ports><port protocol="tcp" portid="443"><state state="open"/><service name="https" product="Fortinet FortiGate SSL VPN" tunnel="ssl"/></port></ports></host></nmaprun>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := runRules(t, "match", "--format", "nmap-xml", nmap); err != nil || !strings.HasPrefix(out, "192.0.2.9\t443/tcp\tFortinet\t") {
		t.Errorf("nmap-xml: %v %q %q", err, out, errOut)
	}
	if _, _, err := runRules(t, "match", "--format", "nope", obs); err == nil || !strings.Contains(err.Error(), `--format: unknown format "nope"`) {
		t.Errorf("unknown format: %v", err)
	}
	junk := filepath.Join(dir, "junk.txt")
	if err := os.WriteFile(junk, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runRules(t, "match", junk); err == nil || !strings.Contains(err.Error(), "nothing read as observations") {
		t.Errorf("junk: %v", err)
	}
}
