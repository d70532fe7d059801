package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/publish/gen"
)

// viewsState is a generated state whose host number at gets Views: the
// pro audience sees it without its sources.
type viewsState struct {
	ipmodel.State
	at int
}

func (s viewsState) Hosts(ctx context.Context, fn func(ipmodel.Record) error) error {
	i := 0
	return s.State.Hosts(ctx, func(r ipmodel.Record) error {
		if i++; i == s.at {
			pro := r
			pro.Sources = []string{"pro-only-view"}
			r.Views = &ipmodel.Views{}
			r.Views[ipmodel.AudiencePro] = &pro
		}
		return fn(r)
	})
}

func TestBuild_Mirror(t *testing.T) {
	tests := []struct {
		name  string
		state ipmodel.State
		same  bool // pro and enterprise rows the same (mirrored)
		// sortBuf: a small NDJSON sort buffer spills runs before the fork.
		sortBuf int
	}{
		{"no views", gen.New(3000, 7), true, 0},
		{"one record with views", viewsState{gen.New(3000, 7), 1500}, false, 0},
		{"views on the first host", viewsState{gen.New(3000, 7), 1}, false, 0},
		{"views after sort runs spilled", viewsState{gen.New(3000, 7), 2000}, false, 64 << 10},
		{"views on the last record", viewsState{gen.New(3000, 7), 3000}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			build := func(noMirror bool) (map[string]File, string) {
				dir := t.TempDir()
				m := &Manifest{SnapshotDate: "2026-11-23", BuildID: "b1"}
				files, err := Build(t.Context(), tt.state, dir, BuildOptions{RowGroupRows: 1000, noMirror: noMirror, sortBuf: tt.sortBuf}, m)
				if err != nil {
					t.Fatal(err)
				}
				byName := map[string]File{}
				for _, f := range files {
					byName[f.Name] = f
				}
				return byName, dir
			}
			got, dir := build(false)
			want, wantDir := build(true)
			if len(got) != len(want) {
				t.Fatalf("%d files, want %d", len(got), len(want))
			}
			for name, w := range want {
				g := got[name]
				if w.Format == FormatCSV && !tt.same {
					// A fork ends a deflate block in the pro CSV and
					// starts one in the enterprise CSV: other bytes, the
					// same rows (as gzip(1) reads them).
					if gz, wz := gunzipSHA(t, filepath.Join(dir, name)), gunzipSHA(t, filepath.Join(wantDir, name)); gz != wz {
						t.Errorf("%s: rows differ from the file built on its own", name)
					}
					g.Size, g.SHA256 = w.Size, w.SHA256
				}
				if !reflect.DeepEqual(g, w) {
					t.Errorf("%s: %+v\nwant (built on its own) %+v", name, g, w)
				}
			}
			proPQ, entPQ := got[AudienceFileName(FormatParquet, ipmodel.AudiencePro)], got[AudienceFileName(FormatParquet, ipmodel.AudienceEnterprise)]
			proND, entND := got[AudienceFileName(FormatNDJSON, ipmodel.AudiencePro)], got[AudienceFileName(FormatNDJSON, ipmodel.AudienceEnterprise)]
			proMM, entMM := got[AudienceFileName(FormatMMDB, ipmodel.AudiencePro)], got[AudienceFileName(FormatMMDB, ipmodel.AudienceEnterprise)]
			if freeMM := got[AudienceFileName(FormatMMDB, ipmodel.AudienceFree)]; (freeMM.SHA256 == proMM.SHA256) != tt.same {
				t.Errorf("free and pro MMDB the same: %v, want %v", freeMM.SHA256 == proMM.SHA256, tt.same)
			}
			if (proPQ.SHA256 == entPQ.SHA256) != tt.same || (proND.ContentSHA256 == entND.ContentSHA256) != tt.same || (proMM.SHA256 == entMM.SHA256) != tt.same {
				t.Errorf("pro and enterprise the same: parquet %v, ndjson %v, mmdb %v; want %v",
					proPQ.SHA256 == entPQ.SHA256, proND.ContentSHA256 == entND.ContentSHA256, proMM.SHA256 == entMM.SHA256, tt.same)
			}
			// The enterprise NDJSON names its own audience.
			f, err := os.Open(filepath.Join(dir, entND.Name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			zr, err := gzip.NewReader(f)
			if err != nil {
				t.Fatal(err)
			}
			if h, _ := ReadHeader(zr); h.Audience != "enterprise" {
				t.Errorf("enterprise NDJSON header %+v", h)
			}
			h := sha256.New()
			if _, err := io.Copy(h, zr); err != nil { // checks the gzip CRC
				t.Fatal(err)
			}
			if hex.EncodeToString(h.Sum(nil)) != entND.ContentSHA256 {
				t.Error("enterprise NDJSON lines do not match its content_sha256")
			}
		})
	}
}

// gunzipSHA is the SHA-256 of what gzip(1) decompresses from path.
func gunzipSHA(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("gzip", "-dc", path).Output()
	if err != nil {
		t.Fatalf("gzip -dc %s: %v", path, err)
	}
	h := sha256.Sum256(out)
	return hex.EncodeToString(h[:])
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// failingRows is a writer whose every Write fails.
type failingRows struct{}

func (failingRows) Write(*ipmodel.Record, netip.Prefix) error { return errors.New("disk full") }
func (failingRows) Close() error                              { return nil }
func (failingRows) Rows() int64                               { return 0 }

// A pro CSV that fails before or at the fork fails the enterprise CSV
// waiting on it instead of leaving it waiting.
func TestBuildOut_ForkProFailed(t *testing.T) {
	rec := item{rec: ipmodel.Record{IP: "192.0.2.1"}, pfx: netip.MustParsePrefix("192.0.2.1/32")}
	tests := []struct {
		name    string
		pro     func(t *testing.T) formatWriter
		batches [][]item
	}{
		{"fails at the fork", func(t *testing.T) formatWriter {
			w, err := newCSVWriter(failWriter{})
			if err != nil {
				t.Fatal(err)
			}
			return w
		}, [][]item{{rec, {}}}},
		{"failed before the fork", func(t *testing.T) formatWriter { return failingRows{} }, [][]item{{rec}, {{}, rec}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ent, err := newCSVWriter(io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			ent.tentative = true
			fk := &rowFork{done: make(chan struct{})}
			pro := &buildOut{format: FormatCSV, aud: ipmodel.AudiencePro, name: "pro", w: tt.pro(t), ch: make(chan []item, 4), fork: fk}
			eo := &buildOut{format: FormatCSV, aud: ipmodel.AudienceEnterprise, name: "enterprise", w: ent, ch: make(chan []item, 4), fork: fk, mirrorOf: pro}
			for _, b := range tt.batches {
				pro.ch <- b
				eo.ch <- b
			}
			close(pro.ch)
			close(eo.ch)
			proErr := make(chan error, 1)
			go func() { proErr <- pro.drain() }()
			if err := eo.drain(); err == nil || !strings.Contains(err.Error(), "the pro CSV failed") {
				t.Errorf("enterprise drain: %v, want the pro CSV's failure", err)
			}
			if err := <-proErr; err == nil {
				t.Error("pro drain: no error")
			}
		})
	}
}
