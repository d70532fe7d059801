package ingest

import (
	"strings"
	"testing"
)

// zgrab2's own sample output (zmap/zgrab2 output.json): an amqp091 module
// against a RabbitMQ broker over TLS. The broker's server_properties name
// its product, version and platform.
func TestZGrab2_AT1AMQPServerProperties(t *testing.T) {
	t.Parallel()
	r := runScan(t, "zgrab2", readFile(t, "zgrab2-amqp091-rabbitmq.json"))
	if len(r.obs) != 1 || len(r.bad) != 0 || len(r.skipped) != 0 {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	o := r.obs[0]
	if o.IP != "203.0.113.176" || o.Service.Port != 5672 || o.Service.Transport != "tcp" || o.ObservedAt != "2024-05-15T07:02:49Z" {
		t.Errorf("observation = %s", mustJSON(t, o))
	}
	d := o.Service.Detected
	if d == nil || d.Service != "amqp091" || d.Product != "RabbitMQ" || d.Version != "3.8.16" || d.Info != "Erlang/OTP 24.0.2" {
		t.Errorf("detected = %s", mustJSON(t, d))
	}
	p := o.Service.Probes
	if len(p) != 1 || p[0].TLS == nil || p[0].TLS.Subject.CN != "*.rmq2.cloudamqp.com" || p[0].TLS.Version != "TLSv1.2" ||
		p[0].TLS.SHA256 != "eda0b0b8a9c28fbbeac1781eb1a8fa49df8480befefa1654cfcebcd7cf3d0891" {
		t.Errorf("probes = %s", mustJSON(t, p))
	}
}

// zgrab2's own schema test data (zgrab2_schemas/zgrab2/testdata/):
// memcached's and mssql's version are read; the redis line, scanned by
// the name "target" with no "ip", is skipped with that reason, not
// refused as a record that is not zgrab2's.
func TestZGrab2_AT1MemcachedMSSQLRedis(t *testing.T) {
	t.Parallel()
	r := runScan(t, "zgrab2", readFile(t, "zgrab2-memcached-mssql-redis.jsonl"))
	if len(r.obs) != 2 || len(r.bad) != 0 || len(r.skipped) != 1 {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	if !strings.Contains(r.skipped[0], `zgrab2 target "target" is a host name with no IP address`) {
		t.Errorf("skipped = %v", r.skipped)
	}
	mc, ms := r.obs[0], r.obs[1]
	if mc.IP != "100.65.0.30" || mc.Service.Port != 11211 || mc.Service.Detected.Version != "1.6.38" {
		t.Errorf("memcached = %s", mustJSON(t, mc))
	}
	if ms.IP != "172.17.0.3" || ms.Service.Port != 1433 || ms.Service.Detected.Version != "14.0.3015" ||
		len(ms.Service.Probes) != 1 || ms.Service.Probes[0].TLS == nil {
		t.Errorf("mssql = %s", mustJSON(t, ms))
	}
}
