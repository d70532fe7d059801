package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/term"

	"github.com/netintel/netintel/internal/buildinfo"
	"github.com/netintel/netintel/secrets/client"
)

// secretCommands returns the command of this file, for commandList.
func secretCommands() []*command {
	return []*command{
		&command{name: "secret", summary: "share one-time secrets: send, read, send-file, read-file, status",
			usage: []string{
				"secret send [flags] [SECRET]",
				"secret read [--passphrase] LINK",
				"secret send-file [flags] PATH",
				"secret read-file [--passphrase] [--out PATH] LINK",
				"secret status ID|LINK...",
			},
			desc: `Share one-time secrets through a netintel secrets service, encrypted on this
	machine before they are sent. LINK "-" reads the link from stdin (keeps it
	out of shell history). The host is --host, else $` + envSecretHost + `, else
	` + defaultSecretHost + `. A passphrase comes from $` + envSecretPassphrase + ` or is asked
	for on the terminal. File transfers show a bar with the rate and the time
	left on a terminal (plain lines on a pipe) and a closing line with the size,
	time and rate.`,
			subs: [][2]string{
				{"send", "encrypt a text and print its one-time link; the secret is read from stdin first, then $" + envSecretText + ", then the argument"},
				{"read", "open a text link and print the secret (uses one view); --passphrase asks for the passphrase first"},
				{"send-file", "encrypt a file (up to 100 MiB) and print its one-time link"},
				{"read-file", "open a file link and save the file (never overwrites)"},
				{"status", "say whether secrets are still available (uses no view)"},
			},
			examples: []string{
				"echo 'db password' | netintel secret send --expires 1h",
				"netintel secret read 'http://127.0.0.1:8080/v/#KEYID'",
				"netintel secret send-file --views 2 report.pdf",
				"netintel secret read-file --out ~/Downloads -",
				"netintel secret status ID",
			},
			run: cmdSecret},
	}
}

// Environment variables the secret commands read.
const (
	envSecretHost       = "NETINTEL_SECRET_HOST"
	envSecretText       = "NETINTEL_SECRET"
	envSecretPassphrase = "NETINTEL_SECRET_PASSPHRASE"
	defaultSecretHost   = "http://127.0.0.1:8080"
)

// secretDeps is what the secret commands need from a terminal; tests
// replace it.
type secretDeps struct {
	// stdinTTY: stdin is a terminal (the secret is not piped in).
	stdinTTY bool
	// stderrTTY: draw progress bars on stderr.
	stderrTTY bool
	// prompt asks for a passphrase without echo; nil when there is no
	// terminal to ask on.
	prompt func(label string) (string, error)
	// client options (tests shorten the backoff).
	opts client.Options
}

func cmdSecret(ctx context.Context, env *Env, args []string) error {
	return runSecret(ctx, env, args, realSecretDeps(env))
}

func realSecretDeps(env *Env) secretDeps {
	d := secretDeps{opts: clientOptions()}
	if f, ok := env.Stdin.(*os.File); ok {
		d.stdinTTY = term.IsTerminal(int(f.Fd()))
	}
	if f, ok := env.Stderr.(*os.File); ok {
		d.stderrTTY = term.IsTerminal(int(f.Fd()))
	}
	// Ask on the controlling terminal, so a piped-in secret and a typed
	// passphrase can go together.
	if tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
		tty.Close()
		d.prompt = func(label string) (string, error) {
			tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
			if err != nil {
				return "", err
			}
			defer tty.Close()
			fmt.Fprint(tty, label)
			b, err := term.ReadPassword(int(tty.Fd()))
			fmt.Fprintln(tty)
			return string(b), err
		}
	}
	return d
}

func clientOptions() client.Options {
	v := buildinfo.Version()
	return client.Options{Src: "netintel", Name: "netintel", Version: v, Contact: "https://github.com/netintel/netintel",
		HTTP: &http.Client{Timeout: 10 * time.Minute}}
}

