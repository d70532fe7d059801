package probe

import (
	"testing"

	"github.com/netintel/netintel/internal/testutil"
)

// TestMain fails the package when goroutines started by probe code (workers,
// coordinators, lease renewal, heartbeats, test servers) outlive the tests.
func TestMain(m *testing.M) {
	testutil.MainCheckLeaks(m, "github.com/netintel/netintel/probe")
}
