package ingest

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"strings"
	"time"
)

// IKEScan reads what ike-scan prints (its only output): a host line for
// each responder ("ADDR<TAB>Main Mode Handshake returned HDR=(...)
// SA=(...) VID=<hex> (<name>) ...", or its fields on indented lines
// after it with -M; "Aggressive Mode", "IKEv2 SA_INIT" handshakes and
// "Notify message N (...)" the same), and with --showbackoff the backoff
// table's "ADDR<TAB>Implementation guess: <implementation>". The answer
// came from the address in parentheses after the scanned one when
// ike-scan shows one ("10.0.1.189 (10.0.1.130) Notify ..."), and the
// service is filed there. Each responder is one UDP service on port 500
// (ike-scan prints no port; --nat-t scans of 4500 are not told apart)
// with a banner probe named "ike-scan" holding the lines as printed: the
// rules read the vendor IDs in hex and ike-scan's names for them
// (58-ike.yaml) and the implementation guess. Pasted output whose tabs
// became spaces is read too. A host that is not an IP address is a bad
// record; a file with neither an ike-scan line nor a responder is
// refused.
func IKEScan(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("ike-scan")
	type host struct {
		line int
		ip   string
		text []string
	}
	var (
		hosts []*host
		byIP  = map[string]*host{}
		last  *host // the host whose -M field lines follow
		seen  bool
		// stray: the first line holding a responder's result that does not
		// start it (a paste reflowed into running text), 0 if none.
		stray int
		// recvd: when the backoff table saw an address's first packet.
		recvd = map[string]time.Time{}
	)
	get := func(n int, target, from string) *host {
		ip := target
		if a, err := netip.ParseAddr(from); err == nil && !a.IsUnspecified() {
			ip = from
		}
		a, err := netip.ParseAddr(ip)
		if err != nil {
			bad(LineError{n, fmt.Errorf("ike-scan: host %q: not an IP address", ip)})
			return nil
		}
		ip = a.Unmap().String()
		if h := byIP[ip]; h != nil {
			return h
		}
		h := &host{line: n, ip: ip}
		byIP[ip] = h
		hosts = append(hosts, h)
		return h
	}
	// noteStray keeps the first line that holds a result ikeHost did not read.
	noteStray := func(n int, l string) {
		if stray == 0 && ikeStray.MatchString(l) {
			stray = n
		}
	}
	err := opt.lines(r, "ike-scan output", bad, func(n int, b []byte) error {
		l := strings.TrimRight(latin1(b), " \t\r\n")
		switch {
		case strings.HasPrefix(l, "Starting ike-scan ") || strings.HasPrefix(l, "Ending ike-scan "):
			seen, last = true, nil
			noteStray(n, l)
			return nil
		case l == "":
			last = nil
			return nil
		case (l[0] == '\t' || l[0] == ' ') && last != nil:
			last.text = append(last.text, strings.TrimSpace(l))
			return nil
		}
		if m := ikeGuess.FindStringSubmatch(l); m != nil {
			seen = true
			if h := get(n, m[1], ""); h != nil {
				h.text = append(h.text, "Implementation guess: "+strings.TrimSpace(m[2]))
			}
			last = nil
			return nil
		}
		if m := ikeBackoff.FindStringSubmatch(l); m != nil {
			if _, ok := recvd[m[1]]; !ok {
				recvd[m[1]] = unixTime(m[2])
			}
			return nil
		}
		m := ikeHost.FindStringSubmatch(l)
		if m == nil {
			noteStray(n, l)
			last = nil
			return nil
		}
		seen = true
		h := get(n, m[1], m[2])
		if h != nil {
			h.text = append(h.text, m[3])
		}
		last = h
		return nil
	})
	if err != nil {
		return err
	}
	if !seen {
		bad(LineError{1, errors.New(`not ike-scan output: no "Starting ike-scan" line and no responder line`)})
		return nil
	}
	if len(hosts) == 0 && stray > 0 {
		// ike-scan writes each result on a line of its own, starting with the
		// address; a result inside running text is not read, and said so.
		bad(LineError{stray, errors.New(`ike-scan: a responder's result not at the start of a line (reflowed text?): want "ADDR<TAB>Main Mode Handshake returned ..." on its own line`)})
	}
	for _, h := range hosts {
		o := Observation{Type: TypeService, IP: h.ip, Source: src, ObservedAt: opt.when(recvd[h.ip]),
			Service: &Service{Port: 500, Transport: "udp", Probes: []Probe{{Name: "ike-scan",
				Banner: &Banner{Received: TextBody(strings.Join(h.text, "\n"))}}}}}
		if err := emitChecked(h.line, o, emit, bad); err != nil {
			return err
		}
	}
	return nil
}

// ikeResult: what ike-scan prints of a responder's answer.
const ikeResult = `(?:(?:Main Mode|Aggressive Mode|IKEv2 SA_INIT|IKE) Handshake returned|(?:IKEv2 )?Notify message \d+)`

var (
	// ikeHost: a responder's line: the scanned address, the answering one
	// in parentheses where it differs, and what came back.
	ikeHost = regexp.MustCompile(`^(\S+)\s+(?:\((\S+)\)\s+)?(` + ikeResult + `.*)$`)
	// ikeStray: a responder's result anywhere in a line.
	ikeStray = regexp.MustCompile(`\b` + ikeResult)
	// ikeGuess: the backoff table's verdict on a host.
	ikeGuess = regexp.MustCompile(`^(\S+)\s+Implementation guess: (.+)$`)
	// ikeBackoff: a row of the backoff table: address, packet number,
	// receive time (seconds since the epoch), delta.
	ikeBackoff = regexp.MustCompile(`^(\S+)\s+\d+\s+(\d{9,}\.\d+)\s+\d+\.\d+$`)
)
