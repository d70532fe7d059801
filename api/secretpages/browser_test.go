package secretpages_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser is one headless Chromium tab and what its console said.
type browser struct {
	ctx context.Context
	mu  sync.Mutex
	msg []chromedp.ConsoleMessage
}

// newBrowser starts headless Debian Chromium with a fresh profile. The
// browser stops at test cleanup. It fails (not skips) when chromium is
// missing: `make tools` installs it.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	bin := "/usr/bin/chromium"
	if _, err := os.Stat(bin); err != nil {
		p, err := exec.LookPath("chromium")
		if err != nil {
			t.Fatal("chromium not installed (make apt-deps)")
		}
		bin = p
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(420, 900),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	b := &browser{ctx: ctx}
	if err := chromedp.Do(ctx); err != nil { // start the browser now
		t.Fatalf("start chromium: %v", err)
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
	return b
}

// do runs steps with a time limit.
func (b *browser) do(t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %v (console: %v)", err, b.console())
	}
}

// eval evaluates a JS expression (awaiting a promise) into T.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("eval: %v (console: %v)", err, b.console())
	}
	return v
}

func (b *browser) console() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.msg {
		out = append(out, m.String())
	}
	return out
}

// checkConsole fails on any exception, error or CSP violation the pages
// caused. Expected failures (HTTP answers the page handles) are filtered
// by allow.
func (b *browser) checkConsole(t *testing.T, allow ...string) {
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
