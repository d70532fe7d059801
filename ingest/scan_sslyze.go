package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// sslyzeServer is one element of sslyze's server_scan_results: 5.x and
// 6.x put server_location, connectivity_result and scan_result (each
// command's status and result) at its top; 3.x and 4.x put the location
// and tls_probing_result under server_info and the results, bare, in
// scan_commands_results.
type sslyzeServer struct {
	ServerLocation     *sslyzeLocation            `json:"server_location"`
	ConnectivityStatus string                     `json:"connectivity_status"`
	ConnectivityError  string                     `json:"connectivity_error_trace"`
	ConnectivityResult *sslyzeProbing             `json:"connectivity_result"`
	Network            *sslyzeNetwork             `json:"network_configuration"`
	ScanResult         map[string]json.RawMessage `json:"scan_result"`

	ServerInfo *struct {
		ServerLocation   *sslyzeLocation `json:"server_location"`
		Network          *sslyzeNetwork  `json:"network_configuration"`
		TLSProbingResult *sslyzeProbing  `json:"tls_probing_result"`
	} `json:"server_info"`
	ScanCommandsResults map[string]json.RawMessage `json:"scan_commands_results"`

	// An element of 3.x's server_connectivity_errors.
	ServerString string `json:"server_string"`
	ErrorMessage string `json:"error_message"`
}

type sslyzeLocation struct {
	Hostname  string `json:"hostname"`
	IPAddress string `json:"ip_address"`
	Port      any    `json:"port"`
}

type sslyzeNetwork struct {
	SNI string `json:"tls_server_name_indication"`
}

// sslyzeProbing is what sslyze learnt connecting: the highest version
// and a cipher suite the server accepted.
type sslyzeProbing struct {
	Cipher  string `json:"cipher_suite_supported"`
	Highest string `json:"highest_tls_version_supported"`
}

// sslyzeCertInfo is the certificate_info command's result.
type sslyzeCertInfo struct {
	Deployments []struct {
		Received []json.RawMessage `json:"received_certificate_chain"`
	} `json:"certificate_deployments"`
	SNI string `json:"hostname_used_for_server_name_indication"`
}

// sslyzeCert is a certificate as sslyze writes it: 5.x on in snake case,
// 3.x and 4.x some names in camel case.
type sslyzeCert struct {
	PEM          string          `json:"as_pem"`
	Subject      *sslyzeName     `json:"subject"`
	Issuer       *sslyzeName     `json:"issuer"`
	Serial       json.RawMessage `json:"serial_number"`
	OldSerial    json.RawMessage `json:"serialNumber"`
	SHA256       string          `json:"fingerprint_sha256"`
	NotBefore    string          `json:"not_valid_before"`
	NotAfter     string          `json:"not_valid_after"`
	OldNotBefore string          `json:"notBefore"`
	OldNotAfter  string          `json:"notAfter"`
	SAN          *sslyzeSAN      `json:"subject_alternative_name"`
	OldSAN       *sslyzeSAN      `json:"subjectAlternativeName"`
}

type sslyzeName struct {
	RFC4514    string `json:"rfc4514_string"`
	Attributes []struct {
		OID struct {
			Name string `json:"name"`
		} `json:"oid"`
		Value string `json:"value"`
	} `json:"attributes"`
}

type sslyzeSAN struct {
	DNS []string `json:"dns"`
	IPs []string `json:"ip_addresses"`
}

