package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestProbes(t *testing.T) {
	var notReady error
	mux := http.NewServeMux()
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	MountProbes(mux, Probes{Ready: func(context.Context) error { return notReady }}, reg)
	h := m.Wrap(mux)
	do := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := do("/ready"); code != 200 || !strings.Contains(body, `"ready"`) {
		t.Fatalf("/ready = %d %s", code, body)
	}
	notReady = errors.New("object store: s3 127.0.0.1:9: connection refused")
	if code, body := do("/ready"); code != 503 || !strings.Contains(body, "connection refused") {
		t.Fatalf("/ready not ready = %d %s", code, body)
	}
	if code, body := do("/health"); code != 200 || !strings.Contains(body, `"status":"healthy"`) || !strings.Contains(body, `"stealth_count"`) {
		t.Fatalf("/health = %d %s", code, body)
	}
	code, body := do("/metrics")
	if code != 200 || !strings.Contains(body, `netintel_http_requests_total{code="503",route="GET /ready"} 1`) {
		t.Fatalf("/metrics does not count by route and code:\n%s", body)
	}
}
