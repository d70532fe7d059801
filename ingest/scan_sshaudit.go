package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// sshAuditRecord is one target's result of ssh-audit -j: the server's
// identification line (banner.raw, and its parts), the target ("HOST:PORT";
// ssh-audit 2.x wrote the host alone), the algorithms offered and the host
// keys' fingerprints. A client audit has client_ip instead of target; a
// policy audit (-P/-L) host, port and policy and no banner.
type sshAuditRecord struct {
	Banner *struct {
		Raw string `json:"raw"`
		// Protocol is "2.0" since ssh-audit 3.0, [2, 0] before.
		Protocol any `json:"protocol"`
	} `json:"banner"`
	Target       string `json:"target"`
	ClientIP     string `json:"client_ip"`
	Policy       any    `json:"policy"`
	Fingerprints []struct {
		Hash    string `json:"hash"`
		HashAlg string `json:"hash_alg"`
		HostKey string `json:"hostkey"`
	} `json:"fingerprints"`
	GexSizes any `json:"dh-gex-modulus-size"`
}

// SSHAudit reads ssh-audit's JSON (-j or -jj: one target's object, -T's
// array of them, or several runs' objects one after the other): each
// target a service on its address and port (22 when the target has none)
// with the identification line, as ssh-audit read it, as the received
// bytes of a banner probe; the host keys' SHA-256 fingerprints as the
// service's detected info (by ssh-audit). A target that is a host name
// other than localhost has no address and is counted as skipped, as are
// client and policy audits.
func SSHAudit(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("ssh-audit")
	return auditJSON(r, "ssh-audit", nil, bad, nil, func(n int, rec json.RawMessage) error {
		var x sshAuditRecord
		if err := scanUnmarshal(rec, &x); err != nil {
			bad(LineError{n, fmt.Errorf("ssh-audit: json: %w", err)})
			return nil
		}
		switch {
		case x.ClientIP != "":
			opt.skip(n, "ssh-audit client audit (no server)")
			return nil
		case x.Policy != nil:
			opt.skip(n, "ssh-audit policy audit (no identification line)")
			return nil
		case x.GexSizes != nil:
			opt.skip(n, "ssh-audit DH group exchange test (no identification line)")
			return nil
		case x.Banner == nil || x.Target == "":
			bad(LineError{n, errors.New(`not an ssh-audit result: want "banner" and "target"`)})
			return nil
		}
		_, old := x.Banner.Protocol.([]any)
		host, port, err := sshAuditTarget(x.Target, !old)
		if err != nil {
			bad(LineError{n, err})
			return nil
		}
		ip, name := auditHost(host)
		if ip == "" {
			opt.skip(n, noAddress("ssh-audit", host))
			return nil
		}
		raw := strings.TrimRight(x.Banner.Raw, "\r\n")
		if raw == "" {
			opt.skip(n, fmt.Sprintf("ssh-audit target %s: no identification line (banner.raw is empty)", x.Target))
			return nil
		}
		s := &Service{Port: port, Transport: "tcp", Probes: []Probe{{Name: "ssh-audit", Banner: &Banner{Received: BytesBody([]byte(raw))}}}}
		var keys []string
		for _, f := range x.Fingerprints {
			if strings.EqualFold(f.HashAlg, "SHA256") && f.Hash != "" {
				keys = append(keys, f.HostKey+" SHA256:"+f.Hash)
			}
		}
		s.Detected = &Detected{By: "ssh-audit", Service: "ssh"}
		if len(keys) > 0 {
			s.Detected.Info = "host keys: " + strings.Join(keys, ", ")
		}
		o := Observation{Type: TypeService, IP: ip, Source: src, ObservedAt: opt.when(time.Time{}), Service: s, Hostnames: auditNames(name)}
		return emitBuilt(n, o, nil, emit, bad)
	})
}

// sshAuditTarget splits ssh-audit's target: "HOST:PORT" (the host as
// given: an IPv6 address without brackets; always so since ssh-audit 3.0,
// withPort), "[V6]:PORT", or the host alone as ssh-audit wrote it before
// 2.9 (port 22, its default).
func sshAuditTarget(s string, withPort bool) (host string, port int, err error) {
	s = strings.TrimSpace(s)
	if _, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil && (!withPort || !strings.Contains(s, ":") || strings.HasSuffix(s, "]")) {
		return strings.Trim(s, "[]"), 22, nil // an address alone (an IPv6 one has colons of its own)
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, 22, nil
	}
	p, err := strconv.Atoi(s[i+1:])
	if err != nil || p < 1 || p > 65535 {
		return "", 0, fmt.Errorf("target: port: must be 1..65535, got %q in %q", s[i+1:], s)
	}
	return strings.Trim(s[:i], "[]"), p, nil
}
