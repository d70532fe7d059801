package enrich

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
)

// Applied tells how far WaitApplied has come: of the enrich consumers
// that read the published subjects, how many have acknowledged every
// observation published.
type Applied struct {
	Consumers, Done int
}

// WaitApplied returns once enrichment has applied every observation that
// an ingest published: last maps each subject to the highest stream
// sequence published on it (ingest.Stats.LastSeq). An enrich worker
// acknowledges an observation only after the state it merged it into is
// stored (or after dead-lettering it), and a consumer's acknowledgement
// floor is the sequence below which every one of its messages is
// acknowledged; so once the floor of each consumer whose filter matches a
// subject is at that subject's last sequence, every observation sent is in
// the state, whatever else is published meanwhile. A subject no enrich
// consumer reads is an error at once: it would never be applied.
// progress, if set, is told after every round.
func WaitApplied(ctx context.Context, js jetstream.JetStream, last map[string]uint64, progress func(Applied)) error {
	if len(last) == 0 {
		return nil
	}
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		rctx, cancel := bus.RequestContext(ctx, js)
		a, err := appliedRound(rctx, js, last)
		cancel()
		if errors.Is(err, errUnread) {
			return err
		}
		if err == nil {
			if progress != nil {
				progress(a)
			}
			if a.Done == a.Consumers {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for enrichment to apply the ingest: %w", context.Cause(ctx))
		case <-t.C:
		}
	}
}

var errUnread = errors.New("no enrich consumer reads")

// appliedRound is one round of WaitApplied.
func appliedRound(ctx context.Context, js jetstream.JetStream, last map[string]uint64) (Applied, error) {
	var a Applied
	st, err := js.Stream(ctx, Stream)
	if err != nil {
		return a, err
	}
	covered := map[string]bool{}
	for _, name := range ConsumerNames() {
		c, err := st.Consumer(ctx, name)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			continue
		}
		if err != nil {
			return a, err
		}
		info, err := c.Info(ctx)
		if err != nil {
			return a, err
		}
		var want uint64
		for subj, seq := range last {
			if subjectMatches(info.Config.FilterSubject, subj) {
				covered[subj] = true
				want = max(want, seq)
			}
		}
		if want == 0 {
			continue
		}
		a.Consumers++
		if info.AckFloor.Stream >= want {
			a.Done++
		}
	}
	for subj := range last {
		if !covered[subj] {
			return a, fmt.Errorf("%w %s: is an enrich worker's consumer declared for it?", errUnread, subj)
		}
	}
	return a, nil
}

// subjectMatches reports whether subject matches the NATS filter ("*" one
// token, ">" the rest; "" all).
func subjectMatches(filter, subject string) bool {
	if filter == "" || filter == ">" {
		return true
	}
	f, s := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, tok := range f {
		if tok == ">" {
			return len(s) > i
		}
		if i >= len(s) || (tok != "*" && tok != s[i]) {
			return false
		}
	}
	return len(f) == len(s)
}
