package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoad_RelativeInputsFromConfigFolder: a relative input path not
// found from the working folder is read from the config file's folder;
// one found from the working folder, a URL and a built-in input stay.
func TestLoad_RelativeInputsFromConfigFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "feeds"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"feeds/tor.txt", "tlds.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := `ingest:
  sources:
    - {name: tor, format: tor-exits, path: feeds/tor.txt, schedule: "off"}
probe:
  tld_list: tlds.txt
  rdap_bootstrap: https://data.iana.org/rdap/dns.json
  whois_fallback: builtin:tld-whois.tsv
  stealth:
    candidates_file: missing.json
`
	p := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, got, want string }{
		{"source path", c.Ingest.Sources[0].Path, filepath.Join(dir, "feeds/tor.txt")},
		{"tld_list", c.Probe.TLDList, filepath.Join(dir, "tlds.txt")},
		{"URL", c.Probe.RDAPBootstrap, "https://data.iana.org/rdap/dns.json"},
		{"built-in", c.Probe.WhoisFallback, BuiltinWhoisFallback},
		{"found nowhere", c.Probe.Stealth.CandidatesFile, "missing.json"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestParse_BuiltinNames(t *testing.T) {
	if d := Default(); d.Probe.WhoisFallback != BuiltinWhoisFallback || d.Probe.Stealth.CandidatesFile != BuiltinStealthCandidates {
		t.Errorf("defaults %q %q, want the built-in inputs", d.Probe.WhoisFallback, d.Probe.Stealth.CandidatesFile)
	}
	_, err := Parse([]byte("probe:\n  whois_fallback: builtin:whois.tsv\n"), "p.yaml")
	if err == nil || !strings.Contains(err.Error(), `probe.whois_fallback: no built-in input "whois.tsv"`) {
		t.Errorf("unknown built-in: %v", err)
	}
}
