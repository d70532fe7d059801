package objstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
)

const benchSize = 8 << 20

// BenchmarkPut puts an 8 MiB object into each backend, beside the baseline
// of a plain os.WriteFile + fsync of the same bytes in the same run.
func BenchmarkPut(b *testing.B) {
	data := make([]byte, benchSize)
	_, _ = rand.Read(data)
	ctx := context.Background()
	var baseline float64
	b.Run("baseline-write-fsync", func(b *testing.B) {
		dir := b.TempDir()
		b.SetBytes(benchSize)
		for i := 0; i < b.N; i++ {
			f, err := os.Create(filepath.Join(dir, "x"))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Write(data); err != nil {
				b.Fatal(err)
			}
			_ = f.Sync()
			f.Close()
		}
		baseline = b.Elapsed().Seconds() / float64(b.N)
	})
	run := func(name string, s objstore.Store) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(benchSize)
			for i := 0; i < b.N; i++ {
				if _, err := s.Put(ctx, "bench/obj", bytes.NewReader(data), benchSize, ""); err != nil {
					b.Fatal(err)
				}
			}
			if baseline > 0 {
				per := b.Elapsed().Seconds() / float64(b.N)
				b.ReportMetric(baseline/per, "x-baseline-speed")
			}
		})
	}
	f, _ := objstore.NewFolder(b.TempDir())
	run("folder", f)
	srv := testutil.StartS3(b)
	s3, err := objstore.NewS3(ctx, srv.Config().S3)
	if err != nil {
		b.Fatal(err)
	}
	run("s3-loopback", s3)
}
