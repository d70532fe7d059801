package secretapi_test

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
)

func randBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func TestFile_SingleRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	data := randBytes(300 << 10)
	f := newEncFile("photo.jpg", data, "pw")
	r := e.c.saveFile(t, f, saveOpts{views: 2, duration: 120, passphrase: "pw"})
	if r.Code != 200 || r.Status != "ok" || r.NewID == nil || len(*r.NewID) != 22 {
		t.Fatalf("saveFile: %d %s", r.Code, r.Raw)
	}
	l := link{"f", f.rk, *r.NewID}
	if g, _, _ := e.c.readFile(t, l, "nope"); g.Status != "wrong key" || g.Code != 200 {
		t.Fatalf("wrong passphrase: %d %s", g.Code, g.Status)
	}
	// A file id is not a text secret, and reading it as one uses no view.
	if g := e.c.postJSON(t, "get", map[string]string{"id": l.id, "hashedKey": strings.Repeat("0", 64)}); g.Status != "no message" {
		t.Fatalf("get on a file: %s", g.Raw)
	}
	for want := 1; want >= 0; want-- {
		g, meta, got := e.c.readFile(t, l, "pw")
		if g.Status != "ok" || !bytes.Equal(got, data) || meta.Name != "photo.jpg" || meta.Size != len(data) {
			t.Fatalf("getFile: %s %+v", g.Status, meta)
		}
		for _, h := range []string{"X-Svc-Views-Left", "X-1Time-Views-Left"} {
			if g.Header.Get(h) != strconv.Itoa(want) {
				t.Fatalf("%s = %q, want %d", h, g.Header.Get(h), want)
			}
		}
		for _, h := range []string{"X-Svc-Expires-In", "X-1Time-Expires-In"} {
			if v, _ := strconv.Atoi(g.Header.Get(h)); v < 118 || v > 120 {
				t.Fatalf("%s = %q, want about 120", h, g.Header.Get(h))
			}
		}
	}
	// The spec spells the legacy names with a capital T; check the wire.
	l2 := link{"f", f.rk, wantID(t, e.c.saveFile(t, f, saveOpts{views: 1}))}
	_, token, _ := derive("pw" + l2.randomKey)
	head := rawPost(t, e.url, "/api/getFile", `{"id":"`+l2.id+`","hashedKey":"`+token+`"}`)
	for _, h := range []string{"\r\nX-1Time-Views-Left: 0\r\n", "\r\nX-1Time-Expires-In: ", "\r\nX-Svc-Views-Left: 0\r\n", "\r\nX-Svc-Expires-In: "} {
		if !strings.Contains(head, h) {
			t.Fatalf("response head lacks %q:\n%s", h, head)
		}
	}
	if g, _, _ := e.c.readFile(t, l, "pw"); g.Status != "no message" || g.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("after last view: %s %s", g.Status, g.Header.Get("Content-Type"))
	}
	if e.stored(t, l.id) {
		t.Fatal("used-up file record left behind")
	}
	e.waitNoBlobs(t)
}

