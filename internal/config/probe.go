package config

// Probe configures the probe part of the system. Its fields are documented in
// pipeline.yaml and docs/config.md.
type Probe struct{}

func defaultProbe() Probe { return Probe{} }

func (c *Probe) validate(path string) []error { return nil }
