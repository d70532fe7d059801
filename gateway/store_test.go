package gateway

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/testutil"
)

// kvPair opens the two gateway buckets on a fresh connection to n, as a
// separate gateway instance would.
func kvPair(t *testing.T, n *testutil.NATS) (jetstream.KeyValue, jetstream.KeyValue) {
	t.Helper()
	_, js := testutil.Connect(t, n.URL)
	keys, err := js.KeyValue(t.Context(), KeysBucket)
	if err != nil {
		t.Fatal(err)
	}
	usage, err := js.KeyValue(t.Context(), UsageBucket)
	if err != nil {
		t.Fatal(err)
	}
	return keys, usage
}

func startNATS(t *testing.T) *testutil.NATS {
	t.Helper()
	n := testutil.StartNATS(t)
	n.Ensure(t)
	return n
}

// running starts k.Run until the test ends and waits for the first load.
func running(t *testing.T, k *Keys) *Keys {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = k.Run(ctx, 50*time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(10 * time.Second)
	for !k.Loaded() {
		if time.Now().After(deadline) {
			t.Fatal("keys not loaded")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return k
}

func TestKeys_CreateStoresOnlyHash(t *testing.T) {
	n := startNATS(t)
	kv, _ := kvPair(t, n)
	k := NewKeys(kv, NewHasher("test-hash-key"), testutil.Logger(t))
	whole, rec, err := k.Create(t.Context(), "alice", "pro", []string{"ci", "eu"})
	if err != nil {
		t.Fatal(err)
	}
	id, secret, err := ParseKey(whole)
	if err != nil || id != rec.ID {
		t.Fatalf("issued key %v does not parse to id %s", err, rec.ID)
	}
	e, err := kv.Get(t.Context(), "k."+id)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(e.Value(), []byte(secret)) || bytes.Contains(e.Value(), []byte(whole)) {
		t.Fatalf("stored record holds the secret: %s", e.Value())
	}
	if !strings.Contains(string(e.Value()), HashAlg) {
		t.Fatalf("record does not name its hash: %s", e.Value())
	}
	got, err := k.Authenticate(t.Context(), whole)
	if err != nil || got.User != "alice" || got.Tier != "pro" || strings.Join(got.Tags, ",") != "ci,eu" {
		t.Fatalf("Authenticate = %+v, %v", got, err)
	}
	// Another instance with another hash key does not accept it.
	other := NewKeys(kv, NewHasher("other-hash-key"), testutil.Logger(t))
	if _, err := other.Authenticate(t.Context(), whole); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("other hash key: err = %v, want ErrUnknownKey", err)
	}
}

func TestKeys_CreateRejectsBadInput(t *testing.T) {
	n := startNATS(t)
	kv, _ := kvPair(t, n)
	k := NewKeys(kv, NewHasher("x"), testutil.Logger(t))
	tests := []struct {
		name, user, tier string
		tags             []string
	}{
		{"empty user", "", "pro", nil},
		{"user with space", "a b", "pro", nil},
		{"user with dot", "a.b", "pro", nil},
		{"unknown tier", "bob", "gold", nil},
		{"empty tier", "bob", "", nil},
		{"tag with space", "bob", "pro", []string{"a b"}},
		{"too many tags", "bob", "pro", strings.Split(strings.Repeat("t,", 17)[:33], ",")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := k.Create(t.Context(), tc.user, tc.tier, tc.tags); !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("err = %v, want ErrInvalidInput", err)
			}
		})
	}
}

