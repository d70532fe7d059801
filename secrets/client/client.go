// Package client is the client side of the one-time secret service
// (spec/one-time-secrets.md): key derivation and encryption, links, and
// every client operation of the API: create and read a text or file
// secret, check availability, check a host's capabilities.
//
// All crypto happens here; the host only ever sees ciphertext, the
// readTokenHash on save and the readToken on read.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// Limits and defaults of the spec.
const (
	DefaultExpiry = 86400 * time.Second
	MaxExpiry     = 2592000 * time.Second
	DefaultViews  = 1
	MaxViews      = 10
	// ChunkSize is the size of every slice of a chunked upload but the last.
	ChunkSize = 4194304
	// MaxChunks is the most slices one upload may have.
	MaxChunks = 25
	// MaxUploadBody is the cap on a saveFile body.
	MaxUploadBody = 100 << 20
	// MaxEncryptedFile is the largest encrypted file a host accepts: the
	// body cap less 64 KiB reserved for IV, tag and multipart overhead.
	MaxEncryptedFile = MaxUploadBody - 64<<10
	// MaxTextBody is the cap on a saveSecret request body.
	MaxTextBody = 25 << 20
	// MaxStatusIDs is the most ids one secretStatus call checks.
	MaxStatusIDs = 128
	saveScheme   = 3
)

// Options configure a Client. The zero value works: src "dev", a
// User-Agent naming netintel, http.DefaultClient-like timeouts.
type Options struct {
	// Src is the short lowercase app name sent as ?src= on every request.
	Src string
	// Name, Version and Contact make the User-Agent
	// "<Name>/<Version> (<Contact>)".
	Name, Version, Contact string
	// HTTP is the HTTP client; nil means one with a 5-minute timeout.
	HTTP *http.Client
	// Log receives one line per request (never a key or a link); nil discards.
	Log *slog.Logger
	// Backoff is the first retry delay (doubled each time, with jitter,
	// up to MaxBackoff); 0 means 500ms.
	Backoff, MaxBackoff time.Duration
	// Retries is how many times a retryable request is retried; 0 means 6.
	Retries int
}

// Client talks to one or more secret hosts. It caches each host's
// capabilities. Safe for concurrent use.
type Client struct {
	o    Options
	ua   string
	hc   *http.Client
	log  *slog.Logger
	mu   sync.Mutex
	caps map[string]Capabilities
}

// New returns a Client.
func New(o Options) *Client {
	if o.Src == "" {
		o.Src = "dev"
	}
	if o.Name == "" {
		o.Name = "netintel"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Contact == "" {
		o.Contact = "https://github.com/netintel/netintel"
	}
	if o.Backoff <= 0 {
		o.Backoff = 500 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 15 * time.Second
	}
	if o.Retries <= 0 {
		o.Retries = 6
	}
	hc := o.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 5 * time.Minute}
	}
	lg := o.Log
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &Client{o: o, hc: hc, log: lg.With("stage", "secret-client"), caps: map[string]Capabilities{},
		ua: fmt.Sprintf("%s/%s (%s)", o.Name, o.Version, o.Contact)}
}

// UserAgent is the User-Agent header the client sends.
func (c *Client) UserAgent() string { return c.ua }

// SaveOptions are the choices of a save. Zero values mean the defaults
// (1 view, 1 day).
type SaveOptions struct {
	Views      int
	Expiry     time.Duration
	Passphrase string
}

// normalize validates and fills defaults; the host silently corrects
// out-of-range values, so the client refuses them itself.
func (o SaveOptions) normalize() (views, seconds int, err error) {
	views, d := o.Views, o.Expiry
	if views == 0 {
		views = DefaultViews
	}
	if d == 0 {
		d = DefaultExpiry
	}
	if views < 1 || views > MaxViews {
		return 0, 0, fmt.Errorf("%w: views must be 1 to %d", ErrInvalidOption, MaxViews)
	}
	if d%time.Second != 0 || d < time.Second || d > MaxExpiry {
		return 0, 0, fmt.Errorf("%w: expiry must be whole seconds from 1s to 30 days (720h)", ErrInvalidOption)
	}
	return views, int(d / time.Second), nil
}

// ReadInfo is what a host says about a secret after a read.
type ReadInfo struct {
	// ViewsLeft is the number of reads left; 0 means deleted. -1 when the
	// host did not say.
	ViewsLeft int
	// ExpiresIn is the time left; 0 when the host did not say.
	ExpiresIn time.Duration
}

// apiResponse is the JSON envelope of every endpoint.
type apiResponse struct {
	Status        string          `json:"status"`
	NewID         json.RawMessage `json:"newId"`
	CryptedMesage string          `json:"cryptedMessage"`
	ViewsLeft     *int            `json:"viewsLeft"`
	ExpiresIn     *float64        `json:"expiresIn"`
	Secrets       map[string]bool `json:"secrets"`
	APIVersion    int             `json:"apiVersion"`
	SaveSchemes   []int           `json:"saveSchemes"`
}

// newID returns newId as a string, "" when absent, null or "0".
func (r *apiResponse) newID() string {
	if len(r.NewID) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(r.NewID, &s) != nil || s == "0" {
		return ""
	}
	return s
}

// request is one API call, rebuilt for every attempt.
type request struct {
	origin, path string
	query        url.Values
	contentType  string
	body         func() (io.Reader, int64) // nil: no body
}

// do sends one request and returns the response; the caller closes the body.
func (c *Client) do(ctx context.Context, rq request) (*http.Response, error) {
	q := url.Values{}
	q.Set("src", c.o.Src)
	for k, v := range rq.query {
		q[k] = v
	}
	u := rq.origin + "/api/" + rq.path + "?" + q.Encode()
	var body io.Reader
	var n int64
	if rq.body != nil {
		body, n = rq.body()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rq.path, err)
	}
	req.ContentLength = n
	req.Header.Set("User-Agent", c.ua)
	req.Header.Set("Accept", "application/json, application/octet-stream")
	if rq.contentType != "" {
		req.Header.Set("Content-Type", rq.contentType)
	}
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		c.log.Debug("request failed", "endpoint", rq.path, "err", redactErr(err))
		return nil, fmt.Errorf("%s: %w", rq.path, redactErr(err))
	}
	c.log.Debug("request", "endpoint", rq.path, "code", resp.StatusCode, "took", time.Since(start))
	return resp, nil
}

// redactErr strips the URL from *url.Error (it holds only origin, path
// and src, but keep errors short and uniform).
func redactErr(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// decodeJSON reads a JSON envelope of at most 64 KiB... or the size a
// get may need.
func decodeJSON(resp *http.Response, limit int64) (*apiResponse, error) {
	var r apiResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, limit)).Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: HTTP %d with an unreadable body", ErrServer, resp.StatusCode)
	}
	return &r, nil
}

// sleep waits the backoff for attempt (0-based), or Retry-After when the
// host sent one (capped at MaxBackoff).
func (c *Client) sleep(ctx context.Context, attempt int, resp *http.Response) error {
	d := c.o.Backoff << min(attempt, 16)
	if d > c.o.MaxBackoff {
		d = c.o.MaxBackoff
	}
	d = d/2 + rand.N(d/2+1) // jitter: spread copies that failed together
	if resp != nil {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			d = min(time.Duration(s)*time.Second, c.o.MaxBackoff)
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// postJSON sends v as JSON.
func jsonBody(v any) (func() (io.Reader, int64), error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return func() (io.Reader, int64) { return bytes.NewReader(b), int64(len(b)) }, nil
}

// drain discards what is left of a body so the connection is reused.
func drain(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	resp.Body.Close()
}
