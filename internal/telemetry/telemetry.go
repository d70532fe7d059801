// Package telemetry sets up logging (log/slog, JSON when not on a terminal)
// and the Prometheus registry that /metrics serves.
package telemetry

import (
	"io"
	"log/slog"
	"math"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/term"
)

// Log formats NewLogger takes; "" picks text on a terminal and JSON
// otherwise.
var LogFormats = []string{"text", "json"}

// NewLogger returns a logger writing format ("text" or "json"; "" = text
// on a terminal and JSON otherwise) at level (debug, info, warn or error;
// default info). Every duration attribute is written as a number of
// seconds (1.5, not 1500000000 nanoseconds), in both formats.
func NewLogger(w io.Writer, level, format string) *slog.Logger {
	var lv slog.Level
	switch strings.ToLower(level) {
	case "debug":
		lv = slog.LevelDebug
	case "warn":
		lv = slog.LevelWarn
	case "error":
		lv = slog.LevelError
	}
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: durationSeconds}
	if format == "" {
		format = "json"
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			format = "text"
		}
	}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// durationSeconds writes a duration attribute as float seconds, rounded
// to the microsecond.
func durationSeconds(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		d := a.Value.Duration()
		a.Value = slog.Float64Value(math.Round(d.Seconds()*1e6) / 1e6)
	}
	return a
}

// NewRegistry returns a registry with the Go and process collectors.
func NewRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}
