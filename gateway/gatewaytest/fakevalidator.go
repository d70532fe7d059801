// Package gatewaytest holds test doubles of what the gateway talks to:
// a loopback fake of the external validation service of Option B.
package gatewaytest

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// FakeValidator is a loopback stand-in for the external validation service:
// it keeps credits per key id, deducts once per idempotency key, and can be
// told to stall or fail the next calls.
type FakeValidator struct {
	mu         sync.Mutex
	Credits    map[string]int64
	Inactive   map[string]bool
	seen       map[string]bool
	Deductions int // credits actually taken, summed
	Calls      map[string]int
	// StallNext makes the next n calls to path sleep before answering
	// (after doing their work), FailNext makes them answer 503 first.
	StallNext map[string]int
	FailNext  map[string]int
	Stall     time.Duration
	Token     string
}

// NewFakeValidator returns a fake with no credits.
func NewFakeValidator() *FakeValidator {
	return &FakeValidator{Credits: map[string]int64{}, Inactive: map[string]bool{}, seen: map[string]bool{},
		Calls: map[string]int{}, StallNext: map[string]int{}, FailNext: map[string]int{}}
}

// ServeHTTP answers /check and /deduct as docs/gateway.md describes.
func (f *FakeValidator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		KeyID   string `json:"key_id"`
		Credits int64  `json:"credits"`
		Idem    string `json:"idempotency_key"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	f.mu.Lock()
	f.Calls[r.URL.Path]++
	if f.Token != "" && r.Header.Get("Authorization") != "Bearer "+f.Token {
		f.mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if f.FailNext[r.URL.Path] > 0 {
		f.FailNext[r.URL.Path]--
		f.mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	var status int
	var body any
	switch r.URL.Path {
	case "/check":
		status, body = 200, map[string]any{"active": !f.Inactive[req.KeyID], "credits_remaining": f.Credits[req.KeyID]}
	case "/deduct":
		switch {
		case req.Idem == "" || r.Header.Get("Idempotency-Key") != req.Idem:
			status, body = 400, map[string]string{"error": "idempotency key missing"}
		case f.seen[req.Idem]:
			status, body = 200, map[string]any{"credits_remaining": f.Credits[req.KeyID]}
		case f.Credits[req.KeyID] < req.Credits:
			status, body = 402, map[string]string{"error": "no credits"}
		default:
			f.seen[req.Idem] = true
			f.Credits[req.KeyID] -= req.Credits
			f.Deductions += int(req.Credits)
			status, body = 200, map[string]any{"credits_remaining": f.Credits[req.KeyID]}
		}
	default:
		status, body = 404, map[string]string{}
	}
	stall := f.StallNext[r.URL.Path] > 0
	if stall {
		f.StallNext[r.URL.Path]--
	}
	f.mu.Unlock()
	if stall {
		select {
		case <-time.After(f.Stall):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// Deducted returns the credits actually taken so far.
func (f *FakeValidator) Deducted() int { f.mu.Lock(); defer f.mu.Unlock(); return f.Deductions }

// CallCount returns how many calls reached path.
func (f *FakeValidator) CallCount(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Calls[path]
}

// Set changes the fake under its lock.
func (f *FakeValidator) Set(fn func(f *FakeValidator)) { f.mu.Lock(); defer f.mu.Unlock(); fn(f) }
