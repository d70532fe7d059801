package client

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/secrets/client/fakehost"
)

func startFake(t *testing.T) (*fakehost.Host, string) {
	t.Helper()
	h := fakehost.New()
	mux := http.NewServeMux()
	h.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return h, srv.URL
}

func testClient() *Client {
	return New(Options{Src: "netintel", Version: "1.2.3", Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Retries: 4})
}

// count returns how many requests hit endpoint.
func count(h *fakehost.Host, endpoint string) int {
	n := 0
	for _, r := range h.Requests() {
		if r.Endpoint == endpoint {
			n++
		}
	}
	return n
}

func TestClient_TextLifecycle(t *testing.T) {
	h, url := startFake(t)
	c := testClient()
	ctx := t.Context()
	l, err := c.CreateText(ctx, url, "the launch code", SaveOptions{Views: 2, Expiry: time.Hour, Passphrase: "open sesame"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Kind != KindText || l.Origin != url || len(l.RandomKey) != 20 || !ValidID(l.ID) {
		t.Fatalf("bad link %s", l.Redacted())
	}
	parsed, err := ParseLink(l.String())
	if err != nil || parsed != l {
		t.Fatalf("link does not parse back: %v", err)
	}
	stored, _ := h.Stored(l.ID)
	if bytes.Contains(stored, []byte("launch")) {
		t.Fatal("host stored plaintext")
	}
	if _, _, err := c.ReadText(ctx, l, ""); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("no passphrase: %v, want ErrWrongKey", err)
	}
	if _, _, err := c.ReadText(ctx, l, "wrong"); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("wrong passphrase: %v, want ErrWrongKey", err)
	}
	for _, wantLeft := range []int{1, 0} {
		got, info, err := c.ReadText(ctx, l, "open sesame")
		if err != nil || got != "the launch code" {
			t.Fatalf("read: %q, %v", got, err)
		}
		if info.ViewsLeft != wantLeft || info.ExpiresIn <= 0 || info.ExpiresIn > time.Hour {
			t.Fatalf("info %+v, want %d views left", info, wantLeft)
		}
	}
	if _, _, err := c.ReadText(ctx, l, "open sesame"); !errors.Is(err, ErrNoMessage) {
		t.Fatalf("third read: %v, want ErrNoMessage", err)
	}
	for _, r := range h.Requests() {
		if r.Query["src"] != "netintel" || r.UserAgent != "netintel/1.2.3 (https://github.com/netintel/netintel)" {
			t.Fatalf("%s: src %q, UA %q", r.Endpoint, r.Query["src"], r.UserAgent)
		}
	}
	if n := count(h, "ss"); n != 1 {
		t.Fatalf("/api/ss called %d times", n)
	}
}

func TestClient_Expired(t *testing.T) {
	h, url := startFake(t)
	c := testClient()
	l, err := c.CreateText(t.Context(), url, "x", SaveOptions{Expiry: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h.Expire(l.ID)
	if _, _, err := c.ReadText(t.Context(), l, ""); !errors.Is(err, ErrNoMessage) {
		t.Fatalf("got %v, want ErrNoMessage", err)
	}
}

func TestClient_SaveRefusedBeforeSending(t *testing.T) {
	h, url := startFake(t)
	c := testClient()
	tests := []struct {
		name string
		host string
		text string
		o    SaveOptions
		want error
	}{
		{"views 11", url, "x", SaveOptions{Views: 11}, ErrInvalidOption},
		{"views -1", url, "x", SaveOptions{Views: -1}, ErrInvalidOption},
		{"expiry 31 days", url, "x", SaveOptions{Expiry: 31 * 24 * time.Hour}, ErrInvalidOption},
		{"expiry under 1s", url, "x", SaveOptions{Expiry: 500 * time.Millisecond}, ErrInvalidOption},
		{"expiry fraction", url, "x", SaveOptions{Expiry: 1500 * time.Millisecond}, ErrInvalidOption},
		{"negative expiry", url, "x", SaveOptions{Expiry: -time.Second}, ErrInvalidOption},
		{"empty secret", url, "", SaveOptions{}, ErrInvalidOption},
		{"plain http remote", "http://example.com", "x", SaveOptions{}, ErrInsecureHost},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.CreateText(t.Context(), tc.host, tc.text, tc.o); !errors.Is(err, tc.want) {
				t.Fatalf("text: got %v, want %v", err, tc.want)
			}
			if tc.text != "" {
				if _, err := c.CreateFile(t.Context(), tc.host, FileMeta{Name: "a"}, []byte(tc.text), tc.o, nil); !errors.Is(err, tc.want) {
					t.Fatalf("file: got %v, want %v", err, tc.want)
				}
			}
		})
	}
	if n := len(h.Requests()); n != 0 {
		t.Fatalf("%d requests sent for refused saves", n)
	}
	// The limits themselves are accepted.
	if _, err := c.CreateText(t.Context(), url, "x", SaveOptions{Views: 10, Expiry: MaxExpiry}); err != nil {
		t.Fatal(err)
	}
}

