package publish

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/netintel/netintel/publish/gen"
)

// The work folders of runs that died (their lock free, or no lock file and
// old) are removed at the start of the next run; a live run's folder, a
// fresh folder without a lock yet, and folders that are not ours stay.
func TestPublisher_Run_SweepsStaleWorkDirs(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	work := cfg.WorkDir
	mk := func(name string, lock bool, mtime time.Time) string {
		t.Helper()
		d := filepath.Join(work, name)
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
		// What a killed run leaves: a half-built file, the MMDB spool.
		if err := os.WriteFile(filepath.Join(d, FileMMDB), make([]byte, 1<<20), 0o640); err != nil {
			t.Fatal(err)
		}
		if lock {
			// The pid of a process that is gone: no one holds the lock.
			if err := os.WriteFile(filepath.Join(d, workLock), []byte(strconv.Itoa(1<<22)+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(d, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return d
	}
	old := time.Now().Add(-cfg.Timeout - time.Minute)
	killed := mk("snapshot-2026-11-23-111", true, time.Now())
	olderVersion := mk("snapshot-2026-11-22-222", false, old)
	starting := mk("snapshot-2026-11-23-333", false, time.Now())
	foreign := mk("snapshot-notes", false, old)
	liveDir, release, err := newWorkDir(work, "2026-11-23") // another run, still going
	if err != nil {
		t.Fatal(err)
	}
	defer release()

	st := stores[0].open(t)
	if _, err := newPublisher(t, cfg, st).Run(t.Context(), gen.New(100, 1), "2026-11-24"); err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(work)
	for _, e := range entries {
		left = append(left, filepath.Join(work, e.Name()))
	}
	want := []string{starting, foreign, liveDir}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Fatalf("work dir holds %v, want %v (removed: %s, %s)", left, want, killed, olderVersion)
	}
}
