package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	gw "github.com/netintel/netintel/gateway"
	"github.com/netintel/netintel/internal/bus"
)

// keysCommands returns the command of this file, for commandList.
func keysCommands() []*command {
	return []*command{
		&command{name: "keys", summary: "manage customer API keys: create, list, revoke, rotate",
			usage: []string{
				"keys create --user U --tier T [--tag T]...",
				"keys list [--json]",
				"keys revoke ID",
				"keys rotate [--overlap 168h] ID",
			},
			desc: `Manage the gateway's customer API keys in the apikeys bucket. Every
	subcommand takes --config, --nats URL or --data-dir DIR (of a running
	` + "`netintel run`" + `; default data) to reach NATS. The gateway and this command
	must share gateway.hash_key.`,
			subs: [][2]string{
				{"create", "issue a key; prints the whole key once"},
				{"list", "id, user, tier, tags, created, last used, status"},
				{"revoke", "revoke a key (every gateway stops taking it within seconds)"},
				{"rotate", "issue a new key for the same user and tier; the old one keeps working for the overlap (0 = until revoked)"},
			},
			examples: []string{
				"netintel keys create --data-dir data --user acme --tier pro --tag team-a",
				"netintel keys list --data-dir data --json",
				"netintel keys revoke --data-dir data 3f9c2a1b",
				"netintel keys rotate --nats nats://nats:4222 --overlap 24h 3f9c2a1b",
			},
			run: cmdKeys},
	}
}

type tagList []string

func (t *tagList) String() string     { return strings.Join(*t, ",") }
func (t *tagList) Set(v string) error { *t = append(*t, v); return nil }

func cmdKeys(ctx context.Context, env *Env, args []string) error {
	if done, err := commandHelp(env, keysCommands()[0], args); done {
		return err
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "create":
		return keysCreate(ctx, env, args)
	case "list":
		return keysList(ctx, env, args)
	case "revoke":
		return keysRevoke(ctx, env, args)
	case "rotate":
		return keysRotate(ctx, env, args)
	}
	return unknownSub(env, keysCommands()[0], sub)
}

// keysFlags returns the flag set of `keys SUB`: the connection flags, with
// warn as the default log level (the output is the point).
func keysFlags(env *Env, sub string) (*flag.FlagSet, *commonFlags) {
	cf := &commonFlags{}
	fs := newFlags(env, "keys "+sub)
	cf.add(fs)
	fs.Lookup("log-level").DefValue = "warn"
	cf.logLevel = "warn"
	return fs, cf
}

// parseKeyArgs parses flags that may come before or after the one key id
// that revoke and rotate take (needID); the others take none.
func parseKeyArgs(fs *flag.FlagSet, args []string, sub string, needID bool) (string, error) {
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	var id string
	if fs.NArg() > 0 {
		id = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return "", err
		}
		if fs.NArg() > 0 {
			return "", fmt.Errorf("keys %s: unexpected argument %q", sub, fs.Arg(0))
		}
	}
	switch {
	case needID && id == "":
		return "", fmt.Errorf("keys %s: name the key id (see `netintel keys list`)", sub)
	case !needID && id != "":
		return "", fmt.Errorf("keys %s: unexpected argument %q", sub, id)
	}
	return id, nil
}

func keysCreate(ctx context.Context, env *Env, args []string) error {
	fs, cf := keysFlags(env, "create")
	var (
		user, tier string
		tags       tagList
	)
	fs.StringVar(&user, "user", "", "user id the key belongs to (A-Z a-z 0-9 _ -)")
	fs.StringVar(&tier, "tier", "", "tier: "+strings.Join(gw.Tiers, ", "))
	fs.Var(&tags, "tag", "a tag for the customer's own audit (repeatable)")
	if _, err := parseKeyArgs(fs, args, "create", false); err != nil {
		return err
	}
	switch {
	case user == "":
		return errors.New("keys create: --user is required")
	case tier == "":
		return fmt.Errorf("keys create: --tier is required (%s)", strings.Join(gw.Tiers, ", "))
	}
	keys, closeFn, err := openKeys(ctx, env, cf)
	if err != nil {
		return err
	}
	defer closeFn()
	whole, rec, err := keys.Create(ctx, user, tier, tags)
	if err != nil {
		return fmt.Errorf("keys create: %w", err)
	}
	fmt.Fprintln(env.Stdout, whole)
	fmt.Fprintf(env.Stderr, "key %s for user %s, tier %s: shown once, store it now\n", rec.ID, rec.User, rec.Tier)
	return nil
}