func TestClient_UnsupportedHost(t *testing.T) {
	h, url := startFake(t)
	h.Schemes = []int{0}
	c := testClient()
	for range 2 {
		_, err := c.CreateText(t.Context(), url, "x", SaveOptions{})
		if !errors.Is(err, ErrUnsupportedHost) {
			t.Fatalf("got %v, want ErrUnsupportedHost", err)
		}
	}
	if count(h, "ss") != 1 || count(h, "saveSecret") != 0 {
		t.Fatalf("ss %d, saveSecret %d", count(h, "ss"), count(h, "saveSecret"))
	}
}

func TestClient_SaveRetries429Only(t *testing.T) {
	h, url := startFake(t)
	c := testClient()
	h.Inject("saveSecret", fakehost.Fault{Code: 429}, fakehost.Fault{Code: 429})
	if _, err := c.CreateText(t.Context(), url, "x", SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := count(h, "saveSecret"); n != 3 {
		t.Fatalf("%d saveSecret calls, want 3", n)
	}
	h.Inject("saveSecret", fakehost.Fault{Code: 200, Body: `{"status":"error","newId":"0"}`})
	if _, err := c.CreateText(t.Context(), url, "x", SaveOptions{}); !errors.Is(err, ErrServer) {
		t.Fatalf("status error: %v", err)
	}
	h.Inject("saveSecret", fakehost.Fault{Code: 502})
	before := count(h, "saveSecret")
	if _, err := c.CreateText(t.Context(), url, "x", SaveOptions{}); !errors.Is(err, ErrServer) {
		t.Fatalf("502: %v", err)
	}
	if n := count(h, "saveSecret") - before; n != 1 {
		t.Fatalf("502 on a text save was retried (%d calls)", n)
	}
}

func TestClient_ReadRetries(t *testing.T) {
	retry := fakehost.Fault{Code: 503, Body: `{"status":"retry"}`}
	tests := []struct {
		name      string
		faults    []fakehost.Fault
		wantErr   error
		wantCalls int
	}{
		{"503 retry twice", []fakehost.Fault{retry, retry}, nil, 3},
		{"503 retry forever", []fakehost.Fault{retry, retry, retry, retry, retry, retry}, ErrServer, 5},
		{"503 without retry", []fakehost.Fault{{Code: 503, Body: `{"status":"error"}`}}, ErrServer, 1},
		{"503 html", []fakehost.Fault{{Code: 503, Body: "busy"}}, ErrServer, 1},
		{"500", []fakehost.Fault{{Code: 500, Body: `{"status":"error"}`}}, ErrServer, 1},
		{"429", []fakehost.Fault{{Code: 429}}, ErrRateLimited, 1},
		{"dropped connection", []fakehost.Fault{{Drop: true}}, nil, 1},
		{"status error", []fakehost.Fault{{Code: 200, Body: `{"status":"error"}`}}, ErrServer, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, url := startFake(t)
			c := testClient()
			l, err := c.CreateText(t.Context(), url, "s3cr3t", SaveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			h.Inject("get", tc.faults...)
			got, _, err := c.ReadText(t.Context(), l, "")
			if tc.name == "dropped connection" {
				if err == nil || errors.Is(err, ErrServer) {
					t.Fatalf("dropped: got %v, want a network error", err)
				}
			} else if !errors.Is(err, tc.wantErr) {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
			if err == nil && got != "s3cr3t" {
				t.Fatalf("got %q", got)
			}
			if n := count(h, "get"); n != tc.wantCalls {
				t.Fatalf("%d get calls, want %d", n, tc.wantCalls)
			}
			if err != nil && strings.Contains(err.Error(), l.RandomKey) {
				t.Fatal("error holds the key")
			}
		})
	}
}

func TestClient_BrokenLinkSendsNothing(t *testing.T) {
	h, url := startFake(t)
	c := testClient()
	for _, l := range []Link{
		{Kind: KindText, Origin: url, RandomKey: "short", ID: "AbCdEfGhIjKlMnOpQrStUv"},
		{Kind: KindText, Origin: url, RandomKey: "K7bQ2mXp9vRt4nLw8zYc", ID: "AbCdEfGhIjKlMnOpQrSt.v"},
		{Kind: KindFile, Origin: url, RandomKey: "K7bQ2mXp9vRt4nLw8zYc", ID: "AbCdEfGhIjKlMnOpQrStUv"},
	} {
		if _, _, err := c.ReadText(t.Context(), l, ""); !errors.Is(err, ErrBrokenLink) {
			t.Fatalf("got %v, want ErrBrokenLink", err)
		}
	}
	if _, _, _, err := c.ReadFile(t.Context(), Link{Kind: KindText, Origin: url, RandomKey: "K7bQ2mXp9vRt4nLw8zYc", ID: "AbCdEfGhIjKlMnOpQrStUv"}, "", nil); !errors.Is(err, ErrBrokenLink) {
		t.Fatalf("file read of a text link: %v", err)
	}
	if n := len(h.Requests()); n != 0 {
		t.Fatalf("%d requests for broken links", n)
	}
}

func TestClient_Status(t *testing.T) {
	_, url := startFake(t)
	c := testClient()
	a, err := c.CreateText(t.Context(), url, "a", SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.CreateText(t.Context(), url, "b", SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ReadText(t.Context(), a, ""); err != nil {
		t.Fatal(err)
	}
	unknown := "ZZZZZZZZZZZZZZZZZZZZZZ"
	got, err := c.Status(t.Context(), url, []string{a.ID, b.ID, unknown})
	if err != nil {
		t.Fatal(err)
	}
	if got[a.ID] || !got[b.ID] || got[unknown] || len(got) != 3 {
		t.Fatalf("got %v", got)
	}
	// Status never uses a view.
	if _, _, err := c.ReadText(t.Context(), b, ""); err != nil {
		t.Fatalf("b after status: %v", err)
	}
	if _, err := c.Status(t.Context(), url, []string{"short"}); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("malformed id: %v", err)
	}
}

func TestClient_StatusBatches(t *testing.T) {
	h, url := startFake(t)
	c := testClient()
	ids := make([]string, 300)
	for i := range ids {
		ids[i] = strings.Repeat(string(Alphabet[i%64]), 21) + string(Alphabet[i/64])
	}
	got, err := c.Status(context.Background(), url, ids)
	if err != nil || len(got) != 300 {
		t.Fatalf("%d answers, %v", len(got), err)
	}
	if n := count(h, "secretStatus"); n != 3 {
		t.Fatalf("%d calls, want 3", n)
	}
}
