package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/testutil"
)

// runCLI runs the command in process and returns stdout, stderr and the
// exit status main would give.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var o, e bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
	code := exitCode(run(t.Context(), env, args), &e)
	return o.String(), e.String(), code
}

// TestCLI_HelpOfEveryCommand: every command's help has the one layout
// (Usage, description, Flags or Subcommands, Examples) on stdout with exit
// 0, through -h, --help and `netintel help COMMAND`.
func TestCLI_HelpOfEveryCommand(t *testing.T) {
	t.Parallel()
	var names []string
	for _, c := range commandList() {
		if slices.Contains(names, c.name) {
			t.Errorf("two commands named %s", c.name)
		}
		names = append(names, c.name)
	}
	slices.Sort(names)
	withSubs := []string{"dataset", "keys", "rules", "secret", "state"}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			for _, args := range [][]string{{name, "-h"}, {name, "--help"}, {"help", name}} {
				out, errOut, code := runCLI(t, args...)
				if code != 0 {
					t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
				}
				if !strings.HasPrefix(out, "Usage:\n  netintel "+name) {
					t.Errorf("%v: no usage line first:\n%s", args, out)
				}
				ex := strings.Index(out, "\nExamples:\n  ")
				if ex < 0 || !strings.Contains(out[ex:], "netintel "+name) && !strings.Contains(out[ex:], "make run") {
					t.Errorf("%v: no Examples block with a call of the command:\n%s", args, out)
				}
				if slices.Contains(withSubs, name) {
					if !strings.Contains(out, "\nSubcommands:\n") {
						t.Errorf("%v: no Subcommands:\n%s", args, out)
					}
				} else if name != "version" && !strings.Contains(out, "\nFlags:\n") {
					t.Errorf("%v: no Flags:\n%s", args, out)
				}
			}
		})
	}
	// A subcommand's flags have the same layout.
	out, _, code := runCLI(t, "keys", "create", "-h")
	if code != 0 || !strings.HasPrefix(out, "Usage:\n  netintel keys create") || !strings.Contains(out, "-tier") || !strings.Contains(out, "Examples:\n  netintel keys create") {
		t.Errorf("keys create -h: %d\n%s", code, out)
	}
	// A subcommand that is the prefix of another shows only its own.
	out, _, _ = runCLI(t, "secret", "send", "-h")
	if strings.Contains(out, "send-file") || !strings.Contains(out, "Usage:\n  netintel secret send [flags] [SECRET]\n") || !strings.Contains(out, "Examples:\n  echo 'db password' | netintel secret send --expires 1h\n") {
		t.Errorf("secret send -h:\n%s", out)
	}
	// The overview lists every command.
	out, _, code = runCLI(t, "--help")
	for _, n := range names {
		if code != 0 || !strings.Contains(out, "\n  "+n+" ") {
			t.Errorf("overview lacks %s:\n%s", n, out)
		}
	}
}

// TestCLI_WorkerHelpListsWorkers: `worker --help` names every worker the
// modules register, and the list is exactly theirs.
func TestCLI_WorkerHelpListsWorkers(t *testing.T) {
	t.Parallel()
	out, _, _ := runCLI(t, "worker", "--help")
	s, _ := openTestSystem(t, func(string) string { return "" })
	registered := s.workerNames()
	slices.Sort(registered)
	listed := workerNames()
	slices.Sort(listed)
	if !slices.Equal(registered, listed) {
		t.Errorf("help lists workers %v, the modules register %v", listed, registered)
	}
	for _, w := range registered {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(w) + ` +\S`).MatchString(out) {
			t.Errorf("worker --help does not list %s:\n%s", w, out)
		}
	}
	if _, errOut, code := runCLI(t, "worker", "--nats", "nats://127.0.0.1:1", "enrichh"); code != 2 || !strings.Contains(errOut, `unknown worker "enrichh" (have: enrich, probe, secrets-sweeper)`) {
		t.Errorf("unknown worker: %d %q", code, errOut)
	}
}

