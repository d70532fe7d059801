package enrich

import (
	"encoding/binary"
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// stateCache keeps the state records a worker process wrote last, as
// stored (encoded) with their revision, within a byte budget shared by the
// process's consumer loops. A record found here is not read back from
// NATS before it is updated; if another worker changed it meanwhile, the
// write's expected-revision check fails and the record is read afresh.
//
// The records live in a log of large byte slabs, indexed by a map from
// the hash of a key to where its newest record starts. Neither holds a
// pointer, so the garbage collector marks a few dozen objects for the
// whole cache where a map of strings to byte slices gives it two per
// record (hundreds of thousands in a large cache, marked at every cycle).
// A record is written again at the end of the log each time its key is
// stored, and the older one is left dead. When the log is full its oldest
// slab is reused: the records there that are still their keys' newest
// move to the end of the log while the newest records fit the budget less
// two slabs, and otherwise leave the cache (the keys written least
// recently leave first). A record copied out by get is the caller's: the
// cache keeps no reference to it and vice versa.
//
// It also learns whether the keys it does not hold tend to exist: while
// most reads of such keys find nothing (a first load, new addresses), an
// unknown key is written as new without reading it first; a write that
// finds the key taken is a conflict like any other and is retried after a
// read.
type stateCache struct {
	mu sync.Mutex
	// index maps a key's hash to its newest record: the record's slab
	// (its place in slabs) in the high 32 bits, its offset in the slab in
	// the low 32.
	index map[uint64]uint64
	// slabs is a ring: slab number n (counted from the first one started)
	// is slabs[n % len(slabs)]; next-1 is written to, and the slabs before
	// it, back to oldest(), hold records.
	slabs    [][]byte
	next     uint64
	slabSize int
	seed     maphash.Seed
	// live is the size of the records the index points to; spare is
	// where a reused slab's live records wait while it is emptied.
	live  int
	spare []byte

	// writing holds the keys a loop of this process is writing (claim,
	// release), each with nil or, once another loop waits for it, a
	// channel that release closes.
	writing map[string]chan struct{}

	// found and absent count what reads (and blind writes) of unknown keys
	// met, halved every decayEvery so that they follow the recent mix.
	found, absent atomic.Int64
}

const decayEvery = 4096

// Slab sizes: a budget is split into at least minSlabs slabs of at most
// maxSlabSize bytes each.
const (
	minSlabs    = 8
	maxSlabSize = 4 << 20
)

// newStateCache returns a cache of budget bytes of records (0: none; the
// index adds about 40 bytes per key, and a slab is set aside for moving
// records).
func newStateCache(budget int) *stateCache {
	c := &stateCache{index: map[uint64]uint64{}, seed: maphash.MakeSeed(), writing: map[string]chan struct{}{}}
	if budget >= minSlabs*64 {
		c.slabSize = min(budget/minSlabs, maxSlabSize)
		c.slabs = make([][]byte, budget/c.slabSize)
	}
	return c
}

// A record in a slab: the key's length (uvarint) and bytes, the revision
// (8 bytes, little-endian), the data's length (uvarint) and bytes.

// get appends key's cached record to dst and returns it with the record's
// revision, or dst unchanged and false when the key is not cached.
func (c *stateCache) get(dst []byte, key string) ([]byte, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.index[maphash.String(c.seed, key)]
	if !ok {
		return dst, 0, false
	}
	k, rev, data, _ := c.record(at)
	if string(k) != key {
		return dst, 0, false // another key with the same hash
	}
	return append(dst, data...), rev, true
}

// record decodes the record at a (slab, offset) location; next is the
// offset that follows it.
func (c *stateCache) record(at uint64) (key []byte, rev uint64, data []byte, next int) {
	slab := c.slabs[at>>32]
	off := int(uint32(at))
	n, w := binary.Uvarint(slab[off:])
	off += w
	key = slab[off : off+int(n)]
	off += int(n)
	rev = binary.LittleEndian.Uint64(slab[off:])
	off += 8
	n, w = binary.Uvarint(slab[off:])
	off += w
	return key, rev, slab[off : off+int(n) : off+int(n)], off + int(n)
}

// put remembers key at rev with data (copied). A record larger than a
// slab is not kept, nor one without data.
func (c *stateCache) put(key string, rev uint64, data []byte) {
	size := 2*binary.MaxVarintLen32 + len(key) + 8 + len(data)
	if size > c.slabSize || data == nil {
		c.drop(key)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// A full round of slabs without room for the record empties the next
	// one outright (only a slab's live records moving ahead, in a cache
	// at its budget, could take that long).
	for round := 0; c.next == 0 || len(c.slabs[(c.next-1)%uint64(len(c.slabs))])+size > c.slabSize; round++ {
		c.startSlab(round < len(c.slabs))
	}
	i := (c.next - 1) % uint64(len(c.slabs))
	slab := c.slabs[i]
	at := i<<32 | uint64(len(slab))
	slab = binary.AppendUvarint(slab, uint64(len(key)))
	slab = append(slab, key...)
	slab = binary.LittleEndian.AppendUint64(slab, rev)
	slab = binary.AppendUvarint(slab, uint64(len(data)))
	c.slabs[i] = append(slab, data...)
	h := maphash.String(c.seed, key)
	if old, ok := c.index[h]; ok {
		c.live -= c.size(old)
	}
	c.index[h] = at
	c.live += c.size(at)
}

// size returns the length of the record at a location.
func (c *stateCache) size(at uint64) int {
	_, _, _, end := c.record(at)
	return end - int(uint32(at))
}

// oldest returns the number of the oldest slab holding records.
func (c *stateCache) oldest() uint64 {
	return c.next - min(c.next, uint64(len(c.slabs)))
}

// startSlab begins a new slab. When every slab is in use it reuses the
// oldest: the records there that are still their keys' newest move to the
// new slab while the newest records of all keys take at most the budget
// less two slabs (and keep is true), and leave the cache otherwise.
//
// A moved record keeps its slab and goes to the offset it has in the
// records kept so far, never past the one it leaves: no record still to
// be read can already sit at its new place.
func (c *stateCache) startSlab(keep bool) {
	i := c.next % uint64(len(c.slabs))
	kept := c.spare[:0]
	if c.next >= uint64(len(c.slabs)) {
		keep = keep && c.live+2*c.slabSize <= len(c.slabs)*c.slabSize
		old := c.slabs[i]
		for off := 0; off < len(old); {
			at := i<<32 | uint64(off)
			key, _, _, end := c.record(at)
			if h := maphash.Bytes(c.seed, key); c.index[h] == at {
				if keep {
					c.index[h] = i<<32 | uint64(len(kept))
					kept = append(kept, old[off:end]...)
				} else {
					c.live -= end - off
					delete(c.index, h)
				}
			}
			off = end
		}
	}
	if c.slabs[i] == nil {
		c.slabs[i] = make([]byte, 0, c.slabSize)
	}
	c.slabs[i] = append(c.slabs[i][:0], kept...)
	c.spare = kept[:0]
	c.next++
}

// drop forgets key.
func (c *stateCache) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := maphash.String(c.seed, key)
	if at, ok := c.index[h]; ok {
		if k, _, _, end := c.record(at); string(k) == key {
			c.live -= end - int(uint32(at))
			delete(c.index, h)
		}
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
