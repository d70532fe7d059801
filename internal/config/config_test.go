package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLoad_GoodFiles(t *testing.T) {
	t.Setenv("TEST_S3_ACCESS", "AKIA-test")
	t.Setenv("TEST_S3_SECRET", "s3cr3t-value")
	t.Setenv("S3_ACCESS_KEY", "AKIA-test")
	t.Setenv("S3_SECRET_KEY", "s3cr3t-value")
	t.Setenv("NETINTEL_INTERNAL_KEY", "internal-test")
	t.Setenv("NETINTEL_GATEWAY_HASH_KEY", "hash-test")
	files, _ := filepath.Glob("testdata/*.good.yml")
	files = append(files, "../../pipeline.yaml", "../../deploy/pipeline.cluster.yaml")
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			if _, err := Load(f); err != nil {
				t.Fatalf("Load: %v", err)
			}
		})
	}
}

func TestLoad_BadFiles(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"unknown-key.bad.yml", []string{"nats.embedded.prot (line 4): unknown key"}},
		{"wrong-type.bad.yml", []string{"streams[0].replicas (line 4): cannot unmarshal"}},
		{"bad-cron.bad.yml", []string{`schedules.snapshot: bad cron expression "0 25 * * *"`}},
		{"missing-required.bad.yml", []string{"object_store.s3.bucket: required value missing", "object_store.s3.access_key: required", "object_store.s3.secret_key: required"}},
		{"unset-env.bad.yml", []string{"api.internal_key (line 2): environment variable NETINTEL_TEST_SURELY_UNSET is not set"}},
		{"broken-yaml.bad.yml", []string{"parse yaml: yaml: line"}},
		{"state-history.bad.yml", []string{`kv[0].history: the enrich state bucket "ipstate" keeps one record per key: must be 1, got 3`}},
		{"enrich-across.bad.yml", []string{`enrich.bucket: names no declared kv bucket: "ipstate"`, "enrich.max_failures: 5 is above the enrich consumer's max_deliver 3"}},
		{"shards.bad.yml", []string{"enrich.shards: must be 1..64, got 0 (changing it on a state with data: netintel state reshard --to N)",
			"enrich.shard_placement[1]: needs tags or a cluster", "enrich.shard_placement[2].tags[0]: empty tag", "kv[1].placement: needs tags or a cluster",
			"streams[0].duplicates: 2h0m0s is longer than max_age 1h0m0s", "streams[1].duplicates: must be 0..24h0m0s"}},
		{"unpartitioned-enrich.bad.yml", []string{`consumers[0]: the enrich consumer must have filter_subject "obs.*.*" and partitions 4`, "consumers[1].filter_subject: is required with partitions"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", tc.file))
			if err == nil {
				t.Fatal("Load accepted a bad file")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "testdata/"+tc.file+": ") {
					t.Errorf("line does not name the file: %q", line)
				}
			}
		})
	}
}

func TestParse_EnvExpansion(t *testing.T) {
	t.Setenv("NI_KEY", "from-env")
	t.Setenv("NI_PORT", "4333")
	doc := `# a comment with ${NI_UNSET_IN_COMMENT} is never expanded
api:
  internal_key: ${NI_KEY}
  public_url: "https://${NI_HOST:-example.org}/x"
nats:
  embedded:
    port: ${NI_PORT}
  connect_timeout: ${NI_TIMEOUT:-7s}
`
	cfg, err := Parse([]byte(doc), "inline")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.API.InternalKey != "from-env" || cfg.API.PublicURL != "https://example.org/x" ||
		cfg.NATS.Embedded.Port != 4333 || cfg.NATS.ConnectTimeout != 7*time.Second {
		t.Fatalf("expansion wrong: key=%q url=%q port=%d timeout=%s", cfg.API.InternalKey, cfg.API.PublicURL, cfg.NATS.Embedded.Port, cfg.NATS.ConnectTimeout)
	}
}

func TestParse_ReportsEveryProblem(t *testing.T) {
	doc := "nats:\n  bogus: 1\napi:\n  listen: nope\nschedules:\n  snapshot: \"x y\"\n"
	_, err := Parse([]byte(doc), "f")
	if err == nil {
		t.Fatal("accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 problems, got %d: %q", len(lines), err)
	}
}

func TestParse_SecretNotEchoed(t *testing.T) {
	t.Setenv("NI_SECRET", "hunter2-super-secret")
	doc := "object_store:\n  type: s3\n  s3:\n    secret_key: ${NI_SECRET}\n"
	_, err := Parse([]byte(doc), "f")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err = %v", err)
	}
}

func TestDefault_Valid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
}

