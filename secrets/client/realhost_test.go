package client_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/netintel/netintel/api/secretapi"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/secrets"
	"github.com/netintel/netintel/secrets/client"
)

// startReal runs the real secret API (package secrets on an in-process
// nats-server with JetStream, a folder object store) on loopback.
func startReal(t *testing.T, opt secretapi.Options) string {
	t.Helper()
	n := testutil.StartNATS(t)
	cfg := n.Ensure(t)
	blobs, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc, err := secrets.New(t.Context(), n.JS, blobs, secrets.OptionsFrom(cfg.Secrets), testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	secretapi.New(svc, opt, testutil.Logger(t)).Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func realClient() *client.Client {
	return client.New(client.Options{Src: "netintel", Version: "test", Backoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
}

func TestRealHost_Text(t *testing.T) {
	url := startReal(t, secretapi.Options{})
	c := realClient()
	ctx := t.Context()
	caps, err := c.Capabilities(ctx, url)
	if err != nil || caps.APIVersion != 1 {
		t.Fatalf("caps %+v, %v", caps, err)
	}
	l, err := c.CreateText(ctx, url, "über secret ✓", client.SaveOptions{Views: 2, Expiry: 10 * time.Minute, Passphrase: "pp"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ReadText(ctx, l, ""); !errors.Is(err, client.ErrWrongKey) {
		t.Fatalf("no passphrase: %v", err)
	}
	got, info, err := c.ReadText(ctx, l, "pp")
	if err != nil || got != "über secret ✓" || info.ViewsLeft != 1 || info.ExpiresIn <= 0 || info.ExpiresIn > 10*time.Minute {
		t.Fatalf("first read %q %+v %v", got, info, err)
	}
	st, err := c.Status(ctx, url, []string{l.ID})
	if err != nil || !st[l.ID] {
		t.Fatalf("status after one of two views: %v %v", st, err)
	}
	if _, info, err := c.ReadText(ctx, l, "pp"); err != nil || info.ViewsLeft != 0 {
		t.Fatalf("second read %+v %v", info, err)
	}
	if _, _, err := c.ReadText(ctx, l, "pp"); !errors.Is(err, client.ErrNoMessage) {
		t.Fatalf("third read: %v", err)
	}
	if st, _ := c.Status(ctx, url, []string{l.ID}); st[l.ID] {
		t.Fatal("still available after the last view")
	}
}

func TestRealHost_FileChunked(t *testing.T) {
	url := startReal(t, secretapi.Options{})
	c := realClient()
	data := make([]byte, 2*client.ChunkSize+777)
	for i := range data {
		data[i] = byte(i * 31)
	}
	l, err := c.CreateFile(t.Context(), url, client.FileMeta{Name: "disk.img"}, data, client.SaveOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	meta, got, info, err := c.ReadFile(t.Context(), l, "", nil)
	if err != nil || !bytes.Equal(got, data) || meta.Name != "disk.img" || meta.Type != "application/octet-stream" || info.ViewsLeft != 0 {
		t.Fatalf("read back %+v %+v equal=%v: %v", meta, info, bytes.Equal(got, data), err)
	}
}

// The real rate limiter's 429 reaches the caller of a read as ErrRateLimited
// and a save backs off and gets through.
func TestRealHost_RateLimits(t *testing.T) {
	// Reads get one token a second: the second read, sent right after the
	// first, finds none even on a loaded machine (at 100 a second it
	// sometimes came 10 ms later and found one).
	url := startReal(t, secretapi.Options{ReadRate: config.Rate{PerMinute: 60, Burst: 1}, TextRate: config.Rate{PerMinute: 1200, Burst: 1}})
	c := realClient()
	ctx := t.Context()
	a, err := c.CreateText(ctx, url, "a", client.SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The second save is limited (burst 1, one token per 50ms) and retried.
	b, err := c.CreateText(ctx, url, "b", client.SaveOptions{})
	if err != nil {
		t.Fatalf("save after 429: %v", err)
	}
	if _, _, err := c.ReadText(ctx, a, ""); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.ReadText(ctx, b, "")
	if !errors.Is(err, client.ErrRateLimited) {
		t.Fatalf("second read at once: %v, want ErrRateLimited", err)
	}
	// A 429 used no view: once the limiter refills, the read succeeds.
	deadline := time.Now().Add(5 * time.Second)
	for {
		time.Sleep(20 * time.Millisecond)
		got, _, err := c.ReadText(ctx, b, "")
		if err == nil && got == "b" {
			break
		}
		if !errors.Is(err, client.ErrRateLimited) || time.Now().After(deadline) {
			t.Fatalf("read after the limit: %q %v", got, err)
		}
	}
}
