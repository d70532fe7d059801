package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish"
	"github.com/netintel/netintel/publish/gen"
)

func TestDatasetApplyCommand(t *testing.T) {
	st, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default().Publish
	cfg.WorkDir = t.TempDir()
	cfg.Formats = []string{"ndjson"}
	pub := publish.New(cfg, st, nil, testutil.Logger(t))
	base := gen.New(500, 4)
	dir := t.TempDir()
	get := func(m *publish.Manifest, format, as string) string {
		f, ok := m.FileFor(format, ipmodel.AudiencePro)
		if !ok {
			t.Fatalf("no %s in %s", format, m.SnapshotDate)
		}
		p := filepath.Join(dir, as)
		fh, _ := os.Create(p)
		defer fh.Close()
		if err := publish.Download(t.Context(), st, f, fh); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var ms []*publish.Manifest
	for i, s := range []ipmodel.State{base, &gen.Churned{Base: base, Every: 50}, &gen.Churned{Base: base, Every: 20}} {
		day := time.Date(2026, 11, 21+i, 3, 0, 0, 0, time.UTC)
		pub.Now = func() time.Time { return day }
		res, err := pub.Run(t.Context(), s, day.Format(publish.DateFormat))
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, res.Manifest)
	}
	full1 := get(ms[0], publish.FormatNDJSON, "day1.ndjson.gz")
	full2 := get(ms[1], publish.FormatNDJSON, "day2.ndjson.gz")
	full3 := get(ms[2], publish.FormatNDJSON, "day3.ndjson.gz")
	delta2 := get(ms[1], publish.FormatNDJSONDelta, "delta2.ndjson.gz")
	delta3 := get(ms[2], publish.FormatNDJSONDelta, "delta3.ndjson.gz")
	apply := func(args ...string) (string, error) {
		var o, e bytes.Buffer
		err := run(t.Context(), &Env{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}, append([]string{"dataset", "apply"}, args...))
		return o.String(), err
	}
	lines := func(p string) []byte {
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		zr, err := gzip.NewReader(fh)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(zr)
		return b
	}

	// A local copy kept current with deltas alone, applied in place.
	local := filepath.Join(dir, "local.ndjson.gz")
	if err := os.WriteFile(local, mustRead(t, full1), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := apply("--base", local, "--delta", delta2, "--out", local)
	if err != nil || !strings.Contains(out, "2026-11-22") {
		t.Fatalf("apply day 2: %v %s", err, out)
	}
	if !bytes.Equal(lines(local), lines(full2)) {
		t.Fatal("day 1 + delta 2 is not day 2's NDJSON")
	}
	if _, err := apply("--base", local, "--delta", delta3, "--out", local); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(lines(local), lines(full3)) {
		t.Fatal("day 2 + delta 3 is not day 3's NDJSON")
	}

	// The wrong base: one line naming both dates; nothing written, and an
	// existing --out is left as it was.
	before := mustRead(t, full2)
	_, err = apply("--base", full1, "--delta", delta3, "--out", full2)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "2026-11-22") || !strings.Contains(err.Error(), "2026-11-21") {
		t.Fatalf("wrong base: %v", err)
	}
	if !bytes.Equal(mustRead(t, full2), before) {
		t.Fatal("the wrong base changed --out")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 6 {
		t.Fatalf("files left: %v", ents)
	}
	// A missing flag is named.
	if _, err := apply("--base", full1, "--out", local); err == nil || !strings.Contains(err.Error(), "--delta is required") {
		t.Fatalf("missing --delta: %v", err)
	}
	// A full file given as the delta.
	if _, err := apply("--base", full1, "--delta", full2, "--out", local); err == nil || !strings.Contains(err.Error(), "not a netintel delta") {
		t.Fatalf("full file as delta: %v", err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
