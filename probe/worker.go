package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
)

// RunWorker pulls work items from the durable consumer and checks up to
// Concurrency TLDs at once, writing each result to the tldprogress bucket.
// Beside it, a supervisor loop starts a requested run and resumes a run
// whose coordinator died. It returns when ctx is cancelled.
func (s *Service) RunWorker(ctx context.Context) error {
	cons, err := bus.OpenConsumer(ctx, s.js, s.log, Stream, Consumer)
	if err != nil {
		return fmt.Errorf("consumer %s/%s: %w", Stream, Consumer, err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.supervise(ctx) }()
	defer wg.Wait()
	return s.consume(ctx, cons)
}

func (s *Service) consume(ctx context.Context, cons jetstream.Consumer) error {
	it, err := cons.Messages(jetstream.PullMaxMessages(s.cfg.Concurrency))
	if err != nil {
		return fmt.Errorf("pull work: %w", err)
	}
	stop := context.AfterFunc(ctx, it.Drain)
	defer stop()
	sem := make(chan struct{}, s.cfg.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			handBack(it)
			return nil
		}
		msg, err := it.Next()
		if err != nil {
			<-sem
			if ctx.Err() != nil {
				handBack(it)
				return nil
			}
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return fmt.Errorf("pull work: %w", err)
			}
			// Missed heartbeats and the like: the iterator keeps going; do not spin.
			s.log.Warn("pull work", "err", err)
			if sleepCtx(ctx, time.Second) != nil {
				return nil
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			s.handle(ctx, msg)
		}()
	}
}

// handBack gives the stream back, at once, the items the iterator
// fetched and nobody took, once it is draining: another worker starts them
// now rather than after the consumer's ack wait (minutes). A crash leaves
// them to that wait; a shutdown need not.
func handBack(it jetstream.MessagesContext) {
	for {
		msg, err := it.Next(jetstream.NextMaxWait(2 * time.Second))
		if err != nil {
			return
		}
		_ = msg.Nak()
	}
}

// handle checks one TLD. A check's own failures are part of its result;
// only a failure to record the result leaves the item for redelivery.
func (s *Service) handle(ctx context.Context, msg jetstream.Msg) {
	var w Work
	if err := json.Unmarshal(msg.Data(), &w); err != nil || !ValidTLD(w.TLD) || w.RunID == "" {
		s.log.Warn("dropping malformed work item", "subject", msg.Subject(), "err", err)
		_ = msg.Term()
		return
	}
	running, err := s.runIsRunning(ctx, w.RunID)
	if err != nil {
		_ = msg.NakWithDelay(time.Second)
		return
	}
	if !running {
		_ = msg.Ack() // an item of a finished or abandoned run
		return
	}
	key := ResultKey(w.RunID, w.TLD)
	// Only a re-queued or redelivered item can find its TLD done already;
	// a first delivery skips the lookup (one round trip less per TLD).
	md, _ := msg.Metadata()
	if w.Requeued || md == nil || md.NumDelivered > 1 {
		if _, err := s.kv.Get(ctx, key); err == nil {
			_ = msg.Ack()
			return
		}
	}
	// A resumed run queues its unfinished TLDs again, so the item a dead
	// worker handed back and its copy can both be here at once: the one
	// being checked answers for both (it records the result, or goes back
	// to the stream).
	if _, busy := s.inflight.LoadOrStore(key, struct{}{}); busy {
		_ = msg.Ack()
		return
	}
	defer s.inflight.Delete(key)
	// Keep the item ours while a slow TLD is checked.
	hb, stopHB := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(20 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-hb.Done():
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	r := s.checker.Check(ctx, w)
	stopHB()
	if ctx.Err() != nil {
		// Shutting down mid-check: the result may be incomplete. Hand the item back.
		_ = msg.Nak()
		return
	}
	b, _ := json.Marshal(r)
	if _, err := s.kv.Create(ctx, key, b); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		s.log.Warn("result not recorded; item will be redelivered", "tld", w.TLD, "err", err)
		_ = msg.NakWithDelay(2 * time.Second)
		return
	}
	if err := msg.Ack(); err != nil {
		s.log.Debug("ack", "tld", w.TLD, "err", err)
	}
}

// supervise starts a requested run and resumes an orphaned one (state
// running, lease expired), polling every Poll.
func (s *Service) supervise(ctx context.Context) {
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if s.coordOn.Load() {
			continue
		}
		want, err := s.needsCoordinator(ctx)
		if err != nil {
			s.log.Debug("supervise", "err", err)
			continue
		}
		if !want {
			continue
		}
		s.coordOn.Store(true)
		go func() {
			defer s.coordOn.Store(false)
			if err := s.coordinate(ctx, false); err != nil && !errors.Is(err, ErrBusy) && ctx.Err() == nil {
				s.log.Error("tld probe run", "err", err)
			}
		}()
	}
}

func (s *Service) needsCoordinator(ctx context.Context) (bool, error) {
	if _, err := s.kv.Get(ctx, KeyRequest); err == nil {
		return true, nil
	} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, err
	}
	var run Run
	if err := s.getJSON(ctx, KeyRun, &run); err != nil {
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return false, nil
		}
		return false, err
	}
	if run.State != StatusRunning {
		return false, nil
	}
	return leaseFree(ctx, s.locks, LockKey, s.now())
}

// runCache remembers that a run is in the running state for a moment, so
// that workers do not read the run record for every TLD.
type runCache struct {
	mu sync.Mutex
	id string
	at time.Time
}

// runCacheTTL bounds how stale "this run is still running" may be; an item
// of a run that just ended is then checked for nothing, never lost.
const runCacheTTL = 2 * time.Second

func (s *Service) runIsRunning(ctx context.Context, id string) (bool, error) {
	s.runs.mu.Lock()
	if s.runs.id == id && time.Since(s.runs.at) < runCacheTTL {
		s.runs.mu.Unlock()
		return true, nil
	}
	s.runs.mu.Unlock()
	var run Run
	err := s.getJSON(ctx, KeyRun, &run)
	if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, err
	}
	if err != nil || run.ID != id || run.State != StatusRunning {
		// That answer came from a direct get, which any replica may give,
		// and a replica catching up after a restart can hold an older run
		// record. An item is dropped only on the stream leader's word;
		// while there is no leader it is tried again later.
		run = Run{}
		_, leader, lerr := s.getLive(ctx, KeyRun, &run)
		switch {
		case leader && (errors.Is(lerr, jetstream.ErrKeyNotFound) || errors.Is(lerr, jetstream.ErrKeyDeleted)):
			return false, nil
		case lerr != nil:
			return false, lerr
		case !leader:
			return false, fmt.Errorf("run %s looks ended, and the stream leader did not answer to confirm it", id)
		}
	}
	ok := run.ID == id && run.State == StatusRunning
	if ok {
		s.runs.mu.Lock()
		s.runs.id, s.runs.at = id, time.Now()
		s.runs.mu.Unlock()
	}
	return ok, nil
}
