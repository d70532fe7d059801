package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// StatusBucket is the KV bucket that keeps each job's last outcome, one
// key per job name, so that any process (the web console, an operator's
// `nats kv get`) sees when a job last succeeded whichever scheduler copy
// ran it. It has no TTL: a daily job's last success must outlive the day.
const StatusBucket = "jobstatus"

// maxStatusError bounds the error text kept in a status.
const maxStatusError = 300

// Status is the last outcome of one job, as the copy that ran it
// recorded it. Times are UTC; a nil time means never.
type Status struct {
	Job         string     `json:"job"`
	LastStart   *time.Time `json:"last_start,omitempty"`
	LastSuccess *time.Time `json:"last_success,omitempty"`
	LastFailure *time.Time `json:"last_failure,omitempty"`
	// LastError is the error of the last failed run (truncated); it is
	// what the scheduler logged for it.
	LastError string `json:"last_error,omitempty"`
	// LastDurationSeconds is how long the last finished run took.
	LastDurationSeconds float64 `json:"last_duration_seconds"`
	// Running is true from a run's start until it ends.
	Running bool `json:"running"`
}

// record writes a job's outcome to the status bucket; a failure to write
// is logged, never the job's failure.
func (s *Scheduler) record(ctx context.Context, job string, update func(*Status)) {
	if s.Status == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	st := Status{Job: job}
	if e, err := s.Status.Get(ctx, job); err == nil {
		_ = json.Unmarshal(e.Value(), &st)
	} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
		s.log.Warn("read job status", "job", job, "err", err)
	}
	st.Job = job
	update(&st)
	b, _ := json.Marshal(st)
	if _, err := s.Status.Put(ctx, job, b); err != nil {
		s.log.Warn("write job status", "job", job, "err", err)
	}
}

func (s *Scheduler) recordStart(ctx context.Context, job string, start time.Time) {
	s.record(ctx, job, func(st *Status) {
		t := start.UTC()
		st.LastStart, st.Running = &t, true
	})
}

func (s *Scheduler) recordEnd(ctx context.Context, job string, start time.Time, err error) {
	end := time.Now().UTC()
	s.record(ctx, job, func(st *Status) {
		st.Running = false
		st.LastDurationSeconds = end.Sub(start).Seconds()
		if err == nil {
			st.LastSuccess = &end
			return
		}
		st.LastFailure = &end
		msg := redactURLs(err.Error())
		if len(msg) > maxStatusError {
			msg = msg[:maxStatusError] + "..."
		}
		st.LastError = msg
	})
}

// ReadStatuses returns every job status in kv, by job name.
func ReadStatuses(ctx context.Context, kv jetstream.KeyValue) (map[string]Status, error) {
	out := map[string]Status{}
	lister, err := kv.ListKeys(ctx)
	if err != nil {
		if errors.Is(err, jetstream.ErrNoKeysFound) {
			return out, nil
		}
		return nil, fmt.Errorf("list job statuses: %w", err)
	}
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	for _, k := range keys {
		e, err := kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read job status %s: %w", k, err)
		}
		var st Status
		if err := json.Unmarshal(e.Value(), &st); err != nil {
			continue // not ours
		}
		out[k] = st
	}
	return out, nil
}

var urlRe = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)

// redactURLs drops the credentials and query of every URL in msg: a feed
// URL may carry a token, and the status is shown to operators who need
// the host and path, never the secret.
func redactURLs(msg string) string {
	return urlRe.ReplaceAllStringFunc(msg, func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil {
			return "(a URL)"
		}
		if u.User != nil {
			u.User = url.User("REDACTED")
		}
		if u.RawQuery != "" {
			u.RawQuery = "REDACTED"
		}
		u.Fragment = ""
		return u.String()
	})
}
