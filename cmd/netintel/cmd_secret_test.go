package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/secrets/client"
	"github.com/netintel/netintel/secrets/client/fakehost"
)

type secretRun struct {
	t      *testing.T
	host   *fakehost.Host
	url    string
	env    map[string]string
	prompt []string // answers for the terminal prompt; nil = no terminal
	asked  int
	tty    bool
}

func newSecretRun(t *testing.T) *secretRun {
	t.Helper()
	h := fakehost.New()
	mux := http.NewServeMux()
	h.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &secretRun{t: t, host: h, url: srv.URL, env: map[string]string{envSecretHost: srv.URL}}
}

// run runs `netintel secret ARGS` with stdin and returns stdout, stderr.
func (r *secretRun) run(stdin string, args ...string) (string, string, error) {
	r.t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return r.env[k] }}
	d := secretDeps{stdinTTY: stdin == "", stderrTTY: r.tty,
		opts: client.Options{Src: "netintel", Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}}
	if r.prompt != nil {
		d.prompt = func(string) (string, error) {
			if r.asked >= len(r.prompt) {
				return "", errors.New("no more answers")
			}
			r.asked++
			return r.prompt[r.asked-1], nil
		}
	}
	err := runSecret(r.t.Context(), env, args, d)
	return out.String(), errb.String(), err
}

func (r *secretRun) mustRun(stdin string, args ...string) string {
	r.t.Helper()
	out, errs, err := r.run(stdin, args...)
	if err != nil {
		r.t.Fatalf("secret %v: %v (stderr %q)", args, err, errs)
	}
	return out
}

func TestSecretCLI_SendRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		stdin string
		env   string
		args  []string
		want  string
	}{
		{"stdin wins", "from stdin\n", "from env", []string{"from arg"}, "from stdin"},
		{"env before argument", "", "from env", []string{"from arg"}, "from env"},
		{"argument", "", "", []string{"from arg"}, "from arg"},
		{"multi-line stdin keeps inner newlines", "a\nb\n", "", nil, "a\nb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newSecretRun(t)
			r.env[envSecretText] = tc.env
			link := strings.TrimSpace(r.mustRun(tc.stdin, append([]string{"send", "--views", "2"}, tc.args...)...))
			if _, err := client.ParseLink(link); err != nil || strings.Count(link, "\n") != 0 {
				t.Fatalf("send printed %q: %v", link, err)
			}
			got := r.mustRun("", "read", link)
			if got != tc.want+"\n" {
				t.Fatalf("read %q, want %q", got, tc.want)
			}
			// The link may come on stdin too.
			if got := r.mustRun(link+"\n", "read", "-"); got != tc.want+"\n" {
				t.Fatalf("read - %q", got)
			}
			_, _, err := r.run("", "read", link)
			if err == nil || !strings.HasPrefix(err.Error(), "no message:") {
				t.Fatalf("third read: %v", err)
			}
		})
	}
}

func TestSecretCLI_RefusedBeforeSending(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"views 11", []string{"send", "--views", "11", "x"}, "--views: must be 1 to 10"},
		{"views 0", []string{"send", "--views=0", "x"}, "--views"},
		{"expires 31d", []string{"send", "--expires", "31d", "x"}, "--expires"},
		{"expires 500ms", []string{"send", "--expires", "500ms", "x"}, "--expires"},
		{"expires junk", []string{"send", "--expires", "soon", "x"}, "--expires"},
		{"no secret", []string{"send"}, "no secret"},
		{"plain http host", []string{"send", "--host", "http://example.com", "x"}, "insecure host"},
		{"passphrase without terminal", []string{"send", "--passphrase", "x"}, "no terminal"},
		{"broken link", []string{"read", "https://h.example/v/#abc"}, "broken link:"},
		{"file link to read", []string{"read", "https://h.example/f/#K7bQ2mXp9vRt4nLw8zYcAbCdEfGhIjKlMnOpQrStUv"}, "read-file"},
		{"bad status id", []string{"status", "nope"}, "neither an id"},
		{"unknown command", []string{"burn"}, "unknown subcommand"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newSecretRun(t)
			_, _, err := r.run("", tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line with %q", err, tc.want)
			}
			if n := len(r.host.Requests()); n != 0 {
				t.Fatalf("%d requests sent", n)
			}
		})
	}
}

func TestSecretCLI_Passphrase(t *testing.T) {
	t.Parallel()
	r := newSecretRun(t)
	r.env[envSecretPassphrase] = "from env"
	link := strings.TrimSpace(r.mustRun("", "send", "--passphrase", "--views", "4", "guarded"))
	delete(r.env, envSecretPassphrase)

	// No terminal, no passphrase: a one-line wrong key message.
	_, _, err := r.run("", "read", link)
	if err == nil || !strings.HasPrefix(err.Error(), "wrong key:") || !strings.Contains(err.Error(), envSecretPassphrase) {
		t.Fatalf("got %v", err)
	}
	// On a terminal: asked, wrong once, then right.
	r.prompt = []string{"nope", "from env"}
	if got := r.mustRun("", "read", link); got != "guarded\n" || r.asked != 2 {
		t.Fatalf("read %q after %d prompts", got, r.asked)
	}
	// --passphrase asks before the first try: one request, no wrong key.
	r.prompt, r.asked = []string{"from env"}, 0
	gets := len(r.host.Requests())
	if got := r.mustRun("", "read", "--passphrase", link); got != "guarded\n" || r.asked != 1 || len(r.host.Requests()) != gets+1 {
		t.Fatalf("read --passphrase %q, %d prompts, %d requests", got, r.asked, len(r.host.Requests())-gets)
	}
	// From the environment, no prompt.
	r.prompt, r.asked = []string{}, 0
	r.env[envSecretPassphrase] = "from env"
	if got := r.mustRun("", "read", link); got != "guarded\n" || r.asked != 0 {
		t.Fatalf("read %q", got)
	}

	// A new passphrase is asked twice and must match.
	delete(r.env, envSecretPassphrase)
	r.prompt, r.asked = []string{"one", "two"}, 0
	if _, _, err := r.run("", "send", "--passphrase", "x"); err == nil || !strings.Contains(err.Error(), "differ") {
		t.Fatalf("mismatch: %v", err)
	}
	r.prompt, r.asked = []string{"same", "same"}, 0
	link = strings.TrimSpace(r.mustRun("", "send", "x", "--passphrase"))
	r.env[envSecretPassphrase] = "same"
	if got := r.mustRun("", "read", link); got != "x\n" {
		t.Fatalf("read %q", got)
	}
}

