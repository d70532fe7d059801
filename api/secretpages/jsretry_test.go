package secretpages_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/netintel/netintel/secrets/client"
	"github.com/netintel/netintel/secrets/client/fakehost"
)

func countCalls(h *fakehost.Host, endpoint string, chunked bool) int {
	n := 0
	for _, r := range h.Requests() {
		if r.Endpoint == endpoint && (r.Query["u"] != "") == chunked {
			n++
		}
	}
	return n
}

// The page follows the spec's retry rules, driven against the fake host's
// injected faults in Chromium.
func TestJS_RetryRules(t *testing.T) {
	s, h := startFakeSite(t)
	b := newBrowser(t)
	b.Do(t, chromedp.Navigate(s.URL+"/"))
	eval[int](t, b, `OTS.tuning.backoffMs = 2, OTS.tuning.maxBackoffMs = 10, 0`)
	c := newClient()
	// createFile of n bytes named x.bin; returns the link or "error:<kind>".
	createFile := func(n int) string {
		return eval[string](t, b, fmt.Sprintf(`OTS.createFile(location.origin, new File([new Uint8Array(%d).map((_, i) => i %% 251)], "x.bin"), {})
			.catch((e) => "error:" + e.kind)`, n))
	}
	readBack := func(t *testing.T, link string, n int) {
		t.Helper()
		l, err := client.ParseLink(link)
		if err != nil {
			t.Fatalf("%q: %v", link, err)
		}
		_, data, _, err := c.ReadFile(t.Context(), l, "", nil)
		if err != nil || len(data) != n || data[n-1] != byte((n-1)%251) {
			t.Fatalf("read back %d bytes: %v", len(data), err)
		}
	}
	const size = client.ChunkSize + 1000 // two slices

	t.Run("slices retried on network error, 503 retry, 408, 429, 5xx", func(t *testing.T) {
		h.Inject("saveFile", fakehost.Fault{Drop: true}, fakehost.Fault{Code: 503, Body: `{"status":"retry"}`},
			fakehost.Fault{Code: 408}, fakehost.Fault{Code: 429}, fakehost.Fault{Code: 520}, fakehost.Pass, fakehost.Fault{Code: 502})
		before := countCalls(h, "saveFile", true)
		link := createFile(size)
		readBack(t, link, size)
		if n := countCalls(h, "saveFile", true) - before; n < 8 {
			t.Fatalf("%d slice requests, want at least 8", n)
		}
	})
	t.Run("400 error on a slice is not retried", func(t *testing.T) {
		h.Inject("saveFile", fakehost.Fault{Code: 400, Body: `{"status":"error","newId":"0"}`})
		before := countCalls(h, "saveFile", true)
		if got := createFile(size); got != "error:server" {
			t.Fatalf("got %q", got)
		}
		if n := countCalls(h, "saveFile", true) - before; n != 1 {
			t.Fatalf("%d slice requests, want 1", n)
		}
	})
	t.Run("old host gets the whole file", func(t *testing.T) {
		h.Legacy = true
		defer func() { h.Legacy = false }()
		chunked, whole := countCalls(h, "saveFile", true), countCalls(h, "saveFile", false)
		link := createFile(size)
		readBack(t, link, size)
		if countCalls(h, "saveFile", true)-chunked != 1 || countCalls(h, "saveFile", false)-whole != 1 {
			t.Fatal("want one slice then one whole-file request")
		}
	})
	t.Run("reads retried only on 503 retry", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			faults []fakehost.Fault
			want   string
			calls  int
		}{
			{"503 retry", []fakehost.Fault{{Code: 503, Body: `{"status":"retry"}`}, {Code: 503, Body: `{"status":"retry"}`}}, "ok", 3},
			{"503 error", []fakehost.Fault{{Code: 503, Body: `{"status":"error"}`}}, "server", 1},
			{"500", []fakehost.Fault{{Code: 500, Body: `{"status":"error"}`}}, "server", 1},
			{"429", []fakehost.Fault{{Code: 429}}, "rate-limited", 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				l, err := c.CreateText(t.Context(), s.URL, "js read", client.SaveOptions{})
				if err != nil {
					t.Fatal(err)
				}
				h.Inject("get", tc.faults...)
				before := countCalls(h, "get", false)
				got := eval[string](t, b, fmt.Sprintf(`OTS.readText(%q, "").then((r) => r.text === "js read" ? "ok" : "bad", (e) => e.kind)`, l.String()))
				if got != tc.want {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
				if n := countCalls(h, "get", false) - before; n != tc.calls {
					t.Fatalf("%d get calls, want %d", n, tc.calls)
				}
			})
		}
	})
	t.Run("bad options refused before sending", func(t *testing.T) {
		before := len(h.Requests())
		got := eval[[]string](t, b, `Promise.all([{views: 11}, {views: 0}, {duration: 2592001}, {duration: 1.5}].map(
			(o) => OTS.createText(location.origin, "x", o).then(() => "saved", (e) => e.kind)))`)
		for _, k := range got {
			if k != "invalid" {
				t.Fatalf("got %v", got)
			}
		}
		if len(h.Requests()) != before {
			t.Fatal("a request was sent")
		}
	})
	t.Run("host without scheme 3", func(t *testing.T) {
		s2, h2 := startFakeSite(t)
		h2.Schemes = []int{0}
		b.Do(t, chromedp.Navigate(s2.URL+"/"))
		got := eval[string](t, b, `OTS.createText(location.origin, "x", {}).then(() => "saved", (e) => e.kind + ": " + e.message)`)
		if got != "unsupported: This server is too old: it does not support save scheme 3." {
			t.Fatalf("got %q", got)
		}
		if countCalls(h2, "saveSecret", false) != 0 {
			t.Fatal("saved on an old host")
		}
	})
}
