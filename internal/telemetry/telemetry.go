// Package telemetry sets up logging (log/slog, JSON when not on a terminal)
// and the Prometheus registry that /metrics serves.
package telemetry

import (
	"errors"
	"fmt"
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

// Register adds c to reg and returns the collector reg serves under c's
// name: c itself, or the equal collector registered before it (two parts
// of one process, or two workers, sharing a metric). A nil reg returns c
// unregistered. Any other failure (a name taken with other labels or
// another type) is returned, never silently dropped.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if reg == nil {
		return c, nil
	}
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if old, ok := are.ExistingCollector.(C); ok {
			return old, nil
		}
	}
	return c, fmt.Errorf("register metric: %w", err)
}

// MustRegister is Register for collectors whose names and labels are fixed
// in the code: a failure is a programming error and panics.
func MustRegister[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	out, err := Register(reg, c)
	if err != nil {
		panic(err)
	}
	return out
}

// Zero creates the series of every combination of the given label values
// on v at 0, so that /metrics lists them from start (an alert or a rate()
// sees 0 rather than no series). values holds one list per label, in the
// vector's label order.
func Zero(v interface {
	WithLabelValues(...string) prometheus.Counter
}, values ...[]string) {
	each(values, func(lv []string) { v.WithLabelValues(lv...) })
}

func each(values [][]string, fn func([]string)) {
	var rec func(i int, cur []string)
	rec = func(i int, cur []string) {
		if i == len(values) {
			fn(append([]string(nil), cur...))
			return
		}
		for _, v := range values[i] {
			rec(i+1, append(cur, v))
		}
	}
	if len(values) > 0 {
		rec(0, nil)
	}
}
