package ingest

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Censys's IPv4 dataset (2015-2021: Search API v1's /view/ipv4/IP, the
// BigQuery and bulk exports, and the zgrab 1 documents they were built
// from) keeps a host as one document: "ip", and per port a member named
// by the port ("443"; "p443" in BigQuery, whose columns cannot start with
// a digit), holding the protocol's name ("https", "ssh", "ftp",
// "https_www") over that protocol's grab:
//
//	get        HTTP: status_code, status_line (zgrab 1's "200 OK", without
//	           the protocol), headers (lower-case names with underscores,
//	           one value each; "unknown": [{key, value}]), body,
//	           body_sha256, title
//	tls        certificate.parsed (zcrypto), version, cipher_suite; or, for
//	           the protocols spoken inside TLS (imaps, pop3s, smtps), the
//	           module {banner, ehlo, tls: {certificate, ...}}
//	banner     a string, or {banner} (FTP, telnet), or {raw} (SSH), or
//	           the module {tls: {...}, ...} (mysql, mssql, rdp)
//	v2.banner  SSH: {raw, software, version}
//	starttls   SMTP, IMAP, POP3: {banner, ehlo, starttls (the reply to
//	           STARTTLS), tls}
//	metadata   the dataset's identification: product, manufacturer,
//	           version, revision, description
//	timestamp  each module's own time of the grab
//
// The host's own metadata (manufacturer, product, description,
// device_type, os: the device Censys took the host for) is kept in each
// of its services' detected info.
//
// A search answer with chosen fields names them flat
// ("443.https.tls.certificate.parsed.subject_dn"): they are folded back
// into the tree. Each port's protocol is one service observation.
var censysLegacyPort = regexp.MustCompile(`^p?(\d{1,5})$`)

// censysLegacyPorts are the port members of a document (censysHosts folds
// flat dotted names first), sorted by port.
func censysLegacyPorts(m cmap) []string {
	var out []string
	for k, v := range m {
		if censysLegacyPort.MatchString(k) && cobj(v) != nil {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return censysPortOf(a) - censysPortOf(b) })
	return out
}

func censysPortOf(k string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(k, "p"))
	return n
}

// censysUnflatten folds members named "443.https.get.title" into
// m["443"]["https"]["get"]["title"] (a member already nested wins).
func censysUnflatten(m cmap) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		head, rest, ok := strings.Cut(k, ".")
		if !ok || !censysLegacyPort.MatchString(head) {
			continue
		}
		v := m[k]
		delete(m, k)
		node := m
		parts := append([]string{head}, strings.Split(rest, ".")...)
		for i, p := range parts {
			if i == len(parts)-1 {
				if _, ok := node[p]; !ok {
					node[p] = v
				}
				break
			}
			next := cobj(node[p])
			if next == nil {
				if _, taken := node[p]; taken {
					break
				}
				next = cmap{}
				node[p] = next
			}
			node = next
		}
	}
}

// censysLegacyUDP are the dataset's protocols it grabbed over UDP.
var censysLegacyUDP = map[string]bool{"dns": true, "ntp": true, "bacnet": true, "upnp": true, "ipmi": true, "snmp": true, "coap": true, "ike": true}

func censysLegacyHost(line int, h cmap, src string, opt Options, emit Emit, bad func(LineError)) error {
	ip := cstr(h["ip"])
	if ip == "" {
		bad(LineError{line, errors.New(`ip: missing (a Censys IPv4 document names its host in "ip")`)})
		return nil
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		bad(LineError{line, fmt.Errorf("ip: not an IP address: %q", ip)})
		return nil
	}
	var claims []Claim
	if as := cobj(h["autonomous_system"]); as != nil {
		claims = opt.scanClaim("censys", cstr(as["name"]), cstr(as["asn"]))
	}
	hostAt := scanTime(firstNonEmpty(cstr(h["updated_at"]), cstr(h["timestamp"])))
	hostInfo := censysLegacyHostInfo(cobj(h["metadata"]))
	for _, k := range censysLegacyPorts(h) {
		port := censysPortOf(k)
		if port < 1 || port > 65535 {
			bad(LineError{line, fmt.Errorf("%s: not a port (1..65535)", k)})
			continue
		}
		byProto := cobj(h[k])
		for _, proto := range slices.Sorted(maps.Keys(byProto)) {
			g := cobj(byProto[proto])
			if g == nil {
				continue
			}
			transport := "tcp"
			if censysLegacyUDP[strings.ToLower(proto)] {
				transport = "udp"
			}
			// a protocol with no grab read still says what the port speaks,
			// as v2's service_name does
			d := censysLegacyDetected(proto, g)
			if hostInfo != "" {
				d.Info = strings.TrimPrefix(d.Info+"; "+hostInfo, "; ")
			}
			at := censysLegacyTime(g)
			if at.IsZero() {
				at = hostAt
			}
			svc := &Service{Port: port, Transport: transport, Probes: censysLegacyProbes(g), Detected: d}
			o := Observation{Type: TypeService, IP: a.Unmap().String(), Source: src, ObservedAt: opt.when(at), Claims: claims, Service: svc}
			if err := emitChecked(line, o, emit, bad); err != nil {
				return err
			}
		}
	}
	return nil
}

