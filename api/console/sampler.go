package console

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// SamplerOptions say what the pipeline charts sample.
type SamplerOptions struct {
	// Stream is the observation stream; Consumers its enrich consumers
	// (the base one and its partitions, which filter disjoint subjects).
	Stream    string
	Consumers []string
	// DeadStream is the dead-letter stream ("" = none).
	DeadStream string
	// Interval between samples; Size samples are kept.
	Interval time.Duration
	Size     int
}

// Sample is one reading of the backbone's counters.
type Sample struct {
	T time.Time
	// Ingested is the observation stream's last sequence: every
	// observation ever stored.
	Ingested uint64
	// Backlog is what the enrich consumers have not yet acknowledged
	// (pending plus awaiting acknowledgement).
	Backlog int64
	// Dead is the dead-letter stream's last sequence.
	Dead uint64
}

// Point is one chart point: the rates between two samples.
type Point struct {
	T time.Time `json:"t"`
	// Ingest is observations stored per second; Enrich observations the
	// enrich workers settled per second (stored minus the growth of the
	// backlog); Dead dead letters per second.
	Ingest  float64 `json:"ingest_per_second"`
	Enrich  float64 `json:"enrich_per_second"`
	Dead    float64 `json:"dead_per_second"`
	Backlog int64   `json:"backlog"`
}

// Sampler reads the backbone's counters every interval into a ring, so
// the console can chart recent rates in any process: the numbers come
// from JetStream, not from this process's metrics.
type Sampler struct {
	js       jetstream.JetStream
	opt      SamplerOptions
	interval time.Duration

	mu   sync.Mutex
	ring []Sample
}

// NewSampler returns a sampler; Run starts it.
func NewSampler(js jetstream.JetStream, opt SamplerOptions) *Sampler {
	if opt.Interval <= 0 {
		opt.Interval = 5 * time.Second
	}
	if opt.Size < 2 {
		opt.Size = 120
	}
	return &Sampler{js: js, opt: opt, interval: opt.Interval}
}

// Run samples at once and then every interval until ctx ends; a failed
// sample is skipped (the chart shows a gap in time, not a false zero).
func (s *Sampler) Run(ctx context.Context) error {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		_ = s.Sample(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Sample takes one reading and appends it to the ring.
func (s *Sampler) Sample(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	smp := Sample{T: time.Now()}
	st, err := s.js.Stream(ctx, s.opt.Stream)
	if err != nil {
		return err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return err
	}
	smp.Ingested = info.State.LastSeq
	for _, name := range s.opt.Consumers {
		c, err := st.Consumer(ctx, name)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		ci, err := c.Info(ctx)
		if err != nil {
			return err
		}
		smp.Backlog += int64(ci.NumPending) + int64(ci.NumAckPending)
	}
	if s.opt.DeadStream != "" {
		if ds, err := s.js.Stream(ctx, s.opt.DeadStream); err == nil {
			if di, err := ds.Info(ctx); err == nil {
				smp.Dead = di.State.LastSeq
			}
		}
	}
	s.mu.Lock()
	s.ring = append(s.ring, smp)
	if len(s.ring) > s.opt.Size {
		s.ring = append(s.ring[:0], s.ring[len(s.ring)-s.opt.Size:]...)
	}
	s.mu.Unlock()
	return nil
}

// Points returns the rates between consecutive samples, oldest first.
func (s *Sampler) Points() []Point {
	s.mu.Lock()
	ring := append([]Sample(nil), s.ring...)
	s.mu.Unlock()
	out := []Point{}
	for i := 1; i < len(ring); i++ {
		a, b := ring[i-1], ring[i]
		dt := b.T.Sub(a.T).Seconds()
		if dt <= 0 {
			continue
		}
		in := float64(b.Ingested) - float64(a.Ingested)
		enr := in - float64(b.Backlog-a.Backlog)
		out = append(out, Point{T: b.T.UTC(), Ingest: max(0, in/dt), Enrich: max(0, enr/dt),
			Dead: max(0, (float64(b.Dead)-float64(a.Dead))/dt), Backlog: b.Backlog})
	}
	return out
}
