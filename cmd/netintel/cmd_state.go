package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/internal/config"
)

// stateCommands returns the command of this file, for commandList.
func stateCommands() []*command {
	return []*command{
		&command{name: "state", summary: "print the IP state record of an address or range as JSON (get), or change its shard count (reshard)",
			usage: []string{"state get [--stored] [--data-dir DIR | --nats URL] IP|CIDR...",
				"state reshard --to N [--force] [--data-dir DIR | --nats URL]",
				"state reshard --abort [--data-dir DIR | --nats URL]"},
			desc: `Print the current IP intelligence record of each address or range from the
	state bucket (ipstate), whose values are a binary codec, as JSON: the record
	a snapshot would publish (classifications, provider, assets with CVEs
	scored against the CVE catalog), or with --stored the document enrichment
	keeps (signals, claims and assets with each source's evidence). A range is
	looked up as it was ingested (e.g. 104.16.0.0/13). An address or range
	without a record prints {"key": ..., "found": false} and the command exits 1.

	reshard moves the state to N shard buckets (enrich.shards; docs/operators.md,
	"Resharding the state"): it copies every record into the new layout,
	recording its progress in the ipstate-meta bucket (a run that is killed
	goes on from there when started again with the same --to), checks the
	count, records the new layout and deletes the old buckets. Stop the enrich
	workers first (it refuses while one runs, unless --force); observations
	wait in their stream. Then set enrich.shards: N and start them again: a
	process whose enrich.shards differs from the recorded layout refuses to
	start. --abort undoes a reshard that has not switched yet.`,
			subs: [][2]string{{"get", "print the record(s) of IP or CIDR as JSON, one object per argument"},
				{"reshard", "move the state to --to N shard buckets (resumable), or --abort an unfinished move"}},
			examples: []string{
				"netintel state get --data-dir data 185.220.101.4",
				"netintel state get --data-dir data 104.16.0.0/13 | jq .classifications",
				"netintel state get --stored --nats nats://nats:4222 2001:db8::1",
				"netintel state reshard --to 4 --data-dir data",
				"netintel state reshard --to 4 --nats nats://n1:4222,nats://n2:4222 --config pipeline.yaml",
				"netintel state reshard --abort --data-dir data",
			},
			run: cmdState},
	}
}

func cmdState(ctx context.Context, env *Env, args []string) error {
	c := stateCommands()[0]
	if done, err := commandHelp(env, c, args); done {
		return err
	}
	switch args[0] {
	case "get":
	case "reshard":
		return cmdStateReshard(ctx, env, args[1:])
	default:
		return unknownSub(env, c, args[0])
	}
	var cf commonFlags
	fs := newFlags(env, "state get")
	cf.add(fs)
	fs.Lookup("log-level").DefValue = "warn"
	cf.logLevel = "warn"
	stored := fs.Bool("stored", false, "print the stored document (signals, claims, evidence) rather than the published record")
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		fs.Usage()
		return usageError{errors.New("state get: name one or more IP addresses or CIDR ranges")}
	}
	for _, a := range pos {
		if _, err := enrich.StateKey(a); err != nil {
			return usageError{fmt.Errorf("state get: %w", err)}
		}
	}
	s, err := openStateSystem(ctx, env, &cf)
	if err != nil {
		return err
	}
	defer s.close()
	st, ok := s.IPState.(*enrich.Store)
	if !ok {
		return errors.New("state get: no IP state in this configuration")
	}
	var missing int
	for _, a := range pos {
		key, _ := enrich.StateKey(a)
		var v any = map[string]any{"key": key, "found": false}
		if *stored {
			raw, rev, found, err := st.Stored(ctx, a)
			if err != nil {
				return err
			}
			if found {
				v = map[string]any{"key": key, "found": true, "revision": rev, "stored": raw}
			}
		} else {
			r, found, err := st.Get(ctx, a)
			if err != nil {
				return err
			}
			if found {
				v = r
			}
		}
		if m, isMap := v.(map[string]any); isMap && m["found"] == false {
			missing++
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return err
		}
		if _, err := env.Stdout.Write(b.Bytes()); err != nil {
			return err
		}
	}
	if missing > 0 {
		return fmt.Errorf("state get: %d of %d not in the state", missing, len(pos))
	}
	return nil
}

// cmdStateReshard is `netintel state reshard`.
func cmdStateReshard(ctx context.Context, env *Env, args []string) error {
	var cf commonFlags
	fs := newFlags(env, "state reshard")
	cf.add(fs)
	to := fs.Int("to", 0, "the shard count to move the state to (1.."+strconv.Itoa(config.MaxShards)+")")
	abort := fs.Bool("abort", false, "undo a reshard that has not switched yet (delete the new buckets)")
	force := fs.Bool("force", false, "reshard even while enrich workers are announced as running")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("state reshard: unexpected argument %q", fs.Arg(0))}
	}
	if *abort == (*to != 0) {
		fs.Usage()
		return usageError{errors.New("state reshard: give --to N or --abort")}
	}
	if !*abort && (*to < 1 || *to > config.MaxShards) {
		return usageError{fmt.Errorf("state reshard: --to must be 1..%d, got %d", config.MaxShards, *to)}
	}
	s, err := openStateSystem(ctx, env, &cf)
	if err != nil {
		return err
	}
	defer s.close()
	if *abort {
		p, err := enrich.AbortReshard(ctx, s.Bus.JS, s.Cfg)
		if err != nil {
			return err
		}
		if p == nil {
			fmt.Fprintln(env.Stdout, "no reshard in progress")
			return nil
		}
		fmt.Fprintf(env.Stdout, "reshard from %d to %d shards undone: the state stays in %d shard(s)\n", p.From, p.To, p.From)
		return nil
	}
	m := newMeter(env, "reshard: records copied", "records", -1)
	res, err := enrich.Reshard(ctx, s.Bus.JS, s.Cfg, *to, enrich.ReshardOptions{Force: *force, Log: s.Log,
		Progress: func(n int64) { m.set(n, -1) }})
	m.done()
	if err != nil {
		return err
	}
	if res.From == res.To && res.Copied == 0 && !res.Resumed {
		fmt.Fprintf(env.Stdout, "the state is in %d shard(s) already\n", res.To)
	} else {
		fmt.Fprintf(env.Stdout, "state resharded from %d to %d shard(s): %d records copied\n", res.From, res.To, res.Copied)
	}
	if s.Cfg.Enrich.Shards != res.To {
		fmt.Fprintf(env.Stdout, "set enrich.shards: %d in %s before starting the workers again\n", res.To, cf.config)
	}
	return nil
}

// openStateSystem opens the system the state commands read and change:
// the NATS of --nats, or else the embedded server on the data folder
// (./data when none is given).
func openStateSystem(ctx context.Context, env *Env, cf *commonFlags) (*System, error) {
	if cf.dataDir == "" && cf.natsURL == "" {
		cf.dataDir = "data"
	}
	return openSystem(ctx, env, cf, roleOpts{})
}
