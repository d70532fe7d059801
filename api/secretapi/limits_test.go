package secretapi_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestViews_ExactlyOnce: N parallel reads of a secret with views=k succeed
// exactly k times, each remaining count is reported once, the rest answer
// no message (503 retry is retried, as the spec allows), and parallel
// wrong-token reads use no view.
func TestViews_ExactlyOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	const readers = 48
	for _, views := range []int{1, 3, 10} {
		t.Run(fmt.Sprintf("text views=%d", views), func(t *testing.T) {
			l := e.c.saveText(t, "s", saveOpts{views: views, duration: 600})
			_, token, _ := derive(l.randomKey)
			var ok, none, wrong, retries atomic.Int64
			left := make([]atomic.Int64, views)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for g := range readers {
				wg.Go(func() {
					<-start
					key := token
					if g%4 == 0 {
						key = strings.Repeat("a", 64)
					}
					for {
						r := e.c.postJSON(t, "get", map[string]string{"id": l.id, "hashedKey": key})
						switch {
						case r.Code == 503 && r.Status == "retry":
							retries.Add(1)
							continue
						case r.Status == "ok":
							ok.Add(1)
							left[*r.ViewsLeft].Add(1)
						case r.Status == "no message":
							none.Add(1)
						case r.Status == "wrong key":
							wrong.Add(1)
						default:
							t.Errorf("unexpected %d %s", r.Code, r.Raw)
						}
						return
					}
				})
			}
			close(start)
			wg.Wait()
			if ok.Load() != int64(views) {
				t.Fatalf("%d reads succeeded, want exactly %d (no message %d, wrong key %d, retries %d)", ok.Load(), views, none.Load(), wrong.Load(), retries.Load())
			}
			for i := range left {
				if left[i].Load() != 1 {
					t.Fatalf("viewsLeft %d reported %d times", i, left[i].Load())
				}
			}
			if ok.Load()+none.Load()+wrong.Load() != readers {
				t.Fatalf("answers don't add up: ok %d none %d wrong %d", ok.Load(), none.Load(), wrong.Load())
			}
			if e.stored(t, l.id) {
				t.Fatal("used-up secret still stored")
			}
			t.Logf("views=%d: %d retries", views, retries.Load())
		})
	}
	t.Run("file views=2", func(t *testing.T) {
		f := newEncFile("f", randBytes(64<<10), "")
		id := wantID(t, e.c.saveFile(t, f, saveOpts{views: 2}))
		var ok atomic.Int64
		var wg sync.WaitGroup
		for range 24 {
			wg.Go(func() {
				for {
					r, _, data := e.c.readFile(t, link{"f", f.rk, id}, "")
					if r.Code == 503 {
						continue
					}
					if r.Status == "ok" {
						ok.Add(1)
						if len(data) != 64<<10 {
							t.Errorf("short file %d", len(data))
						}
					} else if r.Status != "no message" {
						t.Errorf("unexpected %d %s", r.Code, r.Raw)
					}
					return
				}
			})
		}
		wg.Wait()
		if ok.Load() != 2 {
			t.Fatalf("%d downloads, want 2", ok.Load())
		}
		e.waitNoBlobs(t)
	})
}

