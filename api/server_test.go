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
	if code != 200 || !strings.Contains(body, `netintel_http_requests_total{code="503",route="/ready"} 1`) {
		t.Fatalf("/metrics does not count by route and code:\n%s", body)
	}
}

func TestProbes_WrongMethod(t *testing.T) {
	mux := http.NewServeMux()
	MountProbes(mux, Probes{}, prometheus.NewRegistry())
	for _, tc := range []struct{ method, path string }{{"POST", "/health"}, {"DELETE", "/ready"}, {"PUT", "/metrics"}} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != 405 || rec.Header().Get("Allow") != "GET, HEAD" || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") ||
			!strings.Contains(rec.Body.String(), `"code":"method_not_allowed"`) {
			t.Errorf("%s %s = %d Allow %q %q %s, want a JSON 405 with Allow: GET, HEAD", tc.method, tc.path, rec.Code, rec.Header().Get("Allow"), rec.Header().Get("Content-Type"), rec.Body)
		}
	}
}

func TestRouteLabel(t *testing.T) {
	for _, tt := range []struct{ pattern, want string }{
		{"GET /api/v1/ip/{ip}", "/api/v1/ip/{ip}"},
		{"/api/v1/vpn/ip/{ip}", "/api/v1/vpn/ip/{ip}"},
		{"POST  /api/v1/ip/batch", "/api/v1/ip/batch"},
		{"GET example.com/metrics", "/metrics"},
		{"/", "/"},
		{"", "unmatched"},
	} {
		if got := RouteLabel(tt.pattern); got != tt.want {
			t.Errorf("RouteLabel(%q) = %q, want %q", tt.pattern, got, tt.want)
		}
	}
}
