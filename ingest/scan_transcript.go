package ingest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Transcript reads what HTTP clients print about an exchange, as people
// paste it into issue threads, write-ups and tickets: a transcript is
// the client's own output, not a capture format. Read are
//
//   - curl -v (and -i, -I, --trace-ascii's "=> Send header" aside): "*
//     Connected to NAME (IP) port N", the TLS lines ("SSL connection
//     using", the "Server certificate:" block's subject, issuer, dates
//     and whether it was self-signed), "> " request lines, "< " response
//     lines and the body curl printed after them; the progress meter
//     curl mixes into a pasted terminal is skipped, and the header block
//     -i/-I echo to the terminal is not taken for a body;
//   - wget -S (--server-response): "Connecting to NAME (NAME)|IP|:PORT...
//     connected.", the "--DATE--  URL" line's path, the indented response
//     lines, and the certificate wget names when it cannot verify it
//     (issuer, and the subject's common name);
//   - openconnect -v --dump-http-traffic: "Connected to IP:PORT", the
//     cipher suite line, "> " request lines, "Got HTTP response:" with the
//     header lines after it and the "< " body lines;
//   - openfortivpn -v: the http_send/http_receive blocks (the raw request
//     and response), the "Gateway certificate:" block (subject, issuer,
//     sha256 digest of the certificate) and "Configuration host/port".
//   - openssl s_client: the server's certificate (the first PEM block,
//     read whole), "New, TLSv1.3, Cipher is ..." and a self-signed verify
//     error, on the connection the pasted command line names ("openssl
//     s_client -connect IP:PORT"; s_client prints no address itself).
//
// Each connection to an IP address is one service observation: its TLS
// handshake a probe, each request with its response a probe. A
// connection to a name the transcript never resolves (a redacted
// address) is skipped with its reason; a file in which no transcript is
// found at all is refused.
func Transcript(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	t := &transcript{opt: opt, src: opt.source("http-transcript"), emit: emit, bad: bad}
	err := opt.lines(r, "transcript", bad, func(n int, b []byte) error {
		return t.line(n, strings.TrimRight(latin1(b), "\r\n"))
	})
	if err != nil {
		return err
	}
	if err := t.flush(); err != nil {
		return err
	}
	if err := t.emitAll(); err != nil {
		return err
	}
	if !t.seen {
		bad(LineError{1, errors.New("not a client transcript: no curl -v, wget, openconnect or openfortivpn connection or exchange found")})
	}
	return nil
}

// transcript is the reader's state: the connection being read and what
// part of an exchange the last line belonged to.
type transcript struct {
	opt  Options
	src  string
	emit Emit
	bad  func(LineError)
	seen bool // any transcript line was recognised
	// hidden: the connection being read has no address shown (skipped).
	hidden bool
	n      int // the line being read

	conn *tconn
	// pending: an address curl is trying or openfortivpn was configured
	// with, for a connection line that names none.
	pendingIP   string
	pendingPort int
	// url: the last URL wget or openconnect named (scheme, host, path).
	url   string
	mode  tmode
	probe *Probe // the exchange being read
	body  strings.Builder
	// echo: curl -i/-I echo the status and header lines to the terminal
	// after its "< " lines; echoSkip is set while they are passed over.
	echoSkip bool
	// reqBody: the "> " lines after the request's empty line are its body.
	reqBody bool
	// services: the connections read, one per address and port (order:
	// their keys as first met), emitted at the end.
	services map[string]*tconn
	order    []string
	// fetch: the request openconnect named ("GET https://host/path") for
	// an answer whose request it does not dump.
	fetch *Request
	// raw collects an openfortivpn http_send/http_receive block.
	raw strings.Builder
	// cert: which part of a certificate block the next lines fill.
	cert string
	// forceDPD: the pasted command line sets --force-dpd, so the DPD
	// openconnect prints may be the user's, not the server's.
	forceDPD bool
	// fortiLevel: the level prefix of the openfortivpn line being read
	// ("INFO:   "), kept with the line in the gateway's log.
	fortiLevel string
	// fortiUnplaced: a skip was said for openfortivpn lines of a gateway
	// whose address the paste does not show.
	fortiUnplaced bool
}

type tmode int

const (
	tmNone      tmode = iota
	tmRequest         // "> " lines
	tmResponse        // curl "< " header lines
	tmBody            // curl's body after the header block
	tmOCHeader        // openconnect's header lines after "Got HTTP response:"
	tmOCBody          // openconnect's "< " body lines
	tmWget            // wget -S's indented response lines
	tmFortiSend       // openfortivpn http_send block
	tmFortiRecv       // openfortivpn http_receive block
	tmFortiCert       // openfortivpn Gateway certificate block
	tmCurlCert        // curl's "Server certificate:" block
	tmPEM             // a PEM certificate s_client printed
	tmOCConnect       // openconnect's X-CSTP-/X-DTLS- lines after "Got CONNECT response:"
)

