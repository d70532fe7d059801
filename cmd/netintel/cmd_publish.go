package main

import (
	"context"
	"fmt"

	"github.com/netintel/netintel/publish"
)

func init() {
	register(&command{name: "publish", summary: "build and publish the daily IP snapshot now (CSV, NDJSON, Parquet, MMDB)", run: cmdPublish})
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
		return fmt.Errorf("publish: unexpected argument %q", fs.Arg(0))
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
	res, err := publishSnapshot(ctx, s, *date)
	if err != nil {
		return err
	}
	m := res.Manifest
	fmt.Fprintf(env.Stdout, "published %s: %d hosts, %d ranges, %d skipped\n", m.Key, m.Hosts, m.Ranges, m.Skipped)
	for _, f := range m.Files {
		fmt.Fprintf(env.Stdout, "  %-13s %s  %d bytes  %d rows  sha256 %s\n", f.Format, f.Key, f.Size, f.Rows, f.SHA256)
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
