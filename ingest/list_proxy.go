package ingest

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
)

// ProxySchemes maps a proxy URL scheme (or proxy-list --kind) to the
// protocol family of the open_proxy signal's asset.
var ProxySchemes = map[string]string{
	"http": "http-proxy", "https": "https-proxy",
	"socks4": "socks4", "socks4a": "socks4", "socks5": "socks5", "socks5h": "socks5",
}

// ProxyList reads a public open-proxy list, one proxy per line, in the
// forms such lists use: ip:port, [v6]:port, scheme://ip:port (http, https,
// socks4, socks4a, socks5, socks5h), with user:pass@ before the address
// or :user:pass after the port (credentials are dropped, never stored).
// # comments, blank lines and trailing text after whitespace are allowed.
// Each becomes an open_proxy signal about the address with the port and
// its protocol family (http-proxy, https-proxy, socks4, socks5) from the
// scheme, else from opt.Kind (one of the scheme names: the list's own
// protocol, as http.txt or socks5.txt say), else none. Host names are
// refused: a signal is about an address. The list carries no time:
// observed_at is opt.ObservedAt.
func ProxyList(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	def := ""
	if opt.Kind != "" {
		if def = ProxySchemes[opt.Kind]; def == "" {
			return fmt.Errorf("proxy-list: --kind must be a proxy protocol (http, https, socks4, socks5), got %q", opt.Kind)
		}
	}
	src := opt.source("proxy-list")
	when := opt.observedAt()
	conf := opt.conf(0.6)
	return opt.lines(r, "proxy list", bad, func(n int, b []byte) error {
		line := strings.TrimSpace(string(b))
		if i := strings.IndexAny(line, " \t#"); i >= 0 {
			line = line[:i]
		}
		if line == "" {
			return nil
		}
		addr, port, family, err := parseProxy(line)
		if err != nil {
			bad(LineError{n, err})
			return nil
		}
		if family == "" {
			family = def
		}
		o := Observation{Type: TypeSignal, IP: addr.String(), Source: src, ObservedAt: when,
			Signal: &Signal{Kind: "open_proxy", Confidence: conf, Port: port, ProtocolFamily: family}}
		return emitChecked(n, o, emit, bad)
	})
}

// parseProxy reads one proxy entry: [scheme://][user:pass@]host:port[:user:pass].
func parseProxy(s string) (netip.Addr, int, string, error) {
	family := ""
	if i := strings.Index(s, "://"); i >= 0 {
		scheme := strings.ToLower(s[:i])
		if family = ProxySchemes[scheme]; family == "" {
			return netip.Addr{}, 0, "", fmt.Errorf("unknown proxy scheme %q", scheme)
		}
		s = s[i+3:]
	}
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimSuffix(s, "/")
	var host, port string
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 || len(s) < end+2 || s[end+1] != ':' {
			return netip.Addr{}, 0, "", errors.New("want [ipv6]:port")
		}
		host, port = s[1:end], s[end+2:]
		if i := strings.IndexByte(port, ':'); i >= 0 {
			port = port[:i] // :user:pass
		}
	} else {
		f := strings.Split(s, ":")
		switch len(f) {
		case 2, 4: // ip:port, ip:port:user:pass
			host, port = f[0], f[1]
		default:
			return netip.Addr{}, 0, "", errors.New("want ip:port (IPv6 as [ip]:port)")
		}
	}
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, 0, "", fmt.Errorf("not an IP address: %q", host)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return netip.Addr{}, 0, "", fmt.Errorf("port: want 1..65535, got %q", port)
	}
	return a.Unmap(), p, family, nil
}
