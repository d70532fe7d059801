package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// Capabilities is what a host reports on /api/ss.
type Capabilities struct {
	APIVersion  int
	SaveSchemes []int
}

// Capabilities returns host's /api/ss answer, cached per host for the
// life of the Client (only successful answers are cached).
func (c *Client) Capabilities(ctx context.Context, host string) (Capabilities, error) {
	origin, err := NormalizeHost(host)
	if err != nil {
		return Capabilities{}, err
	}
	c.mu.Lock()
	cp, ok := c.caps[origin]
	c.mu.Unlock()
	if ok {
		return cp, nil
	}
	resp, err := c.do(ctx, request{origin: origin, path: "ss"})
	if err != nil {
		return Capabilities{}, fmt.Errorf("check host: %w", err)
	}
	defer drain(resp)
	if resp.StatusCode == http.StatusTooManyRequests {
		return Capabilities{}, fmt.Errorf("check host: %w", ErrRateLimited)
	}
	if resp.StatusCode != http.StatusOK {
		return Capabilities{}, fmt.Errorf("check host: %w: HTTP %d", ErrServer, resp.StatusCode)
	}
	r, err := decodeJSON(resp, 1<<20)
	if err != nil {
		return Capabilities{}, fmt.Errorf("check host: %w", err)
	}
	cp = Capabilities{APIVersion: r.APIVersion, SaveSchemes: r.SaveSchemes}
	c.mu.Lock()
	c.caps[origin] = cp
	c.mu.Unlock()
	return cp, nil
}

// CheckHost confirms that host supports save scheme 3 (ErrUnsupportedHost
// otherwise). Saves call it first.
func (c *Client) CheckHost(ctx context.Context, host string) error {
	cp, err := c.Capabilities(ctx, host)
	if err != nil {
		return err
	}
	if !slices.Contains(cp.SaveSchemes, saveScheme) {
		return fmt.Errorf("%w: it advertises save schemes %v", ErrUnsupportedHost, cp.SaveSchemes)
	}
	return nil
}

// prepare validates a save before anything is sent and derives its keys.
func (c *Client) prepare(ctx context.Context, host string, o SaveOptions) (origin, rk string, k Keys, views, secs int, err error) {
	if origin, err = NormalizeHost(host); err != nil {
		return
	}
	if views, secs, err = o.normalize(); err != nil {
		return
	}
	if err = c.CheckHost(ctx, origin); err != nil {
		return
	}
	if rk, err = NewRandomKey(); err != nil {
		return
	}
	k = DeriveKeys(FullSecretKey(o.Passphrase, rk))
	return
}

// CreateText encrypts text and saves it on host, returning its link. The
// passphrase, when set, is needed to read it and is not part of the link.
func (c *Client) CreateText(ctx context.Context, host, text string, o SaveOptions) (Link, error) {
	if text == "" {
		return Link{}, fmt.Errorf("%w: empty secret", ErrInvalidOption)
	}
	origin, rk, k, views, secs, err := c.prepare(ctx, host, o)
	if err != nil {
		return Link{}, err
	}
	wire, err := k.EncryptText(text)
	if err != nil {
		return Link{}, err
	}
	body, err := jsonBody(map[string]any{"secretMessage": wire, "readTokenHash": k.ReadTokenHash(), "v": saveScheme, "duration": secs, "views": views})
	if err != nil {
		return Link{}, err
	}
	if _, n := body(); n > MaxTextBody {
		return Link{}, fmt.Errorf("%w: secret too large (%d bytes encrypted, at most %d)", ErrInvalidOption, n, MaxTextBody)
	}
	id, err := c.save(ctx, request{origin: origin, path: "saveSecret", contentType: "application/json", body: body})
	if err != nil {
		return Link{}, fmt.Errorf("save secret: %w", err)
	}
	return Link{Kind: KindText, Origin: origin, RandomKey: rk, ID: id}, nil
}

