package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// KV key layout of the apikeys bucket: k.<id> holds a Record (JSON),
// used.<id> the RFC 3339 time the key was last used.
const (
	recordPrefix   = "k."
	lastUsedPrefix = "used."
)

// Record is a stored key: everything but the secret, which exists only in
// the customer's hands; Hash is its keyed hash.
type Record struct {
	ID      string    `json:"id"`
	User    string    `json:"user"`
	Tier    string    `json:"tier"`
	Tags    []string  `json:"tags"`
	Created time.Time `json:"created"`
	HashAlg string    `json:"hash_alg"`
	Hash    string    `json:"hash"`
	// RevokedAt is set by Revoke; the key then fails with ErrRevokedKey.
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	// ExpiresAt is set on the old key by Rotate: the end of the overlap.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// RotatedFrom and RotatedTo link the keys of a rotation.
	RotatedFrom string `json:"rotated_from,omitempty"`
	RotatedTo   string `json:"rotated_to,omitempty"`
}

// Status is "active", "revoked" or "expired" at time now.
func (r *Record) Status(now time.Time) string {
	switch {
	case r.RevokedAt != nil:
		return "revoked"
	case r.ExpiresAt != nil && !now.Before(*r.ExpiresAt):
		return "expired"
	}
	return "active"
}