func TestFile_SingleRequestRejects(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	f := newEncFile("a", randBytes(100), "")
	tests := []struct {
		name   string
		fields [][2]string
		file   []byte
	}{
		{"no file", [][2]string{{"readTokenHash", f.hash}, {"v", "3"}}, nil},
		{"empty file", [][2]string{{"readTokenHash", f.hash}, {"v", "3"}}, []byte{}},
		{"no hash", [][2]string{{"v", "3"}}, f.blob},
		{"v 2", [][2]string{{"readTokenHash", f.hash}, {"v", "2"}}, f.blob},
		{"uppercase hash", [][2]string{{"readTokenHash", strings.ToUpper(f.hash)}, {"v", "3"}}, f.blob},
		{"v3 with hashedKey", [][2]string{{"hashedKey", f.hash}, {"v", "3"}}, f.blob},
		{"views not a number", [][2]string{{"readTokenHash", f.hash}, {"v", "3"}, {"views", "many"}}, f.blob},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, body := multipartBody(tt.fields, tt.file)
			r := e.c.post(t, "saveFile", ct, body)
			if r.Code != 200 || r.Status != "error" || r.NewID == nil || *r.NewID != "0" {
				t.Fatalf("got %d %s", r.Code, r.Raw)
			}
		})
	}
	t.Run("not multipart", func(t *testing.T) {
		r := e.c.post(t, "saveFile", "application/json", strings.NewReader(`{}`))
		if r.Status != "error" {
			t.Fatalf("got %d %s", r.Code, r.Raw)
		}
	})
	// Fields after the file and silent corrections work on a single request.
	ct, body := multipartBody(nil, f.blob)
	var buf bytes.Buffer
	buf.Write(body.Bytes()[:bytes.LastIndex(body.Bytes(), []byte("--"+strings.TrimPrefix(ct, "multipart/form-data; boundary=")+"--"))])
	boundary := strings.TrimPrefix(ct, "multipart/form-data; boundary=")
	for _, kv := range [][2]string{{"readTokenHash", f.hash}, {"v", "3"}, {"views", "99"}, {"duration", "0"}} {
		fmt.Fprintf(&buf, "--%s\r\nContent-Disposition: form-data; name=%q\r\n\r\n%s\r\n", boundary, kv[0], kv[1])
	}
	fmt.Fprintf(&buf, "--%s--\r\n", boundary)
	r := e.c.post(t, "saveFile", ct, &buf)
	if r.Status != "ok" {
		t.Fatalf("fields after file: %s", r.Raw)
	}
	g, _, _ := e.c.readFile(t, link{"f", f.rk, *r.NewID}, "")
	if g.Header.Get("X-Svc-Views-Left") != "9" || g.Header.Get("X-Svc-Expires-In") < "86398" {
		t.Fatalf("corrections: views left %s, expires in %s", g.Header.Get("X-Svc-Views-Left"), g.Header.Get("X-Svc-Expires-In"))
	}
	if b := e.blobs(t); len(b) != 1 {
		t.Fatalf("rejected uploads left blobs: %v", b)
	}
}

// chunked is one file cut into slices, with its fields.
type chunked struct {
	u      string
	f      encFile
	slices [][]byte
	fields [][2]string
}

func newChunked(t testing.TB, size int, o saveOpts) chunked {
	t.Helper()
	if o.duration == 0 {
		o.duration = 600 // required on chunked slices
	}
	f := newEncFile("big.bin", randBytes(size), o.passphrase)
	return chunked{u: uploadID(), f: f, slices: cut(f.blob), fields: fileFields(f.hash, o)}
}

func (c chunked) send(t testing.TB, e *env, i int) resp {
	t.Helper()
	return e.c.sendSlice(t, c.u, i, len(c.slices), c.fields, c.slices[i])
}

func wantNoID(t testing.TB, r resp) {
	t.Helper()
	if r.Code != 200 || r.Status != "ok" || r.Raw["newId"] != nil {
		t.Fatalf("want ok without newId, got %d %s", r.Code, r.Raw)
	}
}

func wantID(t testing.TB, r resp) string {
	t.Helper()
	if r.Code != 200 || r.Status != "ok" || r.NewID == nil || len(*r.NewID) != 22 {
		t.Fatalf("want ok with newId, got %d %s", r.Code, r.Raw)
	}
	return *r.NewID
}

func want400(t testing.TB, r resp) {
	t.Helper()
	if r.Code != 400 || r.Status != "error" || r.Raw["newId"] != nil {
		t.Fatalf("want 400 error, got %d %s", r.Code, r.Raw)
	}
}

