// Package bus connects to the NATS JetStream backbone: an embedded
// nats-server for the single-process default, or external URLs for
// production. Ensure creates the declared streams, consumers and buckets.
package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/config"
)

// URLFile is the file in the data dir where an embedded server leaves its
// client URL, so that `netintel ingest --data-dir DIR` can reach it.
const URLFile = "nats.url"

// ErrLocked means another netintel process holds the data dir.
var ErrLocked = errors.New("data dir is in use by another netintel process")

// Bus is a connection to JetStream, and the embedded server when there is one.
type Bus struct {
	NC     *nats.Conn
	JS     jetstream.JetStream
	Server *server.Server
	// URL is the client URL the connection uses.
	URL string

	lock    *os.File
	dataDir string
	log     *slog.Logger
}

// Open starts the embedded server (when configured) under dataDir and
// connects to it, or connects to the external URLs, retrying for
// cfg.ConnectWait (0 = until ctx ends) with a log line per failed attempt.
func Open(ctx context.Context, cfg config.NATS, dataDir string, log *slog.Logger) (*Bus, error) {
	b := &Bus{dataDir: dataDir, log: log.With("stage", "bus")}
	if cfg.Embedded.Enabled {
		if err := b.startEmbedded(cfg.Embedded, dataDir); err != nil {
			b.Close()
			return nil, err
		}
	} else {
		b.URL = strings.Join(cfg.URLs, ",")
	}
	if err := b.connect(ctx, cfg); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Connect connects to external URLs only (for subcommands acting on a
// running system). It is Open with the embedded server disabled.
func Connect(ctx context.Context, cfg config.NATS, log *slog.Logger) (*Bus, error) {
	cfg.Embedded.Enabled = false
	return Open(ctx, cfg, "", log)
}

func (b *Bus) startEmbedded(e config.Embedded, dataDir string) error {
	if dataDir == "" {
		return errors.New("embedded nats needs a data dir")
	}
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	lock, err := LockDir(dataDir)
	if err != nil {
		return err
	}
	b.lock = lock
	store := e.StoreDir
	if store == "" {
		store = filepath.Join(dataDir, "nats")
	}
	port := e.Port
	if port == 0 {
		port = server.RANDOM_PORT
	}
	host := e.Host
	if host == "" {
		host = "127.0.0.1"
	}
	opts := &server.Options{
		ServerName:         "netintel-embedded",
		Host:               host,
		Port:               port,
		JetStream:          true,
		StoreDir:           store,
		JetStreamMaxMemory: e.MaxMemory,
		JetStreamMaxStore:  e.MaxStore,
		NoSigs:             true,
		NoLog:              true,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return fmt.Errorf("start embedded nats: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		return errors.New("start embedded nats: not ready after 30s")
	}
	b.Server = s
	b.URL = s.ClientURL()
	if err := writeFileAtomic(filepath.Join(dataDir, URLFile), []byte(b.URL+"\n")); err != nil {
		return fmt.Errorf("write %s: %w", URLFile, err)
	}
	b.log.Info("embedded nats started", "url", b.URL, "store", store)
	return nil
}

// PublishAsyncTimeout bounds the wait for one async publish's acknowledgement.
const PublishAsyncTimeout = 15 * time.Second

func (b *Bus) connect(ctx context.Context, cfg config.NATS) error {
	opts := []nats.Option{
		nats.Name("netintel"),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(false),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				b.log.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { b.log.Info("nats reconnected", "url", nc.ConnectedUrlRedacted()) }),
	}
	if cfg.ConnectTimeout > 0 {
		opts = append(opts, nats.Timeout(cfg.ConnectTimeout))
	}
	if b.Server == nil {
		if cfg.CredsFile != "" {
			opts = append(opts, nats.UserCredentials(cfg.CredsFile))
		}
		if cfg.User != "" {
			opts = append(opts, nats.UserInfo(cfg.User, cfg.Password))
		}
		if cfg.Token != "" {
			opts = append(opts, nats.Token(cfg.Token))
		}
	}
	var deadline time.Time
	if cfg.ConnectWait > 0 {
		deadline = time.Now().Add(cfg.ConnectWait)
	}
	wait := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		nc, err := nats.Connect(b.URL, opts...)
		if err == nil {
			b.NC = nc
			// An async publish whose acknowledgement is lost (a stream
			// leader dying, a reconnect) fails after the timeout instead of
			// waiting forever; publishers then send it again.
			js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(PublishAsyncTimeout))
			if err != nil {
				return fmt.Errorf("jetstream: %w", err)
			}
			b.JS = js
			return nil
		}
		if b.Server != nil || (!deadline.IsZero() && time.Now().After(deadline)) {
			return fmt.Errorf("connect to nats %s: %w", redact(b.URL), err)
		}
		b.log.Warn("nats unreachable, retrying", "url", redact(b.URL), "attempt", attempt, "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return fmt.Errorf("connect to nats %s: %w", redact(b.URL), errors.Join(err, ctx.Err()))
		case <-time.After(wait):
		}
		wait = min(wait*2, 5*time.Second)
	}
}

// redact drops user:password from URLs for logs and errors.
func redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if at := strings.LastIndex(p, "@"); at >= 0 {
			if s := strings.Index(p, "://"); s >= 0 && s < at {
				parts[i] = p[:s+3] + "***@" + p[at+1:]
			}
		}
	}
	return strings.Join(parts, ",")
}

// Close drains the connection and stops the embedded server last.
func (b *Bus) Close() {
	if b.NC != nil {
		done := make(chan struct{})
		b.NC.SetClosedHandler(func(*nats.Conn) { close(done) })
		if err := b.NC.Drain(); err == nil {
			select {
			case <-done:
			case <-time.After(5 * time.Second):
			}
		}
		b.NC.Close()
	}
	if b.Server != nil {
		b.Server.Shutdown()
		b.Server.WaitForShutdown()
		_ = os.Remove(filepath.Join(b.dataDir, URLFile))
	}
	if b.lock != nil {
		_ = b.lock.Close()
	}
}

// Ready reports why the bus is not usable, or nil.
func (b *Bus) Ready(ctx context.Context, streams []string) error {
	if b.NC == nil || !b.NC.IsConnected() {
		return errors.New("nats not connected")
	}
	for _, s := range streams {
		if _, err := b.JS.Stream(ctx, s); err != nil {
			return fmt.Errorf("stream %s: %w", s, err)
		}
	}
	return nil
}

// LockDir takes an exclusive lock on dir/netintel.lock, or returns ErrLocked.
func LockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "netintel.lock"), os.O_CREATE|os.O_RDWR, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s", ErrLocked, dir)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
	return f, nil
}

// URLFromDataDir reads the client URL an embedded server left in dir.
func URLFromDataDir(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, URLFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("no running netintel in %s (no %s)", dir, URLFile)
		}
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// FreePort returns a free TCP port on loopback (for tests and port 0 configs).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
