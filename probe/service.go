package probe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/objstore"
)

// Backbone names (declared in internal/config/defaults.go and pipeline.yaml).
const (
	Stream        = "TLDWORK"
	Consumer      = "probe"
	SubjectPrefix = "tld.work."
	ProgressKV    = "tldprogress"
	LocksKV       = "locks"
)

// Service is the TLD probe on the backbone: coordinator, worker and the
// readers the API uses. New opens the buckets; it starts nothing.
type Service struct {
	cfg      config.Probe
	js       jetstream.JetStream
	kv       jetstream.KeyValue
	locks    jetstream.KeyValue
	store    objstore.Store
	log      *slog.Logger
	checker  *Checker
	inputs   *http.Client
	owner    string
	now      func() time.Time
	coordOn  atomic.Bool
	calls    atomic.Int64
	runs     runCache
	inflight sync.Map   // result keys this process's worker is checking now
	progress sync.Mutex // serializes progress writes of this process
}

// New returns a service on js and store (store may be nil for a process
// that only requests runs or checks).
func New(ctx context.Context, cfg config.Probe, js jetstream.JetStream, store objstore.Store, log *slog.Logger) (*Service, error) {
	log = log.With("stage", "probe")
	kv, err := bus.OpenKV(ctx, js, log, ProgressKV)
	if err != nil {
		return nil, fmt.Errorf("kv %s: %w", ProgressKV, err)
	}
	locks, err := bus.OpenKV(ctx, js, log, LocksKV)
	if err != nil {
		return nil, fmt.Errorf("kv %s: %w", LocksKV, err)
	}
	ck := NewChecker(cfg, log)
	var rb [4]byte
	_, _ = rand.Read(rb[:])
	return &Service{
		cfg: cfg, js: js, kv: kv, locks: locks, store: store, log: log, checker: ck,
		inputs: newHTTPClient(ck.res, max(cfg.Timeout, 30*time.Second), cfg.MaxRedirects, cfg.InsecureSkipVerify),
		owner:  hex.EncodeToString(rb[:]),
		now:    time.Now,
	}, nil
}

// Checker returns the service's checker.
func (s *Service) Checker() *Checker { return s.checker }

// RunNow is the scheduled job: it resumes an interrupted run, or starts a
// new one, and returns when it is published. It returns nil without doing
// anything when another instance is running one (logged).
func (s *Service) RunNow(ctx context.Context) error {
	err := s.coordinate(ctx, true)
	if errors.Is(err, ErrBusy) {
		s.log.Info("tld probe already running elsewhere; this tick is skipped")
		return nil
	}
	return err
}

// Request asks the probe workers to start a run now (`netintel probe`).
// It returns the request time.
func (s *Service) Request(ctx context.Context) (time.Time, error) {
	at := s.now().UTC()
	b, _ := json.Marshal(map[string]int64{"requested_at": at.Unix()})
	if _, err := s.kv.Put(ctx, KeyRequest, b); err != nil {
		return at, fmt.Errorf("put request: %w", err)
	}
	return at, nil
}

// Progress reads the live progress; a missing record is the idle state.
func (s *Service) Progress(ctx context.Context) (Progress, error) {
	var p Progress
	err := s.getJSON(ctx, KeyProgress, &p)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Progress{Status: StatusIdle, CurrentStep: "waiting for the first check"}, nil
	}
	return p, err
}

// LiveProgress is Progress for a reader that follows a run until it ends
// (`netintel probe`), with the record's revision. It reads from the
// bucket stream's leader, and only when the leader does not answer (an
// election) with a direct get, which any replica may answer: a replica
// catching up after a node restart can serve an old copy for minutes. A
// follower drops an answer whose revision is older than one it has seen.
func (s *Service) LiveProgress(ctx context.Context) (Progress, uint64, error) {
	var p Progress
	rev, _, err := s.getLive(ctx, KeyProgress, &p)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return Progress{Status: StatusIdle, CurrentStep: "waiting for the first check"}, rev, nil
	}
	return p, rev, err
}

// LivePublished is Published read as LiveProgress reads.
func (s *Service) LivePublished(ctx context.Context) (Published, bool, error) {
	var p Published
	_, _, err := s.getLive(ctx, KeyPublished, &p)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return p, false, nil
	}
	return p, err == nil, err
}

