// Package objstoretest is the conformance suite every objstore.Store runs.
package objstoretest

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/objstore"
)

// Run checks the Store contract. newStore returns a fresh, empty store
// for one subtest (the subtests run in parallel, each on its own store, so
// that one's keys never decide another's outcome).
func Run(t *testing.T, newStore func(t *testing.T) objstore.Store) {
	for _, c := range []struct {
		name string
		test func(t *testing.T, s objstore.Store)
	}{
		{"PutGetStat", testPutGetStat},
		{"Overwrite changes ETag", testOverwriteChangesETag},
		{"Range", testRange},
		{"NotFound", testNotFound},
		{"List", testList},
		{"Delete", testDelete},
		{"Large streamed multipart", testLargeStreamedMultipart},
		{"Ping", testPing},
		{"PresignGet", testPresignGet},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, newStore(t))
		})
	}
}

func put(t *testing.T, s objstore.Store, key string, b []byte, size int64) objstore.Info {
	t.Helper()
	info, err := s.Put(t.Context(), key, bytes.NewReader(b), size, "application/octet-stream")
	if err != nil {
		t.Fatalf("Put(%s): %v", key, err)
	}
	return info
}

func read(t *testing.T, s objstore.Store, key string, rng *objstore.Range) []byte {
	t.Helper()
	rc, _, err := s.Get(t.Context(), key, rng)
	if err != nil {
		t.Fatalf("Get(%s): %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return b
}

func testPutGetStat(t *testing.T, s objstore.Store) {
	body := []byte("hello, object store")
	info := put(t, s, "a/b/hello.txt", body, int64(len(body)))
	if info.Size != int64(len(body)) {
		t.Errorf("Put size = %d, want %d", info.Size, len(body))
	}
	if got := read(t, s, "a/b/hello.txt", nil); !bytes.Equal(got, body) {
		t.Errorf("Get = %q, want %q", got, body)
	}
	st, err := s.Stat(t.Context(), "a/b/hello.txt")
	if err != nil || st.Size != int64(len(body)) || st.ETag == "" {
		t.Errorf("Stat = %+v, %v", st, err)
	}
}

func testOverwriteChangesETag(t *testing.T, s objstore.Store) {
	a := put(t, s, "over/x", []byte("one"), 3)
	b := put(t, s, "over/x", []byte("two!"), 4)
	if got := read(t, s, "over/x", nil); string(got) != "two!" {
		t.Errorf("Get after overwrite = %q", got)
	}
	st, _ := s.Stat(t.Context(), "over/x")
	if a.ETag == st.ETag || st.Size != 4 || b.Size != 4 {
		t.Errorf("ETag not changed by overwrite: %q -> %q", a.ETag, st.ETag)
	}
}

func testRange(t *testing.T, s objstore.Store) {
	put(t, s, "range/r", []byte("0123456789"), 10)
	for _, tc := range []struct {
		rng  objstore.Range
		want string
	}{{objstore.Range{Start: 2, End: 4}, "234"}, {objstore.Range{Start: 7, End: -1}, "789"}, {objstore.Range{Start: 0, End: 0}, "0"}, {objstore.Range{Start: 0, End: -1}, "0123456789"}} {
		if got := read(t, s, "range/r", &tc.rng); string(got) != tc.want {
			t.Errorf("Get range %+v = %q, want %q", tc.rng, got, tc.want)
		}
	}
}

func testNotFound(t *testing.T, s objstore.Store) {
	if _, err := s.Stat(t.Context(), "missing/key"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Stat missing: %v, want ErrNotFound", err)
	}
	if _, _, err := s.Get(t.Context(), "missing/key", nil); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Get missing: %v, want ErrNotFound", err)
	}
}

func testList(t *testing.T, s objstore.Store) {
	for _, k := range []string{"list/2026-01-02/b", "list/2026-01-01/a", "list/2026-01-01/c", "listx/z"} {
		put(t, s, k, []byte(k), int64(len(k)))
	}
	got, err := s.List(t.Context(), "list/")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range got {
		keys = append(keys, o.Key)
	}
	want := "list/2026-01-01/a,list/2026-01-01/c,list/2026-01-02/b"
	if strings.Join(keys, ",") != want {
		t.Errorf("List = %v, want %s", keys, want)
	}
}

func testDelete(t *testing.T, s objstore.Store) {
	put(t, s, "del/x", []byte("x"), 1)
	if err := s.Delete(t.Context(), "del/x"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(t.Context(), "del/x"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Stat after delete: %v", err)
	}
	if err := s.Delete(t.Context(), "del/x"); err != nil {
		t.Errorf("second Delete: %v, want nil", err)
	}
}

func testLargeStreamedMultipart(t *testing.T, s objstore.Store) {
	big := make([]byte, 12<<20+123)
	_, _ = rand.Read(big)
	info, err := s.Put(t.Context(), "big/blob", io.MultiReader(bytes.NewReader(big)), -1, "")
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != int64(len(big)) {
		st, _ := s.Stat(t.Context(), "big/blob")
		if st.Size != int64(len(big)) {
			t.Errorf("size = %d, want %d", st.Size, len(big))
		}
	}
	if got := read(t, s, "big/blob", nil); !bytes.Equal(got, big) {
		t.Error("large object differs after round trip")
	}
}

func testPing(t *testing.T, s objstore.Store) {
	if err := s.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func testPresignGet(t *testing.T, s objstore.Store) {
	body := []byte("a,b\r\n1,2\r\n")
	put(t, s, "presign/file.csv", body, int64(len(body)))
	u, err := s.PresignGet(t.Context(), "presign/file.csv", time.Minute, "file.csv")
	if errors.Is(err, objstore.ErrNotSupported) {
		return // the contract allows it: the API streams such a store's files
	}
	if err != nil {
		t.Fatalf("PresignGet: %v", err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatalf("presigned URL %q: %v", u, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, body) {
		t.Fatalf("GET presigned URL = %d %q, want 200 %q", resp.StatusCode, got, body)
	}
	if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, "file.csv") {
		t.Errorf("Content-Disposition = %q, want the file name", cd)
	}
	// Presigning does not look the key up (S3 cannot say): a GET of a
	// missing key's URL must fail rather than answer something.
	if u, err := s.PresignGet(t.Context(), "presign/missing.csv", time.Minute, "missing.csv"); err == nil {
		if r, err := http.Get(u); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				t.Errorf("GET of a presigned missing key = 200")
			}
		}
	}
}
