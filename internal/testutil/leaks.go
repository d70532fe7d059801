package testutil

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// LeakGrace is how long MainCheckLeaks waits for goroutines to end after
// the tests: a stopped server's handlers and timers take a moment.
const LeakGrace = 5 * time.Second

// MainCheckLeaks runs a package's tests (call it as TestMain's body) and
// then fails the package when goroutines running code of pkg (an import
// path such as "github.com/netintel/netintel/enrich") outlive them:
// workers, watchers, renewals and handlers that a Close or a cancel did
// not stop. Only goroutines with a frame of pkg count, so the runtime's,
// the test framework's and libraries' own are not blamed on the package.
func MainCheckLeaks(m *testing.M, pkg string) {
	code := m.Run()
	if code == 0 {
		if leaked := Leaks(pkg, LeakGrace); len(leaked) > 0 {
			fmt.Fprintf(os.Stderr, "goroutines leaked by %s:\n\n%s\n", pkg, strings.Join(leaked, "\n\n"))
			code = 1
		}
	}
	os.Exit(code)
}

// Leaks returns the stacks of the goroutines running code of pkg, other
// than TestMain's, waiting up to grace for them to end.
func Leaks(pkg string, grace time.Duration) []string {
	deadline := time.Now().Add(grace)
	frame := pkg + "."
	for {
		buf := make([]byte, 4<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaked []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, frame) && !strings.Contains(g, ".TestMain(") && !strings.Contains(g, "testutil.Leaks(") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return leaked
		}
		time.Sleep(50 * time.Millisecond)
	}
}