// Each good file loads to exactly the struct it describes: the defaults
// with the file's values over them, nothing more or less (a key decoded
// into the wrong field, or a default lost, shows here).
func TestLoad_GoodFilesWhole(t *testing.T) {
	t.Setenv("NETINTEL_INTERNAL_KEY", "internal-test")
	t.Setenv("TEST_S3_ACCESS", "AKIA-test")
	t.Setenv("TEST_S3_SECRET", "s3cr3t-value")
	for _, tc := range []struct {
		file string
		want func(c *Config)
	}{
		{"minimal.good.yml", func(c *Config) { c.API.Listen = "127.0.0.1:9090" }},
		{"full.good.yml", func(c *Config) {
			// The file spells out the defaults, and gives the enrich
			// consumer a max_deliver the defaults leave to the worker.
			c.NATS.URLs = []string{}
			c.API.Listeners = map[string]string{}
			c.API.InternalKey = "internal-test"
			for i := range c.Consumers {
				if c.Consumers[i].Name == EnrichConsumer {
					c.Consumers[i].MaxDeliver = 5
				}
			}
		}},
		{"external.good.yml", func(c *Config) {
			c.NATS.Embedded.Enabled = false
			c.NATS.URLs = []string{"nats://127.0.0.1:4222", "nats://127.0.0.1:4223"}
			c.NATS.Password = "fallback"
			c.ObjectStore.Type = "s3"
			c.ObjectStore.S3.Endpoint = "127.0.0.1:9000"
			c.ObjectStore.S3.Bucket = "netintel"
			c.ObjectStore.S3.AccessKey = "AKIA-test"
			c.ObjectStore.S3.SecretKey = "s3cr3t-value"
			c.ObjectStore.S3.TLS = true
			c.Schedules = map[string]string{"snapshot": "@daily", "tld_probe": "off"}
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := Load(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			want := Default()
			tc.want(want)
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(want, "", " ")
				gl, wl := strings.Split(string(g), "\n"), strings.Split(string(w), "\n")
				for i := range min(len(gl), len(wl)) {
					if gl[i] != wl[i] {
						t.Fatalf("loaded config differs from the expected one at line %d of its JSON:\n got: %s\nwant: %s", i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("loaded config differs from the expected one (%d vs %d JSON lines)", len(gl), len(wl))
			}
		})
	}
}

// Problems found in map-valued sections come out in the same order every
// time (by key), so that two runs of validate print the same lines.
func TestValidate_StableOrder(t *testing.T) {
	c := Default()
	c.Schedules = map[string]string{}
	for _, k := range []string{"zeta", "alpha", "mid", "beta", "omega", "gamma"} {
		c.Schedules[k] = "61 * * * *"
	}
	c.API.Listeners = map[string]string{"nope": "x", "also-bad": "y", "ip": "z"}
	first := c.Validate().Error()
	for range 20 {
		if again := c.Validate().Error(); again != first {
			t.Fatalf("order changed:\n%s\n---\n%s", first, again)
		}
	}
	if a, z := strings.Index(first, "schedules.alpha"), strings.Index(first, "schedules.zeta"); a < 0 || z < a {
		t.Errorf("schedules not in key order:\n%s", first)
	}
}

// A bucket the system needs comes as pipeline.yaml declares it, else as
// the defaults do (a file written before the bucket existed still runs),
// else as a one-record bucket.
func TestConfig_KVDecl(t *testing.T) {
	c := Default()
	c.KV = []KVBucket{{Bucket: "apikeys", Replicas: 3, History: 1}}
	if got := c.KVDecl("apikeys"); got.Replicas != 3 {
		t.Errorf("declared bucket: %+v", got)
	}
	want, _ := Default().KVByName("usage")
	if got := c.KVDecl("usage"); !reflect.DeepEqual(got, want) || got.TTL == 0 {
		t.Errorf("undeclared bucket of the defaults: %+v, want %+v", got, want)
	}
	if got := c.KVDecl("other"); got != (KVBucket{Bucket: "other", Replicas: 1, History: 1}) {
		t.Errorf("unknown bucket: %+v", got)
	}
}

func TestConfig_StateShards(t *testing.T) {
	c := Default()
	c.KV[0].Replicas = 3
	c.Enrich.ShardPlacement = []Placement{{Tags: []string{"az:a"}}, {Tags: []string{"az:b"}, Cluster: "east"}}
	for _, tc := range []struct {
		n     int
		names []string
	}{
		{1, []string{"ipstate"}},
		{3, []string{"ipstate-0of3", "ipstate-1of3", "ipstate-2of3"}},
	} {
		got := c.StateShards(tc.n)
		if len(got) != len(tc.names) {
			t.Fatalf("%d shards: %d buckets", tc.n, len(got))
		}
		for i, k := range got {
			if k.Bucket != tc.names[i] || k.Replicas != 3 || k.History != 1 {
				t.Errorf("%d shards, shard %d: %+v", tc.n, i, k)
			}
			if want := c.Enrich.ShardPlacement[i%2]; k.Placement == nil || k.Placement.Cluster != want.Cluster || k.Placement.Tags[0] != want.Tags[0] {
				t.Errorf("%d shards, shard %d: placement %+v, want %+v", tc.n, i, k.Placement, want)
			}
		}
	}
	if d := Default(); d.Enrich.Shards != 1 || d.StateShards(d.Enrich.Shards)[0].Placement != nil {
		t.Errorf("default: %d shards, %+v", d.Enrich.Shards, d.StateShards(1))
	}
}