// TestCLI_ExitStatus: a bare netintel prints the overview on stderr and
// exits 2; usage errors exit 2, failures 1 (the built binary).
func TestCLI_ExitStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "Usage:\n  netintel"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"--log-format", "xml", "version"}, 2, `--log-format: "xml" is not text or json`},
		{[]string{"keys"}, 2, "keys: name a subcommand"},
		{[]string{"validate", "/nonexistent/pipeline.yaml"}, 1, "read config"},
		{[]string{"help"}, 0, "Commands:"},
	}
	for _, tt := range tests {
		cmd := exec.Command(binPath, tt.args...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		if code != tt.code || !strings.Contains(o.String()+e.String(), tt.want) {
			t.Errorf("netintel %v: exit %d (want %d), output lacks %q:\n%s%s", tt.args, code, tt.code, tt.want, o.String(), e.String())
		}
	}
	// The bare overview goes to stderr, not stdout.
	cmd := exec.Command(binPath)
	out, _ := cmd.Output()
	if len(out) != 0 {
		t.Errorf("bare netintel wrote to stdout: %q", out)
	}
}

// TestCLI_Version: `netintel version` and `--version` print the version
// given at link time (binPath is stamped as `make build` stamps it), the
// commit, the Go version and the platform; buildinfo's own test covers the
// fallback of an unstamped build.
func TestCLI_Version(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, err := exec.Command(binPath, args...).Output()
		if err != nil || !regexp.MustCompile(`^netintel \S+ .*go1\.\d+.* \w+/\w+\n$`).Match(out) {
			t.Errorf("%v: %v %q", args, err, out)
		}
		if !strings.HasPrefix(string(out), "netintel "+testVersion+" ") {
			t.Errorf("%v: -ldflags version: %q", args, out)
		}
	}
}

// TestCLI_LogFormat: --log-format json (global or the command's) makes
// every stderr line a JSON object, the progress lines included, with
// durations in seconds; text makes none JSON.
func TestCLI_LogFormat(t *testing.T) {
	t.Parallel()
	n, _ := startEnrich(t)
	feed := "../../samples/tor-exit-addresses"
	for _, tt := range []struct {
		name string
		args []string
		json bool
	}{
		{"global json", []string{"--log-format", "json", "ingest", "--nats", n.URL, "--format", "tor-exits", feed}, true},
		{"command json", []string{"ingest", "--log-format=json", "--nats", n.URL, "--format", "tor-exits", feed}, true},
		{"text", []string{"--log-format", "text", "ingest", "--nats", n.URL, "--format", "tor-exits", feed}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(binPath, tt.args...)
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\n%s", err, e.String())
			}
			lines := strings.Split(strings.TrimSpace(e.String()), "\n")
			var progress, ingested int
			for _, l := range lines {
				var m map[string]any
				isJSON := json.Unmarshal([]byte(l), &m) == nil
				if isJSON != tt.json {
					t.Errorf("line %q: JSON %v, want %v", l, isJSON, tt.json)
				}
				if m["msg"] == "progress" {
					progress++
					if _, ok := m["elapsed"].(float64); !ok {
						t.Errorf("progress elapsed is not seconds: %q", l)
					}
				}
				if m["msg"] == "ingested" || strings.Contains(l, "msg=ingested") {
					ingested++
				}
			}
			if ingested != 1 || (tt.json && progress == 0) {
				t.Errorf("%d ingested lines, %d progress records:\n%s", ingested, progress, e.String())
			}
		})
	}
}

// TestIngestCommand_ProgressOnAPipe: stderr that is not a terminal gets
// plain progress lines up to 100%, and stdout a closing summary with the
// size, the time and the rates.
func TestIngestCommand_ProgressOnAPipe(t *testing.T) {
	t.Parallel()
	n, _ := startEnrich(t)
	out, errOut, code := runCLI(t, "ingest", "--nats", n.URL, "--log-level", "warn", "--format", "observations", "../../samples/observations.ndjson")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	last := lines[len(lines)-1]
	if !regexp.MustCompile(`^ingest observations\.ndjson: 100% 10\.7 KiB of 10\.7 KiB, [\d.]+ [KMG]?i?B/s$`).MatchString(last) {
		t.Errorf("last progress line %q; all:\n%s", last, errOut)
	}
	if strings.Contains(errOut, "\r") || strings.Contains(errOut, "\x1b[") {
		t.Errorf("terminal control characters on a pipe: %q", errOut)
	}
	if !regexp.MustCompile(`20 observations read, 20 stored, .*; 10\.7 KiB read in [\d.]+s, [\d.]+ [KMG]?i?B/s \([\d.]+ observations/s\)`).MatchString(out) {
		t.Errorf("summary %q", out)
	}
}