// save sends a whole save (saveSecret or single-request saveFile),
// retrying with backoff on 429 only, and returns the new id.
func (c *Client) save(ctx context.Context, rq request) (string, error) {
	for attempt := 0; ; attempt++ {
		resp, err := c.do(ctx, rq)
		if err != nil {
			return "", err
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			if attempt >= c.o.Retries {
				drain(resp)
				return "", ErrRateLimited
			}
			err := c.sleep(ctx, attempt, resp)
			drain(resp)
			if err != nil {
				return "", err
			}
			continue
		}
		r, err := decodeJSON(resp, 1<<20)
		drain(resp)
		if err != nil {
			return "", err
		}
		id := r.newID()
		if resp.StatusCode != http.StatusOK || r.Status != "ok" {
			return "", fmt.Errorf("%w: HTTP %d, status %q", ErrServer, resp.StatusCode, r.Status)
		}
		if !ValidID(id) {
			return "", fmt.Errorf("%w: no valid newId in the answer", ErrServer)
		}
		return id, nil
	}
}

// readStatus maps a read's JSON failure to an error. ok is handled by the
// caller.
func readStatus(code int, status string) error {
	switch {
	case code == http.StatusTooManyRequests:
		return ErrRateLimited
	case status == "wrong key":
		return ErrWrongKey
	case status == "no message":
		return ErrNoMessage
	default:
		return fmt.Errorf("%w: HTTP %d, status %q", ErrServer, code, status)
	}
}

// isRetry reports a 503 with a JSON body, which read then checks for
// {"status":"retry"}: the only read failure that may be retried.
func isRetry(resp *http.Response) bool {
	if resp.StatusCode != http.StatusServiceUnavailable {
		return false
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return ct == "application/json"
}

// read posts a get or getFile and retries only on 503 status retry. It
// returns the final response (body open) or an error.
func (c *Client) read(ctx context.Context, l Link, path, passphrase string) (*http.Response, error) {
	k := DeriveKeys(FullSecretKey(passphrase, l.RandomKey))
	body, err := jsonBody(map[string]string{"id": l.ID, "hashedKey": k.ReadToken})
	if err != nil {
		return nil, err
	}
	rq := request{origin: l.Origin, path: path, contentType: "application/json", body: body}
	for attempt := 0; ; attempt++ {
		resp, err := c.do(ctx, rq)
		if err != nil {
			return nil, err // never retried: the read may have used a view
		}
		if isRetry(resp) {
			r, err := decodeJSON(resp, 64<<10)
			if err == nil && r.Status == "retry" && attempt < c.o.Retries {
				err := c.sleep(ctx, attempt, resp)
				drain(resp)
				if err != nil {
					return nil, err
				}
				continue
			}
			drain(resp)
			return nil, fmt.Errorf("%w: HTTP 503 (busy)", ErrServer)
		}
		return resp, nil
	}
}

// ReadText reads a text link, using one view, and returns the secret.
// A wrong or missing passphrase gives ErrWrongKey and uses no view.
func (c *Client) ReadText(ctx context.Context, l Link, passphrase string) (string, ReadInfo, error) {
	info := ReadInfo{ViewsLeft: -1}
	if l.Kind != KindText {
		return "", info, fmt.Errorf("%w: not a text link (/v/)", ErrBrokenLink)
	}
	if err := l.check(); err != nil {
		return "", info, err
	}
	resp, err := c.read(ctx, l, "get", passphrase)
	if err != nil {
		return "", info, fmt.Errorf("read secret: %w", err)
	}
	defer drain(resp)
	if resp.StatusCode == http.StatusTooManyRequests {
		return "", info, fmt.Errorf("read secret: %w", ErrRateLimited)
	}
	r, err := decodeJSON(resp, MaxTextBody+1<<20)
	if err != nil {
		return "", info, fmt.Errorf("read secret: %w", err)
	}
	if resp.StatusCode != http.StatusOK || r.Status != "ok" {
		return "", info, fmt.Errorf("read secret: %w", readStatus(resp.StatusCode, r.Status))
	}
	if r.ViewsLeft != nil {
		info.ViewsLeft = *r.ViewsLeft
	}
	if r.ExpiresIn != nil {
		info.ExpiresIn = time.Duration(*r.ExpiresIn * float64(time.Second))
	}
	text, err := DeriveKeys(FullSecretKey(passphrase, l.RandomKey)).DecryptText(r.CryptedMesage)
	if err != nil {
		return "", info, fmt.Errorf("read secret: %w", err)
	}
	return text, info, nil
}

// check validates a Link built by hand (ParseLink already did).
func (l Link) check() error {
	if len(l.RandomKey) != RandomKeyLen || !isAlphabet(l.RandomKey) || !ValidID(l.ID) {
		return fmt.Errorf("%w: bad key or id", ErrBrokenLink)
	}
	if _, err := NormalizeHost(l.Origin); err != nil {
		return err
	}
	return nil
}

// Progress is called as bytes move: done of total (total -1 when unknown).
// It may restart from 0 (the whole-file fallback sends everything again).
type Progress func(done, total int64)

type countReader struct {
	r     io.Reader
	done  int64
	total int64
	fn    Progress
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.done += int64(n)
	if c.fn != nil && n > 0 {
		c.fn(c.done, c.total)
	}
	return n, err
}

// fileRequest builds a saveFile request carrying data as the file part.
// progress is fed from base (bytes already sent) towards total.
func fileRequest(origin string, q url.Values, fields [][2]string, data []byte, base, total int64, progress Progress) (request, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return request{}, err
		}
	}
	if _, err := mw.CreateFormFile("file", "secret.bin"); err != nil {
		return request{}, err
	}
	head := bytes.Clone(buf.Bytes())
	buf.Reset()
	if err := mw.Close(); err != nil {
		return request{}, err
	}
	tail := bytes.Clone(buf.Bytes())
	n := int64(len(head) + len(data) + len(tail))
	return request{origin: origin, path: "saveFile", query: q, contentType: mw.FormDataContentType(),
		body: func() (io.Reader, int64) {
			var r io.Reader = bytes.NewReader(data)
			if progress != nil {
				progress(base, total)
				r = &countReader{r: r, done: base, total: total, fn: progress}
			}
			return io.MultiReader(bytes.NewReader(head), r, bytes.NewReader(tail)), n
		}}, nil
}