// censysLegacyProbes maps one protocol's grab: the HTTP exchange with the
// handshake's certificate, else the banner (with the STARTTLS
// certificate), else the handshake alone.
func censysLegacyProbes(g cmap) []Probe {
	t := censysLegacyTLS(cobj(g["tls"]))
	st := cobj(g["starttls"])
	// the handshake inside a module: starttls.tls, tls.tls (imaps, pop3s,
	// smtps), banner.tls (mysql, mssql, rdp)
	for _, m := range []cmap{st, cobj(g["tls"]), cobj(g["banner"])} {
		if t == nil && m != nil {
			t = censysLegacyTLS(cobj(m["tls"]))
		}
	}
	var probes []Probe
	for _, method := range []string{"get", "post", "head"} {
		if r := cobj(g[method]); r != nil {
			probes = append(probes, censysLegacyHTTP(strings.ToUpper(method), r, t))
		}
	}
	if len(probes) > 0 {
		return probes
	}
	banner := censysLegacyBanner(g)
	var more []Probe
	for _, m := range []cmap{st, cobj(g["tls"])} {
		if banner != "" || m == nil {
			continue
		}
		banner = firstNonEmpty(censysLegacyBanner(m), cstr(m["ehlo"]))
		// the server's answers after its greeting (SMTP's EHLO and
		// STARTTLS replies), each a banner probe of its own, as the grab
		// keeps them
		for _, k := range []string{"ehlo", "starttls"} {
			if v := cstr(m[k]); v != "" && v != banner {
				more = append(more, Probe{Name: k, Banner: &Banner{Received: BytesBody([]byte(v))}})
			}
		}
	}
	if banner != "" {
		return append([]Probe{{Banner: &Banner{Received: BytesBody([]byte(banner))}, TLS: t}}, more...)
	}
	if t != nil {
		return []Probe{{TLS: t}}
	}
	return nil
}

// censysLegacyBanner is what the server sent first: banner as a string,
// banner.banner, banner.raw, v2.banner.raw (SSH).
func censysLegacyBanner(g cmap) string {
	if s := cstr(g["banner"]); s != "" {
		return s
	}
	for _, b := range []cmap{cobj(g["banner"]), cobj(cpath(g, "v2", "banner"))} {
		if b == nil {
			continue
		}
		if s := firstNonEmpty(cstr(b["banner"]), cstr(b["raw"])); s != "" {
			return s
		}
	}
	return ""
}

func censysLegacyHTTP(method string, r cmap, t *TLS) Probe {
	p := Probe{Name: "http", TLS: t, Request: &Request{Method: method, Path: "/"}}
	resp := &Response{Title: cstr(r["title"])}
	resp.Status, _ = strconv.Atoi(cstr(r["status_code"]))
	line := strings.TrimSpace(cstr(r["status_line"]))
	if strings.HasPrefix(strings.ToUpper(line), "HTTP/") {
		// a whole status line: "HTTP/1.1 200 OK"
		proto, rest, _ := strings.Cut(line, " ")
		resp.Protocol = proto
		line = rest
	}
	// zgrab 1's status_line is the code and the reason ("200 OK"): the
	// protocol, where it names one, is in protocol.name
	if line != "" {
		code, reason, _ := strings.Cut(line, " ")
		if n, err := strconv.Atoi(code); err == nil {
			if resp.Status == 0 {
				resp.Status = n
			}
			resp.Reason = strings.TrimSpace(reason)
		}
	}
	if resp.Protocol == "" {
		if p := cstr(cpath(r, "protocol", "name")); strings.HasPrefix(strings.ToUpper(p), "HTTP/") {
			resp.Protocol = p
		}
	}
	resp.Headers = censysHeaders(cobj(r["headers"]))
	if body := cstr(r["body"]); body != "" {
		resp.Body = BytesBody([]byte(body))
	} else if sum := censysLegacySHA256(cstr(r["body_sha256"])); sum != "" {
		// the dataset kept only the body's hash
		resp.Body = &Body{SHA256: sum}
	}
	p.Response = resp
	return p
}

