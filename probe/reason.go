package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"
	"syscall"
)

// inputError names the input (the TLD list, the RDAP bootstrap) that
// could not be loaded, for the reason /api/status shows.
type inputError struct {
	name string
	err  error
}

func (e *inputError) Error() string { return e.name + ": " + e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// statusError is an input server's answer other than 200.
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("status %d", e.code) }

// publicError is an error whose message says nothing about the
// deployment (no address, host name or path), shown as it is.
type publicError struct{ msg string }

func (e *publicError) Error() string { return e.msg }

// Offline reports whether err says this machine cannot reach the internet:
// an input's host name could not be resolved (no resolver, or it answered
// "no such host" for IANA's names) or its network has no route. The first
// check of a fresh `netintel run` on a machine without internet ends so;
// it is logged as one warning, not an error with the resolver's words.
func Offline(err error) bool {
	var (
		in  *inputError
		dns *net.DNSError
	)
	if !errors.As(err, &in) {
		return false
	}
	return errors.As(err, &dns) || errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTUNREACH)
}

// publicReason is what /api/status says about a failed run: the input that
// failed and a class of failure, never an address, a host or resolver name,
// a path or a URL (those go to the log, with the whole error). A DNS error
// names the resolver it asked ("lookup x on 10.0.0.2:53"), a dial error
// the address it dialled; the public status page shows neither.
func publicReason(err error) string {
	var in *inputError
	if errors.As(err, &in) {
		return in.name + ": " + failureClass(in.err)
	}
	return failureClass(err)
}

func failureClass(err error) string {
	var (
		dns    *net.DNSError
		status *statusError
		pub    *publicError
		cert   *tls.CertificateVerificationError
		unk    x509.UnknownAuthorityError
		host   x509.HostnameError
		inval  x509.CertificateInvalidError
		ne     net.Error
	)
	switch {
	case errors.As(err, &pub):
		return pub.msg
	case errors.Is(err, ErrBadInput):
		// The parsers' messages quote the input, not where it came from.
		msg := strings.Join(strings.Fields(err.Error()), " ")
		if _, rest, ok := strings.Cut(msg, ErrBadInput.Error()+": "); ok {
			msg = rest
		}
		if len(msg) > 160 {
			msg = msg[:160] + "..."
		}
		return "malformed: " + msg
	case errors.As(err, &status):
		return fmt.Sprintf("answered HTTP %d", status.code)
	case errors.As(err, &dns) && dns.IsNotFound:
		return "host name not found"
	case errors.As(err, &dns) && dns.IsTimeout:
		return "host name lookup timed out"
	case errors.As(err, &dns):
		return "host name lookup failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "network unreachable"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.As(err, &cert), errors.As(err, &unk), errors.As(err, &host), errors.As(err, &inval):
		return "TLS certificate not accepted"
	case errors.Is(err, fs.ErrNotExist):
		return "file not found"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case strings.Contains(err.Error(), "no responders"), strings.Contains(err.Error(), "nats:"):
		return "the message bus did not answer"
	}
	return "failed (the log has the details)"
}
