package config

import (
	"os"
	"path/filepath"
	"strings"
)

// resolveInputs makes the relative paths of input files (ingest sources,
// the CVE catalog and ASN tables, the rules, the probe's inputs) work from
// any working folder: a relative path that does not exist from the working
// folder but does from dir, the config file's folder, is taken from there.
// URLs, built-in inputs ("builtin:...") and absolute paths are left alone,
// and so is a path found from the working folder (docs/config.md, "Paths").
func (c *Config) resolveInputs(dir string) {
	fix := func(p *string) {
		v := *p
		if v == "" || filepath.IsAbs(v) || strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") || strings.HasPrefix(v, "builtin:") {
			return
		}
		if _, err := os.Stat(v); err == nil {
			return
		}
		if alt := filepath.Join(dir, v); alt != v {
			if _, err := os.Stat(alt); err == nil {
				*p = alt
			}
		}
	}
	fixAll := func(ps []string) {
		for i := range ps {
			fix(&ps[i])
		}
	}
	for i := range c.Ingest.Sources {
		fix(&c.Ingest.Sources[i].Path)
	}
	fix(&c.Enrich.Rules)
	cat := &c.Enrich.Catalog
	fixAll(cat.NVD)
	fix(&cat.KEV)
	fix(&cat.EPSS)
	fix(&cat.EOL)
	fixAll(cat.EndOfLife)
	fixAll(cat.EUVD)
	fixAll(cat.JVN)
	fixAll(cat.ASN)
	fix(&c.Probe.TLDList)
	fix(&c.Probe.RDAPBootstrap)
	fix(&c.Probe.WhoisFallback)
	fix(&c.Probe.Stealth.CandidatesFile)
}
