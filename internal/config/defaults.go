package config

import "time"

// Default returns the configuration used for every key that pipeline.yaml
// leaves out: an embedded NATS server on a free loopback port, a folder
// object store under the data dir, and the API on 127.0.0.1:8080.
func Default() *Config {
	return &Config{
		NATS: NATS{
			Embedded:       Embedded{Enabled: true, Host: "127.0.0.1"},
			ConnectTimeout: 5 * time.Second,
		},
		Streams: []Stream{
			{Name: "OBSERVATIONS", Subjects: []string{"obs.>"}, Replicas: 1, Storage: "file", MaxAge: 7 * 24 * time.Hour, Retention: "limits", Duplicates: DefaultObservationDuplicates},
			{Name: "DEADLETTER", Subjects: []string{"dlq.>"}, Replicas: 1, Storage: "file", MaxAge: 30 * 24 * time.Hour, Retention: "limits"},
			{Name: "EVENTS", Subjects: []string{"events.>"}, Replicas: 1, Storage: "file", MaxAge: 7 * 24 * time.Hour, Retention: "limits"},
			{Name: "TLDWORK", Subjects: []string{"tld.work.>"}, Replicas: 1, Storage: "file", MaxAge: 72 * time.Hour, Retention: "workqueue", Duplicates: time.Hour},
		},
		Consumers: []Consumer{
			{Stream: "OBSERVATIONS", Name: "enrich", FilterSubject: "obs.*.*", Partitions: ObservationPartitions, AckWait: 30 * time.Second, MaxAckPending: 10000}, // no max_deliver: the worker dead-letters (enrich.max_failures)
			{Stream: "TLDWORK", Name: "probe", AckWait: 2 * time.Minute, MaxDeliver: 5, MaxAckPending: 1000},
		},
		KV: []KVBucket{
			{Bucket: "ipstate", Replicas: 1, History: 1},
			{Bucket: "apikeys", Replicas: 1, History: 1},
			{Bucket: "usage", Replicas: 1, History: 1, TTL: 62 * 24 * time.Hour},
			{Bucket: "ratelimits", Replicas: 1, History: 1, TTL: time.Hour},
			{Bucket: "secrets", Replicas: 1, History: 1, PerKeyTTL: true},
			{Bucket: "uploads", Replicas: 1, History: 1, PerKeyTTL: true},
			{Bucket: "tldprogress", Replicas: 1, History: 1},
			{Bucket: "schedule", Replicas: 1, History: 1, TTL: time.Hour},
			{Bucket: "jobstatus", Replicas: 1, History: 1},
			{Bucket: "locks", Replicas: 1, History: 1, PerKeyTTL: true},
		},
		ObjectStore: ObjectStore{Type: "file", S3: S3{Region: "us-east-1", PartSize: 16 << 20, PresignTTL: 15 * time.Minute}},
		Schedules: map[string]string{
			"snapshot":  "0 3 * * *",
			"tld_probe": "@every 48h",
		},
		API: API{
			Listen:          "127.0.0.1:8080",
			InternalKey:     "",
			ShutdownTimeout: 10 * time.Second,
		},
		Ingest:  defaultIngest(),
		Enrich:  defaultEnrich(),
		Publish: defaultPublish(),
		Probe:   defaultProbe(),
		Secrets: defaultSecrets(),
		Gateway: defaultGateway(),
		Console: defaultConsole(),
	}
}