// getLive reads key into v as bus.GetLatest does; leader reports whether
// the stream leader answered (not a replica that may lag).
func (s *Service) getLive(ctx context.Context, key string, v any) (rev uint64, leader bool, err error) {
	rec, leader, err := bus.GetLatest(ctx, s.js, s.kv, key)
	if err != nil {
		return rec.Revision, leader, err
	}
	if err := json.Unmarshal(rec.Value, v); err != nil {
		return rec.Revision, leader, fmt.Errorf("decode %s: %w", key, err)
	}
	return rec.Revision, leader, nil
}

// Published reads what the latest publish recorded; ok is false before the first.
func (s *Service) Published(ctx context.Context) (Published, bool, error) {
	var p Published
	err := s.getJSON(ctx, KeyPublished, &p)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return p, false, nil
	}
	return p, err == nil, err
}

func (s *Service) getJSON(ctx context.Context, key string, v any) error {
	e, err := s.kv.Get(ctx, key)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(e.Value(), v); err != nil {
		return fmt.Errorf("decode %s: %w", key, err)
	}
	return nil
}

// stateRetryFor bounds how long a write of a run's state is tried again
// while the bucket does not acknowledge it (a leader election).
const stateRetryFor = time.Minute

// putJSON writes v to key. A write that fails without a definite answer
// (no response from the stream: stored or not) is sent again, for up to
// stateRetryFor: writing the same value twice is harmless, and a run's
// plan, end state or published record must not be lost to an election.
func (s *Service) putJSON(ctx context.Context, key string, v any) error {
	return s.put(ctx, key, v, stateRetryFor)
}

func (s *Service) put(ctx context.Context, key string, v any, retryFor time.Duration) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(retryFor)
	wait := 100 * time.Millisecond
	for {
		_, err := s.kv.Put(ctx, key, b)
		if err == nil {
			return nil
		}
		if bus.Permanent(err) || ctx.Err() != nil || time.Now().After(deadline) {
			return fmt.Errorf("put %s: %w", key, err)
		}
		if sleepCtx(ctx, wait) != nil {
			return fmt.Errorf("put %s: %w", key, err)
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// setProgress records p. A running state is written once (the next one
// supersedes it within a second); the end states, which a follower waits
// for, are retried as putJSON does.
func (s *Service) setProgress(ctx context.Context, p Progress) {
	s.progress.Lock()
	defer s.progress.Unlock()
	p.LastUpdate = s.now().Unix()
	retryFor := stateRetryFor
	if p.Status == StatusRunning {
		retryFor = 0
	}
	if err := s.put(ctx, KeyProgress, p, retryFor); err != nil {
		s.log.Warn("progress not recorded", "err", err)
	}
}

// coordinate takes the lease and drives one run to its end: it resumes a
// run left in the running state, else starts one when wantNew is set or a
// run was requested.
func (s *Service) coordinate(ctx context.Context, wantNew bool) error {
	// One owner per call: a second coordinator in the same process is busy too.
	owner := fmt.Sprintf("%s-%d", s.owner, s.calls.Add(1))
	l := &lease{kv: s.locks, js: s.js, key: LockKey, owner: owner, ttl: s.cfg.LockTTL, now: s.now}
	if err := l.acquire(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(s.cfg.LockTTL / 3)
		defer t.Stop()
		renewed := s.now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				// A renewal whose outcome is unknown (a leader election) is
				// retried until 2/3 of lock_ttl passed since the last one
				// that was stored.
				err := l.renew(ctx, s.cfg.LockTTL*2/3-s.now().Sub(renewed))
				switch {
				case err == nil:
					renewed = s.now()
				case ctx.Err() != nil:
					return
				default:
					// Taken over, or about to expire: another instance may resume the run.
					s.log.Error("run lease lost; stopping this coordinator", "err", err)
					cancel(err)
					return
				}
			}
		}
	}()
	defer func() {
		cancel(nil)
		wg.Wait()
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		l.release(rctx)
		rcancel()
	}()

	var run Run
	err := s.getJSON(ctx, KeyRun, &run)
	if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("read run: %w", err)
	}
	_, reqErr := s.kv.Get(ctx, KeyRequest)
	requested := reqErr == nil
	// A resumed run queues its unfinished TLDs under this coordinator's
	// own message ids: the dead coordinator's ids would be dropped as
	// duplicates, and the items its worker held (fetched, never
	// acknowledged) would then wait out the consumer's ack wait.
	idSuffix := ""
	switch {
	case run.State == StatusRunning:
		idSuffix = "." + owner
		s.log.Info("resuming interrupted run", "run", run.ID, "tlds", len(run.TLDs))
	case wantNew || requested:
	default:
		return nil
	}
	if requested {
		// A request is answered by one attempt, whatever its outcome:
		// a failing run is not retried in a loop.
		if err := s.kv.Delete(ctx, KeyRequest); err != nil {
			return fmt.Errorf("take request: %w", err)
		}
	}
	if run.State != StatusRunning {
		if run, err = s.newRun(ctx); err != nil {
			return err
		}
	}
	return s.drive(ctx, run, idSuffix)
}

