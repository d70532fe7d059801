package publish

import (
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish/gen"
)

// childEnv makes TestPublisher_Run_Killed the publishing process that its
// parent kills: "objects dir|work dir|date".
const childEnv = "NETINTEL_TEST_PUBLISH_CHILD"

// slowStore lands the first object at full speed and drips the bytes of
// every later one, so that the process is killed in the middle of a Put
// after one file of its build has landed.
type slowStore struct {
	objstore.Store
	mu   sync.Mutex
	puts int
}

func (s *slowStore) Put(ctx context.Context, key string, r io.Reader, size int64, ct string) (objstore.Info, error) {
	s.mu.Lock()
	s.puts++
	slow := s.puts > 1
	s.mu.Unlock()
	if slow {
		r = &dripReader{r: r}
	}
	return s.Store.Put(ctx, key, r, size, ct)
}

type dripReader struct{ r io.Reader }

func (d *dripReader) Read(p []byte) (int, error) {
	time.Sleep(20 * time.Millisecond)
	return d.r.Read(p[:min(len(p), 4096)])
}

func publishChild(t *testing.T, spec string) {
	parts := strings.Split(spec, "|")
	st, err := objstore.NewFolder(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.WorkDir = parts[1]
	if _, err := New(cfg, &slowStore{Store: st}, nil, testutil.Logger(t)).Run(t.Context(), gen.New(2000, 2), parts[2]); err != nil {
		t.Fatal(err)
	}
	t.Fatal("the run finished: the parent was to kill it first")
}

// A `publish` of the date latest names, killed (SIGKILL) in the middle of
// an upload after one file of its build landed: latest, its manifest and
// every byte they name are untouched (sha256sum -c passes), the killed
// run's leftovers (its work folder, the store's temp file, its build
// folder without a manifest) are removed by the next runs and store opens,
// and the next run of the date publishes a new build.
func TestPublisher_Run_Killed(t *testing.T) {
	t.Parallel()
	if spec := os.Getenv(childEnv); spec != "" {
		publishChild(t, spec)
		return
	}
	const date = "2026-11-23"
	objDir, work := t.TempDir(), t.TempDir()
	st, err := objstore.NewFolder(objDir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.WorkDir = work
	p := newPublisher(t, cfg, st)
	first, err := p.Run(t.Context(), gen.New(2000, 1), date)
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestPublisher_Run_Killed$")
	cmd.Env = append(os.Environ(), childEnv+"="+objDir+"|"+work+"|"+date)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var tmpFile string
	deadline := time.After(60 * time.Second)
	for tmpFile == "" {
		select {
		case err := <-exited:
			t.Fatalf("the child ended before it was killed: %v\n%s", err, out)
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("the child never got half-way\n%s", out)
		case <-time.After(10 * time.Millisecond):
		}
		tmpFile = midUpload(t, objDir, date, first.Manifest.BuildID)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited

	m, dir := rawDownload(t, st)
	if m.Key != first.Manifest.Key {
		t.Fatalf("latest names %s after the killed run, want %s", m.Key, first.Manifest.Key)
	}
	sha256sumCheck(t, dir, len(m.Files))
	if n := len(storedBuilds(t, st)[date]); n != 2 {
		t.Fatalf("%d builds stored, want the published one and the killed one", n)
	}
	if entries, _ := os.ReadDir(work); len(entries) != 1 {
		t.Fatalf("work dir after the kill holds %d folders, want the killed run's", len(entries))
	}

	// An hour on, a store opened again sweeps the killed Put's temp file.
	old := time.Now().Add(-objstore.TempGrace - time.Minute)
	if err := os.Chtimes(tmpFile, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := objstore.NewFolder(objDir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmpFile); !os.IsNotExist(err) {
		t.Fatalf("temp file of the killed Put: %v", err)
	}

	// The next run of the date removes the killed run's work folder and
	// publishes a new build; past publish.timeout the killed build goes.
	p.Now = func() time.Time { return time.Now().Add(cfg.Timeout + time.Minute) }
	next, err := p.Run(t.Context(), gen.New(2000, 2), date)
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Fatalf("work dir after the next run holds %v", entries)
	}
	m, dir = rawDownload(t, st)
	if m.Key != next.Manifest.Key || m.Key == first.Manifest.Key {
		t.Fatalf("latest = %s", m.Key)
	}
	sha256sumCheck(t, dir, len(m.Files))
	if len(next.PrunedBuilds) != 1 || strings.HasSuffix(next.PrunedBuilds[0], first.Manifest.BuildID) {
		t.Fatalf("pruned builds = %v, want the killed one", next.PrunedBuilds)
	}
	if got := storedBuilds(t, st)[date]; len(got) != 2 || got[0] != first.Manifest.BuildID {
		t.Fatalf("builds = %v, want the superseded one (within its grace) and the new one", got)
	}
}

// midUpload returns the path of a temp file being written in a build
// folder of date other than skip, once a file of that build has landed.
func midUpload(t *testing.T, objDir, date, skip string) string {
	t.Helper()
	var tmp string
	landed := false
	_ = filepath.WalkDir(filepath.Join(objDir, "snapshots", date), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, skip) {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".tmp-") {
			if st, err := d.Info(); err == nil && st.Size() > 0 {
				tmp = p
			}
		} else {
			landed = true
		}
		return nil
	})
	if !landed {
		return ""
	}
	return tmp
}
