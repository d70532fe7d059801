package main

import (
	"context"
	"fmt"

	"github.com/netintel/netintel/publish"
)

func init() {
	register(&command{name: "dataset", summary: "work with downloaded snapshot files: apply a delta to a full NDJSON file", run: cmdDataset})
}

const datasetUsage = `usage: netintel dataset apply --base FILE --delta FILE --out FILE

  Applies a delta NDJSON file (ipintel-delta*.ndjson.gz) to the full NDJSON
  file of the snapshot it is against (ipintel*.ndjson.gz of delta_base) and
  writes the new snapshot's full NDJSON file: the same lines in the same
  order, checked against the SHA-256 of its lines that the delta carries.
  A base that is not the delta's base is refused and nothing is written.

Examples:
  netintel dataset apply --base ipintel-pro.ndjson.gz --delta ipintel-delta-pro.ndjson.gz --out ipintel-pro.new.ndjson.gz
  netintel dataset apply --base local.ndjson.gz --delta ipintel-delta-pro.ndjson.gz --out local.ndjson.gz   # in place`

func cmdDataset(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(env.Stdout, datasetUsage)
		return nil
	}
	switch args[0] {
	case "apply":
		return cmdDatasetApply(ctx, env, args[1:])
	}
	return fmt.Errorf("dataset: unknown subcommand %q (try: netintel dataset apply --base FILE --delta FILE --out FILE)", args[0])
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
		return fmt.Errorf("dataset apply: unexpected argument %q", fs.Arg(0))
	}
	for _, f := range []struct{ name, v string }{{"--base", *base}, {"--delta", *delta}, {"--out", *out}} {
		if f.v == "" {
			return fmt.Errorf("dataset apply: %s is required (usage: netintel dataset apply --base FILE --delta FILE --out FILE)", f.name)
		}
	}
	h, err := publish.ApplyDelta(*base, *delta, *out)
	if err != nil {
		return fmt.Errorf("dataset apply: %w", err)
	}
	fmt.Fprintf(env.Stdout, "wrote %s: the %s build of the snapshot of %s\n", *out, h.Audience, h.Name())
	return nil
}
