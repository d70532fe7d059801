// Package fakehost is an in-memory fake of a one-time secret host, written
// from spec/one-time-secrets.md for the client's tests: it keeps secrets in
// a map, counts views, assembles chunked uploads, and can inject the faults
// a client must handle (429, 503 retry, 5xx, dropped connections, a host
// that predates chunking or lacks scheme 3). It is test support, not a
// server: the real host lives in package secrets and api/secretapi.
package fakehost

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// Fault is an answer injected instead of the normal one.
type Fault struct {
	// Code and Body are written as is (Body as JSON when it starts with {).
	Code int
	Body string
	// Drop closes the connection without an answer (a network error).
	Drop bool
}

// Pass is a Fault that lets one request through untouched.
var Pass = Fault{}

// Request is what the fake saw of one API call.
type Request struct {
	Endpoint  string
	Query     map[string]string
	UserAgent string
	Answer    int
}

// Host is the fake. Its zero value is not usable; call New.
type Host struct {
	// Schemes is what /api/ss advertises.
	Schemes []int
	// Legacy makes saveFile ignore u, i and n, as hosts predating chunked
	// uploads do: every slice is stored as a whole file.
	Legacy bool

	mu       sync.Mutex
	secrets  map[string]*secret
	uploads  map[string]*upload
	faults   map[string][]Fault
	requests []Request
}

type secret struct {
	data      []byte
	text      bool
	tokenHash string
	views     int
	expires   time.Time
}

type upload struct {
	n      int
	fields string
	parts  map[int][]byte
	id     string
}

// New returns an empty fake host that supports schemes 0 and 3.
func New() *Host {
	return &Host{Schemes: []int{0, 3}, secrets: map[string]*secret{}, uploads: map[string]*upload{}, faults: map[string][]Fault{}}
}

// Inject queues faults for an endpoint ("saveFile", "get", ...): each
// request takes the next one until the queue is empty.
func (h *Host) Inject(endpoint string, f ...Fault) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.faults[endpoint] = append(h.faults[endpoint], f...)
}

// Requests returns the calls seen so far.
func (h *Host) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Request(nil), h.requests...)
}

// Expire makes a secret expire now.
func (h *Host) Expire(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, ok := h.secrets[id]; ok {
		s.expires = time.Now().Add(-time.Second)
	}
}

// Stored returns the stored ciphertext of id (text as its wire string).
func (h *Host) Stored(id string) ([]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.secrets[id]
	if !ok {
		return nil, false
	}
	return s.data, true
}