// newRun loads the inputs and records a new run's plan; a failure is
// recorded in progress as a failed check, with its reason.
func (s *Service) newRun(ctx context.Context) (Run, error) {
	start := s.now().UTC()
	var rb [2]byte
	_, _ = rand.Read(rb[:])
	run := Run{ID: start.Format("20060102T150405Z") + hex.EncodeToString(rb[:]), State: StatusRunning, StartedAt: start.Unix(), Stealth: s.cfg.Stealth.Enabled, StealthMax: s.cfg.Stealth.MaxTLDs}
	s.setProgress(ctx, Progress{Status: StatusRunning, CurrentStep: "loading IANA inputs", RunID: run.ID})
	tlds, err := s.loadTLDs(ctx)
	if err != nil {
		s.fail(ctx, run, "loading inputs", err)
		return run, err
	}
	run.TLDs = tlds
	if err := s.putJSON(ctx, KeyRun, run); err != nil {
		return run, err
	}
	s.log.Info("run started", "run", run.ID, "tlds", len(tlds))
	return run, nil
}

func (s *Service) loadTLDs(ctx context.Context) ([]string, error) {
	b, err := fetch(ctx, s.inputs, s.cfg.UserAgent, s.cfg.TLDList)
	if err != nil {
		return nil, &inputError{"TLD list", err}
	}
	tlds, err := ParseTLDList(b)
	if err != nil {
		return nil, &inputError{"TLD list", err}
	}
	if len(s.cfg.OnlyTLDs) > 0 {
		tlds = slices.DeleteFunc(tlds, func(t string) bool {
			return !slices.ContainsFunc(s.cfg.OnlyTLDs, func(o string) bool { return strings.EqualFold(o, t) })
		})
	}
	if s.cfg.MaxTLDs > 0 && len(tlds) > s.cfg.MaxTLDs {
		tlds = tlds[:s.cfg.MaxTLDs]
	}
	if len(tlds) == 0 {
		return nil, &publicError{"no TLD left to check after only_tlds/max_tlds"}
	}
	return tlds, nil
}

// plan holds the per-TLD inputs of a run's work items.
type plan struct {
	bootstrap  map[string][]string
	fallback   map[string]string
	candidates map[string][]string
}

func (s *Service) loadPlan(ctx context.Context) (plan, error) {
	var p plan
	b, err := fetch(ctx, s.inputs, s.cfg.UserAgent, s.cfg.RDAPBootstrap)
	if err != nil {
		return p, &inputError{"RDAP bootstrap", err}
	}
	if p.bootstrap, err = ParseBootstrap(b); err != nil {
		return p, &inputError{"RDAP bootstrap", err}
	}
	// The fallback table and candidate file are optional: a failure is logged.
	if s.cfg.WhoisFallback != "" {
		if b, err := fetch(ctx, s.inputs, s.cfg.UserAgent, s.cfg.WhoisFallback); err != nil {
			s.log.Warn("whois fallback table not loaded", "err", err)
		} else if p.fallback, err = ParseWhoisTable(b); err != nil {
			s.log.Warn("whois fallback table not loaded", "err", err)
		}
	}
	if s.cfg.Stealth.Enabled && s.cfg.Stealth.CandidatesFile != "" {
		if b, err := fetch(ctx, s.inputs, s.cfg.UserAgent, s.cfg.Stealth.CandidatesFile); err != nil {
			s.log.Warn("stealth candidates not loaded", "err", err)
		} else if p.candidates, err = ParseCandidates(b); err != nil {
			s.log.Warn("stealth candidates not loaded", "err", err)
		}
	}
	return p, nil
}

func (s *Service) fail(ctx context.Context, run Run, step string, err error) {
	if Offline(err) {
		// One plain line: no resolver address, no Go error chain.
		s.log.Warn("TLD check not run: the internet is unreachable (IANA's TLD list and RDAP bootstrap could not be fetched); the last published results stay",
			"run", run.ID, "reason", publicReason(err))
	} else {
		s.log.Error("tld probe run failed", "run", run.ID, "step", step, "err", err)
	}
	run.State = StatusFailed
	_ = s.putJSON(ctx, KeyRun, run)
	// The log has the whole error; the status page a reason without addresses.
	s.setProgress(context.WithoutCancel(ctx), Progress{Status: StatusFailed, CurrentStep: "failed while " + step + ": " + publicReason(err), TotalTLDs: len(run.TLDs), RunID: run.ID})
}