// censysLegacySHA256 reads a SHA-256 written as hex or, as zgrab 1 wrote
// it, base64; "" when it is neither.
func censysLegacySHA256(s string) string {
	if v := strings.ToLower(s); isHex(v, 64) {
		return v
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) == 32 {
		return hex.EncodeToString(b)
	}
	return ""
}

func censysLegacyTLS(tl cmap) *TLS {
	if tl == nil {
		return nil
	}
	t := &TLS{Version: tlsVersionText(cstr(tl["version"]))}
	if cs := cobj(tl["cipher_suite"]); cs != nil {
		t.Cipher = cstr(cs["name"])
	}
	censysParsedCert(t, cobj(cpath(tl, "certificate", "parsed")))
	if t.SHA256 != "" && !isHex(t.SHA256, 64) {
		t.SHA256 = ""
	}
	if t.empty() {
		return nil
	}
	return t
}

// censysLegacyDetected is the dataset's identification of the grab
// (metadata beside it or inside the grab it names) under the protocol's
// name.
func censysLegacyDetected(proto string, g cmap) *Detected {
	d := &Detected{By: "censys", Service: proto}
	md := cobj(g["metadata"])
	for _, k := range []string{"get", "banner", "starttls", "v2"} {
		if md == nil {
			md = cobj(cpath(g, k, "metadata"))
		}
	}
	if md != nil {
		// the product as the other engines name it, maker first ("Apache"
		// and "httpd" are "Apache httpd", as Censys's own description
		// writes it)
		d.Product = vendorProduct(cstr(md["manufacturer"]), cstr(md["product"]))
		d.Version = cstr(md["version"])
		var info []string
		for _, k := range []string{"manufacturer", "revision", "description"} {
			if v := cstr(md[k]); v != "" && v != d.Product {
				info = append(info, k+": "+v)
			}
		}
		d.Info = strings.Join(info, "; ")
	}
	// the version a banner module read from the server (mysql's
	// server_version, mssql's version, vnc's protocol version, mongodb's
	// build), kept as the grab names it
	var vers []string
	for _, f := range []struct {
		name string
		path []string
	}{
		{"server_version", []string{"banner", "server_version"}},
		{"version", []string{"banner", "version"}},
		{"version_string", []string{"banner", "server_protocol_version", "version_string"}},
		{"build_info.version", []string{"banner", "build_info", "version"}},
	} {
		if v := cstr(cpath(g, f.path...)); v != "" {
			vers = append(vers, f.name+": "+v)
		}
	}
	if len(vers) > 0 {
		d.Info = strings.TrimPrefix(d.Info+"; "+strings.Join(vers, "; "), "; ")
	}
	return d
}

// censysLegacyHostInfo is the host's own metadata as "host_<name>:
// value" (the device Censys took the host for, its operating system).
func censysLegacyHostInfo(md cmap) string {
	var info []string
	for _, k := range []string{"manufacturer", "product", "version", "description", "device_type", "os", "os_version", "os_description"} {
		if v := cstr(md[k]); v != "" {
			info = append(info, "host_"+k+": "+v)
		}
	}
	return strings.Join(info, "; ")
}

// censysLegacyTime is when the dataset grabbed the service: the timestamp
// of the module its probe comes from (get, banner, starttls, tls, v2),
// else the latest of its other modules'; zero when none has one.
func censysLegacyTime(g cmap) time.Time {
	for _, k := range []string{"get", "post", "head", "banner", "starttls", "tls", "v2"} {
		if at := scanTime(cstr(cpath(g, k, "timestamp"))); !at.IsZero() {
			return at
		}
	}
	var latest time.Time
	for _, k := range slices.Sorted(maps.Keys(g)) {
		if at := scanTime(cstr(cpath(g, k, "timestamp"))); at.After(latest) {
			latest = at
		}
	}
	return latest
}
