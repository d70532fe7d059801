// Package secrets is the store and the rules of the one-time secret service
// (spec/one-time-secrets.md): saving text and file ciphertext, reading it
// with a view counted exactly once, chunked uploads, and deleting what
// expired or was used up.
//
// Storage: one record per secret in a JetStream KV bucket with a per-key TTL
// equal to the secret's remaining lifetime, so the server itself deletes an
// expired record, also across restarts. A record holds the view count, the
// expiry, the SHA-256 of the readToken and either the text ciphertext
// (when small) or the key of a blob in the object store (files and large
// text). Views are counted with compare-and-set on the record's revision.
// Chunked uploads keep their state in a second KV bucket and their slices
// in the object store until the completing slice assembles them.
package secrets

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/objstore"
)

// Blobs is the part of the object store the service uses: file ciphertext,
// large text ciphertext and upload slices.
type Blobs interface {
	// Put stores r under key (size bytes, or -1 when unknown), atomically.
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (objstore.Info, error)
	// Get opens key; objstore.ErrNotFound when absent.
	Get(ctx context.Context, key string, rng *objstore.Range) (io.ReadCloser, objstore.Info, error)
	// List returns the objects under prefix.
	List(ctx context.Context, prefix string) ([]objstore.Info, error)
	// Delete removes key; an absent key is not an error.
	Delete(ctx context.Context, key string) error
}

var _ Blobs = objstore.Store(nil)

// Options tune the service. Zero values take the defaults of
// config.Secrets.
type Options struct {
	// Bucket and UploadsBucket are the KV buckets (per-key TTL allowed).
	Bucket, UploadsBucket string
	// BlobPrefix is the object key prefix, ending in "/".
	BlobPrefix string
	// InlineMax is the largest text ciphertext kept in the KV record.
	InlineMax int
	// UploadIdle, UploadMemory and FinishStale: see config.Secrets.
	UploadIdle, UploadMemory, FinishStale time.Duration
	// SweepGrace keeps an unreferenced blob at least this long.
	SweepGrace time.Duration
	// Now is the clock; nil means time.Now. Tests move it forward to
	// expire secrets and uploads.
	Now func() time.Time
	// SpoolDir holds the slices of chunked uploads while they arrive, as
	// unlinked files (at most 4 MiB each); "" = the system temp folder.
	SpoolDir string
	// BeforeFinish, when set, runs in the request that assembles a
	// completed upload, before it starts (tests hold that request here).
	BeforeFinish func(uploadID string)
}

// OptionsFrom converts the config section.
func OptionsFrom(c config.Secrets) Options {
	return Options{
		Bucket: c.Bucket, UploadsBucket: c.UploadsBucket, BlobPrefix: c.BlobPrefix, InlineMax: c.InlineMax,
		UploadIdle: c.UploadIdle, UploadMemory: c.UploadMemory, FinishStale: c.FinishStale, SweepGrace: c.SweepGrace,
	}
}