// CreateFile encrypts a file and saves it on host, returning its link.
// An encrypted file over 4 MiB goes up in 4 MiB slices with one upload id;
// each slice is retried with backoff after a network error, a timeout,
// 408, 429, 5xx or 503 retry. A host that predates chunking (a newId
// before the last slice) gets the whole file in one request.
func (c *Client) CreateFile(ctx context.Context, host string, meta FileMeta, data []byte, o SaveOptions, progress Progress) (Link, error) {
	if _, _, err := o.normalize(); err != nil {
		return Link{}, err
	}
	if size := EncryptedFileSize(meta, int64(len(data))); size > MaxEncryptedFile {
		return Link{}, fmt.Errorf("%w: file too large (%d bytes encrypted, at most %d)", ErrInvalidOption, size, MaxEncryptedFile)
	}
	origin, rk, k, views, secs, err := c.prepare(ctx, host, o)
	if err != nil {
		return Link{}, err
	}
	blob, err := k.EncryptFile(meta, data)
	if err != nil {
		return Link{}, err
	}
	fields := [][2]string{{"readTokenHash", k.ReadTokenHash()}, {"v", strconv.Itoa(saveScheme)}, {"duration", strconv.Itoa(secs)}, {"views", strconv.Itoa(views)}}
	total := int64(len(blob))
	var id string
	if len(blob) <= ChunkSize {
		id, err = c.saveWhole(ctx, origin, fields, blob, progress)
	} else {
		id, err = c.saveChunked(ctx, origin, fields, blob, progress)
		if errors.Is(err, errLegacyHost) {
			c.log.Info("host predates chunked uploads: sending the whole file", "bytes", total)
			id, err = c.saveWhole(ctx, origin, fields, blob, progress)
		}
	}
	if err != nil {
		return Link{}, fmt.Errorf("save file: %w", err)
	}
	return Link{Kind: KindFile, Origin: origin, RandomKey: rk, ID: id}, nil
}

