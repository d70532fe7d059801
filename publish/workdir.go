package publish

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"
)

// A run builds its files in a work folder of its own under
// publish.work_dir, named snapshot-YYYY-MM-DD-NNNN. The run holds an
// exclusive flock(2) on the folder's lock file for as long as it lives;
// the kernel drops the lock when the process dies, however it dies, so a
// lock that can be taken means a dead owner (a pid could be reused, a
// lock cannot outlive its process).
const (
	workPrefix = "snapshot-"
	// workLock is the lock file in a work folder; it also holds the
	// owner's pid, for people.
	workLock = ".owner.lock"
)

var workDirRe = regexp.MustCompile(`^snapshot-\d{4}-\d{2}-\d{2}-\d+$`)

// newWorkDir creates a run's work folder under parent ("" = the system
// temp folder) and locks it. release removes the folder, then drops the
// lock.
func newWorkDir(parent, date string) (dir string, release func(), err error) {
	dir, err = os.MkdirTemp(parent, workPrefix+date+"-")
	if err != nil {
		return "", nil, fmt.Errorf("create work dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, workLock), os.O_CREATE|os.O_RDWR, 0o600)
	if err == nil {
		if err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			_, err = f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("lock work dir: %w", err)
	}
	return dir, func() {
		os.RemoveAll(dir)
		f.Close()
	}, nil
}

// sweepWorkDirs removes the work folders of runs that are gone (killed,
// crashed, the machine restarted): those whose lock can be taken, and
// those without a lock file (left by an older version, or a run that died
// between creating the folder and locking it) not modified for longer
// than publish.timeout. Folders of live runs, here or in another process,
// stay. Failures are logged: a leftover folder must not stop a run.
func (p *Publisher) sweepWorkDirs(log *slog.Logger) {
	removed, err := sweepWorkDirs(p.cfg.WorkDir, p.cfg.Timeout, p.Now())
	for _, d := range removed {
		log.Info("stale work folder removed", "dir", d)
	}
	if err != nil {
		log.Warn("sweep work folders", "err", err)
	}
}

func sweepWorkDirs(parent string, staleAfter time.Duration, now time.Time) (removed []string, err error) {
	if parent == "" {
		parent = os.TempDir()
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !workDirRe.MatchString(e.Name()) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		stale, err := workDirStale(dir, staleAfter, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if stale != nil {
			err := os.RemoveAll(dir)
			stale()
			if err != nil {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, dir)
		}
	}
	return removed, errors.Join(errs...)
}

// workDirStale returns nil when dir belongs to a live run (or may), else a
// function to call once dir is removed (it drops the lock taken).
func workDirStale(dir string, staleAfter time.Duration, now time.Time) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, workLock), os.O_RDWR, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		st, err := os.Stat(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil // its run just finished
			}
			return nil, err
		}
		if now.Sub(st.ModTime()) <= staleAfter {
			return nil, nil
		}
		return func() {}, nil
	case err != nil:
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil // a live run holds it
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
