package objstore_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/objstore/objstoretest"
	"github.com/netintel/netintel/internal/testutil"
)

func TestFolder_Conformance(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		s, err := objstore.NewFolder(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestS3_Conformance(t *testing.T) {
	srv := testutil.StartS3(t)
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		cfg := srv.Config().S3
		cfg.Bucket = srv.NewBucket(t)
		s, err := objstore.NewS3(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestNewS3_BadInput(t *testing.T) {
	srv := testutil.StartS3(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		mutate func(*testutil.S3)
		want   string
	}{
		{"wrong secret", func(s *testutil.S3) { s.SecretKey = "wrong" }, "credentials refused"},
		{"missing bucket", func(s *testutil.S3) { s.Bucket = "nope" }, `bucket "nope" does not exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *srv
			tc.mutate(&c)
			_, err := objstore.NewS3(ctx, c.Config().S3)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), srv.SecretKey) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error leaks the secret or spans lines: %q", err)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		c := srv.Config().S3
		c.Endpoint = "127.0.0.1:1"
		_, err := objstore.NewS3(ctx, c)
		if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestFolder_RejectsEscapingKeys(t *testing.T) {
	s, _ := objstore.NewFolder(t.TempDir())
	for _, k := range []string{"../x", "/abs", "a//b", "a/../../b", ""} {
		if _, err := s.Put(context.Background(), k, strings.NewReader("x"), 1, ""); err == nil {
			t.Errorf("Put(%q) accepted", k)
		}
	}
}

// A Put whose object another caller deletes right after it lands still
// succeeds and describes what it wrote: the upload of a secret's slices
// sends the same slice twice at once, and the request that finishes the
// upload deletes the slices while the other is still in Put (a clean-clone
// CI run answered that request 500 "object not found").
func TestFolder_PutRacingDelete(t *testing.T) {
	f, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	body := []byte("slice bytes")
	for i := range 500 {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 20 {
				_ = f.Delete(ctx, "u/slice")
			}
		}()
		info, err := f.Put(ctx, "u/slice", bytes.NewReader(body), int64(len(body)), "")
		<-done
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		if info.Key != "u/slice" || info.Size != int64(len(body)) || info.ETag == "" || info.ModTime.IsZero() {
			t.Fatalf("put %d: info %+v", i, info)
		}
	}
}

// A process that dies in the middle of a Put leaves its temp file behind
// (List never shows it). Opening the store, and listing past it, removes
// those older than TempGrace, with the folders they leave empty; a temp
// file written to recently may be a live Put and stays.
func TestFolder_SweepsStaleTempFiles(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-objstore.TempGrace - time.Minute)
	leftover := func(rel string, mtime time.Time) string {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, 1<<20), 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	exists := func(p string) bool {
		_, err := os.Stat(p)
		return err == nil
	}
	crashed := leftover("snapshots/2026-11-23/b1/.tmp-1234", old)
	live := leftover("uploads/.tmp-5678", time.Now())
	f, err := objstore.NewFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if exists(crashed) || exists(filepath.Join(dir, "snapshots")) {
		t.Fatalf("the stale temp file or its empty folders are still there")
	}
	if !exists(live) {
		t.Fatalf("a fresh temp file (maybe a live Put) was removed")
	}

	// The store stays open; a writer in another process dies later.
	if _, err := f.Put(t.Context(), "snapshots/latest", strings.NewReader("{}"), 2, "application/json"); err != nil {
		t.Fatal(err)
	}
	later := leftover("snapshots/2026-11-24/b2/.tmp-9999", old)
	objs, err := f.List(t.Context(), "snapshots/")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].Key != "snapshots/latest" {
		t.Fatalf("list = %+v", objs)
	}
	if exists(later) || exists(filepath.Join(dir, "snapshots", "2026-11-24")) {
		t.Fatal("List left the stale temp file or its empty folders")
	}
	if !exists(live) {
		t.Fatal("a fresh temp file was removed")
	}
}
