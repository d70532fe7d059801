package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/robfig/cron/v3"
)

// Job is one scheduled piece of work.
type Job struct {
	// Name identifies the job in pipeline.yaml's schedules and in claims.
	Name string
	// Spec is its cron expression (see Parse).
	Spec string
	// Run does the work; it should return when ctx is cancelled.
	Run func(ctx context.Context) error
	// Retries is how many times a failed run is run again within its
	// tick, by the copy that claimed it: after RetryWait, then twice that,
	// and so on. A retry that would start after the job's next tick is
	// not made; that tick runs the job instead. 0 = a failed run waits
	// for the next tick.
	Retries   int
	RetryWait time.Duration
}

// Scheduler fires jobs on their schedules. With a KV bucket, each tick of a
// job is claimed with a create-only key, so among any number of scheduler
// copies exactly one runs it.
type Scheduler struct {
	kv   jetstream.KeyValue
	log  *slog.Logger
	jobs []Job
	now  func() time.Time
	m    *metrics

	// OnFire, when set, is called after a copy wins a tick (tests, metrics).
	OnFire func(job string, tick time.Time)
	// Status, when set, is the StatusBucket: every run's start and
	// outcome are recorded there under the job's name.
	Status jetstream.KeyValue
}

// New validates every job's spec. kv may be nil for a single, unshared scheduler.
func New(kv jetstream.KeyValue, log *slog.Logger, jobs []Job) (*Scheduler, error) {
	var errs []error
	for _, j := range jobs {
		if _, err := Parse(j.Spec); err != nil {
			errs = append(errs, fmt.Errorf("schedule %s: %w", j.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Scheduler{kv: kv, log: log.With("stage", "scheduler"), jobs: jobs, now: time.Now}, nil
}

// Run fires jobs until ctx is cancelled, then waits for running jobs to return.
func (s *Scheduler) Run(ctx context.Context) error {
	c := cron.New(cron.WithLocation(time.UTC))
	var wg sync.WaitGroup
	for _, j := range s.jobs {
		sched, _ := Parse(j.Spec)
		var running sync.Mutex
		c.Schedule(sched, cron.FuncJob(func() {
			tick := tickOf(sched, s.now())
			if !running.TryLock() {
				s.log.Warn("job still running, tick skipped", "job", j.Name, "tick", tick)
				return
			}
			wg.Add(1)
			defer wg.Done()
			defer running.Unlock()
			s.Fire(ctx, j, tick)
		}))
		s.log.Info("job scheduled", "job", j.Name, "spec", j.Spec, "next", sched.Next(s.now()).UTC())
	}
	c.Start()
	<-ctx.Done()
	<-c.Stop().Done()
	wg.Wait()
	return nil
}

// Fire claims the tick and, if this copy won it, runs the job.
func (s *Scheduler) Fire(ctx context.Context, j Job, tick time.Time) {
	ok, err := s.Claim(ctx, j.Name, tick)
	if err != nil {
		s.log.Error("claim tick", "job", j.Name, "tick", tick, "err", err)
		return
	}
	if !ok {
		s.log.Debug("tick claimed by another copy", "job", j.Name, "tick", tick)
		return
	}
	if s.OnFire != nil {
		s.OnFire(j.Name, tick)
	}
	s.log.Info("job started", "job", j.Name, "tick", tick)
	err = s.run(ctx, j, tick)
	if err == nil || j.Retries <= 0 || j.RetryWait <= 0 {
		return
	}
	sched, _ := Parse(j.Spec) // validated by New
	next := sched.Next(tick)
	wait := j.RetryWait
	for attempt := 1; err != nil && attempt <= j.Retries; attempt++ {
		if !s.now().Add(wait).Before(next) {
			return // the next tick comes first
		}
		s.log.Warn("job failed, retrying", "job", j.Name, "tick", tick, "retry", attempt, "of", j.Retries, "in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		err = s.run(ctx, j, tick)
		wait *= 2
	}
}

// run runs j once and logs how it ended.
func (s *Scheduler) run(ctx context.Context, j Job, tick time.Time) error {
	start := time.Now()
	s.recordStart(ctx, j.Name, start)
	err := j.Run(ctx)
	s.recordEnd(ctx, j.Name, start, err)
	s.m.ran(j.Name, start, time.Now(), err)
	if err != nil {
		s.log.Error("job failed", "job", j.Name, "tick", tick, "err", err, "took", time.Since(start))
		return err
	}
	s.log.Info("job finished", "job", j.Name, "tick", tick, "took", time.Since(start))
	return nil
}

// Claim records that this copy runs job at tick. It returns false when
// another copy claimed the same tick first.
func (s *Scheduler) Claim(ctx context.Context, job string, tick time.Time) (bool, error) {
	if s.kv == nil {
		return true, nil
	}
	key := job + "." + strconv.FormatInt(tick.Unix(), 10)
	_, err := s.kv.Create(ctx, key, []byte(time.Now().UTC().Format(time.RFC3339Nano)))
	if errors.Is(err, jetstream.ErrKeyExists) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create claim %s: %w", key, err)
	}
	return true, nil
}