func (o *Options) fill() {
	d := OptionsFrom(config.Default().Secrets)
	if o.Bucket == "" {
		o.Bucket = d.Bucket
	}
	if o.UploadsBucket == "" {
		o.UploadsBucket = d.UploadsBucket
	}
	if o.BlobPrefix == "" {
		o.BlobPrefix = d.BlobPrefix
	}
	if o.InlineMax == 0 {
		o.InlineMax = d.InlineMax
	}
	if o.UploadIdle <= 0 {
		o.UploadIdle = d.UploadIdle
	}
	if o.UploadMemory <= 0 {
		o.UploadMemory = d.UploadMemory
	}
	if o.FinishStale <= 0 {
		o.FinishStale = d.FinishStale
	}
	if o.SweepGrace <= 0 {
		o.SweepGrace = d.SweepGrace
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Service is the secret store. It is safe for concurrent use, and any
// number of processes may share the same buckets and object store.
type Service struct {
	js        jetstream.JetStream
	kv        bucket
	up        bucket
	blobs     Blobs
	opt       Options
	log       *slog.Logger
	inlineMax int
}

// bucket is a KV bucket with the stream underneath, for reads that need the
// revision of a delete marker and for writes that set a per-key TTL.
type bucket struct {
	kv     jetstream.KeyValue
	stream jetstream.Stream
	name   string
}

// New opens the service on existing buckets (bus.Ensure creates them).
func New(ctx context.Context, js jetstream.JetStream, blobs Blobs, opt Options, log *slog.Logger) (*Service, error) {
	opt.fill()
	s := &Service{js: js, blobs: blobs, opt: opt, log: log.With("stage", "secrets")}
	var err error
	if s.kv, err = openBucket(ctx, js, s.log, opt.Bucket); err != nil {
		return nil, err
	}
	if s.up, err = openBucket(ctx, js, s.log, opt.UploadsBucket); err != nil {
		return nil, err
	}
	s.inlineMax = opt.InlineMax
	if nc := js.Conn(); nc != nil {
		// Leave room for the record's other fields and JSON escaping.
		if limit := int(nc.MaxPayload())/2 - 4096; limit < s.inlineMax {
			s.inlineMax = max(limit, 0)
		}
	}
	return s, nil
}

func openBucket(ctx context.Context, js jetstream.JetStream, log *slog.Logger, name string) (bucket, error) {
	kv, err := bus.OpenKV(ctx, js, log, name)
	if err != nil {
		return bucket{}, fmt.Errorf("open kv %s: %w", name, err)
	}
	var st jetstream.Stream
	err = bus.Retry(ctx, log, "kv stream "+name, func() (err error) {
		st, err = js.Stream(ctx, "KV_"+name)
		return err
	})
	if err != nil {
		return bucket{}, fmt.Errorf("open kv stream %s: %w", name, err)
	}
	if !st.CachedInfo().Config.AllowMsgTTL {
		return bucket{}, fmt.Errorf("kv %s: per-key TTL is off (set per_key_ttl: true)", name)
	}
	return bucket{kv: kv, stream: st, name: name}, nil
}

// errConflict is a lost compare-and-set.
var errConflict = errors.New("revision changed")

// load returns the latest value of key. live is false when the key never
// existed or its latest entry is a delete or purge marker; rev is then the
// marker's revision (or 0), which a create must expect.
func (b bucket) load(ctx context.Context, key string) (data []byte, rev uint64, live bool, err error) {
	m, err := b.stream.GetLastMsgForSubject(ctx, "$KV."+b.name+"."+key)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("load %s: %w", b.name, err)
	}
	if m.Header.Get("KV-Operation") != "" || m.Header.Get(jetstream.MarkerReasonHeader) != "" {
		return nil, m.Sequence, false, nil
	}
	return m.Data, m.Sequence, true, nil
}

// put writes key if its latest revision is still rev (0: never written),
// with a TTL after which the server deletes it.
func (s *Service) put(ctx context.Context, b bucket, key string, v any, rev uint64, ttl time.Duration) (uint64, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return 0, fmt.Errorf("encode %s record: %w", b.name, err)
	}
	ttl = max(ttl, time.Second).Truncate(time.Second) // Nats-TTL has a 1 s resolution
	ack, err := s.js.PublishMsg(ctx, &nats.Msg{Subject: "$KV." + b.name + "." + key, Data: data},
		jetstream.WithExpectLastSequencePerSubject(rev), jetstream.WithMsgTTL(ttl))
	if err != nil {
		if wrongLastSeq(err) {
			return 0, errConflict
		}
		return 0, fmt.Errorf("write %s: %w", b.name, err)
	}
	return ack.Sequence, nil
}

// purge removes key and its data if its latest revision is still rev. The
// purge marker itself expires after a minute.
func (b bucket) purge(ctx context.Context, key string, rev uint64) error {
	err := b.kv.Purge(ctx, key, jetstream.LastRevision(rev), jetstream.PurgeTTL(time.Minute))
	if err != nil {
		if wrongLastSeq(err) || errors.Is(err, jetstream.ErrKeyExists) {
			return errConflict
		}
		return fmt.Errorf("purge %s: %w", b.name, err)
	}
	return nil
}

func wrongLastSeq(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
	}
	return false
}

// record is one stored secret. Only ciphertext and the token hash are kept.
type record struct {
	Scheme int    `json:"v"`
	Hash   string `json:"h"`           // SHA-256 hex of the readToken
	Kind   Kind   `json:"k"`           // text or file
	Views  int    `json:"n"`           // views left
	Exp    int64  `json:"e"`           // expiry, Unix milliseconds
	Msg    string `json:"m,omitempty"` // inline text ciphertext
	Blob   string `json:"b,omitempty"` // object key of the ciphertext
	Size   int64  `json:"s,omitempty"` // blob size
}

// Kind tells text secrets from file secrets.
type Kind string

