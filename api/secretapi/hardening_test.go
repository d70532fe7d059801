package secretapi_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/netintel/netintel/api/secretapi"
	"github.com/netintel/netintel/internal/objstore"
)

// allocated returns the bytes allocated (by every goroutine) while f runs.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// pattern is n bytes of a repeating pattern, read without allocating.
type pattern struct{ n int }

func (p *pattern) Read(b []byte) (int, error) {
	if p.n == 0 {
		return 0, io.EOF
	}
	k := min(len(b), p.n)
	for i := range b[:k] {
		b[i] = byte(i*7 + p.n)
	}
	p.n -= k
	return k, nil
}

// sliceForm is a chunked saveFile body cut around its file bytes: head
// (the fields and the file part's header) and tail (the closing boundary).
func sliceForm(hash string) (ctype, head, tail string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.SetBoundary("netintel-test-boundary")
	for _, f := range fileFields(hash, saveOpts{duration: 600}) {
		_ = mw.WriteField(f[0], f[1])
	}
	_, _ = mw.CreateFormFile("file", "blob.bin")
	return mw.FormDataContentType(), buf.String(), "\r\n--netintel-test-boundary--\r\n"
}

// TestChunked_SliceNotBuffered: a 4 MiB slice goes from the request to
// the object store through a spool file; the process allocates a small
// fraction of the slice for it (it used to grow a buffer to 8 MiB, 16 MiB
// allocated in all, and hold it as long as the client took).
func TestChunked_SliceNotBuffered(t *testing.T) {
	e := newEnv(t, envOpts{})
	_, _, hash := derive(randomKey())
	ctype, head, tail := sliceForm(hash)
	send := func(u string) *http.Response {
		body := io.MultiReader(strings.NewReader(head), &pattern{n: 4 << 20}, strings.NewReader(tail))
		req, err := http.NewRequest(http.MethodPost, e.url+"/api/saveFile?u="+u+"&i=0&n=2", body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = int64(len(head) + 4<<20 + len(tail))
		req.Header.Set("Content-Type", ctype)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	if res := send(uploadID()); res.StatusCode != 200 { // warm up connections and buckets
		t.Fatalf("first slice: %d", res.StatusCode)
	}
	var res *http.Response
	n := allocated(func() { res = send(uploadID()) })
	if res.StatusCode != 200 {
		t.Fatalf("slice: %d", res.StatusCode)
	}
	t.Logf("allocated %d KiB for a 4096 KiB slice (client and server)", n>>10)
	if n > 2<<20 {
		t.Fatalf("a 4 MiB slice allocated %d KiB: it is buffered, not streamed", n>>10)
	}
}

// holdSlice starts a chunked upload from client address addr (sent as
// X-Forwarded-For; the test API trusts it) and returns once the handler
// reads its body (Expect: 100-continue makes the server say so), with
// part of the body sent. The connection stays open until the test ends
// or the returned close is called.
func holdSlice(t *testing.T, base, addr string) (closeConn func()) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_, _, hash := derive(randomKey())
	ctype, head, tail := sliceForm(hash)
	fmt.Fprintf(conn, "POST /api/saveFile?u=%s&i=0&n=2 HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n",
		uploadID(), addr, ctype, len(head)+4<<20+len(tail))
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
		t.Fatalf("open upload from %s: got %q, %v; want 100 Continue", addr, line, err)
	}
	if _, err := io.WriteString(conn, head+strings.Repeat("x", 1000)); err != nil {
		t.Fatal(err)
	}
	return func() { conn.Close() }
}

