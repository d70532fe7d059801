package probe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestPublicReason: the reason /api/status shows for a failed run names
// the input and the kind of failure, and none of the addresses, names or
// paths inside the error (a DNS error names the resolver it asked).
func TestPublicReason(t *testing.T) {
	dial := func(err error) error {
		return &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 8443}, Err: &os.SyscallError{Syscall: "connect", Err: err}}
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"resolver address", &inputError{"TLD list", fmt.Errorf("fetch https://data.iana.org/x: Get %q: %w", "https://data.iana.org/x",
			&net.DNSError{Err: "no such host", Name: "data.iana.org", Server: "10.0.0.2:53", IsNotFound: true})}, "TLD list: host name not found"},
		{"dns timeout", &inputError{"RDAP bootstrap", &net.DNSError{Err: "i/o timeout", Name: "data.iana.org", Server: "10.0.0.2:53", IsTimeout: true}}, "RDAP bootstrap: host name lookup timed out"},
		{"refused", &inputError{"TLD list", fmt.Errorf("fetch http://mirror.corp:8080/t: %w", dial(syscall.ECONNREFUSED))}, "TLD list: connection refused"},
		{"unreachable", &inputError{"TLD list", dial(syscall.EHOSTUNREACH)}, "TLD list: network unreachable"},
		{"timeout", &inputError{"TLD list", fmt.Errorf("fetch http://10.1.2.3/t: %w", context.DeadlineExceeded)}, "TLD list: timed out"},
		{"status", &inputError{"RDAP bootstrap", fmt.Errorf("fetch https://10.1.2.3/dns.json: %w", &statusError{503})}, "RDAP bootstrap: answered HTTP 503"},
		{"missing file", &inputError{"TLD list", fmt.Errorf("read /srv/secret/tlds.txt: %w", &fs.PathError{Op: "open", Path: "/srv/secret/tlds.txt", Err: fs.ErrNotExist})}, "TLD list: file not found"},
		{"malformed", &inputError{"TLD list", fmt.Errorf("%w: tld list line 3: %q is not a TLD", ErrBadInput, "a b")}, `TLD list: malformed: tld list line 3: "a b" is not a TLD`},
		{"run timeout", &publicError{"2 of 9 TLDs unfinished after run_timeout 24h0m0s"}, "2 of 9 TLDs unfinished after run_timeout 24h0m0s"},
		{"anything else", fmt.Errorf("put tld/runs/x: dial 10.9.9.9:7070: %w", errors.New("boom")), "failed (the log has the details)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := publicReason(tc.err)
			if got != tc.want {
				t.Errorf("publicReason = %q, want %q", got, tc.want)
			}
			for _, leak := range []string{"10.", "iana.org", "mirror", "/srv", "http"} {
				if strings.Contains(got, leak) {
					t.Errorf("reason %q shows %q", got, leak)
				}
			}
		})
	}
}
