package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/netintel/netintel/api/ipapi"
)

// ipapiModule is the ipapi product module, for moduleList.
func ipapiModule() Module {
	return Module{Name: "ipapi", Setup: setupIPAPI}
}

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
		CacheDir:    ipCacheDir(s.DataDir),
		PresignTTL:  s.Cfg.ObjectStore.S3.PresignTTL,
		TrustProxy:  s.Cfg.API.TrustProxyHeaders,
		Limiters:    s.AddrLimiters(ctx),
		Log:         s.Log,
	})
	s.IPAPI = svc
	var once sync.Once
	s.Route("ip", func(mux *http.ServeMux) {
		svc.Mount(mux)
		if s.Store == nil {
			return
		}
		once.Do(func() {
			// The snapshot gauges exist where snapshots are served.
			if err := svc.RegisterMetrics(s.Reg); err != nil {
				s.Log.Error("ip snapshot metrics", "err", err)
			}
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
	s.OnStart("ipapi-hint", func(ctx context.Context) error { return ipHint(ctx, s, svc) })
	return nil
}

// ipCacheDir is the folder the IP API maps its snapshots from:
// <data-dir>/ipapi-cache, or the system temp folder without a data dir
// (docs/ip-api.md, snapshot cache).
func ipCacheDir(dataDir string) string {
	if dataDir == "" {
		return ""
	}
	return filepath.Join(dataDir, "ipapi-cache")
}

// ipHint waits for the first snapshot under `netintel run` and prints a few
// requests a newcomer can try at once.
func ipHint(ctx context.Context, s *System, svc *ipapi.Service) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for svc.Current() == nil {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
	snap := svc.Current()
	base := s.baseURL("ip")
	ip := snap.For(ipapi.TierPro).Rows.Example()
	fmt.Fprintf(s.Env.Stdout, "IP intelligence snapshot %s loaded (%d rows). Try:\n", snap.Manifest.SnapshotDate, snap.Complete().Rows.Len())
	fmt.Fprintf(s.Env.Stdout, "  curl %s/public/v1/lookup/%s\n", base, ip)
	fmt.Fprintf(s.Env.Stdout, "  curl %s/public/v1/snapshot\n", base)
	fmt.Fprintf(s.Env.Stdout, "  curl %s/openapi.json\n", s.baseURL("gateway"))
	fmt.Fprintf(s.Env.Stdout, "  # customers go through the gateway with a key (KEY as above):\n")
	fmt.Fprintf(s.Env.Stdout, "  curl -H \"Authorization: Bearer $KEY\" %s/api/v1/vpn/ip/%s\n", s.baseURL("gateway"), ip)
	return nil
}
