package api

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveIdle runs Serve with a short body idle timeout and returns its address.
func serveIdle(t *testing.T, h http.Handler) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, slog.New(slog.DiscardHandler), []Listener{{Addr: "127.0.0.1:0", Handler: h, BodyIdleTimeout: time.Second}}, time.Second,
			func(_, bound string) { addr <- bound })
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case a := <-addr:
		return a
	case err := <-done:
		t.Fatal(err)
	}
	return ""
}

// A client that sends headers and part of a body, then stalls, is cut off
// after the idle timeout instead of holding the connection; a slow body
// that keeps coming is read whole; a response written long after the body
// ended is still delivered.
func TestServe_BodyIdleTimeout(t *testing.T) {
	handlerErr := make(chan error, 8)
	addr := serveIdle(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			handlerErr <- err
			http.Error(w, "body", http.StatusBadRequest)
			return
		}
		if r.URL.Path == "/late" {
			time.Sleep(2500 * time.Millisecond)
		}
		fmt.Fprintf(w, "got %d", len(b))
	}))
	send := func(t *testing.T, path string, chunks []string, gap time.Duration, total int) string {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", path, total)
		for _, ch := range chunks {
			time.Sleep(gap)
			if _, err := io.WriteString(c, ch); err != nil {
				t.Fatal(err)
			}
		}
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("%s: no answer within 10 s: the stalled body held the connection", path)
			}
			return "closed"
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return fmt.Sprintf("%d %s", res.StatusCode, strings.TrimSpace(string(b)))
	}
	t.Run("stalled body is cut off", func(t *testing.T) {
		start := time.Now()
		got := send(t, "/stall", []string{"abc"}, 0, 10)
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("took %s", took)
		}
		if got != "closed" && !strings.HasPrefix(got, "400") {
			t.Fatalf("stalled body answered %q", got)
		}
		select {
		case err := <-handlerErr:
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("handler read error %v, want a timeout", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the handler's read never failed")
		}
	})
	t.Run("slow steady body is read whole", func(t *testing.T) {
		chunks := strings.Split("0123456789", "")
		if got := send(t, "/slow", chunks, 100*time.Millisecond, 10); got != "200 got 10" {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("late response after the body", func(t *testing.T) {
		if got := send(t, "/late", []string{"hello"}, 0, 5); got != "200 got 5" {
			t.Fatalf("got %q", got)
		}
	})
}