func runSecret(ctx context.Context, env *Env, args []string, d secretDeps) error {
	if done, err := commandHelp(env, secretCommands()[0], args); done {
		return err
	}
	s := &secretCmd{env: env, d: d, c: client.New(d.opts)}
	switch args[0] {
	case "send":
		return s.send(ctx, args[1:])
	case "read":
		return s.read(ctx, args[1:])
	case "send-file":
		return s.sendFile(ctx, args[1:])
	case "read-file":
		return s.readFile(ctx, args[1:])
	case "status":
		return s.status(ctx, args[1:])
	}
	return unknownSub(env, secretCommands()[0], args[0])
}

type secretCmd struct {
	env *Env
	d   secretDeps
	c   *client.Client
}

// parseInterspersed parses flags found anywhere among args and returns the
// positional arguments, so `read LINK --passphrase` works. A secret id may
// begin with '-' (it is 22 base64url characters); such an argument is taken
// as an id, never as a flag, since no flag name is that long.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		cut := len(args)
		for i, a := range args {
			if strings.HasPrefix(a, "-") && client.ValidID(a) {
				cut = i
				break
			}
		}
		rest := args[:cut]
		for len(rest) > 0 {
			if err := fs.Parse(rest); err != nil {
				return nil, err
			}
			if fs.NArg() == 0 {
				break
			}
			pos = append(pos, fs.Arg(0))
			rest = fs.Args()[1:]
		}
		if cut == len(args) {
			break
		}
		pos = append(pos, args[cut])
		args = args[cut+1:]
	}
	return pos, nil
}

// saveFlags are the flags of send and send-file.
type saveFlags struct {
	host       *string
	views      *int
	expires    *string
	passphrase *bool
}

func (s *secretCmd) addSave(fs *flag.FlagSet) *saveFlags {
	return &saveFlags{
		host:       fs.String("host", "", "secret host, https://name[:port] (plain http only on loopback); default $"+envSecretHost+" or "+defaultSecretHost),
		views:      fs.Int("views", 1, "how many times the link can be opened, 1 to 10"),
		expires:    fs.String("expires", "24h", "lifetime, 1s to 30d (Go duration, or a number of days like 7d)"),
		passphrase: fs.Bool("passphrase", false, "protect with a passphrase ($"+envSecretPassphrase+", else asked for on the terminal)"),
	}
}

func (s *secretCmd) host(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if h := s.env.Getenv(envSecretHost); h != "" {
		return h
	}
	return defaultSecretHost
}

// parseExpires reads a Go duration or whole days ("7d").
func parseExpires(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	var d time.Duration
	var err error
	if days, ok := strings.CutSuffix(v, "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		d = time.Duration(n) * 24 * time.Hour
	} else {
		d, err = time.ParseDuration(v)
	}
	if err != nil || d < time.Second || d > client.MaxExpiry || d%time.Second != 0 {
		return 0, fmt.Errorf("--expires: must be whole seconds from 1s to 30d (got %q)", v)
	}
	return d, nil
}

// options validates the save flags before anything is read or sent.
func (s *secretCmd) options(f *saveFlags) (client.SaveOptions, error) {
	var o client.SaveOptions
	if *f.views < 1 || *f.views > client.MaxViews {
		return o, fmt.Errorf("--views: must be 1 to %d (got %d)", client.MaxViews, *f.views)
	}
	d, err := parseExpires(*f.expires)
	if err != nil {
		return o, err
	}
	o.Views, o.Expiry = *f.views, d
	if *f.passphrase {
		p, err := s.newPassphrase()
		if err != nil {
			return o, err
		}
		o.Passphrase = p
	}
	return o, nil
}

// newPassphrase takes the passphrase of a new secret from the environment
// or asks twice on the terminal.
func (s *secretCmd) newPassphrase() (string, error) {
	if p := s.env.Getenv(envSecretPassphrase); p != "" {
		return p, nil
	}
	if s.d.prompt == nil {
		return "", fmt.Errorf("--passphrase: no terminal to ask on; set $%s", envSecretPassphrase)
	}
	p, err := s.d.prompt("Passphrase: ")
	if err != nil {
		return "", fmt.Errorf("read passphrase: %w", err)
	}
	if p == "" {
		return "", errors.New("--passphrase: empty passphrase")
	}
	again, err := s.d.prompt("Passphrase again: ")
	if err != nil {
		return "", fmt.Errorf("read passphrase: %w", err)
	}
	if again != p {
		return "", errors.New("--passphrase: the two passphrases differ")
	}
	return p, nil
}