// tconn is one connection's evidence.
type tconn struct {
	line   int
	ip     string
	port   int
	host   string
	tls    *TLS
	probes []Probe
	date   time.Time
	// log: openfortivpn's lines of what the gateway answered (its
	// certificate checked, the login, the allocation), as printed.
	log []string
}

var (
	// curl's progress meter, when a pasted terminal mixes it into the
	// verbose lines: "  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0".
	curlMeter      = regexp.MustCompile(`^\s*(?:\d+(?:\.\d+)?[kMGTP]?\s+){8}(?:(?:--:--:--|\d+:\d\d:\d\d)\s+){3}\d+(?:\.\d+)?[kMGTP]?`)
	curlConnected  = regexp.MustCompile(`^\* Connected to (\S+) \(([^)]*)\) port (\d+)`)
	curlTrying     = regexp.MustCompile(`^\*\s+Trying \[?([0-9A-Fa-f.:]+?)\]?:(\d+)`)
	wgetConnecting = regexp.MustCompile(`^Connecting to (?:(\S+) \(\S+\)\|([^|]*)\|:(\d+)|\[?([0-9A-Fa-f.:]+?)\]?:(\d+))\.\.\. connected\.`)
	sclientConnect = regexp.MustCompile(`\bs_client\b.*\s-connect[ =](\S+)`)
	sclientCipher  = regexp.MustCompile(`^New, (\S+), Cipher is (\S+)`)
	wgetURL        = regexp.MustCompile(`^--\d{4}-\d\d-\d\d \d\d:\d\d:\d\d--\s+(\S+)`)
	wgetIssuer     = regexp.MustCompile(`(?:cannot verify|The certificate of) .* issued by [‘'` + "`" + `"](.+?)[’'"]:?\s*$`)
	wgetCommonName = regexp.MustCompile(`certificate common name [‘'` + "`" + `"](.+?)[’'"] doesn't match`)
	// ocConnected: openconnect's connection line; before 4.07 (2012) the
	// attempt read "Attempting to connect to HOST:PORT" (no "server").
	// A name or a masked address ("XXX.XXX.XXX.XXX") is read too, to be
	// skipped with its reason.
	ocConnected = regexp.MustCompile(`^(?:Connected to |Attempting to connect to (?:server )?)(\[[0-9A-Fa-f:.]+\]|[^\s:\[\]]+):(\d+)\s*$`)
	// journalPrefix: the time stamp, host and tag a system log puts
	// before a client's lines: journalctl's and syslog's "Jan 02
	// 10:00:00 host openconnect[812]: ", OpenWrt's logread "Sat Mar 16
	// 09:20:32 2019 daemon.info openconnect[20669]: ", NetworkManager's
	// plugins ("nm-openconnect[...]", "nm-fortisslvpn-service[...]").
	journalPrefix = regexp.MustCompile(`^[^\[\]]{0,80}?\d\d:\d\d:\d\d\S*\s+(?:\S+\s+){0,2}(?:nm-)?(?:openconnect|openfortivpn|fortisslvpn|gpclient|gpservice)(?:-service)?\[\d+\]:[ \t]?`)
	// ocCONNECT: openconnect's (cstp.c) status line of the server's answer
	// to its CONNECT /CSCOSSLC/tunnel, accepted or not.
	ocCONNECT = regexp.MustCompile(`^Got (?:inappropriate HTTP )?CONNECT response: (.*)$`)
	// ocCSTP: the timers cstp.c read of the CONNECT answer's
	// X-CSTP-DPD (the least non-zero) and X-CSTP-Keepalive headers.
	ocCSTP = regexp.MustCompile(`^CSTP connected\. DPD (\d+), Keepalive (\d+)\s*$`)
	// clientStamp: a log line's time stamp: openconnect --timestamp's
	// "[2024-04-30 11:03:48] ", OpenConnect-GUI's "2024-04-30 11:03:48 | 30e13b000 | ".
	clientStamp = regexp.MustCompile(`^(?:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\] |\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \| [0-9A-Fa-fx]+ \| )`)
	// ocFetch: the URL openconnect says it fetches ("GET https://host/path"),
	// the request of the answer that follows when the traffic is not dumped.
	ocFetch         = regexp.MustCompile(`^(GET|POST) https?://[^/\s]+(/\S*)?$`)
	ocCipher        = regexp.MustCompile(`^Connected to HTTPS on \S+ with ciphersuite \((\S+?)\)-(.*)$`)
	fortiConfigured = regexp.MustCompile(`^(?:Config(?:uration)? (host|port) = "([^"]*)"|(gateway_addr|gateway_ip|gateway_port): (\S+))$`)
	// openfortivpn's level prefixes are eight characters wide; what
	// follows keeps its own indentation (a certificate's name parts).
	fortiLogPrefix = regexp.MustCompile(`^(?:ERROR:  |WARN:   |INFO:   |DEBUG:  )`)
	// fortiLogSqueezed: the level with its padding squeezed to a space, as
	// pastes (pastebin, guides) often have it: "INFO: Connected to gateway.".
	fortiLogSqueezed = regexp.MustCompile(`^(?:ERROR|WARN|INFO|DEBUG):[ \t]+`)
	// ansiColour: a coloured terminal's escape sequences.
	ansiColour = regexp.MustCompile(`\x1b\[[0-9;]*m`)
)

