package httpx

import (
	"encoding/json"
	"errors"
	"fmt"
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
