package secretpages_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/netintel/netintel/internal/testutil/browsertest"
)

// browser is one headless Chromium tab and what its console said
// (internal/testutil/browsertest, shared with the console's tests).
type browser = browsertest.Tab

// chromium is one headless Debian Chromium shared by the package's tests
// (starting it is the slow part); each test gets its own tab.
var chromium *browsertest.Chromium

func TestMain(m *testing.M) {
	c, err := browsertest.Start(420, 900)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chromium:", err)
		os.Exit(1)
	}
	chromium = c
	code := m.Run()
	c.Close()
	os.Exit(code)
}

// newBrowser opens a tab in the shared headless Chromium, started on first
// use. The tab closes at test cleanup. It fails (not skips) when chromium
// is missing: `make tools` installs it.
func newBrowser(t *testing.T) *browser { return chromium.Tab(t) }

// eval evaluates a JS expression (awaiting a promise) into T.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	return browsertest.Eval[T](t, b, expr)
}
