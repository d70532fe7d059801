package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/netintel/netintel/enrich"
)

// stateCommands returns the command of this file, for commandList.
func stateCommands() []*command {
	return []*command{
		&command{name: "state", summary: "print the IP state record of an address or range as JSON (get)",
			usage: []string{"state get [--stored] [--data-dir DIR | --nats URL] IP|CIDR..."},
			desc: `Print the current IP intelligence record of each address or range from the
	state bucket (ipstate), whose values are a binary codec, as JSON: the record
	a snapshot would publish (classifications, provider, assets with CVEs
	scored against the CVE catalog), or with --stored the document enrichment
	keeps (signals, claims and assets with each source's evidence). A range is
	looked up as it was ingested (e.g. 104.16.0.0/13). An address or range
	without a record prints {"key": ..., "found": false} and the command exits 1.`,
			subs: [][2]string{{"get", "print the record(s) of IP or CIDR as JSON, one object per argument"}},
			examples: []string{
				"netintel state get --data-dir data 185.220.101.4",
				"netintel state get --data-dir data 104.16.0.0/13 | jq .classifications",
				"netintel state get --stored --nats nats://nats:4222 2001:db8::1",
			},
			run: cmdState},
	}
}

func cmdState(ctx context.Context, env *Env, args []string) error {
	c := stateCommands()[0]
	if done, err := commandHelp(env, c, args); done {
		return err
	}
	if args[0] != "get" {
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
	if cf.dataDir == "" && cf.natsURL == "" {
		cf.dataDir = "data"
	}
	s, err := openSystem(ctx, env, &cf, roleOpts{})
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
