package secretapi

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// openUploads caps the saveFile requests in progress, per client address
// and in all. The rate limits count requests as they start; this counts
// them until they end, so slow uploads cannot pile up.
type openUploads struct {
	perClient, total int // 0 = no cap

	mu sync.Mutex
	n  int
	by map[string]int
}

func newOpenUploads(perClient, total int) *openUploads {
	return &openUploads{perClient: perClient, total: total, by: map[string]int{}}
}

// acquire takes a slot for addr. It returns 0 and a release func, or the
// status refusing the request: 429 when addr has perClient uploads open,
// 503 when the server has total.
func (o *openUploads) acquire(addr string) (release func(), code int) {
	if o == nil {
		return func() {}, 0
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.perClient > 0 && o.by[addr] >= o.perClient:
		return nil, http.StatusTooManyRequests
	case o.total > 0 && o.n >= o.total:
		return nil, http.StatusServiceUnavailable
	}
	o.n++
	o.by[addr]++
	var once sync.Once
	return func() {
		once.Do(func() {
			o.mu.Lock()
			defer o.mu.Unlock()
			o.n--
			if o.by[addr]--; o.by[addr] <= 0 {
				delete(o.by, addr)
			}
		})
	}, 0
}

// rateBody makes a request body keep up a minimum transfer rate, with the
// connection's read deadline (so a read that waits is cut off too). The
// client starts with window seconds of credit; every byte adds 1/rate
// seconds, capped at window ahead of now. A client that trickles bytes
// falls behind and its read fails once the credit is spent; a fast one
// may pause up to window. At the end of the body the deadline is cleared.
type rateBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	rate   float64
	window time.Duration
	due    time.Time
	done   bool
}

// minRate wraps r.Body when rate > 0 and the connection supports read
// deadlines (not an httptest.ResponseRecorder).
func minRate(w http.ResponseWriter, r *http.Request, rate int, window time.Duration) {
	if rate <= 0 || window <= 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	due := time.Now().Add(window)
	if rc.SetReadDeadline(due) != nil {
		return
	}
	r.Body = &rateBody{ReadCloser: r.Body, rc: rc, rate: float64(rate), window: window, due: due}
}

func (b *rateBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case b.done:
	case errors.Is(err, io.EOF):
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case err != nil:
		// Keep the deadline that failed: the server's drain of the rest
		// of the body then fails at once and the connection is closed.
		b.done = true
	case n > 0:
		now := time.Now()
		b.due = b.due.Add(time.Duration(float64(n) / b.rate * float64(time.Second)))
		if limit := now.Add(b.window); b.due.After(limit) {
			b.due = limit
		}
		_ = b.rc.SetReadDeadline(b.due)
	}
	return n, err
}

// drain reads what is left of a parsed body (a multipart epilogue), so
// that its end clears the read deadline; at most 64 KiB.
func drain(r *http.Request) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 64<<10))
}

// tooSlow reports whether err came from a body that fell under the
// minimum rate (or stalled past the server's idle time).
func tooSlow(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
