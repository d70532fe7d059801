package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/probe"
)

// scripted answers Progress from a list of steps: an error, or a progress.
type scripted struct {
	steps []any
	i     int
}

func (s *scripted) Progress(context.Context) (probe.Progress, error) {
	st := s.steps[min(s.i, len(s.steps)-1)]
	s.i++
	if err, ok := st.(error); ok {
		return probe.Progress{}, err
	}
	return st.(probe.Progress), nil
}
func (s *scripted) Requested(context.Context) (bool, error) { return false, nil }
func (s *scripted) Published(context.Context) (probe.Published, bool, error) {
	return probe.Published{ResultsAvailable: 3}, true, nil
}

// Progress reads that fail for a while (a NATS leader election) do not end
// the wait; reads failing for longer than --pickup do, with the cause.
func TestFollowRun_RetriesFailedReads(t *testing.T) {
	old := followInterval
	followInterval = 5 * time.Millisecond
	t.Cleanup(func() { followInterval = old })
	timeout := errors.New("nats: timeout")
	running := probe.Progress{Status: probe.StatusRunning, RunID: "r1", TotalTLDs: 3, ProcessedTLDs: 1, LastUpdate: 1}
	done := probe.Progress{Status: probe.StatusCompleted, RunID: "r1", TotalTLDs: 3, ProcessedTLDs: 3, LastUpdate: 2}

	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	src := &scripted{steps: []any{running, timeout, timeout, timeout, done}}
	if err := followRun(t.Context(), env, src, "", time.Minute); err != nil {
		t.Fatalf("transient read failures ended the wait: %v", err)
	}
	if !strings.Contains(out.String(), "published 3 TLD results") || strings.Count(errb.String(), "retrying") != 1 {
		t.Fatalf("stdout %q stderr %q", out.String(), errb.String())
	}

	src = &scripted{steps: []any{running, timeout}}
	err := followRun(t.Context(), env, src, "", 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "read progress") || !errors.Is(err, timeout) {
		t.Fatalf("reads failing past --pickup: %v", err)
	}
}