func TestKeys_AuthenticateErrors(t *testing.T) {
	n := startNATS(t)
	kv, _ := kvPair(t, n)
	k := running(t, NewKeys(kv, NewHasher("x"), testutil.Logger(t)))
	whole, rec, err := k.Create(t.Context(), "carol", "free", nil)
	if err != nil {
		t.Fatal(err)
	}
	revoked, rrec, _ := k.Create(t.Context(), "carol", "free", nil)
	if _, err := k.Revoke(t.Context(), rrec.ID); err != nil {
		t.Fatal(err)
	}
	_, fakeSecret, fakeWhole, _ := newKey()
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"valid", whole, nil},
		{"malformed", "svc_vpn_nope", ErrMalformedKey},
		{"unknown id", fakeWhole, ErrUnknownKey},
		{"wrong secret", KeyPrefix + rec.ID + "_" + fakeSecret, ErrUnknownKey},
		{"revoked", revoked, ErrRevokedKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := k.Authenticate(t.Context(), tc.in)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestKeys_RevocationReachesOtherInstance(t *testing.T) {
	n := startNATS(t)
	kvA, _ := kvPair(t, n)
	kvB, _ := kvPair(t, n)
	a := running(t, NewKeys(kvA, NewHasher("x"), testutil.Logger(t)))
	b := running(t, NewKeys(kvB, NewHasher("x"), testutil.Logger(t)))
	whole, rec, err := a.Create(t.Context(), "dave", "starter", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Authenticate(t.Context(), whole); err != nil {
		t.Fatalf("instance b does not know the new key: %v", err)
	}
	start := time.Now()
	if _, err := a.Revoke(t.Context(), rec.ID); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := b.Authenticate(t.Context(), whole)
		if errors.Is(err, ErrRevokedKey) {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("revocation not seen by instance b after 30s (err %v)", err)
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("revocation reached the other instance in %s", time.Since(start))
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("revocation took %s, aim is < 2s", d)
	}
}

func TestKeys_RotateOverlap(t *testing.T) {
	n := startNATS(t)
	kv, _ := kvPair(t, n)
	k := running(t, NewKeys(kv, NewHasher("x"), testutil.Logger(t)))
	var mu sync.Mutex
	now := time.Now()
	k.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	oldKey, oldRec, err := k.Create(t.Context(), "erin", "business", []string{"prod"})
	if err != nil {
		t.Fatal(err)
	}
	newKey, newRec, err := k.Rotate(t.Context(), oldRec.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if newRec.User != "erin" || newRec.Tier != "business" || newRec.RotatedFrom != oldRec.ID || newKey == oldKey {
		t.Fatalf("rotated record %+v", newRec)
	}
	waitFor(t, func() bool { r, _, _ := k.Get(t.Context(), oldRec.ID); return r.ExpiresAt != nil })
	waitFor(t, func() bool { k.mu.RLock(); defer k.mu.RUnlock(); return k.cache[oldRec.ID].rec.ExpiresAt != nil })
	for _, key := range []string{oldKey, newKey} {
		if _, err := k.Authenticate(t.Context(), key); err != nil {
			t.Fatalf("during the overlap: %v", err)
		}
	}
	mu.Lock()
	now = now.Add(time.Hour + time.Second)
	mu.Unlock()
	if _, err := k.Authenticate(t.Context(), oldKey); !errors.Is(err, ErrExpiredKey) {
		t.Fatalf("old key after the overlap: err = %v, want ErrExpiredKey", err)
	}
	if _, err := k.Authenticate(t.Context(), newKey); err != nil {
		t.Fatalf("new key after the overlap: %v", err)
	}
	if _, _, err := k.Rotate(t.Context(), oldRec.ID, 0); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("rotating an expired key: err = %v", err)
	}
	if _, _, err := k.Rotate(t.Context(), "ffffffffffffffff", 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rotating an unknown key: err = %v", err)
	}
}

func TestKeys_ListShowsLastUsedNeverSecret(t *testing.T) {
	n := startNATS(t)
	kv, _ := kvPair(t, n)
	var logs bytes.Buffer
	k := NewKeys(kv, NewHasher("x"), slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	used, urec, _ := k.Create(t.Context(), "frank", "pro", []string{"a"})
	unused, _, _ := k.Create(t.Context(), "frank", "free", nil)
	if _, err := k.Authenticate(t.Context(), used); err != nil {
		t.Fatal(err)
	}
	k.FlushLastUsed(t.Context())
	list, err := k.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("list has %d keys, want 2", len(list))
	}
	for _, in := range list {
		if (in.ID == urec.ID) != (in.LastUsed != nil) {
			t.Fatalf("key %s last used %v", in.ID, in.LastUsed)
		}
	}
	for _, whole := range []string{used, unused} {
		_, secret, _ := ParseKey(whole)
		if strings.Contains(logs.String(), secret) || strings.Contains(strings.Join(fmtInfos(list), ""), secret) {
			t.Fatal("a secret leaked into logs or the list")
		}
	}
}

func fmtInfos(in []Info) []string {
	var out []string
	for _, i := range in {
		out = append(out, i.ID, i.User, i.Tier, strings.Join(i.Tags, ","), i.Status)
	}
	return out
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func contextTimeout(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), d)
}

// Run leaves no goroutine behind once its context ends (goroutines of the
// in-process nats-server come and go on their own and are not counted).
func TestKeys_RunNoGoroutineLeak(t *testing.T) {
	n := startNATS(t)
	kv, _ := kvPair(t, n)
	k := NewKeys(kv, NewHasher("x"), testutil.Logger(t))
	for range 3 {
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = k.Run(ctx, 10*time.Millisecond) }()
		waitFor(t, k.Loaded)
		if _, _, err := k.Create(t.Context(), "leak", "pro", nil); err != nil {
			t.Fatal(err)
		}
		if ours() == 0 {
			t.Fatal("the leak check does not see Run's goroutines")
		}
		cancel()
		<-done
	}
	waitFor(t, func() bool { return ours() == 0 })
}

// ours counts goroutines running code of this package's Keys.
func ours() int {
	buf := make([]byte, 1<<20)
	n := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "netintel/gateway.(*Keys)") {
			n++
		}
	}
	return n
}