// The kinds of secret.
const (
	Text Kind = "t"
	File Kind = "f"
)

func (s *Service) now() time.Time { return s.opt.Now() }

func (s *Service) blobKey(id string) string { return s.opt.BlobPrefix + "b/" + id }

// ttlUntil is the time left until exp (Unix ms), rounded up to a second.
func ttlUntil(now time.Time, exp int64) time.Duration {
	d := time.UnixMilli(exp).Sub(now)
	return (d + time.Second - 1).Truncate(time.Second)
}

// SaveText stores a text ciphertext (already validated by the caller with
// ValidTextCiphertext) and returns its new id.
func (s *Service) SaveText(ctx context.Context, p Params, msg string) (string, error) {
	if msg == "" {
		return "", fmt.Errorf("%w: empty message", ErrInvalid)
	}
	id := NewID()
	rec := record{Scheme: p.Scheme, Hash: p.TokenHash, Kind: Text, Views: p.Views, Exp: s.now().Add(time.Duration(p.Duration) * time.Second).UnixMilli()}
	if len(msg) <= s.inlineMax {
		rec.Msg = msg
	} else {
		rec.Blob, rec.Size = s.blobKey(id), int64(len(msg))
		if _, err := s.blobs.Put(ctx, rec.Blob, strings.NewReader(msg), rec.Size, "text/plain"); err != nil {
			return "", fmt.Errorf("store text: %w", err)
		}
	}
	if err := s.create(ctx, id, rec, time.Duration(p.Duration)*time.Second); err != nil {
		if rec.Blob != "" {
			_ = s.blobs.Delete(context.WithoutCancel(ctx), rec.Blob)
		}
		return "", err
	}
	return id, nil
}

func (s *Service) create(ctx context.Context, id string, rec record, ttl time.Duration) error {
	if _, err := s.put(ctx, s.kv, id, rec, 0, ttl); err != nil {
		return fmt.Errorf("save secret: %w", err)
	}
	return nil
}

// Staged is file ciphertext written to the object store but not yet
// committed as a secret (a single-request saveFile may send its fields
// after the file).
type Staged struct {
	id   string
	key  string
	size int64
}

// Size is the number of bytes staged.
func (st Staged) Size() int64 { return st.size }

// StageFile streams r to the object store.
func (s *Service) StageFile(ctx context.Context, r io.Reader) (Staged, error) {
	st := Staged{id: NewID()}
	st.key = s.blobKey(st.id)
	info, err := s.blobs.Put(ctx, st.key, r, -1, "application/octet-stream")
	if err != nil {
		_ = s.blobs.Delete(context.WithoutCancel(ctx), st.key)
		return Staged{}, fmt.Errorf("store file: %w", err)
	}
	st.size = info.Size
	return st, nil
}

// Drop deletes staged ciphertext that will not be committed.
func (s *Service) Drop(ctx context.Context, st Staged) {
	if st.key != "" {
		_ = s.blobs.Delete(context.WithoutCancel(ctx), st.key)
	}
}

// minFileCiphertext is a 12-byte IV and a 16-byte tag.
const minFileCiphertext = 28

// CommitFile turns staged ciphertext into a file secret and returns its id.
// On error the staged blob is deleted.
func (s *Service) CommitFile(ctx context.Context, st Staged, p Params) (string, error) {
	if st.size < minFileCiphertext {
		s.Drop(ctx, st)
		return "", fmt.Errorf("%w: file shorter than iv and tag", ErrInvalid)
	}
	rec := record{Scheme: p.Scheme, Hash: p.TokenHash, Kind: File, Views: p.Views, Blob: st.key, Size: st.size,
		Exp: s.now().Add(time.Duration(p.Duration) * time.Second).UnixMilli()}
	if err := s.create(ctx, st.id, rec, time.Duration(p.Duration)*time.Second); err != nil {
		s.Drop(ctx, st)
		return "", err
	}
	return st.id, nil
}

// Opened is a secret read with one view used. Close must be called, and
// deletes the blob when that was the last view.
type Opened struct {
	// Msg is the text ciphertext of a text secret kept inline.
	Msg string
	// Body streams the ciphertext kept in the object store: every file,
	// and text over inline_max (Msg is then empty). Size is its length.
	Body io.ReadCloser
	Size int64
	// ViewsLeft is what remains after this read; 0 means deleted.
	ViewsLeft int
	// ExpiresIn is the lifetime left in seconds.
	ExpiresIn int64

	cleanup func()
}