// secretText takes the secret from stdin first, then the environment,
// then the argument.
func (s *secretCmd) secretText(pos []string) (string, error) {
	if len(pos) > 1 {
		return "", errors.New("send: give the secret as one argument (quote it), or pipe it on stdin")
	}
	if !s.d.stdinTTY && s.env.Stdin != nil {
		b, err := io.ReadAll(io.LimitReader(s.env.Stdin, client.MaxTextBody+1))
		if err != nil {
			return "", fmt.Errorf("read stdin: %w", err)
		}
		if len(b) > 0 {
			return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), nil
		}
	}
	if v := s.env.Getenv(envSecretText); v != "" {
		return v, nil
	}
	if len(pos) == 1 && pos[0] != "" {
		return pos[0], nil
	}
	return "", errors.New("send: no secret: pipe it on stdin, set $" + envSecretText + ", or give it as an argument")
}

func (s *secretCmd) send(ctx context.Context, args []string) error {
	fs := newFlags(s.env, "secret send")
	f := s.addSave(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	o, err := s.options(f)
	if err != nil {
		return err
	}
	text, err := s.secretText(pos)
	if err != nil {
		return err
	}
	l, err := s.c.CreateText(ctx, s.host(*f.host), text, o)
	if err != nil {
		return explain(err)
	}
	fmt.Fprintln(s.env.Stdout, l.String())
	s.note(o)
	return nil
}

func (s *secretCmd) note(o client.SaveOptions) {
	msg := fmt.Sprintf("one-time link: %d view(s), expires in %s", o.Views, o.Expiry)
	if o.Passphrase != "" {
		msg += "; send the passphrase another way, it is not in the link"
	}
	fmt.Fprintln(s.env.Stderr, msg)
}

// linkArg reads the one LINK argument; "-" reads it from stdin.
func (s *secretCmd) linkArg(cmd string, pos []string, kind client.Kind) (client.Link, error) {
	if len(pos) != 1 {
		return client.Link{}, fmt.Errorf("%s: give one LINK (or - to read it from stdin)", cmd)
	}
	raw := pos[0]
	if raw == "-" {
		line, err := bufio.NewReader(s.env.Stdin).ReadString('\n')
		if err != nil && line == "" {
			return client.Link{}, fmt.Errorf("%s: no link on stdin", cmd)
		}
		raw = line
	}
	l, err := client.ParseLink(raw)
	if err != nil {
		return l, explain(err)
	}
	if l.Kind != kind {
		other := map[client.Kind]string{client.KindText: "read", client.KindFile: "read-file"}[l.Kind]
		return l, fmt.Errorf("%s: this is a %s link: use `netintel secret %s`", cmd, map[client.Kind]string{client.KindText: "text", client.KindFile: "file"}[l.Kind], other)
	}
	return l, nil
}

// withPassphrase runs a read; on `wrong key` it asks for the passphrase
// on the terminal (three tries) or explains how to give one. ask (the
// --passphrase flag) asks before the first try when the environment has none.
func (s *secretCmd) withPassphrase(ask bool, read func(passphrase string) error) error {
	p := s.env.Getenv(envSecretPassphrase)
	if ask && p == "" {
		if s.d.prompt == nil {
			return fmt.Errorf("--passphrase: no terminal to ask on; set $%s", envSecretPassphrase)
		}
		var err error
		if p, err = s.d.prompt("Passphrase: "); err != nil {
			return fmt.Errorf("read passphrase: %w", err)
		}
	}
	err := read(p)
	for try := 0; errors.Is(err, client.ErrWrongKey) && s.d.prompt != nil && try < 3; try++ {
		label := "This secret needs a passphrase: "
		if try > 0 || p != "" {
			label = "Wrong passphrase, try again: "
		}
		p, err = s.d.prompt(label)
		if err != nil {
			return fmt.Errorf("read passphrase: %w", err)
		}
		err = read(p)
	}
	return explain(err)
}

func (s *secretCmd) read(ctx context.Context, args []string) error {
	fs := newFlags(s.env, "secret read")
	ask := fs.Bool("passphrase", false, "ask for the passphrase before reading (else asked only on `wrong key`); $"+envSecretPassphrase+" is used when set")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	l, err := s.linkArg("read", pos, client.KindText)
	if err != nil {
		return err
	}
	var text string
	var info client.ReadInfo
	if err := s.withPassphrase(*ask, func(p string) (err error) {
		text, info, err = s.c.ReadText(ctx, l, p)
		return err
	}); err != nil {
		return err
	}
	fmt.Fprint(s.env.Stdout, text)
	if !strings.HasSuffix(text, "\n") {
		fmt.Fprintln(s.env.Stdout)
	}
	s.viewsLeft(info)
	return nil
}

func (s *secretCmd) viewsLeft(info client.ReadInfo) {
	switch {
	case info.ViewsLeft == 0:
		fmt.Fprintln(s.env.Stderr, "that was the last view: the secret is deleted")
	case info.ViewsLeft > 0:
		fmt.Fprintf(s.env.Stderr, "%d view(s) left\n", info.ViewsLeft)
	}
}

func (s *secretCmd) sendFile(ctx context.Context, args []string) error {
	fs := newFlags(s.env, "secret send-file")
	f := s.addSave(fs)
	name := fs.String("name", "", "file name to store (default: the base name of PATH)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("send-file: give one PATH")
	}
	st, err := os.Stat(pos[0])
	if err != nil {
		return fmt.Errorf("send-file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("send-file: %s is not a regular file", pos[0])
	}
	meta := client.FileMeta{Name: filepath.Base(pos[0])}
	if *name != "" {
		meta.Name = *name
	}
	if size := client.EncryptedFileSize(meta, st.Size()); size > client.MaxEncryptedFile {
		return fmt.Errorf("send-file: %s is too large (%d bytes; at most about 100 MiB)", pos[0], st.Size())
	}
	o, err := s.options(f)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(pos[0])
	if err != nil {
		return fmt.Errorf("send-file: %w", err)
	}
	meta.Type = mime.TypeByExtension(filepath.Ext(meta.Name))
	if meta.Type == "" {
		meta.Type = http.DetectContentType(data)
	}
	bar := s.progress("upload")
	l, err := s.c.CreateFile(ctx, s.host(*f.host), meta, data, o, bar.update)
	bar.done()
	if err != nil {
		return explain(err)
	}
	fmt.Fprintln(s.env.Stdout, l.String())
	s.note(o)
	return nil
}

func (s *secretCmd) readFile(ctx context.Context, args []string) error {
	fs := newFlags(s.env, "secret read-file")
	ask := fs.Bool("passphrase", false, "ask for the passphrase before reading (else asked only on `wrong key`); $"+envSecretPassphrase+" is used when set")
	out := fs.String("out", "", "where to save: a file path or a folder (default: the sent name in the current folder); - for stdout. An existing file is never overwritten: a free name is picked")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	l, err := s.linkArg("read-file", pos, client.KindFile)
	if err != nil {
		return err
	}
	var (
		meta client.FileMeta
		data []byte
		info client.ReadInfo
	)
	bar := s.progress("download")
	err = s.withPassphrase(*ask, func(p string) (err error) {
		meta, data, info, err = s.c.ReadFile(ctx, l, p, bar.update)
		return err
	})
	bar.done()
	if err != nil {
		return err
	}
	if *out == "-" {
		_, err := s.env.Stdout.Write(data)
		s.viewsLeft(info)
		return err
	}
	path, err := saveNew(*out, meta.Name, data)
	if err != nil {
		return fmt.Errorf("read-file: the secret was read but not saved: %w", err)
	}
	fmt.Fprintf(s.env.Stderr, "saved %s (%d bytes)\n", path, len(data))
	s.viewsLeft(info)
	return nil
}

// safeName turns a sent file name into a plain local name: no folders, no
// control characters, not hidden, never empty.
func safeName(name string) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '/' || r == '\\' {
			return '_'
		}
		return r
	}, name)
	name = strings.TrimLeft(strings.TrimSpace(name), ".")
	if name == "" {
		name = "secret-file"
	}
	if len(name) > 200 {
		ext := filepath.Ext(name)
		if len(ext) > 20 {
			ext = ""
		}
		name = name[:200-len(ext)] + ext
	}
	return name
}