var errLegacyHost = errors.New("host predates chunked uploads")

func (c *Client) saveWhole(ctx context.Context, origin string, fields [][2]string, blob []byte, progress Progress) (string, error) {
	rq, err := fileRequest(origin, nil, fields, blob, 0, int64(len(blob)), progress)
	if err != nil {
		return "", err
	}
	return c.save(ctx, rq)
}

// retryableSlice reports whether a slice answer may be retried (rule 5).
func retryableSlice(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

func (c *Client) saveChunked(ctx context.Context, origin string, fields [][2]string, blob []byte, progress Progress) (string, error) {
	u, err := NewUploadID()
	if err != nil {
		return "", err
	}
	n := (len(blob) + ChunkSize - 1) / ChunkSize
	if n > MaxChunks {
		return "", fmt.Errorf("%w: %d slices, at most %d", ErrInvalidOption, n, MaxChunks)
	}
	total := int64(len(blob))
	for i := range n {
		lo, hi := i*ChunkSize, min((i+1)*ChunkSize, len(blob))
		q := url.Values{"u": {u}, "i": {strconv.Itoa(i)}, "n": {strconv.Itoa(n)}}
		rq, err := fileRequest(origin, q, fields, blob[lo:hi], int64(lo), total, progress)
		if err != nil {
			return "", err
		}
		id, err := c.sendSlice(ctx, rq, i, n)
		if err != nil {
			return "", fmt.Errorf("slice %d of %d: %w", i+1, n, err)
		}
		switch {
		case id != "" && i < n-1:
			return "", errLegacyHost
		case id != "":
			return id, nil
		case i == n-1:
			return "", fmt.Errorf("%w: last slice answered without a newId", ErrServer)
		}
	}
	return "", fmt.Errorf("%w: no slices", ErrServer) // unreachable: n >= 2
}

// sendSlice sends one slice with retries and returns the newId if any.
func (c *Client) sendSlice(ctx context.Context, rq request, i, n int) (string, error) {
	var last error
	for attempt := 0; attempt <= c.o.Retries; attempt++ {
		if attempt > 0 {
			c.log.Debug("retrying slice", "slice", i, "of", n, "attempt", attempt, "err", last)
		}
		resp, err := c.do(ctx, rq)
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			last = err // network error or timeout: retry
			if err := c.sleep(ctx, attempt, nil); err != nil {
				return "", err
			}
			continue
		}
		if retryableSlice(resp.StatusCode) {
			last = fmt.Errorf("HTTP %d", resp.StatusCode)
			if resp.StatusCode == http.StatusTooManyRequests {
				last = ErrRateLimited
			}
			err := c.sleep(ctx, attempt, resp)
			drain(resp)
			if err != nil {
				return "", err
			}
			continue
		}
		r, err := decodeJSON(resp, 1<<20)
		drain(resp)
		if err != nil {
			return "", err
		}
		if resp.StatusCode != http.StatusOK || r.Status != "ok" {
			return "", fmt.Errorf("%w: HTTP %d, status %q", ErrServer, resp.StatusCode, r.Status)
		}
		id := r.newID()
		if id != "" && !ValidID(id) {
			return "", fmt.Errorf("%w: malformed newId", ErrServer)
		}
		return id, nil
	}
	if errors.Is(last, ErrRateLimited) {
		return "", last
	}
	return "", fmt.Errorf("%w: gave up after %d attempts: %w", ErrServer, c.o.Retries+1, last)
}