func TestChunked_InOrderEqualsSingle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	c := newChunked(t, 3*(4<<20)+1234, saveOpts{views: 2, duration: 300})
	if len(c.slices) != 4 {
		t.Fatalf("%d slices", len(c.slices))
	}
	for i := range 3 {
		wantNoID(t, c.send(t, e, i))
	}
	id := wantID(t, c.send(t, e, 3))
	g, meta, data := e.c.readFile(t, link{"f", c.f.rk, id}, "")
	if g.Status != "ok" || !bytes.Equal(g.Body, c.f.blob) || meta.Name != "big.bin" || len(data) != meta.Size {
		t.Fatalf("stored file differs from the encrypted blob (%d vs %d bytes)", len(g.Body), len(c.f.blob))
	}
	if g.Header.Get("X-Svc-Views-Left") != "1" {
		t.Fatalf("views left %s", g.Header.Get("X-Svc-Views-Left"))
	}
	// Resent within the hour: same newId, for any slice.
	if got := wantID(t, c.send(t, e, 1)); got != id {
		t.Fatalf("resend gave %s, want %s", got, id)
	}
	// Different bytes for a completed slice: 400.
	bad := bytes.Clone(c.slices[3])
	bad[0] ^= 1
	want400(t, e.c.sendSlice(t, c.u, 3, 4, c.fields, bad))
	// After the hour: a new upload, so a new newId.
	e.clock.Advance(61 * time.Minute)
	for i := range 3 {
		wantNoID(t, c.send(t, e, i))
	}
	if id2 := wantID(t, c.send(t, e, 3)); id2 == id {
		t.Fatal("upload resent after the hour returned the old newId")
	}
	// Slices are removed once assembled.
	for _, k := range e.blobs(t) {
		if strings.Contains(k, "/u/") {
			t.Fatalf("slice left after assembly: %s", k)
		}
	}
}

func TestChunked_SingleSliceResend(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	c := newChunked(t, 1000, saveOpts{})
	id := wantID(t, c.send(t, e, 0))
	if got := wantID(t, c.send(t, e, 0)); got != id {
		t.Fatalf("resend: %s, want %s", got, id)
	}
	e.clock.Advance(61 * time.Minute)
	if got := wantID(t, c.send(t, e, 0)); got == id {
		t.Fatal("resend after the hour gave the same newId")
	}
}

