package probe

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the package when goroutines started by probe code (workers,
// coordinators, lease renewal, heartbeats, test servers) outlive the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := waitLeaks(5 * time.Second); len(leaked) > 0 {
			fmt.Fprintf(os.Stderr, "goroutines leaked by probe:\n\n%s\n", strings.Join(leaked, "\n\n"))
			code = 1
		}
	}
	os.Exit(code)
}

func waitLeaks(d time.Duration) []string {
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaked []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "netintel/netintel/probe.") && !strings.Contains(g, "probe.TestMain") && !strings.Contains(g, "probe.waitLeaks") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return leaked
		}
		time.Sleep(50 * time.Millisecond)
	}
}