// Mount adds the API routes to mux.
func (h *Host) Mount(mux *http.ServeMux) {
	for name, fn := range map[string]func(http.ResponseWriter, *http.Request) int{
		"ss": h.ss, "saveSecret": h.saveSecret, "saveFile": h.saveFile,
		"get": h.get, "getFile": h.getFile, "secretStatus": h.status,
	} {
		mux.HandleFunc("/api/"+name, func(w http.ResponseWriter, r *http.Request) {
			q := map[string]string{}
			for k := range r.URL.Query() {
				q[k] = r.URL.Query().Get(k)
			}
			rec := Request{Endpoint: name, Query: q, UserAgent: r.UserAgent()}
			h.mu.Lock()
			var f *Fault
			if fs := h.faults[name]; len(fs) > 0 {
				f, h.faults[name] = &fs[0], fs[1:]
				if *f == Pass {
					f = nil
				}
			}
			h.mu.Unlock()
			switch {
			case r.Method != http.MethodPost:
				w.WriteHeader(http.StatusMethodNotAllowed)
				rec.Answer = 405
			case f != nil && f.Drop:
				_, _ = io.Copy(io.Discard, r.Body)
				if hj, ok := w.(http.Hijacker); ok {
					if c, _, err := hj.Hijack(); err == nil {
						c.Close()
					}
				}
				rec.Answer = -1
			case f != nil:
				_, _ = io.Copy(io.Discard, r.Body)
				if len(f.Body) > 0 && f.Body[0] == '{' {
					w.Header().Set("Content-Type", "application/json")
				}
				w.WriteHeader(f.Code)
				_, _ = io.WriteString(w, f.Body)
				rec.Answer = f.Code
			default:
				rec.Answer = fn(w, r)
			}
			h.mu.Lock()
			h.requests = append(h.requests, rec)
			h.mu.Unlock()
		})
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
	return code
}

var (
	hexRe = regexp.MustCompile(`^[0-9a-f]{64}$`)
	idRe  = regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`)
	msgRe = regexp.MustCompile(`^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$`)
)

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	const a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	out := make([]byte, 22)
	for i := range out {
		out[i] = a[int(b[i%16]+byte(i*7))%64]
	}
	return string(out)
}

func clamp(dur, views int) (int, int) {
	if dur < 1 || dur > 2592000 {
		dur = 86400
	}
	views = max(1, min(views, 10))
	return dur, views
}

func (h *Host) ss(w http.ResponseWriter, _ *http.Request) int {
	return writeJSON(w, 200, map[string]any{"apiVersion": 1, "saveSchemes": h.Schemes, "secretsSaved": len(h.secrets)})
}

func (h *Host) store(s *secret) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := newID()
	h.secrets[id] = s
	return id
}

func (h *Host) saveSecret(w http.ResponseWriter, r *http.Request) int {
	var b struct {
		SecretMessage string `json:"secretMessage"`
		ReadTokenHash string `json:"readTokenHash"`
		V             int    `json:"v"`
		Duration      int    `json:"duration"`
		Views         *int   `json:"views"`
	}
	if json.NewDecoder(io.LimitReader(r.Body, 25<<20)).Decode(&b) != nil || b.V != 3 || !hexRe.MatchString(b.ReadTokenHash) || !msgRe.MatchString(b.SecretMessage) {
		return writeJSON(w, 200, map[string]string{"status": "error", "newId": "0"})
	}
	views := 1
	if b.Views != nil {
		views = *b.Views
	}
	dur, views := clamp(b.Duration, views)
	id := h.store(&secret{data: []byte(b.SecretMessage), text: true, tokenHash: b.ReadTokenHash, views: views, expires: time.Now().Add(time.Duration(dur) * time.Second)})
	return writeJSON(w, 200, map[string]string{"status": "ok", "newId": id})
}

func (h *Host) saveFile(w http.ResponseWriter, r *http.Request) int {
	bad := func(code int) int { return writeJSON(w, code, map[string]string{"status": "error", "newId": "0"}) }
	if err := r.ParseMultipartForm(8 << 20); err != nil {
		return bad(400)
	}
	f, _, err := r.FormFile("file")
	if err != nil {
		return bad(400)
	}
	data, _ := io.ReadAll(f)
	th, v := r.FormValue("readTokenHash"), r.FormValue("v")
	dur, derr := strconv.Atoi(r.FormValue("duration"))
	views, verr := strconv.Atoi(r.FormValue("views"))
	if r.FormValue("views") == "" {
		views, verr = 1, nil
	}
	if !hexRe.MatchString(th) || v != "3" || len(data) == 0 {
		return bad(400)
	}
	q := r.URL.Query()
	if h.Legacy || q.Get("u") == "" {
		dur, views = clamp(dur, views)
		id := h.store(&secret{data: data, tokenHash: th, views: views, expires: time.Now().Add(time.Duration(dur) * time.Second)})
		return writeJSON(w, 200, map[string]string{"status": "ok", "newId": id})
	}
	u := q.Get("u")
	i, ierr := strconv.Atoi(q.Get("i"))
	n, nerr := strconv.Atoi(q.Get("n"))
	if !idRe.MatchString(u) || ierr != nil || nerr != nil || n < 1 || n > 25 || i < 0 || i >= n ||
		derr != nil || dur < 1 || dur > 2592000 || verr != nil || views < 1 || views > 10 {
		return bad(400)
	}
	if i < n-1 && len(data) != 4194304 {
		return bad(400)
	}
	fields := th + "|" + strconv.Itoa(dur) + "|" + strconv.Itoa(views) + "|" + strconv.Itoa(n)
	h.mu.Lock()
	up, ok := h.uploads[u]
	if !ok {
		up = &upload{n: n, fields: fields, parts: map[int][]byte{}}
		h.uploads[u] = up
	}
	if up.fields != fields {
		h.mu.Unlock()
		return bad(400)
	}
	if prev, ok := up.parts[i]; ok && string(prev) != string(data) {
		h.mu.Unlock()
		return bad(400)
	}
	up.parts[i] = data
	if up.id == "" && len(up.parts) == n {
		var all []byte
		for j := range n {
			all = append(all, up.parts[j]...)
		}
		up.id = newID()
		h.secrets[up.id] = &secret{data: all, tokenHash: th, views: views, expires: time.Now().Add(time.Duration(dur) * time.Second)}
	}
	id := up.id
	h.mu.Unlock()
	if id != "" {
		return writeJSON(w, 200, map[string]string{"status": "ok", "newId": id})
	}
	return writeJSON(w, 200, map[string]string{"status": "ok"})
}

// take checks a read and uses a view. It returns the secret and the
// views left, or a status.
func (h *Host) take(r *http.Request, text bool) (*secret, int, string) {
	var b struct {
		ID        string `json:"id"`
		HashedKey string `json:"hashedKey"`
	}
	if json.NewDecoder(io.LimitReader(r.Body, 1024)).Decode(&b) != nil || !idRe.MatchString(b.ID) || !hexRe.MatchString(b.HashedKey) {
		return nil, 0, "error"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.secrets[b.ID]
	if !ok || s.text != text || time.Now().After(s.expires) {
		delete(h.secrets, b.ID)
		return nil, 0, "no message"
	}
	sum := sha256.Sum256([]byte(b.HashedKey))
	if hex.EncodeToString(sum[:]) != s.tokenHash {
		return nil, 0, "wrong key"
	}
	s.views--
	if s.views <= 0 {
		delete(h.secrets, b.ID)
	}
	return s, s.views, "ok"
}

func (h *Host) get(w http.ResponseWriter, r *http.Request) int {
	s, left, st := h.take(r, true)
	if st != "ok" {
		return writeJSON(w, 200, map[string]string{"status": st})
	}
	return writeJSON(w, 200, map[string]any{"status": "ok", "cryptedMessage": string(s.data), "viewsLeft": left, "expiresIn": int(time.Until(s.expires).Seconds())})
}

func (h *Host) getFile(w http.ResponseWriter, r *http.Request) int {
	s, left, st := h.take(r, false)
	switch st {
	case "ok":
	case "error":
		return writeJSON(w, 400, map[string]string{"status": st})
	default:
		return writeJSON(w, 200, map[string]string{"status": st})
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(s.data)))
	w.Header().Set("X-Svc-Views-Left", strconv.Itoa(left))
	w.Header().Set("X-Svc-Expires-In", strconv.Itoa(int(time.Until(s.expires).Seconds())))
	_, _ = w.Write(s.data)
	return 200
}

func (h *Host) status(w http.ResponseWriter, r *http.Request) int {
	var b struct {
		IDs []string `json:"ids"`
	}
	_ = json.NewDecoder(io.LimitReader(r.Body, 8<<10)).Decode(&b)
	out := map[string]bool{}
	h.mu.Lock()
	for i, id := range b.IDs {
		if i >= 128 || !idRe.MatchString(id) {
			continue
		}
		s, ok := h.secrets[id]
		out[id] = ok && time.Now().Before(s.expires)
	}
	h.mu.Unlock()
	return writeJSON(w, 200, map[string]any{"status": "ok", "secrets": out})
}
