// Package browsertest drives pages in one shared headless Debian Chromium
// (chromedp), recording each tab's console messages and every request it
// makes, for tests that must see a page as a user does. It is the
// api/secretpages test helpers made shareable.
package browsertest

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Chromium is one headless browser; tests open tabs in it. Start it in
// TestMain (starting is the slow part) and Close it after m.Run.
type Chromium struct {
	dir    string
	ctx    context.Context
	cancel func()
	once   sync.Once
	err    error
}

// Start prepares a headless Chromium with a fresh profile and the given
// window size; the process starts on the first Tab.
func Start(width, height int) (*Chromium, error) {
	dir, err := os.MkdirTemp("", "chromium-")
	if err != nil {
		return nil, err
	}
	bin := "/usr/bin/chromium"
	if _, err := os.Stat(bin); err != nil {
		if p, err := exec.LookPath("chromium"); err == nil {
			bin = p
		}
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(dir),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(width, height),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	return &Chromium{dir: dir, ctx: ctx, cancel: func() { cancel(); cancelA() }}, nil
}

// Close stops the browser and removes its profile.
func (c *Chromium) Close() {
	c.cancel()
	os.RemoveAll(c.dir)
}

// Tab is one browser tab with what its console said and the URLs it requested.
type Tab struct {
	Ctx  context.Context
	mu   sync.Mutex
	msg  []chromedp.ConsoleMessage
	reqs []string
}

// Tab opens a tab, closed at test cleanup. It fails (not skips) when
// Chromium cannot start: `make tools` installs it.
func (c *Chromium) Tab(t *testing.T) *Tab {
	t.Helper()
	c.once.Do(func() { c.err = chromedp.Do(c.ctx) })
	if c.err != nil {
		t.Fatalf("start chromium (make apt-deps installs it): %v", c.err)
	}
	ctx, cancel := chromedp.NewContext(c.ctx)
	t.Cleanup(cancel)
	b := &Tab{Ctx: ctx}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open tab: %v", err)
	}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.msg = append(b.msg, m)
			b.mu.Unlock()
		}
	}()
	reqs := chromedp.Events(ctx, network.RequestWillBeSent)
	go func() {
		for ev, err := range reqs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.reqs = append(b.reqs, ev.Request.URL)
			b.mu.Unlock()
		}
	}()
	return b
}

// Do runs steps with a time limit.
func (b *Tab) Do(t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %v (console: %v)", err, b.Console())
	}
}

// Eval evaluates a JS expression (awaiting a promise) into T.
func Eval[T any](t *testing.T, b *Tab, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("eval %s: %v (console: %v)", expr, err, b.Console())
	}
	return v
}

// WaitTrue polls a JS expression until it is true, failing after 20 s
// with what the page shows.
// A poll that meets a document being replaced (a navigation that just
// finished) is started again in the new one.
func (b *Tab) WaitTrue(t *testing.T, expr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 25*time.Second)
	defer cancel()
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(20*time.Second)))
		if err == nil {
			return
		}
		if ctx.Err() == nil && strings.Contains(err.Error(), "Cannot find context with specified id") {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		t.Fatalf("never true: %s: %v (console: %v)", expr, err, b.Console())
	}
}

// Console returns every console message so far.
func (b *Tab) Console() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.msg {
		out = append(out, m.String())
	}
	return out
}

// CheckConsole fails on any exception, error or CSP violation; messages
// containing one of allow are expected.
func (b *Tab) CheckConsole(t *testing.T, allow ...string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
next:
	for _, m := range b.msg {
		if m.Type != chromedp.ConsoleError && m.Type != chromedp.ConsoleException && !strings.Contains(m.Text, "Content Security Policy") {
			continue
		}
		for _, a := range allow {
			if strings.Contains(m.Text, a) {
				continue next
			}
		}
		t.Errorf("console: %s", m.String())
	}
}

// Requests returns every URL the tab requested so far.
func (b *Tab) Requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.reqs...)
}

// CheckLoopbackOnly fails for any request the tab made to a host that is
// not loopback (data: and about: URLs are local).
func (b *Tab) CheckLoopbackOnly(t *testing.T) {
	t.Helper()
	for _, raw := range b.Requests() {
		u, err := url.Parse(raw)
		if err != nil {
			t.Errorf("request to an unparsable URL %q", raw)
			continue
		}
		switch u.Scheme {
		case "data", "about", "blob":
			continue
		}
		h := u.Hostname()
		if h != "127.0.0.1" && h != "::1" && h != "localhost" {
			t.Errorf("request to a non-loopback host: %s", raw)
		}
	}
}

// Screenshot takes a PNG of the whole page, checks it is one and at most
// maxBytes, and writes it to dir/name.png when write is set.
func (b *Tab) Screenshot(t *testing.T, dir, name string, maxBytes int, write bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatal("screenshot is not a PNG")
	}
	if len(png) > maxBytes {
		t.Errorf("screenshot %s is %d bytes, over %d", name, len(png), maxBytes)
	}
	if write {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
