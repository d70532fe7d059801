package main

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/netintel/netintel/internal/telemetry"
)

// meter shows the progress of one long task (a feed read, a snapshot
// built, a TLD check, a secret file sent) on stderr: on a terminal a bar
// with the rate and the time left (schollz/progressbar), on a pipe or in
// a file a plain line at each tenth of the way (or every plainEvery when
// the total is unknown), so that logs stay readable. done() ends it and
// returns the closing summary: elapsed time and rate.
type meter struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	// unit names what is counted ("TLDs", "records"); "" counts bytes.
	unit  string
	bar   *progressbar.ProgressBar
	start time.Time
	now   func() time.Time
	total int64
	n     int64
	// plain: the last tenth printed, and when the last line was.
	step      int64
	lastPlain time.Time
	// log, when set (--log-format json asked for), takes the plain lines
	// as JSON records, so that stderr stays JSON lines.
	log *slog.Logger
}

// plainEvery is how often a plain line is printed when the total is unknown.
const plainEvery = 5 * time.Second

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newMeter starts a meter on env's stderr: a bar when it is a terminal;
// else plain lines, or JSON records when --log-format json was given.
func newMeter(env *Env, label, unit string, total int64) *meter {
	tty := isTerminal(env.Stderr)
	m := startMeter(env.Stderr, tty, label, unit, total)
	if !tty && env.LogFormat == "json" {
		m.log = telemetry.NewLogger(env.Stderr, "info", "json")
	}
	return m
}

// startMeter starts a meter writing to w, as a bar when tty.
func startMeter(w io.Writer, tty bool, label, unit string, total int64) *meter {
	m := &meter{w: w, label: label, unit: unit, now: time.Now, total: total, step: -1}
	m.start = m.now()
	if tty {
		opts := []progressbar.Option{
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(100 * time.Millisecond),
			progressbar.OptionSetRenderBlankState(true),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
		}
		if unit == "" {
			opts = append(opts, progressbar.OptionShowBytes(true), progressbar.OptionUseIECUnits(true))
		} else {
			opts = append(opts, progressbar.OptionShowIts(), progressbar.OptionSetItsString(unit))
		}
		if total <= 0 {
			opts = append(opts, progressbar.OptionSpinnerType(14))
			total = -1
		}
		m.bar = progressbar.NewOptions64(total, opts...)
	}
	return m
}

// set records that done of total are done (total <= 0: unknown, or as
// set before).
func (m *meter) set(done, total int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if total > 0 && total != m.total {
		m.total = total
		if m.bar != nil {
			m.bar.ChangeMax64(total)
		}
	}
	m.n = done
	if m.bar != nil {
		_ = m.bar.Set64(done)
		return
	}
	now := m.now()
	switch {
	case m.total > 0:
		step := min(done*10/m.total, 10)
		if step <= m.step {
			return
		}
		m.step = step
	case now.Sub(m.lastPlain) < plainEvery:
		return
	}
	m.lastPlain = now
	if m.log != nil {
		el := now.Sub(m.start)
		attrs := []any{"task", m.label, "done", m.n, "rate_per_second", math.Round(float64(m.n)/max(el.Seconds(), 1e-3)*10) / 10, "elapsed", el}
		if m.total > 0 {
			attrs = append(attrs, "total", m.total, "percent", m.n*100/m.total)
		}
		if m.unit != "" {
			attrs = append(attrs, "unit", m.unit)
		} else {
			attrs = append(attrs, "unit", "bytes")
		}
		m.log.Info("progress", attrs...)
		return
	}
	fmt.Fprintln(m.w, m.line(now))
}

// line is the plain progress line: what is done, of how much, the rate
// and the time left.
func (m *meter) line(now time.Time) string {
	el := now.Sub(m.start)
	s := m.label + ": " + m.amount(m.n)
	if m.total > 0 {
		s = fmt.Sprintf("%s: %3d%% %s of %s", m.label, m.n*100/m.total, m.amount(m.n), m.amount(m.total))
	}
	if el > 0 {
		s += ", " + m.rate(m.n, el)
		if m.total > 0 && m.n > 0 && m.n < m.total {
			left := time.Duration(float64(el) * float64(m.total-m.n) / float64(m.n))
			s += ", ETA " + seconds(left)
		}
	}
	return s
}

// done ends the meter (the bar is completed and its line ended) and
// returns the summary: "in 1.2s, 8.0 KiB/s".
func (m *meter) done() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bar != nil {
		if m.total > 0 && m.n >= m.total {
			_ = m.bar.Finish()
		} else {
			_ = m.bar.Exit()
			fmt.Fprintln(m.w)
		}
		m.bar = nil
	}
	el := m.now().Sub(m.start)
	return "in " + seconds(el) + ", " + m.rate(m.n, el)
}

func (m *meter) amount(n int64) string {
	if m.unit == "" {
		return humanBytes(n)
	}
	return strconv.FormatInt(n, 10) + " " + m.unit
}

func (m *meter) rate(n int64, el time.Duration) string {
	per := float64(n) / max(el.Seconds(), 1e-3)
	if m.unit == "" {
		return humanBytes(int64(per)) + "/s"
	}
	return strconv.FormatFloat(per, 'f', 1, 64) + " " + m.unit + "/s"
}

// humanBytes writes n bytes with a binary unit: 512 B, 10.7 KiB, 3.2 MiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + string("KMGTPE"[exp]) + "iB"
}

// seconds writes a duration as seconds: 0.25s, 12.3s, 305s.
func seconds(d time.Duration) string {
	s := d.Seconds()
	switch {
	case s < 10:
		return strconv.FormatFloat(s, 'f', 2, 64) + "s"
	case s < 100:
		return strconv.FormatFloat(s, 'f', 1, 64) + "s"
	}
	return strconv.FormatFloat(s, 'f', 0, 64) + "s"
}