// TestSaveFile_OpenUploadsCapped: the rate limit counts requests as they
// start; these caps count them while they are open. One address past
// open_uploads_per_client gets 429 (the spec's rate-limit status), any
// address past open_uploads gets 503 retry, and a closed upload frees
// its slot.
func TestSaveFile_OpenUploadsCapped(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{api: func(o *secretapi.Options) {
		o.OpenUploadsPerClient, o.OpenUploads, o.TrustProxy = 2, 3, true
	}})
	send := func(addr string) resp {
		ct, body := multipartBody(fileFields(strings.Repeat("a", 64), saveOpts{duration: 60}), []byte("0123456789abcdef0123456789abcdef"))
		req, _ := http.NewRequest(http.MethodPost, e.url+"/api/saveFile?u="+uploadID()+"&i=0&n=1", body)
		req.Header.Set("Content-Type", ct)
		req.Header.Set("X-Forwarded-For", addr)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		r := resp{Code: res.StatusCode, Header: res.Header}
		_ = json.NewDecoder(res.Body).Decode(&r)
		return r
	}
	closeA := holdSlice(t, e.url, "192.0.2.1")
	holdSlice(t, e.url, "192.0.2.1")
	if r := send("192.0.2.1"); r.Code != 429 || r.Status != "error" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("third open upload from one address: %d %q, want 429 error with Retry-After", r.Code, r.Status)
	}
	holdSlice(t, e.url, "192.0.2.2")
	if r := send("192.0.2.3"); r.Code != 503 || r.Status != "retry" {
		t.Fatalf("upload past open_uploads: %d %q, want 503 retry", r.Code, r.Status)
	}
	closeA()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := send("192.0.2.3")
		if r.Code == 200 && r.Status == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot not freed after an upload's connection closed: %d %q", r.Code, r.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSaveFile_SlowBodyCutOff: a client on loopback that trickles a
// slice's bytes (here one every 50 ms, under a 64 KiB/s minimum with
// 500 ms of credit) is answered 408 and disconnected, although every
// byte re-arms an idle timer; a body that keeps the rate is not.
func TestSaveFile_SlowBodyCutOff(t *testing.T) {
	e := newEnv(t, envOpts{api: func(o *secretapi.Options) {
		o.MinBodyRate, o.BodyRateWindow = 64<<10, 500*time.Millisecond
	}})
	for _, endpoint := range []string{"saveFile?u=" + uploadID() + "&i=0&n=2", "saveSecret"} {
		t.Run(strings.Split(endpoint, "?")[0], func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_, _, hash := derive(randomKey())
			ctype, head, _ := sliceForm(hash)
			if endpoint == "saveSecret" {
				ctype, head = "application/json", `{"v":3,"readTokenHash":"`+hash+`","secretMessage":"`
			}
			start := time.Now()
			fmt.Fprintf(conn, "POST /api/%s HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s", endpoint, ctype, len(head)+4<<20, head)
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
						if _, err := conn.Write([]byte("A")); err != nil {
							return
						}
					}
				}
			}()
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			got, err := io.ReadAll(conn) // until the server closes the connection
			// The server closes with the trickle's last bytes unread, so
			// its kernel may answer them with a reset after the response:
			// a reset once the whole answer is in is the cut-off too.
			if err != nil && errors.Is(err, syscall.ECONNRESET) && bytes.Contains(got, []byte("\r\n\r\n{")) {
				err = nil
			}
			if err != nil {
				t.Fatalf("server still reading a trickle after %s (%v), got %q", time.Since(start).Round(time.Millisecond), err, got)
			}
			if !strings.HasPrefix(string(got), "HTTP/1.1 408") || !strings.Contains(string(got), `"status":"error"`) {
				t.Fatalf("answer %q, want 408 error", got)
			}
			t.Logf("cut off after %s", time.Since(start).Round(time.Millisecond))
		})
	}
	t.Run("fast enough", func(t *testing.T) {
		c := newChunked(t, 5<<20, saveOpts{})
		wantNoID(t, c.send(t, e, 0))
		wantID(t, c.send(t, e, 1))
	})
}

// countingStore counts the bytes read from the blobs it opens, and holds
// every Get until `hold` of them are waiting (or a second passed), so that
// concurrent readers all reach the race for the view together.
type countingStore struct {
	objstore.Store
	read atomic.Int64
	hold int

	mu      sync.Mutex
	waiting int
	release chan struct{}
}