// abort ends drive with err. The run is recorded as failed, unless this
// coordinator was stopped (its lease lost, its process shutting down) and
// that is why the step failed: then the run stays running, and another
// coordinator resumes it once the lease is free.
func (s *Service) abort(ctx context.Context, run Run, step string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("run %s interrupted while %s: %w", run.ID, step, errors.Join(err, context.Cause(ctx)))
	}
	s.fail(ctx, run, step, err)
	return err
}

// drive queues the run's missing work (under message ids ending in
// idSuffix, so that a resumed run's items are not taken for the dead
// coordinator's), follows results until every TLD has one, and publishes.
func (s *Service) drive(ctx context.Context, run Run, idSuffix string) error {
	total := len(run.TLDs)
	s.setProgress(ctx, Progress{Status: StatusRunning, CurrentStep: "loading RDAP bootstrap", TotalTLDs: total, RunID: run.ID})
	p, err := s.loadPlan(ctx)
	if err != nil {
		return s.abort(ctx, run, "loading inputs", err)
	}
	w, err := s.kv.Watch(ctx, "result."+run.ID+".*")
	if err != nil {
		return fmt.Errorf("watch results: %w", err)
	}
	defer func() { _ = w.Stop() }()
	results := map[string]Result{}
	// Initial values: results written before an interruption.
	for e := range w.Updates() {
		if e == nil {
			break
		}
		s.addResult(results, e)
	}
	queued, requeues := 0, 0
	if missing := s.missing(run, results); len(missing) > 0 {
		s.setProgress(ctx, Progress{Status: StatusRunning, CurrentStep: fmt.Sprintf("queueing %d TLDs", len(missing)), TotalTLDs: total, ProcessedTLDs: len(results), RunID: run.ID})
		if queued, err = s.queue(ctx, run, p, missing, idSuffix, idSuffix != "" || len(results) > 0 || run.Queued); err != nil {
			return s.abort(ctx, run, "queueing work", err)
		}
	}
	if !run.Queued {
		run.Queued = true
		if err := s.putJSON(ctx, KeyRun, run); err != nil {
			return err
		}
	}
	s.log.Info("run queued", "run", run.ID, "queued", queued, "done_before", len(results), "total", total)
	step := "checking RDAP, WHOIS and stealth RDAP"
	s.setProgress(ctx, Progress{Status: StatusRunning, CurrentStep: step, TotalTLDs: total, ProcessedTLDs: len(results), RunID: run.ID})
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	lastNew, reported := s.now(), len(results)
	deadline := time.Unix(run.StartedAt, 0).Add(s.cfg.RunTimeout)
	for len(results) < total {
		select {
		case <-ctx.Done():
			return fmt.Errorf("run %s interrupted: %w", run.ID, context.Cause(ctx))
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("run %s: results watch closed", run.ID)
			}
			if e != nil && s.addResult(results, e) {
				lastNew = s.now()
			}
		case <-tick.C:
			if len(results) != reported {
				reported = len(results)
				s.setProgress(ctx, Progress{Status: StatusRunning, CurrentStep: step, TotalTLDs: total, ProcessedTLDs: reported, RunID: run.ID})
			}
			if s.now().After(deadline) {
				err := &publicError{fmt.Sprintf("%d of %d TLDs unfinished after run_timeout %s", total-len(results), total, s.cfg.RunTimeout)}
				s.fail(ctx, run, "checking", err)
				return err
			}
			if s.now().Sub(lastNew) > s.cfg.StallTimeout {
				requeues++
				missing := s.missing(run, results)
				s.log.Warn("run stalled; re-queueing unfinished TLDs", "run", run.ID, "missing", len(missing))
				if _, err := s.queue(ctx, run, p, missing, fmt.Sprintf(".r%d", requeues), true); err != nil {
					s.log.Error("re-queue failed", "err", err)
				}
				lastNew = s.now()
			}
		}
	}
	s.setProgress(ctx, Progress{Status: StatusRunning, CurrentStep: "publishing results", TotalTLDs: total, ProcessedTLDs: total, RunID: run.ID})
	if err := s.publish(ctx, run, results); err != nil {
		return s.abort(ctx, run, "publishing", err)
	}
	run.State = StatusCompleted
	if err := s.putJSON(ctx, KeyRun, run); err != nil {
		return err
	}
	s.setProgress(ctx, Progress{Status: StatusCompleted, CurrentStep: StepCompleted, TotalTLDs: total, ProcessedTLDs: total, RunID: run.ID})
	// The per-TLD results now live in the object store; drop them from KV
	// in one purge of the bucket's stream by subject (no per-key markers).
	if err := s.purgeResults(ctx, run.ID); err != nil {
		s.log.Warn("per-TLD results left in kv", "run", run.ID, "err", err)
	}
	s.log.Info("run completed", "run", run.ID, "tlds", total, "took", s.now().Sub(time.Unix(run.StartedAt, 0)).Round(time.Second))
	return nil
}

