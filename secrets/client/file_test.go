package client

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/netintel/netintel/secrets/client/fakehost"
)

// randomBytes is a large input generated at run time (never testdata).
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

func sliceCalls(h *fakehost.Host) (chunked, whole int, idx []string) {
	for _, r := range h.Requests() {
		if r.Endpoint != "saveFile" {
			continue
		}
		if r.Query["u"] != "" {
			chunked++
			idx = append(idx, r.Query["i"]+"/"+r.Query["n"])
		} else {
			whole++
		}
	}
	return
}

func TestClient_FileSmall(t *testing.T) {
	h, url := startFake(t)
	c := testClient()
	data := []byte("hello, file")
	var last, total int64
	l, err := c.CreateFile(t.Context(), url, FileMeta{Name: "note.txt", Type: "text/plain"}, data, SaveOptions{Passphrase: "pw"}, func(d, tot int64) { last, total = d, tot })
	if err != nil {
		t.Fatal(err)
	}
	if l.Kind != KindFile || last != total || total == 0 {
		t.Fatalf("kind %s, progress %d/%d", l.Kind, last, total)
	}
	if chunked, whole, _ := sliceCalls(h); chunked != 0 || whole != 1 {
		t.Fatalf("chunked %d whole %d", chunked, whole)
	}
	if _, _, _, err := c.ReadFile(t.Context(), l, "", nil); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("no passphrase: %v", err)
	}
	var dl int64
	meta, got, info, err := c.ReadFile(t.Context(), l, "pw", func(d, _ int64) { dl = d })
	if err != nil {
		t.Fatal(err)
	}
	if meta != (FileMeta{Name: "note.txt", Type: "text/plain", Size: int64(len(data))}) || !bytes.Equal(got, data) || info.ViewsLeft != 0 || dl == 0 {
		t.Fatalf("meta %+v info %+v dl %d", meta, info, dl)
	}
	if _, _, _, err := c.ReadFile(t.Context(), l, "pw", nil); !errors.Is(err, ErrNoMessage) {
		t.Fatalf("second read: %v", err)
	}
}

