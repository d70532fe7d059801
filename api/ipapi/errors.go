package ipapi

import (
	"net/http"
	"strconv"

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

// storeRetryAfter is the Retry-After of a 503 for an unreachable object
// store: the documented 503 response carries the header whatever its cause.
const storeRetryAfter = "10"

// Failures answered the same wherever they happen.
var (
	errUnauthorized     = &httpx.Error{Status: http.StatusUnauthorized, Code: CodeUnauthorized, Message: "missing or invalid X-Internal-Key: call this API through the gateway"}
	errNoSnapshot       = &httpx.Error{Status: http.StatusServiceUnavailable, Code: CodeNoSnapshot, Message: "no IP intelligence snapshot has been published yet", RetryAfter: "60"}
	errSnapshotRead     = &httpx.Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "the snapshot could not be read at this address"}
	errStoreUnreachable = unavailable("the object store is not reachable; retry shortly")
	errNotFoundPath     = notFound("no such path; see " + PathOpenAPI)
	errFileNotInStore   = notFound("the file is no longer in the object store; fetch " + PathDataset + " again")
)

func notFound(msg string) *httpx.Error {
	return &httpx.Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: msg}
}

func invalidIP(raw string) *httpx.Error {
	return &httpx.Error{Status: http.StatusBadRequest, Code: CodeInvalidIP, Message: "not an IPv4 or IPv6 address: " + strconv.Quote(truncate(raw, 64))}
}

// unavailable is a 503 of the object store, with its Retry-After.
func unavailable(msg string) *httpx.Error {
	return &httpx.Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Message: msg, RetryAfter: storeRetryAfter}
}

// exportPending is the 503 of an export whose request ended, or whose
// wait (Options.ExportWait) passed, while the snapshot's export table was
// still being built.
func exportPending(date string) *httpx.Error {
	return &httpx.Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, RetryAfter: "30",
		Message: "the CSV export of snapshot " + date + " is still being prepared (lookups and batch already answer from it); retry shortly"}
}

// exportFailed is the 503 of an export of a snapshot whose export table
// failed to build (the loader retries at its next snapshot check).
func exportFailed(date string) *httpx.Error {
	return &httpx.Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, RetryAfter: "60",
		Message: "the CSV export of snapshot " + date + " could not be prepared (lookups and batch answer from it); the service retries at its next snapshot check; retry later"}
}

func tierError(feature string, need Tier) *httpx.Error {
	return &httpx.Error{Status: http.StatusForbidden, Code: CodeTierRequired,
		Message: feature + " needs the " + need.String() + " tier or above", RequiredTier: need.String()}
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

// problems collects validation items; empty means valid. As an error it
// answers itself with the 422 body (httpx.Responder).
type problems []ValidationItem

func (p *problems) add(it ValidationItem) { *p = append(*p, it) }

// err is p as the handler's failure, nil when p is empty.
func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return p
}

// Error says how many problems (for logs).
func (p problems) Error() string { return strconv.Itoa(len(p)) + " invalid parameters" }

// Respond answers the 422 body.
func (p problems) Respond(w http.ResponseWriter) {
	httpx.WriteJSON(w, http.StatusUnprocessableEntity, ValidationError{Detail: p})
}
