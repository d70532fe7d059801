// Package objstoretest is the conformance suite every objstore.Store runs.
package objstoretest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/netintel/netintel/internal/objstore"
)

// Run checks the Store contract on s, which must be empty.
func Run(t *testing.T, s objstore.Store) {
	ctx := context.Background()
	put := func(t *testing.T, key string, b []byte, size int64) objstore.Info {
		t.Helper()
		info, err := s.Put(ctx, key, bytes.NewReader(b), size, "application/octet-stream")
		if err != nil {
			t.Fatalf("Put(%s): %v", key, err)
		}
		return info
	}
	read := func(t *testing.T, key string, rng *objstore.Range) []byte {
		t.Helper()
		rc, _, err := s.Get(ctx, key, rng)
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

	t.Run("PutGetStat", func(t *testing.T) {
		body := []byte("hello, object store")
		info := put(t, "a/b/hello.txt", body, int64(len(body)))
		if info.Size != int64(len(body)) {
			t.Errorf("Put size = %d, want %d", info.Size, len(body))
		}
		if got := read(t, "a/b/hello.txt", nil); !bytes.Equal(got, body) {
			t.Errorf("Get = %q, want %q", got, body)
		}
		st, err := s.Stat(ctx, "a/b/hello.txt")
		if err != nil || st.Size != int64(len(body)) || st.ETag == "" {
			t.Errorf("Stat = %+v, %v", st, err)
		}
	})
	t.Run("Overwrite changes ETag", func(t *testing.T) {
		a := put(t, "over/x", []byte("one"), 3)
		b := put(t, "over/x", []byte("two!"), 4)
		if got := read(t, "over/x", nil); string(got) != "two!" {
			t.Errorf("Get after overwrite = %q", got)
		}
		st, _ := s.Stat(ctx, "over/x")
		if a.ETag == st.ETag || st.Size != 4 || b.Size != 4 {
			t.Errorf("ETag not changed by overwrite: %q -> %q", a.ETag, st.ETag)
		}
	})
	t.Run("Range", func(t *testing.T) {
		put(t, "range/r", []byte("0123456789"), 10)
		for _, tc := range []struct {
			rng  objstore.Range
			want string
		}{{objstore.Range{Start: 2, End: 4}, "234"}, {objstore.Range{Start: 7, End: -1}, "789"}, {objstore.Range{Start: 0, End: 0}, "0"}, {objstore.Range{Start: 0, End: -1}, "0123456789"}} {
			if got := read(t, "range/r", &tc.rng); string(got) != tc.want {
				t.Errorf("Get range %+v = %q, want %q", tc.rng, got, tc.want)
			}
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		if _, err := s.Stat(ctx, "missing/key"); !errors.Is(err, objstore.ErrNotFound) {
			t.Errorf("Stat missing: %v, want ErrNotFound", err)
		}
		if _, _, err := s.Get(ctx, "missing/key", nil); !errors.Is(err, objstore.ErrNotFound) {
			t.Errorf("Get missing: %v, want ErrNotFound", err)
		}
	})
	t.Run("List", func(t *testing.T) {
		for _, k := range []string{"list/2026-01-02/b", "list/2026-01-01/a", "list/2026-01-01/c", "listx/z"} {
			put(t, k, []byte(k), int64(len(k)))
		}
		got, err := s.List(ctx, "list/")
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
	})
	t.Run("Delete", func(t *testing.T) {
		put(t, "del/x", []byte("x"), 1)
		if err := s.Delete(ctx, "del/x"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Stat(ctx, "del/x"); !errors.Is(err, objstore.ErrNotFound) {
			t.Errorf("Stat after delete: %v", err)
		}
		if err := s.Delete(ctx, "del/x"); err != nil {
			t.Errorf("second Delete: %v, want nil", err)
		}
	})
	t.Run("Large streamed multipart", func(t *testing.T) {
		big := make([]byte, 12<<20+123)
		_, _ = rand.Read(big)
		info, err := s.Put(ctx, "big/blob", io.MultiReader(bytes.NewReader(big)), -1, "")
		if err != nil {
			t.Fatal(err)
		}
		if info.Size != int64(len(big)) {
			st, _ := s.Stat(ctx, "big/blob")
			if st.Size != int64(len(big)) {
				t.Errorf("size = %d, want %d", st.Size, len(big))
			}
		}
		if got := read(t, "big/blob", nil); !bytes.Equal(got, big) {
			t.Error("large object differs after round trip")
		}
	})
	t.Run("Ping", func(t *testing.T) {
		if err := s.Ping(ctx); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
}
