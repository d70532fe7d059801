package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/probe"
)

// at is a progress record read at a revision.
type at struct {
	p   probe.Progress
	rev uint64
}

// scripted answers Progress from a list of steps, an error or an at; the
// last step repeats.
type scripted struct {
	steps []any
	i     int
}

func (s *scripted) Progress(context.Context) (probe.Progress, uint64, error) {
	st := s.steps[min(s.i, len(s.steps)-1)]
	s.i++
	if err, ok := st.(error); ok {
		return probe.Progress{}, 0, err
	}
	a := st.(at)
	return a.p, a.rev, nil
}
func (s *scripted) Requested(context.Context) (bool, error) { return false, nil }
func (s *scripted) Published(context.Context) (probe.Published, bool, error) {
	return probe.Published{ResultsAvailable: 3}, true, nil
}

// fastFollow is the tests' progress read interval.
const fastFollow = 5 * time.Millisecond

func testEnv() (*Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}, &out, &errb
}

// Progress reads that fail for a while (a NATS leader election) do not end
// the wait; reads failing for longer than --pickup do, with the cause.
func TestFollowRun_RetriesFailedReads(t *testing.T) {
	t.Parallel()
	timeout := errors.New("nats: timeout")
	running := at{probe.Progress{Status: probe.StatusRunning, RunID: "r1", TotalTLDs: 3, ProcessedTLDs: 1, LastUpdate: 1}, 10}
	done := at{probe.Progress{Status: probe.StatusCompleted, RunID: "r1", TotalTLDs: 3, ProcessedTLDs: 3, LastUpdate: 2}, 12}

	env, out, errb := testEnv()
	src := &scripted{steps: []any{running, timeout, timeout, timeout, done}}
	if err := followRun(t.Context(), env, src, "", 0, time.Minute, fastFollow); err != nil {
		t.Fatalf("transient read failures ended the wait: %v", err)
	}
	if !strings.Contains(out.String(), "published 3 TLD results") || strings.Count(errb.String(), "retrying") != 1 {
		t.Fatalf("stdout %q stderr %q", out.String(), errb.String())
	}

	src = &scripted{steps: []any{running, timeout}}
	err := followRun(t.Context(), env, src, "", 0, 50*time.Millisecond, fastFollow)
	if err == nil || !strings.Contains(err.Error(), "read progress") || !errors.Is(err, timeout) {
		t.Fatalf("reads failing past --pickup: %v", err)
	}
}

// After a node restart a replica catching up answers with an old copy of
// the progress: the follower never goes back to it, neither in what it
// prints nor in its decision to stop. Only an answer at the revision seen
// or a newer one counts.
func TestFollowRun_NeverGoesBackwards(t *testing.T) {
	t.Parallel()
	p := func(status string, n int, rev uint64) at {
		return at{probe.Progress{Status: status, CurrentStep: "checking", RunID: "r2", TotalTLDs: 40, ProcessedTLDs: n, LastUpdate: int64(rev)}, rev}
	}
	prev := at{probe.Progress{Status: probe.StatusFailed, CurrentStep: "failed while checking: x", RunID: "r1", TotalTLDs: 40}, 5}
	tests := []struct {
		name    string
		seen    uint64
		steps   []any
		wantErr string
		never   string // a line that must not be printed
	}{
		{"stale running copies between live ones", 0, []any{p("running", 0, 20), p("running", 12, 31), p("running", 0, 20), p("running", 0, 20), p("running", 12, 31), p("running", 30, 40), p("running", 0, 20), p("completed", 40, 44)}, "", ""},
		{"a stale failed copy of the previous run does not end the wait", 0, []any{p("running", 12, 31), prev, p("completed", 40, 44)}, "", ""},
		{"older than the revision read before following", 25, []any{p("running", 0, 20), p("running", 0, 20), p("running", 12, 31), p("completed", 40, 44)}, "", "(0/40 TLDs)"},
		{"only stale copies for longer than pickup", 0, []any{p("running", 12, 31), p("running", 0, 20)}, "older progress record", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, out, _ := testEnv()
			pickup := time.Minute
			if tt.wantErr != "" {
				pickup = 50 * time.Millisecond
			}
			err := followRun(t.Context(), env, &scripted{steps: tt.steps}, "r0", tt.seen, pickup, fastFollow)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("followRun: %v\n%s", err, out)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("followRun: %v, want %q", err, tt.wantErr)
			}
			if tt.never != "" && strings.Contains(out.String(), tt.never) {
				t.Errorf("printed %q from a record older than the one seen:\n%s", tt.never, out)
			}
			// The printed progress only moves forward.
			most := -1
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				if strings.Contains(line, "run r1") {
					t.Errorf("printed the previous run's stale record: %q", line)
				}
				var n, total int
				if i := strings.LastIndex(line, "("); i >= 0 {
					if _, err := fmt.Sscanf(line[i:], "(%d/%d TLDs)", &n, &total); err == nil {
						if n < most {
							t.Errorf("progress went backwards to %q after %d TLDs\n%s", line, most, out)
						}
						most = max(most, n)
					}
				}
			}
		})
	}
}
