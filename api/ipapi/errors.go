package ipapi

import (
	"net/http"

	"github.com/netintel/netintel/internal/httpx"
)

// Error codes of the JSON error body {"error": {"code", "message"}} used for
// every non-422 failure (the spec gives 422 its own shape, ValidationError).
const (
	CodeUnauthorized = "unauthorized"  // 401: X-Internal-Key missing or wrong
	CodeTierRequired = "tier_required" // 403: the feature needs a higher tier
	CodeInvalidIP    = "invalid_ip"    // 400: the path's address does not parse
	CodeNotFound     = "not_found"     // 404: no assets for the address, or no such file
	CodeNoSnapshot   = "no_snapshot"   // 503: nothing has been published yet
	CodeRateLimited  = "rate_limited"  // 429: public endpoint limit reached
	CodeUnavailable  = "unavailable"   // 503: the object store failed
	CodeInternal     = "internal"      // 500: the snapshot is corrupt at the address
	// CodeMethodNotAllowed is 405: another method than the path's (Allow names it).
	CodeMethodNotAllowed = "method_not_allowed"
)

// ErrorBody is the JSON error body of every non-422 failure: the one every
// JSON API of netintel answers with (httpx.ErrorBody).
type ErrorBody = httpx.ErrorBody

// ErrorDetail says what went wrong. RequiredTier is set on 403 only.
type ErrorDetail = httpx.Error

func writeError(w http.ResponseWriter, status int, code, msg string) {
	httpx.WriteError(w, status, code, msg)
}

// storeRetryAfter is the Retry-After of a 503 for an unreachable object
// store: the documented 503 response carries the header whatever its cause.
const storeRetryAfter = "10"

func writeUnavailable(w http.ResponseWriter, msg string) {
	httpx.Write(w, &httpx.Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Message: msg, RetryAfter: storeRetryAfter})
}

func writeTierError(w http.ResponseWriter, feature string, need Tier) {
	httpx.Write(w, &httpx.Error{Status: http.StatusForbidden, Code: CodeTierRequired,
		Message: feature + " needs the " + need.String() + " tier or above", RequiredTier: need.String()})
}

// ValidationError is the spec's 422 body.
type ValidationError struct {
	Detail []ValidationItem `json:"detail"`
}

// ValidationItem is one problem: where (loc), what (msg, type), the
// offending input and, where it helps, the constraint (ctx).
type ValidationItem struct {
	Loc   []any          `json:"loc"`
	Msg   string         `json:"msg"`
	Type  string         `json:"type"`
	Input any            `json:"input,omitempty"`
	Ctx   map[string]any `json:"ctx,omitempty"`
}

// problems collects validation items; empty means valid.
type problems []ValidationItem

func (p *problems) add(it ValidationItem) { *p = append(*p, it) }

func (p problems) write(w http.ResponseWriter) {
	httpx.WriteJSON(w, http.StatusUnprocessableEntity, ValidationError{Detail: p})
}