func (t *transcript) line(n int, l string) error {
	t.n = n
	if strings.IndexByte(l, 0x1b) >= 0 {
		l = ansiColour.ReplaceAllString(l, "")
	}
	if m := curlMeter.FindStringIndex(l); m != nil {
		l = l[m[1]:]
	}
	if m := clientStamp.FindStringIndex(l); m != nil {
		l = l[m[1]:] // openconnect --timestamp, OpenConnect-GUI's log
	}
	if m := journalPrefix.FindStringIndex(l); m != nil && t.mode != tmBody {
		l = l[m[1]:] // a system log's time stamp, host and client tag (not in curl's body)
	}
	if strings.Contains(l, "--force-dpd") {
		t.forceDPD = true // the DPD openconnect prints may be the user's
	}
	// openfortivpn's log lines carry a level; the lines of a logged
	// request or response and of the certificate names do not.
	logged := false
	m := fortiLogPrefix.FindStringIndex(l)
	if m == nil {
		m = fortiLogSqueezed.FindStringIndex(l)
	}
	if m != nil {
		t.fortiLevel = l[:m[1]]
		l, logged = l[m[1]:], true
	}
	switch t.mode {
	case tmFortiSend, tmFortiRecv:
		if !logged {
			t.raw.WriteString(l)
			t.raw.WriteByte('\n')
			return nil
		}
		t.endForti()
	case tmFortiCert:
		if t.fortiCert(l) {
			return nil
		}
		t.mode = tmNone
	}
	switch {
	case strings.HasPrefix(l, "* ") || l == "*":
		return t.curlInfo(n, l)
	case strings.HasPrefix(l, "> ") || l == ">":
		t.request(n, strings.TrimPrefix(strings.TrimPrefix(l, ">"), " "))
		return nil
	case strings.HasPrefix(l, "< ") || l == "<":
		t.received(strings.TrimPrefix(strings.TrimPrefix(l, "<"), " "))
		return nil
	case strings.HasPrefix(l, "{ [") || strings.HasPrefix(l, "} ["):
		return nil // curl's data-size lines
	}
	if logged {
		return t.forti(n, l)
	}
	if done, err := t.connection(n, l); done || err != nil {
		return err
	}
	switch t.mode {
	case tmBody:
		t.curlBody(l)
	case tmOCConnect:
		if t.cstpLine(l) {
			return nil
		}
	case tmOCHeader:
		if strings.HasPrefix(l, "HTTP body ") {
			// "HTTP body length:  (131)", "HTTP body chunked (-2)": the
			// "< " lines after it are the body.
			t.mode = tmOCBody
			return nil
		}
		if h, ok := headerLine([]byte(l)); ok && t.probe != nil && t.probe.Response != nil {
			t.probe.Response.Headers = append(t.probe.Response.Headers, h)
			t.dated(h)
			return nil
		}
		t.mode = tmNone
	case tmWget:
		if strings.HasPrefix(l, "  ") {
			t.wgetLine(strings.TrimSpace(l))
			return nil
		}
		t.endProbe()
	}
	t.wgetNotes(l)
	return nil
}

