package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish/gen"
)

// Environment of the benchmark's child processes.
const (
	benchChildEnv = "NETINTEL_SNAPSHOT_BENCH_CHILD" // "baseline", a format, or "all"
	benchSizeEnv  = "NETINTEL_SNAPSHOT_BENCH_ADDRESSES"
	benchJobsEnv  = "NETINTEL_SNAPSHOT_BENCH_JOBS" // comma-separated subset of the jobs
)

type childResult struct {
	Seconds float64 `json:"seconds"`
	Rows    int64   `json:"rows"`
	Bytes   int64   `json:"bytes"`
}

// TestSnapshotBenchChild is the child process of BenchmarkSnapshot: it
// does one measured job and prints its result as JSON. It does nothing in
// a normal test run.
func TestSnapshotBenchChild(t *testing.T) {
	job := os.Getenv(benchChildEnv)
	if job == "" {
		t.Skip("only run as BenchmarkSnapshot's child process")
	}
	n, err := strconv.Atoi(os.Getenv(benchSizeEnv))
	if err != nil {
		t.Fatal(err)
	}
	g := gen.New(n, 42)
	ctx := context.Background()
	start := time.Now()
	var res childResult
	switch job {
	case "baseline":
		// Reading the generated state alone: what every job below pays too.
		count := func(r ipmodel.Record) error { res.Rows++; res.Bytes += int64(len(r.Assets)); return nil }
		if err := g.Ranges(ctx, count); err != nil {
			t.Fatal(err)
		}
		if err := g.Hosts(ctx, count); err != nil {
			t.Fatal(err)
		}
	case "all":
		// The whole run: four files built, uploaded to a folder store and
		// verified, SHA256SUMS, manifest, latest.
		st, err := objstore.NewFolder(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		cfg := config.Default().Publish
		cfg.WorkDir = t.TempDir()
		r, err := New(cfg, st, nil, testutil.Logger(t)).Run(ctx, g, "2026-11-23")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range r.Manifest.Files {
			res.Rows = f.Rows
			res.Bytes += f.Size
		}
	default:
		m := &Manifest{SnapshotDate: "2026-11-23"}
		o := BuildOptions{Formats: []string{job}, BuildTime: start}
		if job == "mmdb-ref" {
			// The MMDBs with mmdbwriter's in-memory tree (the writer
			// publish used before issue 33), in two passes as it was.
			o.Formats = []string{FormatMMDB}
			o.newMMDB = func(w io.Writer, dir string, t time.Time) (formatWriter, error) { return newRefMMDBWriter(w, dir, t) }
		}
		files, err := Build(ctx, g, t.TempDir(), o, m)
		if err != nil {
			t.Fatal(err)
		}
		res.Rows, res.Bytes = files[0].Rows, files[0].Size
	}
	res.Seconds = time.Since(start).Seconds()
	b, _ := json.Marshal(res)
	fmt.Printf("BENCHRESULT %s\n", b)
}

// BenchmarkSnapshot builds the snapshot of a generated state of 1,000,000
// addresses (NETINTEL_SNAPSHOT_BENCH_ADDRESSES overrides) in child
// processes, one per format and one for the whole publish run, and reports
// wall time and peak RSS (the child's getrusage ru_maxrss) of each. The
// baseline is a child that only reads the generated state; mmdb-ref
// builds the MMDBs with mmdbwriter's in-memory tree (the reference the
// mmdb job is compared with). NETINTEL_SNAPSHOT_BENCH_JOBS runs a subset
// (e.g. "mmdb,all" for 10,000,000 addresses, where mmdb-ref needs more
// than 16 GiB).
func BenchmarkSnapshot(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv(benchSizeEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	jobs := slices.Concat([]string{"baseline"}, Formats, []string{"mmdb-ref", "all"})
	if v := os.Getenv(benchJobsEnv); v != "" {
		jobs = append([]string{"baseline"}, slices.DeleteFunc(strings.Split(v, ","), func(j string) bool { return j == "baseline" })...)
	}
	results := map[string]childResult{}
	rss := map[string]float64{}
	cpu := map[string]float64{}
	for i := 0; i < b.N; i++ {
		for _, job := range jobs {
			cmd := exec.Command(os.Args[0], "-test.run=^TestSnapshotBenchChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), benchChildEnv+"="+job, benchSizeEnv+"="+strconv.Itoa(n))
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				b.Fatalf("%s: %v\n%s", job, err, out.String())
			}
			var res childResult
			for _, line := range strings.Split(out.String(), "\n") {
				if rest, ok := strings.CutPrefix(line, "BENCHRESULT "); ok {
					if err := json.Unmarshal([]byte(rest), &res); err != nil {
						b.Fatal(err)
					}
				}
			}
			if res.Rows == 0 {
				b.Fatalf("%s: no result\n%s", job, out.String())
			}
			results[job] = res
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				rss[job] = float64(ru.Maxrss) / 1024 // KiB -> MiB
				cpu[job] = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
			}
			fmt.Fprintf(os.Stderr, "snapshot bench: %s done in %.1fs (%.1fs CPU, peak RSS %.0f MiB)\n", job, res.Seconds, cpu[job], rss[job])
		}
	}
	base := results["baseline"]
	b.Logf("%d addresses (%d records incl. ranges); baseline (read state only) %.2fs wall, %.2fs CPU, %.0f MiB", n, base.Rows, base.Seconds, cpu["baseline"], rss["baseline"])
	for _, job := range jobs[1:] {
		r := results[job]
		b.ReportMetric(r.Seconds, "s/"+job)
		b.ReportMetric(cpu[job], "cpu-s/"+job)
		b.ReportMetric(rss[job], "MiB-peak-rss/"+job)
		b.Logf("%-8s %7.2fs wall  %7.2fs CPU  peak RSS %6.0f MiB  %6.1f MiB on disk  %.1fx baseline time", job, r.Seconds, cpu[job], rss[job], float64(r.Bytes)/(1<<20), r.Seconds/base.Seconds)
	}
	b.ReportMetric(base.Seconds, "s/baseline")
	if r, ok := results["all"]; ok {
		b.ReportMetric(r.Seconds/base.Seconds, "x-baseline/all")
	}
	if r, ok := results["mmdb-ref"]; ok && results["mmdb"].Seconds > 0 && rss["mmdb"] > 0 {
		b.ReportMetric(r.Seconds/results["mmdb"].Seconds, "x-time-ref/mmdb")
		b.ReportMetric(rss["mmdb-ref"]/rss["mmdb"], "x-rss-ref/mmdb")
		b.Logf("mmdb (streaming tree) vs mmdb-ref (mmdbwriter): %.2fx faster, %.2fx less peak RSS", r.Seconds/results["mmdb"].Seconds, rss["mmdb-ref"]/rss["mmdb"])
	}
}
