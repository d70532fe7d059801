package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/probe"
)

// probeCommands returns the command of this file, for commandList.
func probeCommands() []*command {
	return []*command{
		&command{name: "probe", summary: "run the TLD RDAP/WHOIS check now on a running system and wait for it",
			usage: []string{"probe [--wait=false] [--pickup 2m] [--timeout 0] [--data-dir DIR | --nats URL]"},
			desc: `Ask the running system's probe workers for a TLD RDAP/WHOIS check now (or
	follow the one already running) and wait for it to be published. A bar on a
	terminal shows the TLDs checked with the rate and the time left; on a pipe,
	one line per step and a plain progress line at each tenth. The closing line
	counts the results published, with the time and the rate.`,
			examples: []string{"netintel probe --data-dir data", "netintel probe --nats nats://nats:4222 --timeout 2h", "netintel probe --data-dir data --wait=false"},
			run:      cmdProbe},
	}
}

// cmdProbe asks the running system's probe workers for a run (a request
// key in the tldprogress bucket), then follows its progress until it is
// published, fails, or nobody picks the request up.
func cmdProbe(ctx context.Context, env *Env, args []string) error {
	var cf commonFlags
	fs := newFlags(env, "probe")
	cf.add(fs)
	wait := fs.Bool("wait", true, "wait for the run to finish, printing progress")
	pickup := fs.Duration("pickup", 2*time.Minute, "fail when no probe worker takes the request, or the run shows no progress, within this long")
	timeout := fs.Duration("timeout", 0, "give up waiting after this long (0 = no limit)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := openSystem(ctx, env, &cf, roleOpts{ensure: true, store: true})
	if err != nil {
		return err
	}
	defer s.close()
	svc, err := probe.New(ctx, s.Cfg.Probe, s.Bus.JS, s.Store, s.Log)
	if err != nil {
		return err
	}
	src := liveSource{svc}
	// A cluster in an election (a node lost) answers no request for a
	// moment: the command waits it out (bus.Retry) as the roles do.
	var before probe.Progress
	var seen uint64
	err = bus.Retry(ctx, s.Log, "probe progress", func() (err error) {
		before, seen, err = src.Progress(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("read progress: %w", err)
	}
	prevRun := before.RunID
	if before.Status == probe.StatusRunning {
		fmt.Fprintf(env.Stdout, "a TLD check is already running (run %s, %d/%d TLDs); following it\n", before.RunID, before.ProcessedTLDs, before.TotalTLDs)
		prevRun = ""
	} else {
		if err := bus.Retry(ctx, s.Log, "probe request", func() error {
			_, err := svc.Request(ctx)
			return err
		}); err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, "TLD check requested")
	}
	if !*wait {
		return nil
	}
	// A cancellation, not a deadline: each NATS read keeps its own timeout
	// (see bus.RunContext).
	ctx, cancel := bus.RunContext(ctx, *timeout)
	defer cancel()
	return followRun(ctx, env, src, prevRun, seen, *pickup, followInterval)
}

// runSource is what followRun reads: the probe service.
type runSource interface {
	// Progress returns the run's progress and its record's revision.
	Progress(ctx context.Context) (probe.Progress, uint64, error)
	Requested(ctx context.Context) (bool, error)
	Published(ctx context.Context) (probe.Published, bool, error)
}

// liveSource reads a run's progress and published record from the stream
// leader, falling back to any replica during an election
// (probe.Service.LiveProgress).
type liveSource struct{ *probe.Service }

func (l liveSource) Progress(ctx context.Context) (probe.Progress, uint64, error) {
	return l.LiveProgress(ctx)
}

func (l liveSource) Published(ctx context.Context) (probe.Published, bool, error) {
	return l.LivePublished(ctx)
}

// followInterval is how often `netintel probe` reads the progress.
const followInterval = time.Second

// followRun prints progress until a run other than prevRun completes or
// fails. A failed read of the progress (NATS electing a new leader, say)
// is retried; only reads failing for longer than pickup end the wait.
// The progress never goes backwards: an answer at a revision older than
// one already seen (seen, at first) is a replica that lags, and is
// dropped like a failed read. The progress is read every interval.
func followRun(ctx context.Context, env *Env, svc runSource, prevRun string, seen uint64, pickup, interval time.Duration) error {
	start, changed := time.Now(), time.Now()
	t := time.NewTicker(interval)
	defer t.Stop()
	last, lastState, lastStep := "", "", ""
	tty := isTerminal(env.Stderr)
	var m *meter
	defer func() {
		if m != nil {
			m.done()
		}
	}()
	var failingSince time.Time
	for {
		select {
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
				return errors.New("gave up waiting (--timeout); the run goes on, see /api/status")
			}
			return ctx.Err()
		case <-t.C:
		}
		p, rev, err := svc.Progress(ctx)
		if err == nil && rev < seen {
			err = fmt.Errorf("an older progress record (revision %d, seen %d) from a replica catching up", rev, seen)
		}
		if err != nil {
			if ctx.Err() != nil {
				continue // reported at the top of the loop
			}
			if failingSince.IsZero() {
				failingSince = time.Now()
				fmt.Fprintf(env.Stderr, "reading the progress failed (%v); retrying\n", err)
			}
			if time.Since(failingSince) > pickup {
				return fmt.Errorf("read progress: failing for %s: %w", pickup, err)
			}
			continue
		}
		failingSince, seen = time.Time{}, rev
		if p.RunID == "" || p.RunID == prevRun {
			if pending, _ := svc.Requested(ctx); pending && time.Since(start) > pickup {
				return fmt.Errorf("no probe worker took the request within %s: is `netintel run` or `netintel worker probe` running? (the request stays queued)", pickup)
			}
			continue
		}
		line := fmt.Sprintf("run %s: %s: %s (%d/%d TLDs)", p.RunID, p.Status, p.CurrentStep, p.ProcessedTLDs, p.TotalTLDs)
		if line != last && (!tty || p.CurrentStep != lastStep || p.Status != probe.StatusRunning) {
			// On a terminal the bar shows the counts: a line per step.
			fmt.Fprintln(env.Stdout, line)
		}
		last, lastStep = line, p.CurrentStep
		if m == nil && p.TotalTLDs > 0 {
			m = newMeter(env, "probe "+p.RunID, "TLDs", int64(p.TotalTLDs))
		}
		if m != nil {
			m.set(int64(p.ProcessedTLDs), int64(p.TotalTLDs))
		}
		if state := fmt.Sprint(line, p.LastUpdate); state != lastState {
			lastState, changed = state, time.Now()
		} else if p.Status == probe.StatusRunning && time.Since(changed) > pickup {
			return fmt.Errorf("run %s shows no progress for %s: is a probe worker running? (it resumes when one starts)", p.RunID, pickup)
		}
		switch p.Status {
		case probe.StatusCompleted:
			took := ""
			if m != nil {
				took = " " + m.done()
				m = nil
			}
			pub, _, err := svc.Published(ctx)
			if err == nil {
				fmt.Fprintf(env.Stdout, "published %d TLD results, %d with stealth RDAP%s\n", pub.ResultsAvailable, pub.StealthCount, took)
			}
			return nil
		case probe.StatusFailed:
			return fmt.Errorf("TLD check failed: %s", p.CurrentStep)
		}
	}
}