func TestChunked_GoesWrong(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	t.Run("missing slice", func(t *testing.T) {
		c := newChunked(t, 2*(4<<20)+10, saveOpts{})
		wantNoID(t, c.send(t, e, 0))
		wantNoID(t, c.send(t, e, 2))
		wantNoID(t, c.send(t, e, 2)) // still missing 1
		id := wantID(t, c.send(t, e, 1))
		if g, _, _ := e.c.readFile(t, link{"f", c.f.rk, id}, ""); !bytes.Equal(g.Body, c.f.blob) {
			t.Fatal("file differs")
		}
	})
	t.Run("out of order", func(t *testing.T) {
		c := newChunked(t, 2*(4<<20)+10, saveOpts{})
		wantNoID(t, c.send(t, e, 2))
		wantNoID(t, c.send(t, e, 1))
		id := wantID(t, c.send(t, e, 0))
		if g, _, _ := e.c.readFile(t, link{"f", c.f.rk, id}, ""); !bytes.Equal(g.Body, c.f.blob) {
			t.Fatal("file differs")
		}
	})
	t.Run("resend identical and different bytes", func(t *testing.T) {
		c := newChunked(t, (4<<20)+10, saveOpts{})
		wantNoID(t, c.send(t, e, 0))
		wantNoID(t, c.send(t, e, 0))
		bad := bytes.Clone(c.slices[0])
		bad[100] ^= 0xff
		want400(t, e.c.sendSlice(t, c.u, 0, 2, c.fields, bad))
		wantID(t, c.send(t, e, 1))
	})
	t.Run("differing fields", func(t *testing.T) {
		c := newChunked(t, (4<<20)+10, saveOpts{views: 2, duration: 600})
		wantNoID(t, c.send(t, e, 0))
		other := newEncFile("x", nil, "")
		for _, fields := range [][][2]string{
			fileFields(other.hash, saveOpts{views: 2, duration: 600}),
			fileFields(c.f.hash, saveOpts{views: 3, duration: 600}),
			fileFields(c.f.hash, saveOpts{views: 2, duration: 601}),
			fileFields(c.f.hash, saveOpts{duration: 600}), // views default 1 differs from 2
		} {
			want400(t, e.c.sendSlice(t, c.u, 1, 2, fields, c.slices[1]))
		}
		want400(t, e.c.sendSlice(t, c.u, 1, 3, c.fields, c.slices[1])) // n differs (and 1 is no longer last)
		wantID(t, c.send(t, e, 1))
	})
	t.Run("strict fields", func(t *testing.T) {
		f := newEncFile("x", randBytes(10), "")
		for name, fields := range map[string][][2]string{
			"missing duration": {{"readTokenHash", f.hash}, {"v", "3"}},
			"duration 0":       {{"readTokenHash", f.hash}, {"v", "3"}, {"duration", "0"}},
			"duration too big": {{"readTokenHash", f.hash}, {"v", "3"}, {"duration", "2592001"}},
			"views 0":          {{"readTokenHash", f.hash}, {"v", "3"}, {"duration", "60"}, {"views", "0"}},
			"views 11":         {{"readTokenHash", f.hash}, {"v", "3"}, {"duration", "60"}, {"views", "11"}},
			"v 2":              {{"readTokenHash", f.hash}, {"v", "2"}, {"duration", "60"}},
			"no hash":          {{"v", "3"}, {"duration", "60"}},
		} {
			t.Run(name, func(t *testing.T) {
				want400(t, e.c.sendSlice(t, uploadID(), 0, 1, fields, f.blob))
			})
		}
	})
	t.Run("bad query", func(t *testing.T) {
		f := newEncFile("x", randBytes(10), "")
		fields := fileFields(f.hash, saveOpts{duration: 60})
		u := uploadID()
		for _, q := range []string{
			"u=" + u + "&i=0&n=26", "u=" + u + "&i=0&n=0", "u=" + u + "&i=1&n=1", "u=" + u + "&i=-1&n=2",
			"u=" + u[:21] + "&i=0&n=1", "u=" + u[:21] + "*&i=0&n=1", "u=" + u + "&i=x&n=1", "u=" + u + "&n=1", "i=0&n=1",
		} {
			ct, body := multipartBody(fields, f.blob)
			want400(t, e.c.post(t, "saveFile?"+q, ct, body))
		}
	})
	t.Run("26 slices", func(t *testing.T) {
		c := newChunked(t, 100, saveOpts{duration: 60})
		want400(t, e.c.sendSlice(t, c.u, 25, 26, c.fields, c.slices[0]))
		want400(t, e.c.sendSlice(t, c.u, 0, 26, c.fields, randBytes(4<<20)))
	})
	t.Run("slice sizes", func(t *testing.T) {
		c := newChunked(t, 100, saveOpts{duration: 60})
		want400(t, e.c.sendSlice(t, c.u, 0, 2, c.fields, randBytes(4<<20-1))) // not last, short
		want400(t, e.c.sendSlice(t, c.u, 1, 2, c.fields, randBytes(4<<20+1))) // last, over 4 MiB
		want400(t, e.c.sendSlice(t, c.u, 1, 2, c.fields, []byte{}))           // last, empty
		want400(t, e.c.sendSlice(t, c.u, 0, 1, c.fields, nil))                // no file part
	})
	t.Run("idle expiry", func(t *testing.T) {
		c := newChunked(t, (4<<20)+10, saveOpts{duration: 60})
		wantNoID(t, c.send(t, e, 0))
		e.clock.Advance(61 * time.Minute)
		// The upload was discarded: slice 1 starts a new one, slice 0 is missing again.
		wantNoID(t, c.send(t, e, 1))
		id := wantID(t, c.send(t, e, 0))
		if g, _, _ := e.c.readFile(t, link{"f", c.f.rk, id}, ""); !bytes.Equal(g.Body, c.f.blob) {
			t.Fatal("file differs")
		}
		// A re-encrypted file reuses nothing of the discarded upload, so
		// different bytes are accepted after the idle hour.
		d := newChunked(t, (4<<20)+10, saveOpts{duration: 60})
		wantNoID(t, d.send(t, e, 0))
		e.clock.Advance(61 * time.Minute)
		other := randBytes(4 << 20)
		wantNoID(t, e.c.sendSlice(t, d.u, 0, 2, d.fields, other))
	})
}