// SSLyze reads sslyze's --json_out: its server_scan_results, one service
// each on server_location's ip_address and port (hostname a host name)
// with a TLS probe per certificate deployment (the leaf of its
// received_certificate_chain: the PEM read whole, else subject and issuer
// by their attributes, serial_number, fingerprint_sha256,
// not_valid_before/after, subject_alternative_name), the highest version
// and the cipher suite of the connectivity test on the first. sslyze 5.x
// and 6.x (scan_result, connectivity_result) and 3.x/4.x (server_info,
// scan_commands_results) are read. Servers sslyze could not connect to
// are counted as skipped.
func SSLyze(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("sslyze")
	var started time.Time
	return auditJSON(r, "sslyze", []string{"server_scan_results", "server_connectivity_errors"}, bad, func(key string, raw json.RawMessage) {
		if key == "date_scans_started" {
			s, _ := jsonText(raw)
			started = scanTime(s)
		}
	}, func(n int, rec json.RawMessage) error {
		var x sslyzeServer
		if err := scanUnmarshal(rec, &x); err != nil {
			bad(LineError{n, fmt.Errorf("sslyze server scan result: %w", err)})
			return nil
		}
		loc, probing, results, net := x.ServerLocation, x.ConnectivityResult, x.ScanResult, x.Network
		if x.ServerInfo != nil {
			loc, probing, results, net = x.ServerInfo.ServerLocation, x.ServerInfo.TLSProbingResult, x.ScanCommandsResults, x.ServerInfo.Network
		}
		switch {
		case loc == nil && x.ErrorMessage != "":
			opt.skip(n, fmt.Sprintf("sslyze could not connect to %s (%s)", x.ServerString, x.ErrorMessage))
			return nil
		case loc == nil:
			bad(LineError{n, errors.New(`not an sslyze server scan result: want "server_location" (5.x on) or "server_info.server_location" (3.x, 4.x)`)})
			return nil
		case x.ConnectivityStatus != "" && x.ConnectivityStatus != "COMPLETED":
			opt.skip(n, fmt.Sprintf("sslyze could not connect to %s:%v (%s)", firstNonEmpty(loc.IPAddress, loc.Hostname), loc.Port, x.ConnectivityStatus))
			return nil
		}
		ip, name := auditHost(loc.IPAddress)
		if ip == "" {
			ip, name = auditHost(loc.Hostname)
		}
		if ip == "" {
			opt.skip(n, noAddress("sslyze", firstNonEmpty(loc.Hostname, loc.IPAddress)))
			return nil
		}
		o, err := sslyzeObservation(ip, loc, probing, results, x.ScanResult != nil, func(msg string) { opt.warn(n, msg) })
		if err != nil {
			return emitBuilt(n, o, err, emit, bad)
		}
		o.Source, o.ObservedAt = src, opt.when(started)
		sni := ""
		if net != nil {
			sni = net.SNI
		}
		o.Hostnames = auditNames(name, loc.Hostname, sni)
		return emitBuilt(n, o, nil, emit, bad)
	})
}

// sslyzeObservation builds a server's service. A leaf whose as_pem is not
// a certificate (DefectDojo's fixture has "-----BEGIN
// CERTIFICATE-----REDACTED-----END CERTIFICATE-----") loses that PEM only,
// told through warn: the server, its version and cipher and the fields
// sslyze lists beside the PEM are kept.
func sslyzeObservation(ip string, loc *sslyzeLocation, probing *sslyzeProbing, results map[string]json.RawMessage, wrapped bool, warn func(string)) (Observation, error) {
	port, err := auditPort(loc.Port)
	if err != nil {
		return Observation{}, fmt.Errorf("server_location: %w", err)
	}
	var probes []Probe
	if raw, ok := results["certificate_info"]; ok {
		var ci sslyzeCertInfo
		if wrapped {
			var cmd struct {
				Status string          `json:"status"`
				Result json.RawMessage `json:"result"`
			}
			if err := scanUnmarshal(raw, &cmd); err != nil {
				return Observation{}, fmt.Errorf("scan_result.certificate_info: %w", err)
			}
			raw = cmd.Result
		}
		if len(raw) > 0 && string(raw) != "null" {
			if err := scanUnmarshal(raw, &ci); err != nil {
				return Observation{}, fmt.Errorf("certificate_info: %w", err)
			}
		}
		for i, d := range ci.Deployments {
			if len(d.Received) == 0 {
				continue
			}
			where := fmt.Sprintf("certificate_info.certificate_deployments[%d].received_certificate_chain[0]", i)
			t, pemErr, err := sslyzeLeaf(d.Received[0])
			if err != nil {
				return Observation{}, fmt.Errorf("%s: %w", where, err)
			}
			if pemErr != nil {
				warn(fmt.Sprintf("sslyze %s: as_pem is not a certificate (%v): the PEM is dropped, the server, its TLS version and cipher and the certificate fields sslyze lists are kept", where, pemErr))
			}
			if t != nil {
				probes = append(probes, Probe{Name: "sslyze", TLS: t})
			}
		}
	}
	version, cipher := "", ""
	if probing != nil {
		version, cipher = tlsVersionText(probing.Highest), probing.Cipher
	}
	if len(probes) == 0 {
		if version == "" && cipher == "" {
			return Observation{}, errors.New("no certificate, TLS version or cipher to keep")
		}
		probes = []Probe{{Name: "sslyze", TLS: &TLS{}}}
	}
	probes[0].TLS.Version, probes[0].TLS.Cipher = version, cipher
	return Observation{Type: TypeService, IP: ip, Service: &Service{Port: port, Transport: "tcp", Probes: probes}}, nil
}