// saveNew writes data to a file that did not exist: out (a path or a
// folder) or the sent name; when taken, "name (1).ext", "name (2).ext"...
func saveNew(out, sentName string, data []byte) (string, error) {
	path := safeName(sentName)
	if out != "" {
		path = out
		if st, err := os.Stat(out); err == nil && st.IsDir() {
			path = filepath.Join(out, safeName(sentName))
		}
	}
	ext := filepath.Ext(path)
	stem := strings.TrimSuffix(path, ext)
	for i := 0; i < 1000; i++ {
		p := path
		if i > 0 {
			p = fmt.Sprintf("%s (%d)%s", stem, i, ext)
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			os.Remove(p)
			return "", err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			os.Remove(p)
			return "", err
		}
		return p, f.Close()
	}
	return "", fmt.Errorf("no free name near %s", path)
}

func (s *secretCmd) status(ctx context.Context, args []string) error {
	fs := newFlags(s.env, "secret status")
	host := fs.String("host", "", "secret host (default: the links' host, else $"+envSecretHost+" or "+defaultSecretHost+")")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return errors.New("status: give one or more IDs or links")
	}
	var ids []string
	origin := ""
	for i, a := range pos {
		if strings.Contains(a, "#") {
			l, err := client.ParseLink(a)
			if err != nil {
				return explain(err)
			}
			if origin != "" && origin != l.Origin {
				return errors.New("status: links from different hosts; check one host at a time")
			}
			origin = l.Origin
			ids = append(ids, l.ID)
			continue
		}
		if !client.ValidID(a) {
			return fmt.Errorf("status: argument %d is neither an id (22 letters, digits, - or _) nor a link", i+1)
		}
		ids = append(ids, a)
	}
	h := *host
	if h == "" {
		h = origin
	}
	got, err := s.c.Status(ctx, s.host(h), ids)
	if err != nil {
		return explain(err)
	}
	for _, id := range ids {
		state := "gone (read, expired or unknown)"
		if got[id] {
			state = "available"
		}
		fmt.Fprintf(s.env.Stdout, "%s\t%s\n", id, state)
	}
	return nil
}