// ReadFile reads a file link, using one view, and returns the file's meta
// and bytes. A wrong or missing passphrase gives ErrWrongKey and uses no
// view. progress (may be nil) follows the download.
func (c *Client) ReadFile(ctx context.Context, l Link, passphrase string, progress Progress) (FileMeta, []byte, ReadInfo, error) {
	info := ReadInfo{ViewsLeft: -1}
	if l.Kind != KindFile {
		return FileMeta{}, nil, info, fmt.Errorf("%w: not a file link (/f/)", ErrBrokenLink)
	}
	if err := l.check(); err != nil {
		return FileMeta{}, nil, info, err
	}
	resp, err := c.read(ctx, l, "getFile", passphrase)
	if err != nil {
		return FileMeta{}, nil, info, fmt.Errorf("read file: %w", err)
	}
	defer drain(resp)
	if resp.StatusCode == http.StatusTooManyRequests {
		return FileMeta{}, nil, info, fmt.Errorf("read file: %w", ErrRateLimited)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || ct != "application/octet-stream" {
		r, err := decodeJSON(resp, 64<<10)
		if err != nil {
			return FileMeta{}, nil, info, fmt.Errorf("read file: %w", err)
		}
		return FileMeta{}, nil, info, fmt.Errorf("read file: %w", readStatus(resp.StatusCode, r.Status))
	}
	if v, err := strconv.Atoi(resp.Header.Get("X-Svc-Views-Left")); err == nil {
		info.ViewsLeft = v
	}
	if v, err := strconv.ParseFloat(resp.Header.Get("X-Svc-Expires-In"), 64); err == nil {
		info.ExpiresIn = time.Duration(v * float64(time.Second))
	}
	var body io.Reader = io.LimitReader(resp.Body, MaxUploadBody+1)
	if progress != nil {
		body = &countReader{r: body, total: resp.ContentLength, fn: progress}
	}
	blob, err := io.ReadAll(body)
	if err != nil {
		return FileMeta{}, nil, info, fmt.Errorf("read file: download: %w", err)
	}
	if len(blob) > MaxUploadBody {
		return FileMeta{}, nil, info, fmt.Errorf("read file: %w: file larger than %d bytes", ErrServer, MaxUploadBody)
	}
	meta, data, err := DeriveKeys(FullSecretKey(passphrase, l.RandomKey)).DecryptFile(blob)
	if err != nil {
		return FileMeta{}, nil, info, fmt.Errorf("read file: %w", err)
	}
	return meta, data, info, nil
}

// Status reports which ids are still available (true) or read or expired
// (false), without using a view. Malformed ids are refused before any
// request; more than 128 ids are asked for in several calls.
func (c *Client) Status(ctx context.Context, host string, ids []string) (map[string]bool, error) {
	origin, err := NormalizeHost(host)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if !ValidID(id) {
			return nil, fmt.Errorf("%w: an id is 22 letters, digits, - or _ (got %d characters)", ErrInvalidOption, len(id))
		}
	}
	out := make(map[string]bool, len(ids))
	for batch := range slices.Chunk(ids, MaxStatusIDs) {
		body, err := jsonBody(map[string][]string{"ids": batch})
		if err != nil {
			return nil, err
		}
		resp, err := c.do(ctx, request{origin: origin, path: "secretStatus", contentType: "application/json", body: body})
		if err != nil {
			return nil, fmt.Errorf("secret status: %w", err)
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			drain(resp)
			return nil, fmt.Errorf("secret status: %w", ErrRateLimited)
		}
		r, err := decodeJSON(resp, 1<<20)
		drain(resp)
		if err != nil {
			return nil, fmt.Errorf("secret status: %w", err)
		}
		if resp.StatusCode != http.StatusOK || r.Status != "ok" {
			return nil, fmt.Errorf("secret status: %w: HTTP %d, status %q", ErrServer, resp.StatusCode, r.Status)
		}
		for _, id := range batch {
			out[id] = r.Secrets[id] // absent means unknown: not available
		}
	}
	return out, nil
}
