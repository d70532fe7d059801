package secretapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/netintel/netintel/secrets"
)

type readBody struct {
	ID        *string `json:"id"`
	HashedKey *string `json:"hashedKey"`
}

// parseRead decodes a get/getFile body. ok is false for a malformed
// request: not JSON, an id that is not 22 base64url characters, or a
// hashedKey that is present but not 64 lowercase hex. A missing or empty
// hashedKey is well-formed and answers `wrong key`.
func parseRead(w http.ResponseWriter, r *http.Request) (id, token string, code int) {
	var b readBody
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxReadBody)).Decode(&b)
	switch {
	case tooLarge(err):
		return "", "", http.StatusRequestEntityTooLarge
	case err != nil, b.ID == nil, !secrets.ValidID(*b.ID):
		return "", "", http.StatusBadRequest
	case b.HashedKey != nil && *b.HashedKey != "" && !secrets.ValidHex64(*b.HashedKey):
		return "", "", http.StatusBadRequest
	}
	if b.HashedKey != nil {
		token = *b.HashedKey
	}
	return *b.ID, token, 0
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	id, token, code := parseRead(w, r)
	if code == http.StatusRequestEntityTooLarge {
		plainError(w, code)
		return
	}
	if code != 0 {
		plainError(w, http.StatusOK)
		return
	}
	o, err := h.svc.Read(r.Context(), id, token, secrets.Text)
	if err != nil {
		h.readFailed(w, err, http.StatusOK)
		return
	}
	defer o.Close()
	if o.Body == nil {
		writeJSON(w, http.StatusOK, statusBody{Status: stOK, CryptedMessage: o.Msg, ViewsLeft: &o.ViewsLeft, ExpiresIn: &o.ExpiresIn})
		return
	}
	h.streamText(w, o)
}

// streamText writes the answer of get for a text kept in the object store:
// the bytes writeJSON would write, with the ciphertext copied from the
// store into the response instead of being held in memory.
func (h *Handler) streamText(w http.ResponseWriter, o *secrets.Opened) {
	head := `{"status":"ok","cryptedMessage":"`
	tail := `","viewsLeft":` + itoa(int64(o.ViewsLeft)) + `,"expiresIn":` + itoa(o.ExpiresIn) + "}\n"
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", itoa(int64(len(head))+o.Size+int64(len(tail))))
	setOutcome(w, stOK)
	w.WriteHeader(http.StatusOK)
	_, err := io.WriteString(w, head)
	if err == nil {
		var n int64
		n, err = io.Copy(w, &wireText{r: io.LimitReader(o.Body, o.Size)})
		if err == nil && n != o.Size {
			err = fmt.Errorf("ciphertext has %d bytes, its record says %d", n, o.Size)
		}
	}
	if err == nil {
		_, err = io.WriteString(w, tail)
	}
	if err != nil {
		// The status is sent; a short body (Content-Length) tells the client.
		h.log.Warn("send text", "err", err)
	}
}

// wireText passes the characters of a text ciphertext on the wire
// (base64url and "."), which need no escaping inside a JSON string, and
// fails on any other byte rather than write broken JSON.
type wireText struct{ r io.Reader }

func (t *wireText) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	for _, c := range p[:n] {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return 0, errors.New("stored text ciphertext has a byte outside base64url")
		}
	}
	return n, err
}

// readFailed answers a failed read; serverCode is the status of a server
// error (200 for get, 500 for getFile).
func (h *Handler) readFailed(w http.ResponseWriter, err error, serverCode int) {
	switch {
	case errors.Is(err, secrets.ErrNoMessage):
		writeJSON(w, http.StatusOK, statusBody{Status: stNoMessage})
	case errors.Is(err, secrets.ErrWrongKey):
		writeJSON(w, http.StatusOK, statusBody{Status: stWrongKey})
	case errors.Is(err, secrets.ErrRetry):
		writeJSON(w, http.StatusServiceUnavailable, statusBody{Status: stRetry})
	default:
		h.log.Error("read secret", "err", err)
		plainError(w, serverCode)
	}
}

func (h *Handler) getFile(w http.ResponseWriter, r *http.Request) {
	id, token, code := parseRead(w, r)
	if code != 0 {
		plainError(w, code)
		return
	}
	o, err := h.svc.Read(r.Context(), id, token, secrets.File)
	if err != nil {
		h.readFailed(w, err, http.StatusInternalServerError)
		return
	}
	defer o.Close()
	hd := w.Header()
	views, exp := itoa(int64(o.ViewsLeft)), itoa(o.ExpiresIn)
	hd.Set("Content-Type", "application/octet-stream")
	hd.Set("Content-Length", itoa(o.Size))
	hd.Set("X-Svc-Views-Left", views)
	hd.Set("X-Svc-Expires-In", exp)
	// Set directly: Go would canonicalize these names to X-1time-...,
	// and the spec spells them X-1Time-... (header names are
	// case-insensitive, but some clients compare them verbatim).
	hd["X-1Time-Views-Left"] = []string{views}
	hd["X-1Time-Expires-In"] = []string{exp}
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, o.Body); err != nil {
		h.log.Warn("send file", "err", err)
	}
}

func (h *Handler) secretStatus(w http.ResponseWriter, r *http.Request) {
	var b struct {
		IDs []json.RawMessage `json:"ids"`
	}
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxStatusBody)).Decode(&b)
	if tooLarge(err) {
		plainError(w, http.StatusRequestEntityTooLarge)
		return
	}
	if err != nil {
		plainError(w, http.StatusBadRequest)
		return
	}
	var ids []string
	seen := map[string]bool{}
	for _, raw := range b.IDs {
		var id string
		if json.Unmarshal(raw, &id) != nil || !secrets.ValidID(id) || seen[id] {
			continue
		}
		seen[id] = true
		if ids = append(ids, id); len(ids) == MaxStatusIDs {
			break
		}
	}
	st, err := h.svc.Status(r.Context(), ids)
	if err != nil {
		h.log.Error("secret status", "err", err)
		plainError(w, http.StatusInternalServerError)
		return
	}
	// secrets is always present, {} when no id was well-formed.
	writeJSON(w, http.StatusOK, struct {
		Status  string          `json:"status"`
		Secrets map[string]bool `json:"secrets"`
	}{stOK, st})
}