// connection reads the lines that open a connection or name a URL.
func (t *transcript) connection(n int, l string) (bool, error) {
	if m := wgetURL.FindStringSubmatch(l); m != nil {
		t.endProbe()
		t.seen, t.url = true, m[1]
		return true, nil
	}
	if m := wgetConnecting.FindStringSubmatch(l); m != nil {
		host, ip, port := m[1], m[2], m[3]
		if ip == "" {
			ip, port = m[4], m[5]
		}
		return true, t.open(n, host, ip, port)
	}
	if strings.HasPrefix(l, "Reusing existing connection to ") {
		t.endProbe()
		return true, nil
	}
	if strings.HasPrefix(l, "HTTP request sent, awaiting response...") {
		t.endProbe()
		t.startWget()
		if rest := strings.TrimSpace(strings.TrimPrefix(l, "HTTP request sent, awaiting response...")); rest != "" {
			// Without -S wget prints the status alone: "200 OK".
			if code, reason, _ := strings.Cut(rest, " "); len(code) == 3 {
				if s, err := strconv.Atoi(code); err == nil && s >= 100 {
					t.probe.Response.Status, t.probe.Response.Reason = s, reason
				}
			}
		}
		return true, nil
	}
	if t.mode == tmPEM {
		if t.conn != nil && (t.conn.tls == nil || t.conn.tls.PEM == "" || !strings.HasSuffix(t.conn.tls.PEM, "-----END CERTIFICATE-----\n")) {
			t.tls().PEM += strings.TrimSpace(l) + "\n"
		}
		if strings.HasPrefix(l, "-----END CERTIFICATE-----") {
			t.mode = tmNone
		}
		return true, nil
	}
	if m := sclientConnect.FindStringSubmatch(l); m != nil {
		// The pasted command line: where the connection that follows goes.
		host, port, err := net.SplitHostPort(m[1])
		if err != nil {
			host, port = m[1], "443"
		}
		t.pendingIP, t.pendingPort = host, 0
		t.pendingPort, _ = strconv.Atoi(port)
		t.seen = true
		return true, nil
	}
	if strings.HasPrefix(l, "CONNECTED(") && t.pendingIP != "" {
		return true, t.open(n, "", t.pendingIP, strconv.Itoa(t.pendingPort))
	}
	if strings.HasPrefix(l, "-----BEGIN CERTIFICATE-----") && t.conn != nil {
		t.mode = tmPEM
		if t.conn.tls == nil || t.conn.tls.PEM == "" {
			t.tls().PEM = l + "\n"
		}
		return true, nil
	}
	if t.conn != nil && (strings.HasPrefix(l, "verify error:num=18:") || strings.HasPrefix(strings.TrimSpace(l), "Verify return code: 18 ")) {
		t.tls().SelfSigned = true
		return true, nil
	}
	if m := sclientCipher.FindStringSubmatch(l); m != nil && t.conn != nil {
		t.tls().Version, t.tls().Cipher = m[1], m[2]
		return true, nil
	}
	if m := ocConnected.FindStringSubmatch(l); m != nil {
		return true, t.open(n, "", m[1], m[2])
	}
	if m := ocCipher.FindStringSubmatch(l); m != nil && t.conn != nil {
		t.tls().Version, t.tls().Cipher = tlsVersionText(m[1]), strings.TrimSpace(m[2])
		return true, nil
	}
	if m := ocFetch.FindStringSubmatch(l); m != nil {
		t.endResponse()
		path := m[2]
		if path == "" {
			path = "/"
		}
		t.fetch = &Request{Method: m[1], Path: path}
		t.seen = true
		return true, nil
	}
	if m := ocCONNECT.FindStringSubmatch(l); m != nil {
		// The answer to openconnect's CONNECT /CSCOSSLC/tunnel (cstp.c
		// sends it after the login; the paste shows the status line and,
		// with -v, the X-CSTP-/X-DTLS- headers it kept).
		t.endProbe()
		t.fetch = nil
		proto, status, reason, ok := parseStatusLine(strings.TrimSpace(m[1]))
		if !ok {
			t.bad(LineError{n, fmt.Errorf("openconnect CONNECT response: not an HTTP status line: %q", m[1])})
			return true, nil
		}
		t.probe = &Probe{Request: &Request{Method: "CONNECT", Path: "/CSCOSSLC/tunnel"},
			Response: &Response{Protocol: proto, Status: status, Reason: reason}}
		t.mode, t.seen = tmOCConnect, true
		return true, nil
	}
	if strings.HasPrefix(l, "Got HTTP response: ") {
		t.endResponse()
		if t.probe == nil && t.fetch != nil {
			// no "> " request dumped: the request is the URL openconnect fetched
			t.probe = &Probe{Request: t.fetch}
		}
		t.fetch = nil
		t.ensureProbe()
		proto, status, reason, ok := parseStatusLine(strings.TrimPrefix(l, "Got HTTP response: "))
		if ok {
			t.probe.Response = &Response{Protocol: proto, Status: status, Reason: reason}
			t.mode, t.seen = tmOCHeader, true
		}
		return true, nil
	}
	return false, nil
}

// open starts the connection a transcript line names; the previous one
// is emitted.
func (t *transcript) open(n int, host, ip, port string) error {
	if err := t.flush(); err != nil {
		return err
	}
	t.seen = true
	a, err := netip.ParseAddr(strings.Trim(ip, "[]"))
	if err != nil {
		if strings.Trim(ip, "0123456789.:[]") == "" {
			t.bad(LineError{n, fmt.Errorf("connection: not an IP address: %q", ip)})
			return nil
		}
		// A name, or an address the paste masked ("x.x.x.x", "<redacted>"):
		// well formed, but there is no address to observe.
		t.opt.skip(n, fmt.Sprintf("transcript: the connection's address is not shown (%q); its exchanges are not stored", ip))
		t.hidden = true
		return nil
	}
	t.hidden = false
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		t.bad(LineError{n, fmt.Errorf("connection: bad port %q", port)})
		return nil
	}
	t.conn = &tconn{line: n, ip: a.Unmap().String(), port: p}
	if host != "" && host != ip {
		t.conn.host = host
	}
	return nil
}