// sslyzeLeaf reads a certificate of a received chain: the PEM when it is
// there and parses, the fields sslyze lists filling what it left empty.
// A PEM that does not parse is left out and returned as pemErr (the
// listed fields are still read; t is nil when there are none); err is a
// listed field that does not parse.
func sslyzeLeaf(raw json.RawMessage) (t *TLS, pemErr, err error) {
	var c sslyzeCert
	if err := scanUnmarshal(raw, &c); err != nil {
		return nil, nil, err
	}
	t, _, pemErr = certFromPEM(c.PEM)
	if pemErr != nil {
		t = nil
	}
	l := &TLS{Subject: c.Subject.dn(), Issuer: c.Issuer.dn()}
	for _, s := range []*sslyzeSAN{c.SAN, c.OldSAN} {
		if s != nil && len(l.SANs) == 0 {
			l.SANs = append(append(l.SANs, s.DNS...), s.IPs...)
		}
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"serial_number", c.Serial}, {"serialNumber", c.OldSerial}} {
		s, err := jsonText(f.raw)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.name, err)
		}
		if s != "" && l.Serial == "" {
			if l.Serial, err = serialText(s, true); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", f.name, err)
			}
		}
	}
	if c.SHA256 != "" {
		if l.SHA256, err = hexFingerprint(c.SHA256); err != nil {
			return nil, nil, fmt.Errorf("fingerprint_sha256: %w", err)
		}
	}
	for _, f := range []struct {
		name, v string
		dst     *string
	}{{"not_valid_before", c.NotBefore, &l.NotBefore}, {"not_valid_after", c.NotAfter, &l.NotAfter},
		{"notBefore", c.OldNotBefore, &l.NotBefore}, {"notAfter", c.OldNotAfter, &l.NotAfter}} {
		if f.v == "" || *f.dst != "" {
			continue
		}
		// sslyze writes Python's isoformat() of a naive UTC time.
		tm := scanTime(f.v)
		if tm.IsZero() {
			return nil, nil, fmt.Errorf("%s: not a time: %q", f.name, f.v)
		}
		*f.dst = tm.UTC().Format(time.RFC3339)
	}
	t = fillTLS(t, l)
	if t.empty() {
		if pemErr != nil {
			return nil, pemErr, nil
		}
		return nil, nil, errors.New("no certificate field to keep")
	}
	return t, pemErr, nil
}

// dn reads a name by its attributes (the common ones by their OID names),
// with the RFC 4514 string as the whole name.
func (n *sslyzeName) dn() *DN {
	if n == nil {
		return nil
	}
	d := &DN{DN: n.RFC4514}
	if n.RFC4514 != "" {
		d = ParseDN(n.RFC4514)
	}
	if len(n.Attributes) > 0 {
		d.CN, d.O, d.OU, d.C, d.ST, d.L, d.Email = "", nil, nil, "", "", "", ""
	}
	for _, a := range n.Attributes {
		d.setAttr(a.OID.Name, a.Value)
	}
	if d.DN == "" && d.CN == "" && len(d.O) == 0 && len(d.OU) == 0 && d.C == "" {
		return nil
	}
	return d
}
