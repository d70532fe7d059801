package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/netintel/netintel/api/apigw"
	gw "github.com/netintel/netintel/gateway"
	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/httpx"
)

// gatewayModule is the gateway product module, for moduleList.
func gatewayModule() Module {
	return Module{Name: "gateway", Setup: setupGateway}
}

// setupGateway wires the customer gateway: the key store (watched), the
// usage counters, the optional Option B validator and the proxy handler on
// the gateway listener. The key watch starts only where the gateway is
// served (`netintel run`, `netintel gateway`, `netintel api`).
func setupGateway(ctx context.Context, s *System) error {
	gc := s.Cfg.Gateway
	keysKV, err := bus.OpenOrCreateKV(ctx, s.Bus.JS, s.Log, s.Cfg.KVDecl(gw.KeysBucket))
	if err != nil {
		return err
	}
	usageKV, err := bus.OpenOrCreateKV(ctx, s.Bus.JS, s.Log, s.Cfg.KVDecl(gw.UsageBucket))
	if err != nil {
		return err
	}
	keys := gw.NewKeys(keysKV, gw.NewHasher(gc.HashKey), s.Log)
	usage := gw.NewUsageOn(gw.NewBudgets(usageKV, leaseConfig(gc.Lease)))
	var validator *gw.Validator
	if gc.OptionB.URL != "" {
		validator = gw.NewValidator(gc.OptionB.URL, gc.OptionB.Token, gc.OptionB.Timeout, gc.OptionB.Retries)
	}
	limits := func(tier string) gw.Limits {
		t, _ := gc.Tiers.ByName(tier)
		return gw.Limits{RatePerMinute: t.RatePerMinute, MonthlyQuota: t.MonthlyQuota}
	}

	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var once sync.Once
	var wg sync.WaitGroup
	s.OnClose(func() { cancel(); wg.Wait() })
	s.Route("gateway", func(mux *http.ServeMux) {
		once.Do(func() {
			if gc.HashKey == "" {
				s.Log.Warn("gateway.hash_key is empty: key secrets are hashed with the built-in dev key; set it (from the environment) in production")
			}
			if s.Cfg.API.InternalKey == "" {
				s.Log.Warn("api.internal_key is empty: the backend will refuse forwarded requests")
			}
			wg.Add(1)
			go func() { defer wg.Done(); _ = keys.Run(runCtx, gc.LastUsedInterval) }()
			wg.Add(1)
			go func() { defer wg.Done(); _ = usage.Run(runCtx) }()
		})
		o := apigw.Options{Keys: keys, Usage: usage, Validator: validator, InternalKey: s.Cfg.API.InternalKey,
			Limits: limits, MaxBodyBytes: gc.MaxBodyBytes, StateTimeout: gc.StateTimeout, TrustProxy: s.Cfg.API.TrustProxyHeaders, BackendTimeout: gc.BackendTimeout, Log: s.Log, Registerer: s.Reg}
		o.OpenAPIServers = s.openAPIServers
		o.Backend, o.BackendHandler = gatewayBackend(s.Cfg, mux)
		s.Log.Info("gateway forwards", "backend", o.Backend.Redacted(), "in_process", o.BackendHandler != nil, "option_b", validator != nil)
		apigw.New(o).Mount(mux)
	})
	if s.Embedded {
		s.OnStart("gateway-dev-key", func(ctx context.Context) error {
			key, err := gw.EnsureDevKey(ctx, keys, filepath.Join(s.DataDir, "dev-api-key"))
			if err != nil {
				s.Log.Error("dev key", "err", err)
				return nil
			}
			fmt.Fprintf(s.Env.Stdout, "dev API key (user %s, tier %s): %s\n", gw.DevUser, gw.DevTier, key)
			return nil
		})
	}
	return nil
}

// AddrLimiters returns the per-address limiters of this process's API
// modules (/public, the secret service, the TLD API): token buckets shared
// by every API copy in the KV bucket ratelimits, leased as the gateway's
// counters are; per process only where there is no NATS.
func (s *System) AddrLimiters(ctx context.Context) httpx.AddrLimiters {
	s.addrOnce.Do(func() {
		s.addrLims = httpx.LocalLimiters
		if s.Bus == nil || s.Bus.JS == nil {
			return
		}
		kv, err := bus.OpenOrCreateKV(ctx, s.Bus.JS, s.Log, s.Cfg.KVDecl(gw.RateLimitsBucket))
		if err != nil {
			s.Log.Warn("per-address limits kept per process", "err", err)
			return
		}
		b := gw.NewBudgets(kv, leaseConfig(s.Cfg.Gateway.Lease))
		runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() { defer close(done); _ = b.Run(runCtx) }()
		s.OnClose(func() { cancel(); <-done })
		s.addrLims = gw.AddrLimiters(b)
	})
	return s.addrLims
}

// leaseConfig is the lease sizing of gateway.lease.
func leaseConfig(l config.GatewayLease) gw.LeaseConfig {
	return gw.LeaseConfig{Fraction: l.Fraction, Max: l.Max, Idle: l.Idle, TokenTTL: l.TokenTTL}
}

// openAPIServers are the base URLs the customer OpenAPI document names:
// api.public_url for the gateway when set, else the gateway's listen
// address as a local client dials it (port 0 as bound); the public
// endpoints and the TLD API at the same URL when they share the gateway's
// listener, else at their own.
func (s *System) openAPIServers() apigw.Servers {
	gwURL := strings.TrimSuffix(s.Cfg.API.PublicURL, "/")
	if gwURL == "" {
		gwURL = s.baseURL("gateway")
	}
	other := func(product string) string {
		if s.listenAddr(product) == s.listenAddr("gateway") {
			return gwURL
		}
		return s.baseURL(product)
	}
	return apigw.Servers{Gateway: gwURL, Public: other("ip"), TLD: other("tld")}
}

// gatewayBackend picks where the gateway forwards: gateway.backend_url when
// set; else the backend handlers on the same mux, called in-process, when
// this process serves them on the gateway's listener (`netintel run`); else
// http://<api.listeners.ip or api.listen> with a wildcard host made loopback.
func gatewayBackend(cfg *config.Config, mux *http.ServeMux) (*url.URL, http.Handler) {
	if cfg.Gateway.BackendURL != "" {
		u, _ := url.Parse(cfg.Gateway.BackendURL) // validated at load
		return u, nil
	}
	probe, _ := http.NewRequest(http.MethodGet, "http://local/api/v1/shadow_vpn/lookup/192.0.2.1", nil)
	if _, pattern := mux.Handler(probe); strings.Contains(pattern, "/shadow_vpn/") {
		return &url.URL{Scheme: "http", Host: "in-process"}, mux
	}
	return &url.URL{Scheme: "http", Host: dialable(cfg.ListenFor("ip"))}, nil
}
