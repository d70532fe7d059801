package ingest

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
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

// ProxyList reads a public open-proxy list in the forms such lists use.
// Text, one proxy a line: ip:port, [v6]:port, scheme://ip:port (http,
// https, socks4, socks4a, socks5, socks5h), with user:pass@ before the
// address or :user:pass after the port (credentials are dropped, never
// stored), or the address and port as two columns (`ip port`, `ip,port,...`
// CSV); # comments, blank lines and trailing text after white space (spys'
// `CC-A-S +`) are allowed; the lines before the first proxy that hold none
// (a list's banner) are skipped, and a status list's `ip:port => failure`
// lines are skipped, not stored. JSON: an array of proxy objects, an object
// holding one (`data`, `proxies`, ...), or JSON lines, each object with
// `host`/`ip`/`address` and `port`, or a `proxy`/`url` as above, and
// `protocol`/`type`/`protocols` (monosans' proxies.json, fate0's
// proxy.list, proxifly's and geonode's JSON); its egress address when the
// list measured one (`exit_ip`, `export_address`) that differs from the
// proxy's becomes an open_proxy signal too, without a port (what sites
// see of the proxy's users). Each proxy becomes an open_proxy signal about
// the address with the port and its protocol family (http-proxy,
// https-proxy, socks4, socks5) from the scheme or protocol, else from
// opt.Kind (one of the scheme names: the list's own protocol, as http.txt
// or socks5.txt say), else none. Host names are refused: a signal is about
// an address. The list carries no time: observed_at is opt.ObservedAt.
func ProxyList(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	def := ""
	if opt.Kind != "" {
		if def = ProxySchemes[opt.Kind]; def == "" {
			return fmt.Errorf("proxy-list: --kind must be a proxy protocol (http, https, socks4, socks5), got %q", opt.Kind)
		}
	}
	pe := proxyEmitter{src: opt.source("proxy-list"), when: opt.observedAt(), conf: opt.conf(0.6), def: def, emit: emit, bad: bad}
	br := bufio.NewReaderSize(r, 64*1024)
	if isJSONList(br) {
		return pe.json(br)
	}
	read := false
	return opt.lines(br, "proxy list", bad, func(n int, b []byte) error {
		line := strings.TrimSpace(string(b))
		if strings.Contains(line, "=> failure") {
			if opt.Skipped != nil {
				opt.Skipped(n, "listed as failed")
			}
			return nil
		}
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == ';' })
		if len(f) == 0 {
			return nil
		}
		entry := f[0]
		if len(f) >= 2 && (!strings.Contains(entry, ":") || strings.HasPrefix(entry, "[") && !strings.Contains(entry, "]:")) {
			if _, err := strconv.Atoi(f[1]); err == nil { // ip port
				entry = net.JoinHostPort(strings.Trim(entry, "[]"), f[1])
			}
		}
		addr, port, family, err := parseProxy(entry)
		if err != nil {
			if !read && !startsLikeProxy(line) {
				if opt.Skipped != nil {
					opt.Skipped(n, "banner before the first proxy")
				}
				return nil
			}
			bad(LineError{n, err})
			return nil
		}
		read = true
		return pe.signal(n, addr, port, family)
	})
}

// startsLikeProxy tells a line that may be a proxy (an address, a
// bracketed IPv6 address, HOST:PORT or a proxy URL) from a list's banner
// text.
func startsLikeProxy(line string) bool {
	if line == "" {
		return false
	}
	if c := line[0]; c >= '0' && c <= '9' || c == '[' || c == ':' {
		return true
	}
	tok, _, _ := strings.Cut(line, " ")
	if strings.Contains(tok, "://") {
		return true
	}
	if i := strings.LastIndexByte(tok, ':'); i > 0 {
		_, err := strconv.Atoi(tok[i+1:])
		return err == nil
	}
	return false
}

// isJSONList tells a JSON proxy list (an object, or an array of objects
// or strings) from a text one, whose first line may be `[v6]:port`.
func isJSONList(br *bufio.Reader) bool {
	b, _ := br.Peek(4096)
	b = bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("\ufeff")), " \t\r\n")
	if len(b) == 0 {
		return false
	}
	if b[0] == '{' {
		return true
	}
	if b[0] != '[' {
		return false
	}
	rest := bytes.TrimLeft(b[1:], " \t\r\n")
	return len(rest) == 0 || rest[0] == '{' || rest[0] == ']' || rest[0] == '"'
}

// proxyEmitter turns proxies into open_proxy signals.
type proxyEmitter struct {
	src, when string
	conf      float64
	def       string
	emit      Emit
	bad       func(LineError)
}