// Close releases the body and deletes a used-up blob.
func (o *Opened) Close() error {
	var err error
	if o.Body != nil {
		err = o.Body.Close()
	}
	if o.cleanup != nil {
		o.cleanup()
		o.cleanup = nil
	}
	return err
}

const maxAttempts = 24

// Read uses one view of secret id of the given kind, presenting token (the
// readToken; "" when missing). It returns ErrNoMessage when the secret is
// gone, expired, of the other kind or unknown; ErrWrongKey when the token
// does not match (no view used); ErrRetry when too many concurrent readers
// raced for it (no view used).
func (s *Service) Read(ctx context.Context, id, token string, kind Kind) (*Opened, error) {
	if !ValidID(id) {
		return nil, ErrNoMessage
	}
	presented := []byte(HashToken(token))
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return nil, err
			}
		}
		data, rev, live, err := s.kv.load(ctx, id)
		if err != nil {
			return nil, err
		}
		if !live {
			return nil, ErrNoMessage
		}
		var rec record
		if err := json.Unmarshal(data, &rec); err != nil {
			return nil, fmt.Errorf("decode secret record: %w", err)
		}
		now := s.now()
		if now.UnixMilli() >= rec.Exp {
			s.expire(ctx, id, rev, rec)
			return nil, ErrNoMessage
		}
		if rec.Kind != kind {
			return nil, ErrNoMessage
		}
		if subtle.ConstantTimeCompare(presented, []byte(rec.Hash)) != 1 {
			return nil, ErrWrongKey
		}
		o := &Opened{Msg: rec.Msg, Size: rec.Size, ViewsLeft: rec.Views - 1, ExpiresIn: int64(ttlUntil(now, rec.Exp) / time.Second)}
		// Open the ciphertext before using the view, so a storage failure
		// costs the reader nothing; its bytes are read only after the view
		// is won.
		if rec.Blob != "" {
			body, _, err := s.blobs.Get(ctx, rec.Blob, nil)
			if errors.Is(err, objstore.ErrNotFound) {
				s.expire(ctx, id, rev, rec)
				return nil, ErrNoMessage
			}
			if err != nil {
				return nil, fmt.Errorf("open ciphertext: %w", err)
			}
			// Opened, not read: a reader that loses the race below has
			// loaded nothing, and the winner streams it to its client.
			o.Body = body
		}
		if o.ViewsLeft <= 0 {
			o.ViewsLeft = 0
			err = s.kv.purge(ctx, id, rev)
		} else {
			rec.Views = o.ViewsLeft
			_, err = s.put(ctx, s.kv, id, rec, rev, ttlUntil(now, rec.Exp))
		}
		if err != nil {
			if o.Body != nil {
				o.Body.Close()
			}
			if errors.Is(err, errConflict) {
				continue
			}
			return nil, err
		}
		if o.ViewsLeft == 0 && rec.Blob != "" {
			blob := rec.Blob
			del := func() { _ = s.blobs.Delete(context.WithoutCancel(ctx), blob) }
			if o.Body == nil {
				del()
			} else {
				o.cleanup = del
			}
		}
		return o, nil
	}
	return nil, ErrRetry
}

func backoff(ctx context.Context, attempt int) error {
	d := time.Duration(rand.Int64N(int64(min(attempt, 8)) * int64(2*time.Millisecond)))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// expire deletes an expired or broken record and its blob.
func (s *Service) expire(ctx context.Context, id string, rev uint64, rec record) {
	ctx = context.WithoutCancel(ctx)
	if err := s.kv.purge(ctx, id, rev); err != nil && !errors.Is(err, errConflict) {
		s.log.Warn("delete expired secret", "err", err)
		return
	}
	if rec.Blob != "" {
		_ = s.blobs.Delete(ctx, rec.Blob)
	}
}

// Status reports for each well-formed id whether it can still be read. It
// never uses a view.
func (s *Service) Status(ctx context.Context, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	now := s.now().UnixMilli()
	for _, id := range ids {
		if !ValidID(id) {
			continue
		}
		data, _, live, err := s.kv.load(ctx, id)
		if err != nil {
			return nil, err
		}
		ok := false
		if live {
			var rec record
			ok = json.Unmarshal(data, &rec) == nil && now < rec.Exp && rec.Views > 0
		}
		out[id] = ok
	}
	return out, nil
}