// Info is what `netintel keys list` shows of a key: never the hash or secret.
type Info struct {
	ID        string     `json:"id"`
	User      string     `json:"user"`
	Tier      string     `json:"tier"`
	Tags      []string   `json:"tags"`
	Created   time.Time  `json:"created"`
	LastUsed  *time.Time `json:"last_used"`
	Status    string     `json:"status"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

type cached struct {
	rec *Record // nil: deleted
	rev uint64
}

// Keys is the key store on the apikeys bucket, with an in-memory copy kept
// current by a KV watch (Run), so that a request costs no NATS round trip
// to authenticate and a revocation reaches every instance as fast as the
// watch delivers it.
type Keys struct {
	kv  jetstream.KeyValue
	h   *Hasher
	log *slog.Logger
	now func() time.Time

	mu     sync.RWMutex
	cache  map[string]cached
	loaded bool

	usedMu sync.Mutex
	used   map[string]time.Time // last use not yet written
}

// NewKeys returns a key store on kv (the apikeys bucket).
func NewKeys(kv jetstream.KeyValue, h *Hasher, log *slog.Logger) *Keys {
	return &Keys{kv: kv, h: h, log: log.With("stage", "gateway-keys"), now: time.Now,
		cache: map[string]cached{}, used: map[string]time.Time{}}
}

func validTags(tags []string) error {
	if len(tags) > 16 {
		return fmt.Errorf("%w: at most 16 tags", ErrInvalidInput)
	}
	for _, t := range tags {
		if !tagRe.MatchString(t) {
			return fmt.Errorf("%w: tag %q: 1 to 64 printable characters, no spaces", ErrInvalidInput, t)
		}
	}
	return nil
}

// Create issues a key for user with tier and tags and returns the whole key
// string: the only time the secret exists outside the customer's hands.
func (k *Keys) Create(ctx context.Context, user, tier string, tags []string) (string, Record, error) {
	return k.create(ctx, user, tier, tags, "")
}

func (k *Keys) create(ctx context.Context, user, tier string, tags []string, from string) (string, Record, error) {
	if !ValidUser(user) {
		return "", Record{}, fmt.Errorf("%w: user %q: 1 to 64 of A-Z a-z 0-9 _ -", ErrInvalidInput, user)
	}
	if !ValidTier(tier) {
		return "", Record{}, fmt.Errorf("%w: tier %q: one of %s", ErrInvalidInput, tier, strings.Join(Tiers, ", "))
	}
	if err := validTags(tags); err != nil {
		return "", Record{}, err
	}
	if tags == nil {
		tags = []string{}
	}
	for attempt := 0; ; attempt++ {
		id, secret, whole, err := newKey()
		if err != nil {
			return "", Record{}, err
		}
		rec := Record{ID: id, User: user, Tier: tier, Tags: tags, Created: k.now().UTC().Truncate(time.Second),
			HashAlg: HashAlg, Hash: k.h.Sum(id, secret), RotatedFrom: from}
		b, _ := json.Marshal(rec)
		rev, err := k.kv.Create(ctx, recordPrefix+id, b)
		if errors.Is(err, jetstream.ErrKeyExists) && attempt < 3 {
			continue // a 64-bit id collided: draw again
		}
		if err != nil {
			return "", Record{}, fmt.Errorf("store key %s: %w", id, err)
		}
		k.remember(id, &rec, rev)
		return whole, rec, nil
	}
}

// Get returns the stored record of id (read from NATS, not the cache), or ErrNotFound.
func (k *Keys) Get(ctx context.Context, id string) (Record, uint64, error) {
	if !ValidKeyID(id) {
		return Record{}, 0, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	e, err := k.kv.Get(ctx, recordPrefix+id)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return Record{}, 0, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return Record{}, 0, fmt.Errorf("get key %s: %w", id, err)
	}
	var rec Record
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		return Record{}, 0, fmt.Errorf("decode key %s: %w", id, err)
	}
	return rec, e.Revision(), nil
}

// update applies fn to the record of id with compare-and-set, retrying on
// a concurrent change.
func (k *Keys) update(ctx context.Context, id string, fn func(*Record) error) (Record, error) {
	for attempt := 0; ; attempt++ {
		rec, rev, err := k.Get(ctx, id)
		if err != nil {
			return Record{}, err
		}
		if err := fn(&rec); err != nil {
			return Record{}, err
		}
		b, _ := json.Marshal(rec)
		nrev, err := k.kv.Update(ctx, recordPrefix+id, b, rev)
		if (errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists)) && attempt < 10 {
			continue
		}
		if err != nil {
			return Record{}, fmt.Errorf("update key %s: %w", id, err)
		}
		k.remember(id, &rec, nrev)
		return rec, nil
	}
}

// Revoke revokes key id at once. Revoking a revoked key is a no-op.
func (k *Keys) Revoke(ctx context.Context, id string) (Record, error) {
	return k.update(ctx, id, func(r *Record) error {
		if r.RevokedAt == nil {
			t := k.now().UTC()
			r.RevokedAt = &t
		}
		return nil
	})
}

// Rotate issues a new key with the same user, tier and tags as id, and
// lets id keep working for overlap (0: until it is revoked). It returns the
// whole new key string.
func (k *Keys) Rotate(ctx context.Context, id string, overlap time.Duration) (string, Record, error) {
	old, _, err := k.Get(ctx, id)
	if err != nil {
		return "", Record{}, err
	}
	if st := old.Status(k.now()); st != "active" {
		return "", Record{}, fmt.Errorf("%w: key %s is %s", ErrInvalidInput, id, st)
	}
	whole, rec, err := k.create(ctx, old.User, old.Tier, old.Tags, id)
	if err != nil {
		return "", Record{}, err
	}
	_, err = k.update(ctx, id, func(r *Record) error {
		r.RotatedTo = rec.ID
		if overlap > 0 {
			t := k.now().UTC().Add(overlap)
			r.ExpiresAt = &t
		}
		return nil
	})
	if err != nil {
		return "", Record{}, fmt.Errorf("mark rotated key: %w", err)
	}
	return whole, rec, nil
}

// List returns every key with its last use, sorted by creation time.
func (k *Keys) List(ctx context.Context) ([]Info, error) {
	lister, err := k.kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	var ids []string
	for name := range lister.Keys() {
		if id, ok := strings.CutPrefix(name, recordPrefix); ok {
			ids = append(ids, id)
		}
	}
	now := k.now()
	out := []Info{}
	for _, id := range ids {
		rec, _, err := k.Get(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		in := Info{ID: rec.ID, User: rec.User, Tier: rec.Tier, Tags: rec.Tags, Created: rec.Created, Status: rec.Status(now), ExpiresAt: rec.ExpiresAt}
		if e, err := k.kv.Get(ctx, lastUsedPrefix+id); err == nil {
			if t, err := time.Parse(time.RFC3339, string(e.Value())); err == nil {
				in.LastUsed = &t
			}
		}
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b Info) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// remember stores rec at revision rev unless a newer revision is known, so
// a slow direct read never overwrites a revocation the watch delivered.
func (k *Keys) remember(id string, rec *Record, rev uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c, ok := k.cache[id]; ok && c.rev >= rev {
		return
	}
	k.cache[id] = cached{rec: rec, rev: rev}
}

// lookup returns the record of id from the cache, or from NATS on a miss.
func (k *Keys) lookup(ctx context.Context, id string) (*Record, error) {
	k.mu.RLock()
	c, ok := k.cache[id]
	k.mu.RUnlock()
	if ok {
		if c.rec == nil {
			return nil, ErrUnknownKey
		}
		return c.rec, nil
	}
	// A miss: the key may be seconds old and its watch update still on the
	// way, or the watch not loaded yet. Ask NATS.
	rec, rev, err := k.Get(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrUnknownKey
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	k.remember(id, &rec, rev)
	k.mu.RLock()
	c = k.cache[id]
	k.mu.RUnlock()
	if c.rec == nil {
		return nil, ErrUnknownKey
	}
	return c.rec, nil
}

// Authenticate checks a whole customer key and returns its record. Errors:
// ErrMalformedKey, ErrUnknownKey (no such id or wrong secret),
// ErrRevokedKey, ErrExpiredKey, ErrUnavailable. None carries the secret.
func (k *Keys) Authenticate(ctx context.Context, raw string) (*Record, error) {
	id, secret, err := ParseKey(raw)
	if err != nil {
		return nil, err
	}
	rec, err := k.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	if rec.HashAlg != HashAlg || !k.h.Verify(id, secret, rec.Hash) {
		return nil, ErrUnknownKey
	}
	switch rec.Status(k.now()) {
	case "revoked":
		return nil, ErrRevokedKey
	case "expired":
		return nil, ErrExpiredKey
	}
	k.usedMu.Lock()
	k.used[id] = k.now()
	k.usedMu.Unlock()
	return rec, nil
}

// Loaded reports whether the watch delivered every stored key once.
func (k *Keys) Loaded() bool {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.loaded
}

// Run keeps the cache current with a KV watch and writes last-used times
// every interval, until ctx ends (then it writes them once more).
func (k *Keys) Run(ctx context.Context, interval time.Duration) error {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
				k.FlushLastUsed(fctx)
				cancel()
				return
			case <-t.C:
				k.FlushLastUsed(ctx)
			}
		}
	}()
	defer wg.Wait()
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := k.watch(ctx)
		if ctx.Err() != nil {
			break
		}
		k.log.Warn("key watch ended, restarting", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(wait*2, 5*time.Second)
	}
	return nil
}

func (k *Keys) watch(ctx context.Context) error {
	w, err := k.kv.Watch(ctx, recordPrefix+"*")
	if err != nil {
		return fmt.Errorf("watch keys: %w", err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("watch channel closed")
			}
			if e == nil {
				k.mu.Lock()
				k.loaded = true
				n := len(k.cache)
				k.mu.Unlock()
				k.log.Info("keys loaded", "count", n)
				continue
			}
			id := strings.TrimPrefix(e.Key(), recordPrefix)
			if e.Operation() != jetstream.KeyValuePut {
				k.remember(id, nil, e.Revision())
				continue
			}
			var rec Record
			if err := json.Unmarshal(e.Value(), &rec); err != nil {
				k.log.Warn("undecodable key record", "key_id", id, "err", err)
				continue
			}
			k.remember(id, &rec, e.Revision())
		}
	}
}

// FlushLastUsed writes the last-use times gathered since the last flush.
// Failures are logged and the times kept for the next flush.
func (k *Keys) FlushLastUsed(ctx context.Context) {
	k.usedMu.Lock()
	pending := k.used
	k.used = map[string]time.Time{}
	k.usedMu.Unlock()
	for id, t := range pending {
		if _, err := k.kv.PutString(ctx, lastUsedPrefix+id, t.UTC().Format(time.RFC3339)); err != nil {
			k.log.Warn("write last use", "key_id", id, "err", err)
			k.usedMu.Lock()
			if _, ok := k.used[id]; !ok {
				k.used[id] = t
			}
			k.usedMu.Unlock()
		}
	}
}