func keysList(ctx context.Context, env *Env, args []string) error {
	fs, cf := keysFlags(env, "list")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseKeyArgs(fs, args, "list", false); err != nil {
		return err
	}
	keys, closeFn, err := openKeys(ctx, env, cf)
	if err != nil {
		return err
	}
	defer closeFn()
	infos, err := keys.List(ctx)
	if err != nil {
		return fmt.Errorf("keys list: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(infos)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUSER\tTIER\tTAGS\tCREATED\tLAST USED\tSTATUS")
	for _, in := range infos {
		last := "never"
		if in.LastUsed != nil {
			last = in.LastUsed.UTC().Format(time.RFC3339)
		}
		st := in.Status
		if st == "active" && in.ExpiresAt != nil {
			st = "active until " + in.ExpiresAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", in.ID, in.User, in.Tier, strings.Join(in.Tags, ","),
			in.Created.UTC().Format(time.RFC3339), last, st)
	}
	return tw.Flush()
}

func keysRevoke(ctx context.Context, env *Env, args []string) error {
	fs, cf := keysFlags(env, "revoke")
	id, err := parseKeyArgs(fs, args, "revoke", true)
	if err != nil {
		return err
	}
	keys, closeFn, err := openKeys(ctx, env, cf)
	if err != nil {
		return err
	}
	defer closeFn()
	rec, err := keys.Revoke(ctx, id)
	if err != nil {
		return fmt.Errorf("keys revoke: %w", err)
	}
	fmt.Fprintf(env.Stdout, "revoked %s (user %s) at %s\n", rec.ID, rec.User, rec.RevokedAt.UTC().Format(time.RFC3339))
	return nil
}

func keysRotate(ctx context.Context, env *Env, args []string) error {
	fs, cf := keysFlags(env, "rotate")
	overlap := fs.Duration("overlap", 7*24*time.Hour, "how long the old key keeps working; 0 = until revoked")
	id, err := parseKeyArgs(fs, args, "rotate", true)
	if err != nil {
		return err
	}
	if *overlap < 0 {
		return errors.New("keys rotate: --overlap must be >= 0")
	}
	keys, closeFn, err := openKeys(ctx, env, cf)
	if err != nil {
		return err
	}
	defer closeFn()
	whole, rec, err := keys.Rotate(ctx, id, *overlap)
	if err != nil {
		return fmt.Errorf("keys rotate: %w", err)
	}
	fmt.Fprintln(env.Stdout, whole)
	until := "until revoked"
	if *overlap > 0 {
		until = "for " + overlap.String()
	}
	fmt.Fprintf(env.Stderr, "key %s replaces %s (user %s, tier %s); the old key keeps working %s. The new key is shown once.\n", rec.ID, id, rec.User, rec.Tier, until)
	return nil
}

// openKeys connects to NATS the way roles do (--nats, --data-dir of a
// running `netintel run`, or nats.urls; default --data-dir data) and opens
// the apikeys bucket, creating it when missing.
func openKeys(ctx context.Context, env *Env, cf *commonFlags) (*gw.Keys, func(), error) {
	cfg, err := cf.loadConfig()
	if err != nil {
		return nil, nil, err
	}
	log, err := cf.logger(env)
	if err != nil {
		return nil, nil, err
	}
	ncfg := cfg.NATS
	switch {
	case cf.natsURL != "":
		ncfg.URLs = strings.Split(cf.natsURL, ",")
	case cf.dataDir != "" || cfg.NATS.Embedded.Enabled || len(cfg.NATS.URLs) == 0:
		dir := cf.dataDir
		if dir == "" {
			dir = "data"
		}
		u, err := bus.URLFromDataDir(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("%w; pass --nats URL or --data-dir DIR", err)
		}
		ncfg.URLs = []string{u}
	}
	if ncfg.ConnectWait == 0 {
		ncfg.ConnectWait = 10 * time.Second
	}
	b, err := bus.Connect(ctx, ncfg, log)
	if err != nil {
		return nil, nil, err
	}
	kv, err := bus.OpenOrCreateKV(ctx, b.JS, log, cfg.KVDecl(gw.KeysBucket))
	if err != nil {
		b.Close()
		return nil, nil, err
	}
	return gw.NewKeys(kv, gw.NewHasher(cfg.Gateway.HashKey), log), b.Close, nil
}

var _ flag.Value = (*tagList)(nil)
