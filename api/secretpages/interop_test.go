package secretpages_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/netintel/netintel/api/secretapi"
	"github.com/netintel/netintel/api/secretpages"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/secrets"
	"github.com/netintel/netintel/secrets/client"
)

func newClient() *client.Client {
	return client.New(client.Options{Src: "netintel", Version: "test", Backoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
}

// open loads a link in a fresh document (a same-page fragment change would
// not reload the scripts).
func open(t *testing.T, b *browser, link string) {
	t.Helper()
	b.Do(t, chromedp.Navigate("about:blank"), chromedp.Navigate(link), chromedp.WaitReady(chromedp.CSS("body")))
}

func value(t *testing.T, b *browser, sel string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("value %s: %v", sel, err)
	}
	return v
}

func textOf(t *testing.T, b *browser, sel string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text %s: %v", sel, err)
	}
	return v
}

// waitStatus waits until #status holds want.
func waitStatus(t *testing.T, b *browser, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 20*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("status").textContent.includes(`+jsString(want)+`)`, chromedp.WithPollingTimeout(15*time.Second)))
	if err != nil {
		st, _ := chromedp.Run(b.Ctx, chromedp.TextContent(chromedp.CSS("#status")))
		t.Fatalf("status %q never came (have %q): %v", want, st, err)
	}
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// screenshot takes a PNG of the page; it is written to docs/screenshots
// only when UPDATE_SCREENSHOTS=1.
func screenshot(t *testing.T, b *browser, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatal("screenshot is not a PNG")
	}
	if len(png) > 150<<10 {
		t.Fatalf("screenshot %s is %d bytes, over 150 KB", name, len(png))
	}
	if os.Getenv("UPDATE_SCREENSHOTS") == "1" {
		dir := filepath.Join("..", "..", "docs", "screenshots")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func randomData(n int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// runInterop checks that links made by the Go client open in the pages
// and links made in the pages open in the Go client, on the site s.
func runInterop(t *testing.T, s *site) {
	b := newBrowser(t)
	c := newClient()
	ctx := t.Context()
	var keys []string // every random key used: none may reach the server

	t.Run("Go text link with passphrase opens in the page", func(t *testing.T) {
		l, err := c.CreateText(ctx, s.URL, "correct horse battery staple", client.SaveOptions{Passphrase: "s3same", Views: 1, Expiry: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, l.RandomKey)
		before := s.log.count("/api/get?")
		open(t, b, l.String())
		b.Do(t, chromedp.WaitVisible(chromedp.CSS("#reveal")))
		// A preview (loading the page) uses no view and calls nothing.
		if s.log.count("/api/get?") != before {
			t.Fatal("the page read the secret before a click")
		}
		if st, err := c.Status(ctx, s.URL, []string{l.ID}); err != nil || !st[l.ID] {
			t.Fatalf("after preview: %v %v", st, err)
		}
		b.Do(t, chromedp.Click(chromedp.CSS("#reveal")), chromedp.WaitVisible(chromedp.CSS("#passphrase")))
		waitStatus(t, b, "protected by a passphrase")
		b.Do(t, chromedp.SendKeys(chromedp.CSS("#passphrase"), "wrong"), chromedp.Click(chromedp.CSS("#unlock")))
		waitStatus(t, b, "Wrong passphrase")
		screenshot(t, b, "wrong-passphrase")
		b.Do(t, chromedp.SendKeys(chromedp.CSS("#passphrase"), "s3same"), chromedp.Click(chromedp.CSS("#unlock")),
			chromedp.WaitVisible(chromedp.CSS("#secret")))
		if got := value(t, b, "#secret"); got != "correct horse battery staple" {
			t.Fatalf("page shows %q", got)
		}
		if got := textOf(t, b, "#views-left"); !strings.Contains(got, "last view") {
			t.Fatalf("views left: %q", got)
		}
		screenshot(t, b, "read-success")
		if loc := eval[string](t, b, `location.href`); strings.Contains(loc, l.RandomKey) {
			t.Fatal("the key stayed in the address bar after reading")
		}
		if _, _, err := c.ReadText(ctx, l, "s3same"); err == nil || !strings.Contains(err.Error(), "no message") {
			t.Fatalf("second read in Go: %v", err)
		}
	})

	t.Run("Go file link opens in the page", func(t *testing.T) {
		data := randomData(70000)
		l, err := c.CreateFile(ctx, s.URL, client.FileMeta{Name: "report.bin", Type: "application/x-test"}, data, client.SaveOptions{Views: 2}, nil)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, l.RandomKey)
		open(t, b, l.String())
		b.Do(t, chromedp.Click(chromedp.CSS("#reveal")), chromedp.WaitVisible(chromedp.CSS("#download")))
		if got := textOf(t, b, "#file-info"); !strings.Contains(got, "report.bin") {
			t.Fatalf("file info %q", got)
		}
		// Save the file as a user would and compare what lands on disk.
		dir := t.TempDir()
		dctx, cancel := context.WithTimeout(b.Ctx, 20*time.Second)
		defer cancel()
		progress := chromedp.Events(dctx, cdpbrowser.DownloadProgress)
		b.Do(t, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
				Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir, EventsEnabled: new(true)})
			return err
		}), chromedp.Click(chromedp.CSS("#download")))
		for ev, err := range progress {
			if err != nil {
				t.Fatalf("download: %v", err)
			}
			if ev.State == cdpbrowser.DownloadProgressStateCompleted {
				break
			}
		}
		raw, err := os.ReadFile(filepath.Join(dir, "report.bin"))
		if err != nil || !bytes.Equal(raw, data) {
			t.Fatalf("downloaded %d bytes, equal %v: %v", len(raw), bytes.Equal(raw, data), err)
		}
		if got := textOf(t, b, "#views-left"); !strings.Contains(got, "1 view") {
			t.Fatalf("views left: %q", got)
		}
	})

	t.Run("page text link opens in Go", func(t *testing.T) {
		open(t, b, s.URL+"/")
		b.Do(t,
			chromedp.SendKeys(chromedp.CSS("#text"), "made in the browser ✓"),
			chromedp.SetValue(chromedp.CSS("#views"), "2"),
			chromedp.SetValue(chromedp.CSS("#expires"), "3600"),
			chromedp.SendKeys(chromedp.CSS("#passphrase"), "pw from page"),
		)
		screenshot(t, b, "create")
		b.Do(t, chromedp.Click(chromedp.CSS("#create")), chromedp.WaitVisible(chromedp.CSS("#link")))
		link := value(t, b, "#link")
		l, err := client.ParseLink(link)
		if err != nil {
			t.Fatalf("page made a link the Go client rejects: %v", err)
		}
		keys = append(keys, l.RandomKey)
		if l.Kind != client.KindText || l.Origin != s.URL {
			t.Fatalf("link %s", l.Redacted())
		}
		if _, _, err := c.ReadText(ctx, l, ""); err == nil || !strings.Contains(err.Error(), "wrong key") {
			t.Fatalf("no passphrase: %v", err)
		}
		text, info, err := c.ReadText(ctx, l, "pw from page")
		if err != nil || text != "made in the browser ✓" || info.ViewsLeft != 1 || info.ExpiresIn > time.Hour || info.ExpiresIn < 50*time.Minute {
			t.Fatalf("Go read: %q %+v %v", text, info, err)
		}
	})

	t.Run("page file link opens in Go", func(t *testing.T) {
		// Over 4 MiB: the page uploads it in slices.
		data := randomData(client.ChunkSize + 5000)
		path := filepath.Join(t.TempDir(), "big photo.raw")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		open(t, b, s.URL+"/")
		b.Do(t,
			chromedp.Click(chromedp.CSS("#tab-file")),
			chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{path}),
			chromedp.Click(chromedp.CSS("#create")),
			chromedp.WaitVisible(chromedp.CSS("#link")),
		)
		l, err := client.ParseLink(value(t, b, "#link"))
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, l.RandomKey)
		if l.Kind != client.KindFile {
			t.Fatalf("kind %s", l.Kind)
		}
		meta, got, _, err := c.ReadFile(ctx, l, "", nil)
		if err != nil || meta.Name != "big photo.raw" || meta.Size != int64(len(data)) || !bytes.Equal(got, data) {
			t.Fatalf("Go read: %+v %v", meta, err)
		}
		if n := s.log.count("src=netintel-web&u="); n < 2 {
			t.Fatalf("%d slice requests from the page, want 2", n)
		}
	})

	t.Run("page says no message", func(t *testing.T) {
		l, err := c.CreateText(ctx, s.URL, "once", client.SaveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, l.RandomKey)
		if _, _, err := c.ReadText(ctx, l, ""); err != nil {
			t.Fatal(err)
		}
		open(t, b, l.String())
		b.Do(t, chromedp.Click(chromedp.CSS("#reveal")))
		waitStatus(t, b, "already read")
	})

	t.Run("broken link sends nothing", func(t *testing.T) {
		before := s.log.count("/api/")
		open(t, b, s.URL+"/f/#tooShort")
		waitStatus(t, b, "This link is broken")
		if s.log.count("/api/") != before {
			t.Fatal("a broken link made an API call")
		}
	})

	t.Run("fits a phone screen", func(t *testing.T) {
		b.Do(t, chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait))
		defer b.Do(t, chromedp.EmulateViewport(420, 900))
		for _, p := range []string{"/", "/v/#" + strings.Repeat("A", 42), "/f/#" + strings.Repeat("A", 42)} {
			open(t, b, s.URL+p)
			got := eval[[]float64](t, b, `[document.documentElement.scrollWidth, innerWidth,
				Math.min(...[...document.querySelectorAll("button:not([hidden]), input, select")].filter((e) => e.offsetParent).map((e) => e.getBoundingClientRect().height))]`)
			if got[0] > got[1] {
				t.Errorf("%s: %.0f px wide on a %.0f px screen", p, got[0], got[1])
			}
			if got[2] < 40 {
				t.Errorf("%s: a control is %.0f px high, too small to tap", p, got[2])
			}
		}
	})

	all := s.log.all()
	for _, k := range keys {
		if strings.Contains(all, k) {
			t.Fatal("a random key reached the server")
		}
	}
	if strings.Contains(all, "Referer: http") {
		t.Fatal("a request carried a Referer")
	}
	b.CheckConsole(t, "status of 503", "status of 429")
}

// startRealSite serves the pages with the real secret API (package secrets
// on a real in-process nats-server with JetStream and a folder object
// store), as `netintel run` wires them on the secrets listener.
func startRealSite(t *testing.T, opt secretapi.Options) *site {
	t.Helper()
	n := testutil.StartNATS(t)
	cfg := n.Ensure(t)
	blobs, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	log := testutil.Logger(t)
	svc, err := secrets.New(t.Context(), n.JS, blobs, secrets.OptionsFrom(cfg.Secrets), log)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	secretapi.New(svc, opt, log).Mount(mux)
	secretpages.Mount(mux)
	s := &site{log: &reqLog{}}
	srv := httptest.NewServer(s.log.wrap(mux))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func TestInterop_RealServer(t *testing.T) {
	runInterop(t, startRealSite(t, secretapi.Options{}))
}
