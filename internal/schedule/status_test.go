package schedule_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/schedule"
	"github.com/netintel/netintel/internal/testutil"
)

// Each run's outcome is kept in the status bucket: a success keeps its
// time, a later failure adds its time and error without losing the last
// success, and another process reads both back.
func TestScheduler_RecordsStatus(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	kv, err := n.JS.KeyValue(t.Context(), schedule.StatusBucket)
	if err != nil {
		t.Fatal(err)
	}
	fail := false
	job := schedule.Job{Name: "snapshot", Spec: "@every 1h", Run: func(context.Context) error {
		if fail {
			return errors.New("object store unreachable: fetch https://feed:pw@example.net/list.csv?token=s3cret: " + strings.Repeat("x", 400))
		}
		return nil
	}}
	s, err := schedule.New(nil, testutil.Logger(t), []schedule.Job{job})
	if err != nil {
		t.Fatal(err)
	}
	s.Status = kv
	before := time.Now().UTC().Add(-time.Second)
	s.Fire(t.Context(), job, time.Now().Truncate(time.Hour))
	got, err := schedule.ReadStatuses(t.Context(), kv)
	if err != nil {
		t.Fatal(err)
	}
	st := got["snapshot"]
	if st.LastSuccess == nil || st.LastSuccess.Before(before) || st.LastFailure != nil || st.Running {
		t.Fatalf("after a success: %+v", st)
	}
	fail = true
	s.Fire(t.Context(), job, time.Now().Truncate(time.Hour).Add(time.Hour))
	got, err = schedule.ReadStatuses(t.Context(), kv)
	if err != nil {
		t.Fatal(err)
	}
	st = got["snapshot"]
	if st.LastSuccess == nil || st.LastFailure == nil || !strings.HasPrefix(st.LastError, "object store unreachable") || len(st.LastError) > 310 {
		t.Fatalf("after a failure: %+v", st)
	}
	// A URL keeps its host and path, never its credentials or query.
	if !strings.Contains(st.LastError, "https://REDACTED@example.net/list.csv?REDACTED") || strings.Contains(st.LastError, "s3cret") || strings.Contains(st.LastError, "pw@") {
		t.Errorf("error kept a secret: %s", st.LastError)
	}
}

// An empty bucket reads as no statuses, not an error.
func TestReadStatuses_Empty(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	kv, err := n.JS.KeyValue(t.Context(), schedule.StatusBucket)
	if err != nil {
		t.Fatal(err)
	}
	got, err := schedule.ReadStatuses(t.Context(), kv)
	if err != nil || len(got) != 0 {
		t.Fatalf("%v %v", got, err)
	}
}
