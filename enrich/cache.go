package enrich

import (
	"sync"
	"sync/atomic"
)

// stateCache keeps the state records a worker process wrote or read last,
// as stored (encoded) with their revision, within a byte budget shared by
// the process's consumer loops. A record found here is not read back from
// NATS before it is updated; if another worker changed it meanwhile, the
// write's expected-revision check fails and the record is read afresh.
//
// It also learns whether the keys it does not hold tend to exist: while
// most reads of such keys find nothing (a first load, new addresses), an
// unknown key is written as new without reading it first; a write that
// finds the key taken is a conflict like any other and is retried after a
// read.
type stateCache struct {
	mu     sync.Mutex
	m      map[string]cached
	bytes  int
	budget int

	// writing holds the keys a loop of this process is writing (claim,
	// release), each with nil or, once another loop waits for it, a
	// channel that release closes.
	writing map[string]chan struct{}

	// found and absent count what reads (and blind writes) of unknown keys
	// met, halved every decayEvery so that they follow the recent mix.
	found, absent atomic.Int64
}

// cached is a stored record: data nil means the key has no value at rev
// (never written, or deleted).
type cached struct {
	rev  uint64
	data []byte
}

// entryOverhead approximates the memory of a cache entry beyond its data
// (key, map slot, slice header).
const entryOverhead = 64

const decayEvery = 4096

func newStateCache(budget int) *stateCache {
	return &stateCache{m: map[string]cached{}, budget: budget, writing: map[string]chan struct{}{}}
}

func (c *stateCache) get(key string) (cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	return e, ok
}

// put remembers key at rev with data, evicting about a quarter of the
// budget (in map order, which is as good as random here) when it is full.
func (c *stateCache) put(key string, rev uint64, data []byte) {
	size := len(key) + cap(data) + entryOverhead
	if size > c.budget/4 {
		c.drop(key)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[key]; ok {
		c.bytes -= len(key) + cap(old.data) + entryOverhead
	}
	c.m[key] = cached{rev: rev, data: data}
	c.bytes += size
	if c.bytes <= c.budget {
		return
	}
	for k, e := range c.m {
		if c.bytes <= c.budget*3/4 {
			break
		}
		delete(c.m, k)
		c.bytes -= len(k) + cap(e.data) + entryOverhead
	}
}

func (c *stateCache) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[key]; ok {
		delete(c.m, key)
		c.bytes -= len(key) + cap(old.data) + entryOverhead
	}
}

// learned records whether a key the cache did not hold existed.
func (c *stateCache) learned(existed bool) {
	n := &c.absent
	if existed {
		n = &c.found
	}
	if n.Add(1) >= decayEvery {
		c.found.Store(c.found.Load() / 2)
		c.absent.Store(c.absent.Load() / 2)
	}
}

// guessAbsent reports whether an unknown key should be written as new
// without reading it: when recent unknown keys mostly did not exist.
func (c *stateCache) guessAbsent() bool {
	a, f := c.absent.Load(), c.found.Load()
	return a >= 64 && a > 2*f
}

// claim takes the keys no other loop of this process is writing (mine)
// and returns, for the others, the keys and channels that close when their
// writes are answered. Two loops holding the same partition thus write a
// key one after the other, the second from the first's cached result,
// instead of racing to a conflict. A claim is an optimization only: every
// write still checks the record's revision.
func (c *stateCache) claim(keys []string) (mine, busy []string, wait []chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		if ch, ok := c.writing[k]; ok {
			if ch == nil {
				ch = make(chan struct{})
				c.writing[k] = ch
			}
			busy, wait = append(busy, k), append(wait, ch)
			continue
		}
		c.writing[k] = nil
		mine = append(mine, k)
	}
	return mine, busy, wait
}

// release ends the claims of keys, waking the loops waiting for them.
func (c *stateCache) release(keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		if ch, ok := c.writing[k]; ok {
			if ch != nil {
				close(ch)
			}
			delete(c.writing, k)
		}
	}
}