// curlInfo reads curl's "* " lines.
func (t *transcript) curlInfo(n int, l string) error {
	if m := curlConnected.FindStringSubmatch(l); m != nil {
		return t.open(n, m[1], m[2], m[3])
	}
	if m := curlTrying.FindStringSubmatch(l); m != nil {
		t.pendingIP, t.pendingPort = m[1], 0
		t.pendingPort, _ = strconv.Atoi(m[2])
		t.seen = true
		return nil
	}
	info := strings.TrimSpace(strings.TrimPrefix(l, "*"))
	switch {
	case t.conn == nil:
		return nil
	case strings.HasPrefix(info, "SSL connection using "):
		// "TLSv1.2 / ECDHE-RSA-AES256-GCM-SHA384" (curl 8 adds the group
		// and signature: "TLSv1.3 / TLS_AES_256_GCM_SHA384 / X25519 / RSASSA-PSS").
		parts := strings.Split(strings.TrimPrefix(info, "SSL connection using "), " / ")
		t.tls().Version = strings.TrimSpace(parts[0])
		if len(parts) > 1 {
			t.tls().Cipher = strings.TrimSpace(parts[1])
		}
	case info == "Server certificate:":
		t.mode = tmCurlCert
	case t.mode == tmCurlCert:
		t.curlCert(info)
	}
	return nil
}

// curlCert reads a line of curl's "Server certificate:" block.
func (t *transcript) curlCert(info string) {
	k, v, ok := strings.Cut(info, ": ")
	if !ok {
		if strings.HasPrefix(info, "SSL certificate verify") {
			t.mode = tmNone
		}
		return
	}
	tl := t.tls()
	switch k {
	case "subject":
		tl.Subject = certName(v)
	case "issuer":
		tl.Issuer = certName(v)
	case "start date":
		tl.NotBefore = certDate(v)
	case "expire date":
		tl.NotAfter = certDate(v)
	case "subjectAltName":
		// `host "www.x" matched cert's "*.x"`: the name the certificate has.
		if i := strings.Index(v, `cert's "`); i >= 0 {
			if name, _, ok := strings.Cut(v[i+len(`cert's "`):], `"`); ok {
				tl.SANs = append(tl.SANs, name)
			}
		}
	case "SSL certificate verify result":
		// OpenSSL's X509_V_ERR 18 is the server's own certificate
		// self-signed; 19, "self-signed certificate in certificate chain",
		// is a chain ending in a CA the client does not trust.
		tl.SelfSigned = strings.Contains(v, "(18)")
		t.mode = tmNone
	}
}

// certDate reads a certificate date as curl and openssl print it: "May
// 24 07:13:14 2023 GMT" (or "May  4 ..."); "" when it is not one.
func certDate(v string) string {
	v = strings.Join(strings.Fields(v), " ")
	for _, layout := range []string{"Jan 2 15:04:05 2006 MST", "2006-01-02 15:04:05 MST", time.RFC1123} {
		if d, err := time.Parse(layout, v); err == nil {
			return d.UTC().Format(time.RFC3339)
		}
	}
	return ""
}

// request reads a "> " line: a request line starts an exchange, a header
// line adds to it, an empty one ends the header block.
func (t *transcript) request(n int, l string) {
	t.seen = true
	if method, target, ok := requestLine(l); ok {
		t.endProbe()
		if t.conn == nil && t.pendingIP != "" {
			_ = t.open(n, "", t.pendingIP, strconv.Itoa(t.pendingPort))
		}
		t.probe = &Probe{Request: &Request{Method: method, Path: target}}
		t.mode, t.reqBody = tmRequest, false
		return
	}
	p := t.probe
	if p == nil || p.Request == nil || p.Response != nil {
		return
	}
	switch {
	case t.reqBody:
		// What openconnect sends after the header block (a login form, an
		// XML document with the user's credentials) is not kept, as no
		// request body is (withoutCredentials).
		return
	case l == "":
		t.reqBody = true
		return
	}
	if h, ok := headerLine([]byte(l)); ok {
		if strings.EqualFold(h.Name, "Host") {
			p.Request.Host = h.Value
		}
		p.Request.Headers = append(p.Request.Headers, h)
	}
}

// requestLine reads "GET /path HTTP/1.1".
func requestLine(l string) (method, target string, ok bool) {
	f := strings.Fields(l)
	if len(f) != 3 || !strings.HasPrefix(f[2], "HTTP/") || !isToken(f[0]) {
		return "", "", false
	}
	return f[0], f[1], true
}

