package config

import (
	"os"
	"path/filepath"
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