// explain turns client errors into the one-line messages users see.
func explain(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, client.ErrWrongKey):
		return fmt.Errorf("wrong key: this secret needs a passphrase (set $%s or run on a terminal to be asked); no view was used", envSecretPassphrase)
	case errors.Is(err, client.ErrNoMessage):
		return errors.New("no message: the secret was already read, has expired, or never existed")
	case errors.Is(err, client.ErrBrokenLink):
		return fmt.Errorf("broken link: ask the sender for the whole link (%s)", strings.TrimPrefix(err.Error(), client.ErrBrokenLink.Error()+": "))
	case errors.Is(err, client.ErrRateLimited):
		return errors.New("too many requests (HTTP 429): wait a minute and try again")
	case errors.Is(err, client.ErrUnsupportedHost), errors.Is(err, client.ErrInsecureHost):
		return err
	}
	return err
}

// progress starts the meter of a file transfer: a bar with the rate and
// the time left on a terminal, plain lines otherwise.
func (s *secretCmd) progress(label string) *transfer {
	return &transfer{m: startMeter(s.env.Stderr, s.d.stderrTTY, label, "", 0), w: s.env.Stderr, label: label}
}

// transfer adapts a meter to the client's progress callback.
type transfer struct {
	m     *meter
	w     io.Writer
	label string
	n     int64
}

func (t *transfer) update(done, total int64) {
	t.n = done
	t.m.set(done, total)
}

// done ends the meter and prints the closing summary.
func (t *transfer) done() {
	sum := t.m.done()
	if t.n > 0 {
		fmt.Fprintf(t.w, "%s: %s %s\n", t.label, humanBytes(t.n), sum)
	}
}
