package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/publish"
)

// publishCommands returns the command of this file, for commandList.
func publishCommands() []*command {
	return []*command{
		&command{name: "publish", summary: "build and publish the daily IP snapshot now (CSV, NDJSON, Parquet, MMDB)",
			usage: []string{"publish [--date YYYY-MM-DD] [--data-dir DIR | --nats URL]"},
			desc: `Build the IP snapshot from the current state and publish it (CSV, NDJSON,
	Parquet, MMDB and the manifest) to the object store, as the daily snapshot
	job does. A bar on a terminal (plain lines on a pipe) shows the state
	records read against the records in the bucket, with the rate and the time
	left; the closing lines list each file with its human-readable size, rows
	and checksum, and the time and rate of the whole build.`,
			examples: []string{"netintel publish --data-dir data", "netintel publish --config pipeline.yaml --nats nats://nats:4222 --date 2026-11-01"},
			run:      cmdPublish},
	}
}

func cmdPublish(ctx context.Context, env *Env, args []string) error {
	var cf commonFlags
	fs := newFlags(env, "publish")
	cf.add(fs)
	date := fs.String("date", "", "snapshot date YYYY-MM-DD (default: today, UTC)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("publish: unexpected argument %q", fs.Arg(0))}
	}
	if *date != "" {
		if _, err := publish.ParseDate(*date); err != nil {
			return fmt.Errorf("--date: %w", err)
		}
	}
	s, err := openSystem(ctx, env, &cf, roleOpts{ensure: true, store: true})
	if err != nil {
		return err
	}
	defer s.close()
	if s.IPState != nil {
		// Count the records the build reads against the bucket's keys.
		var total int64 = -1
		if st, ok := s.IPState.(*enrich.Store); ok {
			if n, err := st.Records(ctx); err == nil {
				total = int64(n)
			}
		}
		cs := &countingState{State: s.IPState, m: newMeter(env, "publish: state records", "records", total)}
		s.IPState = cs
	}
	start := time.Now()
	res, err := publishSnapshot(ctx, s, *date)
	if cs, ok := s.IPState.(*countingState); ok {
		cs.m.set(cs.n.Load(), cs.n.Load())
		cs.m.done()
	}
	if err != nil {
		return err
	}
	m := res.Manifest
	var size int64
	for _, f := range m.Files {
		size += f.Size
	}
	el := time.Since(start)
	fmt.Fprintf(env.Stdout, "published %s: %d hosts, %d ranges, %d skipped, %d files, %s in %s (%.1f records/s)\n", m.Key, m.Hosts, m.Ranges, m.Skipped,
		len(m.Files), humanBytes(size), seconds(el), float64(m.Hosts+m.Ranges)/max(el.Seconds(), 1e-3))
	for _, f := range m.Files {
		fmt.Fprintf(env.Stdout, "  %-13s %s  %s  %d rows  sha256 %s\n", f.Format, f.Key, humanBytes(f.Size), f.Rows, f.SHA256)
	}
	if b := m.DeltaBase; b != nil {
		fmt.Fprintf(env.Stdout, "delta against %s build %s (%d days without a snapshot between)\n", b.SnapshotDate, b.BuildID, b.GapDays)
	}
	if m.DeltaNote != "" {
		fmt.Fprintf(env.Stdout, "delta: %s\n", m.DeltaNote)
	}
	if res.Latest {
		fmt.Fprintf(env.Stdout, "%s -> %s\n", publish.LatestKey, m.SnapshotDate)
	} else {
		fmt.Fprintf(env.Stdout, "%s unchanged (a newer snapshot is latest)\n", publish.LatestKey)
	}
	for _, d := range res.Pruned {
		fmt.Fprintf(env.Stdout, "pruned %s\n", d)
	}
	for _, b := range res.PrunedBuilds {
		fmt.Fprintf(env.Stdout, "pruned build %s\n", b)
	}
	return nil
}

// countingState counts the records a snapshot build reads, for its meter.
type countingState struct {
	ipmodel.State
	m *meter
	n atomic.Int64
}

func (c *countingState) count(fn func(ipmodel.Record) error) func(ipmodel.Record) error {
	return func(r ipmodel.Record) error {
		if n := c.n.Add(1); n%256 == 0 {
			c.m.set(n, 0)
		}
		return fn(r)
	}
}

// Hosts counts the host records as they are read.
func (c *countingState) Hosts(ctx context.Context, fn func(ipmodel.Record) error) error {
	return c.State.Hosts(ctx, c.count(fn))
}

// Ranges counts the range records as they are read.
func (c *countingState) Ranges(ctx context.Context, fn func(ipmodel.Record) error) error {
	return c.State.Ranges(ctx, c.count(fn))
}
