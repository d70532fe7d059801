package config

// Publish configures the publish part of the system. Its fields are documented in
// pipeline.yaml and docs/config.md.
type Publish struct{}

func defaultPublish() Publish { return Publish{} }

func (c *Publish) validate(path string) []error { return nil }
