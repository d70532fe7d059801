package client

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/netintel/netintel/internal/testutil"
)

// BenchmarkClient_FileRoundTrip measures CreateFile + ReadFile of a 16 MiB
// file (encrypt, four chunked slices, download, decrypt) against the fake
// host on loopback. The baseline, run in the same benchmark, moves the
// same bytes with one plain POST and one plain GET to a loopback server
// that keeps them in memory; "x_baseline" is the ratio.
func BenchmarkClient_FileRoundTrip(b *testing.B) {
	const size = 16 << 20
	data := randomBytes(size, 9)

	var kept []byte
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			kept, _ = io.ReadAll(r.Body)
			return
		}
		_, _ = w.Write(kept)
	}))
	defer plain.Close()
	baseline := func() {
		resp, err := http.Post(plain.URL, "application/octet-stream", bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		resp, err = http.Get(plain.URL)
		if err != nil {
			b.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if len(got) != size {
			b.Fatal("baseline lost bytes")
		}
	}

	_, url := startFakeB(b)
	c := New(Options{Src: "bench"})
	var base, ours float64
	for b.Loop() {
		start := nowNano()
		baseline()
		base += float64(nowNano() - start)

		start = nowNano()
		l, err := c.CreateFile(b.Context(), url, FileMeta{Name: "bench.bin"}, data, SaveOptions{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		_, got, _, err := c.ReadFile(b.Context(), l, "", nil)
		if err != nil || len(got) != size {
			b.Fatalf("read back: %v", err)
		}
		ours += float64(nowNano() - start)
	}
	b.ReportMetric(ours/float64(b.N)/1e6, "ms/roundtrip")
	b.ReportMetric(base/float64(b.N)/1e6, "ms/baseline")
	b.ReportMetric(ours/base, "x_baseline")
	b.ReportMetric(2*float64(size)/(ours/float64(b.N)/1e9)/(1<<20), "MiB/s")
}

// BenchmarkKeys_EncryptFile is the crypto alone: AES-256-GCM over 16 MiB,
// against a baseline of copying the same bytes.
func BenchmarkKeys_EncryptFile(b *testing.B) {
	testutil.Micro(b)
	data := randomBytes(16<<20, 3)
	k := DeriveKeys("bench")
	var base, ours float64
	sink := make([]byte, len(data))
	for b.Loop() {
		start := nowNano()
		copy(sink, data)
		base += float64(nowNano() - start)
		start = nowNano()
		if _, err := k.EncryptFile(FileMeta{Name: "x"}, data); err != nil {
			b.Fatal(err)
		}
		ours += float64(nowNano() - start)
	}
	b.ReportMetric(float64(len(data))/(ours/float64(b.N)/1e9)/(1<<20), "MiB/s")
	b.ReportMetric(ours/base, "x_baseline")
}
