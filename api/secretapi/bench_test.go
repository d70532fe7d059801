package secretapi_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkTextRoundTrip: save a text secret and read it back over HTTP,
// on JetStream file storage, beside the same HTTP round trips against a
// handler that only decodes and answers JSON (the baseline).
func BenchmarkTextRoundTrip(b *testing.B) {
	e := newEnv(b, envOpts{})
	const trips = 300
	rk := randomKey()
	key, token, hash := derive(rk)
	msg := encryptText(key, "a secret of moderate length, like a password or an API key")

	base := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v map[string]any
		_ = json.NewDecoder(r.Body).Decode(&v)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok","newId":"AAAAAAAAAAAAAAAAAAAAAA"}`))
	}))
	defer base.Close()
	bc := &client{base: base.URL, hc: e.c.hc}

	for b.Loop() {
		start := time.Now()
		for range trips {
			r := e.c.postJSON(b, "saveSecret", map[string]any{"secretMessage": msg, "readTokenHash": hash, "v": 3})
			g := e.c.postJSON(b, "get", map[string]string{"id": *r.NewID, "hashedKey": token})
			if g.Status != "ok" {
				b.Fatalf("get: %s", g.Raw)
			}
		}
		secs := time.Since(start).Seconds()
		start = time.Now()
		for range trips {
			bc.postJSON(b, "saveSecret", map[string]any{"secretMessage": msg, "readTokenHash": hash, "v": 3})
			bc.postJSON(b, "get", map[string]string{"id": "AAAAAAAAAAAAAAAAAAAAAA", "hashedKey": token})
		}
		baseSecs := time.Since(start).Seconds()
		b.ReportMetric(trips/secs, "roundtrips/s")
		b.ReportMetric(trips/baseSecs, "baseline-roundtrips/s")
		b.ReportMetric(baseSecs/secs, "ratio")
	}
}

// BenchmarkChunkedFile50MiB: a 50 MiB encrypted file uploaded in 4 MiB
// slices and downloaded with getFile, beside a plain copy of a 50 MiB
// file (write, copy to a second file, fsync) in the same run. Each is run
// three times and the best is reported, since the machine is shared.
func BenchmarkChunkedFile50MiB(b *testing.B) {
	e := newEnv(b, envOpts{})
	const size = 50 << 20
	blob := make([]byte, size)
	_, _ = rand.Read(blob)
	const mb = float64(size) / 1e6
	best := func(cur, secs float64) float64 { return max(cur, mb/secs) }
	for b.Loop() {
		var up, down, cp float64
		for range 3 {
			dir := b.TempDir()
			start := time.Now()
			src := filepath.Join(dir, "src")
			if err := os.WriteFile(src, blob, 0o600); err != nil {
				b.Fatal(err)
			}
			in, _ := os.Open(src)
			out, _ := os.Create(filepath.Join(dir, "dst"))
			if _, err := io.Copy(out, in); err != nil {
				b.Fatal(err)
			}
			_ = out.Sync()
			in.Close()
			out.Close()
			cp = best(cp, time.Since(start).Seconds())

			f := encFile{rk: randomKey()}
			_, _, f.hash = derive(f.rk)
			f.blob = blob
			c := chunked{u: uploadID(), f: f, slices: cut(blob), fields: fileFields(f.hash, saveOpts{duration: 600})}
			start = time.Now()
			var id string
			for i := range c.slices {
				r := c.send(b, e, i)
				if r.NewID != nil {
					id = *r.NewID
				}
			}
			up = best(up, time.Since(start).Seconds())
			_, token, _ := derive(f.rk)
			start = time.Now()
			g := e.c.postJSON(b, "getFile", map[string]string{"id": id, "hashedKey": token})
			down = best(down, time.Since(start).Seconds())
			if !bytes.Equal(g.Body, blob) {
				b.Fatal("downloaded file differs")
			}
		}
		b.ReportMetric(up, "upload-MB/s")
		b.ReportMetric(down, "download-MB/s")
		b.ReportMetric(cp, "filecopy-MB/s")
		b.ReportMetric(up/cp, "upload-ratio")
		b.ReportMetric(down/cp, "download-ratio")
	}
}