func (s *countingStore) Get(ctx context.Context, key string, rng *objstore.Range) (io.ReadCloser, objstore.Info, error) {
	if strings.Contains(key, "/b/") && s.hold > 0 {
		s.mu.Lock()
		if s.release == nil {
			s.release = make(chan struct{})
		}
		ch := s.release
		if s.waiting++; s.waiting == s.hold {
			close(ch)
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(time.Second):
		}
	}
	rc, info, err := s.Store.Get(ctx, key, rng)
	if err != nil {
		return nil, info, err
	}
	return &countingBody{ReadCloser: rc, n: &s.read}, info, nil
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// TestGet_LargeTextStreamed: 15 concurrent reads of a one-view text kept
// in the object store read its ciphertext from the store once (the
// winner's); the losers load nothing. And the winner's answer streams:
// reading a 4 MiB text allocates a small fraction of it, where it used to
// hold the ciphertext and its JSON encoding.
func TestGet_LargeTextStreamed(t *testing.T) {
	folder, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const readers = 15
	store := &countingStore{Store: folder, hold: readers}
	e := newEnv(t, envOpts{store: store, inlineMax: 1024})
	text := strings.Repeat("secret text ", 256<<10/12*4) // about 1 MiB
	l := e.c.saveText(t, text, saveOpts{views: 1, duration: 600})
	_, token, _ := derive(l.randomKey)
	var ok, none atomic.Int64
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() {
			for {
				r := e.c.postJSON(t, "get", map[string]string{"id": l.id, "hashedKey": token})
				switch {
				case r.Code == 503 && r.Status == "retry":
					continue
				case r.Status == "ok":
					if got, err := decryptText(mustKey(l.randomKey), r.CryptedMessage); err != nil || got != text {
						t.Errorf("read back %d bytes, %v", len(got), err)
					}
					ok.Add(1)
				case r.Status == "no message":
					none.Add(1)
				default:
					t.Errorf("unexpected %d %s", r.Code, r.Raw)
				}
				return
			}
		})
	}
	wg.Wait()
	size := int64(len(encryptText(mustKey(l.randomKey), text)))
	if ok.Load() != 1 || none.Load() != readers-1 {
		t.Fatalf("%d ok, %d no message; want 1 and %d", ok.Load(), none.Load(), readers-1)
	}
	if got := store.read.Load(); got != size {
		t.Fatalf("%d readers read %d bytes of a %d-byte ciphertext from the store; only the winner should read it", readers, got, size)
	}

	store.hold = 0
	big := strings.Repeat("0123456789abcdef", 3<<20/16) // 3 MiB of text, 4 MiB on the wire
	l = e.c.saveText(t, big, saveOpts{views: 2, duration: 600})
	_, token, _ = derive(l.randomKey)
	body := fmt.Sprintf(`{"id":%q,"hashedKey":%q}`, l.id, token)
	var sum [32]byte
	var code int
	n := allocated(func() {
		res, err := http.Post(e.url+"/api/get", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		code = res.StatusCode
		h := sha256.New()
		_, _ = io.Copy(h, res.Body)
		copy(sum[:], h.Sum(nil))
	})
	if code != 200 {
		t.Fatalf("get: %d", code)
	}
	t.Logf("allocated %d KiB to answer a 4 MiB text (client and server)", n>>10)
	if n > 2<<20 {
		t.Fatalf("reading a 4 MiB text allocated %d KiB: the ciphertext is held, not streamed", n>>10)
	}
	// The second view, read whole, tells what the first answer had to be.
	r, got := e.c.readText(t, l, "")
	if got != big {
		t.Fatalf("second read: %d %q", r.Code, r.Status)
	}
	match := false
	for _, exp := range []int64{*r.ExpiresIn, *r.ExpiresIn + 1} {
		want := fmt.Sprintf(`{"status":"ok","cryptedMessage":"%s","viewsLeft":1,"expiresIn":%d}`+"\n", r.CryptedMessage, exp)
		match = match || sha256.Sum256([]byte(want)) == sum
	}
	if !match {
		t.Fatal("the streamed answer differs from the JSON answer")
	}
}

// mustKey is the encryption key of a link without a passphrase.
func mustKey(randomKey string) []byte {
	key, _, _ := derive(randomKey)
	return key
}