func isToken(s string) bool {
	for _, c := range s {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return s != ""
}

// received reads a "< " line: curl's status and header lines, or
// openconnect's body lines.
func (t *transcript) received(l string) {
	t.seen = true
	if t.mode == tmOCHeader || t.mode == tmOCBody {
		t.mode = tmOCBody
		t.body.WriteString(l)
		t.body.WriteByte('\n')
		return
	}
	if proto, status, reason, ok := parseStatusLine(l); ok {
		if t.probe != nil && t.probe.Response != nil {
			t.endProbe() // a second answer on the request (100 Continue, a redirect followed)
		}
		t.ensureProbe()
		t.probe.Response = &Response{Protocol: proto, Status: status, Reason: reason}
		t.mode = tmResponse
		return
	}
	if t.probe == nil || t.probe.Response == nil {
		return
	}
	if l == "" {
		t.mode, t.echoSkip = tmBody, false
		return
	}
	if h, ok := headerLine([]byte(l)); ok {
		t.probe.Response.Headers = append(t.probe.Response.Headers, h)
		t.dated(h)
	}
}

// cstpLine reads a line after openconnect's CONNECT status line: a
// header it printed (-v: "X-CSTP-DPD: 30"), or "CSTP connected. DPD n,
// Keepalive n", whose values are those the server's X-CSTP-DPD and
// X-CSTP-Keepalive headers gave (cstp.c; 0 when it sent none), added as
// those headers when the paste did not print them. False when the line
// is neither (a DTLS or a routing line: the exchange stays open).
func (t *transcript) cstpLine(l string) bool {
	p := t.probe
	if p == nil || p.Response == nil {
		t.mode = tmNone
		return false
	}
	if m := ocCSTP.FindStringSubmatch(l); m != nil {
		if m[1] != "0" && !t.forceDPD && headerValue(p.Response.Headers, "X-CSTP-DPD") == "" {
			p.Response.Headers = append(p.Response.Headers, Header{Name: "X-CSTP-DPD", Value: m[1]})
		}
		if m[2] != "0" && headerValue(p.Response.Headers, "X-CSTP-Keepalive") == "" {
			p.Response.Headers = append(p.Response.Headers, Header{Name: "X-CSTP-Keepalive", Value: m[2]})
		}
		t.endProbe()
		return true
	}
	if strings.HasPrefix(l, "X-CSTP-") || strings.HasPrefix(l, "X-DTLS-") || strings.HasPrefix(l, "X-DTLS12-") {
		if h, ok := headerLine([]byte(l)); ok {
			if h.Value != "<elided>" { // X-CSTP-Post-Auth-XML, not printed
				p.Response.Headers = append(p.Response.Headers, h)
			}
			return true
		}
	}
	return false
}

// curlBody reads a line curl printed after the response's header block:
// the body, unless it is the terminal echo of the status and headers
// that -i and -I print (passed over up to its empty line), or the answer
// to a HEAD, which has no body.
func (t *transcript) curlBody(l string) {
	p := t.probe
	if p == nil || p.Response == nil {
		return
	}
	if t.body.Len() == 0 && !t.echoSkip {
		if _, status, _, ok := parseStatusLine(l); ok && status == p.Response.Status {
			t.echoSkip = true
			return
		}
	}
	if t.echoSkip {
		if strings.TrimSpace(l) == "" {
			t.echoSkip = false
		}
		return
	}
	if p.Request != nil && p.Request.Method == "HEAD" || strings.HasPrefix(l, "```") {
		t.mode = tmNone // no body; or the end of a pasted block
		return
	}
	if t.body.Len() == 0 && strings.TrimSpace(l) == "" {
		return
	}
	t.body.WriteString(l)
	t.body.WriteByte('\n')
	// A body of the length the answer declared is whole: what follows
	// is not the body (the paste's own text).
	if n, err := strconv.Atoi(headerValue(p.Response.Headers, "Content-Length")); err == nil && t.body.Len() >= n {
		t.mode = tmNone
	}
}

// headerValue is the first value of the header name ("" when absent).
func headerValue(hs Headers, name string) string {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// startWget starts the exchange wget just sent, its request the last URL's.
func (t *transcript) startWget() {
	t.seen = true
	req := &Request{Method: "GET"}
	if u := t.url; u != "" {
		if _, rest, ok := strings.Cut(u, "://"); ok {
			host, path, _ := strings.Cut(rest, "/")
			req.Host, req.Path = host, "/"+path
		}
	}
	t.probe = &Probe{Request: req, Response: &Response{}}
	t.mode = tmWget
}

// wgetLine reads one of wget -S's indented response lines.
func (t *transcript) wgetLine(l string) {
	r := t.probe.Response
	if proto, status, reason, ok := parseStatusLine(l); ok {
		if r.Status != 0 && len(r.Headers) > 0 {
			// A second answer on the request (a 100 Continue before it).
			r.Headers = nil
		}
		r.Protocol, r.Status, r.Reason = proto, status, reason
		return
	}
	if h, ok := headerLine([]byte(l)); ok {
		r.Headers = append(r.Headers, h)
		t.dated(h)
	}
}

// wgetNotes reads what wget says of a certificate it cannot verify: the
// issuer's name and the subject's common name.
func (t *transcript) wgetNotes(l string) {
	if t.conn == nil {
		return
	}
	if m := wgetIssuer.FindStringSubmatch(l); m != nil {
		t.tls().Issuer = ParseDN(m[1])
		t.seen = true
	}
	if m := wgetCommonName.FindStringSubmatch(l); m != nil {
		if t.tls().Subject == nil {
			t.tls().Subject = &DN{}
		}
		t.tls().Subject.CN = m[1]
	}
	if strings.Contains(l, "Self-signed certificate encountered") {
		t.tls().SelfSigned = true
	}
}

// forti reads an openfortivpn log line (its level prefix removed).
func (t *transcript) forti(n int, l string) error {
	switch {
	case l == "http_send:":
		t.endProbe()
		t.raw.Reset()
		t.mode, t.seen = tmFortiSend, true
	case l == "http_receive:":
		t.raw.Reset()
		t.mode, t.seen = tmFortiRecv, true
	case l == "Gateway certificate:":
		t.mode, t.cert, t.seen = tmFortiCert, "", true
		if t.conn == nil && t.pendingIP != "" {
			if err := t.open(n, "", t.pendingIP, strconv.Itoa(t.pendingPort)); err != nil {
				return err
			}
		}
		if t.conn != nil {
			// openfortivpn prints the block again on each attempt.
			t.tls().Subject, t.tls().Issuer = nil, nil
		}
	case fortiGatewayLine(l):
		t.seen = true
		if t.conn == nil && t.pendingIP != "" && !t.hidden {
			if err := t.open(n, "", t.pendingIP, strconv.Itoa(t.pendingPort)); err != nil {
				return err
			}
		}
		switch {
		case t.conn != nil:
			t.conn.log = append(t.conn.log, t.fortiLevel+l)
		case !t.hidden && !t.fortiUnplaced:
			t.fortiUnplaced = true
			t.opt.skip(n, "transcript: openfortivpn's lines name no gateway address (no gateway_ip, gateway_addr or Configuration host line with an address before them); they are not stored")
		}
	default:
		m := fortiConfigured.FindStringSubmatch(l)
		if m == nil {
			return nil
		}
		t.seen = true
		key, value := m[1], m[2]
		if key == "" {
			key, value = m[3], m[4]
		}
		switch key {
		case "host", "gateway_addr", "gateway_ip":
			if t.pendingPort == 0 {
				t.pendingPort = 443
			}
			if t.pendingIP != value {
				t.hidden = false // a new gateway: its masking said anew
			}
			t.pendingIP = value
		case "port", "gateway_port":
			if p, err := strconv.Atoi(value); err == nil {
				t.pendingPort = p
			}
		}
	}
	return nil
}

// fortiGatewayLines: the openfortivpn messages (src/tunnel.c, http.c,
// io.c) that report what the gateway answered: its certificate checked,
// the TLS connection, the login (logincheck's SVPNCOOKIE or the status
// it refused with), the allocation (/remote/fortisslvpn), the tunnel's
// configuration and PPP addresses, the logout. The client's own setup
// (configuration, socket options, cipher list, routes) and its
// credentials ("Cookie: SVPNCOOKIE=...") are not among them.
var fortiGatewayLines = []string{
	"Gateway certificate validation ", "Gateway certificate digest ",
	"Connected to gateway.", "Authenticated.", "Remote gateway has allocated a VPN.",
	"Could not authenticate to gateway", "Could not get VPN configuration",
	"Could not log out", "No cookie given", "Empty cookie.", "HTTP status code",
	"Bad HTTP response code", "Error issuing ", "Error reading from SSL connection",
	"Error reading from TLS connection", "No cookie found", "Unable to get gateway certificate.",
	"Authentication succeeded", "Authentication failed",
	"Gateway replied to authentication with an unsupported challenge",
	"Found dns suffix ", "Found dns server ",
	"Got addresses: ", "Negotiation complete.", "negotiation complete",
	"Tunnel is up and running.", "Closed connection to gateway.", "Logged out.",
}

func fortiGatewayLine(l string) bool {
	for _, p := range fortiGatewayLines {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// fortiCert reads a line of openfortivpn's certificate block; false
// when the line is not one.
func (t *transcript) fortiCert(l string) bool {
	s := strings.TrimSpace(l)
	if !strings.HasPrefix(l, " ") || s == "" {
		return false
	}
	switch s {
	case "subject:", "issuer:", "sha256 digest:":
		t.cert = s
		return true
	}
	if t.conn == nil {
		return true
	}
	tl := t.tls()
	switch t.cert {
	case "subject:":
		tl.Subject = addDNPart(tl.Subject, s)
	case "issuer:":
		tl.Issuer = addDNPart(tl.Issuer, s)
	case "sha256 digest:":
		tl.SHA256 = strings.ToLower(s)
	}
	return true
}

// addDNPart adds one "C=US" line of a name printed a part a line.
func addDNPart(d *DN, part string) *DN {
	whole := "/" + part
	if d != nil {
		whole = d.DN + whole
		if !strings.HasPrefix(d.DN, "/") {
			whole = "/" + d.DN + whole
		}
	}
	return ParseDN(whole)
}

// endForti ends an openfortivpn http_send or http_receive block.
func (t *transcript) endForti() {
	raw := t.raw.String()
	t.raw.Reset()
	mode := t.mode
	t.mode = tmNone
	if t.conn == nil && t.pendingIP != "" {
		_ = t.open(t.n, "", t.pendingIP, strconv.Itoa(t.pendingPort))
	}
	switch mode {
	case tmFortiSend:
		req, ok := parseHTTPRequest([]byte(strings.TrimLeft(raw, "\n")))
		if !ok {
			return
		}
		t.probe = &Probe{Request: req}
	case tmFortiRecv:
		resp, ok := parseHTTPResponse([]byte(strings.TrimLeft(raw, "\n")))
		if !ok {
			return
		}
		// The logged buffer may hold bytes past the declared body.
		if n, err := strconv.Atoi(headerValue(resp.Headers, "Content-Length")); err == nil && resp.Body != nil && len(resp.Body.Data) > n && resp.Body.Encoding == "" {
			resp.Body.Data = resp.Body.Data[:n]
		}
		t.ensureProbe()
		t.probe.Response = resp
		for _, h := range resp.Headers {
			t.dated(h)
		}
		t.endProbe()
	}
}

func (t *transcript) ensureProbe() {
	if t.probe == nil {
		t.probe = &Probe{}
	}
}

// dated keeps the first Date header as the connection's time.
func (t *transcript) dated(h Header) {
	if t.conn == nil || !t.conn.date.IsZero() || !strings.EqualFold(h.Name, "Date") {
		return
	}
	if d, err := time.Parse(time.RFC1123, h.Value); err == nil {
		t.conn.date = d.UTC()
	}
}

func (t *transcript) tls() *TLS {
	if t.conn.tls == nil {
		t.conn.tls = &TLS{}
	}
	return t.conn.tls
}

// endResponse ends the exchange being read when it has its answer.
func (t *transcript) endResponse() {
	if t.probe != nil && t.probe.Response != nil {
		t.endProbe()
	}
}

// endProbe adds the exchange being read to its connection.
func (t *transcript) endProbe() {
	p := t.probe
	t.probe = nil
	body := t.body.String()
	t.body.Reset()
	t.echoSkip = false
	if t.mode != tmFortiSend && t.mode != tmFortiRecv && t.mode != tmFortiCert {
		t.mode = tmNone
	}
	if p == nil || (p.Response == nil && p.Request == nil) {
		return
	}
	if p.Response != nil && body != "" {
		p.Response.Body = TextBody(body)
	}
	// A client's own credentials (Authorization, Cookie, a login form's
	// body) are not the server's evidence and are not kept.
	withoutCredentials(p.Request)
	if t.conn == nil {
		if !t.hidden {
			t.opt.skip(t.n, "transcript: an exchange on no connection the transcript shows (no \"Connected to\" line with an address before it)")
		}
		return
	}
	t.conn.probes = append(t.conn.probes, *p)
}

// flush emits the connection being read.
func (t *transcript) flush() error {
	if t.mode == tmFortiSend || t.mode == tmFortiRecv {
		t.endForti()
	}
	t.endProbe()
	c := t.conn
	t.conn = nil
	if c == nil {
		return nil
	}
	if c.tls == nil && len(c.probes) == 0 && len(c.log) == 0 {
		t.opt.skip(c.line, "transcript: connection with no exchange or certificate")
		return nil
	}
	// Connections to one address and port are one service: a client that
	// reconnects (a redirect followed, a retry) adds its exchanges to it.
	key := c.ip + " " + strconv.Itoa(c.port)
	if prev := t.services[key]; prev != nil {
		prev.probes = append(prev.probes, c.probes...)
		prev.log = append(prev.log, c.log...)
		if prev.tls == nil {
			prev.tls = c.tls
		}
		if prev.host == "" {
			prev.host = c.host
		}
		return nil
	}
	if t.services == nil {
		t.services = map[string]*tconn{}
	}
	if len(t.order) >= maxTranscriptServices {
		if err := t.emitAll(); err != nil {
			return err
		}
	}
	t.services[key] = c
	t.order = append(t.order, key)
	return nil
}

// maxTranscriptServices bounds the services a transcript holds before it
// emits them (a transcript of a scan of many addresses).
const maxTranscriptServices = 4096

// emitAll emits the services read so far, in the order first met.
func (t *transcript) emitAll() error {
	for _, key := range t.order {
		c := t.services[key]
		var probes []Probe
		if c.tls != nil {
			probes = append(probes, Probe{Name: "tls", TLS: c.tls})
		}
		probes = append(probes, c.probes...)
		if len(c.log) > 0 {
			// openfortivpn's lines of the gateway's answers, as printed
			probes = append(probes, Probe{Name: "openfortivpn", Banner: &Banner{Received: TextBody(strings.Join(c.log, "\n") + "\n")}})
		}
		o := Observation{Type: TypeService, IP: c.ip, Source: t.src, ObservedAt: t.opt.when(c.date),
			Service: &Service{Port: c.port, Transport: "tcp", Probes: probes}}
		if c.host != "" {
			if _, err := netip.ParseAddr(c.host); err != nil {
				o.Hostnames = hostNames(c.host)
			}
		}
		if err := emitChecked(c.line, o, t.emit, t.bad); err != nil {
			return err
		}
	}
	clear(t.services)
	t.order = t.order[:0]
	return nil
}
