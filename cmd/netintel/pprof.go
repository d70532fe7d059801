package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// pprofEnv names the environment variable that serves Go's profiles
// (/debug/pprof/) of any netintel process on a loopback address, e.g.
// NETINTEL_PPROF=127.0.0.1:6060 (docs/operators.md, "Profiles"). It is an
// operator's tool for measuring memory (make scale takes heap profiles
// with it), off unless set; an address beyond loopback is refused,
// because profiles show the process's data.
const pprofEnv = "NETINTEL_PPROF"

// startPprof serves /debug/pprof/ on addr when addr is set. The listener
// lives as long as the process.
func startPprof(addr string, log *slog.Logger) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: %q is not host:port: %w", pprofEnv, addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s: %q is not a loopback address (profiles show the process's data)", pprofEnv, addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: %w", pprofEnv, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof server stopped", "err", err)
		}
	}()
	log.Info("pprof listening", "addr", l.Addr().String())
	return nil
}