func (s *Service) addResult(results map[string]Result, e jetstream.KeyValueEntry) bool {
	if e.Operation() != jetstream.KeyValuePut {
		return false
	}
	var r Result
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		s.log.Warn("bad result in kv", "key", e.Key(), "err", err)
		return false
	}
	if _, ok := results[r.TLD]; ok {
		return false
	}
	results[r.TLD] = r
	return true
}

func (s *Service) missing(run Run, results map[string]Result) []string {
	var out []string
	for _, t := range run.TLDs {
		if _, ok := results[t]; !ok {
			out = append(out, t)
		}
	}
	return out
}

// queueRetryFor bounds how long queue sends work items again while the
// stream does not acknowledge them (a TLDWORK leader election).
const queueRetryFor = 2 * time.Minute

// queue publishes one work item per TLD; message ids make a repeated queue
// of the same item (a resumed run) a no-op within the dedup window, and
// workers skip TLDs that already have a result. An item that gets no
// acknowledgement (no response from the stream while it elects a leader:
// stored or not) is sent again with the same message id until the stream
// acknowledges it, within queueRetryFor in all.
func (s *Service) queue(ctx context.Context, run Run, p plan, tlds []string, idSuffix string, requeued bool) (int, error) {
	pos := map[string]int{}
	for i, t := range run.TLDs {
		pos[t] = i
	}
	qctx, cancel := context.WithTimeout(ctx, queueRetryFor)
	defer cancel()
	pub := bus.NewPublisher(s.js, len(tlds))
	pub.RetryFor = queueRetryFor
	for _, t := range tlds {
		w := Work{RunID: run.ID, TLD: t, RDAPURLs: p.bootstrap[t], WhoisFallback: p.fallback[t],
			Stealth:    run.Stealth && (run.StealthMax == 0 || pos[t] < run.StealthMax),
			Candidates: p.candidates[t], Requeued: requeued}
		b, _ := json.Marshal(w)
		if err := pub.Publish(qctx, SubjectPrefix+run.ID+"."+t, run.ID+"."+t+idSuffix, b); err != nil {
			return 0, fmt.Errorf("publish work %s: %w", t, queueErr(ctx, err))
		}
	}
	if err := pub.Flush(qctx); err != nil {
		return 0, fmt.Errorf("publish work: %w", queueErr(ctx, err))
	}
	if pub.Resent > 0 {
		s.log.Info("work items sent again after a lost acknowledgement", "run", run.ID, "resent", pub.Resent, "already_stored", pub.Duplicates)
	}
	return len(tlds), nil
}

// queueErr names the overall deadline when it, not ctx, ended the queueing.
func queueErr(ctx context.Context, err error) error {
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("not acknowledged within %s: %w", queueRetryFor, err)
	}
	return err
}

// FirstRun starts a check when nothing was ever published and no run is
// going (the single-process default at start). It runs once: a failure is
// returned, not retried; the schedule or `netintel probe` try again.
func (s *Service) FirstRun(ctx context.Context) error {
	if _, ok, err := s.Published(ctx); err != nil || ok {
		return err
	}
	var run Run
	if err := s.getJSON(ctx, KeyRun, &run); err == nil && run.State == StatusRunning {
		return nil // the worker's supervisor resumes it
	}
	return s.RunNow(ctx)
}

// Requested reports whether a run request waits for a worker.
func (s *Service) Requested(ctx context.Context) (bool, error) {
	_, err := s.kv.Get(ctx, KeyRequest)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, err
}

// purgeResults removes every result.<run>.* key of the tldprogress bucket.
func (s *Service) purgeResults(ctx context.Context, runID string) error {
	st, err := s.js.Stream(ctx, "KV_"+ProgressKV)
	if err != nil {
		return fmt.Errorf("kv stream: %w", err)
	}
	if err := st.Purge(ctx, jetstream.WithPurgeSubject("$KV."+ProgressKV+".result."+runID+".>")); err != nil {
		return fmt.Errorf("purge results: %w", err)
	}
	return nil
}
