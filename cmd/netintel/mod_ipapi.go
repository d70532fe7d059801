package main

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/netintel/netintel/api/ipapi"
)

func init() { registerModule(Module{Name: "ipapi", Setup: setupIPAPI}) }

// snapshotPoll is how often the IP API checks snapshots/latest besides
// listening for events.snapshot.published.
const snapshotPoll = time.Minute

// setupIPAPI mounts the IP intelligence backend on the "ip" listener. The
// snapshot watcher starts only in processes that serve those routes.
func setupIPAPI(ctx context.Context, s *System) error {
	svc := ipapi.New(ipapi.Options{
		InternalKey: s.Cfg.API.InternalKey,
		PublicURL:   s.Cfg.API.PublicURL,
		Store:       s.Store,
		PresignTTL:  s.Cfg.ObjectStore.S3.PresignTTL,
		TrustProxy:  s.Cfg.API.TrustProxyHeaders,
		Log:         s.Log,
	})
	var once sync.Once
	s.Route("ip", func(mux *http.ServeMux) {
		svc.Mount(mux)
		if s.Store == nil {
			return
		}
		once.Do(func() {
			var nc *nats.Conn
			if s.Bus != nil {
				nc = s.Bus.NC
			}
			go func() {
				if err := svc.Watch(ctx, nc, snapshotPoll); err != nil {
					s.Log.Error("ip snapshot watcher stopped", "err", err)
				}
			}()
		})
	})
	return nil
}
