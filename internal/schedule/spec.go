// Package schedule fires cron jobs, once per tick across every copy of the
// scheduler that shares a NATS KV bucket.
package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Parse reads a 5-field cron expression or a descriptor (@daily, @hourly, ...).
// "@every D" is aligned to the Unix epoch (ticks at multiples of D), unlike
// robfig/cron's own @every, which counts from process start: aligned ticks are
// the same in every scheduler copy and survive restarts, so "@every 48h" keeps
// firing every 48 hours in a deployment that restarts daily.
func Parse(expr string) (cron.Schedule, error) {
	expr = strings.TrimSpace(expr)
	if rest, ok := strings.CutPrefix(expr, "@every "); ok {
		d, err := time.ParseDuration(strings.TrimSpace(rest))
		if err != nil {
			return nil, fmt.Errorf("parse @every duration: %w", err)
		}
		if d < time.Second {
			return nil, fmt.Errorf("@every needs at least 1s, got %s", d)
		}
		return Every{D: d}, nil
	}
	return parser.Parse(expr)
}

// Every fires at every multiple of D since the Unix epoch.
type Every struct{ D time.Duration }

// Next returns the first multiple of D strictly after t.
func (e Every) Next(t time.Time) time.Time {
	return t.Truncate(e.D).Add(e.D)
}

// tickOf returns the scheduled time of the tick that fired at (or just before) now.
func tickOf(s cron.Schedule, now time.Time) time.Time {
	if e, ok := s.(Every); ok {
		return now.Truncate(e.D)
	}
	// Standard cron has minute granularity.
	return now.Truncate(time.Minute)
}
