package enrich

import (
	"testing"

	"github.com/netintel/netintel/internal/testutil"
)

// TestMain fails the package when goroutines running enrich code (workers,
// watchers, handlers, renewals) outlive the tests.
func TestMain(m *testing.M) {
	testutil.MainCheckLeaks(m, "github.com/netintel/netintel/enrich")
}