// TestMeter_BarOnATerminal: on a terminal the bar shows the count, the
// rate and the time left.
func TestMeter_BarOnATerminal(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	m := startMeter(&b, true, "upload", "", 4<<20)
	m.set(1<<20, 4<<20)
	time.Sleep(150 * time.Millisecond) // past the bar's redraw throttle
	m.set(2<<20, 4<<20)
	sum := m.done()
	out := b.String()
	for _, want := range []string{"upload", "50%", "MiB/s", "MiB"} {
		if !strings.Contains(out, want) {
			t.Errorf("bar lacks %q: %q", want, out)
		}
	}
	if !regexp.MustCompile(`\[[\d.]+m?s:[\d.]+m?s\]`).MatchString(out) {
		t.Errorf("bar shows no elapsed:left time: %q", out)
	}
	if !strings.HasPrefix(sum, "in ") || !strings.HasSuffix(sum, "/s") {
		t.Errorf("summary %q", sum)
	}
}

// TestIngestCommand_Wait: --wait returns only once enrichment has applied
// every observation: with no enrich worker it does not return done (it
// times out, saying so), and with one the state has every record the
// moment it returns.
func TestIngestCommand_Wait(t *testing.T) {
	t.Parallel()
	n := testutil.StartNATS(t)
	cfg := n.Ensure(t)
	// Observations files are not lists: ingested again, every observation
	// is a duplicate of one stored before, whose copy is waited for.
	feed := "../../samples/observations.ndjson"
	args := []string{"ingest", "--nats", n.URL, "--log-level", "warn", "--format", "observations", "--wait"}
	_, errOut, code := runCLI(t, append(args, "--wait-timeout", "2s", feed)...)
	if code != 1 || !strings.Contains(errOut, "enrichment has not applied the feed within --wait-timeout 2s") {
		t.Fatalf("without a worker: exit %d, %q", code, errOut)
	}
	w, err := enrich.NewWorker(n.JS, cfg.Enrich, nil, nil, testutil.Logger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	out, errOut, code := runCLI(t, append(args, feed)...)
	if code != 0 || !strings.Contains(out, "20 duplicates") || !strings.Contains(out, "enrichment applied every observation published") {
		t.Fatalf("with a worker: exit %d\n%s%s", code, out, errOut)
	}
	st := enrich.NewState(n.JS, "ipstate")
	if r, ok, err := st.Get(t.Context(), "203.0.113.20"); err != nil || !ok || len(r.Assets) == 0 {
		t.Errorf("203.0.113.20 after --wait: %+v %v %v", r, ok, err)
	}
	out, errOut, code = runCLI(t, "ingest", "--nats", n.URL, "--log-level", "warn", "--format", "cidr-list", "--kind", "cdn", "--provider", "Cloudflare", "--wait", "../../samples/cloudflare-ips-v4.txt")
	if code != 0 || !strings.Contains(out, "enrichment applied") {
		t.Fatalf("cloudflare: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "ingest", "--nats", n.URL, "--log-level", "warn", "--format", "tor-exits", "--wait", "../../samples/tor-exit-addresses")
	if code != 0 || !strings.Contains(out, "enrichment applied") {
		t.Fatalf("tor exits: exit %d\n%s%s", code, out, errOut)
	}
	// No WaitIdle here: --wait said it is applied.
	if r, ok, err := st.Get(t.Context(), "104.16.0.0/13"); err != nil || !ok || !r.Has("cdn") {
		t.Errorf("104.16.0.0/13 after --wait: %+v %v %v", r, ok, err)
	}
	var tor int
	if err := st.Hosts(t.Context(), func(r ipmodel.Record) error {
		if r.Has("tor") {
			tor++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	exits := map[string]bool{}
	for _, l := range strings.Split(readFile(t, "../../samples/tor-exit-addresses"), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "ExitAddress" {
			exits[f[1]] = true
		}
	}
	if tor < len(exits) || len(exits) == 0 {
		t.Errorf("%d Tor records right after --wait, the feed has %d exit addresses", tor, len(exits))
	}
}

// TestStateCommand_Get prints records of the binary state as JSON.
func TestStateCommand_Get(t *testing.T) {
	t.Parallel()
	n, _ := startEnrich(t)
	if _, errOut, code := runCLI(t, "ingest", "--nats", n.URL, "--log-level", "warn", "--format", "observations", "--wait", "../../samples/observations.ndjson"); code != 0 {
		t.Fatal(errOut)
	}
	if _, errOut, code := runCLI(t, "ingest", "--nats", n.URL, "--log-level", "warn", "--format", "cidr-list", "--kind", "cdn", "--provider", "Cloudflare", "--wait", "../../samples/cloudflare-ips-v4.txt"); code != 0 {
		t.Fatal(errOut)
	}
	out, errOut, code := runCLI(t, "state", "get", "--nats", n.URL, "203.0.113.20", "104.16.0.0/13")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var host, rng map[string]any
	if err := dec.Decode(&host); err != nil || host["ip"] != "203.0.113.20" {
		t.Fatalf("host record %v %v:\n%s", host, err, out)
	}
	if assets, _ := host["assets"].([]any); len(assets) == 0 {
		t.Errorf("host record has no assets: %v", host)
	}
	if err := dec.Decode(&rng); err != nil || rng["provider"] != "Cloudflare" || !slices.Contains(rng["classifications"].([]any), any("cdn")) {
		t.Fatalf("range record %v %v", rng, err)
	}
	out, _, code = runCLI(t, "state", "get", "--stored", "--nats", n.URL, "203.0.113.20")
	var stored struct {
		Key    string
		Found  bool
		Stored struct{ Assets map[string]any }
	}
	if err := json.Unmarshal([]byte(out), &stored); code != 0 || err != nil || stored.Key != "h.203.0.113.20" || !stored.Found || len(stored.Stored.Assets) == 0 {
		t.Errorf("--stored: exit %d %v %+v\n%s", code, err, stored, out)
	}
	out, errOut, code = runCLI(t, "state", "get", "--nats", n.URL, "192.0.2.99")
	if code != 1 || !strings.Contains(out, `"found": false`) || !strings.Contains(errOut, "1 of 1 not in the state") {
		t.Errorf("missing: %d %q %q", code, out, errOut)
	}
	if _, errOut, code := runCLI(t, "state", "get", "--nats", n.URL, "300.1.2.3"); code != 2 || !strings.Contains(errOut, `"300.1.2.3" is not an address or a CIDR range`) {
		t.Errorf("bad address: %d %q", code, errOut)
	}
}

// TestNatsPub_DocumentedObservation publishes exactly the message
// docs/operators.md shows for `nats pub` (subject, header, body) and sees
// it enriched into the state.
func TestNatsPub_DocumentedObservation(t *testing.T) {
	t.Parallel()
	doc := readFile(t, "../../docs/operators.md")
	m := regexp.MustCompile("(?s)```sh\nnats --server [^\n]+ pub (\\S+) \\\\\n  -H '([^:]+): ([^']+)' \\\\\n  '([^\n]+)'\n```").FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("no `nats pub` example in docs/operators.md")
	}
	subject, hname, hvalue, body := m[1], m[2], m[3], m[4]
	n, _ := startEnrich(t)
	nc, err := nats.Connect(n.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	msg := nats.NewMsg(subject)
	msg.Header.Set(hname, hvalue)
	msg.Data = []byte(body)
	js, _ := nc.JetStream()
	if _, err := js.PublishMsg(msg); err != nil {
		t.Fatalf("publish %s: %v", subject, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := enrich.WaitIdle(ctx, n.JS); err != nil {
		t.Fatal(err)
	}
	var o struct {
		IP     string
		Signal struct{ Provider string }
	}
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "state", "get", "--nats", n.URL, o.IP)
	if code != 0 || !strings.Contains(out, `"vpn"`) || !strings.Contains(out, `"provider": "`+o.Signal.Provider+`"`) {
		t.Fatalf("state of %s after the documented publish: %d\n%s%s", o.IP, code, out, errOut)
	}
	// The documented follow-up command is the one that showed it.
	if !strings.Contains(doc, "netintel state get --data-dir data "+o.IP) {
		t.Error("docs/operators.md does not show `netintel state get` for the published address")
	}
}

// TestRun_PrintedExamplesAnswer200FromAnyFolder runs the binary from an
// empty folder with a pipeline.yaml kept elsewhere (its relative sample
// paths found from its own folder), then runs every `curl` and `open`
// example it prints against it: each answers 200.
func TestRun_PrintedExamplesAnswer200FromAnyFolder(t *testing.T) {
	t.Parallel()
	root, _ := filepath.Abs("../..")
	cfgDir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(root, "pipeline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfgText := regexp.MustCompile(`(?m)^  tld_probe: .*$`).ReplaceAllString(string(b), `  tld_probe: "off"`)
	if err := os.WriteFile(filepath.Join(cfgDir, "pipeline.yaml"), []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "samples"), filepath.Join(cfgDir, "samples")); err != nil {
		t.Fatal(err)
	}
	work, data := t.TempDir(), t.TempDir()
	// validate from that folder: the rules and probe tables are built in.
	v := exec.Command(binPath, "validate", filepath.Join(cfgDir, "pipeline.yaml"))
	v.Dir = work
	if out, err := v.CombinedOutput(); err != nil {
		t.Fatalf("validate from another folder: %v\n%s", err, out)
	}
	p := startProcDir(t, work, "run", "--config", filepath.Join(cfgDir, "pipeline.yaml"), "--data-dir", data, "--listen", "127.0.0.1:0")
	deadline := time.Now().Add(120 * time.Second)
	for !(strings.Contains(p.out(), "Try it") && strings.Contains(p.out(), "openapi.json")) {
		if time.Now().After(deadline) {
			t.Fatalf("no examples printed:\n%s\n%s", p.out(), p.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the rest of the block
	key, err := os.ReadFile(filepath.Join(data, "dev-api-key"))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, line := range strings.Split(p.out(), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "curl ") && !strings.HasPrefix(line, "open ") {
			continue
		}
		n++
		req, err := exampleRequest(line, strings.TrimSpace(string(key)))
		if err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d, want 200", line, resp.StatusCode)
		}
	}
	if n < 8 {
		t.Errorf("%d examples printed, want the bootstrap's and the IP API's:\n%s", n, p.out())
	}
	for _, l := range strings.Split(p.logs(), "\n") {
		if strings.Contains(l, `"level":"ERROR"`) {
			t.Errorf("an ERROR from another folder: %s", l)
		}
	}
}

// exampleRequest turns a printed example (curl [-H H]... [-d BODY] URL,
// or open URL) into a request, with $KEY as the dev key.
func exampleRequest(line, key string) (*http.Request, error) {
	words, err := shellWords(strings.ReplaceAll(line, "$KEY", key))
	if err != nil {
		return nil, err
	}
	var (
		url, body string
		headers   [][2]string
	)
	for i := 1; i < len(words); i++ {
		switch words[i] {
		case "-H":
			i++
			k, v, _ := strings.Cut(words[i], ":")
			headers = append(headers, [2]string{k, strings.TrimSpace(v)})
		case "-d":
			i++
			body = words[i]
		default:
			if strings.HasPrefix(words[i], "http://") && url == "" {
				url = words[i]
			}
		}
	}
	if url == "" {
		return nil, errors.New("no URL")
	}
	method := "GET"
	if body != "" {
		method = "POST"
	}
	var rb io.Reader
	if body != "" {
		rb = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rb)
	if err != nil {
		return nil, err
	}
	for _, h := range headers {
		req.Header.Set(h[0], h[1])
	}
	return req, nil
}

// shellWords splits a line as a POSIX shell would for the quoting the
// examples use: '...', "..." and bare words.
func shellWords(s string) ([]string, error) {
	var (
		out   []string
		cur   strings.Builder
		in    rune
		inTok bool
	)
	for _, r := range s {
		switch {
		case in != 0 && r == in:
			in = 0
		case in != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			in, inTok = r, true
		case r == ' ' || r == '\t':
			if inTok {
				out = append(out, cur.String())
				cur.Reset()
				inTok = false
			}
		default:
			cur.WriteRune(r)
			inTok = true
		}
	}
	if in != 0 {
		return nil, errors.New("unclosed quote")
	}
	if inTok {
		out = append(out, cur.String())
	}
	return out, nil
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
