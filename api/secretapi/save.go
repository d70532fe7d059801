package secretapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/netintel/netintel/internal/httpx"
	"github.com/netintel/netintel/secrets"
)

// flexInt is an integer field that existing clients send as a JSON number
// or a numeric string; null means absent. Integral floats are accepted;
// values beyond int64 saturate (and are then out of range).
type flexInt struct {
	set bool
	v   int64
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if len(s) >= 2 && s[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	v, err := parseInt(s)
	if err != nil {
		return err
	}
	f.set, f.v = true, v
	return nil
}

func (f flexInt) ptr() *int64 {
	if !f.set {
		return nil
	}
	return &f.v
}

// parseInt reads an integer written as digits or as an integral float.
func parseInt(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f != math.Trunc(f) {
		return 0, fmt.Errorf("not an integer: %q", s)
	}
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64, nil
	case f <= math.MinInt64:
		return math.MinInt64, nil
	}
	return int64(f), nil
}

type saveSecretBody struct {
	SecretMessage *string `json:"secretMessage"`
	ReadTokenHash *string `json:"readTokenHash"`
	HashedKey     *string `json:"hashedKey"`
	V             flexInt `json:"v"`
	Duration      flexInt `json:"duration"`
	Views         flexInt `json:"views"`
}

func (h *Handler) saveSecret(w http.ResponseWriter, r *http.Request) {
	var body saveSecretBody
	minRate(w, r, h.minRate, h.rateWindow)
	r.Body = http.MaxBytesReader(w, r.Body, MaxTextBody)
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		switch {
		case tooLarge(err):
			saveError(w, http.StatusRequestEntityTooLarge)
		case tooSlow(err):
			slowBody(w, saveError)
		default:
			saveError(w, http.StatusOK)
		}
		return
	}
	drain(r)
	raw := secrets.Raw{ReadTokenHash: body.ReadTokenHash, HashedKey: body.HashedKey, V: body.V.ptr(), Duration: body.Duration.ptr(), Views: body.Views.ptr()}
	p, err := raw.Normalize(false)
	if err != nil || body.SecretMessage == nil || !secrets.ValidTextCiphertext(*body.SecretMessage) {
		saveError(w, http.StatusOK)
		return
	}
	id, err := h.svc.SaveText(r.Context(), p, *body.SecretMessage)
	if err != nil {
		h.log.Error("save secret", "err", err)
		saveError(w, http.StatusOK)
		return
	}
	writeJSON(w, http.StatusOK, statusBody{Status: stOK, NewID: id})
}

// fileForm is the multipart fields of saveFile.
type fileForm struct {
	raw      secrets.Raw
	staged   *secrets.Staged    // single request
	slice    *secrets.SliceData // chunked
	hasFile  bool
	badField bool
}

func (h *Handler) saveFile(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	chunked := q.Has("u") || q.Has("i") || q.Has("n")
	fail := func(code int) {
		if chunked {
			plainError(w, code)
		} else {
			saveError(w, code)
		}
	}
	var sl secrets.Slice
	if chunked {
		i, ierr := strconv.Atoi(q.Get("i"))
		n, nerr := strconv.Atoi(q.Get("n"))
		sl = secrets.Slice{Upload: q.Get("u"), Index: i, Count: n}
		if ierr != nil || nerr != nil || !secrets.ValidID(sl.Upload) || n < 1 || n > secrets.MaxSlices || i < 0 || i >= n {
			fail(http.StatusBadRequest)
			return
		}
	}
	release, code := h.open.acquire(httpx.ClientIP(r, h.trustProxy))
	if code != 0 {
		w.Header().Set("Retry-After", "1")
		if code == http.StatusServiceUnavailable && chunked {
			writeJSON(w, code, statusBody{Status: stRetry})
		} else {
			fail(code)
		}
		setOutcome(w, "too_many_open")
		return
	}
	defer release()
	minRate(w, r, h.minRate, h.rateWindow)
	r.Body = http.MaxBytesReader(w, r.Body, MaxUploadBody)
	form, err := h.readForm(r, chunked)
	defer func() { _ = form.slice.Close() }() // a spool file, also when reading failed
	if err != nil {
		if form.staged != nil {
			h.svc.Drop(r.Context(), *form.staged)
		}
		h.formError(w, err, chunked)
		return
	}
	drain(r)
	p, perr := form.raw.Normalize(chunked)
	valid := perr == nil && !form.badField
	if !chunked {
		h.commitFile(w, r, form, p, valid)
		return
	}
	if !valid || !form.hasFile {
		plainError(w, http.StatusBadRequest)
		return
	}
	sl.Params = p
	id, err := h.svc.SaveSlice(r.Context(), sl, form.slice)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, statusBody{Status: stOK, NewID: id})
	case errors.Is(err, secrets.ErrInvalid):
		plainError(w, http.StatusBadRequest)
	case errors.Is(err, secrets.ErrRetry):
		writeJSON(w, http.StatusServiceUnavailable, statusBody{Status: stRetry})
	default:
		h.log.Error("save slice", "err", err)
		plainError(w, http.StatusInternalServerError)
	}
}

