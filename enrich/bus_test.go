package enrich

import (
	"context"
	"io"
	"log/slog"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/testutil"
)

func busEnsure(ctx context.Context, n *testutil.NATS, cfg *config.Config) error {
	return bus.Ensure(ctx, n.JS, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
}
