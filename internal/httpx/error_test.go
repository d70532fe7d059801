package httpx

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Write answers an *Error found anywhere in the chain with its status,
// Retry-After and body; any other error as 500 without its text.
func TestWrite(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		status     int
		code, tier string
		retry      string
	}{
		{"error", &Error{Status: 404, Code: "not_found", Message: "no such path"}, 404, "not_found", "", ""},
		{"wrapped, with tier and retry", fmt.Errorf("lookup: %w", &Error{Status: 403, Code: "tier_required", Message: "m", RequiredTier: "pro", RetryAfter: "10"}), 403, "tier_required", "pro", "10"},
		{"plain error", errors.New("dial tcp 10.1.2.3:4222: secret detail"), 500, "internal", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Write(rec, tt.err)
			var body struct {
				Error map[string]any `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if rec.Code != tt.status || body.Error["code"] != tt.code || rec.Header().Get("Retry-After") != tt.retry {
				t.Errorf("got %d %v Retry-After %q", rec.Code, body.Error, rec.Header().Get("Retry-After"))
			}
			if tier, _ := body.Error["required_tier"].(string); tier != tt.tier {
				t.Errorf("required_tier %q, want %q", tier, tt.tier)
			}
			if _, ok := body.Error["status"]; ok || strings.Contains(rec.Body.String(), "secret detail") {
				t.Errorf("body shows what it should not: %s", rec.Body)
			}
			if rec.Header().Get("Content-Type") != "application/json" || rec.Code == http.StatusOK {
				t.Errorf("headers %v", rec.Header())
			}
		})
	}
}

// validation is a Responder with a body of its own shape.
type validation struct{ field string }

func (v validation) Error() string { return "invalid " + v.field }

func (v validation) Respond(w http.ResponseWriter) {
	WriteJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []string{v.field}})
}

// Handle answers what the handler returns through Write: nil leaves the
// handler's own answer, an *Error and a Responder answer as they say
// without a log line, any other error is logged with the route (not the
// path) and answered 500 internal without its text.
func TestHandle(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		status   int
		body     string // a substring of the body
		logged   bool
		noInBody string
	}{
		{"nil: the handler's answer", nil, http.StatusOK, `"ok"`, false, ""},
		{"error", &Error{Status: http.StatusTooManyRequests, Code: "rate_limited", Message: "slow down", RetryAfter: "7"}, http.StatusTooManyRequests, `"code":"rate_limited"`, false, ""},
		{"responder, wrapped", fmt.Errorf("query: %w", validation{"limit"}), http.StatusUnprocessableEntity, `"detail":["limit"]`, false, ""},
		{"plain error", errors.New("open /srv/secret-path: permission denied"), http.StatusInternalServerError, `"code":"internal"`, true, "secret-path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs strings.Builder
			log := slog.New(slog.NewTextHandler(&logs, nil))
			mux := http.NewServeMux()
			mux.HandleFunc("GET /items/{id}", Handle(log, func(w http.ResponseWriter, _ *http.Request) error {
				if tt.err == nil {
					WriteJSON(w, http.StatusOK, "ok")
				}
				return tt.err
			}))
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/items/198.51.100.7", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.body) {
				t.Errorf("got %d %s, want %d with %s", resp.StatusCode, b, tt.status, tt.body)
			}
			if tt.noInBody != "" && strings.Contains(string(b), tt.noInBody) {
				t.Errorf("body shows the error's text: %s", b)
			}
			var e *Error
			if errors.As(tt.err, &e) && resp.Header.Get("Retry-After") != e.RetryAfter {
				t.Errorf("Retry-After %q, want %q", resp.Header.Get("Retry-After"), e.RetryAfter)
			}
			if got := strings.Contains(logs.String(), "request failed"); got != tt.logged {
				t.Errorf("logged = %v, want %v: %s", got, tt.logged, logs.String())
			}
			if tt.logged && (!strings.Contains(logs.String(), "/items/{id}") || strings.Contains(logs.String(), "198.51.100.7")) {
				t.Errorf("the log line should name the route, not the path: %s", logs.String())
			}
		})
	}
}
