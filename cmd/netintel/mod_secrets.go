package main

import (
	"context"
	"errors"
	"net/http"

	"github.com/netintel/netintel/api/secretapi"
	"github.com/netintel/netintel/secrets"
)

// secretsModule is the secrets product module, for moduleList.
func secretsModule() Module {
	return Module{Name: "secrets", Setup: setupSecrets}
}

// setupSecrets mounts the one-time secret API (/api/saveSecret, saveFile,
// get, getFile, secretStatus, ss) on the secrets listener, and registers
// the secrets-sweeper worker that deletes expired records and orphaned
// blobs. Roles without an object store (gateway) skip the module.
func setupSecrets(ctx context.Context, s *System) error {
	if s.Store == nil {
		return nil
	}
	svc, err := secrets.New(ctx, s.Bus.JS, s.Store, secrets.OptionsFrom(s.Cfg.Secrets), s.Log)
	if err != nil {
		return err
	}
	opt := secretapi.OptionsFrom(s.Cfg)
	opt.Registerer = s.Reg
	opt.Limiters = s.AddrLimiters(ctx)
	h := secretapi.New(svc, opt, s.Log)
	s.Route("secrets", func(mux *http.ServeMux) { h.Mount(mux) })
	if iv := s.Cfg.Secrets.SweepInterval; iv > 0 {
		s.Worker("secrets-sweeper", func(ctx context.Context) error {
			if err := svc.RunSweeper(ctx, iv); err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		})
	}
	return nil
}