// formError answers a save whose form could not be read: too slow, too
// large, malformed, or a failure of ours (logged). A one-request save
// answers as the original service does (200 with an error status), a
// chunked one with the HTTP status.
func (h *Handler) formError(w http.ResponseWriter, err error, chunked bool) {
	fail := saveError
	if chunked {
		fail = plainError
	}
	switch {
	case tooSlow(err):
		slowBody(w, fail)
	case tooLarge(err):
		fail(w, http.StatusRequestEntityTooLarge)
	case errors.Is(err, errBadForm) && chunked:
		fail(w, http.StatusBadRequest)
	case errors.Is(err, errBadForm):
		fail(w, http.StatusOK)
	default:
		h.log.Error("save file", "err", err)
		if chunked {
			fail(w, http.StatusInternalServerError)
		} else {
			fail(w, http.StatusOK)
		}
	}
}

// commitFile turns a one-request upload, staged while its form was read,
// into a secret; an invalid form drops what was staged.
func (h *Handler) commitFile(w http.ResponseWriter, r *http.Request, form fileForm, p secrets.Params, valid bool) {
	if !valid || form.staged == nil {
		if form.staged != nil {
			h.svc.Drop(r.Context(), *form.staged)
		}
		saveError(w, http.StatusOK)
		return
	}
	id, err := h.svc.CommitFile(r.Context(), *form.staged, p)
	if err != nil {
		if !errors.Is(err, secrets.ErrInvalid) {
			h.log.Error("save file", "err", err)
		}
		saveError(w, http.StatusOK)
		return
	}
	writeJSON(w, http.StatusOK, statusBody{Status: stOK, NewID: id})
}

var errBadForm = errors.New("malformed form")

// readForm reads the multipart body part by part: a single request's file
// streams to the object store, a slice to a spool file (at most 4 MiB,
// hashed on the way); neither is held in memory.
func (h *Handler) readForm(r *http.Request, chunked bool) (fileForm, error) {
	var f fileForm
	mr, err := r.MultipartReader()
	if err != nil {
		return f, fmt.Errorf("%w: %w", errBadForm, err)
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if tooLarge(err) {
				return f, err
			}
			return f, fmt.Errorf("%w: %w", errBadForm, err)
		}
		name := part.FormName()
		if name == "file" {
			if f.hasFile {
				return f, fmt.Errorf("%w: two file parts", errBadForm)
			}
			f.hasFile = true
			if chunked {
				d, err := h.svc.SpoolSlice(part)
				if errors.Is(err, secrets.ErrInvalid) {
					return f, fmt.Errorf("%w: %w", errBadForm, err)
				}
				if err != nil {
					return f, partErr(err)
				}
				f.slice = d
				continue
			}
			st, err := h.svc.StageFile(r.Context(), part)
			if err != nil {
				return f, partErr(err)
			}
			f.staged = &st
			continue
		}
		val, err := readField(part)
		if err != nil {
			return f, err
		}
		f.setField(name, val)
	}
	return f, nil
}

// partErr tells a broken or oversized body (the caller's fault) from a
// storage failure.
func partErr(err error) error {
	if tooLarge(err) || tooSlow(err) {
		return err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "multipart") {
		return fmt.Errorf("%w: %w", errBadForm, err)
	}
	return err
}

func readField(part *multipart.Part) (string, error) {
	b, err := io.ReadAll(io.LimitReader(part, maxField+1))
	if err != nil {
		if tooLarge(err) {
			return "", err
		}
		return "", fmt.Errorf("%w: %w", errBadForm, err)
	}
	if len(b) > maxField {
		return "", fmt.Errorf("%w: field %q too long", errBadForm, part.FormName())
	}
	return strings.TrimSpace(string(b)), nil
}

func (f *fileForm) setField(name, val string) {
	num := func() *int64 {
		if val == "" {
			return nil
		}
		v, err := parseInt(val)
		if err != nil {
			f.badField = true
			return nil
		}
		return &v
	}
	switch name {
	case "readTokenHash":
		f.raw.ReadTokenHash = &val
	case "hashedKey":
		f.raw.HashedKey = &val
	case "v":
		f.raw.V = num()
	case "duration":
		f.raw.Duration = num()
	case "views":
		f.raw.Views = num()
	}
}
