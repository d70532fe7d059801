package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Option B errors.
var (
	// ErrSubscriptionInactive: the validation service says the subscription is not active.
	ErrSubscriptionInactive = errors.New("subscription inactive")
	// ErrNoCredits: the validation service says there are not enough credits.
	ErrNoCredits = errors.New("not enough credits")
	// ErrValidatorUnavailable: the validation service timed out, failed or
	// answered nonsense; the request fails closed.
	ErrValidatorUnavailable = errors.New("validation service unavailable")
)

// Validator is the client of the external validation service of Option B.
//
// Protocol (JSON over HTTP POST, "Authorization: Bearer <token>"):
//
//	POST <url>/check  {"key_id","user_id","tier","credits"}
//	  200 {"active": bool, "credits_remaining": int}
//	POST <url>/deduct {"key_id","user_id","credits","idempotency_key"}
//	  (also sent as the Idempotency-Key header)
//	  200 {"credits_remaining": int}; 402 not enough credits
//
// The key secret is never sent: the gateway verified it already, the
// service knows the account by key id and user id. A deduction is retried
// with the same idempotency key, so the service deducts it at most once.
type Validator struct {
	base    string
	token   string
	client  *http.Client
	retries int
}

// NewValidator returns a client for base (no trailing slash needed).
func NewValidator(base, token string, timeout time.Duration, retries int) *Validator {
	return &Validator{base: strings.TrimRight(base, "/"), token: token, retries: retries,
		client: &http.Client{Timeout: timeout}}
}

// CheckResult is the answer of /check.
type CheckResult struct {
	Active           bool  `json:"active"`
	CreditsRemaining int64 `json:"credits_remaining"`
}

// Check asks whether the subscription of keyID is active and has credits.
// It returns ErrSubscriptionInactive, ErrNoCredits or ErrValidatorUnavailable.
func (v *Validator) Check(ctx context.Context, rec *Record, credits int64) (CheckResult, error) {
	body := map[string]any{"key_id": rec.ID, "user_id": rec.User, "tier": rec.Tier, "credits": credits}
	var res CheckResult
	status, err := v.call(ctx, "/check", "", body, &res)
	if err != nil {
		return res, err
	}
	switch {
	case status == http.StatusPaymentRequired:
		return res, ErrNoCredits
	case status == http.StatusForbidden:
		return res, ErrSubscriptionInactive
	case status != http.StatusOK:
		return res, fmt.Errorf("%w: check answered %d", ErrValidatorUnavailable, status)
	case !res.Active:
		return res, ErrSubscriptionInactive
	case res.CreditsRemaining < credits:
		return res, ErrNoCredits
	}
	return res, nil
}

// Deduct takes credits from the subscription of rec, at most once per
// idempotency key however often it is retried.
func (v *Validator) Deduct(ctx context.Context, rec *Record, credits int64, idemKey string) (int64, error) {
	body := map[string]any{"key_id": rec.ID, "user_id": rec.User, "credits": credits, "idempotency_key": idemKey}
	var res struct {
		CreditsRemaining int64 `json:"credits_remaining"`
	}
	status, err := v.call(ctx, "/deduct", idemKey, body, &res)
	if err != nil {
		return 0, err
	}
	switch status {
	case http.StatusOK:
		return res.CreditsRemaining, nil
	case http.StatusPaymentRequired:
		return 0, ErrNoCredits
	case http.StatusForbidden:
		return 0, ErrSubscriptionInactive
	}
	return 0, fmt.Errorf("%w: deduct answered %d", ErrValidatorUnavailable, status)
}

// IdemRequest is what a deduction's idempotency key is bound to: the key,
// the customer's Idempotency-Key header and the request itself.
type IdemRequest struct {
	KeyID string
	// Customer is the customer's Idempotency-Key header; empty makes the
	// idempotency key random (the gateway's own retries still share it).
	Customer string
	// Method, Path (the backend path) and Query (raw, without apiKey) of the
	// request, Body its body as forwarded (nil when not read), and the
	// Credits it costs.
	Method, Path, Query string
	Body                []byte
	Credits             int64
}

// IdempotencyKey derives the deduction's idempotency key. With the
// customer's Idempotency-Key header it is a hash of that header bound to the
// key id, method, path, query, a digest of the body and the credits: the
// customer's retry of the same request is charged once, while the same
// header on another request (another batch, another query) is another
// deduction, so reusing a header never makes later requests free. Without
// the header it is random per request.
func IdempotencyKey(r IdemRequest) string {
	if r.Customer == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		return hex.EncodeToString(b[:])
	}
	body := sha256.Sum256(r.Body)
	h := sha256.New()
	// Each field is length-prefixed so no two requests share an encoding.
	for _, f := range []string{"netintel-idem-v2", r.KeyID, r.Customer, r.Method, r.Path, r.Query,
		string(body[:]), strconv.FormatInt(r.Credits, 10)} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// call posts body, retrying on transport errors, timeouts and 5xx. A 4xx
// is an answer, returned with its status.
func (v *Validator) call(ctx context.Context, path, idemKey string, body, out any) (int, error) {
	b, _ := json.Marshal(body)
	var last error
	for attempt := 0; attempt <= v.retries; attempt++ {
		if ctx.Err() != nil {
			break
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.base+path, bytes.NewReader(b))
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrValidatorUnavailable, err)
		}
		req.Header.Set("Content-Type", "application/json")
		if v.token != "" {
			req.Header.Set("Authorization", "Bearer "+v.token)
		}
		if idemKey != "" {
			req.Header.Set("Idempotency-Key", idemKey)
		}
		resp, err := v.client.Do(req)
		if err != nil {
			last = err
			continue
		}
		data, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode >= 500 || rerr != nil {
			last = fmt.Errorf("%s answered %d", path, resp.StatusCode)
			continue
		}
		if resp.StatusCode == http.StatusOK {
			if err := json.Unmarshal(data, out); err != nil {
				return 0, fmt.Errorf("%w: %s: bad body", ErrValidatorUnavailable, path)
			}
		}
		return resp.StatusCode, nil
	}
	if last == nil {
		last = ctx.Err()
	}
	return 0, fmt.Errorf("%w: %s: %w", ErrValidatorUnavailable, path, last)
}
