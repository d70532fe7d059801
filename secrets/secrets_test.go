package secrets_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/secrets"
)

func ptr[T any](v T) *T { return &v }

func TestRaw_Normalize(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	tests := []struct {
		name      string
		in        secrets.Raw
		strict    bool
		want      secrets.Params
		wantError bool
	}{
		{"v3 defaults", secrets.Raw{ReadTokenHash: &hash, V: ptr[int64](3)}, false, secrets.Params{3, hash, 86400, 1}, false},
		{"v3 strict needs duration", secrets.Raw{ReadTokenHash: &hash, V: ptr[int64](3)}, true, secrets.Params{}, true},
		{"v3 strict ok", secrets.Raw{ReadTokenHash: &hash, V: ptr[int64](3), Duration: ptr[int64](60), Views: ptr[int64](4)}, true, secrets.Params{3, hash, 60, 4}, false},
		{"strict views 11", secrets.Raw{ReadTokenHash: &hash, V: ptr[int64](3), Duration: ptr[int64](60), Views: ptr[int64](11)}, true, secrets.Params{}, true},
		{"clamp views 11", secrets.Raw{ReadTokenHash: &hash, V: ptr[int64](3), Views: ptr[int64](11)}, false, secrets.Params{3, hash, 86400, 10}, false},
		{"clamp views -1", secrets.Raw{ReadTokenHash: &hash, V: ptr[int64](3), Views: ptr[int64](-1)}, false, secrets.Params{3, hash, 86400, 1}, false},
		{"duration out of range", secrets.Raw{ReadTokenHash: &hash, V: ptr[int64](3), Duration: ptr[int64](2592001)}, false, secrets.Params{3, hash, 86400, 1}, false},
		{"scheme 0", secrets.Raw{HashedKey: &hash}, false, secrets.Params{0, secrets.HashToken(hash), 86400, 1}, false},
		{"scheme 0 with v 3", secrets.Raw{HashedKey: &hash, V: ptr[int64](3)}, false, secrets.Params{}, true},
		{"readTokenHash v 0", secrets.Raw{ReadTokenHash: &hash, V: ptr[int64](0)}, false, secrets.Params{}, true},
		{"uppercase", secrets.Raw{ReadTokenHash: ptr(strings.ToUpper(hash)), V: ptr[int64](3)}, false, secrets.Params{}, true},
		{"neither", secrets.Raw{V: ptr[int64](3)}, false, secrets.Params{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.Normalize(tt.strict)
			if tt.wantError {
				if !errors.Is(err, secrets.ErrInvalid) {
					t.Fatalf("err = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestValidTextCiphertext(t *testing.T) {
	iv := base64.RawURLEncoding.EncodeToString(make([]byte, 12))
	ct := base64.RawURLEncoding.EncodeToString(make([]byte, 17))
	tests := []struct {
		in   string
		want bool
	}{
		{iv + "." + ct, true},
		{iv + "." + base64.RawURLEncoding.EncodeToString(make([]byte, 16)), true},
		{iv + "." + base64.RawURLEncoding.EncodeToString(make([]byte, 15)), false},
		{iv + ct, false},
		{iv + "." + ct + "." + ct, false},
		{base64.RawURLEncoding.EncodeToString(make([]byte, 11)) + "." + ct, false},
		{iv + "." + ct + "=", false},
		{iv + "." + strings.ReplaceAll(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 18)), "=", ""), false},
		{"", false},
	}
	for _, tt := range tests {
		if got := secrets.ValidTextCiphertext(tt.in); got != tt.want {
			t.Errorf("ValidTextCiphertext(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := secrets.NewID()
		if !secrets.ValidID(id) || seen[id] {
			t.Fatalf("bad or repeated id %q", id)
		}
		seen[id] = true
	}
}

type fixture struct {
	svc   *secrets.Service
	store *objstore.Folder
	off   atomic.Int64
	kv    jetstream.KeyValue
}

func newFixture(t *testing.T, js jetstream.JetStream, hooks ...func(string)) *fixture {
	t.Helper()
	store, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{store: store}
	opt := secrets.OptionsFrom(config.Default().Secrets)
	opt.Now = func() time.Time { return time.Now().Add(time.Duration(f.off.Load())) }
	if len(hooks) > 0 {
		opt.BeforeFinish = hooks[0]
	}
	f.svc, err = secrets.New(t.Context(), js, store, opt, testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	f.kv, err = js.KeyValue(t.Context(), "secrets")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) keys(t *testing.T) []string {
	t.Helper()
	infos, err := f.store.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, i := range infos {
		out = append(out, i.Key)
	}
	return out
}

var params = secrets.Params{Scheme: 3, TokenHash: secrets.HashToken(strings.Repeat("a", 64)), Duration: 86400, Views: 1}

// TestRead_Concurrent hammers one secret with many goroutines on the
// store directly: exactly k reads win, none is counted twice.
func TestRead_Concurrent(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	f := newFixture(t, n.JS)
	p := params
	p.Views = 7
	id, err := f.svc.SaveText(t.Context(), p, "iv.ct")
	if err != nil {
		t.Fatal(err)
	}
	var ok, gone, retry atomic.Int64
	seen := make([]atomic.Int64, p.Views)
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			o, err := f.svc.Read(context.Background(), id, strings.Repeat("a", 64), secrets.Text)
			switch {
			case err == nil:
				ok.Add(1)
				seen[o.ViewsLeft].Add(1)
			case errors.Is(err, secrets.ErrNoMessage):
				gone.Add(1)
			case errors.Is(err, secrets.ErrRetry):
				retry.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// A reader that gave up with ErrRetry used nothing, so the views it
	// did not get are still there.
	for ok.Load() < int64(p.Views) {
		o, err := f.svc.Read(t.Context(), id, strings.Repeat("a", 64), secrets.Text)
		if err != nil {
			t.Fatalf("after %d reads: %v", ok.Load(), err)
		}
		ok.Add(1)
		seen[o.ViewsLeft].Add(1)
	}
	for i := range seen {
		if seen[i].Load() != 1 {
			t.Fatalf("viewsLeft %d seen %d times (ok %d, gone %d, retry %d)", i, seen[i].Load(), ok.Load(), gone.Load(), retry.Load())
		}
	}
	if _, err := f.svc.Read(t.Context(), id, strings.Repeat("a", 64), secrets.Text); !errors.Is(err, secrets.ErrNoMessage) {
		t.Fatalf("after the last view: %v", err)
	}
}

func TestSweep(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	f := newFixture(t, n.JS)
	ctx := t.Context()
	// An orphan blob (a save that died before its record).
	if _, err := f.store.Put(ctx, "secrets/b/AAAAAAAAAAAAAAAAAAAAAA", strings.NewReader("x"), 1, ""); err != nil {
		t.Fatal(err)
	}
	// A live file secret, a short-lived file secret, and an idle upload.
	st, err := f.svc.StageFile(ctx, bytes.NewReader(make([]byte, 100)))
	if err != nil {
		t.Fatal(err)
	}
	live, err := f.svc.CommitFile(ctx, st, params)
	if err != nil {
		t.Fatal(err)
	}
	short := params
	short.Duration = 60
	st2, _ := f.svc.StageFile(ctx, bytes.NewReader(make([]byte, 100)))
	expiring, err := f.svc.CommitFile(ctx, st2, short)
	if err != nil {
		t.Fatal(err)
	}
	up := secrets.Slice{Upload: strings.Repeat("u", 22), Index: 0, Count: 2, Params: params}
	if id, err := f.svc.SaveSlice(ctx, up, spool(t, f.svc, make([]byte, secrets.SliceSize))); err != nil || id != "" {
		t.Fatalf("slice: %q %v", id, err)
	}
	// Nothing is old enough yet.
	if s, err := f.svc.Sweep(ctx); err != nil || s.Blobs+s.Records != 0 {
		t.Fatalf("fresh sweep removed %+v, %v", s, err)
	}
	if len(f.keys(t)) != 4 {
		t.Fatalf("objects %v", f.keys(t))
	}
	f.off.Store(int64(61 * time.Minute))
	s, err := f.svc.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Removed: expired record (+ its blob), idle upload record (+ slice), orphan blob.
	if s.Records != 2 || s.Blobs < 1 {
		t.Fatalf("sweep: %+v", s)
	}
	keys := f.keys(t)
	if len(keys) != 1 || keys[0] != "secrets/b/"+live {
		t.Fatalf("left %v, want only the live secret's blob", keys)
	}
	if _, err := f.kv.Get(ctx, expiring); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("expired record: %v", err)
	}
	if _, err := f.kv.Get(ctx, live); err != nil {
		t.Fatalf("live record: %v", err)
	}
}

// TestTTL_AcrossRestart: a secret's record carries its own TTL in
// JetStream, so it is deleted even when the server was down at expiry.
func TestTTL_AcrossRestart(t *testing.T) {
	dir := t.TempDir()
	start := func() (*server.Server, jetstream.JetStream, *nats.Conn) {
		s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: dir, NoSigs: true, NoLog: true})
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatal("not ready")
		}
		nc, err := nats.Connect(s.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		js, _ := jetstream.New(nc)
		return s, js, nc
	}
	s, js, nc := start()
	if err := bus.Ensure(t.Context(), js, config.Default(), testutil.Logger(t)); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, js)
	p := params
	p.Duration = 2
	id, err := f.svc.SaveText(t.Context(), p, "iv.ct")
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	s.Shutdown()
	s.WaitForShutdown()
	time.Sleep(2500 * time.Millisecond)
	s, js, nc = start()
	t.Cleanup(func() { nc.Close(); s.Shutdown(); s.WaitForShutdown() })
	kv, err := js.KeyValue(t.Context(), "secrets")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := kv.Get(t.Context(), id)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("record still there after restart past its expiry: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSaveSlice_StaleFinisherTakenOver: a request that completes an upload
// and then stalls past finish_stale is replaced by the next slice; the
// stalled one gives up (ErrRetry) and undoes its secret, so exactly one
// secret exists and every later resend gets its id.
func TestSaveSlice_StaleFinisherTakenOver(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	f := newFixture(t, n.JS, func(string) {
		if calls.Add(1) == 1 {
			close(entered)
			<-release
		}
	})
	sl := secrets.Slice{Upload: strings.Repeat("S", 22), Index: 0, Count: 1, Params: params}
	data := []byte("0123456789abcdef0123456789abcdef")
	type result struct {
		id  string
		err error
	}
	first := make(chan result, 1)
	go func() {
		id, err := f.svc.SaveSlice(context.Background(), sl, spool(t, f.svc, data))
		first <- result{id, err}
	}()
	<-entered
	if _, err := f.svc.SaveSlice(t.Context(), sl, spool(t, f.svc, data)); !errors.Is(err, secrets.ErrRetry) {
		t.Fatalf("while finishing: %v, want ErrRetry", err)
	}
	f.off.Store(int64(3 * time.Minute)) // past finish_stale (2m), within the idle hour
	id, err := f.svc.SaveSlice(t.Context(), sl, spool(t, f.svc, data))
	if err != nil || id == "" {
		t.Fatalf("take-over: %q %v", id, err)
	}
	close(release)
	if r := <-first; !errors.Is(r.err, secrets.ErrRetry) {
		t.Fatalf("stalled finisher: %q %v, want ErrRetry", r.id, r.err)
	}
	if again, err := f.svc.SaveSlice(t.Context(), sl, spool(t, f.svc, data)); err != nil || again != id {
		t.Fatalf("resend: %q %v, want %q", again, err, id)
	}
	keys, err := f.kv.ListKeys(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for k := range keys.Keys() {
		ids = append(ids, k)
	}
	if len(ids) != 1 || ids[0] != id {
		t.Fatalf("secrets stored: %v, want only %s", ids, id)
	}
	var blobs []string
	for _, k := range f.keys(t) {
		if strings.HasPrefix(k, "secrets/b/") {
			blobs = append(blobs, k)
		}
	}
	if len(blobs) != 1 || blobs[0] != "secrets/b/"+id {
		t.Fatalf("blobs: %v", blobs)
	}
}

// spool holds data as a slice's spooled bytes, closed at test cleanup.
func spool(t testing.TB, svc *secrets.Service, data []byte) *secrets.SliceData {
	t.Helper()
	d, err := svc.SpoolSlice(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}
