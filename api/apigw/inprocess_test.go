package apigw_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/netintel/netintel/api/apigw"
)

func TestHandlerTransport(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Svc-Row-Limit", "7")
		w.WriteHeader(http.StatusTeapot)
		fmt.Fprintln(w, "first "+r.URL.RawQuery+" "+r.Header.Get("X-Tier"))
		<-release // the first line must reach the client before the handler ends
		fmt.Fprintln(w, "second")
	})
	mux.HandleFunc("GET /empty", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("GET /panic", func(http.ResponseWriter, *http.Request) { panic("boom") })
	c := &http.Client{Transport: apigw.HandlerTransport(mux)}

	req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://in-process/stream?a=1", nil)
	req.Header.Set("X-Tier", "pro")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot || resp.Header.Get("X-Svc-Row-Limit") != "7" {
		t.Fatalf("status %d header %v", resp.StatusCode, resp.Header)
	}
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "first a=1 pro\n" {
		t.Fatalf("first line %q %v", line, err)
	}
	close(release)
	rest, _ := io.ReadAll(br)
	if string(rest) != "second\n" {
		t.Fatalf("rest %q", rest)
	}

	tests := []struct {
		path       string
		wantStatus int
		wantErr    bool
	}{
		{"/empty", 200, false},
		{"/missing", 404, false},
		{"/panic", 0, true},
	}
	for _, tc := range tests {
		t.Run(strings.TrimPrefix(tc.path, "/"), func(t *testing.T) {
			resp, err := c.Get("http://in-process" + tc.path)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != tc.wantStatus {
					t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantStatus)
				}
			}
		})
	}
}