func TestRateLimits_429(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{limits: true})
	key, token, hash := derive(randomKey())
	msg := encryptText(key, "x")
	count := func(n int, f func() resp) (okN int, last resp) {
		for range n {
			last = f()
			if last.Code == 429 {
				return okN, last
			}
			okN++
		}
		return okN, last
	}
	tests := []struct {
		name  string
		burst int
		call  func() resp
	}{
		{"text saves", 10, func() resp {
			return e.c.postJSON(t, "saveSecret", map[string]any{"secretMessage": msg, "readTokenHash": hash, "v": 3})
		}},
		{"file requests", 30, func() resp {
			ct, body := multipartBody([][2]string{{"v", "3"}}, nil) // invalid slices count too
			return e.c.post(t, "saveFile?u="+uploadID()+"&i=0&n=1", ct, body)
		}},
		{"reads", 15, func() resp {
			return e.c.postJSON(t, "get", map[string]string{"id": "AAAAAAAAAAAAAAAAAAAAAA", "hashedKey": token})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, last := count(tt.burst+5, tt.call)
			// The bucket refills at about 1/s while the loop runs.
			if n < tt.burst || n > tt.burst+2 || last.Code != 429 {
				t.Fatalf("%d requests before 429 (last %d), want about %d", n, last.Code, tt.burst)
			}
			if last.Status != "error" {
				t.Fatalf("429 body %s", last.Raw)
			}
		})
	}
	// secretStatus shares the read limit; ss is not limited.
	if r := e.c.postJSON(t, "secretStatus", map[string]any{"ids": []string{}}); r.Code != 429 {
		t.Fatalf("secretStatus after the read burst: %d", r.Code)
	}
	if r := e.c.post(t, "ss", "", nil); r.Code != 200 {
		t.Fatalf("ss: %d", r.Code)
	}
}

// zeros is an endless body that counts what the server read.
type zeros struct{ n atomic.Int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n.Add(int64(len(p)))
	return len(p), nil
}

func TestBodyLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	post := func(t *testing.T, path, ctype string, body io.Reader, size int64) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/api/"+path, body)
		req.ContentLength = size
		req.Header.Set("Content-Type", ctype)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			// The server may close while the client still writes.
			return -1
		}
		res.Body.Close()
		return res.StatusCode
	}
	jsonPad := func(prefix string, total int) []byte {
		b := []byte(prefix + `"pad":"`)
		b = append(b, bytes.Repeat([]byte("a"), total-len(b)-2)...)
		return append(b, '"', '}')
	}
	tests := []struct {
		name, path string
		limit      int
	}{
		{"get", "get", 1 << 10},
		{"getFile", "getFile", 1 << 10},
		{"secretStatus", "secretStatus", 8 << 10},
		{"saveSecret", "saveSecret", 25 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := post(t, tt.path, "application/json", bytes.NewReader(jsonPad("{", tt.limit+1)), int64(tt.limit+1)); code != 413 {
				t.Fatalf("%d bytes: %d, want 413", tt.limit+1, code)
			}
			if code := post(t, tt.path, "application/json", bytes.NewReader(jsonPad("{", tt.limit)), int64(tt.limit)); code == 413 {
				t.Fatalf("%d bytes: 413 at the limit", tt.limit)
			}
		})
	}
	t.Run("saveFile streams and stops at 100 MiB", func(t *testing.T) {
		f := newEncFile("x", nil, "")
		ct, head := multipartBody(fileFields(f.hash, saveOpts{}), nil)
		boundary := strings.TrimPrefix(ct, "multipart/form-data; boundary=")
		h := head.Bytes()[:bytes.LastIndex(head.Bytes(), []byte("--"+boundary+"--"))]
		h = append(h, []byte("--"+boundary+"\r\nContent-Disposition: form-data; name=\"file\"; filename=\"b\"\r\n\r\n")...)
		z := &zeros{}
		code := post(t, "saveFile", ct, io.MultiReader(bytes.NewReader(h), z), -1)
		if code != 413 && code != -1 {
			t.Fatalf("endless upload: %d, want 413", code)
		}
		// Read while streaming: the server stopped near the limit, not at the end.
		if got := z.n.Load(); got > 110<<20 {
			t.Fatalf("client wrote %d MiB before the server stopped", got>>20)
		}
		e.waitNoBlobs(t)
	})
	t.Run("slice over 4 MiB", func(t *testing.T) {
		f := newEncFile("x", nil, "")
		want400(t, e.c.sendSlice(t, uploadID(), 0, 1, fileFields(f.hash, saveOpts{duration: 60}), randBytes(4<<20+1)))
	})
}