func (pe *proxyEmitter) signal(n int, addr netip.Addr, port int, family string) error {
	if family == "" {
		family = pe.def
	}
	o := Observation{Type: TypeSignal, IP: addr.String(), Source: pe.src, ObservedAt: pe.when,
		Signal: &Signal{Kind: "open_proxy", Confidence: pe.conf, Port: port, ProtocolFamily: family}}
	return emitChecked(n, o, pe.emit, pe.bad)
}

// json reads a JSON proxy list: arrays, objects holding an array of
// proxies, or a stream of proxy objects (JSON lines).
func (pe *proxyEmitter) json(r io.Reader) error {
	data, err := readJSONFeed(r, "proxy list")
	if err != nil {
		return err
	}
	return jsonValues(data, pe.bad, func(line int, v json.RawMessage, inArray bool) error {
		if inArray {
			return pe.entry(v, line)
		}
		return pe.value(v, line)
	})
}

// proxyArrays are the members an API answer keeps its proxies under.
var proxyArrays = []string{"data", "proxies", "results", "list", "items"}

// value reads a top-level object: an API answer holding an array of
// proxies, or one proxy.
func (pe *proxyEmitter) value(v json.RawMessage, line int) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		pe.bad(LineError{line, fmt.Errorf("want a proxy object or an array of them: %w", err)})
		return nil
	}
	for _, k := range proxyArrays {
		if a, ok := m[k]; ok && len(bytes.TrimSpace(a)) > 0 && bytes.TrimSpace(a)[0] == '[' {
			// The array's elements, each on its own line of the value.
			off := bytes.Index(v, a)
			return jsonValues(a, func(le LineError) {
				le.Line += line - 1 + bytes.Count(v[:off], []byte{'\n'})
				pe.bad(le)
			}, func(l int, el json.RawMessage, _ bool) error {
				return pe.entry(el, l+line-1+bytes.Count(v[:off], []byte{'\n'}))
			})
		}
	}
	return pe.entry(v, line)
}

// proxyEntry is one proxy object of a JSON list, in the member names the
// common lists use.
type proxyEntry struct {
	Host, IP, Address, Addr string
	Proxy, URL              string
	Port                    json.RawMessage
	Protocol, Type, Scheme  string
	Protocols               []string
	ExitIP                  string          `json:"exit_ip"`
	ExportAddress           json.RawMessage `json:"export_address"`
}

func (pe *proxyEmitter) entry(raw json.RawMessage, n int) error {
	var e proxyEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		pe.bad(LineError{n, fmt.Errorf("want a proxy object: %w", err)})
		return nil
	}
	family := ""
	for _, p := range append([]string{e.Protocol, e.Type, e.Scheme}, e.Protocols...) {
		if f := ProxySchemes[strings.ToLower(strings.TrimSpace(p))]; f != "" {
			family = f
			break
		}
	}
	var addr netip.Addr
	var port int
	if u := cmp.Or(e.Proxy, e.URL); u != "" {
		a, p, f, err := parseProxy(u)
		if err != nil {
			pe.bad(LineError{n, fmt.Errorf("proxy: %w", err)})
			return nil
		}
		addr, port, family = a, p, cmp.Or(f, family)
	} else {
		host := cmp.Or(e.Host, e.IP, e.Address, e.Addr)
		if host == "" {
			pe.bad(LineError{n, errors.New("a proxy object with no host, ip, address or proxy member")})
			return nil
		}
		ps := strings.Trim(strings.TrimSpace(string(e.Port)), `"`)
		a, p, _, err := parseProxy(net.JoinHostPort(strings.Trim(host, "[]"), ps))
		if err != nil {
			pe.bad(LineError{n, err})
			return nil
		}
		addr, port = a, p
	}
	if err := pe.signal(n, addr, port, family); err != nil {
		return err
	}
	for _, x := range e.exits() {
		if x == addr || !x.IsGlobalUnicast() || x.IsPrivate() {
			continue
		}
		o := Observation{Type: TypeSignal, IP: x.String(), Source: pe.src, ObservedAt: pe.when,
			Signal: &Signal{Kind: "open_proxy", Confidence: pe.conf}}
		if err := emitChecked(n, o, pe.emit, pe.bad); err != nil {
			return err
		}
	}
	return nil
}

// exits are the egress addresses a list measured for a proxy.
func (e *proxyEntry) exits() []netip.Addr {
	var list []string
	if e.ExitIP != "" {
		list = append(list, e.ExitIP)
	}
	var xs []string
	if json.Unmarshal(e.ExportAddress, &xs) == nil {
		list = append(list, xs...)
	} else if x := ""; json.Unmarshal(e.ExportAddress, &x) == nil && x != "" {
		list = append(list, x)
	}
	var out []netip.Addr
	for _, s := range list {
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, a.Unmap())
		} else if ap, err := netip.ParseAddrPort(s); err == nil {
			out = append(out, ap.Addr().Unmap())
		}
	}
	return out
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