func TestClient_FileChunked(t *testing.T) {
	data := randomBytes(2*ChunkSize+12345, 1)
	tests := []struct {
		name       string
		faults     []fakehost.Fault
		wantCalls  int
		wantErr    error
		wantSlices []string
	}{
		{"clean", nil, 3, nil, []string{"0/3", "1/3", "2/3"}},
		{"retryable faults", []fakehost.Fault{{Drop: true}, {Code: 503, Body: `{"status":"retry"}`}, {Code: 408}, {Code: 429}, fakehost.Pass, {Code: 502}, {Code: 520}}, 9, nil, nil},
		{"400 error not retried", []fakehost.Fault{{Code: 400, Body: `{"status":"error","newId":"0"}`}}, 1, ErrServer, nil},
		{"413 not retried", []fakehost.Fault{{Code: 413}}, 1, ErrServer, nil},
		{"retries run out", []fakehost.Fault{{Code: 500}, {Code: 500}, {Code: 500}, {Code: 500}, {Code: 500}}, 5, ErrServer, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, url := startFake(t)
			c := testClient()
			h.Inject("saveFile", tc.faults...)
			var maxDone, total int64
			l, err := c.CreateFile(t.Context(), url, FileMeta{Name: "big.bin"}, data, SaveOptions{Views: 2}, func(d, tot int64) { maxDone, total = max(maxDone, d), tot })
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
			chunked, whole, idx := sliceCalls(h)
			if chunked+whole != tc.wantCalls || whole != 0 && tc.wantErr == nil {
				t.Fatalf("%d chunked + %d whole calls, want %d chunked", chunked, whole, tc.wantCalls)
			}
			if tc.wantSlices != nil && !equal(idx, tc.wantSlices) {
				t.Fatalf("slices %v, want %v", idx, tc.wantSlices)
			}
			if err != nil {
				return
			}
			if maxDone != total || total != EncryptedFileSize(FileMeta{Name: "big.bin"}, int64(len(data))) {
				t.Fatalf("progress %d/%d", maxDone, total)
			}
			_, got, info, err := c.ReadFile(t.Context(), l, "", nil)
			if err != nil || !bytes.Equal(got, data) || info.ViewsLeft != 1 {
				t.Fatalf("read back: %v, equal %v, info %+v", err, bytes.Equal(got, data), info)
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A host that predates chunking answers the first slice with a newId; the
// client then sends the whole file in one request.
func TestClient_FileLegacyHostFallback(t *testing.T) {
	h, url := startFake(t)
	h.Legacy = true
	c := testClient()
	data := randomBytes(ChunkSize+1, 2)
	l, err := c.CreateFile(t.Context(), url, FileMeta{Name: "x"}, data, SaveOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	chunked, whole, _ := sliceCalls(h)
	if chunked != 1 || whole != 1 {
		t.Fatalf("chunked %d whole %d, want 1 and 1", chunked, whole)
	}
	_, got, _, err := c.ReadFile(t.Context(), l, "", nil)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %v", err)
	}
}

// Exactly 4 MiB of encrypted bytes is one request; one byte more is two slices.
func TestClient_FileChunkBoundary(t *testing.T) {
	fit := ChunkSize - 100
	for EncryptedFileSize(FileMeta{Name: "b"}, int64(fit+1)) <= ChunkSize {
		fit++
	}
	for _, tc := range []struct {
		size           int
		chunked, whole int
	}{
		{fit, 0, 1},
		{fit + 1, 2, 0},
	} {
		h, url := startFake(t)
		c := testClient()
		if _, err := c.CreateFile(t.Context(), url, FileMeta{Name: "b"}, make([]byte, tc.size), SaveOptions{}, nil); err != nil {
			t.Fatal(err)
		}
		if chunked, whole, _ := sliceCalls(h); chunked != tc.chunked || whole != tc.whole {
			t.Fatalf("size %d: chunked %d whole %d", tc.size, chunked, whole)
		}
	}
}

func TestClient_FileTooLarge(t *testing.T) {
	h, url := startFake(t)
	c := testClient()
	big := make([]byte, MaxEncryptedFile)
	if _, err := c.CreateFile(t.Context(), url, FileMeta{Name: "big"}, big, SaveOptions{}, nil); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("got %v", err)
	}
	if len(h.Requests()) != 0 {
		t.Fatal("a request was sent")
	}
}

func TestClient_ReadFileFailures(t *testing.T) {
	tests := []struct {
		name      string
		faults    []fakehost.Fault
		want      error
		wantCalls int
	}{
		{"503 retry", []fakehost.Fault{{Code: 503, Body: `{"status":"retry"}`}}, nil, 2},
		{"400", []fakehost.Fault{{Code: 400, Body: `{"status":"error"}`}}, ErrServer, 1},
		{"500", []fakehost.Fault{{Code: 500, Body: `{"status":"error"}`}}, ErrServer, 1},
		{"429", []fakehost.Fault{{Code: 429, Body: `{"status":"error"}`}}, ErrRateLimited, 1},
		{"json no message", []fakehost.Fault{{Code: 200, Body: `{"status":"no message"}`}}, ErrNoMessage, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, url := startFake(t)
			c := testClient()
			l, err := c.CreateFile(t.Context(), url, FileMeta{Name: "f"}, []byte("data"), SaveOptions{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			h.Inject("getFile", tc.faults...)
			_, got, _, err := c.ReadFile(t.Context(), l, "", nil)
			if !errors.Is(err, tc.want) || err == nil && string(got) != "data" {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if n := count(h, "getFile"); n != tc.wantCalls {
				t.Fatalf("%d calls, want %d", n, tc.wantCalls)
			}
		})
	}
}