func TestSecretCLI_RateLimited(t *testing.T) {
	t.Parallel()
	r := newSecretRun(t)
	link := strings.TrimSpace(r.mustRun("", "send", "x"))
	r.host.Inject("get", fakehost.Fault{Code: 429})
	_, _, err := r.run("", "read", link)
	if err == nil || !strings.Contains(err.Error(), "429") {
		t.Fatalf("got %v", err)
	}
	if got := r.mustRun("", "read", link); got != "x\n" {
		t.Fatal("429 used the view")
	}
}

func TestSecretCLI_Files(t *testing.T) {
	t.Parallel()
	r := newSecretRun(t)
	r.tty = true // draw the progress bar
	dir := t.TempDir()
	src := filepath.Join(dir, "report.txt")
	data := bytes.Repeat([]byte("line of the report\n"), 300000) // ~5.4 MiB: chunked
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, err := r.run("", "send-file", src, "--views", "3")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errs, "100%") || !strings.Contains(errs, "upload") || !strings.Contains(errs, "/s") {
		t.Fatalf("no progress bar: %q", errs)
	}
	link := strings.TrimSpace(out)
	outDir := filepath.Join(dir, "out")
	if err := os.Mkdir(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Existing files are never overwritten: a free name is picked.
	if err := os.WriteFile(filepath.Join(outDir, "report.txt"), []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errs, err = r.run("", "read-file", link, "--out", outDir)
	if err != nil || !strings.Contains(errs, "download") || !strings.Contains(errs, "100%") {
		t.Fatalf("read-file: %v %q", err, errs)
	}
	got, err := os.ReadFile(filepath.Join(outDir, "report (1).txt"))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("saved file: %v", err)
	}
	if keep, _ := os.ReadFile(filepath.Join(outDir, "report.txt")); string(keep) != "keep me" {
		t.Fatal("overwrote an existing file")
	}
	// --out naming an existing file picks "name (1)" next to it too.
	target := filepath.Join(outDir, "mine.txt")
	if err := os.WriteFile(target, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.run("", "read-file", link, "--out", target); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(outDir, "mine (1).txt")); !bytes.Equal(got, data) {
		t.Fatal("not saved as mine (1).txt")
	}
	// Status: still available (one view left), then gone.
	l, _ := client.ParseLink(link)
	if got := r.mustRun("", "status", link); !strings.Contains(got, l.ID+"\tavailable") {
		t.Fatalf("status %q", got)
	}
	if got := r.mustRun("", "read-file", link, "--out", "-"); got != string(data) {
		t.Fatal("stdout copy differs")
	}
	if got := r.mustRun("", "status", l.ID); !strings.Contains(got, l.ID+"\tgone") {
		t.Fatalf("status %q", got)
	}
}

func TestSafeName(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{"../../etc/passwd", "_.._etc_passwd"},
		{".bashrc", "bashrc"},
		{"a\x00b\nc", "a_b_c"},
		{"", "secret-file"},
		{"...", "secret-file"},
		{`C:\x\y.txt`, "C:_x_y.txt"},
	}
	for _, tc := range tests {
		if got := safeName(tc.in); got != tc.want {
			t.Errorf("safeName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Secret ids are base64url and one in 64 begins with '-'; such an id must be
// read as an argument, not as an unknown flag (CI once drew one).
func TestParseInterspersed_DashID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args     []string
		wantPos  []string
		wantHost string
		wantErr  bool
	}{
		{[]string{"-cvML04SVGyxY7hVuMf87k"}, []string{"-cvML04SVGyxY7hVuMf87k"}, "", false},
		{[]string{"--host", "http://127.0.0.1:1", "-cvML04SVGyxY7hVuMf87k", "abcdefghijklmnopqrstuv"},
			[]string{"-cvML04SVGyxY7hVuMf87k", "abcdefghijklmnopqrstuv"}, "http://127.0.0.1:1", false},
		{[]string{"-cvML04SVGyxY7hVuMf87k", "--host", "h", "x"}, []string{"-cvML04SVGyxY7hVuMf87k", "x"}, "h", false},
		{[]string{"a", "--host=h", "b"}, []string{"a", "b"}, "h", false},
		{[]string{"--", "--host"}, []string{"--host"}, "", false},
		{[]string{"-nosuchflag"}, nil, "", true},
		{[]string{"a", "--host"}, nil, "", true},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		host := fs.String("host", "", "")
		pos, err := parseInterspersed(fs, tt.args)
		if (err != nil) != tt.wantErr {
			t.Fatalf("%q: err %v, want error %v", tt.args, err, tt.wantErr)
		}
		if tt.wantErr {
			continue
		}
		if !slices.Equal(pos, tt.wantPos) || *host != tt.wantHost {
			t.Errorf("%q: got %q host %q, want %q host %q", tt.args, pos, *host, tt.wantPos, tt.wantHost)
		}
	}
}
