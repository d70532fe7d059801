package apigw

import (
	"fmt"
	"io"
	"net/http"
	"sync"
)

// HandlerTransport returns a RoundTripper that serves requests with h in
// the same process, with HTTP semantics kept: status, headers and a body
// streamed through a pipe (an export of a million rows is never buffered).
// `netintel run` uses it to reach its own backend handlers whatever
// address --listen gave the listener.
func HandlerTransport(h http.Handler) http.RoundTripper { return handlerTransport{h} }

type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	rw := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{}), code: http.StatusOK}
	in := req.Clone(req.Context())
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = "127.0.0.1:0"
	if in.Body == nil {
		in.Body = http.NoBody
	}
	if in.Host == "" {
		in.Host = req.URL.Host
	}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				rw.fail(fmt.Errorf("backend handler panicked: %v", p))
				return
			}
			rw.WriteHeader(http.StatusOK) // a handler that wrote nothing: 200, empty
			_ = pw.Close()
		}()
		t.h.ServeHTTP(rw, in)
	}()
	select {
	case <-rw.ready:
	case <-req.Context().Done():
		_ = pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	if rw.err != nil {
		return nil, rw.err
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", rw.code, http.StatusText(rw.code)), StatusCode: rw.code,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rw.sent, Body: pr, ContentLength: -1, Request: req,
	}, nil
}

// pipeWriter is the ResponseWriter the in-process handler writes to.
type pipeWriter struct {
	header http.Header
	sent   http.Header
	pw     *io.PipeWriter
	once   sync.Once
	ready  chan struct{}
	code   int
	err    error
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	w.once.Do(func() {
		w.code = code
		w.sent = w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(b)
}

// Flush is a no-op: every Write already reaches the reader.
func (w *pipeWriter) Flush() {}

func (w *pipeWriter) fail(err error) {
	w.once.Do(func() {
		w.err = err
		close(w.ready)
	})
	_ = w.pw.CloseWithError(err)
}