// TestChunked_RetryWhileFinishing: while one request assembles the file,
// another slice of the same upload answers 503 retry; afterwards the
// resend gets the same newId.
func TestChunked_RetryWhileFinishing(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	e := newEnv(t, envOpts{beforeFinish: func(string) {
		once.Do(func() {
			close(entered)
			<-release
		})
	}})
	c := newChunked(t, (4<<20)+10, saveOpts{duration: 60})
	wantNoID(t, c.send(t, e, 0))
	done := make(chan resp, 1)
	go func() { done <- c.send(t, e, 1) }()
	select {
	case <-entered:
	case <-time.After(20 * time.Second):
		t.Fatal("completing request never started assembling")
	}
	for _, i := range []int{0, 1} {
		r := c.send(t, e, i)
		if r.Code != 503 || r.Status != "retry" {
			t.Fatalf("slice %d during assembly: %d %s", i, r.Code, r.Raw)
		}
	}
	close(release)
	id := wantID(t, <-done)
	if got := wantID(t, c.send(t, e, 0)); got != id {
		t.Fatalf("after assembly: %s, want %s", got, id)
	}
}

// TestChunked_ConcurrentSlices sends every slice at once, twice: exactly
// one file is assembled and every newId answered is that one.
func TestChunked_ConcurrentSlices(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	c := newChunked(t, 2*(4<<20)+10, saveOpts{duration: 60})
	var wg sync.WaitGroup
	res := make(chan resp, 6)
	for range 2 {
		for i := range c.slices {
			wg.Go(func() { res <- c.send(t, e, i) })
		}
	}
	wg.Wait()
	close(res)
	ids := map[string]bool{}
	for r := range res {
		switch {
		case r.Code == 503 && r.Status == "retry":
		case r.Code == 200 && r.Status == "ok":
			if r.NewID != nil {
				ids[*r.NewID] = true
			}
		default:
			t.Fatalf("unexpected answer %d %s", r.Code, r.Raw)
		}
	}
	if len(ids) > 1 {
		t.Fatalf("two files assembled: %v", ids)
	}
	var id string
	for {
		r := c.send(t, e, 0)
		if r.Code == 503 {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		id = wantID(t, r)
		break
	}
	if len(ids) == 1 && !ids[id] {
		t.Fatalf("resend gave %s, concurrent answers %v", id, ids)
	}
	if g, _, _ := e.c.readFile(t, link{"f", c.f.rk, id}, ""); !bytes.Equal(g.Body, c.f.blob) {
		t.Fatal("file differs")
	}
}

// rawPost sends a request over a plain TCP connection and returns the
// response head as sent (net/http would canonicalize header names).
func rawPost(t testing.TB, base, path, body string) string {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s?src=dev HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", path, len(body), body)
	var head strings.Builder
	br := bufio.NewReader(conn)
	for {
		line, err := br.ReadString('\n')
		head.WriteString(line)
		if err != nil || line == "\r\n" {
			return head.String()
		}
	}
}

// TestFile_OnS3 runs a chunked and a single-request file through a real
// S3-compatible server (versitygw), the production blob store.
func TestFile_OnS3(t *testing.T) {
	t.Parallel()
	s3 := testutil.StartS3(t)
	store, err := objstore.NewS3(t.Context(), s3.Config().S3)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOpts{store: store})
	c := newChunked(t, (4<<20)+4321, saveOpts{views: 1})
	wantNoID(t, c.send(t, e, 0))
	id := wantID(t, c.send(t, e, 1))
	if g, _, _ := e.c.readFile(t, link{"f", c.f.rk, id}, ""); !bytes.Equal(g.Body, c.f.blob) {
		t.Fatal("chunked file differs on S3")
	}
	f := newEncFile("s.txt", randBytes(200<<10), "")
	id = wantID(t, e.c.saveFile(t, f, saveOpts{}))
	if g, _, data := e.c.readFile(t, link{"f", f.rk, id}, ""); g.Status != "ok" || len(data) != 200<<10 {
		t.Fatalf("single file on S3: %s", g.Status)
	}
	e.waitNoBlobs(t)
}
