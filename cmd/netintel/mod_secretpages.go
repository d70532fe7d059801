package main

import (
	"context"

	"github.com/netintel/netintel/api/secretpages"
)

// The browser pages of the one-time secret service (/, /v/, /f/) share the
// secrets product's listener, so the pages call the API on their own origin.
// secretpagesModule is the secretpages product module, for moduleList.
func secretpagesModule() Module {
	return Module{Name: "secretpages", Setup: func(_ context.Context, s *System) error {
		s.Route("secrets", secretpages.Mount)
		return nil
	}}
}
