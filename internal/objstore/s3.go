package objstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/netintel/netintel/internal/config"
)

// S3 is an object store in an S3-compatible bucket.
type S3 struct {
	c        *minio.Client
	bucket   string
	partSize uint64
}

var _ Store = (*S3)(nil)

// NewS3 connects to the endpoint and checks that the bucket exists and the
// credentials work, so a misconfiguration stops start-up with one clear line.
func NewS3(ctx context.Context, cfg config.S3) (*S3, error) {
	tr, err := minio.DefaultTransport(cfg.TLS)
	if err != nil {
		return nil, fmt.Errorf("s3 transport: %w", err)
	}
	if cfg.TLS && (cfg.CAFile != "" || cfg.InsecureSkipVerify) {
		tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.InsecureSkipVerify} //nolint:gosec // opt-in for tests
		if cfg.CAFile != "" {
			pem, err := os.ReadFile(cfg.CAFile)
			if err != nil {
				return nil, fmt.Errorf("object_store.s3.ca_file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("object_store.s3.ca_file: no certificate in %s", cfg.CAFile)
			}
			tc.RootCAs = pool
		}
		tr.TLSClientConfig = tc
	}
	c, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:     credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:    cfg.TLS,
		Region:    cfg.Region,
		Transport: tr,
	})
	if err != nil {
		return nil, fmt.Errorf("object_store.s3.endpoint %q: %w", cfg.Endpoint, err)
	}
	s := &S3{c: c, bucket: cfg.Bucket, partSize: cfg.PartSize}
	if s.partSize == 0 {
		s.partSize = 16 << 20
	}
	if err := s.Ping(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Ping checks the credentials and that the bucket exists.
func (s *S3) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ok, err := s.c.BucketExists(ctx, s.bucket)
	if err != nil {
		resp := minio.ToErrorResponse(err)
		switch resp.Code {
		case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied":
			return fmt.Errorf("s3 %s: credentials refused (%s)", s.c.EndpointURL().Host, resp.Code)
		}
		return fmt.Errorf("s3 %s: %s", s.c.EndpointURL().Host, oneLineErr(err))
	}
	if !ok {
		return fmt.Errorf("s3 %s: bucket %q does not exist", s.c.EndpointURL().Host, s.bucket)
	}
	return nil
}

func oneLineErr(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}

// Put uploads r; size -1 streams it as a multipart upload. S3 makes the
// object visible only when the upload completes.
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (Info, error) {
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	ui, err := s.c.PutObject(ctx, s.bucket, key, r, size, minio.PutObjectOptions{
		ContentType: contentType,
		PartSize:    s.partSize,
	})
	if err != nil {
		return Info{}, fmt.Errorf("put %s: %w", key, err)
	}
	return Info{Key: key, Size: ui.Size, ETag: ui.ETag, ModTime: ui.LastModified, ContentType: contentType}, nil
}

// Get opens key, optionally a byte range of it.
func (s *S3) Get(ctx context.Context, key string, rng *Range) (io.ReadCloser, Info, error) {
	opts := minio.GetObjectOptions{}
	if rng != nil && !(rng.Start == 0 && rng.End < 0) {
		var err error
		if rng.End < 0 {
			err = opts.SetRange(rng.Start, 0) // bytes=N-
		} else {
			err = opts.SetRange(rng.Start, rng.End)
		}
		if err != nil {
			return nil, Info{}, fmt.Errorf("get %s: %w", key, err)
		}
	}
	obj, err := s.c.GetObject(ctx, s.bucket, key, opts)
	if err != nil {
		return nil, Info{}, s.mapErr(key, err)
	}
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		return nil, Info{}, s.mapErr(key, err)
	}
	return obj, toInfo(st), nil
}

// Stat describes key.
func (s *S3) Stat(ctx context.Context, key string) (Info, error) {
	st, err := s.c.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return Info{}, s.mapErr(key, err)
	}
	return toInfo(st), nil
}

// List returns the objects under prefix, sorted by key.
func (s *S3) List(ctx context.Context, prefix string) ([]Info, error) {
	var out []Info
	for o := range s.c.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return nil, fmt.Errorf("list %s: %w", prefix, o.Err)
		}
		out = append(out, toInfo(o))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Delete removes key; an absent key is not an error.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := s.c.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return nil
		}
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// PresignGet returns a presigned GET URL that names the download filename.
func (s *S3) PresignGet(ctx context.Context, key string, ttl time.Duration, filename string) (string, error) {
	q := url.Values{}
	if filename != "" {
		q.Set("response-content-disposition", fmt.Sprintf("attachment; filename=%q", filename))
	}
	u, err := s.c.PresignedGetObject(ctx, s.bucket, key, ttl, q)
	if err != nil {
		return "", fmt.Errorf("presign %s: %w", key, err)
	}
	return u.String(), nil
}

func (s *S3) mapErr(key string, err error) error {
	resp := minio.ToErrorResponse(err)
	if resp.Code == "NoSuchKey" || resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	return fmt.Errorf("%s: %w", key, err)
}

func toInfo(o minio.ObjectInfo) Info {
	return Info{Key: o.Key, Size: o.Size, ETag: o.ETag, ModTime: o.LastModified.UTC(), ContentType: o.ContentType}
}
