package enrich

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/netintel/netintel/internal/config"
)

// NVD API rate limits (nvd.nist.gov/developers/start-here): 5 requests in
// a rolling 30 s window without an API key, 50 with one; NVD advises a
// 6 s pause between requests.
const (
	NVDDelayNoKey   = 6 * time.Second
	NVDDelayWithKey = 600 * time.Millisecond
	// nvdTimeLayout is the API's date parameter format (ISO 8601, UTC).
	nvdTimeLayout = "2006-01-02T15:04:05.000Z"
)

// NVDClient pages through the NVD CVE API 2.0
// (https://services.nvd.nist.gov/rest/json/cves/2.0) with startIndex and
// resultsPerPage until totalResults, pausing Delay between requests.
type NVDClient struct {
	// URL is the API endpoint.
	URL string
	// APIKey is sent as the apiKey header when set.
	APIKey string
	// Query holds extra query parameters (cpeName, lastModStartDate, ...).
	Query url.Values
	// ResultsPerPage is the page size (NVD's maximum is 2000).
	ResultsPerPage int
	// Delay is the pause between two requests.
	Delay time.Duration
	// Retries is how many times a page is asked again after a 403, 429 or
	// 5xx answer or a network error, Delay times the attempt apart.
	Retries int
	// HTTP is the client; nil uses http.DefaultClient.
	HTTP *http.Client
	// Sleep waits d or until ctx ends; nil uses a timer. Tests record it.
	Sleep func(ctx context.Context, d time.Duration) error
}

// NewNVDClient returns a client for cfg: the API key from the environment
// variable cfg.APIKeyEnv, the delay NVD advises when cfg.Delay is 0, and
// lastModStartDate/lastModEndDate when cfg.ModifiedWithin is set (the
// window ending at now).
func NewNVDClient(cfg config.NVDAPI, httpClient *http.Client, now time.Time) *NVDClient {
	n := &NVDClient{URL: cfg.URL, ResultsPerPage: cfg.ResultsPerPage, Delay: cfg.Delay, Retries: cfg.Retries,
		HTTP: httpClient, Query: url.Values{}}
	if cfg.APIKeyEnv != "" {
		n.APIKey = os.Getenv(cfg.APIKeyEnv)
	}
	if n.Delay == 0 {
		n.Delay = NVDDelayNoKey
		if n.APIKey != "" {
			n.Delay = NVDDelayWithKey
		}
	}
	for k, v := range cfg.Query {
		n.Query.Set(k, v)
	}
	if cfg.ModifiedWithin > 0 {
		now = now.UTC()
		n.Query.Set("lastModStartDate", now.Add(-cfg.ModifiedWithin).Format(nvdTimeLayout))
		n.Query.Set("lastModEndDate", now.Format(nvdTimeLayout))
	}
	return n
}

// errNVDRetry marks an answer worth asking again.
var errNVDRetry = errors.New("retryable")

// Load reads every page into c and returns the number of records read.
// It stops at the first page that fails after its retries; the records of
// earlier pages stay in c.
func (n *NVDClient) Load(ctx context.Context, c *Catalog) (int, error) {
	per := n.ResultsPerPage
	if per <= 0 || per > 2000 {
		per = 2000
	}
	read := 0
	for start, total := 0, -1; total < 0 || start < total; {
		if start > 0 {
			if err := n.sleep(ctx, n.Delay); err != nil {
				return read, err
			}
		}
		doc, err := n.page(ctx, start, per)
		if err != nil {
			return read, fmt.Errorf("startIndex %d: %w", start, err)
		}
		if err := c.addNVDDoc(doc); err != nil {
			return read, fmt.Errorf("startIndex %d: %w", start, err)
		}
		read += len(doc.Vulnerabilities)
		total = doc.TotalResults
		if len(doc.Vulnerabilities) == 0 {
			break // a short total or a shrinking result set: no endless loop
		}
		start += len(doc.Vulnerabilities)
	}
	return read, nil
}

func (n *NVDClient) page(ctx context.Context, start, per int) (*nvdDoc, error) {
	var err error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if serr := n.sleep(ctx, n.Delay*time.Duration(attempt)); serr != nil {
				return nil, serr
			}
		}
		var doc *nvdDoc
		doc, err = n.get(ctx, start, per)
		if err == nil {
			return doc, nil
		}
		if !errors.Is(err, errNVDRetry) || attempt >= n.Retries || ctx.Err() != nil {
			return nil, err
		}
	}
}

func (n *NVDClient) get(ctx context.Context, start, per int) (*nvdDoc, error) {
	u, err := url.Parse(n.URL)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	for k, vs := range n.Query {
		q[k] = vs
	}
	q.Set("startIndex", strconv.Itoa(start))
	q.Set("resultsPerPage", strconv.Itoa(per))
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if n.APIKey != "" {
		req.Header.Set("apiKey", n.APIKey)
	}
	hc := n.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNVDRetry, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		// NVD answers 403 when the rate limit is passed.
		return nil, fmt.Errorf("%w: status %s (%s)", errNVDRetry, resp.Status, resp.Header.Get("message"))
	default:
		return nil, fmt.Errorf("status %s (%s)", resp.Status, resp.Header.Get("message"))
	}
	var doc nvdDoc
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: decode: %w", errNVDRetry, err)
	}
	if doc.Vulnerabilities == nil {
		return nil, errors.New("response without vulnerabilities")
	}
	return &doc, nil
}

func (n *NVDClient) sleep(ctx context.Context, d time.Duration) error {
	if n.Sleep != nil {
		return n.Sleep(ctx, d)
	}
	if d <= 0 {
		return ctx.Err()
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

// loadNVDAPI reads cfg.NVDAPI into c.
func (c *Catalog) loadNVDAPI(ctx context.Context, cfg config.Catalog) error {
	// One page of 2000 records is about 20 MB: allow each request the
	// catalog fetch timeout.
	client := NewNVDClient(*cfg.NVDAPI, &http.Client{Timeout: cfg.FetchTimeout}, time.Now())
	if _, err := client.Load(ctx, c); err != nil {
		return fmt.Errorf("nvd_api: %w", err)
	}
	return nil
}
