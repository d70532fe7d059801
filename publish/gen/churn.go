package gen

import (
	"context"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
)

// Churned is the next day of a State: it differs from Base in about 3 of
// every Every host rows. Host i with i%Every == 1 is gone (removed), with
// i%Every == 2 it is changed (last_seen a day later, confidence lower),
// and Base.NHosts/Every new hosts follow the last (added); range j with
// j%Every == 3 has a new provider. Every 300 is 1 % churn.
type Churned struct {
	Base  *State
	Every int
}

var _ ipmodel.State = (*Churned)(nil)

// Added is the number of hosts added.
func (c *Churned) Added() int { return c.Base.NHosts / c.Every }

// Host returns host i of the churned state and whether it exists.
func (c *Churned) Host(i int) (ipmodel.Record, bool) {
	if i < c.Base.NHosts && i%c.Every == 1 {
		return ipmodel.Record{}, false
	}
	if i >= c.Base.NHosts+c.Added() {
		return ipmodel.Record{}, false
	}
	r := c.Base.Host(i)
	if i < c.Base.NHosts && i%c.Every == 2 {
		if t, err := time.Parse(ipmodel.TimeFormat, r.LastSeen); err == nil {
			r.LastSeen = ipmodel.FormatTime(t.Add(24 * time.Hour))
		}
		r.Confidence = round(r.Confidence*0.9, 2)
	}
	return r, true
}

// Range returns range j of the churned state.
func (c *Churned) Range(j int) ipmodel.Record {
	r := c.Base.Range(j)
	if j%c.Every == 3 {
		r.Provider = ptr("Churned Hosting " + r.IP)
	}
	return r
}

// Hosts calls fn for every host of the churned state.
func (c *Churned) Hosts(ctx context.Context, fn func(ipmodel.Record) error) error {
	for i := 0; i < c.Base.NHosts+c.Added(); i++ {
		if i%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if r, ok := c.Host(i); ok {
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// Ranges calls fn for every range of the churned state.
func (c *Churned) Ranges(ctx context.Context, fn func(ipmodel.Record) error) error {
	for j := 0; j < c.Base.NRanges; j++ {
		if j%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err := fn(c.Range(j)); err != nil {
			return err
		}
	}
	return nil
}
