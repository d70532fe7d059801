package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/publish/gen"
)

// Environment of BenchmarkSnapshotDelta's child processes.
const (
	deltaBenchChildEnv  = "NETINTEL_DELTA_BENCH_CHILD" // base, unsorted, sorted or delta
	deltaBenchDirEnv    = "NETINTEL_DELTA_BENCH_DIR"   // where the base's NDJSON files are
	deltaBenchRoundsEnv = "NETINTEL_DELTA_BENCH_ROUNDS"
)

type deltaChildResult struct {
	Seconds float64 `json:"seconds"`
	Files   []File  `json:"files"`
	Note    string  `json:"note"`
}

// TestSnapshotDeltaBenchChild is the child process of
// BenchmarkSnapshotDelta: it does one measured job and prints its result
// as JSON. It does nothing in a normal test run.
func TestSnapshotDeltaBenchChild(t *testing.T) {
	job := os.Getenv(deltaBenchChildEnv)
	if job == "" {
		t.Skip("only run as BenchmarkSnapshotDelta's child process")
	}
	n, err := strconv.Atoi(os.Getenv(benchSizeEnv))
	if err != nil {
		t.Fatal(err)
	}
	baseDir := os.Getenv(deltaBenchDirEnv)
	g := gen.New(n, 42)
	next := &gen.Churned{Base: g, Every: 300} // 1 % of the rows churn
	ctx := context.Background()
	start := time.Now()
	var res deltaChildResult
	switch job {
	case "base":
		// Yesterday's NDJSON (what the delta is computed against).
		m := &Manifest{SnapshotDate: "2026-11-22", BuildID: "base"}
		files, err := Build(ctx, g, baseDir, BuildOptions{Formats: []string{FormatNDJSON}}, m)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(files)
		if err := os.WriteFile(filepath.Join(baseDir, "files.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		res.Files = files
	default:
		// Today's whole build (every format, every audience).
		o := BuildOptions{BuildTime: start}
		switch job {
		case "unsorted":
			o.unsorted = true // the build before deltas
		case "sorted":
		case "delta":
			b, err := os.ReadFile(filepath.Join(baseDir, "files.json"))
			if err != nil {
				t.Fatal(err)
			}
			var files []File
			if err := json.Unmarshal(b, &files); err != nil {
				t.Fatal(err)
			}
			o.DeltaBase = &DeltaBase{SnapshotDate: "2026-11-22"}
			o.DeltaSources = map[ipmodel.Audience]DeltaSource{}
			for _, f := range files {
				a, _ := ipmodel.ParseAudience(f.Audience)
				o.DeltaSources[a] = DeltaSource{File: f, Open: func(context.Context) (io.ReadCloser, error) { return os.Open(filepath.Join(baseDir, f.Name)) }}
			}
		default:
			t.Fatalf("unknown job %q", job)
		}
		m := &Manifest{SnapshotDate: "2026-11-23"}
		files, err := Build(ctx, next, t.TempDir(), o, m)
		if err != nil {
			t.Fatal(err)
		}
		if job == "delta" && m.DeltaBase == nil {
			t.Fatalf("no delta: %s", m.DeltaNote)
		}
		res.Files, res.Note = files, m.DeltaNote
	}
	res.Seconds = time.Since(start).Seconds()
	b, _ := json.Marshal(res)
	fmt.Printf("BENCHRESULT %s\n", b)
}

// BenchmarkSnapshotDelta measures what the delta costs: the whole build
// (every format of every audience) of a state of 1,000,000 addresses
// (NETINTEL_SNAPSHOT_BENCH_ADDRESSES overrides) with 1 % churn since the
// previous day, with the delta against that day's NDJSON ("delta"),
// against the same build without a delta ("sorted": the NDJSON sorted by
// key all the same) and the build as it was before deltas ("unsorted",
// the baseline: NDJSON in the state's order, no sort). Each job runs in
// a child process; NETINTEL_DELTA_BENCH_ROUNDS (default 1) repeats the
// three, alternating, and the fastest of each counts. Reported: the
// times, the ratio to the baseline, and the delta files' sizes against
// the full files'.
func BenchmarkSnapshotDelta(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv(benchSizeEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	rounds := 1
	if v := os.Getenv(deltaBenchRoundsEnv); v != "" {
		rounds, _ = strconv.Atoi(v)
	}
	dir := b.TempDir()
	child := func(job string) (deltaChildResult, float64, float64) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSnapshotDeltaBenchChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), deltaBenchChildEnv+"="+job, benchSizeEnv+"="+strconv.Itoa(n), deltaBenchDirEnv+"="+dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s: %v\n%s", job, err, out.String())
		}
		var res deltaChildResult
		for _, line := range strings.Split(out.String(), "\n") {
			if rest, ok := strings.CutPrefix(line, "BENCHRESULT "); ok {
				if err := json.Unmarshal([]byte(rest), &res); err != nil {
					b.Fatal(err)
				}
			}
		}
		if res.Seconds == 0 {
			b.Fatalf("%s: no result\n%s", job, out.String())
		}
		var rss, cpu float64
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = float64(ru.Maxrss) / 1024
			cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		}
		fmt.Fprintf(os.Stderr, "delta bench: %s done in %.1fs (cpu %.1fs, %.0f MiB)\n", job, res.Seconds, cpu, rss)
		return res, cpu, rss
	}
	jobs := []string{"unsorted", "sorted", "delta"}
	best := map[string]deltaChildResult{}
	cpu, rss := map[string]float64{}, map[string]float64{}
	for i := 0; i < b.N; i++ {
		child("base")
		for r := 0; r < max(rounds, 1); r++ {
			for _, job := range jobs {
				res, c, m := child(job)
				if old, ok := best[job]; !ok || res.Seconds < old.Seconds {
					best[job], cpu[job] = res, c
				}
				rss[job] = max(rss[job], m)
			}
		}
	}
	base := best["unsorted"]
	b.Logf("%d addresses, 1%% churn, fastest of %d round(s)", n, max(rounds, 1))
	for _, job := range jobs {
		r := best[job]
		b.ReportMetric(r.Seconds, "s/"+job)
		b.ReportMetric(cpu[job], "cpu-s/"+job)
		b.Logf("%-8s %7.2fs wall %7.2fs CPU  peak RSS %5.0f MiB  %.3fx the build before deltas", job, r.Seconds, cpu[job], rss[job], r.Seconds/base.Seconds)
	}
	b.ReportMetric(best["delta"].Seconds/base.Seconds, "x-build/delta")
	b.ReportMetric(best["delta"].Seconds/best["sorted"].Seconds, "x-sorted/delta")
	size := map[string]int64{}
	for _, f := range best["delta"].Files {
		if f.Audience == ipmodel.AudienceEnterprise.String() {
			size[f.Format] = f.Size
			if f.Ops != nil {
				b.Logf("%s: %d rows (add %d, change %d, remove %d), %.1f MiB", f.Name, f.Rows, f.Ops.Add, f.Ops.Change, f.Ops.Remove, float64(f.Size)/(1<<20))
			}
		}
	}
	b.ReportMetric(float64(size[FormatNDJSONDelta])/float64(size[FormatNDJSON]), "size-ratio/ndjson-delta")
	b.ReportMetric(float64(size[FormatParquetDelta])/float64(size[FormatParquet]), "size-ratio/parquet-delta")
	b.Logf("enterprise NDJSON %.1f MiB, its delta %.2f MiB (%.2f%%); Parquet %.1f MiB, its delta %.2f MiB (%.2f%%)",
		float64(size[FormatNDJSON])/(1<<20), float64(size[FormatNDJSONDelta])/(1<<20), 100*float64(size[FormatNDJSONDelta])/float64(size[FormatNDJSON]),
		float64(size[FormatParquet])/(1<<20), float64(size[FormatParquetDelta])/(1<<20), 100*float64(size[FormatParquetDelta])/float64(size[FormatParquet]))
}
