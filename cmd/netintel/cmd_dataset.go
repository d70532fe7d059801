package main

import (
	"context"
	"fmt"

	"github.com/netintel/netintel/publish"
)

// datasetCommands returns the command of this file, for commandList.
func datasetCommands() []*command {
	return []*command{
		&command{name: "dataset", summary: "work with downloaded snapshot files: apply a delta to a full NDJSON file (apply)",
			usage: []string{"dataset apply --base FILE --delta FILE --out FILE"},
			desc: `Apply a delta NDJSON file (ipintel-delta*.ndjson.gz) to the full NDJSON
	file of the snapshot it is against (ipintel*.ndjson.gz of delta_base) and
	write the new snapshot's full NDJSON file: the same lines in the same order,
	checked against the SHA-256 of its lines that the delta carries. A base that
	is not the delta's base is refused, naming both snapshots, and nothing is
	written (docs/snapshot.md, "Applying a delta").`,
			subs: [][2]string{
				{"apply", "apply --delta to --base and write the result to --out (which may be --base)"},
			},
			examples: []string{
				"netintel dataset apply --base ipintel-pro.ndjson.gz --delta ipintel-delta-pro.ndjson.gz --out ipintel-pro.new.ndjson.gz",
				"netintel dataset apply --base local.ndjson.gz --delta ipintel-delta-pro.ndjson.gz --out local.ndjson.gz",
			},
			run: cmdDataset},
	}
}

func cmdDataset(ctx context.Context, env *Env, args []string) error {
	if done, err := commandHelp(env, datasetCommands()[0], args); done {
		return err
	}
	if args[0] != "apply" {
		return unknownSub(env, datasetCommands()[0], args[0])
	}
	return cmdDatasetApply(ctx, env, args[1:])
}

func cmdDatasetApply(_ context.Context, env *Env, args []string) error {
	fs := newFlags(env, "dataset apply")
	base := fs.String("base", "", "the full NDJSON file (gzip) of the snapshot the delta is against")
	delta := fs.String("delta", "", "the delta NDJSON file (gzip)")
	out := fs.String("out", "", "where to write the new full NDJSON file (gzip); may be --base")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("dataset apply: unexpected argument %q", fs.Arg(0))}
	}
	for _, f := range []struct{ name, v string }{{"--base", *base}, {"--delta", *delta}, {"--out", *out}} {
		if f.v == "" {
			return usageError{fmt.Errorf("dataset apply: %s is required (netintel dataset apply --base FILE --delta FILE --out FILE)", f.name)}
		}
	}
	h, err := publish.ApplyDelta(*base, *delta, *out)
	if err != nil {
		return fmt.Errorf("dataset apply: %w", err)
	}
	fmt.Fprintf(env.Stdout, "wrote %s: the %s build of the snapshot of %s\n", *out, h.Audience, h.Name())
	return nil
}
