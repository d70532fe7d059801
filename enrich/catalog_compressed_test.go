package enrich

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/netintel/netintel/internal/config"
)

func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstdBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	w, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	return w.EncodeAll(b, nil)
}

// The real sample catalogs, compressed as their publishers ship them
// (NVD .json.gz, EPSS .csv.gz) or otherwise (KEV as zstd, an NVD record as
// zstd), from files and over HTTP, load exactly as the plain files do.
func TestLoadCatalog_Compressed(t *testing.T) {
	want := sampleCatalog(t)
	dir := t.TempDir()
	nvdDir := filepath.Join(dir, "nvd")
	if err := os.Mkdir(nvdDir, 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../samples/cve/nvd/*.json")
	if err != nil || len(files) < 2 {
		t.Fatalf("nvd samples: %v %v", files, err)
	}
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name, data := filepath.Base(f)+".gz", gzipBytes(t, b)
		if i%2 == 1 {
			name, data = filepath.Base(f)+".zst", zstdBytes(t, b)
		}
		if err := os.WriteFile(filepath.Join(nvdDir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	kev := zstdBytes(t, read("../samples/cve/kev.json"))
	epss := gzipBytes(t, read("../samples/cve/epss.csv"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/epss_scores-current.csv.gz":
			w.Write(epss)
		case "/kev":
			w.Write(kev)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	kevFile := filepath.Join(dir, "kev.json") // compressed, though its name says not
	if err := os.WriteFile(kevFile, kev, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]config.Catalog{
		"files": {NVD: []string{nvdDir}, KEV: kevFile, EPSS: writeTemp(t, dir, "epss.csv.gz", epss), EOL: "../samples/cve/eol.yaml", FetchTimeout: time.Minute},
		"http":  {NVD: []string{nvdDir}, KEV: srv.URL + "/kev", EPSS: srv.URL + "/epss_scores-current.csv.gz", EOL: "../samples/cve/eol.yaml", FetchTimeout: time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := LoadCatalog(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.cves) != len(files) || !reflect.DeepEqual(got.kev, want.kev) || !reflect.DeepEqual(got.epss, want.epss) || got.EPSSModel != want.EPSSModel {
				t.Errorf("cves %d/%d kev %d/%d epss %d/%d model %q/%q", len(got.cves), len(want.cves), len(got.kev), len(want.kev), len(got.epss), len(want.epss), got.EPSSModel, want.EPSSModel)
			}
			if !reflect.DeepEqual(got.byProduct, want.byProduct) {
				t.Error("NVD index differs from the plain files'")
			}
		})
	}
	// A truncated EPSS download is an error naming the cut, not a short catalog.
	cut := writeTemp(t, dir, "cut.csv.gz", epss[:len(epss)/2])
	_, err = LoadCatalog(t.Context(), config.Catalog{EPSS: cut, FetchTimeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated EPSS: %v", err)
	}
}

func writeTemp(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
