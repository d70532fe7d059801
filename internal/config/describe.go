package config

import "fmt"

// Descriptions of the streams, consumers and buckets the system creates,
// shown by `nats stream ls`, `nats consumer ls` and `nats kv ls`. A
// declaration in pipeline.yaml may set its own; without one it takes the
// entry of its name here, and an object of another name a generic line,
// so that no object is created without a description.
var (
	streamDescriptions = map[string]string{
		"OBSERVATIONS": "IP observations from ingest, obs.<type>.<source>.<partition>; read by the enrich consumers",
		"DEADLETTER":   "messages that failed too often (dlq.<stage>), with their error headers; see docs/ingest-enrich.md",
		"EVENTS":       "system events (events.snapshot.published and others)",
		"TLDWORK":      "TLD RDAP/WHOIS check work items (tld.work.<run>), one per TLD; read by the probe consumer",
	}
	consumerDescriptions = map[string]string{
		"OBSERVATIONS/enrich": "enrich workers: merge observations into the ipstate bucket",
		"TLDWORK/probe":       "probe workers: check one TLD's RDAP and WHOIS each",
	}
	kvDescriptions = map[string]string{
		"ipstate":     "current IP intelligence state per address or range (binary records; `netintel state get IP`)",
		"apikeys":     "gateway API keys: hashes, user, tier and status (`netintel keys`)",
		"usage":       "gateway monthly quota counters per key",
		"secrets":     "one-time secrets (encrypted), with a TTL per secret",
		"uploads":     "one-time secret file uploads in progress",
		"tldprogress": "TLD check runs: progress, requests, per-TLD results and the published record",
		"schedule":    "scheduler claims: one per job tick across copies",
		"locks":       "leases with a TTL per key (the TLD check run lock)",
	}
)

// StreamDescription is the description stream s is created with.
func StreamDescription(s Stream) string {
	if s.Description != "" {
		return s.Description
	}
	if d, ok := streamDescriptions[s.Name]; ok {
		return d
	}
	return fmt.Sprintf("netintel stream %s (declared in pipeline.yaml)", s.Name)
}

// ConsumerDescription is the description consumer c is created with;
// partition p >= 0 of it says which.
func ConsumerDescription(c Consumer, p int) string {
	d := c.Description
	if d == "" {
		d = consumerDescriptions[c.Stream+"/"+c.Name]
	}
	if d == "" {
		d = fmt.Sprintf("netintel consumer %s of %s (declared in pipeline.yaml)", c.Name, c.Stream)
	}
	if p >= 0 {
		d = fmt.Sprintf("%s (partition %d of %d: %s)", d, p, c.Partitions, PartitionSubject(c.FilterSubject, p))
	}
	return d
}

// KVDescription is the description bucket k is created with.
func KVDescription(k KVBucket) string {
	if k.Description != "" {
		return k.Description
	}
	if d, ok := kvDescriptions[k.Bucket]; ok {
		return d
	}
	return fmt.Sprintf("netintel bucket %s (declared in pipeline.yaml)", k.Bucket)
}
